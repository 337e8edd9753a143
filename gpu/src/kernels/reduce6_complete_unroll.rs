//! Step 6/7: completely unrolled (Harris, slides 24-28).
//!
//! Changed from reduce5: the block size is a compile-time constant, the const
//! generic `BLOCK` (Rust's answer to Harris's `template <unsigned int
//! blockSize>`). Every `if BLOCK >= ...` below is decided by the compiler, so
//! the tree has no loop, no loop counter and no dead rounds: the instantiation
//! for 128 threads contains exactly the rounds 64, 32, ..., 1 (1.41× in
//! Harris's table). `entries.rs` instantiates it for each power of two from
//! 32 to 1024, one PTX entry per size (`reduce6_b128_sum_i32`), and the host
//! picks the entry that matches the launch, like Harris's `switch (threads)`.
//!
//! Launch: block = `BLOCK`, grid = ceil(n / (2 × block)), shared memory =
//! max(block, 64) × size_of::<T>(): for `BLOCK = 32` the last warp still
//! reads `sdata[tid + 16]` for all 32 lanes, up to `sdata[47]` (lanes 16-31
//! compute values nobody uses, as in Harris's code), so the array must have
//! 64 slots; cuda-samples pads it the same way. Result: one partial per block.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's completely unrolled kernel (slide 26), for `BLOCK` threads.
///
/// # Safety
/// As [`reduce1`](super::reduce1_interleaved_divergent::reduce1), launched with
/// exactly `BLOCK` threads per block.
#[inline(always)]
pub unsafe fn reduce6<T: Element, O: ReduceOp<T>, const BLOCK: u32>(g_idata: *const T, g_odata: *mut T, n: u32) {
    let mut sdata = dyn_shared::<T>();

    // perform first level of reduction, reading from global memory, writing to shared memory
    let tid = thread_idx_x();
    let i = block_idx_x() * (BLOCK * 2) + tid;
    let mut v = if i < n { load(g_idata, i) } else { O::IDENTITY };
    if i + BLOCK < n {
        v = O::combine(v, load(g_idata, i + BLOCK));
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
