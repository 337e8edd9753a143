//! The `reduce` binary the CLI's tests run, and the checkout they read:
//! cargo's `CARGO_BIN_EXE_reduce`, or `$REDUCE_BIN` where the tests were
//! built on another machine (`cargo xtask bundle`). Only the `reduce`
//! package's tests include it (the library's have no such binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::Failed;

/// The `reduce` binary under test.
pub fn bin() -> String {
    std::env::var("REDUCE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_reduce").to_string())
}

/// `reduce ARGS`, run to its end.
pub fn reduce(args: &[&str]) -> Result<Output, Failed> {
    let bin = bin();
    Ok(Command::new(&bin).args(args).output().map_err(|e| format!("cannot run {bin}: {e}"))?)
}

/// The checkout the tests were built in, or (bundled onto another machine)
/// the one they run in.
pub fn root() -> Result<PathBuf, Failed> {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Ok(if built_in.join("docs").is_dir() { built_in } else { std::env::current_dir()? })
}
