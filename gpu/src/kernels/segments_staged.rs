//! Step 14, staged (ours): short CSR segments through shared memory.
//!
//! `segments` gives a short segment to a team of lanes that read it from
//! global memory: its unaligned head and tail one element at a time, its
//! body a vector at a time. For segments of a few dozen elements that is a
//! chain of dependent loads per segment, 32 segments in as many places at
//! once, and the warp waits on each link (the profile of lengths uniform in
//! 0..32: three quarters of the warps' time stalled on loads, the memory
//! 60% busy). Here the warp reads a *round* of segments as one stretch:
//!
//! 1. **Rounds.** Lane `k` holds segment `cur + k`'s bounds. The round is
//!    the first `m` of them whose pieces (within the warp's tile) lie in
//!    a stage ([`stage_vectors`] 16-byte vectors: 4 KiB of one input, 2 KiB
//!    of each of two) from the first's start: a ballot
//!    of "my piece ends within the stage" is true for a prefix of the
//!    lanes. Lanes past it wait for the next round. In the entries
//!    `segments_paired_*` (the host's choice for segments of at most 64
//!    bytes on average), where the operation allows it ([`staged_pairs`]),
//!    while the rounds fill their 32 lanes lane `k` also holds segment
//!    `cur + 32 + k`, and a round of 32 takes the prefix of those that fit
//!    as well: up to 64 segments a stage, each set folded and written in
//!    turn (the same pieces, so the same bits). Their own entries, since
//!    the second segment's registers cost the longer segments' rounds in
//!    the same entry (Pareto's lengths 2-5% slower, H200); the paired
//!    entries of the other operations hold only a `trap`.
//! 2. **Stage.** The warp loads those vectors, contiguous and aligned, up
//!    to eight a lane in flight (one request of whole 128-byte lines per load, as
//!    `single_pass` reads), into its own shared memory, and loads the next
//!    round's bounds with them (in PTX for sm_80 and later the vectors are
//!    copied by `cp.async`, straight into the stage: no registers hold them
//!    on the way, 72 → 60 registers for an f32 sum, 96 → 69 for a dot
//!    product; the copies are a loop, not unrolled, so that their
//!    addresses take no more registers for eight than for four); a
//!    `__syncwarp` later, lane `k` folds its segment's piece there as one
//!    run (`Reduction::fold_run`: by default element by element; the
//!    variance and logsumexp measure the run as one part, the arg-min/max
//!    and extremes compare without merging), and writes it,
//!    as `segments` does ([`emit`]: the result, or a piece and a ticket
//!    when the segment spans tiles; the last piece's warp combines them).
//!    A piece longer than [`STAGE_LANE_ELEMENTS`] is folded by the whole
//!    warp instead (lane `l` its elements `l, l + 32, ...` as one run,
//!    then the warp's tree), so the round does not wait on one lane's long
//!    loop (Zipf's lengths: 13% faster); the variance measures such a
//!    piece in two passes over the stage, the warp adding its lanes' sums
//!    (`Reduction::fold_piece`), where merging 32 lanes' parts took a
//!    chain of five merges. In `segments_staged_*`, for
//!    accumulators of up to 8 bytes, four such pieces at a time: their
//!    runs, then their four trees together (`warp_reduce4`, the same pairs
//!    as four `warp_reduce`s: one chain of shuffles, not four; lengths
//!    uniform in 0..512, the bf16 sum 3% faster, the bf16 max 6%).
//! 3. **Long pieces.** A piece that does not fit a stage alone is read by
//!    the whole warp, as `strided_fold` over 32 lanes reads it, then the
//!    warp's tree, as `segments_tailed` reads its long pieces; for sm_80
//!    and later its vectors pass through the stage, a stage at a time,
//!    copied by `cp.async` (eight vectors a lane in flight where
//!    `strided_fold` holds four in registers), and are folded there in
//!    `strided_fold`'s groups and order (`long_piece`), each read back
//!    with one 16-byte load (`DynShared::read16`; indexing the stage read
//!    a vector of `bf16` as eight loads: Pareto's lengths, the `bf16` sum
//!    in 10% less time).
//!
//! 4. **Tiles taken from a counter.** A warp does not keep the tile its
//!    place in the grid names: it takes the next tile from a counter (one
//!    more ticket, after the segments'), folds it, and takes another,
//!    until none are left. Tiles of one launch cost very different times
//!    (one of thousands of tiny segments, one of a single long piece), and
//!    a block holds its SM until its slowest warp is done: with the tiles
//!    taken from the counter the warps of the first blocks do all the work
//!    and finish together. Every warp of the launch takes one number past
//!    the last tile, and the last of all wraps the counter back to 0
//!    (`atomicInc`'s limit) for the next launch. In the entries
//!    `segments_scheduled_*` (the host's choice for lengths with a heavy
//!    tail that are not short on average, Pareto's), the counter's `k`-th
//!    take is the offsets' schedule's `k`-th tile, those with the most
//!    segments first (`Segments::scheduled`, as `segments_long` takes its
//!    tiles), so that the costliest tiles do not end the launch. Their
//!    own entries, since the order's code in the same entry cost the
//!    tiles taken in the counter's order registers and time (Zipf's
//!    lengths, the `bf16` variance 22% slower, H200).
//!
//! The tiles, the slots of the pieces and the tickets are those of
//! `segments`; which warp folds a tile does not change what it writes.
//! A piece's value depends only on its bounds: it fits a
//! stage (its own 16-byte cover at most [`stage_vectors`] vectors) and is
//! folded as one run or by the warp as its length says, or
//! it does not and is read as a long piece; so the result is the same for
//! every launch and GPU, and
//! `reduction::twin` repeats it on the CPU (`gpu_to_gpu`).
//!
//! Launch: as `segments` but for the block (a warp per tile, block `SHAPE_BLOCK`; `tickets`
//! with one more, zero, after the segments' and fewer than 2^31 tiles), with
//! `SHAPE_WARPS · STAGE_WARP_BYTES` bytes of dynamic shared memory (a
//! warp's stages: `shape::staged_smem`); `a` (and `b`) 16-byte
//! aligned; declared to the JIT with at least
//! [`STAGED_BLOCKS_PER_SM`](crate::shape::STAGED_BLOCKS_PER_SM) blocks an
//! SM (`gpu::names::launch_bounds`).

use super::segments::{emit, finish_segments};
use crate::op::{Element, Reduction};
use crate::prim::*;
use crate::shape::{
    SHAPE_WARPS, STAGE_LANE_ELEMENTS, STAGE_WARP_BYTES, Segments, fits_stage, stage_vectors, staged_pairs, tiles,
};
#[cfg(not(target_feature = "sm_80"))]
use crate::strided_fold::{Ends, strided_fold};
use crate::warp_reduce::{Warp, warp_reduce, warp_reduce4, warp_reduce4_lane};

/// Loads a lane issues together, at most: a stage of two inputs' four, one
/// input's two batches of four on cards before sm_80 (the vectors pass
/// through registers there).
const LOADS: usize = 4;

/// One result per segment of `a[0..n]` (and `b`) into `out[0..segs.count]`,
/// in warp tiles of `tile` elements, each round of short segments staged
/// in shared memory; in the `SCHEDULED` form the tiles in the order of
/// the offsets' schedule from its entry `at - 1`.
///
/// # Safety
/// As for `segments::segments`, and: `a` (and `b`) 16-byte aligned;
/// `tickets[segs.count]` zero (the tile counter; zero again after the
/// launch); the launch's dynamic shared memory as the module's *Launch*
/// line says; for `SCHEDULED`, CSR segments and `at` one more than the
/// entry where the offsets' schedule of `tile` starts
/// (`shape::schedule_at`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn staged<T: Element + Vector, R: Reduction<T>, const PAIRED: bool, const SCHEDULED: bool>(
    a: *const T,
    b: *const T,
    n: u64,
    segs: Segments,
    tile: u64,
    at: u32,
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    if PAIRED && !staged_pairs(R::INPUTS, core::mem::size_of::<R::Acc>()) {
        // an operation without the paired form: the host never chooses
        // this entry (`names::paired_form`), so it holds no code
        core::arch::nvptx::trap();
    }
    let tile = tile.max(1); // the host plans at least 16 KiB; this drops the panic path
    let count_tiles = tiles(n, tile);
    // every warp of the launch takes one number past the last tile, so the
    // last take of all is `takes` and wraps the counter back to 0
    let counter = tickets.add(segs.count as usize);
    let takes = (count_tiles + (grid_dim_x() * SHAPE_WARPS) as u64 - 1) as u32;
    loop {
        let me = shfl_sync(FULL_MASK, if lane_id() == 0 { atomic_inc(counter, takes) } else { 0 }, 0) as u64;
        if me >= count_tiles {
            return;
        }
        // the schedule's tile for this take (entry `me` lies within the schedule of `tile`)
        let me = if SCHEDULED { segs.scheduled(at as u64 - 1 + me, n) as u64 } else { me };
        let (w0, w1, lo, hi) = segs.tile_range(me, tile, count_tiles, n);
        staged_tile::<T, R, PAIRED, SCHEDULED>(a, b, n, segs, tile, (me, w0, w1, lo, hi), pieces, tickets, out);
    }
}

/// Tile `me` (elements `w0..w1`, segments `lo..hi`) of [`staged`]: its
/// rounds of short segments through the warp's stage, its long pieces by
/// the whole warp (through the stage on sm_80 and later, `long_piece`).
/// `SCHEDULED` changes nothing here but makes each entry's instance its
/// own: shared by two entries, LLVM outlined its closures as calls (the
/// variance's `fold_set`), which changed the counter's order's code.
///
/// # Safety
/// As for [`staged`]; all 32 lanes together.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn staged_tile<T: Element + Vector, R: Reduction<T>, const PAIRED: bool, const SCHEDULED: bool>(
    a: *const T,
    b: *const T,
    n: u64,
    segs: Segments,
    tile: u64,
    (me, w0, w1, lo, hi): (u64, u64, u64, u64, u64),
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    let two = R::INPUTS == 2;
    let width = T::LANES as u64; // elements a vector
    // a lane's share of a round: eight 16-byte vectors of one input, four of two
    let loads = stage_vectors(R::INPUTS) / 32;

    // this warp's stages: `stage_vectors(R::INPUTS)` of `a`, then of `b`
    let smem = dyn_shared::<T::Lanes>();
    let (at, half) = ((warp_id() * STAGE_WARP_BYTES) as usize, STAGE_WARP_BYTES as usize / 2);
    #[cfg_attr(target_feature = "sm_80", allow(unused_mut))]
    let (mut stage_a, mut stage_b) = (smem.at_byte::<T::Lanes>(at), smem.at_byte::<T::Lanes>(at + half));
    let (elems_a, elems_b) = (smem.at_byte::<T>(at), smem.at_byte::<T>(at + half));
    let lane = lane_id() as u64;
    let bounds = |s: u64| if s < hi { segs.bounds(s) } else { (w1, w1) };
    // the round's positions are counted from the tile's start, in 32 bits
    // (a tile is a power of two of vectors, under 2^32 elements): fewer
    // instructions a round than 64-bit positions, the same pieces
    let (tile_vector, vw) = (w0 / width, width as u32);

    let mut cur = lo;
    // in the paired entries, while rounds fill their 32 lanes, a lane holds
    // a second segment, `cur + 32 + lane` (an instance of its own, so that
    // each entry's round is compiled alone)
    let mut wide = PAIRED;
    let far = |cur: u64, wide: bool| if wide { bounds(cur + 32 + lane) } else { (w1, w1) };
    let (mut b0, mut e0) = bounds(cur + lane);
    let (mut b1, mut e1) = far(cur, wide);
    while cur < hi {
        let live = cur + lane < hi;
        // this lane's piece, `w0 + r0 .. w0 + r1`
        let (r0, r1) = ((b0.max(w0) - w0) as u32, (e0.min(w1) - w0) as u32);
        let start = shfl_sync(FULL_MASK, r0, 0); // the round's first element
        let first_r = start / vw; // and its vector
        let fits = ballot_sync(FULL_MASK, live && fits_stage(start, r1, vw, R::INPUTS));
        let m0 = (!fits).trailing_zeros() as u64; // the prefix that fits
        let (q0, q1) = ((b1.max(w0) - w0) as u32, (e1.min(w1) - w0) as u32);
        let m1 = if wide && m0 == 32 {
            let far_fits = ballot_sync(FULL_MASK, cur + 32 + lane < hi && fits_stage(start, q1, vw, R::INPUTS));
            (!far_fits).trailing_zeros() as u64
        } else {
            0
        };
        let m = m0 + m1;
        if m == 0 {
            // a long piece, segment `cur`: the whole warp, in `strided_fold`'s order
            let (s, sb, se) = (cur, shfl_sync(FULL_MASK, b0, 0), shfl_sync(FULL_MASK, e0, 0));
            #[cfg(target_feature = "sm_80")]
            let v = long_piece::<T, R>(a, b, sb.max(w0), se.min(w1), sb, loads, (&stage_a, &stage_b));
            #[cfg(not(target_feature = "sm_80"))]
            let v = strided_fold::<T, R>(a, b, sb.max(w0), se.min(w1), sb, lane, 32, Ends::InTurn);
            let v = warp_reduce(v, R::combine);
            let last = lane == 0 && emit::<T, R>(v, s, sb, se, me, w0, w1, tile, pieces, tickets, out);
            finish_segments::<T, R>(ballot_sync(FULL_MASK, last), s, sb, se, tile, pieces, out);
            cur += 1;
            (b0, e0) = bounds(cur + lane);
            (b1, e1) = far(cur, wide);
            continue;
        }
        // stage vectors first..end, where the round's last piece ends
        let end_r =
            if m1 > 0 { shfl_sync(FULL_MASK, q1, (m1 - 1) as u32) } else { shfl_sync(FULL_MASK, r1, (m0 - 1) as u32) };
        let end_r = end_r.div_ceil(vw);
        let (first, end) = (tile_vector + first_r as u64, tile_vector + end_r as u64);
        let full = n / width; // vectors wholly inside a[0..n]
        #[cfg(target_feature = "sm_80")]
        {
            copy_to_stage::<T>(a, b, two, 0, first, end.min(full), (&stage_a, &stage_b));
            // the input's last vector, if it ends inside it, by the lane whose turn it is
            if end > full && (full - first) % 32 == lane {
                partial(a, b, two, full, n, first * width, &elems_a, &elems_b);
            }
            copies_commit();
        }
        #[cfg(not(target_feature = "sm_80"))]
        {
            use core::mem::MaybeUninit;
            for batch in 0..loads / LOADS as u32 {
                let mut x = [MaybeUninit::<(T::Lanes, T::Lanes)>::uninit(); LOADS];
                for (j, x) in x.iter_mut().enumerate() {
                    let v = first + lane + 32 * (batch as u64 * LOADS as u64 + j as u64);
                    if v < end.min(full) {
                        let xa = T::load16(a, v);
                        x.write((xa, if two { T::load16(b, v) } else { xa }));
                    }
                }
                for (j, x) in x.iter().enumerate() {
                    let k = batch * LOADS as u32 + j as u32;
                    let (v, slot) = (first + lane + 32 * k as u64, lane as u32 + 32 * k);
                    if v < end.min(full) {
                        // SAFETY: written above under the same condition
                        let (xa, xb) = x.assume_init_read();
                        stage_a[slot] = xa;
                        if two {
                            stage_b[slot] = xb;
                        }
                    } else if v < end {
                        partial(a, b, two, v, n, first * width, &elems_a, &elems_b);
                    }
                }
            }
        }
        let next_wide = PAIRED && m >= 32;
        let (next_b, next_e) = bounds(cur + m + lane); // the next round's bounds, in flight meanwhile
        let (next_b1, next_e1) = far(cur + m, next_wide);
        #[cfg(target_feature = "sm_80")]
        copies_wait::<0>(); // this lane's copies are in the stage
        sync_warp(FULL_MASK);
        // stage position `e`, and its partner
        let pair = |e: u32| {
            let x = elems_a[e];
            (x, if two { elems_b[e] } else { x })
        };
        // the first `count` lanes' segment `s` (piece `r0..r1`): folded and written
        let fold_set = |count: u64, s: u64, b0: u64, e0: u64, r0: u32, r1: u32| {
            let mine = lane < count;
            // in 32-bit stage positions: two instructions an element fewer
            let (s0, s1, skip) = (r0 - first_r * vw, r1 - first_r * vw, w0.saturating_sub(b0));
            let alone = (s1 - s0) as u64 <= STAGE_LANE_ELEMENTS;
            // this lane's piece, `skip` elements into its segment, as one run
            let mut v = R::IDENTITY;
            if mine && alone {
                v = R::fold_run(s0, s1, 1, pair, skip);
            }
            // the round's longer pieces by the whole warp, lane `l` its
            // elements `l, l + 32, ...` of each as one run
            let mut long = ballot_sync(FULL_MASK, mine && !alone);
            // lane `k`'s piece: its stage positions and its skip
            let piece_of =
                |k: u32| (shfl_sync(FULL_MASK, s0, k), shfl_sync(FULL_MASK, s1, k), shfl_sync(FULL_MASK, skip, k));
            let part = |k: u32| {
                let (f0, f1, fskip) = piece_of(k);
                R::fold_run(f0 + lane as u32, f1, 32, pair, fskip + lane)
            };
            if !R::PIECE_IN_PASSES && !PAIRED && size_of::<R::Acc>() <= 8 {
                // four at a time, their trees together (`warp_reduce4`: the
                // same pairs, so the same bits): one chain of shuffles for
                // four pieces (`IDENTITY` for those past the last). Not in
                // the paired entries, whose rounds of very short segments
                // seldom hold two long pieces (there Zipf's lengths lost
                // 2%, the bf16 max 20%)
                while long != 0 {
                    // whether this lane's piece is among the four, and the
                    // lane of `warp_reduce4` that holds its result
                    let (mut took, mut from) = (false, 0);
                    let mut take = |set: u32| {
                        if long == 0 {
                            return R::IDENTITY;
                        }
                        let k = long.trailing_zeros();
                        long &= long - 1;
                        if lane == k as u64 {
                            (took, from) = (true, warp_reduce4_lane(set));
                        }
                        part(k)
                    };
                    let (a, b, c, d) = (take(0), take(1), take(2), take(3));
                    let w = shfl_sync(FULL_MASK, warp_reduce4(a, b, c, d, R::combine), from);
                    if took {
                        v = w;
                    }
                }
            } else {
                // one after the other: four pieces' state would cost a
                // heavier operation registers, and the paired entries time;
                // where the operation measures a piece in passes over the
                // stage by the whole warp, so (`Reduction::fold_piece`: the
                // variance's deviations from their mean, no merges)
                while long != 0 {
                    let k = long.trailing_zeros();
                    long &= long - 1;
                    let w = if R::PIECE_IN_PASSES {
                        let (f0, f1, fskip) = piece_of(k);
                        R::fold_piece(f0, f1, pair, fskip, &Warp::all_lanes())
                    } else {
                        shfl_sync(FULL_MASK, warp_reduce(part(k), R::combine), 0)
                    };
                    if lane == k as u64 {
                        v = w;
                    }
                }
            }
            let last = mine && emit::<T, R>(v, s, b0, e0, me, w0, w1, tile, pieces, tickets, out);
            finish_segments::<T, R>(ballot_sync(FULL_MASK, last), s, b0, e0, tile, pieces, out);
        };
        fold_set(m0, cur + lane, b0, e0, r0, r1);
        if m1 > 0 {
            fold_set(m1, cur + 32 + lane, b1, e1, q0, q1);
        }
        sync_warp(FULL_MASK); // every lane is done with the stage before the next round fills it
        cur += m;
        (b0, e0, b1, e1, wide) = (next_b, next_e, next_b1, next_e1, next_wide);
    }
}

/// A long piece, elements `begin..end` of a segment from `base`, folded by
/// the whole warp as `strided_fold` folds it over 32 lanes (the same
/// vectors in the same groups of four and the same order, so the same
/// bits), but its body copied into the warp's stage a stage at a time by
/// `cp.async`: a lane has `loads` vectors in flight (eight of one input),
/// where `strided_fold` holds four in registers. The lane's part, as
/// `strided_fold` returns it.
///
/// # Safety
/// As for [`staged`]: `a` (and `b`) 16-byte aligned, `begin..end` inside
/// them; all 32 lanes together, the stage free (the warp synchronized
/// since it was last read); free again on return.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
unsafe fn long_piece<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    begin: u64,
    end: u64,
    base: u64,
    loads: u32,
    (stage_a, stage_b): (&DynShared<T::Lanes>, &DynShared<T::Lanes>),
) -> R::Acc {
    let two = R::INPUTS == 2;
    let (lane, width) = (lane_id() as u64, T::LANES as u64);
    // `a` and `b` are aligned alike: the head is the elements before the
    // first 16-byte boundary, the tail those after the last whole vector
    let past = begin % width;
    let head = if past == 0 { 0 } else { (width - past).min(end - begin) };
    let (body, nvec) = (begin + head, (end - begin - head) / width);
    let tail = body + nvec * width;
    let raw = |i: u64| {
        let x = load_u64(a, i);
        (x, if two { load_u64(b, i) } else { x })
    };
    // the head's and the tail's element of this lane asked for first
    let (hi, ti) = (begin + lane, tail + lane);
    let h = if hi < body { Some(raw(hi)) } else { None };
    let t = if ti < end { Some(raw(ti)) } else { None };
    let chunk = 32 * loads as u64; // vectors a stage holds
    let copy = |c: u64| {
        copy_to_stage::<T>(a, b, two, body / width, c, nvec.min(c + chunk), (stage_a, stage_b));
        copies_commit();
    };
    copy(0);
    let mut v = R::IDENTITY;
    if let Some((x, y)) = h {
        v = R::combine(v, R::map(x, y, hi - base));
    }
    let first = |j: u64| body + j * width - base;
    let mut c = 0;
    while c < nvec {
        copies_wait::<0>();
        sync_warp(FULL_MASK);
        // lane `l`'s vectors `c + l + 32k`, in groups of four while the
        // group's last is inside the piece, then one at a time
        for g in 0..loads / 4 {
            let (j, slot) = (c + lane + 128 * g as u64, lane as u32 + 128 * g);
            let vec = |k: u32| {
                let x = stage_a.read16(slot + 32 * k);
                (x, if two { stage_b.read16(slot + 32 * k) } else { x })
            };
            if j + 96 < nvec {
                let (w, x, y, z) = (vec(0), vec(1), vec(2), vec(3));
                let at = [j, j + 32, j + 64, j + 96].map(first);
                v = T::Lanes::fold_into::<R, 4>(v, [w.0, x.0, y.0, z.0], [w.1, x.1, y.1, z.1], at);
            } else {
                let mut k = 0;
                while k < 3 && j + 32 * (k as u64) < nvec {
                    let x = vec(k);
                    v = T::Lanes::fold_into::<R, 1>(v, [x.0], [x.1], [first(j + 32 * k as u64)]);
                    k += 1;
                }
            }
        }
        sync_warp(FULL_MASK); // every lane is done with the stage before it is filled again
        c += chunk;
        if c < nvec {
            copy(c);
        }
    }
    if let Some((x, y)) = t {
        v = R::combine(v, R::map(x, y, ti - base));
    }
    v
}

/// Vectors `base + from .. base + stop` of `a` (and `b`) copied into the
/// warp's stages by `cp.async`, vector `base + from + k` into slot `k`:
/// lane `l` the vectors `from + l + 32i` past `base`. No registers hold
/// the vectors on the way, and a loop, not the copies unrolled, keeps
/// their addresses to one.
///
/// # Safety
/// `a` (and `b`) 16-byte aligned with those vectors inside them; `stop -
/// from` at most the stage's vectors; the stage free. The caller commits
/// the copies and waits for them.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
unsafe fn copy_to_stage<T: Element + Vector>(
    a: *const T,
    b: *const T,
    two: bool,
    base: u64,
    from: u64,
    stop: u64,
    (stage_a, stage_b): (&DynShared<T::Lanes>, &DynShared<T::Lanes>),
) {
    let (mut j, mut slot) = (from + lane_id() as u64, lane_id());
    while j < stop {
        copy16_async(shared_address(stage_a.ptr(slot)), a, base + j);
        if two {
            copy16_async(shared_address(stage_b.ptr(slot)), b, base + j);
        }
        (j, slot) = (j + 32, slot + 32);
    }
}

/// The last vector of an input that ends inside it, element by element:
/// elements `v · width .. n` of `a` (and `b`) into the stage at `elems_a`
/// (and `elems_b`), whose first element is element `from`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn partial<T: Element + Vector>(
    a: *const T,
    b: *const T,
    two: bool,
    v: u64,
    n: u64,
    from: u64,
    elems_a: &DynShared<T>,
    elems_b: &DynShared<T>,
) {
    let mut i = v * T::LANES as u64;
    while i < n {
        let e = (i - from) as u32;
        *elems_a.ptr(e) = load_u64(a, i);
        if two {
            *elems_b.ptr(e) = load_u64(b, i);
        }
        i += 1;
    }
}
