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
use reduction::bench::{Prepared, measure};
use reduction::data::{Pattern, Sample};
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
        /// A kernel id from `reduce list`, or `all`.
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
}

/// `4194304`, `4M`, `16K`, `2^22`, `1G`.
fn parse_count(s: &str) -> std::result::Result<usize, String> {
    let bad = || format!("not a count: {s:?} (examples: 4194304, 4M, 2^22)");
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
            let kernels: Vec<&'static Kernel> = match kernel.as_str() {
                "all" => KERNELS.iter().collect(),
                id => vec![Kernel::find(id)?],
            };
            if let (Some(b), [k]) = (block, kernels.as_slice()) {
                k.check_block(b)?;
            }
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
    }
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
        assert!(parse_count("2^99").is_err());
        assert!(parse_count("lots").is_err());
        assert!(parse_count("").is_err());
    }
}
