//! Step 14 (ours): one result per row of a matrix, or per segment
//! `offsets[s]..offsets[s+1]` (CUB's `DeviceSegmentedReduce`, torch's
//! `sum(dim=1)`).
//!
//! The usual designs give each row a thread, a warp or a block, and each
//! fits one range of row lengths: a block per row of 16 elements idles, a
//! warp per row of 2^20 leaves the GPU empty when there are few rows, and
//! segments of mixed lengths leave the longest one's owner working alone at
//! the end. Here the work is cut by *bytes*, not by rows (`gpu::shape`):
//!
//! 1. **Warp tiles.** Warp `t` owns elements `t·E..(t+1)·E` of the input
//!    (16 to 256 KiB: about an average segment, `shape::tile_bytes`),
//!    whatever the segments. It finds the segments that overlap its
//!    tile, the first and the last, in the offsets' index (the first
//!    segment reaching, and the first starting from, each boundary of
//!    2048 elements: two loads at once, `shape::Segments::index`), or for
//!    rows by arithmetic.
//! 2. **Teams.** The warp splits into teams of `lanes` threads (1 to 32;
//!    about four 16-byte vectors a thread, from the tile's average segment
//!    length, or as the caller fixes it) that take one segment each, read
//!    it as `single_pass` reads its input (16-byte loads, four in flight, the
//!    unaligned head and tail one by one), and reduce it with shuffles. In
//!    `segments_tailed_*` (`TAILED`: the host picks it for lengths with a
//!    heavy tail), a piece far longer than the team was sized for
//!    (`shape::piece_lanes`: one long segment among short ones) waits for
//!    the round's end, and the whole warp reads it: a team of a few lanes
//!    would read on alone while the others idle. (Its registers, 56 against
//!    48 for an f32 sum, would slow every other case.)
//! 3. **Segments across tiles.** A segment inside one tile is written at
//!    once. A longer one leaves one partial per tile (two slots per tile:
//!    the piece that runs past its end, and the one that started before
//!    it); the warp that finishes the last of its pieces (`atomicInc` on the
//!    segment's ticket, as `single_pass` picks its last block) combines them
//!    in tile order with the whole warp. The ticket wraps back to 0.
//! 4. **Rows, short and long.** Two entries of their own, without the
//!    index, the teams and their registers (the host picks them), whose
//!    blocks read one contiguous run at a time rather than a stretch per
//!    warp (fewer DRAM streams at once: CUB's block per row): rows of 1 to
//!    32 16-byte vectors (a power of two, back to back, aligned;
//!    `shape::short_row_vectors`) are read by the block as one stretch, and
//!    the `v` lanes that hold a row's vectors reduce it with shuffles
//!    ([`short_rows`]; a lane a row would read 64-byte-strided 16-byte
//!    pieces and pay the per-segment loop for every 64 bytes); rows that
//!    are a whole number of *block* tiles (`shape::long_rows`) are folded a
//!    tile per block by all its threads ([`long_rows`]).
//! 5. **Long segments.** CSR segments long on average (the host's choice)
//!    are read as long rows are, a block a tile, one piece of the tile's
//!    segments after another ([`long_segments`], `segments_long_*`): the
//!    block's loads a few contiguous runs, where warp tiles are thousands
//!    of streams at once.
//!
//! The result for a segment is the same for every launch: the tiles, the
//! teams and the order of every combination depend on the shape's extent,
//! the offsets and the strategy alone (`gpu_to_gpu`: the GPU does not
//! enter; `reduction::twin` does the same additions on the CPU).
//!
//! An empty segment gets `finish(IDENTITY, 0)`: 0 for sums, NaN for a
//! mean, and for arg-min/max an index of `u64::MAX`, the "no element"
//! marker.
//!
//! Launch: `segments` blocks of `SEGMENTS_BLOCK`, one warp per tile
//! (`shape::tiles`), no shared memory; `rows_short`, `rows_long` and
//! `segments_long` blocks of `SHAPE_BLOCK`, one block per tile,
//! `rows_short` no shared memory, `rows_long` `SHAPE_WARPS` accumulators
//! of it and `segments_long` `2 · SHAPE_WARPS`; `pieces` with two accumulators per
//! tile, `tickets[0..count]` zero.

use crate::block_reduce::block_reduce;
use crate::op::{Element, Reduction};
use crate::prim::*;
use crate::shape::{
    SEGMENTS_WARPS, SHAPE_BLOCK, SHAPE_WARPS, Segments, lanes_for, piece_lanes, piece_slot, tile_span, tiles,
};
use crate::strided_fold::{Ends, strided_fold};
use crate::warp_reduce::{team_reduce, warp_reduce};

/// This warp's tile of the segments kernels, `(tile, me, w0, w1, lo, hi)`:
/// tile `me` of `tile` elements of `0..n` (a `tile` of 0 taken as 1: the
/// host plans at least 16 KiB, and this drops the panic path), its elements
/// `w0..w1`, and the segments `lo..hi` that overlap it
/// (`Segments::tile_range`: for rows by arithmetic, for CSR segments two
/// entries of their index, one load's wait; the last tile takes every
/// segment left). Past the last tile it *returns from the kernel*, for the
/// whole warp (no barrier may follow). A macro, not a function: the
/// `Option` a function would return cost `segments_tailed_*` 8 registers.
macro_rules! warp_tile {
    ($n:expr, $segs:expr, $tile:expr) => {{
        let tile = ($tile as u64).max(1);
        let me = (block_idx_x() * SEGMENTS_WARPS + warp_id()) as u64;
        let count_tiles = tiles($n, tile);
        if me >= count_tiles {
            return;
        }
        let (w0, w1, lo, hi) = $segs.tile_range(me, tile, count_tiles, $n);
        (tile, me, w0, w1, lo, hi)
    }};
}
pub(crate) use warp_tile;

/// One result per segment of `a[0..n]` (and `b`) into `out[0..segs.count]`,
/// in warp tiles of `tile` elements; with `TAILED`, long pieces by the
/// whole warp.
///
/// # Safety
/// `a[0..n]` (and `b[0..n]` for two inputs) valid and aligned; every
/// segment within `0..n` and the offsets non-decreasing (the host checks
/// them); for CSR segments their index over `n` elements
/// (`Segments::index`, which the host lays out after the offsets) and
/// `tile` a whole number of `INDEX_GRANULE`s; `tile` a power of two
/// (`shape::tiles` shifts by it), at least 16 bytes' worth of elements;
/// `pieces` with `2 · tiles(n, tile)` accumulators, `tickets[0..count]`
/// zero and not used by a concurrent launch; `out[0..count]` writable; the
/// launch as the module's *Launch* line says; `lanes` a power of two up to
/// 32, or `AUTO_LANES | v` (choose per tile: `shape::lanes_for`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segments<T: Element + Vector, R: Reduction<T>, const TAILED: bool>(
    a: *const T,
    b: *const T,
    n: u64,
    segs: Segments,
    tile: u64,
    lanes: u32,
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    let size = size_of::<T>();
    let (tile, me, w0, w1, lo, hi) = warp_tile!(n, segs, tile);
    let g = lanes_for(lanes, w1.min(n) - w0, hi - lo, size).clamp(1, 32);
    let (team, lane) = ((lane_id() / g) as u64, (lane_id() % g) as u64);

    let mut first = lo;
    while first < hi {
        let s = first + team;
        let active = s < hi;
        let (b0, e0) = if active { segs.bounds(s) } else { (0, 0) };
        let wide =
            TAILED && active && e0.min(w1) > b0.max(w0) && piece_lanes(lanes, g, e0.min(w1) - b0.max(w0), size) != g;
        // each team's own segment, then the round's long pieces one at a time by the whole warp
        let mut long = if TAILED { ballot_sync(FULL_MASK, wide && lane == 0) } else { 0 };
        let mut own = true;
        loop {
            // a long piece's segment from its team's leader (shuffled in every pass: fewer registers)
            let src = if own { lane_id() } else { long.trailing_zeros() };
            let pick = |x: u64| if TAILED { shfl_sync(FULL_MASK, x, src) } else { x };
            let (js, jb, je) = (pick(s), pick(b0), pick(e0));
            let (jl, jg, live) = if own { (lane, g, active && !wide) } else { (lane_id() as u64, 32, true) };
            let (p0, p1) = (jb.max(w0), je.min(w1));
            let v = if live && p0 < p1 {
                strided_fold::<T, R>(a, b, p0, p1, jb, jl, jg as u64, Ends::InTurn)
            } else {
                R::IDENTITY
            };
            let v = team_reduce(v, jg, R::combine);
            let last = live && jl == 0 && emit::<T, R>(v, js, jb, je, me, w0, w1, tile, pieces, tickets, out);
            finish_segments::<T, R>(ballot_sync(FULL_MASK, last), js, jb, je, tile, pieces, out);
            if !own {
                long &= long - 1;
            }
            own = false;
            if long == 0 {
                break;
            }
        }
        first += (32 / g) as u64;
    }
}

/// A segment's piece `v` over tile `me` (`w0..w1`), by the lane that holds
/// it: a segment inside the tile is written (empty ones too), else the
/// piece goes to its slot and the segment's ticket is taken. Whether this
/// was the segment's last piece.
///
/// # Safety
/// As for [`segments`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn emit<T: Element, R: Reduction<T>>(
    v: R::Acc,
    s: u64,
    b0: u64,
    e0: u64,
    me: u64,
    w0: u64,
    w1: u64,
    tile: u64,
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) -> bool {
    if b0 >= w0 && e0 <= w1 {
        store_u64(out, s, R::finish(v, e0 - b0));
        return false;
    }
    store_u64(pieces, piece_slot(me, e0 > w1), v);
    threadfence(); // the piece is visible GPU-wide before the ticket is taken
    let (t0, t1) = tile_span(b0, e0, tile);
    let k = (t1 - t0) as u32;
    atomic_inc(tickets.add(s as usize), k) == k
}

/// The warp combines the pieces of each segment whose last piece lane `l`
/// wrote (bit `l` of `done`; that lane's `s`, `b0`, `e0`) and writes it.
///
/// # Safety
/// All 32 lanes together; as for [`segments`].
#[inline(always)]
pub(crate) unsafe fn finish_segments<T: Element, R: Reduction<T>>(
    mut done: u32,
    s: u64,
    b0: u64,
    e0: u64,
    tile: u64,
    pieces: *mut R::Acc,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    while done != 0 {
        let src = done.trailing_zeros();
        let (sb, se, ss) = (shfl_sync(FULL_MASK, b0, src), shfl_sync(FULL_MASK, e0, src), shfl_sync(FULL_MASK, s, src));
        let (t0, t1) = tile_span(sb, se, tile);
        let acc = combine_pieces::<T, R>(pieces, t1 - t0 + 1, |k| piece_slot(t0 + k, t0 + k < t1));
        if lane_id() == 0 {
            store_u64(out, ss, R::finish(acc, se - sb));
        }
        done &= done - 1;
    }
}

/// The last warp's pass over a segment's (or a long row's) `count` pieces,
/// piece `k` in slot `slot(k)` of `pieces`: lane `l` of 32 combines pieces
/// `l, l + 32, ...` in order, then the lanes meet in `warp_reduce`'s tree
/// (`reduction::twin::combine_pieces` on the CPU). The result is
/// valid in lane 0.
///
/// # Safety
/// All 32 lanes of the warp together, after the ticket that says every
/// piece is written (the fence here makes them visible); `count` slots
/// readable.
#[inline(always)]
unsafe fn combine_pieces<T: Element, R: Reduction<T>>(
    pieces: *mut R::Acc,
    count: u64,
    slot: impl Fn(u64) -> u64,
) -> R::Acc
where
    R::Acc: Shuffle,
{
    threadfence(); // the other blocks' pieces, written before their tickets
    let mut acc = R::IDENTITY;
    let mut k = lane_id() as u64;
    while k < count {
        acc = R::combine(acc, load_relaxed(pieces.add(slot(k) as usize), 0));
        k += 32;
    }
    warp_reduce(acc, R::combine)
}

/// Rows of `v` 16-byte vectors (`shape::short_row_vectors`: a power of two
/// up to 32, back to back, aligned), `cols` elements each. The block takes
/// a tile of `tile` elements (16 KiB or more) as one stretch and reads it
/// 16 KiB a round: each warp 2 KiB of it, four 512-byte loads in flight, so
/// the block's loads are one contiguous run (fewer DRAM streams than a
/// tile per warp) and each row lies in `v` neighbouring
/// lanes of one load; each lane folds its vector's lanes pairwise, and the
/// team of `v` lanes reduces the row with shuffles (`team_reduce`). Row
/// `r`'s result is `team_reduce` of `combine(IDENTITY, fold(vector k))`,
/// `k < v`, whoever reads it. Its own entry (`rows_short_*`): none of the
/// segments kernel's state, so far fewer registers and more warps an SM.
///
/// # Safety
/// As for [`segments`], with `a` (and `b`) 16-byte aligned, `cols` such a
/// row length and `n` a whole number of rows.
#[inline(always)]
pub unsafe fn short_rows<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    n: u64,
    cols: u64,
    tile: u64,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    let width = T::LANES as u64;
    let stretch = tile.max(1); // this block's tile, elements
    let me = block_idx_x() as u64;
    let (first, end) = (me * stretch / width, ((me + 1) * stretch).min(n) / width); // its vectors
    let v = (cols / width).clamp(1, 32) as u32; // a power of two (the host's contract)
    let (mask, shift, lane) = (v as u64 - 1, v.trailing_zeros(), lane_id() as u64);
    let load = |j: u64| {
        let x = T::load16(a, j);
        (x, if R::INPUTS == 2 { T::load16(b, j) } else { x })
    };
    let fold = |(x, y): (T::Lanes, T::Lanes), j: u64| R::combine(R::IDENTITY, x.map_reduce::<R>(y, (j & mask) * width));
    // the rows of one load: every lane shuffles; a team is all in or all out
    let write = |acc: R::Acc, j: u64, live: bool| {
        let r = team_reduce(acc, v, R::combine);
        if live && lane & mask == 0 {
            store_u64(out, j >> shift, R::finish(r, cols));
        }
    };
    const ROUND: u64 = 4 * SHAPE_BLOCK as u64; // vectors a block reads a round
    let mut j0 = first; // a multiple of ROUND (tiles are at least 16 KiB)
    while j0 + ROUND <= end {
        let j = j0 + warp_id() as u64 * 128 + lane;
        let (w, x, y, z) = (load(j), load(j + 32), load(j + 64), load(j + 96));
        write(fold(w, j), j, true);
        write(fold(x, j + 32), j + 32, true);
        write(fold(y, j + 64), j + 64, true);
        write(fold(z, j + 96), j + 96, true);
        j0 += ROUND;
    }
    while j0 < end {
        let j = j0 + thread_idx_x() as u64; // a warp's 32 vectors: whole rows
        let live = j < end;
        write(if live { fold(load(j), j) } else { R::IDENTITY }, j, live);
        j0 += SHAPE_BLOCK as u64;
    }
}

/// This block's tile of `tile` elements (a power of two) in `rows_long`
/// and `segments_long`: `(log2 tile, the tile in the grid's order, its
/// first element)`. No division before the first load (a 64-bit one is a
/// long subroutine).
#[inline(always)]
fn block_tile(tile: u64) -> (u32, u64, u64) {
    let (shift, me) = (tile.trailing_zeros(), block_idx_x() as u64);
    (shift, me, me << shift)
}

/// Rows whose block tiles of `tile` elements each lie inside one row
/// (`shape::long_rows`: rows back to back, `cols` a whole number of
/// tiles): the block folds its tile with all `SHAPE_BLOCK` threads, as
/// `single_pass` folds its input (each load of the block one contiguous
/// 4 KiB run, four in flight), and reduces it as `single_pass` reduces a
/// block (`block_reduce`); it writes the row's result, or (several tiles a
/// row) a piece, and the last of the row's blocks combines the pieces with
/// warp 0 ([`combine_pieces`], as [`segments`] does). Its own entry
/// (`rows_long_*`) and order (`reduction::twin`).
///
/// # Safety
/// As for [`segments`], with `tile` a power of two, `cols` a multiple of
/// it and `n` a whole number of rows; `pieces` with one accumulator per
/// tile; `SHAPE_WARPS` accumulators of dynamic shared memory.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn long_rows<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    n: u64,
    cols: u64,
    tile: u64,
    pieces: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) where
    R::Acc: Shuffle,
{
    let (shift, me, w0) = block_tile(tile);
    if w0 >= n {
        return; // the whole block: no barrier follows
    }
    let per_row = (cols >> shift).max(1); // tiles a row
    let row = if per_row == 1 { me } else { me / per_row };
    let tile = 1 << shift;
    let v =
        strided_fold::<T, R>(a, b, w0, w0 + tile, row * cols, thread_idx_x() as u64, SHAPE_BLOCK as u64, Ends::InTurn);
    let v = block_reduce::<R::Acc, SHAPE_BLOCK>(v, SHAPE_BLOCK, R::IDENTITY, R::combine, &mut dyn_shared());
    if warp_id() != 0 {
        return;
    }
    if per_row == 1 {
        if lane_id() == 0 {
            store_u64(out, row, R::finish(v, cols));
        }
        return;
    }
    let mut last = false;
    if lane_id() == 0 {
        store_u64(pieces, me, v);
        threadfence(); // the piece is visible GPU-wide before the ticket is taken
        let k = (per_row - 1) as u32;
        last = atomic_inc(tickets.add(row as usize), k) == k;
    }
    if ballot_sync(FULL_MASK, last) == 0 {
        return;
    }
    let acc = combine_pieces::<T, R>(pieces, per_row, |k| row * per_row + k);
    if lane_id() == 0 {
        store_u64(out, row, R::finish(acc, cols));
    }
}

/// Long segments, a block a tile, as [`long_rows`] reads rows: the block
/// folds its tile of `tile` elements (a power of two) with all
/// `SHAPE_BLOCK` threads, as
/// `single_pass` folds its input (each load of the block one contiguous
/// 4 KiB run, four in flight: a few DRAM streams an SM, where a warp a
/// tile keeps one a warp), one segment's piece at a time (its unaligned
/// first and last elements loaded with its first vectors:
/// `strided_fold`'s `Ends::EndsFirst`), and reduces each
/// piece as `single_pass` reduces a block (`block_reduce`, its warps'
/// results in one of two halves of the shared memory in turn, so that the
/// next piece need not wait for warp 0 to read them). Warp 0 writes the
/// segment's result, or (a segment over several tiles) its piece, and the
/// last of the segment's blocks combines the pieces with it
/// ([`emit`], [`finish_segments`], as [`segments`] does). Which tile a
/// block folds comes from the offsets' schedule where `at` names it: the
/// tiles with the most segments first (`Segments::scheduled`), so that the
/// costliest do not end the launch; else (`at` 0) from the block's place
/// in the grid. The tile's segments come from the offsets' index. Its own
/// order, the same as `long_rows`' for rows (`reduction::twin`): which
/// block folds a tile does not change what it writes.
///
/// # Safety
/// As for [`segments`], with CSR segments and `tile` a power of two;
/// `2 · SHAPE_WARPS` accumulators of dynamic shared memory; `at` 0, or one
/// more than the entry where the offsets' schedule of `tile` starts
/// (`shape::schedule_at`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn long_segments<T: Element + Vector, R: Reduction<T>>(
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
    let (shift, block, _) = block_tile(tile);
    // the tile the schedule gives this block, the costliest first (a block
    // a tile: entry `block` lies within the schedule of `tile`)
    let me = if at != 0 { segs.scheduled(at as u64 - 1 + block, n) } else { block as u32 } as u64;
    let w0 = me << shift;
    if w0 >= n {
        return; // the whole block: no barrier follows
    }
    let tile = 1 << shift;
    let w1 = w0 + tile;
    let half = SHAPE_WARPS as usize * size_of::<R::Acc>();
    // segment `s`'s piece, its warps' results in half `k` of the shared memory
    let piece = |s: u64, k: usize| {
        let (b0, e0) = segs.bounds(s);
        let (p0, p1) = (b0.max(w0), e0.min(w1));
        let v = if p0 < p1 {
            strided_fold::<T, R>(a, b, p0, p1, b0, thread_idx_x() as u64, SHAPE_BLOCK as u64, Ends::EndsFirst)
        } else {
            R::IDENTITY
        };
        let mut sums = dyn_shared::<R::Acc>().at_byte::<R::Acc>(k * half);
        let v = block_reduce::<R::Acc, SHAPE_BLOCK>(v, SHAPE_BLOCK, R::IDENTITY, R::combine, &mut sums);
        if warp_id() == 0 {
            let last = lane_id() == 0 && emit::<T, R>(v, s, b0, e0, me, w0, w1, tile, pieces, tickets, out);
            finish_segments::<T, R>(ballot_sync(FULL_MASK, last), s, b0, e0, tile, pieces, out);
        }
    };
    let (_, _, lo, hi) = segs.tile_range(me, tile, tiles(n, tile), n);
    let mut s = lo;
    while s < hi {
        piece(s, (s - lo) as usize % 2);
        s += 1;
    }
}
