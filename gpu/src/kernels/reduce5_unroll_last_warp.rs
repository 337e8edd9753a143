//! Step 5/7: unroll the last warp (Harris, slides 20-23), made correct for
//! Volta and later.
//!
//! Changed from reduce4: the loop stops at `s > 32`. When 32 or fewer threads
//! are active they are one warp, so Harris drops the `__syncthreads()` and the
//! `if (tid < s)` and unrolls the last six rounds for the first warp only; the
//! other warps stop executing the loop early (1.8× in Harris's table).
//!
//! Harris's 2007 code relied on the 32 lanes of a warp running in lock step,
//! reading `sdata[tid + s]` through a `volatile` pointer before any lane
//! wrote. Since Volta (sm_70) lanes are scheduled independently, and the
//! CUDA Programming Guide calls that code a race (the 2023 review says the same). We
//! keep Harris's shape but split each round into "read, `__syncwarp`, write,
//! `__syncwarp`", the pattern the guide gives: each lane keeps its running
//! value in a register, every read of a round happens before any write.
//! The 2023 review's reduce8 gets there differently (one `tid < s` test and one
//! barrier per round); compare `reduce8_warp_tile.rs`.
//!
//! Launch: block = power of two in 64..=1024 (the last warp reads
//! `sdata[tid + 32]`), grid = ceil(n / (2 × block)), shared memory =
//! block × size_of::<T>(). Result: one partial per block.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's `reduce5` (slide 22), with `__syncwarp` instead of `volatile`.
///
/// # Safety
/// As [`reduce1`](super::reduce1_interleaved_divergent::reduce1), with a block
/// of at least 64 threads.
#[inline(always)]
pub unsafe fn reduce5<T: Element, O: ReduceOp<T>>(g_idata: *const T, g_odata: *mut T, n: u32) {
    let mut sdata = dyn_shared::<T>();

    // perform first level of reduction, reading from global memory, writing to shared memory
    let tid = thread_idx_x();
    let i = block_idx_x() * (block_dim_x() * 2) + tid;
    let mut v = if i < n { load(g_idata, i) } else { O::IDENTITY };
    if i + block_dim_x() < n {
        v = O::combine(v, load(g_idata, i + block_dim_x()));
    }
    sdata[tid] = v;
    sync_threads();

    // do reduction in shared mem, down to 64 elements
    let mut s = block_dim_x() / 2;
    while s > 32 {
        if tid < s {
            sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
        }
        sync_threads();
        s >>= 1;
    }

    // the last warp: six rounds without __syncthreads (LLVM unrolls the loop)
    if tid < 32 {
        let mut v = sdata[tid];
        for s in [32, 16, 8, 4, 2, 1] {
            v = O::combine(v, sdata[tid + s]);
            sync_warp(FULL_MASK);
            sdata[tid] = v;
            sync_warp(FULL_MASK);
        }
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
