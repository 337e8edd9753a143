//! Threads, blocks and grids.
//!
//! A kernel launch runs a *grid* of `grid_dim_x()` blocks; each *block* has
//! `block_dim_x()` threads that share on-chip shared memory and can wait for
//! each other with [`sync_threads`]. The hardware runs a block as *warps* of
//! 32 consecutive threads. All indices here are one-dimensional: every kernel
//! in this crate is launched with a 1-D grid of 1-D blocks.

use core::arch::nvptx;

/// Threads per warp on every NVIDIA GPU so far.
pub const WARP_SIZE: u32 = 32;

/// CUDA `threadIdx.x`; PTX `mov.u32 %r, %tid.x`.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// CUDA `blockIdx.x`; PTX `%ctaid.x`.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// CUDA `blockDim.x`; PTX `%ntid.x`.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// CUDA `gridDim.x`; PTX `%nctaid.x`.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// This thread's lane in its warp, `threadIdx.x % 32` for 1-D blocks.
#[inline(always)]
pub fn lane_id() -> u32 {
    thread_idx_x() % WARP_SIZE
}

/// This thread's warp in its block, `threadIdx.x / 32` for 1-D blocks.
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx_x() / WARP_SIZE
}

/// CUDA `__syncthreads()`; PTX `bar.sync 0`.
///
/// Waits until every thread of the block has reached it, and makes their
/// earlier shared- and global-memory writes visible to the block. CUDA
/// `__syncthreads()`; PTX `bar.sync 0`.
///
/// With the test-only feature `broken-sync-threads` it does nothing (a
/// missing barrier, a real class of bug: warps read shared memory that other
/// warps have not finished writing), so that `cargo xtask sanitize` can show
/// racecheck catching it.
///
/// # Safety
/// Every thread of the block must reach the same call (it must not sit in a
/// branch that some threads skip), or the block deadlocks.
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: the caller upholds the participation rule above.
    #[cfg(not(feature = "broken-sync-threads"))]
    unsafe {
        nvptx::_syncthreads()
    }
}
