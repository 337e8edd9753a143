//! Step 9: warp shuffle for the last warp (the 2023 review, "Reduce9").
//!
//! Changed from reduce8: once one warp is left, lanes exchange values through
//! registers with `__shfl_down_sync` (PTX `shfl.sync.down`) instead of through
//! shared memory. In round `offset = 16, 8, ..., 1` lane `l` adds the value of
//! lane `l + offset`; after five rounds lane 0 holds the block's result. No
//! shared-memory traffic, no barrier: the shuffle itself synchronises the
//! lanes in its mask. 64-bit types take two 32-bit shuffles per round. Seed
//! 004 measured 1.008× over reduce8 on a V100; the loop is left rolled, as in
//! the CUDA samples (LLVM unrolls it anyway).
//!
//! Launch: as reduce7.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// The 2023 review's `reduce_gpu_v9_kernel`, for `BLOCK` threads.
///
/// # Safety
/// As [`reduce7`](super::reduce7_multiple_elements::reduce7).
#[inline(always)]
pub unsafe fn reduce9<T: Element + Shuffle, O: ReduceOp<T>, const BLOCK: u32>(
    g_idata: *const T,
    g_odata: *mut T,
    n: u32,
) {
    let mut sdata = dyn_shared::<T>();

    // perform first level of reduction, reading from global memory, writing to shared memory
    let tid = thread_idx_x();
    let mut i = block_idx_x() * (BLOCK * 2) + tid;
    let grid_size = BLOCK * 2 * grid_dim_x();
    let mut v = O::IDENTITY;
    while i < n {
        v = O::combine(v, load(g_idata, i));
        if i + BLOCK < n {
            v = O::combine(v, load(g_idata, i + BLOCK));
        }
        i += grid_size;
    }
    sdata[tid] = v;
    sync_threads();

    // do reduction in shared mem, down to 64 elements: every test of BLOCK is resolved at compile time
    if BLOCK >= 1024 {
        if tid < 512 {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + 512]);
        }
        sync_threads();
    }
    if BLOCK >= 512 {
        if tid < 256 {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + 256]);
        }
        sync_threads();
    }
    if BLOCK >= 256 {
        if tid < 128 {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + 128]);
        }
        sync_threads();
    }
    if BLOCK >= 128 {
        if tid < 64 {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + 64]);
        }
        sync_threads();
    }

    // the last warp: shuffles in registers
    if tid < 32 {
        let mut v = sdata[tid];
        if BLOCK >= 64 {
            v = O::combine(v, sdata[tid + 32]);
        }
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            v = O::combine(v, shfl_down_sync(FULL_MASK, v, offset));
            offset /= 2;
        }
        // write result for this block to global mem
        if tid == 0 {
            store(g_odata, block_idx_x(), v);
        }
    }
}
