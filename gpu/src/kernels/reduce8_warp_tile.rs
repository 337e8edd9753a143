//! Step 8: the last warp synchronised as a tile (the 2023 review, "Reduce8").
//!
//! The 2023 review rewrites Harris's last-warp unrolling for CUDA 9 and later with a
//! cooperative-groups tile of 32 threads: each round keeps the `tid < s` test
//! and ends with `tile32.sync()`, which is `__syncwarp()` underneath. Changed
//! from reduce7: one barrier per round instead of two, paid for with idle
//! lanes (in round `s` only `s` lanes work), and no register copy. A round is
//! race-free because the lanes that write (`tid < s`) are not the lanes whose
//! slots are read (`tid + s`). The 2023 review measured it equal to reduce7 on a V100
//! (0.999×); reduce5-7 already carry the `__syncwarp` fix in Harris's shape.
//!
//! Launch: as reduce7.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// The 2023 review's `reduce_gpu_v8_kernel`, for `BLOCK` threads.
///
/// # Safety
/// As [`reduce7`](super::reduce7_multiple_elements::reduce7).
#[inline(always)]
pub unsafe fn reduce8<T: Element, O: ReduceOp<T>, const BLOCK: u32>(g_idata: *const T, g_odata: *mut T, n: u32) {
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

    // the last warp as a tile of 32: `tid < s` works, then the tile syncs
    if tid < 32 {
        for s in [32, 16, 8, 4, 2, 1] {
            if BLOCK >= 2 * s {
                if tid < s {
                    sdata[tid] = O::combine(sdata[tid], sdata[tid + s]);
                }
                sync_warp(FULL_MASK);
            }
        }
    }

    // write result for this block to global mem
    if tid == 0 {
        store(g_odata, block_idx_x(), sdata[0]);
    }
}
