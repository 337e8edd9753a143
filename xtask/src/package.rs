//! `package`: the crates a user needs, packaged as crates.io would take
//! them, with the kernels' PTX shipped inside the library's crate (so a
//! user's build needs stable Rust only), and proof that what ships is what
//! the kernels compile to now.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{cargo, gpu_build, run, workspace};

/// The crates a user needs, in the order they depend on each other.
pub(crate) const PUBLISHED: [&str; 4] = ["reduction-device", "reduction-kernels", "reduction-ptx-builder", "host"];

/// The target folder of the packaging, emptied first: cargo takes a
/// registry crate of a name and version for unchanging and would reuse what
/// it compiled of an earlier package. The `.crate` files land in its
/// `package/`.
pub(crate) const PACKAGED: &str = "target/packaged";

/// Where the library's crate ships its PTX, relative to `host/` (the paths
/// `host/build.rs` reads outside the workspace; git-ignored here): the
/// kernels built for sm_75, and the entries of an sm_80 build that use
/// what sm_75 lacks (`ptx_builder::newer_entries`).
const SHIPPED: [&str; 2] = ["kernels/gpu.ptx.lzma", "kernels/gpu-sm80.ptx.lzma"];

/// Copy the compressed PTX of the library's build into `host/kernels/`, run
/// `cargo package` and `cargo publish --dry-run` for the published crates
/// (each packaged into `target/packaged/package/` and built from its `.crate`, the
/// library's from the PTX it ships; nothing is uploaded), then check the PTX in the library's
/// `.crate` against a fresh build of the kernels.
pub(crate) fn package(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!("package takes no arguments (got {arg})"));
    }
    let json = run(cargo().args(["build", "--release", "--package", "host", "--message-format=json"]))?;
    let out_dir = json
        .lines()
        .filter(|l| l.contains("\"reason\":\"build-script-executed\"") && l.contains("/host#"))
        .find_map(|l| l.split("\"out_dir\":\"").nth(1).and_then(|r| r.split('"').next()))
        .ok_or("cargo reported no build script run for the host crate")?;
    for file in SHIPPED {
        let shipped = workspace().join("host").join(file);
        let built = PathBuf::from(out_dir).join(shipped.file_name().ok_or("a file name")?);
        if let Some(dir) = shipped.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::copy(&built, &shipped).map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    }

    forget_extracted()?;
    let target = workspace().join(PACKAGED);
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| format!("cannot empty {}: {e}", target.display()))?;
    }
    // the `.crate` files, then the checks of a publication (nothing uploaded)
    for step in [&["package"][..], &["publish", "--dry-run"]] {
        let mut cmd = cargo();
        cmd.args(step).arg("--allow-dirty").arg("--target-dir").arg(&target);
        for krate in PUBLISHED {
            cmd.args(["--package", krate]);
        }
        run(&mut cmd)?;
    }

    let version = env!("CARGO_PKG_VERSION");
    let krate = target.join(format!("package/host-{version}.crate"));
    let dir = workspace().join("target/ptx");
    let fresh = [dir.join("gpu.ptx"), dir.join("gpu-sm80.ptx")];
    gpu_build().build(&fresh[0])?;
    gpu_build().build_newer(&fresh[1])?;
    for (file, fresh) in SHIPPED.into_iter().zip(fresh) {
        let text = std::fs::read(&fresh).map_err(|e| format!("cannot read {}: {e}", fresh.display()))?;
        let member = format!("host-{version}/{file}");
        let tar = Command::new("tar").arg("-xzOf").arg(&krate).arg(&member).output();
        let packed = match tar {
            Ok(o) if o.status.success() => o.stdout,
            Ok(o) => {
                return Err(format!("{member} is not in {}: {}", krate.display(), String::from_utf8_lossy(&o.stderr)));
            }
            Err(e) => return Err(format!("cannot run tar: {e}")),
        };
        // the same text compresses to the same bytes (`ptx_builder::compress`)
        if packed != ptx_builder::compress(&text)? {
            return Err(format!(
                "{member} in {} ({} bytes compressed) is not the kernels' fresh build {} ({} bytes of text)",
                krate.display(),
                packed.len(),
                fresh.display(),
                text.len()
            ));
        }
        println!(
            "{}: ships {file}, {} bytes compressed, {} bytes of text, the same as a fresh build",
            krate.display(),
            packed.len(),
            text.len()
        );
    }
    Ok(())
}

/// Cargo verifies each package against a local registry of the others, and
/// extracts a registry's crate into `$CARGO_HOME/registry/src` once per name
/// and version: the copy an earlier run extracted would be built again,
/// stale. Remove the published crates' extracted copies (and cached
/// `.crate` files) first.
fn forget_extracted() -> Result<(), String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let version = env!("CARGO_PKG_VERSION");
    for (kind, suffix) in [("src", ""), ("cache", ".crate")] {
        let Ok(registries) = std::fs::read_dir(home.join("registry").join(kind)) else { continue };
        for registry in registries.flatten() {
            for name in PUBLISHED {
                let stale = registry.path().join(format!("{name}-{version}{suffix}"));
                let removed = if stale.is_dir() {
                    std::fs::remove_dir_all(&stale)
                } else if stale.is_file() {
                    std::fs::remove_file(&stale)
                } else {
                    continue;
                };
                removed.map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
            }
        }
    }
    Ok(())
}
