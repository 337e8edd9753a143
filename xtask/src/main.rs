//! `cargo xtask <command>`: the developer commands.
//!
//! * `build-ptx [--arch sm_XX] [--features F,..] [--out DIR]`: compile the
//!   kernels to PTX, write `DIR/gpu.ptx`, print its path.
//! * `check-ptx`: assemble every kernel with `ptxas` for sm_75, sm_80 and
//!   sm_90; fail on spills, local memory or unresolved calls, and note the
//!   entries built for a block size (`_b1024_`) whose registers a block of
//!   it cannot have there (the library launches those at a smaller one). `ptxas` comes
//!   from PyPI (`nvidia-cuda-nvcc-cu12`) and is installed into `.tools/`.
//! * `bundle [--out DIR]`: build the release test executables, the CLI, this
//!   xtask, the downstream example and the PTX of the planted bugs, and copy
//!   them into `DIR` (default `.gpu/`), with `run-tests.sh`, to be carried to
//!   a GPU machine that has no Rust toolchain.
//! * `sanitize [--bin PATH] [--broken-ptx DIR] [--logs DIR]`: run every
//!   kernel under compute-sanitizer's memcheck, racecheck, synccheck and
//!   initcheck, and their CUDA C++ twins (NVRTC) under memcheck and
//!   racecheck (zero errors allowed), then prove the checks can fail: reduce5
//!   built with the test-only feature `broken-sync-warp` (a `__syncwarp`
//!   whose mask leaves out half the warp) must be reported by synccheck, and
//!   reduce3 built with `broken-sync-threads` (no `__syncthreads`) by
//!   racecheck.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use ptx_builder::PtxBuild;

/// The `ptxas` wheel `check-ptx` installs (CUDA 12.9).
const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc-cu12==12.9.86";
/// Where `check-ptx` installs it, relative to the workspace (git-ignored).
const TOOLS_DIR: &str = ".tools/cuda";
/// The architectures `check-ptx` assembles for: Turing, Ampere, Hopper.
const CHECK_ARCHS: [&str; 3] = ["sm_75", "sm_80", "sm_90"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build-ptx") => build_ptx(&args[1..]),
        Some("check-ptx") => check_ptx(&args[1..]),
        Some("bundle") => bundle(&args[1..]),
        Some("sanitize") => sanitize(&args[1..]),
        _ => Err(format!(
            "usage: cargo xtask <command>\n\n{}",
            "commands:\n  build-ptx [--arch sm_XX] [--features F,..] [--out DIR]\n  check-ptx [--ptxas PATH]\n  bundle [--out DIR]\n  sanitize [--bin PATH] [--broken-ptx DIR] [--logs DIR]"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The build of the workspace's kernels (`gpu/`), kept in `target/ptx`.
fn gpu_build() -> PtxBuild {
    PtxBuild::new(workspace().join("gpu"), "gpu", workspace().join("target").join("ptx"))
}

/// `--name value` pairs; anything else is an error naming the flag.
fn options<'a>(args: &'a [String], known: &[&str]) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag:?} (expected one of {known:?})"));
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        out.push((flag.as_str(), value.as_str()));
    }
    Ok(out)
}

fn build_ptx(args: &[String]) -> Result<(), String> {
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

fn check_ptx(args: &[String]) -> Result<(), String> {
    let opts = options(args, &["--ptxas"])?;
    let ptxas = ptxas(opts.first().map(|(_, v)| *v))?;
    let out_dir = workspace().join("target").join("ptx");
    let ptx = out_dir.join("gpu.ptx");
    gpu_build().build(&ptx)?;
    let entries = std::fs::read_to_string(&ptx)
        .map_err(|e| format!("cannot read {}: {e}", ptx.display()))?
        .lines()
        .filter(|l| l.starts_with(".visible .entry"))
        .count();
    let mut failed = false;
    for arch in CHECK_ARCHS {
        let output = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .args(["-v", "-o", "/dev/null"])
            .arg(&ptx)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
        let log = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
        let log_path = out_dir.join(format!("ptxas-{arch}.log"));
        std::fs::write(&log_path, &log).map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
        let report = PtxasReport::parse(&log);
        let ok = output.status.success() && report.problems.is_empty() && report.entries == entries;
        println!(
            "{arch}: {}/{entries} entries assembled, max {} registers, {} with spills or stack{}",
            report.entries,
            report.max_registers,
            report.problems.len(),
            if ok { "" } else { "  <-- FAILED" }
        );
        for p in report.problems.iter().take(10) {
            println!("    {p}");
        }
        for w in &report.too_wide {
            println!("    note: {w} (launched at a smaller block: the dispatch steps it down)");
        }
        if !output.status.success() {
            println!("    ptxas failed; see {}", log_path.display());
        }
        failed |= !ok;
    }
    if failed {
        return Err("check-ptx failed".into());
    }
    println!("check-ptx: OK ({})", ptx.display());
    Ok(())
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
                    if let Some(block) = fixed_block(&current)
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

/// The block size an entry is built for, from its name (`single_pass_b1024_sum_f32`:
/// 1024); `None` for entries that take it at run time.
fn fixed_block(entry: &str) -> Option<u32> {
    entry.split('_').find_map(|w| w.strip_prefix('b').and_then(|n| n.parse().ok()))
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let output = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{cmd:?} failed:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Copy an executable without its debug info (the bundle travels to the GPU
/// machine, whose uploads are size-limited).
fn copy_stripped(from: &Path, to: &Path) -> Result<(), String> {
    run(Command::new("objcopy").arg("--strip-debug").arg(from).arg(to)).map(drop)
}

/// Build everything a GPU machine without Rust needs and copy it into one
/// folder: the test executables, the CLI, and a script that runs the tests.
fn bundle(args: &[String]) -> Result<(), String> {
    let mut out = workspace().join(".gpu");
    for (_, value) in options(args, &["--out"])? {
        out = PathBuf::from(value);
    }
    let bin = out.join("bin");
    if bin.exists() {
        // no test executable of an earlier bundle may stay behind
        std::fs::remove_dir_all(&bin).map_err(|e| format!("cannot empty {}: {e}", bin.display()))?;
    }
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let json = run(Command::new(&cargo).current_dir(workspace()).args([
        "test",
        "--package",
        "host",
        "--package",
        "reduce",
        "--release",
        "--no-run",
        "--message-format=json",
    ]))?;
    let reduce = build_reduce()?;
    let mut tests = Vec::new();
    // Integration tests only (`tests/*.rs`, attached to host and reduce): the
    // unit tests, the test kit's included, need no GPU.
    let test_artifacts = json.lines().filter(|l| l.contains("\"kind\":[\"test\"]") && l.contains("\"executable\":\""));
    for line in test_artifacts {
        let Some(exe) = line.split("\"executable\":\"").nth(1).and_then(|r| r.split('"').next()) else {
            continue;
        };
        let exe = PathBuf::from(exe);
        let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        copy_stripped(&exe, &bin.join(&name))?;
        tests.push(name);
    }
    copy_stripped(&reduce, &bin.join("reduce"))?;
    run(Command::new(&cargo).current_dir(workspace()).args(["build", "--release", "--package", "xtask"]))?;
    copy_stripped(&workspace().join("target/release/xtask"), &bin.join("xtask"))?;
    // one process per GPU, bootstrapped through NCCL (host/examples)
    let example = ["build", "--release", "--package", "host", "--example", "one_process_per_gpu"];
    run(Command::new(&cargo).current_dir(workspace()).args(example))?;
    let built = workspace().join("target/release/examples/one_process_per_gpu");
    copy_stripped(&built, &bin.join("one_process_per_gpu"))?;
    // the stable downstream project, as a user builds it
    let downstream = workspace().join("examples/downstream");
    run(Command::new("cargo").current_dir(&downstream).args(["+stable", "build", "--release"]))?;
    copy_stripped(&downstream.join("target/release/downstream"), &bin.join("downstream"))?;
    // the user's own operator, built to PTX by its build script
    let custom = workspace().join("examples/custom-op");
    run(Command::new("cargo").current_dir(&custom).args(["+stable", "build", "--release"]))?;
    copy_stripped(&custom.join("target/release/custom-op"), &bin.join("custom-op"))?;
    broken_ptx(&out)?;
    tests.sort();
    let script = run_tests_script(&tests);
    let script_path = out.join("run-tests.sh");
    std::fs::write(&script_path, script).map_err(|e| format!("cannot write {}: {e}", script_path.display()))?;
    println!(
        "{} ({} test executables, reduce, xtask, one_process_per_gpu, downstream, custom-op)",
        out.display(),
        tests.len()
    );
    Ok(())
}

/// Build the release `reduce` CLI and return its path.
fn build_reduce() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = ["build", "--release", "--package", "reduce", "--bin", "reduce"];
    run(Command::new(cargo).current_dir(workspace()).args(args))?;
    Ok(workspace().join("target/release/reduce"))
}

/// `run-tests.sh`: runs each test executable in `bin/` beside it, from the
/// bundle's parent folder, with `REDUCTION_REQUIRE_GPU=1`; works when called
/// by any path, relative or absolute, from any folder.
fn run_tests_script(tests: &[String]) -> String {
    let mut script = String::from(
        "#!/usr/bin/env bash\n# Written by `cargo xtask bundle`: runs every test executable of the workspace,\n\
         # on a GPU: a test that would skip for want of one fails instead.\n\
         here=\"$(cd \"$(dirname \"$0\")\" && pwd)\" || exit 1\n\
         cd \"$here/..\" || exit 1\n\
         export REDUCE_BIN=\"$here/bin/reduce\" REDUCTION_REQUIRE_GPU=1\nstatus=0\n",
    );
    for t in tests {
        script.push_str(&format!("echo \"== {t}\"; \"$here/bin/{t}\" \"$@\" || status=1\n"));
    }
    script.push_str("exit $status\n");
    script
}

/// The planted bugs, each with the checker that must catch it and the
/// kernel it shows in: a `__syncwarp` whose mask leaves out half the warp
/// (`gpu/src/prim/warp.rs`), and a `__syncthreads` that does nothing
/// (`gpu/src/prim/thread.rs`). Each is a test-only feature of the `gpu`
/// crate, built into `<feature>.ptx`.
const PLANTED: [(&str, &str, &str); 2] =
    [("broken-sync-warp", "synccheck", "reduce5"), ("broken-sync-threads", "racecheck", "reduce3")];

/// Build the PTX of each planted bug into `dir`.
fn broken_ptx(dir: &Path) -> Result<(), String> {
    for (feature, _, _) in PLANTED {
        let mut build = gpu_build();
        build.features.push(feature.into());
        build.build(&dir.join(format!("{feature}.ptx")))?;
    }
    Ok(())
}

/// `compute-sanitizer` on `$PATH` or in CUDA's default place.
fn compute_sanitizer() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("compute-sanitizer"))
        .find(|p| p.is_file());
    on_path.or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/compute-sanitizer")).filter(|p| p.is_file()))
}

/// One sanitizer run of `reduce check ...`: its exit status and the number
/// of errors it reported (its "ERROR SUMMARY" line).
fn sanitizer_run(sanitizer: &Path, tool: &str, reduce: &Path, args: &[&str]) -> Result<(bool, usize, String), String> {
    let output = Command::new(sanitizer)
        .args(["--tool", tool, "--error-exitcode", "99", "--print-limit", "20"])
        .arg(reduce)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", sanitizer.display()))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    Ok((output.status.success(), reported_errors(&text), text))
}

/// The errors a sanitizer log reports: memcheck, synccheck and initcheck end
/// with `ERROR SUMMARY: N errors`, racecheck with `RACECHECK SUMMARY: N
/// hazards displayed (E errors, W warnings)` (errors and warnings count).
fn reported_errors(log: &str) -> usize {
    let number = |s: &str| s.trim().split(' ').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
    log.lines()
        .map(|l| {
            if let Some(rest) = l.split("ERROR SUMMARY: ").nth(1).filter(|r| !r.contains("not printed")) {
                number(rest)
            } else if let Some(rest) = l.split("hazards displayed (").nth(1) {
                number(rest) + rest.split(", ").nth(1).map_or(0, number)
            } else {
                0
            }
        })
        .sum()
}

fn sanitize(args: &[String]) -> Result<(), String> {
    let Some(sanitizer) = compute_sanitizer() else {
        return Err(
            "compute-sanitizer not found (it comes with the CUDA toolkit: put its bin/ on PATH); nothing was checked"
                .into(),
        );
    };
    let mut reduce = None;
    let mut broken = None;
    let mut logs = workspace().join("target/sanitize");
    for (flag, value) in options(args, &["--bin", "--broken-ptx", "--logs"])? {
        match flag {
            "--bin" => reduce = Some(PathBuf::from(value)),
            "--broken-ptx" => broken = Some(PathBuf::from(value)),
            _ => logs = PathBuf::from(value),
        }
    }
    let reduce = match reduce {
        Some(path) => path,
        None => build_reduce()?,
    };
    let broken = match broken {
        Some(dir) => dir,
        None => {
            let dir = workspace().join("target/ptx");
            broken_ptx(&dir)?;
            dir
        }
    };
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    // Every kernel at every block size, a small and a large size, 32- and
    // 64-bit types, sum and max.
    let check = ["check", "--n", "1000,2^16+7", "--type", "i32,f64", "--op", "sum,max"];
    let mut failed = false;
    for tool in ["memcheck", "racecheck", "synccheck", "initcheck"] {
        let (ok, errors, text) = sanitizer_run(&sanitizer, tool, &reduce, &check)?;
        let _ = std::fs::write(logs.join(format!("{tool}.log")), &text);
        let good = ok && errors == 0 && text.contains("every result matches the CPU");
        println!("{tool:<10} {errors} errors{}", if good { "" } else { "  <-- FAILED" });
        failed |= !good;
    }
    // The CUDA C++ twins (the CUDA C++ column of `reduce bench`, compiled
    // with NVRTC): every kernel at a small and an odd size, both types, the
    // default block and the smallest and largest, in the twins' own process
    // as `reduce bench` runs them.
    for tool in ["memcheck", "racecheck"] {
        for (ty, block) in [("i32", "128"), ("f32", "128"), ("i32", "32"), ("f32", "1024")] {
            let args =
                ["bench", "--n", "1000,2^16+7", "--type", ty, "--block", block, "--runs", "1", "--cuda-from", "0"];
            let (ok, errors, text) = sanitizer_run(&sanitizer, tool, &reduce, &args)?;
            let _ = std::fs::write(logs.join(format!("{tool}-cuda-{ty}-b{block}.log")), &text);
            let cells = text.lines().filter(|l| l.starts_with("{\"Cell\"")).count();
            let all_ok = cells >= 20 && !text.contains("\"Err\"") && !text.contains("\"ok\":false");
            let good = ok && errors == 0 && all_ok;
            println!(
                "{tool:<10} {errors} errors, CUDA C++ twins ({ty}, block {block}: {cells} checked){}",
                if good { "" } else { "  <-- FAILED" }
            );
            failed |= !good;
        }
    }
    // The checks must be able to fail: each planted bug must be reported
    // by its checker.
    for (feature, tool, kernel) in PLANTED {
        let ptx = broken.join(format!("{feature}.ptx")).display().to_string();
        let args = ["--ptx", &ptx, "check", "--kernel", kernel, "--n", "1000", "--block", "128"];
        let (_, errors, text) = sanitizer_run(&sanitizer, tool, &reduce, &args)?;
        let _ = std::fs::write(logs.join(format!("{tool}-{feature}.log")), &text);
        let caught = errors > 0;
        println!(
            "{tool} on {kernel} built with {feature}: {errors} errors{}",
            if caught { "" } else { "  <-- NOT caught" }
        );
        failed |= !caught;
    }
    println!("logs: {}", logs.display());
    if failed { Err("sanitize failed".into()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run-tests.sh` called by a relative path from another folder runs
    /// every test (it once changed folder first and then lost its own path),
    /// passes arguments on, requires the GPU, and fails when a test fails.
    #[test]
    fn run_tests_script_works_from_a_relative_path() {
        let root = std::env::temp_dir().join(format!("xtask-bundle-{}", std::process::id()));
        let bin = root.join("bundle/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let fake = |name: &str, body: &str| {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
            run(Command::new("chmod").arg("+x").arg(&path)).unwrap();
        };
        fake("a", "echo \"a $1 $REDUCTION_REQUIRE_GPU $(basename \"$PWD\")\"");
        fake("b", "echo \"b $1\"");
        let tests = ["a".to_string(), "b".to_string()];
        std::fs::write(root.join("bundle/run-tests.sh"), run_tests_script(&tests)).unwrap();
        let out = Command::new("bash").arg("bundle/run-tests.sh").arg("--x").current_dir(&root).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let dir = root.file_name().unwrap().to_string_lossy();
        assert!(out.status.success(), "{text}");
        assert!(text.contains(&format!("a --x 1 {dir}")) && text.contains("b --x"), "{text}");
        fake("b", "exit 1");
        let out = Command::new("bash").arg("bundle/run-tests.sh").current_dir(&root).output().unwrap();
        assert!(!out.status.success());
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The README's "Use it from your project" program is the one CI builds.
    #[test]
    fn readme_shows_the_downstream_program() {
        let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
        let program = std::fs::read_to_string(workspace().join("examples/downstream/src/main.rs")).unwrap();
        let section = readme.split("## Use it from your project").nth(1).expect("the README has the section");
        let code = section.split("```rust\n").nth(1).and_then(|c| c.split("```").next()).expect("a rust block");
        assert_eq!(code, program, "README.md and examples/downstream/src/main.rs differ");
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

    #[test]
    fn sanitizer_summaries_are_counted() {
        assert_eq!(reported_errors("========= ERROR SUMMARY: 0 errors\n"), 0);
        assert_eq!(reported_errors("========= ERROR SUMMARY: 3 errors\n"), 3);
        let limited = "========= ERROR SUMMARY: 128 errors\n========= ERROR SUMMARY: 28 errors were not printed.\n";
        assert_eq!(reported_errors(limited), 128);
        assert_eq!(reported_errors("========= RACECHECK SUMMARY: 12 hazards displayed (8 errors, 4 warnings)\n"), 12);
        assert_eq!(reported_errors("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"), 0);
    }

    #[test]
    fn options_reject_unknown_flags_and_missing_values() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(options(&args(&["--arch"]), &["--arch"]).is_err());
        assert!(options(&args(&["--nope", "x"]), &["--arch"]).is_err());
        assert_eq!(options(&args(&["--arch", "sm_90"]), &["--arch"]).unwrap(), vec![("--arch", "sm_90")]);
    }
}
