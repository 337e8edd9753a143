//! Step 7/7: multiple elements per thread (Harris, slides 29-35).
//!
//! Changed from reduce6: each thread first folds many elements in a
//! grid-stride loop, then the block tree runs once. Harris calls this
//! *algorithm cascading*: sequential work per thread (cheap, and many loads in
//! flight to hide memory latency) followed by the parallel tree, so the tree's
//! overhead is paid once per block instead of once per `2 × block` elements.
//! The stride is the whole grid's width, `2 × BLOCK × grid`, so a warp's loads
//! stay coalesced (1.42× in Harris's table, 73 GB/s on 32M ints on his G80).
//!
//! The grid is no longer tied to `n`: the host launches as many blocks as fit
//! on the GPU at once (SM count × resident blocks per SM, from the occupancy
//! API), and a second launch with one block reduces their partials.
//! Like the 2023 review (and unlike Harris's slide, which adds into `sdata[tid]`),
//! the running value stays in a register until the loop ends.
//!
//! Launch: block = `BLOCK`, any grid ≥ 1, shared memory = max(block, 64) ×
//! size_of::<T>() (see reduce6). Result: one partial per block.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's final kernel (slide 35), for `BLOCK` threads.
///
/// # Safety
/// As [`reduce6`](super::reduce6_complete_unroll::reduce6), and
/// `2 × BLOCK × grid_dim_x() + n` must fit in a `u32`.
#[inline(always)]
pub unsafe fn reduce7<T: Element, O: ReduceOp<T>, const BLOCK: u32>(g_idata: *const T, g_odata: *mut T, n: u32) {
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

    // the last warp: only the rounds this BLOCK has
    if tid < 32 {
        let mut v = sdata[tid];
        for s in [32, 16, 8, 4, 2, 1] {
            if BLOCK >= 2 * s {
                v = O::combine(v, sdata[tid + s]);
                sync_warp(FULL_MASK);
                sdata[tid] = v;
                sync_warp(FULL_MASK);
            }
        }
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
