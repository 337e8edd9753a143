//! Every kernel of the registry, on the GPU, against the serial CPU reference.
//!
//! Each trial is one (operator, type, input pattern). It reduces fresh data
//! of every size below with every kernel at every block size it supports
//! (finishing on the GPU), and with every kernel at the default block size
//! finishing on the CPU. Integers, min/max and the `Large` pattern (whose
//! sums are exact) must match exactly; other float sums must lie within
//! `(depth + 1) · ε · Σ|x|` of a compensated f64 sum, where `depth` is the
//! longest chain of additions in the launch plan (tree rounds plus each
//! thread's sequential part, see `reduction::dispatch::depth`).
//!
//! `planted::a_dropped_element_is_caught` shows the check can fail: the same
//! 2^25 + 3 f32 values with one element dropped on the device fail it, for
//! every kernel.
//!
//! Without a GPU every trial is reported as ignored, after one line
//! `SKIPPED: <reason>`.

mod common;

use common::{gpu_trial, reducer};
use libtest_mimic::Failed;
use reduction::{
    DType, Element, Finish, Op,
    op::ReduceOp,
    registry::{DEFAULT_BLOCK, KERNELS},
};
use testkit::data::{Pattern, Sample};
use testkit::reference::Reference;
use testkit::{CheckInput, verify};
use testkit::{with_op, with_plain_dtype};

/// The sizes: empty, tiny, around one warp and one block, around
/// 2^16, and large.
const SIZES: [usize; 19] = [
    0,
    1,
    2,
    31,
    32,
    33,
    127,
    128,
    129,
    255,
    256,
    257,
    1000,
    65535,
    65536,
    65537,
    (1 << 20) + 7,
    1 << 24,
    (1 << 25) + 3,
];

fn main() {
    let mut trials = Vec::new();
    for &dtype in DType::PRIMITIVE {
        for &op in Op::PLAIN {
            for pattern in Pattern::ALL {
                let name = format!("all_kernels::{}_{}_{:?}", op.name(), dtype.name(), pattern).to_lowercase();
                trials.push(gpu_trial(name, move || {
                    with_plain_dtype!(dtype, |T| with_op!(op, |O| check_all::<O, T>(pattern), else Err("plain".into())), else Err("plain".into()))
                }));
            }
        }
    }
    trials.push(gpu_trial("planted::a_dropped_element_is_caught", a_dropped_element_is_caught));
    common::run(trials)
}

/// 2^25 + 3 exact f32 values; on the device, one of them (the last nonzero)
/// is replaced by 0, as a kernel that skips it would see them. Every kernel
/// must fail the check.
fn a_dropped_element_is_caught() -> Result<(), Failed> {
    use testkit::data::generate;
    let r = reducer();
    let n = (1 << 25) + 3;
    let host: Vec<f32> = generate(Pattern::Large, n, 5)?;
    let mut planted = host.clone();
    let last = planted.iter().rposition(|&x| x != 0.0).ok_or("all zeros")?;
    planted[last] = 0.0;
    let device = r.gpu().stream().clone_htod(&planted)?;
    let input = CheckInput::from_parts(host, device, Pattern::Large.sums_exactly());
    for kernel in KERNELS {
        let c = verify::<reduction::Sum, f32>(r, kernel, DEFAULT_BLOCK.max(kernel.min_block), Finish::Gpu, &input)?;
        if c.ok {
            return Err(format!(
                "{}: a dropped element passed the check (GPU {}, CPU {})",
                kernel.id, c.got, c.expected
            )
            .into());
        }
    }
    Ok(())
}

/// Reduce fresh data of every size with every kernel configuration.
fn check_all<O: ReduceOp<T>, T: Element + Reference + Sample>(pattern: Pattern) -> Result<(), Failed> {
    let r = reducer();
    let op = testkit::op_of::<O, T>()?;
    for (i, &n) in SIZES.iter().enumerate() {
        let seed = 1000 * i as u64 + 7 * op as u64 + pattern as u64;
        let input = CheckInput::<T>::new(r, pattern, n, seed)?;
        for kernel in KERNELS {
            let cpu_finish = Some((DEFAULT_BLOCK, Finish::Cpu)); // every scheme finishes on the CPU too
            let configs = kernel.block_sizes().map(|b| (b, Finish::Gpu)).chain(cpu_finish);
            for (block, finish) in configs {
                let m = verify::<O, T>(r, kernel, block, finish, &input)?;
                if !m.ok {
                    return Err(format!(
                        "{} block {block} finish {finish:?}: {} {} n={n} {pattern:?}: GPU {}, CPU {}",
                        kernel.id,
                        op.name(),
                        T::NAME,
                        m.got,
                        m.expected
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}
