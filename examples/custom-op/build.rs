//! Build `kernels/` to PTX (the nightly of `kernels/rust-toolchain.toml`,
//! fetched through rustup if missing) into `OUT_DIR/my_kernels.ptx`.
use std::path::PathBuf;

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("kernels");
    let build = ptx_builder::PtxBuild::new(&kernels, "my-kernels", ptx_builder::nested_target_dir(&out_dir));
    build.print_rerun_if_changed();
    if let Err(e) = build.build(&out_dir.join("my_kernels.ptx")) {
        panic!("{e}");
    }
}
