//! Records the commit the binary is built from (`REDUCE_COMMIT`, with
//! `-dirty` for uncommitted changes, `unknown` outside a git checkout), so
//! that every benchmark report names the code it measured.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit =
        match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["status", "--porcelain", "--untracked-files=no"])) {
            (Some(hash), Some(status)) if status.is_empty() => hash,
            (Some(hash), Some(_)) => format!("{hash}-dirty"),
            _ => "unknown".to_string(),
        };
    println!("cargo:rustc-env=REDUCE_COMMIT={commit}");
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
}
