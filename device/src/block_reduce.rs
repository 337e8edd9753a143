//! Reduction across a thread block, CUB's `BLOCK_REDUCE_WARP_REDUCTIONS`:
//! every warp reduces its 32 values with shuffles, lane 0 of each warp puts
//! its warp's result in shared memory, one barrier, then warp 0 reduces those
//! (at most 32) values with shuffles again.
//!
//! ```text
//! warp 0: v0..v31    → w0 ┐
//! warp 1: v32..v63   → w1 ├─ shared memory ─→ warp 0: w0 ⊕ w1 ⊕ ... → thread 0
//! warp k: ...        → wk ┘
//! ```
//! One barrier instead of Harris's log2(block) tree rounds, each with a
//! barrier and shared-memory traffic.

use crate::prim::{DynShared, Shuffle, WARP_SIZE, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::warp_reduce::warp_reduce;

/// Reduce `v` of the first `valid` threads of the block of `BLOCK` threads
/// with `combine`, whose neutral value is `identity` (CUB's
/// `BlockReduce::Reduce(v, op, num_valid)`; `valid == BLOCK` is
/// `Reduce(v, op)`, and costs nothing more when `valid` is that constant).
/// The `v` of threads from `valid` on is not read. The result is valid in
/// thread 0 only. `warp_sums` must have room for `BLOCK / 32` values.
///
/// # Safety
/// `BLOCK` must be the launch's block size, a multiple of 32; every thread
/// of the block must call it, with the same `valid`. It ends without a
/// barrier after the last read of `warp_sums`: sync before writing them
/// again.
#[inline(always)]
pub unsafe fn block_reduce<A: Shuffle, const BLOCK: u32>(
    v: A,
    valid: u32,
    identity: A,
    combine: impl Fn(A, A) -> A + Copy,
    warp_sums: &mut DynShared<A>,
) -> A {
    let v = if valid < BLOCK && thread_idx_x() >= valid { identity } else { v };
    let v = warp_reduce(v, combine);
    if lane_id() == 0 {
        warp_sums[warp_id()] = v;
    }
    sync_threads();
    let mut r = identity;
    if warp_id() == 0 {
        if lane_id() < BLOCK / WARP_SIZE {
            r = warp_sums[lane_id()];
        }
        r = warp_reduce(r, combine);
    }
    r
}
