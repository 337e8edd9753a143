//! `cargo xtask <command>`: the developer commands.
//!
//! * `build-ptx [--arch sm_XX] [--features F,..] [--out DIR]`: compile the
//!   kernels to PTX, write `DIR/gpu.ptx`, print its path.
//! * `check-ptx`: assemble every kernel with `ptxas` for sm_75, sm_80 and
//!   sm_90; fail on spills, local memory or unresolved calls, and note the
//!   entries built for a block size (`_b1024_`) whose registers a block of
//!   it cannot have there (the library launches those at a smaller one). `ptxas` comes
//!   from PyPI (`nvidia-cuda-nvcc-cu12`) and is installed into `.tools/`.
//! * `bundle [--out DIR]`: build the release test executables, the CLI, this
//!   xtask, the downstream example and the PTX of the planted bugs, and copy
//!   them into `DIR` (default `.gpu/`), with `run-tests.sh`, to be carried to
//!   a GPU machine that has no Rust toolchain.
//! * `package`: copy the compressed PTX of the library's build into
//!   `host/kernels/`, `cargo publish --dry-run` the crates a user needs
//!   (reduction-device, reduction-kernels, reduction-ptx-builder, host), and check that the PTX in
//!   the library's `.crate` is a fresh build of the kernels.
//! * `sanitize [--bin PATH] [--broken-ptx DIR] [--logs DIR]`: run every
//!   kernel under compute-sanitizer's memcheck, racecheck, synccheck and
//!   initcheck, and their CUDA C++ twins (NVRTC) under memcheck and
//!   racecheck (zero errors allowed), then prove the checks can fail: reduce5
//!   built with the test-only feature `broken-sync-warp` (a `__syncwarp`
//!   whose mask leaves out half the warp) must be reported by synccheck, and
//!   reduce3 built with `broken-sync-threads` (no `__syncthreads`) by
//!   racecheck.

mod bundle;
mod common;
mod package;
mod ptx;
mod sanitize;

use std::process::ExitCode;

use bundle::bundle;
use package::package;
use ptx::{build_ptx, check_ptx};
use sanitize::sanitize;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build-ptx") => build_ptx(&args[1..]),
        Some("check-ptx") => check_ptx(&args[1..]),
        Some("bundle") => bundle(&args[1..]),
        Some("package") => package(&args[1..]),
        Some("sanitize") => sanitize(&args[1..]),
        _ => Err(format!(
            "usage: cargo xtask <command>\n\n{}",
            "commands:\n  build-ptx [--arch sm_XX] [--features F,..] [--out DIR]\n  check-ptx [--ptxas PATH]\n  bundle [--out DIR]\n  package\n  sanitize [--bin PATH] [--broken-ptx DIR] [--logs DIR]"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
