//! Every kernel of the registry, on the GPU, against the serial CPU reference.
//!
//! Each trial is one (operator, type, input pattern). It reduces fresh data
//! of every size below with every kernel at every block size it supports
//! (finishing on the GPU), and with every multi-pass kernel at the default
//! block size finishing on the CPU. Integers and min/max must match exactly; float sums
//! must lie within `(depth + 1) · ε · Σ|x|` of a compensated f64 sum, where
//! `depth` is the longest chain of additions in the launch plan (tree rounds
//! plus each thread's sequential part, see `reduction::depth`).
//!
//! Without a GPU every trial is reported as ignored, after one line
//! `SKIPPED: <reason>`.

mod common;

use common::{gpu_trial, reducer};
use libtest_mimic::Failed;
use reduction::check::data::{Pattern, Sample};
use reduction::check::reference::Reference;
use reduction::check::{CheckInput, verify};
use reduction::{DEFAULT_BLOCK, DType, Element, Finish, KERNELS, Op, ReduceOp, with_dtype, with_op};

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
    for &dtype in DType::ALL {
        for &op in Op::ALL {
            for pattern in Pattern::ALL {
                let name = format!("all_kernels::{}_{}_{:?}", op.name(), dtype.name(), pattern).to_lowercase();
                trials.push(gpu_trial(name, move || {
                    with_dtype!(dtype, |T| with_op!(op, |O| check_all::<O, T>(pattern)))
                }));
            }
        }
    }
    common::run(trials)
}

/// Reduce fresh data of every size with every kernel configuration.
fn check_all<O: ReduceOp<T>, T: Element + Reference + Sample>(pattern: Pattern) -> Result<(), Failed> {
    let r = reducer();
    let op = O::OP;
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
