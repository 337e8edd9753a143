//! `reduce`: run, check and time the reduction kernels on this machine's GPU.
//!
//! ```text
//! reduce list                                  the kernels of the registry
//! reduce info                                  the GPU
//! reduce run [--kernel NAME|all|default] [--n N] [--block B] [--type T] [--op OP] [--finish gpu|cpu] [--gpus all|N]
//! reduce nccl                                  a folder with libnccl.so, for LD_LIBRARY_PATH
//! reduce check [--kernel NAME|all] [--n LIST] [--type LIST] [--op LIST] [--block B]
//! reduce bench [--n LIST] [--type T] [--op OP] [--kernel K] [--json FILE] [--svg FILE]
//! reduce ops [--n LIST] [--op LIST] [--type LIST] [--timing host-loop,queued] [--json FILE]
//! reduce latency [--n LIST] [--type T] [--timing host-loop,queued]
//! reduce modes [--n N] [--type f32,f64] [--json FILE]   default vs gpu_to_gpu vs accurate sums
//! reduce run ... [--determinism run_to_run|gpu_to_gpu] [--accurate]
//! reduce by-key [--n N] [--keys K]
//! ```
//! Every argument is checked before the GPU is touched. Errors are one line
//! on stderr. Exit codes: 0 success, 1 runtime error (no driver, out of
//! memory, ...), 2 usage error (a bad argument), 3 a result that differs
//! from the CPU reference.

use std::fs::File;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use reduce::bench::{BenchConfig, Rotated, measure, run_bench};
use reduce::by_key_bench;
use reduce::nvrtc;
use reduce::timing::Timing;
use reduction::check::by_key::{KeyDist, generate_keys, reference};
use reduction::check::data::{Pattern, Sample, generate};
use reduction::check::reference::Reference;
use reduction::check::{CheckInput, verify};
use reduction::{
    BLOCK_SIZES, ByKeyKernel, DEFAULT_BLOCK, DEFAULT_KERNEL, DType, Determinism, Element, Error, Finish, KERNELS,
    Kernel, Op, Options, Ptx, ReduceOp, Reducer, Result, default_block, with_op, with_plain_dtype,
};

#[derive(Parser)]
#[command(name = "reduce", version, about = "Parallel reductions written in Rust, run on your GPU")]
struct Cli {
    /// CUDA device ordinal.
    #[arg(long, global = true, default_value_t = 0)]
    device: usize,
    /// Load the kernels from this PTX file instead of the embedded one.
    #[arg(long, global = true, value_name = "FILE")]
    ptx: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
        /// Operation: sum, min, max (every kernel), argmin, argmax, dot,
        /// sum_squares, norm, mean (the default kernel).
        #[arg(long, default_value = "sum")]
        op: String,
        /// Where the partials are combined: gpu (more launches) or cpu.
        #[arg(long, default_value = "gpu")]
        finish: String,
        /// run_to_run (the default kernel) or gpu_to_gpu (the same bits on
        /// any GPU: f32/f64 sum, dot, sum_squares, norm, mean).
        #[arg(long, default_value = "run_to_run")]
        determinism: String,
        /// The accurate f32/f64 sum (f32 correctly rounded; docs/determinism.md).
        #[arg(long)]
        accurate: bool,
        /// Timed runs (after warm-up).
        #[arg(long, default_value_t = 30)]
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
        /// Sum CSR segments of 2^28 f32 elements instead, with lengths
        /// drawn from `loguniform` (1 to 10^6) or `pareto` (exponent 1.5).
        #[arg(long, value_name = "loguniform|pareto")]
        segments: Option<String>,
        /// KiB of input per tile for --shape (axis 1) and --segments: 16,
        /// 32, 64, 128 or 256 (default: chosen by shape).
        #[arg(long, value_name = "KIB")]
        tile: Option<u32>,
    },
    /// Print a folder holding `libnccl.so`, linked to the NCCL found on this
    /// machine (PyTorch's `libnccl.so.2`), for `LD_LIBRARY_PATH`.
    Nccl,
    /// Check kernels against the CPU (no timing): every kernel, each size,
    /// type and operator given, at each block size the kernel supports or the
    /// one given. The driver program of `cargo xtask sanitize`.
    Check {
        /// A kernel id from `reduce list`, or `all` (with reduction by key).
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
    /// Time rows, columns and segments: f32 sums of the 1 GiB matrices
    /// 16384x16384, 1048576x256, 256x1048576, 16777216x16, 4096x65536 along
    /// both axes and of 2^28 elements in power-law segments, each checked
    /// against the CPU first; --sweep adds the strategy sweeps behind the
    /// automatic choice.
    Shapes {
        /// Timed runs per case, after 5 warm-up runs.
        #[arg(long, default_value_t = 50)]
        runs: usize,
        /// Also time every lanes-per-row strategy on rows of 16 to 65536
        /// and column chunks on the matrices.
        #[arg(long)]
        sweep: bool,
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
        /// Threads per block (default: the library's choice for each size).
        #[arg(long)]
        block: Option<u32>,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 100)]
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
        /// Also write the rows as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// The default, reproducible (gpu_to_gpu) and accurate float sums side
    /// by side, in one sitting: GB/s and the ratio to the default sum, each
    /// checked against the CPU first (docs/determinism.md).
    Modes {
        /// Elements.
        #[arg(long, default_value = "2^28", value_parser = parse_count)]
        n: usize,
        /// Element types, comma-separated (f32, f64).
        #[arg(long = "type", value_delimiter = ',', default_value = "f32,f64")]
        ty: Vec<String>,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the rows as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Seed 003: sum values by key (one atomic per element vs warp-aggregated
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
        #[arg(long, default_value_t = 30)]
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
    /// each FILE.json, its chart FILE.svg beside it and, in the page, the
    /// text between `<!-- report FILE.json -->` and `<!-- /report -->`.
    Report {
        /// Reports written by `reduce bench --json`.
        #[arg(required = true)]
        json: Vec<PathBuf>,
        /// The Markdown page whose marked sections are rewritten.
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
        #[arg(long, default_value_t = 300)]
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
        /// Sizes, comma-separated (Harris's 4M ints, seed 004's 32M, and 2^28).
        #[arg(long, value_delimiter = ',', value_parser = parse_count, default_value = "2^22,2^25,2^28")]
        n: Vec<usize>,
        /// Element type: i32, u32, i64, u64, f32, f64.
        #[arg(long = "type", default_value = "i32")]
        ty: String,
        /// Operator: sum, min, max.
        #[arg(long, default_value = "sum")]
        op: String,
        /// A kernel id from `reduce list`, or `all`.
        #[arg(long, default_value = "all")]
        kernel: String,
        /// Threads per block for every kernel (Harris used 128; a kernel
        /// whose minimum is larger runs at its minimum).
        #[arg(long, default_value_t = DEFAULT_BLOCK)]
        block: u32,
        /// Timed runs per measurement, after 5 warm-up runs.
        #[arg(long, default_value_t = 30)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Leave out the CUDA C++ column.
        #[arg(long)]
        no_cuda: bool,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write a bar chart of GB/s per kernel as SVG.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
}

/// How `reduce` ends; the exit codes the README documents.
enum Outcome {
    /// 0: done, every result matched.
    Success,
    /// 1: something failed at run time (no driver, out of memory, ...).
    Runtime(Error),
    /// 2: an argument is wrong; nothing was run.
    Usage(String),
    /// 3: a result differs from the CPU reference.
    Mismatch,
}

impl Outcome {
    fn exit(self) -> ExitCode {
        match self {
            Outcome::Success => ExitCode::SUCCESS,
            Outcome::Runtime(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
            Outcome::Usage(msg) => {
                eprintln!("error: {msg}");
                ExitCode::from(2)
            }
            Outcome::Mismatch => {
                eprintln!("error: at least one result differs from the CPU reference");
                ExitCode::from(3)
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            print!("{e}"); // --help, --version
            return ExitCode::SUCCESS;
        }
        // clap's own message is several lines (usage, tips): keep the first
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            return Outcome::Usage(first.trim_start_matches("error: ").to_string()).exit();
        }
    };
    let outcome = match validate(cli) {
        Err(msg) => Outcome::Usage(msg),
        Ok(job) => match execute(job) {
            Ok(true) => Outcome::Success,
            Ok(false) => Outcome::Mismatch,
            Err(e) => Outcome::Runtime(e),
        },
    };
    outcome.exit()
}

/// `4194304`, `4M`, `16K`, `2^22`, `1G`, `2^20+7`.
/// Each timing once, in the order first given.
fn distinct(timings: Vec<Timing>) -> Vec<Timing> {
    let mut out = Vec::new();
    for t in timings {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// `--timing`: `host-loop` or `queued`.
fn parse_timing(s: &str) -> std::result::Result<Timing, String> {
    s.parse()
}

fn parse_count(s: &str) -> std::result::Result<usize, String> {
    let bad = || format!("not a count: {s:?} (examples: 4194304, 4M, 2^22, 2^20+7)");
    if let Some((a, b)) = s.split_once('+') {
        return parse_count(a)?.checked_add(parse_count(b)?).ok_or_else(bad);
    }
    if let Some((base, exp)) = s.split_once('^') {
        let (base, exp): (usize, u32) = (base.parse().map_err(|_| bad())?, exp.parse().map_err(|_| bad())?);
        return base.checked_pow(exp).ok_or_else(bad);
    }
    let (digits, scale) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1 << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok().and_then(|d| d.checked_mul(scale)).ok_or_else(bad)
}

/// What to do, every argument checked.
enum Job {
    List,
    Info(Gpu),
    Run(Gpu, RunArgs),
    Multi(reduce::multi_gpu::MultiRun),
    Nccl,
    Check(Gpu, CheckArgs),
    ByKey(Gpu, usize, u32, usize),
    Latency(Gpu, Vec<usize>, DType, usize, u64, Option<u32>, Vec<Timing>),
    Report(Vec<PathBuf>, Option<PathBuf>),
    Explain(usize, DType, u32, Option<(PathBuf, File)>),
    ExplainFromRaw(PathBuf, usize),
    Bench(Gpu, BenchArgs),
    Ops(Gpu, OpsArgs),
    Modes(Gpu, usize, Vec<DType>, usize, u64, Option<(PathBuf, File)>),
    Shapes(Gpu, Vec<(reduce::shapes_bench::Case, reduction::Strategy)>, Determinism, usize, Option<(PathBuf, File)>),
}

struct OpsArgs {
    pairs: Vec<(Op, DType)>,
    sizes: Vec<usize>,
    block: Option<u32>,
    runs: usize,
    seed: u64,
    timings: Vec<Timing>,
    json: Option<(PathBuf, File)>,
}

/// Which GPU and PTX: opened only after the arguments are known to be good.
struct Gpu {
    device: usize,
    ptx: Option<String>,
}

impl Gpu {
    fn open(&self) -> Result<Reducer> {
        let ptx = match &self.ptx {
            Some(path) => Ptx::from_file(path)?,
            None => Ptx::embedded(),
        };
        Reducer::with_ptx(self.device, ptx)
    }
}

struct RunArgs {
    kernels: Vec<(&'static Kernel, u32)>,
    n: usize,
    dtype: DType,
    op: Op,
    finish: Finish,
    /// `--determinism`, `--accurate` and `--block` as given (the rest unset).
    mode: Options,
    runs: usize,
    seed: u64,
}

struct CheckArgs {
    kernels: Vec<(&'static Kernel, u32)>,
    by_key: bool,
    sizes: Vec<usize>,
    types: Vec<DType>,
    ops: Vec<Op>,
    seed: u64,
}

struct BenchArgs {
    config: BenchConfig,
    dtype: DType,
    op: Op,
    no_cuda: bool,
    json: Option<(PathBuf, File)>,
    svg: Option<(PathBuf, File)>,
}

fn dtype(name: &str) -> std::result::Result<DType, String> {
    let valid: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
    DType::from_name(name).ok_or_else(|| format!("unknown type {name:?} (valid: {})", valid.join(", ")))
}

fn op(name: &str) -> std::result::Result<Op, String> {
    let valid: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
    Op::from_name(name).ok_or_else(|| format!("unknown operation {name:?} (valid: {})", valid.join(", ")))
}

/// Whether every kernel takes `op` on `t` (a plain operator on a primitive
/// type), else only the default kernel, if the type has the operation at all.
fn every_kernel(op: Op, t: DType) -> std::result::Result<bool, String> {
    if !op.types().contains(&t) {
        return Err(reduce::ops_bench::unsupported(op, t).to_string());
    }
    Ok(op.is_plain() && !t.is_half())
}

fn at_least_one(what: &str, value: usize) -> std::result::Result<(), String> {
    if value == 0 { Err(format!("{what} must be at least 1")) } else { Ok(()) }
}

/// `n` elements of the widest type fit in memory's address space.
fn size_fits(n: usize, types: &[DType]) -> std::result::Result<(), String> {
    for t in types {
        if n.checked_mul(t.size()).is_none_or(|b| b > isize::MAX as usize) {
            return Err(format!("--n {n}: {n} elements of {} do not fit in memory", t.name()));
        }
    }
    Ok(())
}

/// `--kernel NAME|all|default` and `--block`: each kernel with the block it
/// runs at. A named kernel must accept the block; with `all`, the kernels
/// that accept it (at least one must), or each at `fallback(kernel)`.
fn select_kernels(
    name: &str,
    block: Option<u32>,
    fallback: impl Fn(&Kernel) -> u32,
) -> std::result::Result<Vec<(&'static Kernel, u32)>, String> {
    let kernels: Vec<&'static Kernel> = match name {
        "all" => KERNELS.iter().collect(),
        "default" => vec![DEFAULT_KERNEL],
        id => vec![Kernel::find(id).map_err(|_| {
            let ids: Vec<&str> = KERNELS.iter().map(|k| k.id).collect();
            Error::UnknownKernel { name: id.to_string(), valid: format!("{}, all, default", ids.join(", ")) }
                .to_string()
        })?],
    };
    let Some(b) = block else {
        return Ok(kernels.into_iter().map(|k| (k, fallback(k))).collect());
    };
    if let [k] = kernels.as_slice() {
        k.check_block(b).map_err(|e| e.to_string())?;
    }
    let chosen: Vec<_> = kernels.into_iter().filter(|k| k.check_block(b).is_ok()).map(|k| (k, b)).collect();
    if chosen.is_empty() {
        let valid: Vec<String> = BLOCK_SIZES.iter().map(u32::to_string).collect();
        return Err(format!("no kernel accepts block size {b} (valid: {})", valid.join(", ")));
    }
    Ok(chosen)
}

/// An output file, created (or opened, keeping what it holds) now, so that
/// a path that cannot be written fails before a long benchmark.
fn output(path: Option<PathBuf>, flag: &str) -> std::result::Result<Option<(PathBuf, File)>, String> {
    path.map(|p| match File::options().append(true).create(true).open(&p) {
        Ok(f) => Ok((p, f)),
        Err(e) => Err(format!("{flag} {}: {e}", p.display())),
    })
    .transpose()
}

fn validate(cli: Cli) -> std::result::Result<Job, String> {
    let gpu = Gpu { device: cli.device, ptx: cli.ptx };
    Ok(match cli.command {
        Command::List => Job::List,
        Command::Info => Job::Info(gpu),
        Command::Run { shape, axis, segments, ty, op: o, runs, gpus, determinism, accurate, tile, .. }
            if shape.is_some() || segments.is_some() =>
        {
            at_least_one("--runs", runs)?;
            if ty.as_deref().is_some_and(|t| t != "f32") || o != "sum" || gpus.is_some() {
                return Err("--shape and --segments time f32 sums on one GPU (the library's API takes every operation and type)".into());
            }
            if accurate {
                return Err(
                    "--shape and --segments: no --accurate (the accurate sums are flat; --determinism gpu_to_gpu is)"
                        .into(),
                );
            }
            let strategy = match tile {
                None => reduction::Strategy::Auto,
                Some(k @ (16 | 32 | 64 | 128 | 256)) if !(shape.is_some() && axis == 0) => {
                    reduction::Strategy::Segments { tile_bytes: k << 10, lanes: 0 }
                }
                Some(k) => return Err(format!("--tile {k}: 16, 32, 64, 128 or 256 (KiB), for rows and segments")),
            };
            let determinism = Determinism::from_name(&determinism)
                .ok_or_else(|| format!("--determinism {determinism:?}: expected run_to_run or gpu_to_gpu"))?;
            let case = match (shape, segments) {
                (Some(s), None) => {
                    let (rows, cols) = s
                        .split_once('x')
                        .and_then(|(r, c)| Some((parse_count(r).ok()?, parse_count(c).ok()?)))
                        .ok_or_else(|| format!("--shape {s:?}: expected ROWSxCOLS, e.g. 16384x16384"))?;
                    if rows.checked_mul(cols).is_none_or(|e| e > reduce::shapes_bench::ELEMENTS) {
                        return Err(format!("--shape {s}: at most 2^28 elements"));
                    }
                    let m = reduction::Matrix::new(rows, cols);
                    reduction::Shape::axis(m, axis).map_err(|e| e.to_string())?;
                    reduce::shapes_bench::Case::Axis(m, axis)
                }
                (None, Some(kind)) => {
                    let pareto = match kind.as_str() {
                        "loguniform" => false,
                        "pareto" => true,
                        other => return Err(format!("--segments {other:?}: expected loguniform or pareto")),
                    };
                    let lengths = reduce::shapes_bench::power_law(reduce::shapes_bench::ELEMENTS, pareto, 5)
                        .map_err(|e| e.to_string())?;
                    reduce::shapes_bench::Case::Segments(kind, lengths)
                }
                _ => return Err("--shape and --segments: one or the other".into()),
            };
            Job::Shapes(gpu, vec![(case, strategy)], determinism, runs, None)
        }
        Command::Shapes { runs, sweep, json } => {
            at_least_one("--runs", runs)?;
            use reduce::shapes_bench::{Case, matrices, segment_cases, sweep_cases};
            use reduction::Strategy;
            let mut cases: Vec<_> = matrices().into_iter().map(|c| (c, Strategy::Auto)).collect();
            cases.extend(segment_cases().map_err(|e| e.to_string())?.into_iter().map(|c| (c, Strategy::Auto)));
            if sweep {
                for c in sweep_cases() {
                    let teams = [1, 2, 4, 8, 16, 32].map(|lanes| Strategy::Segments { tile_bytes: 0, lanes });
                    cases.extend(teams.map(|s| (c.clone(), s)));
                }
                let rows_or_segments = |c: &Case| !matches!(c, Case::Axis(_, 0));
                for c in matrices().into_iter().chain(segment_cases().map_err(|e| e.to_string())?) {
                    if rows_or_segments(&c) {
                        let tiles =
                            [16, 32, 64, 128, 256].map(|k| Strategy::Segments { tile_bytes: k << 10, lanes: 0 });
                        cases.extend(tiles.map(|s| (c.clone(), s)));
                    } else {
                        for wide in [1, 2, 4] {
                            let chunks = [1, 4, 16, 64, 256, 1024].map(|chunks| Strategy::Columns { wide, chunks });
                            cases.extend(chunks.map(|s| (c.clone(), s)));
                        }
                    }
                }
            }
            Job::Shapes(gpu, cases, Determinism::RunToRun, runs, output(json, "--json")?)
        }
        Command::Run { tile: Some(k), .. } => return Err(format!("--tile {k}: for --shape and --segments")),
        Command::Run {
            n, ty, op: o, runs, seed, gpus: Some(g), kernel, block, finish, determinism, accurate, ..
        } => {
            let ty = ty.unwrap_or_else(|| "i32".into());
            at_least_one("--n", n)?;
            at_least_one("--runs", runs)?;
            let (dtype, op) = (dtype(&ty)?, op(&o)?);
            size_fits(n.saturating_mul(2), &[dtype])?;
            every_kernel(op, dtype)?;
            if !["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str()) || block.is_some() || finish != "gpu" {
                return Err(format!(
                    "--gpus runs the default kernel ({}) at its own block size, finishing on the GPU",
                    DEFAULT_KERNEL.id
                ));
            }
            if determinism != "run_to_run" || accurate {
                return Err("--gpus runs the default mode (run_to_run, not --accurate)".into());
            }
            let gpus = match g.as_str() {
                "all" => None,
                k => match k.parse::<usize>() {
                    Ok(0) | Err(_) => return Err(format!("--gpus {k:?}: all, or a number of GPUs from 1")),
                    Ok(k) => Some(k),
                },
            };
            Job::Multi(reduce::multi_gpu::MultiRun { gpus, op, dtype, n, runs, seed })
        }
        Command::Nccl => Job::Nccl,
        Command::Run { kernel, n, block, ty, op: o, finish, determinism, accurate, runs, seed, gpus: None, .. } => {
            let ty = ty.unwrap_or_else(|| "i32".into());
            at_least_one("--n", n)?;
            at_least_one("--runs", runs)?;
            let dtype = dtype(&ty)?;
            size_fits(n, &[dtype])?;
            let finish = match finish.as_str() {
                "gpu" => Finish::Gpu,
                "cpu" => Finish::Cpu,
                other => return Err(format!("--finish {other:?}: expected gpu or cpu")),
            };
            let fallback = |k: &Kernel| {
                if k.id == DEFAULT_KERNEL.id && kernel == "default" {
                    default_block(n)
                } else {
                    DEFAULT_BLOCK.max(k.min_block)
                }
            };
            let op = op(&o)?;
            let determinism = Determinism::from_name(&determinism)
                .ok_or_else(|| format!("--determinism {determinism:?}: expected run_to_run or gpu_to_gpu"))?;
            let mode = Options { determinism, accurate, finish, block, ..Options::default() };
            let named = ["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str());
            let explicit = Options { kernel: if named { None } else { Kernel::find(&kernel).ok() }, ..mode };
            if reduction::mode_entry(op.name(), dtype, &explicit).map_err(|e| e.to_string())?.is_some() {
                if let Some(b) = block {
                    DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
                }
                let kernels = vec![(DEFAULT_KERNEL, block.unwrap_or(default_block(n)))];
                return Ok(Job::Run(gpu, RunArgs { kernels, n, dtype, op, finish, mode, runs, seed }));
            }
            let kernels = if every_kernel(op, dtype)? {
                select_kernels(&kernel, block, fallback)?
            } else if ["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str()) && finish == Finish::Gpu {
                vec![(DEFAULT_KERNEL, block.unwrap_or(default_block(n)))]
            } else {
                return Err(format!(
                    "--op {} --type {}: only the default kernel ({}) takes it, finishing on the GPU",
                    op.name(),
                    dtype.name(),
                    DEFAULT_KERNEL.id
                ));
            };
            if let Some(b) = block {
                DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
            }
            Job::Run(gpu, RunArgs { kernels, n, dtype, op, finish, mode, runs, seed })
        }
        Command::Check { kernel, n, ty, op: ops, block, seed } => {
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            let ops = ops.iter().map(|o| op(o)).collect::<std::result::Result<Vec<_>, _>>()?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size.saturating_mul(2), &types)?;
            }
            for &o in &ops {
                for &t in &types {
                    every_kernel(o, t)?;
                }
            }
            // every block size of each kernel: one entry per (kernel, block)
            let kernels = match block {
                Some(_) => select_kernels(&kernel, block, |_| 0)?,
                None => select_kernels(&kernel, None, |_| 0)?
                    .into_iter()
                    .flat_map(|(k, _)| k.block_sizes().map(move |b| (k, b)))
                    .collect(),
            };
            Job::Check(gpu, CheckArgs { kernels, by_key: kernel == "all", sizes: n, types, ops, seed })
        }
        Command::ByKey { n, keys, runs } => {
            at_least_one("--n", n)?;
            at_least_one("--keys", keys as usize)?;
            at_least_one("--runs", runs)?;
            size_fits(n, &[DType::F64])?;
            Job::ByKey(gpu, n, keys, runs)
        }
        Command::Report { json, page } => Job::Report(json, page),
        Command::Explain { n, from_raw: Some(path), .. } => Job::ExplainFromRaw(path, n),
        Command::Explain { n, ty, block, raw, from_raw: None } => {
            at_least_one("--n", n)?;
            let dtype = dtype(&ty)?;
            if dtype.is_half() {
                return Err(format!("--type {}: the teaching kernels take the primitive types", dtype.name()));
            }
            size_fits(n, &[dtype])?;
            select_kernels("all", Some(block), |_| block)?;
            Job::Explain(n, dtype, block, output(raw, "--raw")?)
        }
        Command::Latency { n, ty, runs, seed, max_grid, timing } => {
            at_least_one("--runs", runs)?;
            let dtype = dtype(&ty)?;
            if dtype.is_half() {
                return Err(format!("--type {}: latency measures the primitive types", dtype.name()));
            }
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size, &[dtype])?;
            }
            if max_grid == Some(0) {
                return Err("--max-grid must be at least 1".into());
            }
            Job::Latency(gpu, n, dtype, runs, seed, max_grid, distinct(timing))
        }
        Command::Ops { n, op: ops, ty, block, runs, seed, timing, json } => {
            at_least_one("--runs", runs)?;
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            let ops = ops.iter().map(|o| op(o)).collect::<std::result::Result<Vec<_>, _>>()?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size.saturating_mul(2), &types)?; // two inputs for a dot product
            }
            if let Some(b) = block {
                DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
            }
            let pairs: Vec<(Op, DType)> = ops
                .iter()
                .flat_map(|&o| types.iter().map(move |&t| (o, t)))
                .filter(|(o, t)| o.types().contains(t))
                .collect();
            if pairs.is_empty() {
                return Err("no type given has any of the operations given".into());
            }
            let timings = distinct(timing);
            Job::Ops(gpu, OpsArgs { pairs, sizes: n, block, runs, seed, timings, json: output(json, "--json")? })
        }
        Command::Modes { n, ty, runs, seed, json } => {
            at_least_one("--n", n)?;
            at_least_one("--runs", runs)?;
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            for &t in &types {
                if !reduction::modes::entries().contains(&format!("accurate_sum_{}", t.name())) {
                    return Err(format!("--type {}: the modes are f32 and f64 sums", t.name()));
                }
            }
            size_fits(n, &types)?;
            Job::Modes(gpu, n, types, runs, seed, output(json, "--json")?)
        }
        Command::Bench { n, ty, op: o, kernel, block, runs, seed, no_cuda, json, svg } => {
            at_least_one("--runs", runs)?;
            at_least_one("the number of sizes", n.len())?;
            let dtype = dtype(&ty)?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size, &[dtype])?;
            }
            if !block.is_power_of_two() || !(32..=1024).contains(&block) {
                let valid: Vec<String> = BLOCK_SIZES.iter().map(u32::to_string).collect();
                return Err(format!("--block {block}: not a block size (valid: {})", valid.join(", ")));
            }
            let kernels =
                select_kernels(&kernel, None, |k| block.max(k.min_block))?.into_iter().map(|(k, _)| k).collect();
            let op = op(&o)?;
            if !every_kernel(op, dtype)? {
                return Err(format!(
                    "--op {} --type {}: bench compares every kernel, which only sum, min and max of i32, u32, i64, u64, f32, f64 have; use `reduce ops`",
                    op.name(),
                    dtype.name()
                ));
            }
            let config = BenchConfig { sizes: n, kernels, block, runs, seed };
            let (json, svg) = (output(json, "--json")?, output(svg, "--svg")?);
            Job::Bench(gpu, BenchArgs { config, dtype, op, no_cuda, json, svg })
        }
    })
}

/// Ok(false) when a result did not match the reference.
fn execute(job: Job) -> Result<bool> {
    match job {
        Job::List => {
            let width = KERNELS.iter().map(|k| k.id.len()).max().unwrap_or(6).max("kernel".len());
            let title = KERNELS.iter().map(|k| k.title.len()).max().unwrap_or(4);
            let source = KERNELS.iter().map(|k| k.source.len()).max().unwrap_or(6);
            println!("{:<width$} {:>4}  {:<title$}  {:<source$}  block sizes", "kernel", "step", "what", "source");
            for k in KERNELS {
                let blocks: Vec<String> = k.block_sizes().map(|b| b.to_string()).collect();
                println!(
                    "{:<width$} {:>4}  {:<title$}  {:<source$}  {}",
                    k.id,
                    k.step,
                    k.title,
                    k.source,
                    blocks.join(" ")
                );
            }
            Ok(true)
        }
        Job::Info(gpu) => {
            let r = gpu.open()?;
            let i = r.gpu().info();
            println!(
                "{} ({}), {} SMs, {} MiB L2, {} MiB memory, {}-bit bus at {} MHz: {:.0} GB/s theoretical, driver {}.{}",
                i.name,
                i.arch(),
                i.sm_count,
                i.l2_bytes >> 20,
                i.total_mem >> 20,
                i.bus_width_bits,
                i.mem_clock_khz / 1000,
                i.peak_bandwidth() / 1e9,
                i.driver_version / 1000,
                i.driver_version % 1000 / 10
            );
            Ok(true)
        }
        Job::Run(gpu, a) => {
            let r = gpu.open()?;
            println!(
                "{}, n = {} {}, {}, finish on the {:?}, median of {} runs",
                r.gpu().info().name,
                a.n,
                a.dtype.name(),
                a.op.name(),
                a.finish,
                a.runs
            );
            let default_mode = a.mode.determinism == Determinism::RunToRun && !a.mode.accurate;
            if default_mode && every_kernel(a.op, a.dtype).unwrap_or(false) {
                with_plain_dtype!(a.dtype, |T| with_op!(a.op, |O| run_kernels::<O, T>(&r, &a), else Ok(false)), else Ok(false))
            } else {
                // the modes' kernels pick their own block unless one was asked for
                let block = if default_mode { a.kernels.first().map(|&(_, b)| b) } else { a.mode.block };
                let row = reduce::ops_bench::measure(
                    &r,
                    a.op,
                    a.dtype,
                    a.n,
                    block,
                    a.runs,
                    a.seed,
                    a.mode,
                    Timing::HostLoop,
                )?;
                print!("{}", reduce::ops_bench::table(std::slice::from_ref(&row)));
                Ok(row.ok)
            }
        }
        Job::Multi(a) => reduce::multi_gpu::run(&a),
        Job::Nccl => {
            println!("{}", reduction::multi::link_dir()?.display());
            Ok(true)
        }
        Job::Check(gpu, a) => {
            let r = gpu.open()?;
            let mut all_ok = true;
            for &dtype in &a.types {
                for &op in &a.ops {
                    for &n in &a.sizes {
                        all_ok &= match every_kernel(op, dtype) {
                            Ok(true) => {
                                with_plain_dtype!(dtype, |T| with_op!(op, |O| check_kernels::<O, T>(&r, &a.kernels, n, a.seed), else Ok(false)), else Ok(false))?
                            }
                            _ => check_operation(&r, op, dtype, n, a.seed)?,
                        };
                    }
                }
            }
            if a.by_key {
                for &n in &a.sizes {
                    all_ok &= check_by_key(&r, n, a.seed)?;
                }
            }
            println!("{}", if all_ok { "check: every result matches the CPU" } else { "check: MISMATCH" });
            Ok(all_ok)
        }
        Job::ByKey(gpu, n, keys, runs) => {
            let r = gpu.open()?;
            println!("{}, n = {n}, {keys} keys, median of {runs} runs", r.gpu().info().name);
            let rows = by_key_bench::bench(&r, n, keys, runs)?;
            by_key_bench::print_table(&rows);
            Ok(rows.iter().all(|row| row.ok))
        }
        Job::Latency(gpu, sizes, dtype, runs, seed, max_grid, timings) => {
            let r = gpu.open()?;
            println!(
                "{}, {} sum, default kernel, medians of {runs} calls, inputs rotated past the L2",
                r.gpu().info().name,
                dtype.name()
            );
            let mut all_ok = true;
            for timing in timings {
                println!("{}", timing.describe());
                let rows = with_plain_dtype!(dtype, |T| reduce::latency::latency::<reduction::Sum, T>(
                    &r, &sizes, runs, seed, max_grid, timing
                ), else Err(Error::Invalid("latency: the primitive types only".into())))?;
                print!("{}", reduce::latency::table(&rows));
                all_ok &= rows.iter().all(|row| row.ok);
            }
            Ok(all_ok)
        }
        Job::Bench(gpu, a) => bench(&gpu, a),
        Job::Ops(gpu, a) => {
            let r = gpu.open()?;
            println!("{}, default kernel, medians of {} runs, inputs rotated past the L2", r.gpu().info().name, a.runs);
            for timing in &a.timings {
                println!("{}", timing.describe());
            }
            let mut rows = Vec::new();
            for &n in &a.sizes {
                for &(op, t) in &a.pairs {
                    for &timing in &a.timings {
                        let mode = Options::default();
                        rows.push(reduce::ops_bench::measure(&r, op, t, n, a.block, a.runs, a.seed, mode, timing)?);
                    }
                }
            }
            print!("{}", reduce::ops_bench::table(&rows));
            if let Some(out) = a.json {
                write_output(out, serde_json::to_string_pretty(&rows).map_err(|e| Error::Invalid(e.to_string()))?)?;
            }
            Ok(rows.iter().all(|row| row.ok))
        }
        Job::Modes(gpu, n, types, runs, seed, json) => {
            let r = gpu.open()?;
            println!(
                "{}, n = {n}, sum: default (run_to_run), gpu_to_gpu, accurate; medians of {runs} runs, inputs rotated past the L2",
                r.gpu().info().name
            );
            let rows = reduce::ops_bench::modes(&r, &types, n, runs, seed)?;
            print!("{}", reduce::ops_bench::modes_table(&rows));
            if let Some(out) = json {
                let plain: Vec<_> = rows.iter().map(|(row, _)| row.clone()).collect();
                write_output(out, serde_json::to_string_pretty(&plain).map_err(|e| Error::Invalid(e.to_string()))?)?;
            }
            Ok(rows.iter().all(|(row, _)| row.ok))
        }
        Job::Shapes(gpu, cases, determinism, runs, json) => {
            let r = gpu.open()?;
            println!(
                "{}, f32 sums ({}), medians of {runs} event-timed launches, checked against the CPU",
                r.gpu().info().name,
                determinism.name()
            );
            let opts = Options { determinism, ..Options::default() };
            let (host, device) = reduce::shapes_bench::input(&r)?;
            println!("{}", reduce::shapes_bench::header());
            let mut rows = Vec::new();
            for (case, strategy) in &cases {
                let row = reduce::shapes_bench::measure(&r, case, *strategy, &opts, &host, &device, runs)?;
                println!("{}", reduce::shapes_bench::line(&row));
                rows.push(row);
            }
            if let Some(out) = json {
                write_output(out, serde_json::to_string_pretty(&rows).map_err(|e| Error::Invalid(e.to_string()))?)?;
            }
            Ok(rows.iter().all(|row| row.ok))
        }
        Job::Explain(n, dtype, block, raw) => {
            let ncu = reduce::explain::find_ncu()?;
            let kernels: Vec<&'static Kernel> = KERNELS.iter().filter(|k| k.check_block(block).is_ok()).collect();
            let mut text = String::new();
            let args = ["--type".to_string(), dtype.name().to_string()];
            let rows = reduce::explain::profile(&ncu, &kernels, n, block, &args, &mut text)?;
            println!("ncu --clock-control none --set full, n = {n} {}, block {block}, one launch each", dtype.name());
            print!("{}", reduce::explain::table(&rows, n));
            if let Some(out) = raw {
                write_output(out, text)?;
            }
            let missing: Vec<&str> = rows.iter().filter(|(_, m)| m.is_none()).map(|(k, _)| k.id).collect();
            if !missing.is_empty() {
                return Err(Error::Invalid(format!("ncu profiled no launch of {}", missing.join(", "))));
            }
            Ok(true)
        }
        Job::ExplainFromRaw(path, n) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::Invalid(format!("--from-raw {}: {e}", path.display())))?;
            print!("{}", reduce::explain::table(&reduce::explain::from_raw(&text)?, n));
            Ok(true)
        }
        Job::Report(json, page) => {
            reduce::bench::regenerate(&json, page.as_deref())?;
            Ok(true)
        }
    }
}

fn bench(gpu: &Gpu, a: BenchArgs) -> Result<bool> {
    let rust = gpu.open()?;
    let info = rust.gpu().info().clone();
    let cuda = if a.no_cuda {
        Err("left out with --no-cuda".to_string())
    } else {
        nvrtc::compile_reference(&info).and_then(|ptx| Reducer::with_ptx(gpu.device, ptx).map_err(|e| e.to_string()))
    };
    let per_kernel = if cuda.is_ok() { 2 } else { 1 };
    let progress = ProgressBar::new((a.config.sizes.len() * a.config.kernels.len() * per_kernel) as u64);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        progress.set_style(style);
    }
    let cuda_ref = cuda.as_ref().map_err(String::as_str);
    let tick = |what: &str| {
        progress.set_message(what.to_string());
        progress.inc(1);
    };
    let unsupported = || Error::Invalid("bench: sum, min and max of the primitive types only".into());
    let report = with_plain_dtype!(a.dtype, |T| with_op!(a.op, |O| run_bench::<O, T>(&rust, cuda_ref, &a.config, tick), else Err(unsupported())), else Err(unsupported()))?;
    progress.finish_and_clear();
    print!("{}", report.text());
    if let Some(out) = a.json {
        write_output(out, serde_json::to_string_pretty(&report).map_err(|e| Error::Invalid(e.to_string()))?)?;
    }
    if let Some(out) = a.svg {
        write_output(out, reduce::svg::chart(&report))?;
    }
    Ok(true)
}

/// Replace what an output file opened by [`output`] holds with `text`.
fn write_output((path, mut file): (PathBuf, File), text: String) -> Result<()> {
    use std::io::Write;
    file.set_len(0)
        .and_then(|()| file.write_all(text.as_bytes()))
        .map_err(|e| Error::Invalid(format!("cannot write {}: {e}", path.display())))
}

/// Check operation `op` on `n` random elements of `dtype` once with the
/// default kernel; print a line if it differs from the CPU.
fn check_operation(r: &Reducer, op: Op, dtype: DType, n: usize, seed: u64) -> Result<bool> {
    if matches!(op, Op::ArgMin | Op::ArgMax) && n == 0 {
        return Ok(true);
    }
    let row = reduce::ops_bench::check(r, op, dtype, n, seed)?;
    if !row.ok {
        println!("MISMATCH {} {} n={n}: GPU {}, CPU {}", op.name(), dtype.name(), row.got, row.expected);
    }
    Ok(row.ok)
}

/// Reduce `n` random elements with every (kernel, block) given; print one
/// line per mismatch and a summary line.
fn check_kernels<O: ReduceOp<T>, T: Element + Reference + Sample>(
    r: &Reducer,
    kernels: &[(&'static Kernel, u32)],
    n: usize,
    seed: u64,
) -> Result<bool> {
    let input = CheckInput::<T>::new(r, Pattern::Random, n, seed)?;
    let mut bad = 0;
    for &(kernel, block) in kernels {
        let c = verify::<O, T>(r, kernel, block, Finish::Gpu, &input)?;
        if let Some(e) = c.mismatch() {
            bad += 1;
            println!("MISMATCH {e}");
        }
    }
    println!("{} {} n={n}: {} configurations, {bad} mismatches", T::NAME, O::NAME, kernels.len());
    Ok(bad == 0)
}

/// Every reduce-by-key kernel on `n` f32 and f64 values with sorted and
/// random keys (about 10 per key), against the CPU group-by sum.
fn check_by_key(r: &Reducer, n: usize, seed: u64) -> Result<bool> {
    let num_keys = (n / 10).max(1) as u32;
    let mut bad = 0;
    for dist in [KeyDist::Sorted, KeyDist::Random] {
        let keys = generate_keys(dist, n, num_keys, seed);
        let f32s: Vec<f32> = generate(Pattern::Random, n, seed)?;
        let f64s: Vec<f64> = generate(Pattern::Random, n, seed)?;
        let (ref32, ref64) = (reference(&keys, &f32s, num_keys as usize), reference(&keys, &f64s, num_keys as usize));
        for kernel in ByKeyKernel::ALL {
            let case = format!("by-key {} {} n={n}", kernel.id(), dist.name());
            let got = r.reduce_by_key_with(&keys, &f32s, num_keys as usize, kernel)?;
            if let Err(e) = ref32.check(&got, &format!("{case} f32"), false) {
                println!("MISMATCH {e}");
                bad += 1;
            }
            let got = r.reduce_by_key_with(&keys, &f64s, num_keys as usize, kernel)?;
            if let Err(e) = ref64.check(&got, &format!("{case} f64"), false) {
                println!("MISMATCH {e}");
                bad += 1;
            }
        }
    }
    println!("by-key n={n}: {} configurations, {bad} mismatches", 2 * 2 * ByKeyKernel::ALL.len());
    Ok(bad == 0)
}

fn run_kernels<O: ReduceOp<T>, T: Element + Reference + Sample>(r: &Reducer, a: &RunArgs) -> Result<bool> {
    let input = Rotated::<T>::new(r, Pattern::Random, a.n, a.seed)?;
    let width = a.kernels.iter().map(|(k, _)| k.id.len()).max().unwrap_or(6).max("kernel".len());
    println!(
        "{:<width$} {:>5}  {:>22} {:>22}  {:<8} {:>10} {:>10} {:>10} {:>9}",
        "kernel", "block", "GPU", "CPU", "check", "median ms", "min ms", "max ms", "GB/s"
    );
    let mut all_ok = true;
    for &(kernel, block) in &a.kernels {
        let (_, m) = measure::<O, T>(r, kernel, block, a.finish, &input, a.runs)?;
        all_ok &= m.ok;
        println!(
            "{:<width$} {:>5}  {:>22} {:>22}  {:<8} {:>10.4} {:>10.4} {:>10.4} {:>9.1}",
            m.kernel,
            m.block,
            m.got,
            m.expected,
            if m.ok { "OK" } else { "MISMATCH" },
            m.stats.median_ms,
            m.stats.min_ms,
            m.stats.max_ms,
            m.bandwidth / 1e9
        );
    }
    Ok(all_ok)
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
        assert!(parse_count("2^99").is_err());
        assert!(parse_count("lots").is_err());
        assert!(parse_count("").is_err());
    }

    #[test]
    fn a_block_no_kernel_takes_is_an_error() {
        for bad in [0, 3, 4096] {
            assert!(select_kernels("all", Some(bad), |_| 0).unwrap_err().contains("no kernel accepts"), "{bad}");
        }
        // with `all`, kernels that cannot take the block are left out
        let at_32 = select_kernels("all", Some(32), |_| 0).unwrap();
        assert!(!at_32.is_empty() && at_32.iter().all(|(k, b)| *b == 32 && k.id != "reduce5"));
        assert!(select_kernels("reduce0", None, |_| 0).unwrap_err().ends_with("single_pass, all, default)"));
    }

    #[test]
    fn sizes_that_cannot_exist_are_refused() {
        assert!(size_fits(1 << 62, &[DType::F32]).is_err());
        assert!(size_fits(1 << 30, &[DType::F64]).is_ok());
    }
}
