//! Parallel reductions written in Rust for NVIDIA GPUs.
//!
//! This crate is compiled twice:
//!
//! * for `nvptx64-nvidia-cuda`, where it becomes the PTX that the host crate
//!   loads: one file per optimisation step in `kernels/`, and the table of
//!   `extern "gpu-kernel"` entries in `entries.rs`, on the device library
//!   (`reduction_device`: the primitives `prim`, the warp, block and grid
//!   reductions, re-exported here under the same names);
//! * for the host, where only [`names`], [`half`], [`op`], [`layout`] and [`shape`]
//!   exist, so the host library names the same operations, element types,
//!   block sizes and launch sizes as the kernels (and runs the operations'
//!   `map`/`combine`/`finish` as its serial reference).
//!
//! Read the kernels in order, `kernels/reduce1_interleaved_divergent.rs` to
//! `kernels/reduce9_warp_shuffle.rs`: each file's header says what changed
//! from the previous step and why, following Mark Harris's "Optimizing
//! Parallel Reduction in CUDA" and the 2023 review of it.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_gpu_kernel,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics,
        macro_metavar_expr_concat,
        stdarch_nvptx
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[macro_use]
pub mod names;
pub mod layout;
pub mod op;
pub mod shape;

pub use reduction_device::half;

#[cfg(target_arch = "nvptx64")]
pub use reduction_device::{block_reduce, grid_reduce, prim, publish, warp_reduce};

#[cfg(target_arch = "nvptx64")]
pub mod strided_fold;

#[cfg(target_arch = "nvptx64")]
pub mod kernels;

#[cfg(target_arch = "nvptx64")]
mod entries;

/// A panic on the GPU has nowhere to print: stop the kernel with `trap`,
/// which the host sees as `CUDA_ERROR_ILLEGAL_INSTRUCTION`. Kernels are
/// written so that no panicking path reaches the PTX (`xtask check-ptx`
/// rejects any unresolved `.extern .func`).
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
