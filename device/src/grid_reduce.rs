//! Reduction across the whole grid in one launch (NVIDIA's
//! `threadFenceReduction` sample): each block reduces its threads' values
//! ([`block_reduce`]) and writes its partial; the *last* block to finish,
//! which a ticket tells, reduces the partials. Blocks never wait for each
//! other, so no second launch is needed.
//!
//! ```text
//! block 0: block_reduce → partials[0] ┐ fence, ticket 0
//! block 1: block_reduce → partials[1] ├ fence, ticket 1
//! block g-1: ...        → partials[g-1]┘ fence, ticket g-1: the last block
//!   last block: partials[0..g] → block_reduce → thread 0 holds the result
//! ```
//!
//! The order of the final fold is the block order, whichever block is last,
//! so the result does not depend on timing.

use crate::block_reduce::block_reduce;
use crate::prim::*;

/// Reduce `v` of every thread of the grid with `combine`, whose neutral
/// value is `identity`. Returns `Some(result)` in thread 0 of the last block
/// to finish, `None` in every other thread.
///
/// Thread 0 of each block stores its block's partial in
/// `partials[block_idx_x()]`, makes it visible GPU-wide (`__threadfence`,
/// *before* taking a ticket, or the last block could read a partial that is
/// not there yet) and takes a ticket with `atomicInc(ticket, grid - 1)`. The
/// block that draws `grid - 1` is last: it reduces the partials, four loads
/// in flight per thread. `atomicInc` wraps the counter back to 0 on that
/// last ticket, so the next launch finds it zeroed. A grid of one block is
/// its own last block: it takes no ticket and needs no fence.
///
/// # Safety
/// `BLOCK` must be the launch's block size, a multiple of 32, and every
/// thread of the grid must call it. `partials` must hold `grid_dim_x()`
/// values of `A` (every bit pattern a valid `A`: [`crate::op::Bits`], of a
/// size that is a multiple of 4), `*ticket` must be 0 and not used by a
/// concurrent launch, `warp_sums` must have room for `BLOCK / 32` values and
/// `is_last` for one, apart from `warp_sums`.
#[inline(always)]
pub unsafe fn grid_reduce<A: Shuffle, const BLOCK: u32>(
    v: A,
    identity: A,
    combine: impl Fn(A, A) -> A + Copy,
    partials: *mut A,
    ticket: *mut u32,
    warp_sums: &mut DynShared<A>,
    is_last: &mut DynShared<u32>,
) -> Option<A> {
    let tid = thread_idx_x();
    // one partial per block; a grid of one block is its own last block
    let v = block_reduce::<A, BLOCK>(v, BLOCK, identity, combine, warp_sums);
    let alone = grid_dim_x() == 1;
    if tid == 0 {
        store(partials, block_idx_x(), v);
        let last = alone || {
            threadfence(); // the partial is visible GPU-wide before the ticket is taken
            atomic_inc(ticket, grid_dim_x() - 1) == grid_dim_x() - 1
        };
        is_last[0] = last as u32;
    }
    sync_threads();
    if is_last[0] == 0 {
        return None;
    }

    // the last block reduces the partials, four loads in flight per thread
    if !alone {
        threadfence();
    }
    let grid = grid_dim_x();
    let mut v = identity;
    let mut b = tid;
    while b + 3 * BLOCK < grid {
        let (w, x, y, z) = (
            load_relaxed(partials, b),
            load_relaxed(partials, b + BLOCK),
            load_relaxed(partials, b + 2 * BLOCK),
            load_relaxed(partials, b + 3 * BLOCK),
        );
        v = combine(v, combine(combine(w, x), combine(y, z)));
        b += 4 * BLOCK;
    }
    while b < grid {
        v = combine(v, load_relaxed(partials, b));
        b += BLOCK;
    }
    let v = block_reduce::<A, BLOCK>(v, BLOCK, identity, combine, warp_sums);
    (tid == 0).then_some(v)
}
