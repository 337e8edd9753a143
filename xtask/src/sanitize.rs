//! `sanitize`: every kernel and its CUDA C++ twin under compute-sanitizer,
//! and the planted bugs that must be caught.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{PLANTED, broken_ptx, build_reduce, options, workspace};

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

pub(crate) fn sanitize(args: &[String]) -> Result<(), String> {
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
    // 64-bit types, sum, max and arg-max (whose accumulator, wider than an
    // element, takes the heavy tail to `segments_scheduled`); reduction by
    // key; each shaped kernel on a small case (rows, columns, segments).
    let (types, ops) = ("i32,f64", "sum,max,argmax");
    let check = ["check", "--n", "1000,2^16+7", "--type", types, "--op", ops];
    // one shaped line for each type and operation of `check`
    let shaped_lines = types.split(',').count() * ops.split(',').count();
    let mut failed = false;
    for tool in ["memcheck", "racecheck", "synccheck", "initcheck"] {
        let (ok, errors, text) = sanitizer_run(&sanitizer, tool, &reduce, &check)?;
        let _ = std::fs::write(logs.join(format!("{tool}.log")), &text);
        let shaped = text.lines().filter(|l| l.contains(" shaped: ")).count();
        let good = ok && errors == 0 && shaped == shaped_lines && text.contains("every result matches the CPU");
        println!("{tool:<10} {errors} errors ({shaped} shaped checks){}", if good { "" } else { "  <-- FAILED" });
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
    for (feature, tool, kernel, by_results) in PLANTED {
        let ptx = broken.join(format!("{feature}.ptx")).display().to_string();
        let mut args = vec!["--ptx", &ptx, "check", "--kernel", kernel, "--n", "1000"];
        if kernel != "shaped" {
            args.extend(["--block", "128"]); // the shaped kernels' blocks are their own
        }
        let (_, errors, text) = sanitizer_run(&sanitizer, tool, &reduce, &args)?;
        let _ = std::fs::write(logs.join(format!("{tool}-{feature}.log")), &text);
        let wrong = text.contains("check: MISMATCH");
        let caught = errors > 0 || by_results && wrong;
        println!(
            "{tool} on {kernel} built with {feature}: {errors} errors{}{}",
            if wrong { ", results wrong" } else { "" },
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

    #[test]
    fn sanitizer_summaries_are_counted() {
        assert_eq!(reported_errors("========= ERROR SUMMARY: 0 errors\n"), 0);
        assert_eq!(reported_errors("========= ERROR SUMMARY: 3 errors\n"), 3);
        let limited = "========= ERROR SUMMARY: 128 errors\n========= ERROR SUMMARY: 28 errors were not printed.\n";
        assert_eq!(reported_errors(limited), 128);
        assert_eq!(reported_errors("========= RACECHECK SUMMARY: 12 hazards displayed (8 errors, 4 warnings)\n"), 12);
        assert_eq!(reported_errors("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"), 0);
    }
}
