//! Reduction across the 32 lanes of a warp, through shuffles.
//!
//! ```text
//! lane:   0   1   2   3   4   5 ...  31
//! offset 16:  v0+v16  v1+v17 ...          (lanes 16-31 add their own garbage)
//! offset 8:   (v0+v16)+(v8+v24) ...
//!   ... after offsets 4, 2, 1 lane 0 holds v0 + ... + v31
//! ```

use crate::prim::{FULL_MASK, Shuffle, WARP_SIZE, shfl_down_sync};

/// Reduce `v` over the warp with `combine` (CUB's `WarpReduce::Reduce(v,
/// op)`); the result is valid in lane 0 only (other lanes hold partial
/// results).
///
/// # Safety
/// All 32 lanes of the warp must call it together (it shuffles with the
/// full mask).
#[inline(always)]
pub unsafe fn warp_reduce<A: Shuffle>(v: A, combine: impl Fn(A, A) -> A) -> A {
    team_reduce(v, WARP_SIZE, combine)
}

/// Reduce `v` over each team of `lanes` consecutive lanes (a power of two
/// up to 32; 32 is [`warp_reduce`]): the same tree starting at offset
/// `lanes / 2`, the result in each team's first lane. Lanes of other teams
/// are read only by lanes whose result is not used.
///
/// # Safety
/// All 32 lanes of the warp must call it together, with the same `lanes`.
#[inline(always)]
pub unsafe fn team_reduce<A: Shuffle>(mut v: A, lanes: u32, combine: impl Fn(A, A) -> A) -> A {
    let mut offset = lanes / 2;
    while offset > 0 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}
