//! Measuring kernels: inputs replicated past the L2 cache, a correctness
//! check against the CPU before timing, and CUDA-event timing of the whole
//! reduction (every launch, result left in device memory).

use std::sync::Mutex;

use cudarc::driver::CudaSlice;
use serde::Serialize;

use crate::data::{Pattern, Sample, generate};
use crate::device::{DeviceInfo, Gpu};
use crate::dtype::DType;
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
    /// CPU references computed so far: operator, result, Σ|x|.
    references: Mutex<Vec<(Op, T, f64)>>,
}

impl<T: Element + Reference> Prepared<T> {
    /// An input already on the device (`copy` holds `host`).
    pub fn from_parts(host: Vec<T>, copy: CudaSlice<T>) -> Self {
        Prepared { host, copies: vec![copy], references: Mutex::default() }
    }

    /// The CPU reference for `op` and Σ|x|, computed once per input.
    pub fn reference(&self, op: Op) -> (T, f64) {
        let mut cache = self.references.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, r, abs)) = cache.iter().find(|(o, _, _)| *o == op) {
            return (r, abs);
        }
        let (r, abs) = (T::reference(op, &self.host), T::abs_sum(&self.host));
        cache.push((op, r, abs));
        (r, abs)
    }
}

impl<T: Element + Reference + Sample> Prepared<T> {
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
        Ok(Prepared { host, copies, references: Mutex::default() })
    }
}

impl<T: Element + Reference + Sample> Prepared<T> {
    /// `n` elements of `pattern`, uploaded once (for checks, not timing).
    pub fn single(reducer: &Reducer, pattern: Pattern, n: usize, seed: u64) -> Result<Self> {
        let host: Vec<T> = generate(pattern, n, seed);
        let gpu = reducer.gpu();
        let mut first = gpu.alloc::<T>(n, "the input")?;
        gpu.stream().memcpy_htod(&host, &mut first).map_err(driver("cuMemcpyHtoD"))?;
        Ok(Prepared::from_parts(host, first))
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
    tolerance_for::<T>(depth, T::abs_sum(xs))
}

/// [`tolerance`] from `Σ|x|`.
fn tolerance_for<T: Reference>(depth: usize, abs_sum: f64) -> f64 {
    (depth + 1) as f64 * T::EPSILON * abs_sum
}

/// Check `kernel` once against the CPU reference (the first copy of the
/// input, finishing as `finish` says); no timing (`stats` is all zeros).
pub fn verify<O: ReduceOp<T>, T: Element + Reference + Sample>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &Prepared<T>,
) -> Result<Measurement> {
    let op = Op::parse(O::NAME)?;
    let n = input.host.len();
    let opts = Options { kernel: Some(kernel), block: Some(block), finish };
    let (expected, abs_sum) = input.reference(op);
    let got = reducer.reduce_with::<O, T, _>(&input.copies[0].slice(..n), &opts)?;
    let ok = if n == 0 {
        T::matches(op, got, expected, 0.0)
    } else {
        let levels = reducer.plan::<O, T>(kernel, block, n)?;
        let chain = match finish {
            Finish::Gpu => depth(kernel, &levels, block),
            Finish::Cpu => depth(kernel, &levels[..1], block) + levels[0].outputs,
        };
        T::matches(op, got, expected, tolerance_for::<T>(chain, abs_sum))
    };
    Ok(Measurement {
        kernel: kernel.id,
        block,
        op,
        n,
        got: got.to_string(),
        expected: expected.to_string(),
        ok,
        stats: Stats { median_ms: 0.0, min_ms: 0.0, max_ms: 0.0, runs: 0 },
        bandwidth: 0.0,
    })
}

/// [`verify`] `kernel`, then time the whole reduction `runs` times (after
/// [`WARMUP`] runs), cycling through the copies.
pub fn measure<O: ReduceOp<T>, T: Element + Reference + Sample>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &Prepared<T>,
    runs: usize,
) -> Result<Measurement> {
    let checked = verify::<O, T>(reducer, kernel, block, finish, input)?;
    let gpu = reducer.gpu();
    let mut out = gpu.alloc::<T>(1, "the result")?;
    let timed = Options { kernel: Some(kernel), block: Some(block), finish: Finish::Gpu };
    let stats = time_runs(gpu, WARMUP, runs, |i| {
        let copy = &input.copies[i % input.copies.len()];
        reducer.reduce_into::<O, T>(&copy.slice(..checked.n), &mut out.as_view_mut(), &timed)
    })?;
    Ok(Measurement { bandwidth: stats.bandwidth(checked.n * size_of::<T>()), stats, ..checked })
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

/// Device-to-device copy bandwidth (bytes read + bytes written per second)
/// of a `bytes`-sized copy: the practical ceiling a reduction is measured
/// against, next to the theoretical one.
pub fn copy_bandwidth(gpu: &Gpu, bytes: usize, runs: usize) -> Result<f64> {
    let src = gpu.alloc::<u8>(bytes, "the copy benchmark's source")?;
    let mut dst = gpu.alloc::<u8>(bytes, "the copy benchmark's destination")?;
    let stats =
        time_runs(gpu, WARMUP, runs, |_| gpu.stream().memcpy_dtod(&src, &mut dst).map_err(driver("cuMemcpyDtoD")))?;
    Ok(2.0 * bytes as f64 / (stats.median_ms * 1e-3))
}

/// One row of the report: a kernel in Rust, and the same kernel in CUDA C++.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub kernel: &'static str,
    pub step: u32,
    pub title: &'static str,
    pub source: &'static str,
    pub rust: Measurement,
    /// Time of the previous row over this row's time.
    pub step_speedup: Option<f64>,
    /// Time of the first row over this row's time.
    pub cumulative_speedup: f64,
    /// Bandwidth over the theoretical peak.
    pub of_theoretical: f64,
    /// Bandwidth over the measured device-to-device copy.
    pub of_copy: f64,
    /// The CUDA C++ kernel (NVRTC), if it could run.
    pub cuda: Option<Measurement>,
    /// Why there is no CUDA C++ measurement.
    pub cuda_note: Option<String>,
    /// Rust time over CUDA C++ time.
    pub rust_over_cuda: Option<f64>,
}

/// All kernels at one size.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub n: usize,
    pub bytes: usize,
    pub rows: Vec<Row>,
}

/// The benchmark's whole output (`reduce bench --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub device: DeviceInfo,
    /// Memory clock × bus width × 2, bytes/s.
    pub peak_theoretical: f64,
    /// Device-to-device copy, bytes read + written per second.
    pub copy_bandwidth: f64,
    pub dtype: DType,
    pub op: Op,
    pub block: u32,
    pub runs: usize,
    /// Why the CUDA C++ column is empty, if it is.
    pub cuda_note: Option<String>,
    pub tables: Vec<Table>,
}

/// What `reduce bench` measures.
pub struct BenchConfig {
    pub sizes: Vec<usize>,
    pub kernels: Vec<&'static Kernel>,
    /// Threads per block for every kernel (raised to a kernel's minimum):
    /// Harris measured everything at 128.
    pub block: u32,
    pub runs: usize,
    pub seed: u64,
}

/// Measure every kernel of `config` at every size, in Rust (`rust`) and, where
/// `cuda` holds the NVRTC-compiled reference, in CUDA C++ (else the reason it
/// does not). `tick` is called before each measurement (for a progress bar).
pub fn run_bench<O: ReduceOp<T>, T: Element + Reference + Sample>(
    rust: &Reducer,
    cuda: std::result::Result<&Reducer, &str>,
    config: &BenchConfig,
    mut tick: impl FnMut(&str),
) -> Result<Report> {
    let info = rust.gpu().info().clone();
    let copy = copy_bandwidth(rust.gpu(), 1 << 30, 20)?;
    let mut tables = Vec::new();
    for &n in &config.sizes {
        let input = Prepared::<T>::new(rust, Pattern::Random, n, config.seed)?;
        let bytes = n * size_of::<T>();
        let mut rows: Vec<Row> = Vec::new();
        for &kernel in &config.kernels {
            let block = config.block.max(kernel.min_block);
            tick(&format!("n={n} {} (Rust)", kernel.id));
            let m = measure::<O, T>(rust, kernel, block, Finish::Gpu, &input, config.runs)?;
            if let Some(e) = m.mismatch(T::NAME) {
                return Err(e);
            }
            let (cuda_m, cuda_note) = match cuda {
                Err(_) => (None, None), // the report's cuda_note says why
                Ok(c) => {
                    tick(&format!("n={n} {} (CUDA C++)", kernel.id));
                    match measure::<O, T>(c, kernel, block, Finish::Gpu, &input, config.runs) {
                        Ok(m) if m.ok => (Some(m), None),
                        Ok(m) => {
                            (None, Some(format!("CUDA C++ result {} differs from the CPU's {}", m.got, m.expected)))
                        }
                        Err(Error::MissingEntry { .. }) => {
                            (None, Some("no CUDA C++ version of this kernel, op and type".into()))
                        }
                        Err(e) => (None, Some(e.to_string())),
                    }
                }
            };
            let t = m.stats.median_ms;
            let first = rows.first().map_or(t, |r| r.rust.stats.median_ms);
            rows.push(Row {
                kernel: kernel.id,
                step: kernel.step,
                title: kernel.title,
                source: kernel.source,
                step_speedup: rows.last().map(|prev| prev.rust.stats.median_ms / t),
                cumulative_speedup: first / t,
                of_theoretical: m.bandwidth / info.peak_bandwidth(),
                of_copy: m.bandwidth / copy,
                rust_over_cuda: cuda_m.as_ref().map(|c| t / c.stats.median_ms),
                cuda: cuda_m,
                cuda_note,
                rust: m,
            });
        }
        tables.push(Table { n, bytes, rows });
    }
    Ok(Report {
        peak_theoretical: info.peak_bandwidth(),
        copy_bandwidth: copy,
        device: info,
        dtype: DType::parse(T::NAME)?,
        op: Op::parse(O::NAME)?,
        block: config.block,
        runs: config.runs,
        cuda_note: cuda.err().map(str::to_string),
        tables,
    })
}

impl Report {
    /// The tables as text, one per size.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}, {} SMs, driver {}.{}: peak {:.0} GB/s theoretical (memory clock × bus width × 2), {:.0} GB/s device-to-device copy (read + write)\n",
            self.device.name,
            self.device.sm_count,
            self.device.driver_version / 1000,
            self.device.driver_version % 1000 / 10,
            self.peak_theoretical / 1e9,
            self.copy_bandwidth / 1e9
        );
        s += &format!(
            "{} {:?}, block {} threads, median of {} runs after {WARMUP} warm-up, every launch of the reduction timed with CUDA events, inputs rotated past the L2\n",
            self.dtype.name(),
            self.op,
            self.block,
            self.runs
        );
        if let Some(note) = &self.cuda_note {
            s += &format!("CUDA C++ column: n/a ({note})\n");
        }
        for t in &self.tables {
            s += &format!("\nn = {} ({:.1} MiB)\n", t.n, t.bytes as f64 / (1 << 20) as f64);
            s += &format!(
                "{:<12}{:>4} {:>10} {:>21} {:>8} {:>7} {:>8} {:>7} {:>7} {:>11} {:>9}\n",
                "kernel",
                "step",
                "median ms",
                "(min - max)",
                "GB/s",
                "step",
                "cumul.",
                "%theor",
                "%copy",
                "CUDA C++ ms",
                "Rust/C++"
            );
            for r in &t.rows {
                let st = &r.rust.stats;
                s += &format!(
                    "{:<12}{:>4} {:>10.4} {:>21} {:>8.1} {:>7} {:>7.2}x {:>6.1}% {:>6.1}% {:>11} {:>9}\n",
                    r.kernel,
                    r.step,
                    st.median_ms,
                    format!("({:.4} - {:.4})", st.min_ms, st.max_ms),
                    r.rust.bandwidth / 1e9,
                    r.step_speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                    r.cumulative_speedup,
                    100.0 * r.of_theoretical,
                    100.0 * r.of_copy,
                    r.cuda.as_ref().map_or("n/a".into(), |c| format!("{:.4}", c.stats.median_ms)),
                    r.rust_over_cuda.map_or("n/a".into(), |x| format!("{x:.2}")),
                );
            }
            let notes: Vec<String> = t
                .rows
                .iter()
                .filter(|r| r.cuda_note.is_some())
                .map(|r| format!("{}: {}", r.kernel, r.cuda_note.as_deref().unwrap_or_default()))
                .collect();
            if !notes.is_empty() {
                s += &format!("CUDA C++ n/a: {}\n", notes.join("; "));
            }
        }
        s
    }
}
