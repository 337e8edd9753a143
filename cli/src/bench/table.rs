//! What `reduce bench` measured: each kernel's [`Measurement`], the rows
//! and tables of Harris's layout ([`Report`]), the CUDA C++ column's cells,
//! and the report as text.

use reduction::device::DeviceInfo;
use serde::{Deserialize, Serialize};

use crate::timing::{Stats, WARMUP};

/// One kernel's check and timing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measurement {
    /// The kernel's registry id.
    pub kernel: String,
    /// Threads per block.
    pub block: u32,
    /// Elements reduced.
    pub n: usize,
    /// The GPU result, printed.
    pub got: String,
    /// The CPU reference result, printed.
    pub expected: String,
    /// Whether the check passed.
    pub ok: bool,
    /// Times of the whole reduction, in milliseconds.
    pub stats: Stats,
    /// Bytes read per second at the median time.
    pub bandwidth: f64,
}

/// One row of the report: a kernel in Rust, and the same kernel in CUDA C++.
///
/// ```no_run
/// # fn show(report: &reduce::bench::Report) {
/// for row in &report.tables[0].rows {
///     let cuda = row.cuda.as_ref().map(|c| format!("{:.3} ms", c.stats.median_ms));
///     println!("{}: Rust {:.3} ms, CUDA C++ {}", row.kernel, row.rust.stats.median_ms, cuda.unwrap_or("n/a".into()));
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The kernel's registry id ([`Kernel::id`](reduction::registry::Kernel::id)).
    pub kernel: String,
    /// The step number in the table ([`Kernel::step`](reduction::registry::Kernel::step)).
    pub step: u32,
    /// What the step does ([`Kernel::title`](reduction::registry::Kernel::title)).
    pub title: String,
    /// Where the kernel comes from ([`Kernel::source`](reduction::registry::Kernel::source)).
    pub source: String,
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
/// # fn show(report: &reduce::bench::Report) {
/// for table in &report.tables {
///     let best = table.rows.iter().map(|r| r.rust.bandwidth).fold(0.0, f64::max);
///     println!("n = {} ({} bytes): best {:.0} GB/s", table.n, table.bytes, best / 1e9);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    /// Elements of the input.
    pub n: usize,
    /// Size of the input in bytes (`n` × the element size).
    pub bytes: usize,
    /// One row per kernel, in the order of [`BenchConfig::kernels`](super::BenchConfig::kernels).
    pub rows: Vec<Row>,
}

/// The benchmark's whole output (`reduce bench --json`).
///
/// ```no_run
/// use reduction::{Reducer, Sum, registry::KERNELS};
/// use reduce::bench::{BenchConfig, run_bench};
/// let r = Reducer::new()?;
/// let config = BenchConfig { sizes: vec![1 << 24], kernels: KERNELS.iter().collect(), block: 128, runs: 20, seed: 1 };
/// let report = run_bench::<Sum, f32>(&r, &config, |_| {})?;
/// println!("{}", serde_json::to_string_pretty(&report).unwrap());
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The GPU measured.
    pub device: DeviceInfo,
    /// Memory clock × bus width × 2, bytes/s.
    pub peak_theoretical: f64,
    /// Device-to-device copy, bytes read + written per second.
    pub copy_bandwidth: f64,
    /// The commit of this repository the binary was built from
    /// (`-dirty` with uncommitted changes), or `unknown`.
    pub commit: String,
    /// The element type.
    pub dtype: String,
    /// The operator.
    pub op: String,
    /// Threads per block asked for ([`BenchConfig::block`](super::BenchConfig::block); a kernel whose
    /// minimum is larger runs at its minimum).
    pub block: u32,
    /// Timed runs per measurement (after [`WARMUP`] warm-up runs).
    pub runs: usize,
    /// Why the CUDA C++ column is empty, if it is.
    pub cuda_note: Option<String>,
    /// One table per input size, in the order of [`BenchConfig::sizes`](super::BenchConfig::sizes).
    pub tables: Vec<Table>,
}

/// One cell of the CUDA C++ column: the kernel at one size, measured, or
/// the one-line reason it could not be.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// Elements reduced.
    pub n: usize,
    /// The kernel's registry id.
    pub kernel: String,
    /// The measurement, or why there is none.
    pub outcome: std::result::Result<Measurement, String>,
}

impl Report {
    /// Fill the CUDA C++ column: each cell's measurement or its reason, or,
    /// for `Err`, one reason for the whole column (no NVRTC, `--no-cuda`).
    /// A twin whose result differs from the CPU's is not timed against the
    /// Rust kernel: its cell says so.
    pub fn add_cuda(&mut self, column: std::result::Result<Vec<Cell>, String>) {
        let cells = match column {
            Ok(cells) => cells,
            Err(why) => {
                self.cuda_note = Some(why);
                return;
            }
        };
        for table in &mut self.tables {
            for row in &mut table.rows {
                let cell = cells.iter().find(|c| c.n == table.n && c.kernel == row.kernel);
                let (m, note) = match cell.map(|c| &c.outcome) {
                    None => (None, Some("not measured".to_string())),
                    Some(Ok(m)) if m.ok => (Some(m.clone()), None),
                    Some(Ok(m)) => {
                        (None, Some(format!("CUDA C++ result {} differs from the CPU's {}", m.got, m.expected)))
                    }
                    Some(Err(why)) => (None, Some(why.clone())),
                };
                row.rust_over_cuda = m.as_ref().map(|c| row.rust.stats.median_ms / c.stats.median_ms);
                row.cuda = m;
                row.cuda_note = note;
            }
        }
    }

    /// Whether every Rust kernel's result matched the CPU's.
    pub fn rust_ok(&self) -> bool {
        self.tables.iter().all(|t| t.rows.iter().all(|r| r.rust.ok))
    }

    /// The tables as text, one per size.
    ///
    /// ```
    /// use reduce::bench::Report;
    /// let device = reduction::device::DeviceInfo {
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
    ///     peak_theoretical: 86.4e9,
    ///     copy_bandwidth: 70e9,
    ///     device,
    ///     commit: "abc1234".into(),
    ///     dtype: "i32".into(),
    ///     op: "sum".into(),
    ///     block: 128,
    ///     runs: 30,
    ///     cuda_note: None,
    ///     tables: vec![],
    /// };
    /// assert!(report.text().starts_with("commit abc1234\nG80, 16 SMs, driver 13.0: peak 86 GB/s theoretical"));
    /// ```
    pub fn text(&self) -> String {
        let mut s = format!(
            "commit {}\n{}, {} SMs, driver {}.{}: peak {:.0} GB/s theoretical (memory clock × bus width × 2), {:.0} GB/s device-to-device copy (read + write)\n",
            self.commit,
            self.device.name,
            self.device.sm_count,
            self.device.driver_version / 1000,
            self.device.driver_version % 1000 / 10,
            self.peak_theoretical / 1e9,
            self.copy_bandwidth / 1e9
        );
        s += &format!(
            "{} {}, block {} threads, median of {} runs after {WARMUP} warm-up, every launch of the reduction timed with CUDA events, inputs rotated past the L2\n",
            self.dtype, self.op, self.block, self.runs
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
                let name = if r.rust.ok { r.kernel.clone() } else { format!("{} MISMATCH", r.kernel) };
                s += &format!(
                    "{:<12}{:>4} {:>10.4} {:>21} {:>8.1} {:>7} {:>7.2}x {:>6.1}% {:>6.1}% {:>11} {:>9}\n",
                    name,
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
