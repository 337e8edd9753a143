//! The command line as clap reads it: each subcommand and option with its
//! help text, and the parsers of sizes and timings. Syntax only: what the
//! values mean together is checked in `validate`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use reduce::ops_bench::ResultTo;
use reduce::timing::Timing;
use reduction::registry::DEFAULT_BLOCK;

#[derive(Parser)]
#[command(
    name = "reduce",
    version = concat!(env!("CARGO_PKG_VERSION"), ", commit ", env!("REDUCE_COMMIT")),
    about = "Parallel reductions written in Rust, run on your GPU",
    arg_required_else_help = true,
    after_help = "Exit status: 0 done, 1 a failure at run time (no driver, out of memory, ...), \
                  2 a bad argument (nothing was run), 3 a result differs from the CPU reference."
)]
pub(crate) struct Cli {
    /// CUDA device ordinal.
    #[arg(long, global = true, default_value_t = 0)]
    pub(crate) device: usize,
    /// Load the kernels from this PTX file instead of the embedded one.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) ptx: Option<String>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List the kernels of the registry.
    List,
    /// Show the GPU.
    Info,
    /// Reduce random data with each kernel: GPU result, CPU result, OK or
    /// MISMATCH, median time of the whole reduction and bandwidth.
    Run {
        /// A kernel id from `reduce list`, `all`, or `default` (what the
        /// library picks: single_pass at the block size tuned for `n`).
        #[arg(long, default_value = "all")]
        kernel: String,
        /// Elements: 4194304, 4M, 2^22.
        #[arg(long, default_value = "2^22", value_parser = parse_count)]
        n: usize,
        /// Threads per block (a power of two, 32..=1024); default 128, Harris's.
        #[arg(long)]
        block: Option<u32>,
        /// Element type: i32, u32, i64, u64, f32, f64, f16, bf16 (default
        /// i32; f32 with --shape and --segments).
        #[arg(long = "type")]
        ty: Option<String>,
        /// Operation: sum, min, max (every kernel), or any other of
        /// `reduce ops --op` (the default kernel).
        #[arg(long, default_value = "sum")]
        op: String,
        /// Where the partials are combined: gpu (more launches) or cpu.
        #[arg(long, default_value = "gpu")]
        finish: String,
        /// run_to_run (the default kernel) or gpu_to_gpu (the same bits on
        /// any GPU: f32/f64 sum, dot, sum_squares, norm, mean, moments,
        /// logsumexp).
        #[arg(long, default_value = "run_to_run")]
        determinism: String,
        /// The accurate f32/f64 sum (f32 correctly rounded; docs/src/guide/determinism.md).
        #[arg(long)]
        accurate: bool,
        /// Timed runs (after warm-up).
        #[arg(long, default_value_t = 30, value_parser = parse_runs)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Split the data over GPUs, `all` or the first N (default kernel,
        /// NCCL between GPUs): per-GPU and total bandwidth, and the same n
        /// on GPU 0 alone.
        #[arg(long, value_name = "all|N")]
        gpus: Option<String>,
        /// Reduce a ROWSxCOLS f32 matrix (of the first 2^28 elements)
        /// along --axis instead: one sum per row (1) or column (0).
        #[arg(long, value_name = "ROWSxCOLS")]
        shape: Option<String>,
        /// The axis of --shape: 1 (a sum per row) or 0 (per column).
        #[arg(long, default_value_t = 1)]
        axis: usize,
        /// Sum CSR segments of up to 2^28 f32 elements instead, one of the
        /// cases of `reduce shapes`: `loguniform` (lengths 1 to 10^6),
        /// `pareto1.5` (exponent 1.5, capped at 10^6), `uniform32` (2^24
        /// segments, 0 to 31 long), `uniform512` (2^20, 0 to 511), `one`
        /// (one segment of 2^28) or `zipf2` (Zipf's law, exponent 2).
        #[arg(long, value_name = "CASE")]
        segments: Option<String>,
        /// KiB of input per tile for --shape (axis 1) and --segments: 16,
        /// 32, 64, 128 or 256 (default: chosen by shape).
        #[arg(long, value_name = "KIB")]
        tile: Option<u32>,
        /// With --segments: the staged kernel (a round of short segments
        /// in shared memory, a lane each), whatever the lengths.
        #[arg(long)]
        staged: bool,
    },
    /// Print a folder holding `libnccl.so`, linked to the NCCL found on this
    /// machine (PyTorch's `libnccl.so.2`), for `LD_LIBRARY_PATH`.
    Nccl,
    /// Check kernels against the CPU (no timing): every kernel, each size,
    /// type and operator given, at each block size the kernel supports or the
    /// one given; with `--kernel all`, also reduction by key and each shaped
    /// kernel (rows, columns, segments) on a small case (`--kernel shaped`:
    /// those alone). The driver program of `cargo xtask sanitize`.
    Check {
        /// A kernel id from `reduce list`, `all` (with reduction by key and the
        /// shaped kernels), or `shaped` (the shaped kernels alone).
        #[arg(long, default_value = "all")]
        kernel: String,
        /// Sizes, comma-separated.
        #[arg(long, value_delimiter = ',', value_parser = parse_count, default_value = "1000,2^20+7")]
        n: Vec<usize>,
        /// Element types, comma-separated.
        #[arg(long = "type", value_delimiter = ',', default_value = "i32")]
        ty: Vec<String>,
        /// Operators, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "sum")]
        op: Vec<String>,
        /// One block size instead of every one the kernel supports.
        #[arg(long)]
        block: Option<u32>,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Time rows, columns and segments: f32 sums (or other operations and
    /// types) of the 1 GiB matrices 16384x16384, 1048576x256, 256x1048576,
    /// 16777216x16, 4096x65536 along both axes and of 2^28 elements in
    /// segments of six length laws (the cases of `run --segments`), each
    /// checked against the CPU first; --sweep adds the strategy sweeps
    /// behind the automatic choice.
    Shapes {
        /// Timed runs per case, after 5 warm-up runs.
        #[arg(long, default_value_t = 50, value_parser = parse_runs)]
        runs: usize,
        /// Also time every lanes-per-row strategy on rows of 16 to 65536
        /// and column chunks on the matrices.
        #[arg(long)]
        sweep: bool,
        /// What each row, column or segment is reduced to, comma-separated,
        /// each in turn: any operation of one input (`sum`, `argmax`,
        /// `aminmax`, `nanmean`, ...; `moments` is its mean and `M2`: `var`,
        /// `std`, `var_mean` and `std_mean` name the same pass).
        #[arg(long, value_delimiter = ',', default_value = "sum")]
        op: Vec<String>,
        /// The element type (the same shapes, 2^28 elements each): f32, f64,
        /// f16, bf16, or an integer type where every operation given has it.
        #[arg(long = "type", value_name = "TYPE", default_value = "f32")]
        ty: String,
        /// The exponent of `power_sum`, Σ |x|^p (default 2): finite and not 0.
        #[arg(long, allow_negative_numbers = true)]
        p: Option<f64>,
        /// run_to_run (the shaped kernels) or gpu_to_gpu (the same bits on
        /// any GPU: their portable forms, `docs/src/guide/determinism.md`).
        #[arg(long, default_value = "run_to_run")]
        determinism: String,
        /// Only the cases whose name holds one of these, comma-separated
        /// (`1048576x256`, `axis 0`, `segments`, `zipf2`): the default, all.
        #[arg(long, value_name = "TEXT")]
        case: Option<String>,
        /// Also write the rows as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Time the library's operations on the default kernel (every input
    /// byte read counts, both vectors of a dot product), each checked
    /// against the CPU first. Pairs a type does not have are left out.
    Ops {
        /// Sizes, comma-separated.
        #[arg(long, value_delimiter = ',', value_parser = parse_count, default_value = "2^22,2^28")]
        n: Vec<usize>,
        /// Operations, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "sum,argmax,dot,norm")]
        op: Vec<String>,
        /// Element types, comma-separated.
        #[arg(long = "type", value_delimiter = ',', default_value = "f32,bf16")]
        ty: Vec<String>,
        /// The exponent of `power_sum`, Σ |x|^p (the p-norm's sum; default
        /// 2): finite and not 0.
        #[arg(long, allow_negative_numbers = true)]
        p: Option<f64>,
        /// Threads per block (default: the library's choice for each size).
        #[arg(long)]
        block: Option<u32>,
        /// At most this many blocks (the default: the library's choice).
        #[arg(long)]
        max_grid: Option<u32>,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 100, value_parser = parse_runs)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// How the timed runs are queued, comma-separated for both in one
        /// sitting: host-loop (each run queued as the GPU runs; short runs
        /// include the host's submission) or queued (batches behind a hold
        /// kernel, then back to back: the GPU's work alone).
        #[arg(long, value_delimiter = ',', value_parser = parse_timing, default_value = "host-loop")]
        timing: Vec<Timing>,
        /// Where the runs leave their result, comma-separated for both in
        /// one sitting: host (mapped host memory and a flag, what a
        /// reduction to the host waits for) or device (a device buffer, as
        /// torch and CuPy leave theirs).
        #[arg(long, value_delimiter = ',', default_value = "host")]
        result: Vec<ResultTo>,
        /// Also write the rows as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// The default, reproducible (gpu_to_gpu) and accurate float sums side
    /// by side, in one sitting: GB/s and the ratio to the default sum, each
    /// checked against the CPU first (docs/src/guide/determinism.md).
    Modes {
        /// Elements.
        #[arg(long, default_value = "2^28", value_parser = parse_count)]
        n: usize,
        /// Element types, comma-separated (f32, f64).
        #[arg(long = "type", value_delimiter = ',', default_value = "f32,f64")]
        ty: Vec<String>,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 100, value_parser = parse_runs)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the rows as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Sum values by key ("Voting and Shuffling to Optimize Atomic Operations") (one atomic per element vs warp-aggregated
    /// atomics vs shared-memory hashing), f32 and f64, four key
    /// distributions; elements per second and speedups.
    ByKey {
        /// Elements.
        #[arg(long, default_value = "10000000", value_parser = parse_count)]
        n: usize,
        /// Distinct keys (the output array's length).
        #[arg(long, default_value_t = 1_000_000)]
        keys: u32,
        /// Timed runs per measurement.
        #[arg(long, default_value_t = 30, value_parser = parse_runs)]
        runs: usize,
    },
    /// Nsight Compute's counters for each teaching step (branch efficiency,
    /// bank conflicts, instructions per element, stalls, DRAM, occupancy):
    /// the measured reasons behind Harris's steps. Needs `ncu`.
    Explain {
        /// Elements.
        #[arg(long, default_value = "2^22", value_parser = parse_count)]
        n: usize,
        /// Element type.
        #[arg(long = "type", default_value = "i32")]
        ty: String,
        /// Threads per block (Harris's 128).
        #[arg(long, default_value_t = DEFAULT_BLOCK)]
        block: u32,
        /// Also write ncu's raw CSV output here.
        #[arg(long, value_name = "FILE")]
        raw: Option<PathBuf>,
        /// Print the table from a raw file written by `--raw` (no GPU, no ncu).
        #[arg(long, value_name = "FILE", conflicts_with = "raw")]
        from_raw: Option<PathBuf>,
    },
    /// Regenerate a results page from benchmark JSON (no GPU needed): for
    /// each DIR/FILE.json, its chart DIR/FILE.svg beside it and, in the
    /// page, the text between `<!-- report DIR/FILE.json -->` and
    /// `<!-- /report -->` (DIR: the report's folder, named after its card).
    Report {
        /// Reports written by `reduce bench --json`.
        #[arg(required = true)]
        json: Vec<PathBuf>,
        /// The Markdown page whose marked sections are rewritten.
        #[arg(long, value_name = "FILE")]
        page: Option<PathBuf>,
    },
    /// Make a page of every GPU card's measurements side by side (no GPU
    /// needed) from the folders `bash cli/baselines/card.sh speed DIR`
    /// writes, one per card: the read ceiling, the operations and the rows,
    /// columns and segments beside torch and CuPy, Harris's table, and the
    /// float sums' modes beside CUB. Prints it as Markdown.
    Cards {
        /// One folder per card, a column each, in this order.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Write the page into this Markdown file, between the lines
        /// `<!-- cards -->` and `<!-- /cards -->`, instead of printing it.
        #[arg(long, value_name = "FILE")]
        page: Option<PathBuf>,
    },
    /// What a user's call `r.sum(&device_slice)` costs on the host clock,
    /// next to the kernels' time between CUDA events (default kernel).
    Latency {
        /// Sizes, comma-separated.
        #[arg(long, value_delimiter = ',', value_parser = parse_count, default_value = "2^10,2^16,2^20,2^22")]
        n: Vec<usize>,
        /// Element type: i32, u32, i64, u64, f32, f64.
        #[arg(long = "type", default_value = "f32")]
        ty: String,
        /// Timed calls per size and kind (after 5 warm-up calls).
        #[arg(long, default_value_t = 300, value_parser = parse_runs)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// At most this many blocks (the default: what the GPU holds).
        #[arg(long)]
        max_grid: Option<u32>,
        /// How the event-timed columns' runs are queued, comma-separated
        /// for one table each: host-loop or queued (as for `reduce ops`).
        #[arg(long, value_delimiter = ',', value_parser = parse_timing, default_value = "host-loop")]
        timing: Vec<Timing>,
    },
    /// Harris's table for this GPU: every kernel at each size, time, GB/s,
    /// step and cumulative speedup, % of peak, and the same kernels in CUDA
    /// C++ (compiled with NVRTC, if present) side by side.
    Bench {
        /// Sizes, comma-separated (Harris's 4M ints, the 2023 review's 32M, and 2^28).
        #[arg(long, value_delimiter = ',', value_parser = parse_count, default_value = "2^22,2^25,2^28")]
        n: Vec<usize>,
        /// Element type: i32, u32, i64, u64, f32, f64.
        #[arg(long = "type", default_value = "i32")]
        ty: String,
        /// Operator: sum, min, max.
        #[arg(long, default_value = "sum")]
        op: String,
        /// Kernel ids from `reduce list`, comma-separated, or `all`.
        #[arg(long, value_delimiter = ',', default_value = "all")]
        kernel: Vec<String>,
        /// Threads per block for every kernel (Harris used 128; a kernel
        /// whose minimum is larger runs at its minimum).
        #[arg(long, default_value_t = DEFAULT_BLOCK)]
        block: u32,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 30, value_parser = parse_runs)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Leave out the CUDA C++ column.
        #[arg(long)]
        no_cuda: bool,
        /// Compile this CUDA C++ file for the CUDA C++ column instead of the
        /// built-in `cuda/reduction_kernels.cu` (same entry names and
        /// parameters): try a change to a twin without rebuilding.
        #[arg(long, value_name = "FILE")]
        cuda_source: Option<PathBuf>,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write a bar chart of GB/s per kernel as SVG.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Measure only the CUDA C++ column, from this cell on, printing a
        /// JSON line per cell: how `bench` runs its twins in a process of
        /// their own (`twins.rs`).
        #[arg(long, hide = true, value_name = "CELL")]
        cuda_from: Option<usize>,
    },
}

/// `--timing`: `host-loop` or `queued`.
pub(crate) fn parse_timing(s: &str) -> std::result::Result<Timing, String> {
    s.parse()
}

/// `--runs`: from 1 to [`reduce::timing::MAX_RUNS`].
pub(crate) fn parse_runs(s: &str) -> std::result::Result<usize, String> {
    let runs = s.parse().map_err(|_| format!("not a number of runs: {s:?}"))?;
    reduce::timing::check_runs(runs).map_err(|e| e.to_string())
}

/// `4194304`, `4M`, `16K`, `2^22`, `1G`, `2^20+7`.
pub(crate) fn parse_count(s: &str) -> std::result::Result<usize, String> {
    let bad = || format!("not a count: {s:?} (examples: 4194304, 4M, 2^22, 2^20+7)");
    let large = || format!("{s} is too large: the largest count is {} (2^64 - 1)", usize::MAX);
    if let Some((a, b)) = s.split_once('+') {
        return parse_count(a)?.checked_add(parse_count(b)?).ok_or_else(large);
    }
    if let Some((base, exp)) = s.split_once('^') {
        let (base, exp): (usize, u32) = (base.parse().map_err(|_| bad())?, exp.parse().map_err(|_| bad())?);
        return base.checked_pow(exp).ok_or_else(large);
    }
    let (digits, scale) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1 << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits.parse::<usize>().ok().and_then(|d| d.checked_mul(scale)).ok_or_else(large);
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("4194304"), Ok(1 << 22));
        assert_eq!(parse_count("4M"), Ok(1 << 22));
        assert_eq!(parse_count("2^22"), Ok(1 << 22));
        assert_eq!(parse_count("16k"), Ok(16384));
        assert_eq!(parse_count("2^20+7"), Ok((1 << 20) + 7));
        assert!(parse_count("2^99").unwrap_err().contains("too large: the largest count is 18446744073709551615"));
        assert!(parse_count("99999999999999999999").unwrap_err().contains("too large"));
        assert!(parse_count("lots").is_err());
        assert!(parse_count("").is_err());
    }
}
