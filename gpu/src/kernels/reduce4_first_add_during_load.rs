//! Step 4/7: first add during the global load (Harris, slides 17-19).
//!
//! Changed from reduce3: each block reads `2 × block` elements, and every
//! thread combines its pair while loading, so no thread idles in the first
//! round and half as many blocks are launched (1.78× in Harris's table).
//!
//! Now the kernel is far from the memory bandwidth it should reach: the
//! bottleneck is instruction overhead (address arithmetic, loop control,
//! barriers), which steps 5 and 6 remove.
//!
//! Launch: block = power of two in 32..=1024, grid = ceil(n / (2 × block)),
//! shared memory = block × size_of::<T>(). Result: one partial per block.

use crate::op::{Element, ReduceOp};
use crate::prim::*;

/// Harris's `reduce4` (slide 18), with a bounds check on the second element
/// so that any `n` works.
///
/// # Safety
/// As [`reduce1`](super::reduce1_interleaved_divergent::reduce1).
#[inline(always)]
pub unsafe fn reduce4<T: Element, O: ReduceOp<T>>(g_idata: *const T, g_odata: *mut T, n: u32) {
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
