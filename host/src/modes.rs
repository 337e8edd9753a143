//! Reproducible and accurate float sums: which kernel a [`Determinism`]
//! level and [`Options::accurate`] choose, checked before any GPU work
//! (`docs/src/guide/determinism.md`).
//!
//! | options | kernel | level |
//! |---|---|---|
//! | default | `single_pass` | `run_to_run` |
//! | `determinism: GpuToGpu` (f32/f64 sum, dot, sum_squares, norm, mean) | `reproducible_{op}_{type}` | `gpu_to_gpu` |
//! | `accurate: true`, f32 sum | `accurate_sum_f32`: correctly rounded | `gpu_to_gpu` |
//! | `accurate: true`, f64 sum | `accurate_sum_f64`: double-double, fixed order | `gpu_to_gpu` |

use crate::error::{Error, Result};
pub use crate::options::Determinism;
use crate::options::Options;
use gpu::layout::ACCURATE_WORDS;
use gpu::names::{DType, MODE_TYPES, Op, REPRODUCIBLE_OPS};
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
/// use reduction::{DType, Options, modes::{Determinism, mode_entry}};
/// let repro = Options { determinism: Determinism::GpuToGpu, ..Options::default() };
/// assert_eq!(mode_entry("dot", DType::F64, &repro).unwrap().as_deref(), Some("reproducible_dot_f64"));
/// let accurate = Options { accurate: true, ..Options::default() };
/// assert_eq!(mode_entry("sum", DType::F32, &accurate).unwrap().as_deref(), Some("accurate_sum_f32"));
/// assert!(mode_entry("min", DType::I32, &repro).is_err());
/// assert!(mode_entry("sum", DType::I32, &accurate).is_err());
/// assert_eq!(mode_entry("min", DType::I32, &Options::default()).unwrap(), None);
/// ```
pub fn mode_entry(op: &str, ty: DType, opts: &Options) -> Result<Option<String>> {
    Ok(mode_kernel(op, ty, opts)?.map(|k| entry(k, op, ty)))
}

pub(crate) fn mode_kernel(op: &str, ty: DType, opts: &Options) -> Result<Option<ModeKernel>> {
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
    if !MODE_TYPES.contains(&ty) {
        return refuse(format!("{op} of {}", ty.name()), types);
    }
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

/// The PTX entry of a mode kernel.
pub(crate) fn entry(kernel: ModeKernel, op: &str, ty: DType) -> String {
    match kernel {
        ModeKernel::Reproducible => format!("reproducible_{op}_{}", ty.name()),
        ModeKernel::AccurateF32 | ModeKernel::AccurateF64 => format!("accurate_sum_{}", ty.name()),
    }
}

/// Every mode entry in the PTX (the registry's test checks them both ways).
///
/// ```
/// assert_eq!(reduction::modes::entries().len(), 12);
/// ```
pub fn entries() -> Vec<String> {
    let mut all: Vec<String> = MODE_TYPES
        .iter()
        .flat_map(|&t| REPRODUCIBLE_OPS.iter().map(move |o| entry(ModeKernel::Reproducible, o.name(), t)))
        .collect();
    all.push(entry(ModeKernel::AccurateF32, "sum", DType::F32));
    all.push(entry(ModeKernel::AccurateF64, "sum", DType::F64));
    all
}

impl ModeJob {
    /// The partials `kernel` needs for `n` elements of `ty` on `grid` blocks,
    /// and the blocks worth launching at `block` threads (at most `resident`).
    pub(crate) fn plan(kernel: ModeKernel, ty: DType, n: usize, block: u32, resident: u32) -> (ModeJob, u32) {
        let g = Geometry::new(n, ty.size());
        let warps = (block as usize / WARP).max(1);
        let (wanted, acc_bytes) = match kernel {
            ModeKernel::Reproducible => (g.segments.div_ceil(warps), ty.size()),
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
            let e = mode_kernel(op, ty, opts).unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }) && !e.to_string().contains('\n'), "{op} {ty:?}: {e}");
        }
        let both = Options { accurate: true, determinism: Determinism::GpuToGpu, ..Options::default() };
        assert_eq!(mode_kernel("sum", DType::F64, &both).unwrap(), Some(ModeKernel::AccurateF64));
    }

    #[test]
    fn plans_fit_the_partials() {
        for n in [1usize, 31, 1000, (1 << 20) + 7, 1 << 28] {
            for block in [128, 256, 1024] {
                let (job, grid) = ModeJob::plan(ModeKernel::Reproducible, DType::F32, n, block, 264);
                assert!((1..=264).contains(&grid));
                assert!(job.partials >= Geometry::new(n, 4).segments);
                let (job, grid) = ModeJob::plan(ModeKernel::AccurateF32, DType::F32, n, block, 264);
                assert_eq!(job.partials, grid as usize * ACCURATE_WORDS);
            }
        }
    }
}
