//! Step 11 (ours): the whole reduction in one launch. The library's default.
//!
//! Harris needs a second launch because blocks cannot wait for each other.
//! They need not wait, though: the *last* block to finish can do the final
//! step (NVIDIA's `threadFenceReduction` sample). Changed from `vectorized`:
//!
//! 1. **One launch.** Each block writes its partial to `partials[block]`,
//!    then thread 0 makes that write visible to the whole GPU (`__threadfence`,
//!    *before* taking a ticket, or the last block could read a partial that is
//!    not there yet) and takes a ticket with `atomicInc(ticket, grid - 1)`.
//!    The block that draws `grid - 1` is last: every other partial is written,
//!    so it reduces them and writes `out[0]`. `atomicInc` wraps the counter
//!    back to 0 on that last ticket, so the next launch finds it zeroed. For
//!    small inputs this halves the launches; for all inputs it removes the
//!    gap between them. The result is deterministic: partials are combined in
//!    block order, whichever block is last.
//! 2. **Any alignment.** The elements before the first 16-byte boundary (at
//!    most 3) and after the last whole vector are read one by one, so the
//!    16-byte loads work on any view of a buffer.
//! 3. **Four independent loads per iteration.** Each thread issues four
//!    16-byte loads before it combines any of them, 64 bytes in flight per
//!    thread; with full occupancy that is enough to cover DRAM latency.
//! 4. **CUB's block reduction** (`block_reduce.rs`): warp shuffles, one
//!    barrier, instead of Harris's shared-memory tree.
//! 5. **64-bit indices**: one launch covers any `n`.
//! 6. **A completion flag for the host.** When `done` is not null, the last
//!    block's thread 0 stores the result, fences system-wide
//!    (`__threadfence_system`) and sets `*done = 1`. The library points `out`
//!    and `done` at pinned host memory mapped into the device, so a caller
//!    waiting for the result polls `done` in its own memory instead of
//!    calling into the driver (`reduce latency` measures the difference).
//!
//! Weighed and not kept: integer atomics on the output (they need the
//! output zeroed first, another operation, and work for sums only);
//! `redux.sync` (sm_80+) for the warp steps (two warp reductions per block
//! are not where the time goes; see docs/results.md).
//!
//! Launch: block = `BLOCK`, grid ≤ the blocks resident on the GPU,
//! `partials` with one slot per block, `*ticket == 0`, shared memory
//! `layout::SINGLE_PASS_SMEM` bytes. Result: `out[0]`, then `*done = 1`
//! unless `done` is null.

use crate::block_reduce::block_reduce;
use crate::layout::SINGLE_PASS_FLAG_OFFSET;
use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Vectors each thread loads before combining them.
const UNROLL: u64 = 4;

/// The single-pass reduction of `input[0..n]` into `out[0]`.
///
/// # Safety
/// `input[0..n]` must be valid and aligned for `T`, `partials` must hold
/// `grid_dim_x()` elements, `*ticket` must be 0 and not used by a concurrent
/// launch, `done` null or a live `u32`, and the launch must follow the
/// module's *Launch* line.
#[inline(always)]
pub unsafe fn single_pass<T: Element + Shuffle + Vector, O: ReduceOp<T>, const BLOCK: u32>(
    input: *const T,
    n: u64,
    partials: *mut T,
    ticket: *mut u32,
    out: *mut T,
    done: *mut u32,
) {
    let mut warp_sums = dyn_shared::<T>();
    let mut is_last = warp_sums.at_byte::<u32>(SINGLE_PASS_FLAG_OFFSET);
    let tid = thread_idx_x();
    let gtid = (block_idx_x() * BLOCK + tid) as u64;
    let threads = (grid_dim_x() * BLOCK) as u64;
    let lanes = T::LANES as u64;

    // the head: elements before the first 16-byte boundary
    let past_boundary = (input as u64 % 16) / size_of::<T>() as u64;
    let head = if past_boundary == 0 { 0 } else { (lanes - past_boundary).min(n) };
    let mut v = O::IDENTITY;
    if gtid < head {
        v = load(input, gtid as u32);
    }

    // the body: whole 16-byte vectors, four loads in flight per thread
    let body = input.add(head as usize);
    let nvec = (n - head) / lanes;
    let mut i = gtid;
    while i + (UNROLL - 1) * threads < nvec {
        let a = T::load16(body, i);
        let b = T::load16(body, i + threads);
        let c = T::load16(body, i + 2 * threads);
        let d = T::load16(body, i + 3 * threads);
        v = O::combine(
            v,
            O::combine(
                O::combine(a.fold(O::combine), b.fold(O::combine)),
                O::combine(c.fold(O::combine), d.fold(O::combine)),
            ),
        );
        i += UNROLL * threads;
    }
    while i < nvec {
        v = O::combine(v, T::load16(body, i).fold(O::combine));
        i += threads;
    }

    // the tail: elements after the last whole vector
    let tail = head + nvec * lanes;
    if gtid < n - tail {
        v = O::combine(v, load_u64(input, tail + gtid));
    }

    // one partial per block
    let v = block_reduce::<T, O, BLOCK>(v, &mut warp_sums);
    if tid == 0 {
        store(partials, block_idx_x(), v);
        threadfence(); // the partial is visible GPU-wide before the ticket is taken
        let last = atomic_inc(ticket, grid_dim_x() - 1) == grid_dim_x() - 1;
        is_last[0] = last as u32;
    }
    sync_threads();

    // the last block reduces the partials, four loads in flight per thread
    if is_last[0] != 0 {
        threadfence();
        let grid = grid_dim_x();
        let mut v = O::IDENTITY;
        let mut b = tid;
        while b + 3 * BLOCK < grid {
            let (w, x, y, z) = (
                load_relaxed(partials, b),
                load_relaxed(partials, b + BLOCK),
                load_relaxed(partials, b + 2 * BLOCK),
                load_relaxed(partials, b + 3 * BLOCK),
            );
            v = O::combine(v, O::combine(O::combine(w, x), O::combine(y, z)));
            b += 4 * BLOCK;
        }
        while b < grid {
            v = O::combine(v, load_relaxed(partials, b));
            b += BLOCK;
        }
        let v = block_reduce::<T, O, BLOCK>(v, &mut warp_sums);
        if tid == 0 {
            store(out, 0, v);
            if !done.is_null() {
                threadfence_system(); // the result is visible before the flag
                store_volatile(done, 1);
            }
        }
    }
}
