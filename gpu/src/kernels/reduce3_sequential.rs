//! Step 3/7: sequential addressing (Harris, slides 14-16).
//!
//! Changed from reduce2: the loop runs backwards, `s = block / 2, block / 4,
//! ..., 1`, and thread `tid < s` adds `sdata[tid + s]` into `sdata[tid]`.
//! The 32 lanes of a warp now read 32 consecutive elements, one per bank:
//! no bank conflicts (2.01× in Harris's table).
//!
//! The remaining waste: in the first round half of the threads do nothing
//! but load one element (step 4 fixes that).
//!
//! Launch: as reduce1.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's `reduce3` (slide 15).
///
/// # Safety
/// As [`reduce1`](super::reduce1_interleaved_divergent::reduce1).
#[inline(always)]
pub unsafe fn reduce3<T: Element, O: ReduceOp<T>>(g_idata: *const T, g_odata: *mut T, n: u32) {
    let mut sdata = dyn_shared::<T>();

    // each thread loads one element from global to shared mem
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    sdata[tid] = if i < n { load(g_idata, i) } else { O::IDENTITY };
    sync_threads();

    // do reduction in shared mem
    let mut s = block_dim_x() / 2;
    while s > 0 {
        if tid < s {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
        }
        sync_threads();
        s >>= 1;
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
