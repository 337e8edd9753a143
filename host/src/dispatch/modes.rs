//! Reproducible and accurate float sums: which kernel a [`Determinism`]
//! level and [`Options::accurate`] choose, checked before any GPU work
//! (`docs/src/guide/determinism.md`).
//!
//! | options | kernel | level |
//! |---|---|---|
//! | default | `single_pass` | `run_to_run` |
//! | `determinism: GpuToGpu` (f32/f64 sum, dot, sum_squares, norm, mean, moments, logsumexp) | `reproducible_{op}_{type}` | `gpu_to_gpu` |
//! | `accurate: true`, f32 sum | `accurate_sum_f32`: correctly rounded | `gpu_to_gpu` |
//! | `accurate: true`, f64 sum | `accurate_sum_f64`: double-double, fixed order | `gpu_to_gpu` |

use super::{Launch, Level, Limits, Plan, Request, fit_block, fuller_block};
use crate::error::{Error, Result};
use crate::options::{Determinism, Options};
use crate::registry::Kernel;
use gpu::layout::{ACCURATE_WORDS, MODES_SMEM};
use gpu::names::{DType, Layout, MODE_TYPES, Op, PORTABLE_SHAPES, REPRODUCIBLE_OPS, layout};
use gpu::op::fixed_order::{Geometry, WARP, tree_len};

/// Which of the mode kernels runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModeKernel {
    /// `reproducible_{op}_{type}`: the fixed order.
    Reproducible,
    /// `accurate_sum_f32`: the superaccumulator.
    AccurateF32,
    /// `accurate_sum_f64`: double-double in the fixed order.
    AccurateF64,
}

/// A mode kernel, planned for `n` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModeJob {
    pub kernel: ModeKernel,
    /// Accumulators of `acc_bytes` the `partials` buffer needs.
    pub partials: usize,
    /// Bytes of one of them.
    pub acc_bytes: usize,
}

/// The mode kernel `opts` ask for operation `op` (named as `Reduction::NAME`)
/// on `ty`, with its entry; `None` for the default path. An unsupported
/// combination is an [`Error::Unsupported`] naming what is valid.
///
/// ```
/// use reduction::{DType, Options, Determinism, dispatch::mode_entry};
/// let repro = Options { determinism: Determinism::GpuToGpu, ..Options::default() };
/// assert_eq!(mode_entry("dot", DType::F64, &repro).unwrap().as_deref(), Some("reproducible_dot_f64"));
/// let accurate = Options { accurate: true, ..Options::default() };
/// assert_eq!(mode_entry("sum", DType::F32, &accurate).unwrap().as_deref(), Some("accurate_sum_f32"));
/// assert!(mode_entry("min", DType::I32, &repro).is_err());
/// assert!(mode_entry("sum", DType::I32, &accurate).is_err());
/// assert_eq!(mode_entry("min", DType::I32, &Options::default()).unwrap(), None);
/// ```
pub fn mode_entry(op: &str, ty: DType, opts: &Options) -> Result<Option<String>> {
    Ok(mode_kernel(op, ty.name(), opts)?.map(|k| entry(k, op, ty)))
}

/// The mode kernel `opts` ask for, for `op` on the element type named
/// `name`, or why there is none.
pub(crate) fn mode_kernel(op: &str, name: &str, opts: &Options) -> Result<Option<ModeKernel>> {
    if opts.determinism == Determinism::RunToRun && !opts.accurate {
        return Ok(None);
    }
    let what = if opts.accurate { "accurate" } else { Determinism::GpuToGpu.name() };
    let refuse =
        |why: String, valid: &str| Err(Error::Unsupported { kernel: what.into(), what: why, valid: valid.into() });
    if let Some(k) = opts.kernel.filter(|k| k.id != crate::registry::DEFAULT_KERNEL.id) {
        return refuse(format!("the kernel {} (it has its own kernels)", k.id), "no --kernel, or default");
    }
    if opts.finish != crate::options::Finish::Gpu {
        return refuse("finishing on the CPU".into(), "finish on the GPU");
    }
    let types = "f32, f64";
    let Some(ty) = DType::from_name(name).filter(|t| MODE_TYPES.contains(t)) else {
        return refuse(format!("{op} of {name}"), types);
    };
    if opts.accurate {
        if op != Op::Sum.name() {
            return refuse(format!("the operation {op}"), "sum of f32, f64");
        }
        return Ok(Some(if ty == DType::F32 { ModeKernel::AccurateF32 } else { ModeKernel::AccurateF64 }));
    }
    if !REPRODUCIBLE_OPS.iter().any(|o| o.name() == op) {
        let valid: Vec<&str> = REPRODUCIBLE_OPS.iter().map(|o| o.name()).collect();
        return refuse(format!("the operation {op}"), &valid.join(", "));
    }
    Ok(Some(ModeKernel::Reproducible))
}

/// Whether the shaped kernels can give `op` on the element type named
/// `name` the level `opts` ask for: under `gpu_to_gpu`, an operation of the
/// reproducible kernel ([`mode_kernel`]) whose arithmetic a CPU repeats bit
/// for bit. `Some(form)`: the entries `{kernel}_{form}_{type}` run in place
/// of `{kernel}_{op}_{type}` ([`portable_form`]: logsumexp of `f32`, whose
/// own entries take the GPU's approximate `exp2` and `log2`).
pub(crate) fn shaped_mode(op: &str, name: &str, opts: &Options) -> Result<Option<&'static str>> {
    if opts.determinism == Determinism::RunToRun {
        return Ok(None);
    }
    mode_kernel(op, name, opts)?;
    Ok(portable_form(op, name))
}

/// The portable form of the shaped kernels (`names::PORTABLE_SHAPES`) that
/// stands for `op` on the type named `name` under `gpu_to_gpu`, if it has
/// one.
pub(crate) fn portable_form(op: &str, name: &str) -> Option<&'static str> {
    PORTABLE_SHAPES
        .iter()
        .find(|(_, o, types)| o.name() == op && types.iter().any(|t| t.name() == name))
        .map(|&(form, ..)| form)
}

/// The PTX entry of a mode kernel.
pub(crate) fn entry(kernel: ModeKernel, op: &str, ty: DType) -> String {
    kernel.row().entry_named(0, op, ty.name())
}

impl ModeKernel {
    /// Its row of the registry.
    pub(crate) fn row(self) -> &'static Kernel {
        if self == ModeKernel::Reproducible { &crate::registry::REPRODUCIBLE } else { &crate::registry::ACCURATE }
    }
}

impl ModeJob {
    /// The partials `kernel` needs for `n` elements of `ty` (the
    /// reproducible kernel's accumulators of `acc_bytes`) on `grid` blocks,
    /// and the blocks worth launching at `block` threads (at most `resident`).
    pub(crate) fn plan(
        kernel: ModeKernel,
        ty: DType,
        acc_bytes: usize,
        n: usize,
        block: u32,
        resident: u32,
    ) -> (ModeJob, u32) {
        let g = Geometry::new(n, ty.size());
        let warps = (block as usize / WARP).max(1);
        let (wanted, acc_bytes) = match kernel {
            ModeKernel::Reproducible => (g.segments.div_ceil(warps), acc_bytes),
            ModeKernel::AccurateF64 => (g.segments.div_ceil(warps), 16),
            ModeKernel::AccurateF32 => (n.div_ceil(16 * block as usize), 8),
        };
        let grid = wanted.clamp(1, resident.max(1) as usize) as u32;
        let partials = match kernel {
            ModeKernel::AccurateF32 => grid as usize * ACCURATE_WORDS,
            _ => tree_len(g.segments),
        };
        (ModeJob { kernel, partials, acc_bytes }, grid)
    }
}

/// A reproducible or accurate kernel ([`mode_kernel`]) for the request:
/// launched as the default kernel is (one launch, the last block
/// finishes), at the block asked for or the card's default one (stepped
/// down where its registers do not allow it), on the grid it can use (at
/// most `max_grid`; its result does not depend on it).
pub(super) fn mode_plan(request: &Request, mode: ModeKernel, card: &impl Limits) -> Result<Plan> {
    let opts = &request.options;
    // the library's operation of that name: its inputs, accumulator and result
    let kernel = if opts.accurate { "accurate" } else { "gpu_to_gpu" };
    let ty = crate::dispatch::library_type(request.ty, kernel)?;
    let own = match mode {
        ModeKernel::Reproducible => Op::from_name(request.op).and_then(|op| layout(op, ty)),
        _ => Some(Layout { inputs: 1, acc_bytes: ty.size(), out_bytes: ty.size() }),
    };
    let asked = Layout { inputs: request.inputs, acc_bytes: request.acc_bytes, out_bytes: request.out_bytes };
    if own != Some(asked) {
        let valid: Vec<&str> = REPRODUCIBLE_OPS.iter().map(|o| o.name()).collect();
        return Err(Error::Unsupported {
            kernel: kernel.into(),
            what: format!("an operation of your own named {}", request.op),
            valid: format!("the library's {}", valid.join(", ")),
        });
    }
    let (block, name) = fit_block(
        opts.block,
        card.tuning().default_block(request.op, request.n),
        |_| entry(mode, request.op, ty),
        |e| card.max_threads_per_block(e),
    )?;
    // a smaller block where the card holds more of it (`fuller_block`) for
    // the accurate f32 sum, whose last block only adds the limbs; not for
    // the reproducible kernel, whose last block runs the whole tree over the
    // partials (the f64 sum on an H200: 0.914× the default at 256 threads,
    // 0.972× at 1024)
    let (block, entry) = match (opts.block, mode) {
        (None, ModeKernel::AccurateF32) => {
            fuller_block(block, name, |_| entry(mode, request.op, ty), |e, b| card.resident_blocks(e, b, MODES_SMEM))?
        }
        _ => (block, name),
    };
    mode.row().check_block(block)?;
    let resident = card.resident_blocks(&entry, block, MODES_SMEM)?;
    let resident = opts.max_grid.map_or(resident, |g| resident.min(g.max(1)));
    let (job, grid) = ModeJob::plan(mode, ty, request.acc_bytes, request.n, block, resident);
    let levels = vec![Level { launches: vec![Launch { in_offset: 0, n: request.n, grid, out_offset: 0 }], outputs: 1 }];
    Ok(Plan {
        kernel: mode.row(),
        entry,
        block,
        levels,
        smem: MODES_SMEM,
        partials: job.partials,
        inputs: request.inputs,
        acc_bytes: job.acc_bytes,
        exponent: None, // no mode kernel takes power_sum
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_combinations_are_one_line_errors() {
        let repro = Options { determinism: Determinism::GpuToGpu, ..Options::default() };
        let accurate = Options { accurate: true, ..Options::default() };
        let teaching = Options { kernel: Some(crate::registry::Kernel::find("reduce4").unwrap()), ..repro };
        let cpu = Options { finish: crate::options::Finish::Cpu, ..accurate };
        for (op, ty, opts) in [
            ("min", DType::I32, &repro),
            ("sum", DType::I32, &repro),
            ("argmax", DType::F32, &repro),
            ("sum", DType::F16, &repro),
            ("sum", DType::I32, &accurate),
            ("dot", DType::F32, &accurate),
            ("sum", DType::F32, &teaching),
            ("sum", DType::F32, &cpu),
        ] {
            let e = mode_kernel(op, ty.name(), opts).unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }) && !e.to_string().contains('\n'), "{op} {ty:?}: {e}");
        }
        let both = Options { accurate: true, determinism: Determinism::GpuToGpu, ..Options::default() };
        assert_eq!(mode_kernel("sum", "f64", &both).unwrap(), Some(ModeKernel::AccurateF64));
        // logsumexp of f32 is reproducible flat, and along a shape in its portable form
        assert_eq!(mode_kernel("logsumexp", "f32", &repro).unwrap(), Some(ModeKernel::Reproducible));
        assert_eq!(shaped_mode("logsumexp", "f32", &repro).unwrap(), Some("logsumexp_portable"));
        assert_eq!(shaped_mode("logsumexp", "f32", &Options::default()).unwrap(), None);
        assert_eq!(shaped_mode("logsumexp", "f64", &repro).unwrap(), None);
        assert_eq!(shaped_mode("moments", "f32", &repro).unwrap(), None);
        let e = shaped_mode("logsumexp", "f16", &repro).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }) && !e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn plans_fit_the_partials() {
        for n in [1usize, 31, 1000, (1 << 20) + 7, 1 << 28] {
            for block in [128, 256, 1024] {
                let (job, grid) = ModeJob::plan(ModeKernel::Reproducible, DType::F32, 4, n, block, 264);
                assert!((1..=264).contains(&grid));
                assert!(job.partials >= Geometry::new(n, 4).segments);
                let (job, grid) = ModeJob::plan(ModeKernel::AccurateF32, DType::F32, 4, n, block, 264);
                assert_eq!(job.partials, grid as usize * ACCURATE_WORDS);
            }
        }
    }
}
