//! Measuring kernels: inputs replicated past the L2 cache, a correctness
//! check against the CPU before timing, and CUDA-event timing of the whole
//! reduction (every launch, result left in device memory).

use cudarc::driver::CudaSlice;
use serde::Serialize;

use crate::data::{Pattern, Sample, generate};
use crate::error::{Error, Result, driver};
use crate::plan::depth;
use crate::reducer::{Element, Finish, Options, Reducer};
use crate::reference::{Op, Reference};
use crate::registry::Kernel;
use crate::timing::{Stats, time_runs};
use gpu::op::ReduceOp;

/// Warm-up runs before timing.
pub const WARMUP: usize = 5;

/// An input on the host and enough device copies of it that cycling through
/// them reads from DRAM, not from the L2 cache.
pub struct Prepared<T> {
    /// The elements.
    pub host: Vec<T>,
    /// Device copies (at least one).
    pub copies: Vec<CudaSlice<T>>,
}

impl<T: Element + Sample> Prepared<T> {
    /// `n` elements of `pattern` (seeded), uploaded, and copied until the
    /// copies together are at least four times the L2 (or half the free
    /// device memory, whichever is less).
    pub fn new(reducer: &Reducer, pattern: Pattern, n: usize, seed: u64) -> Result<Self> {
        let host: Vec<T> = generate(pattern, n, seed);
        let gpu = reducer.gpu();
        let bytes = (n * size_of::<T>()).max(1);
        let (free, _) = gpu.mem_info()?;
        let wanted = (4 * gpu.info().l2_bytes).div_ceil(bytes).max(1);
        let affordable = (free / 2 / bytes).max(1);
        let mut first = gpu.alloc::<T>(n, "the benchmark input")?;
        gpu.stream().memcpy_htod(&host, &mut first).map_err(driver("cuMemcpyHtoD"))?;
        let mut copies = vec![first];
        while copies.len() < wanted.min(affordable) {
            let mut copy = gpu.alloc::<T>(n, "a copy of the benchmark input")?;
            gpu.stream().memcpy_dtod(&copies[0], &mut copy).map_err(driver("cuMemcpyDtoD"))?;
            copies.push(copy);
        }
        Ok(Prepared { host, copies })
    }
}

/// One kernel's check and timing.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub kernel: &'static str,
    pub block: u32,
    pub op: Op,
    pub n: usize,
    /// GPU and CPU results, printed.
    pub got: String,
    pub expected: String,
    pub ok: bool,
    pub stats: Stats,
    /// Bytes read per second at the median time.
    pub bandwidth: f64,
}

/// The float tolerance for a result: `(depth + 1) · ε · Σ|x|` (see
/// [`depth`]); zero for integers.
pub fn tolerance<T: Reference>(depth: usize, xs: &[T]) -> f64 {
    (depth + 1) as f64 * T::EPSILON * T::abs_sum(xs)
}

/// Check `kernel` once against the CPU reference, then time the whole
/// reduction `runs` times (after [`WARMUP`] runs), cycling through the copies.
pub fn measure<O: ReduceOp<T>, T: Element + Reference + Sample>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &Prepared<T>,
    runs: usize,
) -> Result<Measurement> {
    let op = Op::parse(O::NAME)?;
    let n = input.host.len();
    let opts = Options { kernel: Some(kernel), block: Some(block), finish };
    let expected = T::reference(op, &input.host);
    let got = reducer.reduce_with::<O, T, _>(&input.copies[0], &opts)?;
    let levels = reducer.plan::<O, T>(kernel, block, n)?;
    let chain = match finish {
        Finish::Gpu => depth(kernel, &levels, block),
        Finish::Cpu => depth(kernel, &levels[..1], block) + levels[0].outputs,
    };
    let ok = T::matches(op, got, expected, tolerance(chain, &input.host));

    let gpu = reducer.gpu();
    let mut out = gpu.alloc::<T>(1, "the result")?;
    let timed = Options { finish: Finish::Gpu, ..opts };
    let stats = time_runs(gpu, WARMUP, runs, |i| {
        let copy = &input.copies[i % input.copies.len()];
        reducer.reduce_into::<O, T>(&copy.as_view(), &mut out.as_view_mut(), &timed)
    })?;
    Ok(Measurement {
        kernel: kernel.id,
        block,
        op,
        n,
        got: got.to_string(),
        expected: expected.to_string(),
        ok,
        bandwidth: stats.bandwidth(n * size_of::<T>()),
        stats,
    })
}

impl Measurement {
    /// The error to report when the check failed.
    pub fn mismatch(&self, ty: &str) -> Option<Error> {
        (!self.ok).then(|| Error::Mismatch {
            case: format!("{} block {} {} {ty} n={}", self.kernel, self.block, self.op.name(), self.n),
            got: self.got.clone(),
            expected: self.expected.clone(),
        })
    }
}
