//! Step 10 (ours): 16-byte loads.
//!
//! Changed from reduce9: the grid-stride loop reads 16 bytes per load
//! (`ld.global.nc.v4.b32`: four `i32`/`u32`/`f32`, or two 64-bit elements)
//! instead of one element, through the read-only data path (`__ldg`). The
//! same bytes take a quarter of the load instructions, so each thread keeps
//! more bytes in flight and the loop's index arithmetic is paid once per 16
//! bytes. The last `n % LANES` elements, which do not fill a vector, are read
//! one by one by the first threads of block 0.
//!
//! The price: the input must start on a 16-byte boundary, which cudaMalloc'd
//! buffers do but a view at an odd offset does not. The host refuses such an
//! input with `Error::Misaligned` (the single-pass kernel handles any
//! alignment).
//!
//! Launch: as reduce7, with a 16-byte aligned `g_idata`.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// reduce9 with 16-byte vector loads, for `BLOCK` threads.
///
/// # Safety
/// As [`reduce7`](super::reduce7_multiple_elements::reduce7), and `g_idata`
/// must be 16-byte aligned.
#[inline(always)]
pub unsafe fn vectorized<T: Element + Shuffle + Vector, O: ReduceOp<T>, const BLOCK: u32>(
    g_idata: *const T,
    g_odata: *mut T,
    n: u32,
) {
    let mut sdata = dyn_shared::<T>();

    // perform first level of reduction, reading 16 bytes per load
    let tid = thread_idx_x();
    let nvec = n / T::LANES;
    let mut i = block_idx_x() * (BLOCK * 2) + tid;
    let grid_size = BLOCK * 2 * grid_dim_x();
    let mut v = O::IDENTITY;
    while i < nvec {
        v = O::combine(v, T::load16(g_idata, i as u64).fold(O::combine));
        if i + BLOCK < nvec {
            v = O::combine(v, T::load16(g_idata, (i + BLOCK) as u64).fold(O::combine));
        }
        i += grid_size;
    }
    // the elements after the last whole vector
    if block_idx_x() == 0 && tid < n % T::LANES {
        v = O::combine(v, load(g_idata, nvec * T::LANES + tid));
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
