//! Step 2/7: interleaved addressing, strided index (Harris, slides 11-13).
//!
//! Changed from reduce1: the divergent branch is gone. Thread `tid` now works
//! on `index = 2 * s * tid`, so the threads that work in a round are the
//! first `block / (2 * s)` ones, packed into as few warps as possible; whole
//! warps are idle instead of every other lane of every warp (2.33× in
//! Harris's table).
//!
//! The new problem: shared-memory bank conflicts. Shared memory is 32 banks
//! of 4 bytes; in round `s` the lanes of a warp touch addresses `2 * s`
//! elements apart, so from `s = 16` on, many lanes hit the same bank and the
//! hardware serialises them.
//!
//! Launch: as reduce1.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's `reduce2` (slide 11).
///
/// # Safety
/// As [`reduce1`](super::reduce1_interleaved_divergent::reduce1).
#[inline(always)]
pub unsafe fn reduce2<T: Element, O: ReduceOp<T>>(g_idata: *const T, g_odata: *mut T, n: u32) {
    let mut sdata = dyn_shared::<T>();

    // each thread loads one element from global to shared mem
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    sdata[tid] = if i < n { load(g_idata, i) } else { O::IDENTITY };
    sync_threads();

    // do reduction in shared mem
    let mut s = 1;
    while s < block_dim_x() {
        let index = 2 * s * tid;
        if index < block_dim_x() {
            sdata[index] = O::combine(sdata[index], sdata[index + s]);
        }
        sync_threads();
        s *= 2;
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
