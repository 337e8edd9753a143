//! `build-ptx` and `check-ptx`: the kernels compiled to PTX, and every
//! entry assembled with `ptxas` for sm_75, sm_80 and sm_90 (the sm_80
//! entries the library ships beside them for sm_80 and sm_90).

use std::path::PathBuf;
use std::process::Command;

use crate::common::{gpu_build, options, workspace};

/// The `ptxas` wheel `check-ptx` installs (CUDA 12.9).
const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc-cu12==12.9.86";
/// Where `check-ptx` installs it, relative to the workspace (git-ignored).
const TOOLS_DIR: &str = ".tools/cuda";
/// The architectures `check-ptx` assembles for: Turing, Ampere, Hopper.
const CHECK_ARCHS: [&str; 3] = ["sm_75", "sm_80", "sm_90"];

pub(crate) fn build_ptx(args: &[String]) -> Result<(), String> {
    let mut build = gpu_build();
    let mut out_dir = workspace().join("target").join("ptx");
    for (flag, value) in options(args, &["--arch", "--features", "--out"])? {
        match flag {
            "--arch" => build.arch = value.to_string(),
            "--features" => build.features = value.split(',').map(str::to_string).collect(),
            _ => out_dir = PathBuf::from(value),
        }
    }
    let out = out_dir.join("gpu.ptx");
    build.build(&out)?;
    println!("{}", out.display());
    Ok(())
}

/// The `ptxas` to use: `--ptxas`, `$PTXAS`, or the one in `.tools/`,
/// installed from PyPI on first use.
fn ptxas(explicit: Option<&str>) -> Result<PathBuf, String> {
    if let Some(p) = explicit.map(PathBuf::from).or_else(|| std::env::var_os("PTXAS").map(PathBuf::from)) {
        return Ok(p);
    }
    let tools = workspace().join(TOOLS_DIR);
    let bin = tools.join("nvidia/cuda_nvcc/bin/ptxas");
    if !bin.exists() {
        eprintln!("xtask: installing ptxas ({PTXAS_WHEEL}) into {}", tools.display());
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--target"])
            .arg(&tools)
            .arg(PTXAS_WHEEL)
            .status()
            .map_err(|e| format!("cannot run python3 -m pip: {e}"))?;
        if !status.success() || !bin.exists() {
            return Err(format!("installing {PTXAS_WHEEL} with pip failed"));
        }
    }
    Ok(bin)
}

pub(crate) fn check_ptx(args: &[String]) -> Result<(), String> {
    let opts = options(args, &["--ptxas"])?;
    let ptxas = ptxas(opts.first().map(|(_, v)| *v))?;
    let out_dir = workspace().join("target").join("ptx");
    let ptx = out_dir.join("gpu.ptx");
    gpu_build().build(&ptx)?;
    // the sm_80 entries the library ships beside it, for sm_80 and later
    let newer = out_dir.join("gpu-sm80.ptx");
    gpu_build().build_newer(&newer)?;
    let jobs: Vec<(&PathBuf, &str)> = [(&ptx, &CHECK_ARCHS[..]), (&newer, &CHECK_ARCHS[1..])]
        .into_iter()
        .flat_map(|(p, a)| a.iter().map(move |&a| (p, a)))
        .collect();
    // one ptxas a core (each takes minutes on the whole PTX), reported in the jobs' order
    let outputs = on_every_core(&jobs, |&(ptx, arch)| {
        Command::new(&ptxas).arg(format!("-arch={arch}")).args(["-v", "-o", "/dev/null"]).arg(ptx).output()
    });
    let mut failed = false;
    for ((ptx, arch), output) in jobs.into_iter().zip(outputs) {
        let output = output.map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
        let entries = std::fs::read_to_string(ptx)
            .map_err(|e| format!("cannot read {}: {e}", ptx.display()))?
            .lines()
            .filter(|l| l.starts_with(".visible .entry"))
            .count();
        let name = ptx.file_stem().unwrap_or_default().to_string_lossy();
        let log = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
        let log_path = out_dir.join(format!("ptxas-{name}-{arch}.log"));
        std::fs::write(&log_path, &log).map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
        let report = PtxasReport::parse(&log);
        let ok = output.status.success() && report.problems.is_empty() && report.entries == entries;
        println!(
            "{name} {arch}: {}/{entries} entries assembled, max {} registers, {} with spills or stack{}",
            report.entries,
            report.max_registers,
            report.problems.len(),
            if ok { "" } else { "  <-- FAILED" }
        );
        for p in report.problems.iter().take(10) {
            println!("    {p}");
        }
        for w in &report.too_wide {
            println!("    note: {w} (the library compiles it again told its block when it loads it: 64 registers)");
        }
        if !output.status.success() {
            println!("    ptxas failed; see {}", log_path.display());
        }
        failed |= !ok;
    }
    if failed {
        return Err("check-ptx failed".into());
    }
    println!("check-ptx: OK ({}, {})", ptx.display(), newer.display());
    Ok(())
}

/// `work` on each job, as many at once as the machine has cores; the
/// results in the jobs' order.
fn on_every_core<J: Sync, R: Send>(jobs: &[J], work: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..cores)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { return mine };
                        mine.push((i, work(job)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Entries allowed a stack frame (never spills), with the reason: the work
/// that needs it runs once per launch, in one thread.
const STACK_ALLOWED: [(&str, &str); 1] = [(
    "accurate_sum_f32",
    "the last block's thread 0 rounds the 12-limb total once per launch, indexing its digits at run time",
)];

/// What `ptxas -v` said about each entry.
struct PtxasReport {
    entries: usize,
    max_registers: u32,
    /// Entries with spills or a stack frame, as "name: line".
    problems: Vec<String>,
    /// Entries built for a block size that their registers do not allow
    /// on this architecture: the library launches them at a smaller one
    /// (`reduction::dispatch` steps the block down), so a note, not a failure.
    too_wide: Vec<String>,
}

impl PtxasReport {
    fn parse(log: &str) -> Self {
        let mut report = PtxasReport { entries: 0, max_registers: 0, problems: Vec::new(), too_wide: Vec::new() };
        let mut current = String::new();
        for line in log.lines() {
            if let Some(rest) = line.split("Compiling entry function '").nth(1) {
                current = rest.split('\'').next().unwrap_or_default().to_string();
                report.entries += 1;
            } else if line.contains("bytes stack frame") {
                let numbers: Vec<u64> =
                    line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
                // "N bytes stack frame, S bytes spill stores, L bytes spill loads"
                let allowed = STACK_ALLOWED.iter().any(|(e, _)| *e == current);
                let (stack, spills) = (numbers.first().copied().unwrap_or(0), numbers.iter().skip(1).any(|&n| n != 0));
                if spills || (stack != 0 && !allowed) {
                    report.problems.push(format!("{current}: {}", line.trim()));
                }
            } else if let Some(rest) = line.split("Used ").nth(1) {
                if let Some(regs) = rest.split(' ').next().and_then(|n| n.parse::<u32>().ok()) {
                    report.max_registers = report.max_registers.max(regs);
                    // a block's registers come from one SM's 64K, eight a thread at a time
                    if let Some(block) = gpu::names::compiled_block(&current)
                        && regs.div_ceil(8) * 8 * block > 65536
                    {
                        report.too_wide.push(format!("{current}: {regs} registers x {block} threads exceed 65536"));
                    }
                }
            } else if line.contains("error") || line.contains("warning") {
                report.problems.push(line.trim().to_string());
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_keeps_the_jobs_order() {
        let jobs: Vec<u64> = (0..37).collect();
        let squares = on_every_core(&jobs, |&j| {
            std::thread::sleep(std::time::Duration::from_millis(37 - j)); // the later ones finish first
            j * j
        });
        assert_eq!(squares, jobs.iter().map(|j| j * j).collect::<Vec<_>>());
        assert!(on_every_core(&[] as &[u64], |&j| j).is_empty());
    }

    #[test]
    fn ptxas_report_flags_spills_and_counts_entries() {
        let log = "ptxas info    : Compiling entry function 'a' for 'sm_90'\n\
                   ptxas info    : Used 12 registers, used 0 barriers\n\
                   ptxas info    : 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Compiling entry function 'b' for 'sm_90'\n\
                   ptxas info    : Used 40 registers\n\
                   ptxas info    : 8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n";
        let r = PtxasReport::parse(log);
        assert_eq!(r.entries, 2);
        assert_eq!(r.max_registers, 40);
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0].starts_with("b: "));
        // the allowed entry may have a stack frame, never spills
        let allowed = "ptxas info    : Compiling entry function 'accurate_sum_f32' for 'sm_90'\n\
                       ptxas info    : 312 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        assert!(PtxasReport::parse(allowed).problems.is_empty());
        let spilling = allowed.replace("0 bytes spill stores", "8 bytes spill stores");
        assert_eq!(PtxasReport::parse(&spilling).problems.len(), 1);
        let other = allowed.replace("accurate_sum_f32", "single_pass_b256_sum_f32");
        assert_eq!(PtxasReport::parse(&other).problems.len(), 1);
        // a block of 1024 fits 64 registers a thread, not 65 (allocated eight at a time)
        let wide = |regs: u32, entry: &str| {
            let log = format!(
                "ptxas info    : Compiling entry function '{entry}' for 'sm_90'\n\
                 ptxas info    : Used {regs} registers, used 1 barriers\n"
            );
            PtxasReport::parse(&log).too_wide.len()
        };
        assert_eq!(wide(64, "single_pass_b1024_argmax_bf16"), 0);
        assert_eq!(wide(65, "single_pass_b1024_argmax_bf16"), 1);
        assert_eq!(wide(65, "single_pass_b512_argmax_bf16"), 0);
        assert_eq!(wide(200, "segments_sum_bf16"), 0); // block chosen at launch: not this check's
    }
}
