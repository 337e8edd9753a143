//! Step 14, second form (ours): one result per CSR segment, at a cost that
//! does not depend on how the lengths are distributed.
//!
//! `segments` gives each segment a team of lanes; when segments are a few
//! elements long, each lane reads its own, and a warp's 16-byte loads touch
//! 32 separate lines. Here a warp reads its tile exactly as the flat kernels
//! read their input (lane `l` takes vector `l` of every 512-byte round, eight
//! rounds in flight where no segment starts), whatever the segments, and splits the elements among
//! them afterwards. The work is balanced by elements, as in Merrill and
//! Garland's merge-based sparse matrix-vector product: a tile of segments of
//! one element costs what a tile inside one long segment costs, plus the
//! bookkeeping of the starts.
//!
//! 1. **Rounds with no start.** The warp keeps a *window* of the next 32
//!    segment starts (a lane each, from the offsets). While the next start
//!    lies past the round (or the next eight), each lane folds its vectors
//!    into its own accumulator of the open segment, as `single_pass` does.
//! 2. **Rounds with starts.** Each window lane whose start falls in the round
//!    writes its window index into the warp's byte map of the round's
//!    positions (shared memory), or, for an empty segment, writes its result
//!    at once. Each lane then walks its own elements in order: a start closes
//!    the run before it (the lane's *head*, or a segment that lies inside the
//!    lane's vector, written at once) and opens the next (the lane's *tail*).
//!    A segmented scan across the lanes (shuffles, restarted by each lane
//!    that holds a start) joins every lane's tail to the heads that follow
//!    it: the lane of a segment's end writes it, the open segment's value
//!    carries to the next round. A round with more starts than the window
//!    holds takes several passes, each over the positions the window covers.
//! 3. **Segments across tiles**, as in `segments`: a piece per tile in one of
//!    the tile's two slots, the last warp to finish a piece combines them in
//!    tile order.
//!
//! The order is fixed by the offsets and the tile alone (no GPU parameter):
//! `reduction::twin` performs the same combinations on the CPU. A segment's
//! elements are mapped with their index in the segment (arg-min/max).
//!
//! Launch: block `SHAPE_BLOCK`, one warp per tile (`shape::tiles`), a byte
//! per element of a round per warp of dynamic shared memory
//! ([`scan_smem`](crate::shape::scan_smem)); the input 16-byte aligned;
//! `pieces` and `tickets` as for `segments`.

use crate::kernels::segments::{emit, finish_segments, warp_search};
use crate::op::{Element, Reduction};
use crate::prim::*;
use crate::shape::{NO_SEGMENT, SCAN_ROUNDS, SHAPE_WARPS, Segments, tiles};
use crate::warp_reduce::warp_reduce;

/// A byte of the round map with no start.
const NO_START: u8 = 0xFF;

/// One result per segment of `segs` (CSR offsets) over `a[0..n]` (and `b`)
/// into `out[0..segs.count]`, in warp tiles of `tile` elements.
///
/// # Safety
/// As for `segments::segments`, with `a` and `b` 16-byte aligned, `tile` a
/// multiple of `SCAN_ROUNDS` rounds and `segs.offsets` not null.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segments_scan<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    n: u64,
    segs: Segments,
    tile: u64,
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    let width = T::LANES as u64;
    let round = 32 * width; // elements a round
    let tile = tile.max(round);
    let me = (block_idx_x() * SHAPE_WARPS + warp_id()) as u64;
    let count_tiles = tiles(n, tile);
    if me >= count_tiles {
        return; // the whole warp: no barrier follows
    }
    let (lane, count, offsets) = (lane_id() as u64, segs.count, segs.offsets);
    let two = R::INPUTS == 2;
    let w0 = me * tile;
    let w1 = (w0 + tile).min(n);
    let off = |s: u64| if s > count { u64::MAX } else { load_u64(offsets, s) };

    // this warp's byte map: a byte per element of a round
    let map = dyn_shared::<u8>().ptr(warp_id() * round as u32);
    for k in 0..width {
        *map.add((lane * width + k) as usize) = NO_START;
    }
    sync_warp(FULL_MASK);

    // the window: starts `wb..wb + 32`, the first at or after the tile's
    // first element; the segment open at it (started before), if any
    let mut wb = warp_search(0, count, |s| off(s) >= w0);
    let mut window = off(wb + lane);
    let first_start = shfl_sync(FULL_MASK, window, 0);
    let mut open = if wb > 0 && first_start > w0 { wb - 1 } else { NO_SEGMENT };
    let mut open_start = if open == NO_SEGMENT { 0 } else { off(open) };
    let mut acc = R::IDENTITY; // each lane's part of the open segment
    let mut spread = true; // in every lane (else in lane 0 alone, the others IDENTITY)

    let load = |e: u64| {
        let x = if e + width <= n {
            T::load16(a.wrapping_add(e as usize), 0)
        } else {
            T::Lanes::splat(load_u64(a, e.min(n - 1)))
        };
        let y = if two && e + width <= n { T::load16(b.wrapping_add(e as usize), 0) } else { x };
        (x, y)
    };
    let mut r = w0;
    while r < w1 {
        let e = r + lane * width; // this lane's first element in the first round
        let next = shfl_sync(FULL_MASK, window, 0); // the next start
        if next >= r + SCAN_ROUNDS as u64 * round && r + SCAN_ROUNDS as u64 * round <= w1 {
            // all loads asked for, then folded four at a time (the operations' own
            // `fold_vectors` of four, as `single_pass` folds)
            let xs: [(T::Lanes, T::Lanes); SCAN_ROUNDS] = core::array::from_fn(|v| load(e + v as u64 * round));
            let first = |h: usize| core::array::from_fn(|v| e + (4 * h + v) as u64 * round - open_start);
            let half = |h: usize| core::array::from_fn::<_, 4, _>(|v| xs[4 * h + v]);
            let (p, q) = (half(0), half(1));
            acc = T::Lanes::fold_into::<R, 4>(acc, p.map(|x| x.0), p.map(|x| x.1), first(0));
            acc = T::Lanes::fold_into::<R, 4>(acc, q.map(|x| x.0), q.map(|x| x.1), first(1));
            spread = true;
            r += SCAN_ROUNDS as u64 * round;
            continue;
        }
        // rounds with starts: one vector at a time (no registers held for the
        // others), all asked for into the L1 first
        for v in 0..SCAN_ROUNDS as u64 {
            if e + v * round < n {
                prefetch_l1(a.wrapping_add((e + v * round) as usize));
                if two {
                    prefetch_l1(b.wrapping_add((e + v * round) as usize));
                }
            }
        }
        let mut round_of = |v: u64, (x, y): (T::Lanes, T::Lanes)| {
            let rv = r + v * round;
            let end = (rv + round).min(w1);
            let ev = e + v * round;
            if shfl_sync(FULL_MASK, window, 0) >= end && end == rv + round {
                acc = T::Lanes::fold_into::<R, 1>(acc, [x], [y], [ev - open_start]);
                spread = true;
                return;
            }
            let mut from = rv; // the pass's first position
            while from < end {
                // the window's starts in the pass: indices 0..31 (31 marks
                // how far the window reaches), empty segments written now
                let following = shfl_down_sync(FULL_MASK, window, 1);
                let to = shfl_sync(FULL_MASK, window, 31).min(end); // the pass covers from..to
                let usable = lane < 31 && window < end;
                let taken = ballot_sync(FULL_MASK, usable).count_ones() as u64;
                if usable && following == window {
                    store_u64(out, wb + lane, R::finish(R::IDENTITY, 0));
                } else if usable {
                    *map.add((window - rv) as usize) = lane as u8;
                }
                sync_warp(FULL_MASK);
                let marks = take_marks(map.add((lane * width) as usize), width as u32);
                sync_warp(FULL_MASK);

                // this lane's last start, packed (position << 8 | window index) + 1,
                // and the last start before this lane's (0: none)
                let mut last = 0u32;
                for k in 0..width as u32 {
                    let m = (marks >> (8 * k)) as u8;
                    if m != NO_START {
                        last = ((lane as u32 * width as u32 + k) << 8 | m as u32) + 1;
                    }
                }
                let flags = ballot_sync(FULL_MASK, last != 0);
                let below = flags & ((1u32 << lane) - 1);
                let before = shfl_sync(FULL_MASK, last, 31u32.saturating_sub(below.leading_zeros()));
                let (head_id, head_start) = match if below == 0 { 0 } else { before } {
                    0 => (open, open_start),
                    p => (wb + ((p - 1) & 0xFF) as u64, rv + ((p - 1) >> 8) as u64),
                };

                // the lane's elements in order: head, segments inside, tail;
                // those of this pass (from..to) are the bits of `valid`
                let full = ev + width <= n;
                let bit = |p: u64| (1u32 << p.saturating_sub(ev).min(width)) - 1;
                let valid = bit(to) & !bit(from);
                let walk = (R::IDENTITY, R::IDENTITY, false, head_start, 0u32, 0u32);
                let (run, head, starts, _, _, close_k) = x.fold_in_order(y, ev, walk, |st, xi, yi, i| {
                    let (mut run, mut head, mut starts, mut seg_start, mut seg, mut close_k) = st;
                    let k = (i - ev) as u32;
                    let m = (marks >> (8 * k)) as u8;
                    if m != NO_START {
                        if !starts {
                            (head, close_k, starts) = (run, k, true);
                        } else {
                            store_u64(out, wb + seg as u64, R::finish(run, i - seg_start));
                        }
                        (run, seg, seg_start) = (R::IDENTITY, m as u32, i);
                    }
                    if valid >> k & 1 != 0 {
                        let (xi, yi) =
                            if full { (xi, yi) } else { (load_u64(a, i), if two { load_u64(b, i) } else { xi }) };
                        let yi = if two { yi } else { xi };
                        run = R::combine(run, R::map(xi, yi, i - seg_start));
                    }
                    (run, head, starts, seg_start, seg, close_k)
                });
                let close_at = ev + close_k as u64;

                // the open segment so far, and the segmented scan of the tails
                let carry = if spread { warp_reduce(acc, R::combine) } else { acc };
                let carry = shfl_sync(FULL_MASK, carry, 0);
                let scanned = segmented_scan::<R::Acc>(run, flags, R::combine);
                let prior = shfl_sync(FULL_MASK, scanned, lane_id().saturating_sub(1));
                let closing = if lane == 0 {
                    carry
                } else if below != 0 {
                    prior
                } else {
                    R::combine(carry, prior)
                };
                let done = starts
                    && head_id < count
                    && emit::<T, R>(
                        R::combine(closing, head),
                        head_id,
                        head_start,
                        close_at,
                        me,
                        w0,
                        w1,
                        tile,
                        pieces,
                        tickets,
                        out,
                    );
                finish_segments::<T, R>(ballot_sync(FULL_MASK, done), head_id, head_start, close_at, tile, pieces, out);

                let tail = shfl_sync(FULL_MASK, scanned, 31);
                let carried = if flags != 0 { tail } else { R::combine(carry, tail) };
                (acc, spread) = (if lane == 0 { carried } else { R::IDENTITY }, false);
                if flags != 0 {
                    let newest = shfl_sync(FULL_MASK, last, 31 - flags.leading_zeros());
                    open = wb + ((newest - 1) & 0xFF) as u64;
                    open_start = rv + ((newest - 1) >> 8) as u64;
                }
                if taken != 0 {
                    wb += taken;
                    window = off(wb + lane);
                }
                from = to;
            }
        };
        // one round at a time (a loop, not four copies: registers)
        let rounds = ((w1 - r + round - 1) >> round.trailing_zeros()).min(SCAN_ROUNDS as u64);
        // (the next round's vector asked for before this one is split: two
        // loads in flight)
        let mut v = 0;
        let mut next = load(e);
        while v < rounds {
            let this = next;
            if v + 1 < rounds {
                next = load(e + (v + 1) * round);
            }
            round_of(v, this);
            v += 1;
        }
        r += SCAN_ROUNDS as u64 * round;
    }

    // the segment open at the tile's end: written, or a piece
    let v = if spread { warp_reduce(acc, R::combine) } else { acc };
    if open < count {
        let end = off(open + 1);
        let done = lane == 0 && emit::<T, R>(v, open, open_start, end, me, w0, w1, tile, pieces, tickets, out);
        finish_segments::<T, R>(ballot_sync(FULL_MASK, done), open, open_start, end, tile, pieces, out);
    }
    // the last tile: the empty segments at the input's end
    if me + 1 == count_tiles {
        let mut s = wb + lane;
        while s < count {
            store_u64(out, s, R::finish(R::IDENTITY, 0));
            s += 32;
        }
    }
}

/// The `bytes` (2, 4 or 8) bytes of the round map at `at`, as the low
/// bytes of a word; each set back to `NO_START`.
///
/// # Safety
/// `at` in this warp's map, aligned to `bytes`.
#[inline(always)]
unsafe fn take_marks(at: *mut u8, bytes: u32) -> u64 {
    match bytes {
        2 => (core::mem::replace(&mut *at.cast::<u16>(), u16::MAX) as u64) | !0xFFFF,
        4 => (core::mem::replace(&mut *at.cast::<u32>(), u32::MAX) as u64) | !0xFFFF_FFFF,
        _ => core::mem::replace(&mut *at.cast::<u64>(), u64::MAX),
    }
}

/// The inclusive segmented scan of `v`, restarted at every lane whose bit is
/// set in `flags`: lane `l` gets the lanes from its segment's first to `l`,
/// combined in order (Hillis and Steele's steps 1, 2, 4, 8, 16; a step
/// takes the lane `d` below only from the same segment).
///
/// # Safety
/// All 32 lanes together, with the same `flags`.
#[inline(always)]
unsafe fn segmented_scan<A: Shuffle>(mut v: A, flags: u32, combine: impl Fn(A, A) -> A) -> A {
    let lane = lane_id();
    // the segment's first lane: the last flagged at or below this one (0 if none)
    let upto = flags & (((2u64 << lane) - 1) as u32);
    let first = 31u32.saturating_sub(upto.leading_zeros()) * (upto != 0) as u32;
    let mut d = 1;
    while d < 32 {
        let t = shfl_sync(FULL_MASK, v, lane.saturating_sub(d));
        if lane >= d && lane - d >= first {
            v = combine(t, v);
        }
        d *= 2;
    }
    v
}
