//! `reduce`: run, check and time the reduction kernels on this machine's GPU.
//!
//! ```text
//! reduce list                                  the kernels of the registry
//! reduce info                                  the GPU
//! reduce run [--kernel NAME|all] [--n N] [--block B] [--type T] [--op OP] [--finish gpu|cpu]
//! ```
//! Errors are printed in one line; the exit code is 1 for an error and 2 for
//! a result that differs from the CPU reference.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use reduction::bench::{BenchConfig, Prepared, measure, run_bench, verify};
use reduction::data::{Pattern, Sample};
use reduction::nvrtc;
use reduction::{
    DEFAULT_BLOCK, DType, Element, Error, Finish, KERNELS, Kernel, Op, Ptx, ReduceOp, Reducer, Reference, Result,
    with_dtype, with_op,
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
        /// Element type: i32, u32, i64, u64, f32, f64.
        #[arg(long = "type", default_value = "i32")]
        ty: String,
        /// Operator: sum, min, max.
        #[arg(long, default_value = "sum")]
        op: String,
        /// Where the check combines the partials: gpu (more launches) or cpu.
        #[arg(long, default_value = "gpu")]
        finish: String,
        /// Timed runs (after warm-up).
        #[arg(long, default_value_t = 30)]
        runs: usize,
        /// Seed of the random input.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Check kernels against the CPU (no timing): every kernel, each size,
    /// type and operator given, at each block size the kernel supports or the
    /// one given. The driver program of `cargo xtask sanitize`.
    Check {
        /// A kernel id from `reduce list`, or `all`.
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
    /// Seed 003: sum values by key (one atomic per element vs warp-aggregated
    /// atomics vs shared-memory hashing), f32 and f64, three key
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
        /// Threads per block for every kernel (Harris used 128).
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
        json: Option<std::path::PathBuf>,
        /// Also write a bar chart of GB/s per kernel as SVG.
        #[arg(long, value_name = "FILE")]
        svg: Option<std::path::PathBuf>,
    },
}

/// `4194304`, `4M`, `16K`, `2^22`, `1G`, `2^20+7`.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Ok(false) when a result did not match the reference.
fn run(cli: Cli) -> Result<bool> {
    match cli.command {
        Command::List => {
            println!("{:<8} {:>4}  {:<42} {:<30} block sizes", "kernel", "step", "what", "source");
            for k in KERNELS {
                let blocks: Vec<String> = k.block_sizes().map(|b| b.to_string()).collect();
                println!("{:<8} {:>4}  {:<42} {:<30} {}", k.id, k.step, k.title, k.source, blocks.join(" "));
            }
            Ok(true)
        }
        Command::Info => {
            let r = open(cli.device, cli.ptx.as_deref())?;
            let i = r.gpu().info();
            println!(
                "{} (sm_{}{}), {} SMs, {} MiB L2, {} MiB memory, {}-bit bus at {} MHz: {:.0} GB/s theoretical, driver {}.{}",
                i.name,
                i.compute_capability.0,
                i.compute_capability.1,
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
        Command::Run { kernel, n, block, ty, op, finish, runs, seed } => {
            let (kernel, block) = match kernel.as_str() {
                "default" => ("single_pass", block.or(Some(reduction::default_block(n)))),
                id => (id, block),
            };
            let kernels = select_kernels(kernel, block)?;
            let finish = match finish.as_str() {
                "gpu" => Finish::Gpu,
                "cpu" => Finish::Cpu,
                other => {
                    return Err(Error::Invalid(format!("--finish {other:?}: expected gpu or cpu")));
                }
            };
            if runs == 0 {
                return Err(Error::Invalid("--runs must be at least 1".into()));
            }
            let (dtype, op) = (DType::parse(&ty)?, Op::parse(&op)?);
            let r = open(cli.device, cli.ptx.as_deref())?;
            let info = r.gpu().info();
            println!("{}, n = {n} {ty}, {op:?}, finish on the {finish:?}, median of {runs} runs", info.name);
            let args = RunArgs { kernels, n, block: block.unwrap_or(DEFAULT_BLOCK), finish, runs, seed };
            with_dtype!(dtype, |T| with_op!(op, |O| run_kernels::<O, T>(&r, &args)))
        }
        Command::ByKey { n, keys, runs } => {
            let r = open(cli.device, cli.ptx.as_deref())?;
            println!("{}, n = {n}, {keys} keys, median of {runs} runs", r.gpu().info().name);
            let rows = reduction::by_key::bench(&r, n, keys, runs)?;
            reduction::by_key::print_table(&rows);
            Ok(rows.iter().all(|row| row.ok))
        }
        Command::Check { kernel, n, ty, op, block, seed } => {
            let kernels = select_kernels(&kernel, block)?;
            let types = ty.iter().map(|t| DType::parse(t)).collect::<Result<Vec<_>>>()?;
            let ops = op.iter().map(|o| Op::parse(o)).collect::<Result<Vec<_>>>()?;
            let r = open(cli.device, cli.ptx.as_deref())?;
            let mut all_ok = true;
            for &dtype in &types {
                for &op in &ops {
                    for &n in &n {
                        let ok = with_dtype!(dtype, |T| with_op!(op, |O| check_kernels::<O, T>(
                            &r, &kernels, block, n, seed
                        )))?;
                        all_ok &= ok;
                    }
                }
            }
            if kernel == "all" {
                for &n in &n {
                    all_ok &= check_by_key(&r, n, seed)?;
                }
            }
            println!("{}", if all_ok { "check: every result matches the CPU" } else { "check: MISMATCH" });
            Ok(all_ok)
        }
        Command::Bench { n, ty, op, kernel, block, runs, seed, no_cuda, json, svg } => {
            bench(cli.device, cli.ptx.as_deref(), n, &ty, &op, &kernel, block, runs, seed, no_cuda, json, svg)
        }
    }
}

/// `--kernel NAME|all`: the kernels it names. A block size given with one
/// named kernel must suit it (with `all`, kernels that cannot take it are
/// reported as skipped, or raised to their smallest block).
fn select_kernels(kernel: &str, block: Option<u32>) -> Result<Vec<&'static Kernel>> {
    let kernels: Vec<&'static Kernel> = match kernel {
        "all" => KERNELS.iter().collect(),
        id => vec![Kernel::find(id)?],
    };
    if let (Some(b), [k]) = (block, kernels.as_slice()) {
        k.check_block(b)?;
    }
    Ok(kernels)
}

#[allow(clippy::too_many_arguments)]
fn bench(
    device: usize,
    ptx: Option<&str>,
    sizes: Vec<usize>,
    ty: &str,
    op: &str,
    kernel: &str,
    block: u32,
    runs: usize,
    seed: u64,
    no_cuda: bool,
    json: Option<std::path::PathBuf>,
    svg: Option<std::path::PathBuf>,
) -> Result<bool> {
    let kernels = select_kernels(kernel, Some(block))?;
    if runs == 0 || sizes.is_empty() || sizes.contains(&0) {
        return Err(Error::Invalid("--runs and every --n must be at least 1".into()));
    }
    let (dtype, op) = (DType::parse(ty)?, Op::parse(op)?);
    let rust = open(device, ptx)?;
    let info = rust.gpu().info().clone();
    let cuda = if no_cuda {
        Err("left out with --no-cuda".to_string())
    } else {
        nvrtc::compile_reference(&info).and_then(|ptx| Reducer::with_ptx(device, ptx).map_err(|e| e.to_string()))
    };
    let per_kernel = if cuda.is_ok() { 2 } else { 1 };
    let progress = ProgressBar::new((sizes.len() * kernels.len() * per_kernel) as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let config = BenchConfig { sizes, kernels, block, runs, seed };
    let cuda_ref = cuda.as_ref().map_err(String::as_str);
    let tick = |what: &str| {
        progress.set_message(what.to_string());
        progress.inc(1);
    };
    let report = with_dtype!(dtype, |T| with_op!(op, |O| run_bench::<O, T>(&rust, cuda_ref, &config, tick)))?;
    progress.finish_and_clear();
    print!("{}", report.text());
    let write = |path: &std::path::Path, text: String| {
        std::fs::write(path, text).map_err(|e| Error::Invalid(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = json {
        write(&path, serde_json::to_string_pretty(&report).map_err(|e| Error::Invalid(e.to_string()))?)?;
    }
    if let Some(path) = svg {
        write(&path, reduction::svg::chart(&report))?;
    }
    Ok(true)
}

fn open(device: usize, ptx: Option<&str>) -> Result<Reducer> {
    let ptx = match ptx {
        Some(path) => Ptx::from_file(path)?,
        None => Ptx::embedded(),
    };
    Reducer::with_ptx(device, ptx)
}

struct RunArgs {
    kernels: Vec<&'static Kernel>,
    n: usize,
    block: u32,
    finish: Finish,
    runs: usize,
    seed: u64,
}

/// Reduce `n` random elements with every kernel at every block size (or the
/// given one); print one line per mismatch and a summary line.
fn check_kernels<O: ReduceOp<T>, T: Element + Reference + Sample>(
    r: &Reducer,
    kernels: &[&'static Kernel],
    block: Option<u32>,
    n: usize,
    seed: u64,
) -> Result<bool> {
    let input = Prepared::<T>::single(r, Pattern::Random, n, seed)?;
    let (mut checked, mut bad) = (0, 0);
    for &kernel in kernels {
        let blocks: Vec<u32> = match block {
            Some(b) if kernel.check_block(b).is_ok() => vec![b],
            Some(_) => vec![],
            None => kernel.block_sizes().collect(),
        };
        for b in blocks {
            let m = verify::<O, T>(r, kernel, b, Finish::Gpu, &input)?;
            checked += 1;
            if let Some(e) = m.mismatch(T::NAME) {
                bad += 1;
                println!("MISMATCH {e}");
            }
        }
    }
    println!("{} {} n={n}: {checked} configurations, {bad} mismatches", T::NAME, O::NAME);
    Ok(bad == 0)
}

/// Every reduce-by-key kernel on `n` f32 and f64 values with sorted and
/// random keys (about 10 per key), against the CPU group-by sum.
fn check_by_key(r: &Reducer, n: usize, seed: u64) -> Result<bool> {
    use reduction::by_key::{ByKeyKernel, KeyDist, generate_keys, reference};
    let num_keys = (n / 10).max(1) as u32;
    let mut bad = 0;
    for dist in [KeyDist::Sorted, KeyDist::Random] {
        let keys = generate_keys(dist, n, num_keys, seed);
        let f32s: Vec<f32> = reduction::data::generate(Pattern::Random, n, seed);
        let f64s: Vec<f64> = reduction::data::generate(Pattern::Random, n, seed);
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
    let input = Prepared::<T>::new(r, Pattern::Random, a.n, a.seed)?;
    println!(
        "{:<8} {:>5}  {:>22} {:>22}  {:<8} {:>10} {:>10} {:>10} {:>9}",
        "kernel", "block", "GPU", "CPU", "check", "median ms", "min ms", "max ms", "GB/s"
    );
    let mut all_ok = true;
    for &kernel in &a.kernels {
        if let Err(e) = kernel.check_block(a.block) {
            println!("{:<8} {:>5}  skipped: {e}", kernel.id, a.block);
            continue;
        }
        let m = measure::<O, T>(r, kernel, a.block, a.finish, &input, a.runs)?;
        all_ok &= m.ok;
        println!(
            "{:<8} {:>5}  {:>22} {:>22}  {:<8} {:>10.4} {:>10.4} {:>10.4} {:>9.1}",
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
    if !all_ok {
        eprintln!("error: at least one kernel's result differs from the CPU reference");
    }
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::parse_count;

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
}
