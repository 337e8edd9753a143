//! Builds the kernels' PTX with the same recipe as `cargo xtask build-ptx`
//! (`xtask::PtxBuild`) and leaves it in `OUT_DIR/gpu.ptx`, where `src/ptx.rs`
//! embeds it. So `cargo test -p host` works on a fresh clone with nothing run
//! before it.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("host/ sits in the workspace").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("gpu.ptx");
    println!("cargo:rerun-if-changed={}", workspace.join("gpu").display());
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", workspace.join("rust-toolchain.toml").display());
    if let Err(e) = xtask::PtxBuild::new(workspace).build(&out) {
        // A build script reports failure by panicking; the message is the compiler's output.
        panic!("{e}");
    }
}
