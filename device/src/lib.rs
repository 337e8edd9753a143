//! The reductions a CUDA kernel written in Rust calls, for kernels of your
//! own: the reduce of a warp (`warp_reduce`), of a block (`block_reduce`,
//! with a count of valid threads) and of the whole grid in one launch
//! (`grid_reduce`), over the
//! open traits of [`op`]: an element type, an accumulator and an operation
//! of your own (a complex number, a `(min, max)` pair) work as `f32` and a
//! sum do. Each function's doc names the PTX it becomes (`shfl.sync.down`,
//! `bar.sync`, `atom.inc`); `prim` has those primitives under CUDA's names
//! (`thread_idx_x`, `sync_threads`, `shfl_down_sync`).
//!
//! The crate is `no_std` and compiled for `nvptx64-nvidia-cuda` by a kernel
//! crate's build (the `ptx-builder` crate: a nightly rustc with
//! `-Zbuild-std=core`). On the host only [`op`] and [`half`] exist, so host
//! code names the same types and operations and can run them serially as a
//! reference (the GPU modules are documented for `nvptx64-nvidia-cuda`:
//! `cargo doc --target nvptx64-nvidia-cuda -Zbuild-std=core` on the
//! kernels' nightly). A kernel crate defines its own `#[panic_handler]` (a
//! `trap`).
//!
//! ```ignore
//! use reduction_device::{grid_reduce::grid_reduce, prim::*};
//! // a kernel of your own: one value per thread, the grid's sum in out[0]
//! #[unsafe(no_mangle)]
//! pub unsafe extern "gpu-kernel" fn my_sum(x: *const f32, n: u32, partials: *mut f32, ticket: *mut u32, out: *mut f32) {
//!     let i = block_idx_x() * 256 + thread_idx_x();
//!     let v = if i < n { load(x, i) } else { 0.0 };
//!     let mut warp_sums = dyn_shared::<f32>();
//!     let mut is_last = warp_sums.at_byte::<u32>(32 * 4);
//!     if let Some(total) = grid_reduce::<f32, 256>(v, 0.0, |a, b| a + b, partials, ticket, &mut warp_sums, &mut is_last) {
//!         store(out, 0, total);
//!     }
//! }
//! ```
//!
//! The library's own kernels (the crate `gpu`) are built on this crate, and
//! the host library (`reduction`) launches a user's kernels beside its own
//! (its `examples/custom-op`).
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics,
        stdarch_nvptx
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

pub mod half;
pub mod op;

#[cfg(target_arch = "nvptx64")]
pub mod prim;

#[cfg(target_arch = "nvptx64")]
pub mod warp_reduce;

#[cfg(target_arch = "nvptx64")]
pub mod block_reduce;

#[cfg(target_arch = "nvptx64")]
pub mod grid_reduce;

#[cfg(target_arch = "nvptx64")]
pub mod publish;
