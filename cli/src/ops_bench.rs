//! Timing the library's operations (arg-min/max, dot, norms, half-precision
//! sums, ...) on the default kernel: each input checked once against the
//! CPU (`testkit::ops::verify_op`), then the launch alone timed
//! between CUDA events, planned before the first event, cycling through
//! copies of the inputs that together exceed the L2 several times. GB/s
//! count every input byte read (both vectors of a dot product). The runs
//! are queued from the host loop or behind a hold kernel
//! ([`crate::timing::Timing`]), and leave their result where a reduction
//! to the host leaves it or in a device buffer ([`ResultTo`]); each row
//! says which.

use reduction::cudarc::driver::{CudaSlice, CudaView};
use reduction::{DType, Element, Op, Options, Reducer, Result, op::Reduction};
use serde::{Deserialize, Serialize};
use testkit::Checked;
use testkit::data::{Pattern, Sample, generate};
use testkit::ops::{Number, Outcome, verify_op};
use testkit::poisoned::Poisoned;
use testkit::with_operation;

use crate::bench::{WARMUP, copies_wanted};
use crate::timing::{Timing, by_name, time_runs_with};

/// Where the timed runs leave their result.
///
/// ```
/// use reduce::ops_bench::ResultTo;
/// assert_eq!("device".parse::<ResultTo>(), Ok(ResultTo::Device));
/// assert_eq!(ResultTo::default().name(), "host");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultTo {
    /// The reducer's result slot in mapped host memory, published with a
    /// system-wide fence and a flag: what `r.argmax(&x)` waits for
    /// (`Reducer::enqueue_to_host`).
    #[default]
    Host,
    /// A device buffer, as torch and CuPy leave theirs
    /// (`Reducer::enqueue`).
    Device,
}

impl ResultTo {
    /// Both, the default first.
    pub const ALL: [ResultTo; 2] = [ResultTo::Host, ResultTo::Device];

    /// The name on the command line and in tables: `host`, `device`.
    pub const fn name(self) -> &'static str {
        match self {
            ResultTo::Host => "host",
            ResultTo::Device => "device",
        }
    }
}

impl std::str::FromStr for ResultTo {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        by_name(&ResultTo::ALL, ResultTo::name, "result", s)
    }
}

/// One operation on one type and size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpRow {
    /// The operation's name (`argmax`; `power_sum(3)` with its exponent
    /// when one was given).
    pub op: String,
    /// The element type's name (`bf16`).
    pub ty: String,
    /// `default`, `gpu_to_gpu` or `accurate` (`reduction::Determinism`, `Options::accurate`).
    #[serde(default)]
    pub mode: String,
    /// Elements per input.
    pub n: usize,
    /// Threads per block.
    pub block: u32,
    /// Blocks of the launch; 0 in rows written before it was recorded.
    #[serde(default)]
    pub grid: u32,
    /// Median time between the CUDA events around the launch, in µs.
    pub median_us: f64,
    /// How the timed runs were queued: `host-loop` or `queued`
    /// ([`Timing`]); rows written before it existed were `host-loop`.
    #[serde(default)]
    pub timing: Timing,
    /// Where the timed runs left their result ([`ResultTo`]); rows written
    /// before it existed were `host`.
    #[serde(default)]
    pub result: ResultTo,
    /// Input bytes read per second at the median, in GB/s.
    pub gbps: f64,
    /// The GPU result and the CPU reference, printed, and whether they match.
    pub got: String,
    /// The CPU reference.
    pub expected: String,
    /// Whether they match.
    pub ok: bool,
}

/// Check, then time `runs` launches of operation `R` on `n` random elements
/// of `T` (two inputs for a dot product) at `block` threads, queued as
/// `timing` says, the result left where `result` says. A result left on the
/// device is poisoned first and the last timed run's is the one checked.
#[allow(clippy::too_many_arguments)]
pub fn measure_op<R: Reduction<T>, T: Element + Sample + Number + Outcome + Default>(
    r: &Reducer,
    op: Op,
    n: usize,
    block: Option<u32>,
    runs: usize,
    seed: u64,
    mode: Options,
    timing: Timing,
    result: ResultTo,
) -> Result<OpRow>
where
    R::Out: Outcome,
{
    let inputs = R::INPUTS as usize;
    // the block asked for, else the library's choice for this size and mode
    let prepared = r.prepare::<R, T>(n, &Options { block, ..mode })?;
    let block = prepared.kernel().1;
    let (host, mut checked) = checked_inputs::<R, T>(r, op, n, block, seed, mode)?;
    // copies of every input, enough to stream from DRAM
    let gpu = r.gpu();
    let bytes = n * size_of::<T>() * inputs;
    let sets = copies_wanted(gpu.info().l2_bytes, bytes, gpu.mem_info()?.0);
    let mut copies: Vec<Vec<CudaSlice<T>>> = Vec::new();
    for _ in 0..sets {
        let set =
            host.iter().map(|h| gpu.stream().clone_htod(h).map_err(reduction::Error::from_driver("cuMemcpyHtoD")));
        copies.push(set.collect::<Result<_>>()?);
    }
    // made before the first event: the events enclose the launches only
    let views: Vec<Vec<CudaView<'_, T>>> = copies.iter().map(|set| set.iter().map(|b| b.as_view()).collect()).collect();
    let inputs: Vec<Vec<&CudaView<'_, T>>> = views.iter().map(|set| set.iter().collect()).collect();
    let stats = match result {
        ResultTo::Host => {
            time_runs_with(gpu, timing, WARMUP, runs, |i| r.enqueue_to_host(&prepared, &inputs[i % inputs.len()]))?
        }
        ResultTo::Device => {
            let mut out = Poisoned::<R::Out>::new(gpu)?;
            let mut view = out.view()?;
            let stats = time_runs_with(gpu, timing, WARMUP, runs, |i| {
                r.enqueue(&prepared, &inputs[i % inputs.len()], &mut view)
            })?;
            checked = verify_on::<R, T>(r, op, &host, block, mode, out.read(gpu)?)?;
            stats
        }
    };
    Ok(OpRow {
        op: match mode.p {
            Some(p) => format!("{}({p})", op.name()),
            None => op.name().to_string(),
        },
        ty: T::NAME.to_string(),
        mode: mode_name(&mode).to_string(),
        n,
        block,
        grid: prepared.grid(),
        median_us: stats.median_ms * 1e3,
        timing,
        result,
        gbps: stats.bandwidth(bytes) / 1e9,
        got: checked.got,
        expected: checked.expected,
        ok: checked.ok,
    })
}

/// Random inputs for `R` (two for a dot product) and the check of the
/// default kernel's result on them at `block` threads.
fn checked_inputs<R: Reduction<T>, T: Element + Sample + Number + Outcome + Default>(
    r: &Reducer,
    op: Op,
    n: usize,
    block: u32,
    seed: u64,
    mode: Options,
) -> Result<(Vec<Vec<T>>, Checked)>
where
    R::Out: Outcome,
{
    let host: Vec<Vec<T>> =
        (0..R::INPUTS as u64).map(|k| generate(Pattern::Random, n, seed + k)).collect::<Result<_>>()?;
    let refs: Vec<&[T]> = host.iter().map(Vec::as_slice).collect();
    let got = r.reduce::<R, T, [T]>(&refs, &Options { block: Some(block), ..mode })?;
    let checked = verify_on::<R, T>(r, op, &host, block, mode, got)?;
    Ok((host, checked))
}

/// The check of `got` against the CPU's result of `op` on `host` (its
/// inputs: one, or two for a dot product) at `block` threads, with the
/// exponent of `mode`.
fn verify_on<R: Reduction<T>, T: Element + Number + Outcome>(
    r: &Reducer,
    op: Op,
    host: &[Vec<T>],
    block: u32,
    mode: Options,
    got: R::Out,
) -> Result<Checked>
where
    R::Out: Outcome,
{
    let a = &host[0];
    // the error bound of the default kernel at that block
    let at = Options { block: Some(block), p: mode.p, ..Options::default() };
    verify_op::<R, T>(r, op, a, host.get(1).unwrap_or(a), &at, got)
}

/// Check operation `op` on `n` random elements of `ty` once (no timing).
pub fn check(r: &Reducer, op: Op, ty: DType, n: usize, seed: u64) -> Result<Checked> {
    with_operation!(op, ty, |R, T| {
        let block = r.plan::<R, T>(n, &Options::default())?.block; // the library's choice
        checked_inputs::<R, T>(r, op, n, block, seed, Options::default()).map(|(_, c)| c)
    }, else Err(unsupported(op, ty)))
}

/// [`measure_op`] for a run-time operation and type; an error naming both
/// when the type does not have the operation.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    r: &Reducer,
    op: Op,
    ty: DType,
    n: usize,
    block: Option<u32>,
    runs: usize,
    seed: u64,
    mode: Options,
    timing: Timing,
    result: ResultTo,
) -> Result<OpRow> {
    with_operation!(op, ty, |R, T| measure_op::<R, T>(r, op, n, block, runs, seed, mode, timing, result), else Err(unsupported(op, ty)))
}

/// The mode's name in tables: `default`, `gpu_to_gpu` or `accurate`.
pub fn mode_name(mode: &Options) -> &'static str {
    if mode.accurate {
        "accurate"
    } else {
        mode.determinism.name().strip_prefix("run_to_run").map_or("gpu_to_gpu", |_| "default")
    }
}

/// The default, `gpu_to_gpu` and accurate sums of `ty` side by side: GB/s
/// and the ratio to the default sum, measured in one sitting.
pub fn modes(r: &Reducer, types: &[DType], n: usize, runs: usize, seed: u64) -> Result<Vec<(OpRow, f64)>> {
    let mut rows = Vec::new();
    for &ty in types {
        let modes = [
            Options::default(),
            Options { determinism: reduction::Determinism::GpuToGpu, ..Options::default() },
            Options { accurate: true, ..Options::default() },
        ];
        let mut base = None;
        for mode in modes {
            let row = measure(r, Op::Sum, ty, n, None, runs, seed, mode, Timing::HostLoop, ResultTo::Host)?;
            let ratio = row.gbps / *base.get_or_insert(row.gbps);
            rows.push((row, ratio));
        }
    }
    Ok(rows)
}

/// [`modes`]' rows as a table.
pub fn modes_table(rows: &[(OpRow, f64)]) -> String {
    let mut s = format!(
        "{:<5} {:<11} {:>11} {:>5} {:>11} {:>9} {:>9}  {:<8} {}\n",
        "type", "mode", "n", "block", "median µs", "GB/s", "× default", "check", "GPU / CPU"
    );
    for (row, ratio) in rows {
        s += &format!(
            "{:<5} {:<11} {:>11} {:>5} {:>11.2} {:>9.1} {:>9.3}  {:<8} {} / {}\n",
            row.ty,
            row.mode,
            row.n,
            row.block,
            row.median_us,
            row.gbps,
            ratio,
            if row.ok { "OK" } else { "MISMATCH" },
            row.got,
            row.expected
        );
    }
    s
}

/// The error for an operation a type does not have.
pub fn unsupported(op: Op, ty: DType) -> reduction::Error {
    let valid: Vec<&str> = op.types().iter().map(|t| t.name()).collect();
    reduction::Error::Invalid(format!(
        "{} of {}: not an operation of that type (valid types: {})",
        op.name(),
        ty.name(),
        valid.join(", ")
    ))
}

/// The rows as a table: the header, then [`table_rows`].
pub fn table(rows: &[OpRow]) -> String {
    let header = format!(
        "{:<12} {:<5} {:>11} {:>5} {:>5} {:>11} {:>9}  {:<9} {:<6} {:<8} {}\n",
        "operation", "type", "n", "block", "grid", "median µs", "GB/s", "timing", "result", "check", "GPU / CPU"
    );
    header + &table_rows(rows)
}

/// The rows' lines of [`table`], without its header.
pub fn table_rows(rows: &[OpRow]) -> String {
    let mut s = String::new();
    for row in rows {
        s += &format!(
            "{:<12} {:<5} {:>11} {:>5} {:>5} {:>11.2} {:>9.1}  {:<9} {:<6} {:<8} {} / {}\n",
            row.op,
            row.ty,
            row.n,
            row.block,
            row.grid,
            row.median_us,
            row.gbps,
            row.timing.name(),
            row.result.name(),
            if row.ok { "OK" } else { "MISMATCH" },
            row.got,
            row.expected
        );
    }
    s
}
