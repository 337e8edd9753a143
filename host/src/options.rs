//! How to reduce ([`Options`]): kernel, block size, where the partials are
//! combined ([`Finish`]), grid cap, determinism, accuracy, and how shaped
//! reductions split the work.

use crate::registry::Kernel;
use crate::shape::Strategy;

/// Where the last partials are combined.
///
/// ```
/// use reduction::{Finish, Options};
/// assert_eq!(Options::default().finish, Finish::Gpu);
/// let like_the_2023_review = Options { finish: Finish::Cpu, ..Options::default() };
/// # let _ = like_the_2023_review;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Finish {
    /// Launch again on the partials until one value remains (Harris).
    #[default]
    Gpu,
    /// One launch; copy its per-block partials to the host and combine them
    /// there (the 2023 review does this).
    Cpu,
}

/// How to reduce: which kernel, block size and finish. The default is the
/// library's fastest kernel for the device.
///
/// ```
/// use reduction::{Finish, Options, registry::Kernel};
/// let teaching = Options { kernel: Some(Kernel::find("reduce4").unwrap()), block: Some(256), finish: Finish::Cpu, ..Options::default() };
/// assert!(Options::default().kernel.is_none());
/// # let _ = teaching;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Options {
    /// `None`: the fastest kernel for this device and size.
    pub kernel: Option<&'static Kernel>,
    /// `None`: [`DEFAULT_BLOCK`](crate::registry::DEFAULT_BLOCK) for an explicit kernel, the tuned size for the default.
    pub block: Option<u32>,
    /// Where the partials are combined.
    pub finish: Finish,
    /// At most this many blocks for a grid-stride kernel (`reduce7` on,
    /// `single_pass`): `None` is what the GPU holds at once. A smaller GPU
    /// in effect; for tuning and for results that must not depend on the
    /// GPU's size.
    pub max_grid: Option<u32>,
    /// How reproducible float results must be: [`Determinism::RunToRun`]
    /// (the default kernel) or [`Determinism::GpuToGpu`] (the same bits on
    /// any GPU, block size and grid: f32/f64 sum, dot, sum_squares, norm,
    /// mean). Other operations and types are refused
    /// ([`Error::Unsupported`](crate::Error::Unsupported)) before any GPU work.
    pub determinism: Determinism,
    /// The accurate f32/f64 sum: f32 correctly rounded (within ½ ulp of the
    /// exact sum, whatever the data), f64 within 1 ulp while Σ|x|/|Σx| <
    /// 2^32 (`docs/src/guide/determinism.md`); both also `gpu_to_gpu`.
    pub accurate: bool,
    /// How the rows', columns' and segments' kernels split the work
    /// ([`Reducer::reduce_shaped`](crate::Reducer::reduce_shaped));
    /// [`Strategy::Auto`] chooses by shape. Flat reductions ignore it.
    pub strategy: Strategy,
    /// The exponent `p` of [`PowerSum`](crate::op::PowerSum), `Σ |x|ᵖ`
    /// (the p-norm's sum: [`Reducer::norm_p`](crate::Reducer::norm_p));
    /// `None` is 2, torch's default order. Finite and not 0, else
    /// [`Error::Invalid`](crate::Error::Invalid) before any GPU work; the
    /// other operations take none (setting it is the same error).
    pub p: Option<f64>,
}

/// How much a float result may depend on where it runs, in CCCL's terms
/// (`cuda::execution::determinism`).
///
/// ```
/// use reduction::Determinism;
/// assert_eq!(Determinism::default(), Determinism::RunToRun);
/// assert_eq!(Determinism::from_name("gpu_to_gpu"), Some(Determinism::GpuToGpu));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Determinism {
    /// The same bits for the same input and options on the same GPU, every
    /// run (the default kernel combines partials in block order, never with
    /// float atomics). Another GPU, block size or grid may change the
    /// rounding.
    #[default]
    RunToRun,
    /// The same bits on any GPU, at any block size and grid: the order of
    /// additions depends on `n` alone (`gpu::op::fixed_order`), and
    /// `gpu::op::fixed_order::fixed_order` computes the same bits on the CPU.
    GpuToGpu,
}

impl Determinism {
    /// Every level.
    pub const ALL: [Determinism; 2] = [Determinism::RunToRun, Determinism::GpuToGpu];

    /// CCCL's name: `run_to_run`, `gpu_to_gpu`.
    pub fn name(self) -> &'static str {
        match self {
            Determinism::RunToRun => "run_to_run",
            Determinism::GpuToGpu => "gpu_to_gpu",
        }
    }

    /// The level named `name`.
    pub fn from_name(name: &str) -> Option<Determinism> {
        Determinism::ALL.into_iter().find(|d| d.name() == name)
    }
}
