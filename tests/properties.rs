//! Property tests of the library on the GPU (proptest): random element type,
//! operator, kernel, block size, size and values; the GPU result must match
//! the serial CPU reference (exactly for integers and min/max, within the
//! algorithm's error bound for float sums, see `reduction::bench::verify`).
//!
//! Two families, per element type and operator (64 cases each):
//! * `seeded`: sizes 0..2^21 plus a few large ones, values drawn from a
//!   pattern and a seed; shrinking lowers the size and the seed, so a failing
//!   case comes down to a small input in seconds;
//! * `explicit`: short vectors of arbitrary values (floats include NaN,
//!   infinities and signed zeros), shrunk element by element.

mod common;

use common::gpu_trial;
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reduction::{DType, Element, Finish, Op, op::ReduceOp, registry::KERNELS};
use testkit::data::{Pattern, Sample};
use testkit::reference::Reference;
use testkit::{CheckInput, verify};
use testkit::{with_op, with_plain_dtype};

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// A kernel of the registry and a block size it supports.
fn kernel_and_block() -> impl Strategy<Value = (usize, u32)> {
    (0..KERNELS.len()).prop_flat_map(|k| {
        let blocks: Vec<u32> = KERNELS[k].block_sizes().collect();
        (Just(k), proptest::sample::select(blocks))
    })
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![9 => 0usize..(1 << 21), 1 => proptest::sample::select(vec![(1usize << 24) + 1, (1 << 25) - 3])]
}

fn pattern() -> impl Strategy<Value = Pattern> {
    proptest::sample::select(Pattern::ALL.to_vec())
}

/// Run one case: reduce `input` with kernel `k` at `block`, finishing on
/// the GPU or (for multi-pass kernels) on the CPU.
fn case<O: ReduceOp<T>, T: Element + Reference + Sample>(
    input: &CheckInput<T>,
    k: usize,
    block: u32,
    cpu_finish: bool,
) -> Result<(), TestCaseError> {
    let kernel = &KERNELS[k];
    let finish = if cpu_finish { Finish::Cpu } else { Finish::Gpu };
    let m = verify::<O, T>(common::reducer(), kernel, block, finish, input)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(
        m.ok,
        "{} block {block} {finish:?} {} {} n={}: GPU {}, CPU {}",
        kernel.id,
        O::NAME,
        T::NAME,
        input.host.len(),
        m.got,
        m.expected
    );
    Ok(())
}

fn seeded<O: ReduceOp<T>, T: Element + Reference + Sample>() -> Result<(), Failed> {
    let strategy = (kernel_and_block(), size(), pattern(), any::<u64>(), any::<bool>());
    TestRunner::new(config(64))
        .run(&strategy, |((k, block), n, pattern, seed, cpu)| {
            let input = CheckInput::<T>::new(common::reducer(), pattern, n, seed)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            case::<O, T>(&input, k, block, cpu)
        })
        .map_err(|e| Failed::from(e.to_string()))
}

/// Values for the explicit family: anything for integers; for floats,
/// moderate numbers (so that f32 sums cannot overflow where the f64
/// reference does not) and the special values.
trait Values: Sized {
    fn values() -> BoxedStrategy<Self>;
}

macro_rules! int_values {
    ($($t:ty)*) => {$(
        impl Values for $t {
            fn values() -> BoxedStrategy<Self> { any::<$t>().boxed() }
        }
    )*};
}
int_values!(i32 u32 i64 u64);

macro_rules! float_values {
    ($($t:ident)*) => {$(
        impl Values for $t {
            fn values() -> BoxedStrategy<Self> {
                prop_oneof![
                    20 => -1.0e6 as $t..1.0e6 as $t,
                    1 => proptest::sample::select(vec![$t::NAN, $t::INFINITY, $t::NEG_INFINITY, 0.0, -0.0]),
                ]
                .boxed()
            }
        }
    )*};
}
float_values!(f32 f64);

fn explicit<O: ReduceOp<T>, T: Element + Reference + Sample + Values + std::fmt::Debug>() -> Result<(), Failed> {
    let strategy = (kernel_and_block(), proptest::collection::vec(T::values(), 0..3000), any::<bool>());
    TestRunner::new(config(64))
        .run(&strategy, |((k, block), values, cpu)| {
            let r = common::reducer();
            let copy = r.gpu().stream().clone_htod(&values).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let input = CheckInput::from_parts(values, copy, false);
            case::<O, T>(&input, k, block, cpu)
        })
        .map_err(|e| Failed::from(e.to_string()))
}

fn main() {
    let mut trials = Vec::new();
    for &dtype in DType::PRIMITIVE {
        for &op in Op::PLAIN {
            let name = format!("{}_{}", op.name(), dtype.name());
            trials.push(gpu_trial(format!("properties::seeded_{name}"), move || {
                with_plain_dtype!(dtype, |T| with_op!(op, |O| seeded::<O, T>(), else Err("plain".into())), else Err("plain".into()))
            }));
            trials.push(gpu_trial(format!("properties::explicit_{name}"), move || {
                with_plain_dtype!(dtype, |T| with_op!(op, |O| explicit::<O, T>(), else Err("plain".into())), else Err("plain".into()))
            }));
        }
    }
    common::run(trials)
}
