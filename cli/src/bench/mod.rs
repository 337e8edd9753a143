//! Measuring kernels: inputs replicated past the L2 cache, a check against
//! the CPU before timing (`testkit`, the library's test kit), and
//! CUDA-event timing of the whole reduction (every launch, result left in
//! device memory).

use reduction::cudarc::driver::CudaSlice;
use reduction::{Element, Error, Finish, Gpu, Options, Reducer, Result, op::ReduceOp, registry::Kernel};
use testkit::data::{Pattern, Sample};
use testkit::reference::Reference;
use testkit::{CheckInput, Checked, verify};

use crate::timing::{Timing, time_runs, time_runs_with};

mod table;

pub use crate::timing::WARMUP;
pub use table::{Cell, Measurement, Report, Row, Table};

/// The most copies of an input that are rotated through: beyond this, tiny
/// inputs would need millions of buffers to fill the L2, and launch
/// overhead, not memory, is what they measure anyway.
pub const MAX_COPIES: usize = 256;

/// An input checked once on the library's [`CheckInput`], and enough device
/// copies of it that cycling through them reads from DRAM, not from the L2
/// cache: together at least four times the L2, at most [`MAX_COPIES`] and at
/// most half the free device memory.
pub struct Rotated<T> {
    /// The input, its first device copy and its CPU references.
    pub input: CheckInput<T>,
    /// More device copies (the first is `input.device`).
    pub copies: Vec<CudaSlice<T>>,
}

impl<T: Element + Reference + Sample> Rotated<T> {
    /// `n` elements of `pattern` (seeded), uploaded and copied.
    pub fn new(reducer: &Reducer, pattern: Pattern, n: usize, seed: u64) -> Result<Self> {
        let input = CheckInput::<T>::new(reducer, pattern, n, seed)?;
        let gpu = reducer.gpu();
        let bytes = (n * size_of::<T>()).max(1);
        let (free, _) = gpu.mem_info()?;
        let wanted = copies_wanted(gpu.info().l2_bytes, bytes, free);
        let mut copies = Vec::new();
        while copies.len() + 1 < wanted {
            let mut copy = gpu.alloc::<T>(n, "a copy of the benchmark input")?;
            gpu.stream().memcpy_dtod(&input.device, &mut copy).map_err(Error::from_driver("cuMemcpyDtoD"))?;
            copies.push(copy);
        }
        Ok(Rotated { input, copies })
    }

    /// Copy `i` of the input, cycling through all of them.
    pub fn copy(&self, i: usize) -> &CudaSlice<T> {
        match i % (self.copies.len() + 1) {
            0 => &self.input.device,
            k => &self.copies[k - 1],
        }
    }
}

/// How many copies of a `bytes`-sized input to rotate through: enough to
/// cover four times the L2, at most [`MAX_COPIES`], at most half of `free`.
///
/// ```
/// # use reduce::bench::{copies_wanted, MAX_COPIES};
/// assert_eq!(copies_wanted(60 << 20, 1 << 30, 100 << 30), 1); // 1 GiB: one is enough
/// assert_eq!(copies_wanted(60 << 20, 16 << 20, 100 << 30), 15);
/// assert_eq!(copies_wanted(60 << 20, 4, 100 << 30), MAX_COPIES); // one element: capped
/// assert_eq!(copies_wanted(60 << 20, 1 << 30, 1 << 30), 1); // no room: one
/// ```
pub fn copies_wanted(l2_bytes: usize, bytes: usize, free: usize) -> usize {
    let bytes = bytes.max(1);
    (4 * l2_bytes).div_ceil(bytes).min(MAX_COPIES).min(free / 2 / bytes).max(1)
}

/// Check `kernel` (the library's [`verify`]), then time the whole reduction
/// `runs` times (after [`WARMUP`] runs), cycling through the copies.
pub fn measure<O: ReduceOp<T>, T: Element + Reference + Sample>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &Rotated<T>,
    runs: usize,
) -> Result<(Checked, Measurement)> {
    measure_with::<O, T>(reducer, kernel, block, finish, input, runs, Timing::HostLoop)
}

/// [`measure`] with the runs queued as `timing` says.
pub fn measure_with<O: ReduceOp<T>, T: Element + Reference + Sample>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &Rotated<T>,
    runs: usize,
    timing: Timing,
) -> Result<(Checked, Measurement)> {
    let checked = verify::<O, T>(reducer, kernel, block, finish, &input.input)?;
    let gpu = reducer.gpu();
    let mut out = gpu.alloc::<T>(1, "the result")?;
    let timed = Options { kernel: Some(kernel), block: Some(block), finish: Finish::Gpu, ..Options::default() };
    let n = checked.n;
    // planned before the first event: the events enclose the launches only
    let prepared = reducer.prepare::<O, T>(n, &timed)?;
    let stats = time_runs_with(gpu, timing, WARMUP, runs, |i| {
        reducer.enqueue(&prepared, &[&input.copy(i).slice(..n)], &mut out.as_view_mut())
    })?;
    let m = Measurement {
        kernel: kernel.id.to_string(),
        block,
        n,
        got: checked.got.clone(),
        expected: checked.expected.clone(),
        ok: checked.ok,
        bandwidth: stats.bandwidth(n * size_of::<T>()),
        stats,
    };
    Ok((checked, m))
}

/// Device-to-device copy bandwidth (bytes read + bytes written per second)
/// of a `bytes`-sized copy: the practical ceiling a reduction is measured
/// against, next to the theoretical one.
///
/// ```no_run
/// let r = reduction::Reducer::new()?;
/// let copy = reduce::bench::copy_bandwidth(r.gpu(), 1 << 30, 20)?;
/// println!("{:.0} GB/s copy, {:.0} GB/s theoretical", copy / 1e9, r.gpu().info().peak_bandwidth() / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn copy_bandwidth(gpu: &Gpu, bytes: usize, runs: usize) -> Result<f64> {
    let src = gpu.alloc::<u8>(bytes, "the copy benchmark's source")?;
    let mut dst = gpu.alloc::<u8>(bytes, "the copy benchmark's destination")?;
    let stats = time_runs(gpu, WARMUP, runs, |_| {
        gpu.stream().memcpy_dtod(&src, &mut dst).map_err(Error::from_driver("cuMemcpyDtoD"))
    })?;
    Ok(2.0 * bytes as f64 / (stats.median_ms * 1e-3))
}

/// What `reduce bench` measures.
///
/// ```
/// use reduction::registry::Kernel;
/// use reduce::bench::BenchConfig;
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

/// Measure every kernel of `config` at every size in Rust, each checked
/// against the CPU first. A result that differs is kept in its row
/// (`rust.ok == false`, shown as `MISMATCH`) and the rest still run. The
/// CUDA C++ column comes apart ([`Report::add_cuda`]), from its own process
/// (`crate::twins`), so that a faulting twin cannot end the Rust kernels'
/// context. `tick` is called before each measurement (for a progress bar).
///
/// ```no_run
/// use reduction::{Reducer, Sum, registry::KERNELS};
/// use reduce::bench::{BenchConfig, run_bench};
/// let rust = Reducer::new()?;
/// let config = BenchConfig { sizes: vec![1 << 24], kernels: KERNELS.iter().collect(), block: 128, runs: 20, seed: 1 };
/// let mut report = run_bench::<Sum, i32>(&rust, &config, |what| eprintln!("{what}"))?;
/// report.add_cuda(Err("not measured".into()));
/// print!("{}", report.text());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn run_bench<O: ReduceOp<T>, T: Element + Reference + Sample>(
    rust: &Reducer,
    config: &BenchConfig,
    mut tick: impl FnMut(&str),
) -> Result<Report> {
    let info = rust.gpu().info().clone();
    let copy = copy_bandwidth(rust.gpu(), 1 << 30, 20)?;
    let mut tables = Vec::new();
    for &n in &config.sizes {
        let input = Rotated::<T>::new(rust, Pattern::Random, n, config.seed)?;
        let bytes = n * size_of::<T>();
        let mut rows: Vec<Row> = Vec::new();
        for &kernel in &config.kernels {
            let block = config.block.max(kernel.min_block);
            tick(&format!("n={n} {} (Rust)", kernel.id));
            let (_, m) = measure::<O, T>(rust, kernel, block, Finish::Gpu, &input, config.runs)?;
            let t = m.stats.median_ms;
            let first = rows.first().map_or(t, |r| r.rust.stats.median_ms);
            rows.push(Row {
                kernel: kernel.id.to_string(),
                step: kernel.step,
                title: kernel.title.to_string(),
                source: kernel.source.to_string(),
                step_speedup: rows.last().map(|prev| prev.rust.stats.median_ms / t),
                cumulative_speedup: first / t,
                of_theoretical: m.bandwidth / info.peak_bandwidth(),
                of_copy: m.bandwidth / copy,
                rust_over_cuda: None,
                cuda: None,
                cuda_note: None,
                rust: m,
            });
        }
        tables.push(Table { n, bytes, rows });
    }
    Ok(Report {
        peak_theoretical: info.peak_bandwidth(),
        copy_bandwidth: copy,
        device: info,
        dtype: T::NAME.to_string(),
        op: O::NAME.to_string(),
        commit: env!("REDUCE_COMMIT").to_string(),
        block: config.block,
        runs: config.runs,
        cuda_note: None,
        tables,
    })
}

/// The cells of `config` in the order [`measure_cuda`] measures them: each
/// size, and at each size every kernel.
///
/// ```
/// use reduction::registry::Kernel;
/// use reduce::bench::{BenchConfig, cells};
/// let kernels = vec![Kernel::find("reduce1")?, Kernel::find("single_pass")?];
/// let config = BenchConfig { sizes: vec![10, 20], kernels, block: 128, runs: 1, seed: 1 };
/// let c: Vec<_> = cells(&config).map(|(n, k)| (n, k.id)).collect();
/// assert_eq!(c, [(10, "reduce1"), (10, "single_pass"), (20, "reduce1"), (20, "single_pass")]);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn cells(config: &BenchConfig) -> impl Iterator<Item = (usize, &'static Kernel)> + '_ {
    config.sizes.iter().flat_map(|&n| config.kernels.iter().map(move |&k| (n, k)))
}

/// Measure the cells of `config` from the `from`-th on ([`cells`]' order)
/// with `cuda`'s kernels (the CUDA C++ twins), on the same seeded inputs as
/// [`run_bench`], handing each to `emit` as soon as it is done. A kernel
/// that is missing or whose parameters differ from its launch's is a note
/// and the next cell runs; any other error may have ended the context (an
/// illegal address is sticky), so it is the last cell this call measures:
/// the caller starts a fresh process for the rest.
pub fn measure_cuda<O: ReduceOp<T>, T: Element + Reference + Sample>(
    cuda: &Reducer,
    config: &BenchConfig,
    from: usize,
    mut emit: impl FnMut(&Cell),
) -> Result<()> {
    // a fresh process finds the GPU idle at low clocks (the NVRTC compile
    // took a second or two): keep it busy first, as the Rust side's copy
    // measurement does before its first kernel, so the first cells are not
    // timed while the clocks ramp up
    copy_bandwidth(cuda.gpu(), 1 << 30, 400)?;
    let mut input: Option<Rotated<T>> = None;
    for (n, kernel) in cells(config).skip(from) {
        let rotated = match input.take() {
            Some(r) if r.input.host.len() == n => input.insert(r),
            previous => {
                drop(previous); // the previous size's copies are freed first
                input.insert(Rotated::<T>::new(cuda, Pattern::Random, n, config.seed)?)
            }
        };
        let block = config.block.max(kernel.min_block);
        let result = measure::<O, T>(cuda, kernel, block, Finish::Gpu, rotated, config.runs);
        let (outcome, go_on) = match result {
            Ok((_, m)) => (Ok(m), true),
            Err(Error::MissingEntry { .. }) => (Err("no CUDA C++ version of this kernel, op and type".into()), true),
            Err(e @ (Error::Signature { .. } | Error::Unsupported { .. })) => (Err(e.to_string()), true),
            Err(e) => (Err(e.to_string()), false),
        };
        emit(&Cell { n, kernel: kernel.id.to_string(), outcome });
        if !go_on {
            return Ok(());
        }
    }
    Ok(())
}
