//! Step 12 (ours): the reproducible (`gpu_to_gpu`) float sum. Same bits on
//! every GPU, at every block size and grid.
//!
//! The default kernel's order of additions depends on the grid (each thread
//! sums every `grid × block`-th vector) and so on the GPU's SM count. Here
//! the order is the one of `op/fixed_order.rs`, a function of `n` alone:
//!
//! 1. **Segments, one per warp at a time.** The input is cut into rounds
//!    of 2 KiB, and a segment is `rounds` of them, `segments` rounds apart
//!    (so the warps, each in its own segment, read one window of the input
//!    together, as the grid-stride loop of `single_pass` does); a warp sums
//!    a whole segment: in each round every lane loads four 16-byte vectors
//!    (four loads in flight, 2 KiB per warp, coalesced), then adds their
//!    elements to its accumulator in a fixed order; the 32 lane sums meet
//!    in the shuffle tree of `warp_reduce`. Warps take segments grid-stride,
//!    so *which* warp sums a segment depends on the grid, but *how* it is
//!    summed does not. Lane 0 writes the segment's partial.
//! 2. **A fixed tree over the partials.** The last block to finish (the
//!    ticket of `single_pass`) combines the partials 32 at a time with the
//!    same warp tree, level by level, into the scratch after them
//!    (`fixed_order::tree_len`), four groups in flight per warp, reduced
//!    together (`warp_reduce4`: the same pairs as four warp trees, 6
//!    combines instead of 20, and few enough registers for two blocks of
//!    1024 threads an SM), and finishes the result. The double-double sum
//!    (the accurate `f64` sum), whose `combine` is 20 additions, loads a
//!    lane's next round while adding the current one (`aligned_rounds`
//!    with `ahead`). Blocks of 32 warps hold a whole group of 32 segments
//!    each sweep (warp `w` segment `32·group + w`): for accumulators of 8
//!    bytes or more (whose partials cost the tree the most), where a
//!    block's sweeps are few (`layout::MODES_SWEEPS`), the warps keep their
//!    partials in shared memory and each block combines its groups with the
//!    same warp tree, so the last block starts a level up (at 2^28 `f64`,
//!    from 1024 values instead of 32 768; on an H200 the f64 sum 488 →
//!    480 µs, 0.981× → 0.998× of the default, the accurate f64 sum 500 →
//!    483 µs, 0.959× → 0.991×, the f64 variance 523 → 495 µs). The `f32`
//!    sums' 4-byte partials are few bytes for the tree, and the groups
//!    would cost them 8 registers (32 → 40: one block of 1024 an SM
//!    instead of two).
//! 3. **Any alignment.** If `a` (or `b`) is not 16-byte aligned, and for the
//!    last, partial round, the same elements are read one by one, in the
//!    same order: slower, same bits.
//!
//! The block size is read at run time (`blockDim.x`, any multiple of 32):
//! it changes nothing but how many warps share a block.
//!
//! Launch: block = a multiple of 32 up to 1024, any grid ≥ 1, `partials`
//! with `tree_len(segments)` accumulators, `*ticket == 0`, shared memory
//! `layout::MODES_SMEM` bytes (the flag, then the slots of the groups).
//! Result: `out[0]`, then `*done = 1` unless `done` is null.

use crate::layout::{MODES_SLOT_BYTES, MODES_SLOTS_OFFSET, MODES_SWEEPS};
use crate::op::Element;
use crate::op::fixed_order::{FixedOrder, Geometry, VECTORS, WARP};
use crate::prim::*;
use crate::publish::publish;
use crate::warp_reduce::{warp_reduce, warp_reduce4, warp_reduce4_set};

/// The reproducible reduction of `a[0..n]` (and `b[0..n]`) with `R` into `out[0]`.
///
/// # Safety
/// `a[0..n]` must be valid and aligned for `T`, and `b[0..n]` too when
/// `R::INPUTS == 2`, `partials` must hold `tree_len(Geometry::new(n,
/// size_of::<T>()).segments)` accumulators, `*ticket` must be 0 and not used
/// by a concurrent launch, `done` null or a live `u32`, and the launch must
/// follow the module's *Launch* line.
#[inline(always)]
pub unsafe fn reproducible<T: Element + Vector, R: FixedOrder<T>>(
    a: *const T,
    b: *const T,
    n: u64,
    partials: *mut R::Acc,
    ticket: *mut u32,
    out: *mut R::Out,
    done: *mut u32,
) where
    R::Acc: Shuffle,
{
    const { assert!(VECTORS == 4, "the aligned path below loads four vectors") };
    const { assert!(size_of::<R::Acc>() <= MODES_SLOT_BYTES, "an accumulator larger than the group's slots") };
    let mut is_last = dyn_shared::<u32>();
    let g = Geometry::new(n as usize, size_of::<T>());
    let n = n as usize;
    let warps_per_block = block_dim_x() / WARP as u32;
    let warps = (grid_dim_x() * warps_per_block) as usize;
    let lane = lane_id() as usize;
    let two = R::INPUTS == 2;
    let second = if two { b } else { a };
    let aligned = a as usize % 16 == 0 && second as usize % 16 == 0;

    // 1. segments. With 32 warps a block, warp w's segment in the block's
    // t-th sweep is 32·group + w of group t·grid + block: each sweep the block
    // holds one whole group of the tree's first level. For accumulators of
    // 8 bytes or more, where the block's sweeps are few (at most
    // `MODES_SWEEPS`), its warps keep their partials in shared memory and
    // the block combines each group itself, with the same warp tree, so the
    // last block's tree starts a level up. Otherwise, and for a single
    // segment (no tree), each warp writes its partial, as the first level
    // reads it.
    let groups = g.segments.div_ceil(WARP) as u32;
    let sweeps_of = |block: u32| groups.saturating_sub(block).div_ceil(grid_dim_x());
    let sweeps = sweeps_of(block_idx_x()); // this block's; block 0 has the most
    let grouped =
        size_of::<R::Acc>() >= 8 && warps_per_block == WARP as u32 && g.segments > 1 && sweeps_of(0) <= MODES_SWEEPS;
    let mut slots = is_last.at_byte::<R::Acc>(MODES_SLOTS_OFFSET);
    let (mut s, mut sweep) = ((block_idx_x() * warps_per_block + warp_id()) as usize, 0u32);
    while s < g.segments {
        // the segment's whole rounds (a prefix of them) with 16-byte loads,
        // then the rest, at most one partial round, element by element
        let whole = if aligned { g.whole_rounds(s, n) } else { 0 };
        let mut acc = aligned_rounds::<T, R>(a, b, s, whole, lane, &g, costly::<T, R>());
        for r in whole..g.rounds {
            let base = g.round_start(s, r);
            if base >= n {
                break; // and so are the later rounds
            }
            for j in 0..VECTORS {
                for k in 0..g.lanes {
                    let i = base + (j * WARP + lane) * g.lanes + k;
                    if i < n {
                        acc = R::accumulate(acc, load_u64(a, i as u64), load_u64(second, i as u64), i as u64);
                    }
                }
            }
        }
        let v = warp_reduce(R::lane_result(acc), R::merge);
        if lane == 0 {
            if grouped {
                slots[sweep * WARP as u32 + warp_id()] = v;
            } else {
                store(partials, s as u32, v);
                threadfence(); // the partial is visible GPU-wide before the block's ticket
            }
        }
        (s, sweep) = (s + warps, sweep + 1);
    }
    if grouped {
        // warp t combines the block's t-th group, padded with IDENTITY past
        // the last segment as the tree pads it
        sync_threads();
        let t = warp_id();
        if t < sweeps {
            let group = t * grid_dim_x() + block_idx_x();
            let i = group * WARP as u32 + lane as u32;
            let v = warp_reduce(
                if (i as usize) < g.segments { slots[t * WARP as u32 + lane as u32] } else { R::IDENTITY },
                R::merge,
            );
            if lane == 0 {
                store(partials, g.segments as u32 + group, v);
                threadfence(); // visible GPU-wide before the block's ticket
            }
        }
    }

    // the block's ticket, after every warp of it has written and fenced
    sync_threads();
    if thread_idx_x() == 0 {
        is_last[0] = (atomic_inc(ticket, grid_dim_x() - 1) == grid_dim_x() - 1) as u32;
    }
    sync_threads();
    if is_last[0] == 0 {
        return;
    }

    // 2. the last block: the tree over the partials, level by level
    threadfence();
    let warp = warp_id();
    let warps = warps_per_block;
    let lane = lane as u32;
    // the first level is written already where the blocks combined their groups
    let (mut src, mut m) = if grouped { (g.segments as u32, groups) } else { (0, g.segments as u32) };
    while m > 1 {
        let (dst, outputs) = (src + m, m.div_ceil(WARP as u32));
        let group = |o: u32| {
            let i = o * WARP as u32 + lane;
            if o < outputs && i < m { load_relaxed(partials, src + i) } else { R::IDENTITY }
        };
        // four groups a warp at a time, reduced together: `warp_reduce4`
        // combines the pairs four `warp_reduce`s would, in the same order,
        // in 6 steps instead of 20 (and 16 fewer registers than four
        // `warp_reduce`s: the kernel fits two blocks of 1024 threads an SM);
        // group o + k·warps ends in lane `warp_reduce4_lane(k)`
        let mut o = warp;
        while o < outputs {
            let (w, x, y, z) = (group(o), group(o + warps), group(o + 2 * warps), group(o + 3 * warps));
            let v = warp_reduce4(w, x, y, z, R::merge);
            if lane % 8 == 0 {
                let k = warp_reduce4_set(lane);
                if o + k * warps < outputs {
                    store(partials, dst + o + k * warps, v);
                }
            }
            o += 4 * warps;
        }
        // this level's outputs are written before they are read, and the
        // barrier makes them visible to the block: no fence after each
        // store, which waited for it (the f64 sum 1% faster, logsumexp 5%)
        sync_threads();
        (src, m) = (dst, outputs);
    }
    if thread_idx_x() == 0 {
        publish(out, R::result(load_relaxed(partials, src), n as u64), done);
    }
}

/// Whether `R`'s accumulator is wider than 8 bytes: the double-double sum,
/// whose `accumulate` is 7 `f64` additions and `combine` 20, so it affords
/// the loads of the next round in flight.
const fn costly<T, R: FixedOrder<T>>() -> bool {
    size_of::<R::Acc>() > 8
}

/// Rounds `0..whole` of segment `s` for lane `lane`, aligned: four 16-byte
/// vectors (per input) a round, then their elements in order. With `ahead`
/// the next round's vectors are asked for before this round's are added, so
/// the warp's loads stay in flight while it adds (16 more registers, which
/// only the double-double sum needs and can afford within 64); the loads and
/// the additions, and their order, are the same either way.
///
/// # Safety
/// As [`reproducible`]'s; rounds `0..whole` of segment `s` must be whole
/// (`Geometry::whole_rounds`) and `a` (and `b` for two inputs) 16-byte
/// aligned.
#[inline(always)]
unsafe fn aligned_rounds<T: Element + Vector, R: FixedOrder<T>>(
    a: *const T,
    b: *const T,
    s: usize,
    whole: usize,
    lane: usize,
    g: &Geometry,
    ahead: bool,
) -> R::Acc {
    // vectors: round r of segment s starts at vector (r·segments + s)·128
    let (first_vector, stride) = (s * WARP * VECTORS + lane, g.segments * WARP * VECTORS);
    let two = R::INPUTS == 2;
    let load = |r: usize| {
        let v = first_vector + r * stride;
        let one = |j: usize| {
            let x = T::load16(a, (v + j * WARP) as u64);
            (x, if two { T::load16(b, (v + j * WARP) as u64) } else { x })
        };
        (one(0), one(1), one(2), one(3))
    };
    type Pair<T> = (<T as Vector>::Lanes, <T as Vector>::Lanes);
    let add = |acc: R::Acc, (l0, l1, l2, l3): (Pair<T>, Pair<T>, Pair<T>, Pair<T>), r: usize| {
        let v = first_vector + r * stride;
        let first = |j: usize| ((v + j * WARP) * g.lanes) as u64;
        let acc = l0.0.fold_in_order(l0.1, first(0), acc, R::accumulate);
        let acc = l1.0.fold_in_order(l1.1, first(1), acc, R::accumulate);
        let acc = l2.0.fold_in_order(l2.1, first(2), acc, R::accumulate);
        l3.0.fold_in_order(l3.1, first(3), acc, R::accumulate)
    };
    let mut acc = R::IDENTITY;
    if ahead {
        if whole == 0 {
            return acc;
        }
        let mut next = load(0);
        for r in 0..whole {
            let this = next;
            next = load((r + 1).min(whole - 1)); // the last round again at the end: cached, unused
            acc = add(acc, this, r);
        }
    } else {
        for r in 0..whole {
            acc = add(acc, load(r), r);
        }
    }
    acc
}
