//! Measuring kernels: inputs replicated past the L2 cache, a correctness
//! check against the CPU before timing, and CUDA-event timing of the whole
//! reduction (every launch, result left in device memory).
//!
//! ```
//! // Tolerances for float checks, from the depth of the launch plan:
//! let xs = [0.5f32, -0.25, 1.0];
//! assert_eq!(reduction::bench::tolerance(10, &xs), 11.0 * f32::EPSILON as f64 * 1.75);
//! // Measuring needs a GPU: see `measure` and `run_bench`.
//! ```

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
///
/// ```
/// assert!(reduction::bench::WARMUP >= 1); // untimed runs before every measurement
/// ```
pub const WARMUP: usize = 5;

/// An input on the host and enough device copies of it that cycling through
/// them reads from DRAM, not from the L2 cache.
///
/// ```no_run
/// use reduction::{Op, Reducer, bench::Prepared, data::Pattern};
/// let r = Reducer::new()?;
/// let input = Prepared::<f32>::new(&r, Pattern::Random, 1 << 20, 7)?;
/// assert_eq!(input.host.len(), 1 << 20);
/// assert!(!input.copies.is_empty());
/// let (sum, abs_sum) = input.reference(Op::Sum);
/// println!("sum {sum}, Σ|x| {abs_sum}");
/// # Ok::<(), reduction::Error>(())
/// ```
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
    ///
    /// ```no_run
    /// use reduction::{Op, Reducer, bench::Prepared};
    /// let r = Reducer::new()?;
    /// let host = vec![1i32, 2, 3];
    /// let copy = r.gpu().stream().clone_htod(&host).unwrap();
    /// let input = Prepared::from_parts(host, copy);
    /// assert_eq!(input.reference(Op::Sum), (6, 0.0));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn from_parts(host: Vec<T>, copy: CudaSlice<T>) -> Self {
        Prepared { host, copies: vec![copy], references: Mutex::default() }
    }

    /// The CPU reference for `op` and Σ|x|, computed once per input.
    ///
    /// ```no_run
    /// use reduction::{Op, Reducer, bench::Prepared, data::Pattern};
    /// let r = Reducer::new()?;
    /// let input = Prepared::<u32>::single(&r, Pattern::Ones, 1000, 0)?;
    /// assert_eq!(input.reference(Op::Sum), (1000, 0.0)); // Σ|x| is 0 for integers
    /// assert_eq!(input.reference(Op::Max).0, 1);
    /// # Ok::<(), reduction::Error>(())
    /// ```
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
    ///
    /// ```no_run
    /// use reduction::{Reducer, bench::Prepared, data::Pattern};
    /// let r = Reducer::new()?;
    /// let input = Prepared::<f64>::new(&r, Pattern::Random, 1 << 24, 1)?;
    /// println!("{} copies of {} MiB", input.copies.len(), (8 << 24) >> 20);
    /// # Ok::<(), reduction::Error>(())
    /// ```
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
    ///
    /// ```no_run
    /// use reduction::{Reducer, bench::Prepared, data::Pattern};
    /// let r = Reducer::new()?;
    /// let input = Prepared::<i64>::single(&r, Pattern::Large, 1000, 3)?;
    /// assert_eq!(input.copies.len(), 1);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn single(reducer: &Reducer, pattern: Pattern, n: usize, seed: u64) -> Result<Self> {
        let host: Vec<T> = generate(pattern, n, seed);
        let gpu = reducer.gpu();
        let mut first = gpu.alloc::<T>(n, "the input")?;
        gpu.stream().memcpy_htod(&host, &mut first).map_err(driver("cuMemcpyHtoD"))?;
        Ok(Prepared::from_parts(host, first))
    }
}

/// One kernel's check and timing.
///
/// ```no_run
/// use reduction::{Finish, Kernel, Reducer, Sum, bench::{Prepared, measure}, data::Pattern};
/// let r = Reducer::new()?;
/// let input = Prepared::<f32>::new(&r, Pattern::Random, 1 << 24, 1)?;
/// let m = measure::<Sum, f32>(&r, Kernel::find("reduce7")?, 256, Finish::Gpu, &input, 20)?;
/// assert!(m.ok, "GPU {}, CPU {}", m.got, m.expected);
/// println!("{}: {:.3} ms, {:.0} GB/s", m.kernel, m.stats.median_ms, m.bandwidth / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The kernel's registry id ([`Kernel::id`]), e.g. `reduce4`.
    pub kernel: &'static str,
    /// Threads per block.
    pub block: u32,
    /// The operator.
    pub op: Op,
    /// Elements reduced.
    pub n: usize,
    /// The GPU result, printed.
    pub got: String,
    /// The CPU reference result, printed.
    pub expected: String,
    /// Whether `got` matched `expected` (exactly for integers and min/max,
    /// within [`tolerance`] for float sums).
    pub ok: bool,
    /// Times of the whole reduction, in milliseconds (all zeros from
    /// [`verify`], which does not time).
    pub stats: Stats,
    /// Bytes read per second at the median time.
    pub bandwidth: f64,
}

/// The float tolerance for a result: `(depth + 1) · ε · Σ|x|` (see
/// [`depth`]); zero for integers.
///
/// ```
/// use reduction::bench::tolerance;
/// // depth 2, Σ|x| = 3: (2 + 1) · ε · 3
/// assert_eq!(tolerance::<f32>(2, &[1.0, -2.0]), 3.0 * f32::EPSILON as f64 * 3.0);
/// assert_eq!(tolerance::<i32>(2, &[1, -2]), 0.0);
/// ```
pub fn tolerance<T: Reference>(depth: usize, xs: &[T]) -> f64 {
    tolerance_for::<T>(depth, T::abs_sum(xs))
}

/// [`tolerance`] from `Σ|x|`.
fn tolerance_for<T: Reference>(depth: usize, abs_sum: f64) -> f64 {
    (depth + 1) as f64 * T::EPSILON * abs_sum
}

/// The longest chain of `combine`s in reducing `n` elements with `kernel`
/// at `block` threads on this device ([`depth`] of its launch plan), plus the
/// serial fold of the first level's partials when they finish on the CPU;
/// 0 for no elements. The `depth` in [`tolerance`].
///
/// ```no_run
/// use reduction::{Finish, Kernel, Reducer, Sum, bench::chain_depth};
/// let r = Reducer::new()?;
/// let k = Kernel::find("reduce3")?;
/// assert_eq!(chain_depth::<Sum, f32>(&r, k, 128, Finish::Gpu, 1 << 20)?, 3 * 7);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn chain_depth<O: ReduceOp<T>, T: Element>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    n: usize,
) -> Result<usize> {
    if n == 0 {
        return Ok(0);
    }
    let levels = reducer.plan::<O, T>(kernel, block, n)?;
    Ok(match finish {
        Finish::Gpu => depth(kernel, &levels, block),
        Finish::Cpu => depth(kernel, &levels[..1], block) + levels[0].outputs,
    })
}

/// Check `kernel` once against the CPU reference (the first copy of the
/// input, finishing as `finish` says); no timing (`stats` is all zeros).
///
/// ```no_run
/// use reduction::{Finish, Kernel, Max, Reducer, bench::{Prepared, verify}, data::Pattern};
/// let r = Reducer::new()?;
/// let input = Prepared::<f64>::single(&r, Pattern::Random, 1 << 20, 1)?;
/// let m = verify::<Max, f64>(&r, Kernel::find("reduce4")?, 256, Finish::Cpu, &input)?;
/// assert!(m.ok, "GPU {}, CPU {}", m.got, m.expected);
/// # Ok::<(), reduction::Error>(())
/// ```
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
    let chain = chain_depth::<O, T>(reducer, kernel, block, finish, n)?;
    let ok = T::matches(op, got, expected, tolerance_for::<T>(chain, abs_sum));
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
///
/// ```no_run
/// use reduction::{Finish, Kernel, Reducer, Sum, bench::{Prepared, measure}, data::Pattern};
/// let r = Reducer::new()?;
/// let input = Prepared::<i32>::new(&r, Pattern::Random, 1 << 24, 1)?;
/// let m = measure::<Sum, i32>(&r, Kernel::find("single_pass")?, 1024, Finish::Gpu, &input, 30)?;
/// println!("median {:.3} ms over {} runs, {:.0} GB/s", m.stats.median_ms, m.stats.runs, m.bandwidth / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
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
    ///
    /// ```
    /// use reduction::{Op, Stats, bench::Measurement};
    /// let m = Measurement {
    ///     kernel: "reduce1",
    ///     block: 128,
    ///     op: Op::Sum,
    ///     n: 3,
    ///     got: "5".into(),
    ///     expected: "6".into(),
    ///     ok: false,
    ///     stats: Stats::of(vec![0.0]),
    ///     bandwidth: 0.0,
    /// };
    /// assert_eq!(m.mismatch("i32").unwrap().to_string(), "reduce1 block 128 sum i32 n=3: GPU 5, CPU 6");
    /// assert!(Measurement { ok: true, ..m }.mismatch("i32").is_none());
    /// ```
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
///
/// ```no_run
/// let r = reduction::Reducer::new()?;
/// let copy = reduction::bench::copy_bandwidth(r.gpu(), 1 << 30, 20)?;
/// println!("{:.0} GB/s copy, {:.0} GB/s theoretical", copy / 1e9, r.gpu().info().peak_bandwidth() / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn copy_bandwidth(gpu: &Gpu, bytes: usize, runs: usize) -> Result<f64> {
    let src = gpu.alloc::<u8>(bytes, "the copy benchmark's source")?;
    let mut dst = gpu.alloc::<u8>(bytes, "the copy benchmark's destination")?;
    let stats =
        time_runs(gpu, WARMUP, runs, |_| gpu.stream().memcpy_dtod(&src, &mut dst).map_err(driver("cuMemcpyDtoD")))?;
    Ok(2.0 * bytes as f64 / (stats.median_ms * 1e-3))
}

/// One row of the report: a kernel in Rust, and the same kernel in CUDA C++.
///
/// ```no_run
/// # fn show(report: &reduction::bench::Report) {
/// for row in &report.tables[0].rows {
///     let cuda = row.cuda.as_ref().map(|c| format!("{:.3} ms", c.stats.median_ms));
///     println!("{}: Rust {:.3} ms, CUDA C++ {}", row.kernel, row.rust.stats.median_ms, cuda.unwrap_or("n/a".into()));
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The kernel's registry id ([`Kernel::id`]).
    pub kernel: &'static str,
    /// The step number in the table ([`Kernel::step`]).
    pub step: u32,
    /// What the step does ([`Kernel::title`]).
    pub title: &'static str,
    /// Where the kernel comes from ([`Kernel::source`]).
    pub source: &'static str,
    /// The Rust kernel's check and timing.
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
///
/// ```no_run
/// # fn show(report: &reduction::bench::Report) {
/// for table in &report.tables {
///     let best = table.rows.iter().map(|r| r.rust.bandwidth).fold(0.0, f64::max);
///     println!("n = {} ({} bytes): best {:.0} GB/s", table.n, table.bytes, best / 1e9);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// Elements of the input.
    pub n: usize,
    /// Size of the input in bytes (`n` × the element size).
    pub bytes: usize,
    /// One row per kernel, in the order of [`BenchConfig::kernels`].
    pub rows: Vec<Row>,
}

/// The benchmark's whole output (`reduce bench --json`).
///
/// ```no_run
/// use reduction::{KERNELS, Reducer, Sum, bench::{BenchConfig, run_bench}};
/// let r = Reducer::new()?;
/// let config = BenchConfig { sizes: vec![1 << 24], kernels: KERNELS.iter().collect(), block: 128, runs: 20, seed: 1 };
/// let report = run_bench::<Sum, f32>(&r, Err("not measured"), &config, |_| {})?;
/// println!("{}", serde_json::to_string_pretty(&report).unwrap());
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The GPU measured.
    pub device: DeviceInfo,
    /// Memory clock × bus width × 2, bytes/s.
    pub peak_theoretical: f64,
    /// Device-to-device copy, bytes read + written per second.
    pub copy_bandwidth: f64,
    /// The element type.
    pub dtype: DType,
    /// The operator.
    pub op: Op,
    /// Threads per block asked for ([`BenchConfig::block`]; a kernel whose
    /// minimum is larger runs at its minimum).
    pub block: u32,
    /// Timed runs per measurement (after [`WARMUP`] warm-up runs).
    pub runs: usize,
    /// Why the CUDA C++ column is empty, if it is.
    pub cuda_note: Option<String>,
    /// One table per input size, in the order of [`BenchConfig::sizes`].
    pub tables: Vec<Table>,
}

/// What `reduce bench` measures.
///
/// ```
/// use reduction::{Kernel, bench::BenchConfig};
/// let config = BenchConfig {
///     sizes: vec![1 << 20, 1 << 24],
///     kernels: vec![Kernel::find("reduce1")?, Kernel::find("reduce7")?],
///     block: 128,
///     runs: 30,
///     seed: 1,
/// };
/// assert_eq!(config.kernels[1].step, 7);
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct BenchConfig {
    /// Input sizes in elements, one table each.
    pub sizes: Vec<usize>,
    /// The kernels to measure, one row each, in this order.
    pub kernels: Vec<&'static Kernel>,
    /// Threads per block for every kernel (raised to a kernel's minimum):
    /// Harris measured everything at 128.
    pub block: u32,
    /// Timed runs per measurement (after [`WARMUP`] warm-up runs).
    pub runs: usize,
    /// Seed of the random input ([`Pattern::Random`]).
    pub seed: u64,
}

/// Measure every kernel of `config` at every size, in Rust (`rust`) and, where
/// `cuda` holds the NVRTC-compiled reference, in CUDA C++ (else the reason it
/// does not). `tick` is called before each measurement (for a progress bar).
///
/// ```no_run
/// use reduction::{KERNELS, Reducer, Sum, bench::{BenchConfig, run_bench}, nvrtc::compile_reference};
/// let rust = Reducer::new()?;
/// let cuda = compile_reference(rust.gpu().info())
///     .and_then(|ptx| Reducer::with_ptx(0, ptx).map_err(|e| e.to_string()));
/// let config = BenchConfig { sizes: vec![1 << 24], kernels: KERNELS.iter().collect(), block: 128, runs: 20, seed: 1 };
/// let report =
///     run_bench::<Sum, i32>(&rust, cuda.as_ref().map_err(String::as_str), &config, |what| eprintln!("{what}"))?;
/// print!("{}", report.text());
/// # Ok::<(), reduction::Error>(())
/// ```
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
    ///
    /// ```
    /// use reduction::{DType, DeviceInfo, Op, bench::Report};
    /// let device = DeviceInfo {
    ///     name: "G80".into(),
    ///     ordinal: 0,
    ///     compute_capability: (1, 0),
    ///     sm_count: 16,
    ///     l2_bytes: 0,
    ///     total_mem: 768 << 20,
    ///     mem_clock_khz: 900_000,
    ///     bus_width_bits: 384,
    ///     driver_version: 13000,
    /// };
    /// let report = Report {
    ///     peak_theoretical: device.peak_bandwidth(),
    ///     copy_bandwidth: 70e9,
    ///     device,
    ///     dtype: DType::I32,
    ///     op: Op::Sum,
    ///     block: 128,
    ///     runs: 30,
    ///     cuda_note: None,
    ///     tables: vec![],
    /// };
    /// assert!(report.text().starts_with("G80, 16 SMs, driver 13.0: peak 86 GB/s theoretical"));
    /// ```
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
