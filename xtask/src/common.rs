//! What the developer commands share: the workspace, the kernels' build,
//! flags, running a command, the release `reduce` and the PTX of the planted bugs.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_builder::PtxBuild;

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The cargo that runs this xtask (`$CARGO`), in the workspace.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace());
    cmd
}

/// The build of the workspace's kernels (`gpu/`), kept in `target/ptx`.
pub(crate) fn gpu_build() -> PtxBuild {
    PtxBuild::new(workspace().join("gpu"), "reduction-kernels", workspace().join("target").join("ptx"))
}

/// `--name value` pairs; anything else is an error naming the flag.
pub(crate) fn options<'a>(args: &'a [String], known: &[&str]) -> Result<Vec<(&'a str, &'a str)>, String> {
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

pub(crate) fn run(cmd: &mut Command) -> Result<String, String> {
    let output = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{cmd:?} failed:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Build the release `reduce` CLI and return its path.
pub(crate) fn build_reduce() -> Result<PathBuf, String> {
    let args = ["build", "--release", "--package", "reduce", "--bin", "reduce"];
    run(cargo().args(args))?;
    Ok(workspace().join("target/release/reduce"))
}

/// Build the PTX of each planted bug into `dir`.
pub(crate) fn broken_ptx(dir: &Path) -> Result<(), String> {
    for (i, (feature, ..)) in PLANTED.iter().enumerate() {
        if PLANTED[..i].iter().any(|(f, ..)| f == feature) {
            continue; // built already
        }
        let mut build = gpu_build();
        build.features.push((*feature).into());
        build.build(&dir.join(format!("{feature}.ptx")))?;
    }
    Ok(())
}

/// The planted bugs, each with the checker that must catch it, the kernel
/// it shows in, and whether the wrong results `reduce check` finds under
/// the checker count as caught: a `__syncwarp` whose mask leaves out half
/// the warp (`device/src/prim/warp.rs`), and a `__syncthreads` that does
/// nothing (`device/src/prim/thread.rs`), each in a flat kernel and in the
/// shaped ones (`reduce check --kernel shaped`). Racecheck's analysis
/// counts no hazard for the shaped kernels' missing barrier, whose rows and
/// columns come out wrong; every other plant must show in its checker's
/// errors. Each is a test-only feature of the `gpu` crate, built into
/// `<feature>.ptx`.
pub(crate) const PLANTED: [(&str, &str, &str, bool); 4] = [
    ("broken-sync-warp", "synccheck", "reduce5", false),
    ("broken-sync-threads", "racecheck", "reduce3", false),
    ("broken-sync-warp", "synccheck", "shaped", false),
    ("broken-sync-threads", "racecheck", "shaped", true),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_reject_unknown_flags_and_missing_values() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(options(&args(&["--arch"]), &["--arch"]).is_err());
        assert!(options(&args(&["--nope", "x"]), &["--arch"]).is_err());
        assert_eq!(options(&args(&["--arch", "sm_90"]), &["--arch"]).unwrap(), vec![("--arch", "sm_90")]);
    }
}
