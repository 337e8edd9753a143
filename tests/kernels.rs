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

use std::sync::OnceLock;

use libtest_mimic::{Arguments, Failed, Trial};
use reduction::bench::tolerance;
use reduction::data::{Pattern, Sample, generate};
use reduction::{
    DEFAULT_BLOCK, DType, Element, Finish, KERNELS, Op, Options, ReduceOp, Reducer, Reference, depth, no_gpu_reason,
    with_dtype, with_op,
};

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

fn reducer() -> &'static Reducer {
    static R: OnceLock<Reducer> = OnceLock::new();
    R.get_or_init(|| Reducer::new().unwrap_or_else(|e| panic!("the GPU was there a moment ago: {e}")))
}

fn main() {
    let args = Arguments::from_args();
    let skip = no_gpu_reason();
    if let Some(reason) = &skip {
        println!("SKIPPED: {reason}");
    }
    let mut trials = Vec::new();
    for dtype in DType::ALL {
        for op in Op::ALL {
            for pattern in Pattern::ALL {
                let name = format!("all_kernels::{}_{}_{:?}", op.name(), dtype.name(), pattern).to_lowercase();
                let trial =
                    Trial::test(name, move || with_dtype!(dtype, |T| with_op!(op, |O| check_all::<O, T>(pattern))));
                trials.push(trial.with_ignored_flag(skip.is_some()));
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Reduce fresh data of every size with every kernel configuration.
fn check_all<O: ReduceOp<T>, T: Element + Reference + Sample>(pattern: Pattern) -> Result<(), Failed> {
    let r = reducer();
    let op = Op::parse(O::NAME)?;
    let stream = r.gpu().stream();
    for (i, &n) in SIZES.iter().enumerate() {
        let seed = 1000 * i as u64 + 7 * op as u64 + pattern as u64;
        let host: Vec<T> = generate(pattern, n, seed);
        let expected = T::reference(op, &host);
        let device = if n > 0 { Some(stream.clone_htod(&host).map_err(|e| e.to_string())?) } else { None };
        for kernel in KERNELS {
            let cpu_finish = (!kernel.single_pass()).then_some((DEFAULT_BLOCK, Finish::Cpu));
            let configs = kernel.block_sizes().map(|b| (b, Finish::Gpu)).chain(cpu_finish);
            for (block, finish) in configs {
                let opts = Options { kernel: Some(kernel), block: Some(block), finish };
                let got = match &device {
                    Some(d) => r.reduce_with::<O, T, _>(d, &opts)?,
                    None => r.reduce_with::<O, T, _>(&host, &opts)?,
                };
                let chain = if n == 0 {
                    0
                } else {
                    let levels = r.plan::<O, T>(kernel, block, n)?;
                    match finish {
                        Finish::Gpu => depth(kernel, &levels, block),
                        Finish::Cpu => depth(kernel, &levels[..1], block) + levels[0].outputs,
                    }
                };
                let tol = tolerance(chain, &host);
                if !T::matches(op, got, expected, tol) {
                    return Err(format!(
                        "{} block {block} finish {finish:?}: {} {} n={n} {pattern:?}: GPU {got:?}, CPU {expected:?} (tolerance {tol:e})",
                        kernel.id,
                        op.name(),
                        T::NAME
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}
