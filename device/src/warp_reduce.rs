//! Reduction across the 32 lanes of a warp, through shuffles.
//!
//! ```text
//! lane:   0   1   2   3   4   5 ...  31
//! offset 16:  v0+v16  v1+v17 ...          (lanes 16-31 add their own garbage)
//! offset 8:   (v0+v16)+(v8+v24) ...
//!   ... after offsets 4, 2, 1 lane 0 holds v0 + ... + v31
//! ```

use crate::op::WarpAdd;
use crate::prim::{FULL_MASK, Shuffle, WARP_SIZE, lane_id, shfl_down_sync, shfl_sync, shfl_xor_sync};

/// Reduce `v` over the warp with `combine` (CUB's `WarpReduce::Reduce(v,
/// op)`); the result is valid in lane 0 only (other lanes hold partial
/// results).
///
/// # Safety
/// All 32 lanes of the warp must call it together (it shuffles with the
/// full mask).
#[inline(always)]
pub unsafe fn warp_reduce<A: Shuffle>(v: A, combine: impl Fn(A, A) -> A) -> A {
    tree(v, WARP_SIZE, combine)
}

/// The warp's own lanes as [`WarpAdd`]: this lane's value added over the
/// warp by [`warp_reduce`], lane 0's total given to every lane (six
/// shuffles of each 32-bit half).
///
/// Made by [`Warp::all_lanes`], whose caller promises that all 32 lanes
/// of the warp call its `add` together (it shuffles with the full mask).
pub struct Warp(());

impl Warp {
    /// The warp's lanes.
    ///
    /// # Safety
    /// All 32 lanes of the warp call [`WarpAdd::add`] on it together, as
    /// they call [`warp_reduce`].
    #[inline(always)]
    pub const unsafe fn all_lanes() -> Warp {
        Warp(())
    }
}

impl WarpAdd for Warp {
    #[inline(always)]
    fn add(&self, value: impl Fn(u32) -> f64) -> f64 {
        // SAFETY: all 32 lanes call it together (`all_lanes`'s contract)
        unsafe { shfl_sync(FULL_MASK, warp_reduce(value(lane_id()), |a, b| a + b), 0) }
    }
}

/// Reduce `v` over each team of `lanes` consecutive lanes (a power of two
/// up to 32; 32 is [`warp_reduce`]): the same tree starting at offset
/// `lanes / 2`, the result in each team's first lane. Lanes of other teams
/// are read only by lanes whose result is not used.
///
/// For a width known only at run time (the teams of a segment or a row)
/// and an accumulator of up to 8 bytes (a sum, a maximum, logsumexp's
/// pair of `f32`): a loop of `log2(lanes)` steps. Written out, each of the
/// five steps tests the width: H200, rows of 256 `f32` in teams of 8, the
/// sum 258.0 → 252.6 µs with the loop, logsumexp of rows of 16 `bf16`
/// 159.4 → 157.2. Larger accumulators keep the steps written out
/// ([`tree`]): with the loop the arg-max of rows of 256 `bf16` took 273.0 →
/// 280.8 µs and the variance of rows of 16 `bf16` 187.5 → 192.7.
///
/// # Safety
/// All 32 lanes of the warp must call it together, with the same `lanes`.
#[inline(always)]
pub unsafe fn team_reduce<A: Shuffle>(mut v: A, lanes: u32, combine: impl Fn(A, A) -> A) -> A {
    if size_of::<A>() > 8 {
        return tree(v, lanes, combine);
    }
    let mut offset = lanes / 2;
    while offset > 0 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// [`team_reduce`] with the five steps written out, each where the team is
/// wider than its offset: for the widths [`warp_reduce`] and
/// [`warp_reduce4`] fix (32, 8) and the larger accumulators. LLVM leaves
/// a loop of a large `combine` rolled, and a rolled tree cannot start a
/// step's work that needs no shuffled value (the counts of a variance's
/// parts) before the step above it ends.
#[inline(always)]
unsafe fn tree<A: Shuffle>(mut v: A, lanes: u32, combine: impl Fn(A, A) -> A) -> A {
    if lanes > 16 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, 16));
    }
    if lanes > 8 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, 8));
    }
    if lanes > 4 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, 4));
    }
    if lanes > 2 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, 2));
    }
    if lanes > 1 {
        v = combine(v, shfl_down_sync(FULL_MASK, v, 1));
    }
    v
}

/// Four [`warp_reduce`]s at once (of `a`, `b`, `c` and `d`), for operations
/// whose combine is costly: each combines exactly the pairs `warp_reduce`
/// combines, with the same operands in the same order, but the lanes that
/// `warp_reduce` leaves idle work on another set. At offset 16, lanes 0-15
/// combine `a`'s pairs and lanes 16-31 `b`'s in one step (the lanes swap
/// the halves they need with one `shfl_xor`); `c` and `d` likewise; at
/// offset 8 the two results share one step again; offsets 4, 2, 1 then run
/// on all four sets at once, eight lanes each. 6 combines instead of 20
/// (and 6 shuffles of a value instead of 20).
///
/// ```text
/// after offset 16:  x = [a 0..15 | b 0..15]           y = [c 0..15 | d 0..15]
/// after offset 8:   z = [a 0..7 | c 0..7 | b 0..7 | d 0..7]
/// after 4, 2, 1:    the results of a, c, b, d in lanes 0, 8, 16, 24
/// ```
///
/// The results are valid in lanes 0 (`a`), 8 (`c`), 16 (`b`) and 24 (`d`)
/// only: set `k`'s in lane [`warp_reduce4_lane`]`(k)`.
///
/// # Safety
/// All 32 lanes of the warp must call it together (it shuffles with the
/// full mask).
#[inline(always)]
pub unsafe fn warp_reduce4<A: Shuffle>(a: A, b: A, c: A, d: A, combine: impl Fn(A, A) -> A) -> A {
    let lane = lane_id();
    // one step of two sets: the lanes with `bit` clear keep `low`'s value of
    // the lower index, those with `bit` set `high`'s of the upper index
    let pair = |low: A, high: A, bit: u32| {
        let upper = lane & bit != 0;
        let (keep, send) = if upper { (high, low) } else { (low, high) };
        // SAFETY: every lane gets here (the caller's contract)
        let got = unsafe { shfl_xor_sync(FULL_MASK, send, bit) };
        if upper { combine(got, keep) } else { combine(keep, got) }
    };
    let x = pair(a, b, 16);
    let y = pair(c, d, 16);
    let z = pair(x, y, 8);
    tree(z, 8, &combine)
}

/// The lane that holds set `k`'s result after [`warp_reduce4`] (`a`, `b`,
/// `c`, `d` are sets 0 to 3): lanes 0, 16, 8 and 24.
#[inline(always)]
pub const fn warp_reduce4_lane(k: u32) -> u32 {
    (k & 1) << 4 | (k & 2) << 2
}

/// The set whose result lane `lane` holds after [`warp_reduce4`], for the
/// lanes 0, 8, 16 and 24: the inverse of [`warp_reduce4_lane`].
#[inline(always)]
pub const fn warp_reduce4_set(lane: u32) -> u32 {
    (lane >> 4 & 1) | (lane >> 2 & 2)
}

// the two maps are each other's inverse
const _: () = {
    let mut k = 0;
    while k < 4 {
        assert!(warp_reduce4_set(warp_reduce4_lane(k)) == k);
        k += 1;
    }
};
