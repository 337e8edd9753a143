//! The PTX build recipe, shared by `cargo xtask build-ptx` and the host
//! crate's build script, so that there is exactly one way the kernels become
//! PTX.
//!
//! rustc's own NVPTX backend compiles the `gpu` crate; `core` is built from
//! source (`-Zbuild-std=core`, the `rust-src` component) because rustup has
//! no prebuilt standard library for `nvptx64-nvidia-cuda`. `--emit=asm` makes
//! rustc write the PTX text of the whole crate as one `.s` file. See
//! `../shared/TOOLCHAIN.md` for why this route and not rust-cuda's
//! `rustc_codegen_nvvm`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The default target: Turing. PTX for sm_75 is JIT-compiled by the driver
/// for every GPU from Turing on (Ampere, Ada, Hopper, Blackwell), because PTX
/// is forward compatible. The kernels need nothing newer: `shfl.sync`,
/// `bar.warp.sync` and `match.any.sync` exist since sm_70.
pub const DEFAULT_ARCH: &str = "sm_75";

/// What to build.
#[derive(Clone, Debug)]
pub struct PtxBuild {
    /// The workspace root (holds the top-level `Cargo.toml`).
    pub workspace: PathBuf,
    /// `sm_75`, `sm_80`, `sm_90`, ...: rustc's `-C target-cpu`.
    pub arch: String,
    /// Cargo features of the `gpu` crate (`broken-sync-warp` for the sanitizer check).
    pub features: Vec<String>,
}

impl PtxBuild {
    /// The default build for a workspace: [`DEFAULT_ARCH`], no features.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        PtxBuild { workspace: workspace.into(), arch: DEFAULT_ARCH.to_string(), features: Vec::new() }
    }

    /// The cargo target directory for this configuration. It is separate from
    /// the workspace's `target/` so that a build script can run this build
    /// while the outer cargo holds the lock on `target/`.
    pub fn target_dir(&self) -> PathBuf {
        let mut name = self.arch.clone();
        for f in &self.features {
            name.push('-');
            name.push_str(f);
        }
        self.workspace.join("target").join("ptx").join(name)
    }

    /// Compile the `gpu` crate to PTX and copy it to `out`.
    ///
    /// Fails with the compiler's output if the build fails, and if the PTX
    /// calls a function it does not define (`.extern .func`: a call the
    /// driver cannot resolve, typically a panic path).
    pub fn build(&self, out: &Path) -> Result<(), String> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        // A build script inherits the outer build's configuration; none of it
        // is meant for this nested build.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            let outer = (key.starts_with("CARGO_") && key != "CARGO_HOME")
                || key.starts_with("RUSTC")
                || key.starts_with("RUSTDOC")
                || key.contains("RUSTFLAGS")
                || matches!(
                    key.as_str(),
                    "TARGET" | "HOST" | "OUT_DIR" | "OPT_LEVEL" | "PROFILE" | "DEBUG" | "NUM_JOBS"
                );
            if outer {
                cmd.env_remove(&key);
            }
        }
        cmd.current_dir(&self.workspace)
            .args(["rustc", "--package", "gpu", "--lib", "--release"])
            .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(self.target_dir())
            .arg("--message-format=json-render-diagnostics");
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        cmd.args(["--", "--emit=asm", "-C"]).arg(format!("target-cpu={}", self.arch));

        let output = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "building the gpu crate for {} failed:\n{}",
                self.arch,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let asm = asm_path(&stdout).ok_or("cargo reported no artifact for the gpu crate")?;
        let ptx = std::fs::read_to_string(&asm).map_err(|e| format!("cannot read {}: {e}", asm.display()))?;
        if let Some(line) = ptx.lines().find(|l| l.trim_start().starts_with(".extern .func")) {
            return Err(format!(
                "{}: the PTX calls a function nobody defines (a panic path or a core function that was not inlined): {line}",
                asm.display()
            ));
        }
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(out, ptx).map_err(|e| format!("cannot write {}: {e}", out.display()))
    }
}

/// The `.s` file rustc wrote for the gpu crate: it sits beside the
/// `libgpu-<hash>.rmeta` that cargo's artifact message names, as
/// `gpu-<hash>.s` (cargo reports the artifact even when nothing was rebuilt).
fn asm_path(cargo_json: &str) -> Option<PathBuf> {
    let line = cargo_json
        .lines()
        .find(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"gpu\""))?;
    let start = line.find("libgpu-")?;
    let end = start + line[start..].find(".rmeta")?;
    let meta = PathBuf::from(&line[line[..start].rfind('"')? + 1..end]);
    let hash = &line[start + "libgpu-".len()..end];
    Some(meta.parent()?.join(format!("gpu-{hash}.s")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_asm_beside_the_rmeta() {
        let json = r#"{"reason":"compiler-artifact","target":{"name":"gpu"},"filenames":["/w/t/release/libgpu.rlib","/w/t/release/deps/libgpu-27655a10fd983a3d.rmeta"],"fresh":true}"#;
        assert_eq!(asm_path(json), Some(PathBuf::from("/w/t/release/deps/gpu-27655a10fd983a3d.s")));
    }

    #[test]
    fn no_artifact_no_path() {
        assert_eq!(asm_path(r#"{"reason":"build-finished","success":true}"#), None);
    }

    #[test]
    fn target_dir_names_arch_and_features() {
        let mut b = PtxBuild::new("/w");
        assert_eq!(b.target_dir(), PathBuf::from("/w/target/ptx/sm_75"));
        b.features.push("broken-sync-warp".into());
        assert_eq!(b.target_dir(), PathBuf::from("/w/target/ptx/sm_75-broken-sync-warp"));
    }
}
