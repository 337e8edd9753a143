//! The `reduce` command line, end to end: bad input is one `error:` line on
//! stderr and a non-zero exit, before any GPU is touched; on a GPU, `run`
//! checks every kernel and exits 0.
//!
//! The binary is cargo's `CARGO_BIN_EXE_reduce`, or `$REDUCE_BIN` where the
//! tests were built on another machine (`cargo xtask bundle`).

mod common;

use std::process::{Command, Output};

use common::{cpu_trial, ensure, gpu_trial};
use libtest_mimic::Failed;

fn reduce(args: &[&str]) -> Result<Output, Failed> {
    let bin = std::env::var("REDUCE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_reduce").to_string());
    Ok(Command::new(&bin).args(args).output().map_err(|e| format!("cannot run {bin}: {e}"))?)
}

/// Exactly one line on stderr, starting with `error:` and containing `what`,
/// and exit code 1.
fn fails_in_one_line(args: &[&str], what: &str) -> Result<(), Failed> {
    let out = reduce(args)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(out.status.code() == Some(1), || format!("{args:?}: exit {:?}, stderr {stderr}", out.status.code()))?;
    ensure(stderr.lines().count() == 1 && stderr.starts_with("error: ") && stderr.contains(what), || {
        format!("{args:?}: stderr {stderr:?}")
    })
}

fn main() {
    let trials = vec![
        cpu_trial("cli::unknown_kernel", || fails_in_one_line(&["run", "--kernel", "reduce0"], "no kernel named")),
        cpu_trial("cli::bad_block", || {
            fails_in_one_line(&["run", "--kernel", "reduce5", "--block", "32"], "too small")
        }),
        cpu_trial("cli::bad_type", || fails_in_one_line(&["run", "--type", "f16"], "unknown type")),
        cpu_trial("cli::bad_op", || fails_in_one_line(&["run", "--op", "prod"], "unknown operator")),
        cpu_trial("cli::bad_finish", || fails_in_one_line(&["run", "--finish", "gpu-ish"], "--finish")),
        cpu_trial("cli::missing_ptx_file", || fails_in_one_line(&["--ptx", "/no/such.ptx", "info"], "cannot read PTX")),
        cpu_trial("cli::list_names_every_kernel", || {
            let out = reduce(&["list"])?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || "reduce list failed".into())?;
            for k in reduction::KERNELS {
                ensure(text.contains(k.id), || format!("{} missing from reduce list", k.id))?;
            }
            Ok(())
        }),
        cpu_trial("cli::no_gpu_is_one_line", || match reduction::no_gpu_reason() {
            Some(reason) => fails_in_one_line(&["run"], &reason),
            None => Ok(()), // covered by cli::run_checks_every_kernel
        }),
        gpu_trial("cli::run_checks_every_kernel", || {
            let out = reduce(&["run", "--n", "100003", "--type", "f32", "--runs", "3"])?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || format!("exit {:?}: {text}", out.status.code()))?;
            for k in reduction::KERNELS {
                let line = text.lines().find(|l| l.starts_with(k.id)).ok_or(format!("no line for {}", k.id))?;
                ensure(line.contains(" OK "), || format!("not OK: {line}"))?;
            }
            Ok(())
        }),
    ];
    common::run(trials)
}
