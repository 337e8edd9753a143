//! Builds the kernels' PTX with the workspace's one recipe (`ptx_builder`,
//! the same as `cargo xtask build-ptx`) and leaves it in `OUT_DIR/gpu.ptx`,
//! and compressed (LZMA, a window holding the whole text: the entries
//! repeat each other) in `OUT_DIR/gpu.ptx.lzma`, which `src/ptx.rs` embeds
//! (about 2 MB in every binary instead of 49 MB of text). Beside it,
//! `gpu-sm80.ptx.lzma`: the entries of a build for sm_80 that use what
//! sm_75 lacks (`ptx_builder::newer_entries`), which cards of sm_80 and
//! later load instead. Editing `gpu/src` rebuilds it on the next
//! `cargo build`/`test`/`run`. The nested build keeps its files in the
//! workspace's `target/ptx` (as `cargo xtask` does), whichever project
//! builds the library by path, and the compressed bytes in its `lzma`
//! folder under the text's hash: the other profiles, `cargo doc` and the
//! examples copy them instead of compressing again.
//!
//! Outside the workspace (the crate as published) there are no kernel
//! sources beside it: it embeds the PTX it ships, `kernels/gpu.ptx.lzma`,
//! (and `kernels/gpu-sm80.ptx.lzma`), which `cargo xtask package` compiled
//! from them, so a user's build needs stable Rust only. `REDUCTION_PTX=<file>`
//! embeds that PTX instead, alone (made with `cargo xtask build-ptx`). It
//! must hold every entry the registry names; the library's tests check that.

use std::path::PathBuf;

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let (out, newer) = (out_dir.join("gpu.ptx"), out_dir.join(NEWER));
    println!("cargo:rerun-if-env-changed=REDUCTION_PTX");
    if let Some(file) = std::env::var_os("REDUCTION_PTX") {
        println!("cargo:rerun-if-changed={}", PathBuf::from(&file).display());
        if let Err(e) = std::fs::copy(&file, &out) {
            panic!("REDUCTION_PTX={}: {e}", PathBuf::from(&file).display());
        }
        // no entries: every card loads them from that PTX
        std::fs::write(&newer, "").unwrap_or_else(|e| panic!("{}: {e}", newer.display()));
        compress(&[&out, &newer], &ptx_builder::nested_target_dir(&out_dir));
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let gpu = manifest.join("..").join("gpu");
    // in the workspace: the kernels' sources are beside the crate, under the
    // workspace's manifest (a vendor folder has the sources but no manifest)
    let in_workspace = gpu.join("src").is_dir() && manifest.join("..").join("Cargo.toml").is_file();
    if !in_workspace {
        // the published crate: the PTX it ships
        for built in [&out, &newer] {
            let name = built.with_extension("ptx.lzma");
            let shipped = manifest.join("kernels").join(name.file_name().expect("a file name"));
            println!("cargo:rerun-if-changed={}", shipped.display());
            if let Err(e) = std::fs::copy(&shipped, &name) {
                panic!("{}: {e} (no kernel sources beside the crate and no PTX shipped with it)", shipped.display());
            }
        }
        return;
    }
    // the nested build's folder is the workspace's, whichever project builds
    // the library (`cargo xtask` uses it too): built once, not once a project
    let nested = manifest.join("..").join("target").join("ptx");
    let build = ptx_builder::PtxBuild::new(&gpu, "reduction-kernels", &nested);
    build.print_rerun_if_changed();
    // the workspace manifest holds the kernels' release profile
    println!("cargo:rerun-if-changed={}", manifest.join("..").join("Cargo.toml").display());
    // A build script reports failure by panicking; the message is the compiler's output.
    build.build(&out).unwrap_or_else(|e| panic!("{e}"));
    build.build_newer(&newer).unwrap_or_else(|e| panic!("{e}"));
    compress(&[&out, &newer], &nested);
}

/// The second PTX's file (`ptx_builder::NEWER_ARCH`'s entries), as `src/ptx.rs` names it.
const NEWER: &str = "gpu-sm80.ptx";

/// Each PTX compressed beside it (`.lzma`), through the cache in `nested`'s
/// `lzma` folder (`ptx_builder::compress_file`): a minute's work once a text.
fn compress(ptx: &[&std::path::Path], nested: &std::path::Path) {
    for file in ptx {
        ptx_builder::compress_file(file, &nested.join("lzma")).unwrap_or_else(|e| panic!("{e}"));
    }
}
