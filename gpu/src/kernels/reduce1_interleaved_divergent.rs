//! Step 1/7: interleaved addressing with a divergent branch (Harris, slides 7-10).
//!
//! The baseline. Each thread copies one element into shared memory; then the
//! block folds the array as a tree: in round `s = 1, 2, 4, ...` every thread
//! whose `tid` is a multiple of `2 * s` adds `sdata[tid + s]` into
//! `sdata[tid]`. After log2(block) rounds `sdata[0]` holds the block's result.
//!
//! What it costs, per Harris: the branch `tid % (2 * s) == 0` is *divergent*:
//! in round one only every second lane of a warp works, in round two every
//! fourth, yet the warp still issues every instruction. And `%` is slow on the
//! GPU. The second cost does not survive in Rust: `2 * s` is a power of two,
//! so LLVM turns the modulo into a mask (`and.b32` in the PTX), and this
//! kernel runs faster relative to step 2 than Harris's did (docs/src/performance/harris.md).
//!
//! Launch: block = power of two in 32..=1024, grid = ceil(n / block), shared
//! memory = block × size_of::<T>(). Result: one partial per block in
//! `g_odata[block_idx_x()]`.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's `reduce1` (slide 9), generic over the element type and operator.
///
/// # Safety
/// `g_idata[0..n]` and `g_odata[0..grid_dim_x()]` must be valid device
/// memory, and the launch must follow the module's *Launch* line.
#[inline(always)]
pub unsafe fn reduce1<T: Element, O: ReduceOp<T>>(g_idata: *const T, g_odata: *mut T, n: u32) {
    let mut sdata = dyn_shared::<T>();

    // each thread loads one element from global to shared mem
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    sdata[tid] = if i < n { load(g_idata, i) } else { O::IDENTITY };
    sync_threads();

    // do reduction in shared mem
    let mut s = 1;
    while s < block_dim_x() {
        if tid % (2 * s) == 0 {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
        }
        sync_threads();
        s *= 2;
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
