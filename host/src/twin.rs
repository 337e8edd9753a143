//! The CPU twins of the reproducible orders: the same bits as a
//! `gpu_to_gpu` result, on a CPU (to check a result, or to compute one
//! where no GPU is). A feature of the library, not of its tests.
//!
//! * [`fixed_order`]: a flat reduction, in the order of the reproducible
//!   kernels (`gpu::op::fixed_order`).
//! * [`shaped_fixed_order`]: the additions of `kernels/segments.rs` and
//!   `kernels/columns.rs`, in their order, serially, so that a `gpu_to_gpu`
//!   shaped result ([`Reducer::reduce_shaped`](crate::Reducer::reduce_shaped))
//!   can be compared with it bit for bit. It uses only the kernels' own
//!   operators and the shape's plan.
//!
//! The order is a function of the shape, the offsets and the strategy
//! (`dispatch::shape_plan`: no GPU parameter; the kernels' blocks fixed), computed as
//! if the input started on a 16-byte boundary (the `gpu_to_gpu` path copies
//! a view that does not).
//!
//! ```text
//! rows, segments: tile t = elements [t·E, (t+1)·E); team of g lanes per tile (gpu::shape::lanes_for);
//!   segments_tailed: 32 for a piece long for its team (gpu::shape::piece_lanes)
//!   segments_staged, segments_paired, segments_scheduled: a piece that fits a stage (gpu::shape::fits_stage) and is at most
//!   STAGE_LANE_ELEMENTS long folded as one run (Reduction::fold_run); a longer one that
//!   fits: lane l of 32 folds its elements l, l+32, ... as one run, then team_reduce's tree
//!   (where Reduction::PIECE_IN_PASSES, Reduction::fold_piece with the lanes added in that tree);
//!   another by the whole warp
//!   piece of segment s in tile t: lane l folds as strided_fold does (head one by one,
//!   16-byte vectors four at a time, then one at a time, each by `fold_vectors`, tail one by one),
//!   the g lane values meet in team_reduce's tree; a segment in one tile is finished at once,
//!   else lane l of 32 combines pieces t0+l, t0+l+32, ... and the 32 meet in warp_reduce's tree
//! short rows (rows_short): each row's vectors folded pairwise, a lane each, in team_reduce's tree
//! long rows (rows_long): block tile t, thread l of 256 folds as strided_fold does, each warp's
//!   tree, then warp 0's tree over the 8 warps' results and IDENTITY (block_reduce); pieces of a
//!   row as a segment's
//! columns: row lane l of `row_lanes` folds rows r0+l, r0+l+row_lanes, ... of its chunk in order,
//!   four at a time (`fold_strided`) while four remain, then one by one;
//!   the row lanes combine in order, from lane 0's accumulator; chunks > 1: row lane l combines chunks l, l+row_lanes, ...
//!   in order, and the row lanes as a tree (lane r takes in lane r + row_lanes/2, then r + row_lanes/4, ...)
//! ```

use crate::dispatch::{ShapeKernel, shape_plan as plan};
use crate::error::{Error, Result, host_vec};
use crate::input::Element;
use crate::shape::{Fit, Shape, Strategy};
use gpu::names::Op;
use gpu::op::fixed_order::{FixedOrder, TwinWarp, WARP, team_tree, warp_tree};
use gpu::op::{PortableLogSumExp, Reduction};
use gpu::shape::{
    Columns, SHAPE_BLOCK, STAGE_LANE_ELEMENTS, Segments, fits_stage, lanes_for, piece_lanes, tile_span, tiles,
    vector_columns,
};

/// A flat reduction of `a` (and `b`, for an operation of two inputs; pass
/// `a` again otherwise) in the reproducible kernels' order (`n` alone
/// decides it): the bits of a `gpu_to_gpu` result (NaN payloads aside).
/// Two inputs of different lengths are [`Error::InputsDiffer`].
///
/// ```
/// use reduction::{Error, Sum, op::Dot, twin::fixed_order};
/// let xs: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32 - 3.0).collect();
/// assert_eq!(fixed_order::<Sum, f32>(&xs, &xs)?, xs.iter().sum::<f32>()); // exact data: any order agrees
/// assert!(matches!(fixed_order::<Dot, f32>(&xs, &xs[1..]), Err(Error::InputsDiffer { .. })));
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn fixed_order<R: FixedOrder<T>, T: Copy>(a: &[T], b: &[T]) -> Result<R::Out> {
    if R::INPUTS == 2 && a.len() != b.len() {
        return Err(Error::InputsDiffer { op: R::NAME, a: a.len(), b: b.len() });
    }
    Ok(gpu::op::fixed_order::fixed_order::<R, T>(a, b))
}

/// Operation `R` on each row, column or segment of `inputs` (one, or two of
/// the same length for a dot product) in exactly the order of the shaped
/// kernels on a 16-byte-aligned input, with the plan `strategy` gives: the
/// bits of [`Reducer::reduce_shaped`](crate::Reducer::reduce_shaped)
/// under `Determinism::GpuToGpu` (NaN payloads aside). Checked as the GPU
/// path checks: the shape against the input, the strategy, the type.
///
/// ```
/// use reduction::{Sum, twin::shaped_fixed_order, shape::{Matrix, Shape, Strategy}};
/// let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
/// let rows = shaped_fixed_order::<Sum, f32>(&[&x], Shape::Rows(Matrix::new(3, 4)), Strategy::Auto)?;
/// assert_eq!(rows, [6.0, 22.0, 38.0]);
/// // results past the address space: an error, not an allocation of the wrapped size
/// assert!(shaped_fixed_order::<Sum, f32>(&[&x], Shape::Rows(Matrix::new((1 << 62) + 1, 0)), Strategy::Auto).is_err());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn shaped_fixed_order<R: Reduction<T>, T: Element>(
    inputs: &[&[T]],
    shape: Shape<'_>,
    strategy: Strategy,
) -> Result<Vec<R::Out>> {
    let (a, b) = match inputs {
        [a] => (*a, *a),
        [a, b] if a.len() == b.len() => (*a, *b),
        _ => {
            return Err(Error::Invalid(format!("{} takes {} input(s) of one length", R::NAME, R::INPUTS)));
        }
    };
    shape.results_bytes(size_of::<R::Out>())?;
    let op = Op::from_name(R::NAME)
        .ok_or_else(|| Error::Invalid(format!("{}: not an operation of the shaped kernels", R::NAME)))?;
    match crate::dispatch::portable_form(R::NAME, T::NAME) {
        Some(form) => portable::<R, T>(form, a, b, op, shape, strategy),
        None => in_order::<R, T>(a, b, op, shape, strategy),
    }
}

/// Operation `R` (the library's `op`) on each row, column or segment of
/// `a` (and `b`) in the order of the shaped kernels.
fn in_order<R: Reduction<T>, T: Element>(
    a: &[T],
    b: &[T],
    op: Op,
    shape: Shape<'_>,
    strategy: Strategy,
) -> Result<Vec<R::Out>> {
    let size = size_of::<T>();
    // the order of an aligned input: the plan the GPU path makes for one
    let aligned = match shape {
        Shape::Columns(m) => vector_columns(0, 0, R::INPUTS, m.pitch as u64, m.cols as u64, size),
        _ => true,
    };
    let ty = crate::dispatch::library_type(T::NAME, "the shaped twin")?;
    let p = plan(op, ty, size_of::<R::Acc>(), a.len(), shape, strategy, aligned, Fit::PORTABLE)?;
    let segs = match shape {
        Shape::Rows(m) => Segments::rows(m.rows as u64, m.cols as u64, m.pitch as u64),
        Shape::Segments(o) => Segments::of_entry(o.host.as_ptr(), o.count as u64, 0, 0),
        Shape::Columns(m) => {
            return columns::<R, T>(a, b, m.rows, m.cols, m.pitch, aligned, p.tile as u32, p.split);
        }
    };
    match p.kernel {
        ShapeKernel::RowsShort => short_rows::<R, T>(a, b, segs.count, segs.cols),
        // SAFETY: `segs` points into `o.host`, `count + 1` offsets checked
        // non-decreasing and within the input by `plan`, then their index over
        // `end` (the extent) elements; rows checked by `plan` too.
        kernel => unsafe {
            let order = match kernel {
                ShapeKernel::SegmentsTailed => Pieces::Tailed,
                k if k.staged() => Pieces::Staged,
                ShapeKernel::RowsLong | ShapeKernel::SegmentsLong => Pieces::Block,
                _ => Pieces::Teams,
            };
            segments::<R, T>(a, b, segs, shape.extent()? as u64, p.tile, p.split, order)
        },
    }
}

/// The twin of a portable form (`dispatch::portable_form`), which the GPU
/// runs for `R` on `T` under `gpu_to_gpu`: logsumexp of `f32` as
/// [`PortableLogSumExp`], in the same order.
fn portable<R: Reduction<T>, T: Element>(
    form: &str,
    a: &[T],
    b: &[T],
    op: Op,
    shape: Shape<'_>,
    strategy: Strategy,
) -> Result<Vec<R::Out>> {
    let unknown = || Error::Invalid(format!("{form}: the shaped twin has no such form of {}", R::NAME));
    let (Some(a), Some(b)) = (as_f32(a), as_f32(b)) else { return Err(unknown()) };
    if form != "logsumexp_portable" {
        return Err(unknown());
    }
    let out = in_order::<PortableLogSumExp, f32>(a, b, op, shape, strategy)?;
    (Box::new(out) as Box<dyn std::any::Any>).downcast::<Vec<R::Out>>().map(|out| *out).map_err(|_| unknown())
}

/// `x` as `f32`s, if `T` is `f32`.
fn as_f32<T: Element>(x: &[T]) -> Option<&[f32]> {
    // SAFETY: `T` is `f32`: the same slice, typed as what it is
    (std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>())
        .then(|| unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<f32>(), x.len()) })
}

/// The `rows_short` kernel's result for `rows` rows of `cols` elements, back
/// to back: each row's vectors (a lane each) folded pairwise and combined
/// into `IDENTITY`, then the team's tree.
fn short_rows<R: Reduction<T>, T: Copy>(a: &[T], b: &[T], rows: u64, cols: u64) -> Result<Vec<R::Out>> {
    let width = (16 / size_of::<T>()) as u64;
    let v = (cols / width) as usize; // 1..=32 (the planner's `short_row_vectors`)
    results(
        rows,
        (0..rows).map(|r| {
            let mut lane = [R::IDENTITY; WARP];
            for (k, l) in lane[..v].iter_mut().enumerate() {
                *l = R::combine(R::IDENTITY, vector::<R, T>(a, b, r * cols + k as u64 * width, r * cols));
            }
            R::finish(team_tree(&mut lane[..v], R::combine), cols)
        }),
    )
}

/// The twin's results, one an item: [`Error::HostMemory`] where the host
/// cannot hold `count` of them.
fn results<X>(count: u64, items: impl Iterator<Item = X>) -> Result<Vec<X>> {
    host_vec(usize::try_from(count).unwrap_or(usize::MAX), "the twin's results", items)
}

/// How the segments kernels fold a segment's piece of a tile.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pieces {
    /// `segments`: the tile's team.
    Teams,
    /// `segments_tailed`: the team, or the whole warp for a piece long
    /// for it (`shape::piece_lanes`).
    Tailed,
    /// `segments_staged`: when the piece fits a stage (`shape::fits_stage`),
    /// as one run (`Reduction::fold_run`) if it is at most
    /// `STAGE_LANE_ELEMENTS` long, else lane `l` of 32 its elements `l, l +
    /// 32, ...` as one run and the warp's tree (or `Reduction::fold_piece`,
    /// where the operation measures such pieces so); a piece that does not fit,
    /// as the whole warp reads it.
    Staged,
    /// `rows_long` and `segments_long`: thread `l` of `SHAPE_BLOCK` folds
    /// the piece as `strided_fold` does, each warp's 32 meet in its tree,
    /// then the warps' results (lanes past them `IDENTITY`) in warp 0's
    /// tree, as `block_reduce`.
    Block,
}

/// The segments kernels' result for each segment of `segs` over `a` (and
/// `b`), whose first `n` elements are cut into warp tiles of `tile`, each
/// piece folded as `order` says, in teams of `lanes` (`shape::lanes_for`:
/// fixed, or chosen per tile).
///
/// # Safety
/// As for `Segments::bounds`; every segment within `a[..n]`; `tile` a
/// power of two (`shape::tiles` shifts by it).
unsafe fn segments<R: Reduction<T>, T: Copy>(
    a: &[T],
    b: &[T],
    segs: Segments,
    n: u64,
    tile: u64,
    lanes: u32,
    order: Pieces,
) -> Result<Vec<R::Out>> {
    let count_tiles = tiles(n, tile);
    let width = (16 / size_of::<T>()) as u64; // elements a 16-byte vector
    // the team size tile `t` uses, as the kernel picks it
    let team = |t: u64| -> usize {
        // SAFETY: the caller's
        let (w0, w1, lo, hi) = unsafe { segs.tile_range(t, tile, count_tiles, n) };
        lanes_for(lanes, w1.min(n) - w0, hi - lo, size_of::<T>()).clamp(1, 32) as usize
    };
    results(
        segs.count,
        (0..segs.count).map(|s| {
            // SAFETY: s < count
            let (b0, e0) = unsafe { segs.bounds(s) };
            if b0 == e0 {
                return R::finish(R::IDENTITY, 0);
            }
            let (t0, t1) = tile_span(b0, e0, tile);
            let piece = |t: u64| {
                let (p0, p1) = (b0.max(t * tile), e0.min((t + 1) * tile));
                let in_tile = |p: u64| (p - t * tile) as u32; // a tile holds fewer than 2^32 elements
                if order == Pieces::Staged && fits_stage(in_tile(p0), in_tile(p1), width as u32, R::INPUTS) {
                    // the run of every `step`-th element from `from`, as the stage's lanes fold it
                    // positions counted from `p0` (a piece that fits a stage: fewer than 2^32)
                    let pair = |e: u32| (a[(p0 + e as u64) as usize], b[(p0 + e as u64) as usize]);
                    let run =
                        |from: u64, step: u32| R::fold_run((from - p0) as u32, (p1 - p0) as u32, step, pair, from - b0);
                    if p1 - p0 <= STAGE_LANE_ELEMENTS {
                        return run(p0, 1);
                    }
                    if R::PIECE_IN_PASSES {
                        return R::fold_piece(0, (p1 - p0) as u32, pair, p0 - b0, &TwinWarp);
                    }
                    let mut v = [R::IDENTITY; WARP];
                    for (l, v) in v.iter_mut().enumerate() {
                        *v = run(p0 + l as u64, WARP as u32);
                    }
                    return team_tree(&mut v, R::combine);
                }
                let g = match order {
                    Pieces::Block => return block_piece::<R, T>(a, b, p0, p1, b0),
                    Pieces::Teams => team(t),
                    Pieces::Tailed => piece_lanes(lanes, team(t) as u32, p1 - p0, size_of::<T>()) as usize,
                    Pieces::Staged => WARP,
                };
                let mut v = [R::IDENTITY; WARP];
                for (l, v) in v[..g].iter_mut().enumerate() {
                    *v = strided_fold::<R, T>(a, b, p0, p1, b0, l as u64, g as u64);
                }
                team_tree(&mut v[..g], R::combine)
            };
            if t0 == t1 {
                return R::finish(piece(t0), e0 - b0);
            }
            R::finish(combine_pieces::<R, T>((t0..=t1).map(piece)), e0 - b0)
        }),
    )
}

/// A piece `p0..p1` of the segment from `b0` as a block of `rows_long` or
/// `segments_long` reduces it ([`Pieces::Block`]).
fn block_piece<R: Reduction<T>, T: Copy>(a: &[T], b: &[T], p0: u64, p1: u64, b0: u64) -> R::Acc {
    let fold = |l: usize| strided_fold::<R, T>(a, b, p0, p1, b0, l as u64, SHAPE_BLOCK as u64);
    let mut lanes: Vec<R::Acc> = (0..SHAPE_BLOCK as usize).map(fold).collect();
    // block_reduce: each warp's tree, then warp 0's over the warps' results and IDENTITY
    let mut w = [R::IDENTITY; WARP];
    for (w, c) in w.iter_mut().zip(lanes.chunks_mut(WARP)) {
        *w = team_tree(c, R::combine);
    }
    warp_tree(w, R::combine)
}

/// A segment's pieces, in tile order, combined as the last warp does:
/// lane `l` of 32 takes pieces `l, l + 32, ...`, then the warp's tree.
fn combine_pieces<R: Reduction<T>, T>(pieces: impl Iterator<Item = R::Acc>) -> R::Acc {
    let mut lane = [R::IDENTITY; WARP];
    for (k, p) in pieces.enumerate() {
        lane[k % WARP] = R::combine(lane[k % WARP], p);
    }
    warp_tree(lane, R::combine)
}

/// `gpu::strided_fold::strided_fold` (whatever its `Ends`: the same bits) for lane
/// `lane` of `lanes` over `begin..end` of a 16-byte-aligned `a` (and `b`),
/// indices counted from `base`.
fn strided_fold<R: Reduction<T>, T: Copy>(
    a: &[T],
    b: &[T],
    begin: u64,
    end: u64,
    base: u64,
    lane: u64,
    lanes: u64,
) -> R::Acc {
    let width = (16 / size_of::<T>()) as u64;
    let element = |i: u64| R::map(a[i as usize], b[i as usize], i - base);
    let len = end - begin;
    let head = match begin % width {
        0 => 0,
        past => (width - past).min(len),
    };
    let mut v = R::IDENTITY;
    let mut i = begin + lane;
    while i < begin + head {
        v = R::combine(v, element(i));
        i += lanes;
    }
    let body = begin + head;
    let nvec = (len - head) / width;
    let at = |j: u64| body + j * width;
    let mut j = lane;
    while j + 3 * lanes < nvec {
        v = round::<R, T, 4>(v, a, b, [at(j), at(j + lanes), at(j + 2 * lanes), at(j + 3 * lanes)], base);
        j += 4 * lanes;
    }
    while j < nvec {
        v = round::<R, T, 1>(v, a, b, [at(j)], base);
        j += lanes;
    }
    let mut i = body + nvec * width + lane;
    while i < end {
        v = R::combine(v, element(i));
        i += lanes;
    }
    v
}

/// The 16-byte vector of `a` (and `b`) at element `first` (indices from
/// `base`), as the kernels take it: `Reduction::map_lanes`, by default the
/// lanes mapped and combined pairwise, ((0 1) (2 3)) ((4 5) (6 7)); the
/// variance and logsumexp measure the lanes as one part. (Arg-min/max's
/// shortcut for the half types gives the pairwise result bit for bit:
/// `gpu::op::arg`'s tests check it on every kind of value.)
fn vector<R: Reduction<T>, T: Copy>(a: &[T], b: &[T], first: u64, base: u64) -> R::Acc {
    let (f, first) = (first as usize, first - base);
    match 16 / size_of::<T>() {
        8 => R::map_lanes::<8>(lanes(a, f), lanes(b, f), first),
        4 => R::map_lanes::<4>(lanes(a, f), lanes(b, f), first),
        _ => R::map_lanes::<2>(lanes(a, f), lanes(b, f), first),
    }
}

/// `acc` with the `V` 16-byte vectors of `a` (and `b`) at elements
/// `first[v]` (indices from `base`) folded in, as a kernel's round of
/// loads folds them: `Reduction::fold_vectors` (by default each vector's
/// `map_lanes`, combined pairwise, then with `acc`; logsumexp takes the
/// round's maximum first).
fn round<R: Reduction<T>, T: Copy, const V: usize>(
    acc: R::Acc,
    a: &[T],
    b: &[T],
    first: [u64; V],
    base: u64,
) -> R::Acc {
    let (at, f) = (first.map(|f| f - base), first.map(|f| f as usize));
    match 16 / size_of::<T>() {
        8 => R::fold_vectors::<8, V>(acc, f.map(|f| lanes(a, f)), f.map(|f| lanes(b, f)), at),
        4 => R::fold_vectors::<4, V>(acc, f.map(|f| lanes(a, f)), f.map(|f| lanes(b, f)), at),
        _ => R::fold_vectors::<2, V>(acc, f.map(|f| lanes(a, f)), f.map(|f| lanes(b, f)), at),
    }
}

/// Column `c`'s `G` rows `r, r + step, ...` of `a` and `b` (row `r` at
/// `r·pitch`) folded into `acc` as one group (`fold_strided`).
fn fold_group<R: Reduction<T>, T: Copy, const G: usize>(
    acc: R::Acc,
    (a, b): (&[T], &[T]),
    (r, step): (usize, usize),
    (pitch, c): (usize, usize),
) -> R::Acc {
    let at = |x: &[T]| -> [T; G] { std::array::from_fn(|k| x[(r + k * step) * pitch + c]) };
    R::fold_strided::<G>(acc, at(a), at(b), r as u64, step as u64)
}

/// `x[first..first + L]` as an array.
fn lanes<T: Copy, const L: usize>(x: &[T], first: usize) -> [T; L] {
    std::array::from_fn(|k| x[first + k])
}

/// The columns kernel's result for each column of the `rows × cols` matrix
/// at `a` (row `r` at `r·pitch`), tiles `wide` and `chunks` as planned.
#[allow(clippy::too_many_arguments)]
fn columns<R: Reduction<T>, T: Copy>(
    a: &[T],
    b: &[T],
    rows: usize,
    cols: usize,
    pitch: usize,
    vector: bool,
    wide: u32,
    chunks: u32,
) -> Result<Vec<R::Out>> {
    let geo = Columns::new(cols as u64, (16 / size_of::<T>()) as u32, vector, wide);
    let step = geo.row_lanes as usize;
    let per_chunk = Columns::chunk_rows(rows as u64, chunks) as usize;
    // the row lanes' accumulators, combined in row-lane order from lane 0's,
    // or as a tree (`across_rows`, `Columns::row_tree`)
    let across = |lane: &dyn Fn(usize) -> R::Acc| {
        if geo.row_tree(R::COLUMN_TREE) {
            team_tree(&mut (0..step).map(lane).collect::<Vec<_>>(), R::combine)
        } else {
            (1..step).fold(lane(0), |v, l| R::combine(v, lane(l)))
        }
    };
    results(
        cols as u64,
        (0..cols).map(|c| {
            let chunk = |k: usize| {
                let (r0, r1) = (k * per_chunk, ((k + 1) * per_chunk).min(rows));
                // row lane l: its rows `R::COLUMN_ROWS` at a time (`fold_strided`), then one by one
                across(&|l| {
                    let (mut acc, mut r) = (R::IDENTITY, r0 + l);
                    let group = R::COLUMN_ROWS;
                    let fold = if group == 8 { fold_group::<R, T, 8> } else { fold_group::<R, T, 4> };
                    while r + (group - 1) * step < r1 {
                        acc = fold(acc, (a, b), (r, step), (pitch, c));
                        r += group * step;
                    }
                    (r..r1)
                        .step_by(step)
                        .fold(acc, |acc, r| R::combine(acc, R::map(a[r * pitch + c], b[r * pitch + c], r as u64)))
                })
            };
            let v = if chunks <= 1 {
                chunk(0)
            } else {
                let partials: Vec<R::Acc> = (0..chunks as usize).map(chunk).collect();
                // row lane l's chunks in order, then the row lanes as a tree (`across_rows`' `tree`)
                let mut lanes: Vec<R::Acc> = (0..step)
                    .map(|l| partials.iter().skip(l).step_by(step).fold(R::IDENTITY, |acc, p| R::combine(acc, *p)))
                    .collect();
                team_tree(&mut lanes, R::combine)
            };
            R::finish(v, rows as u64)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{AUTO_LANES, Matrix};
    use gpu::op::Sum;

    /// Small integers: every order gives the exact sum, so a dropped or
    /// doubled element shows.
    fn exact(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect()
    }

    const TILES: [u32; 3] = [0, 16 << 10, 64 << 10];

    #[test]
    fn results_the_host_cannot_hold_are_an_error() {
        // 2^46 empty rows: 256 TiB of results, more than a process can map
        let rows = Shape::Rows(Matrix::new(1 << 46, 0));
        let e = shaped_fixed_order::<Sum, f32>(&[&[]], rows, Strategy::Auto).unwrap_err();
        assert!(matches!(e, Error::HostMemory { what: "the twin's results", .. }), "{e}");
    }

    #[test]
    fn rows_and_columns_count_every_element_once() {
        for (rows, cols, pitch) in [
            (3, 4, 4),
            (1, 100_003, 100_003),
            (1000, 33, 35),
            (7, 9000, 9001),
            (40_000, 1, 1),
            (5000, 16, 16),
            (3000, 64, 64),
            (3, 8192, 8192), // rows_long: 1 or 4 block tiles a row
        ] {
            let x = exact(rows * pitch);
            let m = Matrix::new(rows, cols).pitch(pitch);
            let row = |r: usize| x[r * pitch..r * pitch + cols].iter().sum::<f64>();
            let col = |c: usize| (0..rows).map(|r| x[r * pitch + c]).sum::<f64>();
            for tile_bytes in TILES {
                let staged = Strategy::Staged { tile_bytes };
                for s in [0, 1, 4, 32].map(|lanes| Strategy::Segments { tile_bytes, lanes }).into_iter().chain([staged])
                {
                    let got = shaped_fixed_order::<Sum, f64>(&[&x], Shape::Rows(m), s).unwrap();
                    assert_eq!(got, (0..rows).map(row).collect::<Vec<_>>(), "{rows}x{cols} pitch {pitch} {s:?}");
                }
            }
            for (wide, chunks) in [(0, 0), (1, 1), (2, 3), (4, 64), (8, 2), (16, 5)] {
                let s = Strategy::Columns { wide, chunks };
                let got = shaped_fixed_order::<Sum, f64>(&[&x], Shape::Columns(m), s).unwrap();
                assert_eq!(got, (0..cols).map(col).collect::<Vec<_>>(), "{rows}x{cols} pitch {pitch} {s:?}");
            }
        }
    }

    /// Runs `R` over `bf16` columns of small integers, in wide, narrow and
    /// chunked strategies, and hands `check` each column's values and result.
    fn each_bf16_column<R: Reduction<gpu::half::bf16>>(
        shapes: &[(usize, usize, usize)],
        check: impl Fn(&[f64], &R::Out) -> bool,
    ) where
        R::Out: std::fmt::Debug,
    {
        use gpu::half::bf16;
        for &(rows, cols, pitch) in shapes {
            let x: Vec<bf16> = exact(rows * pitch).iter().map(|&v| bf16::from_f32(v as f32)).collect();
            let m = Matrix::new(rows, cols).pitch(pitch);
            for (wide, chunks) in [(0, 0), (1, 1), (2, 3), (16, 5)] {
                let s = Strategy::Columns { wide, chunks };
                let got = shaped_fixed_order::<R, bf16>(&[&x], Shape::Columns(m), s).unwrap();
                for (c, g) in got.iter().enumerate() {
                    let col: Vec<f64> = (0..rows).map(|r| x[r * pitch + c].to_f32() as f64).collect();
                    assert!(check(&col, g), "{rows}x{cols} {s:?} column {c}: {g:?}");
                }
            }
        }
    }

    /// The variance of `bf16` columns folds eight rows a group
    /// (`Reduction::COLUMN_ROWS`): on small integers, whose means and sums
    /// of squared deviations every order gives exactly, each column's mean
    /// and `M2` are the exact ones, so a row dropped or folded twice by the
    /// groups or the rows after them shows.
    #[test]
    fn eight_row_groups_count_every_row_once() {
        use gpu::op::Moments;
        assert_eq!(<Moments as Reduction<gpu::half::bf16>>::COLUMN_ROWS, 8);
        let shapes = [(5000, 16, 16), (1003, 64, 72), (129, 8, 8), (7, 8, 8)];
        each_bf16_column::<Moments>(&shapes, |col, g| {
            let mean = col.iter().sum::<f64>() / col.len() as f64;
            let m2 = col.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            close(g.mean, mean) && close(g.m2, m2)
        });
    }

    /// logsumexp of `bf16` columns, tall (128 row lanes), wide and narrow:
    /// within `f32`'s rounding of the exact value, so a row dropped or
    /// merged twice by the row lanes or the chunks shows (one row of 5000
    /// moves the result by about 2·10⁻⁴).
    #[test]
    fn logsumexp_columns_count_every_row_once() {
        let shapes = [(5000, 16, 16), (1003, 64, 72), (129, 8, 8)];
        each_bf16_column::<gpu::op::LogSumExp>(&shapes, |col, g| {
            let want = col.iter().map(|v| v.exp()).sum::<f64>().ln();
            (*g as f64 - want).abs() <= 2e-5 * want.abs().max(1.0)
        });
    }

    #[test]
    fn segments_count_every_element_once() {
        let n = 100_000u64;
        // empty ones, short ones, one across many 16 KiB tiles, one ending at n
        let offsets = [0, 0, 3, 3, 2047, 2049, 5000, 70_000, 70_001, 70_001, n];
        let x = exact(n as usize);
        let laid_out = crate::shape::laid_out(&offsets);
        let segs = Segments::of_entry(laid_out.as_ptr(), offsets.len() as u64 - 1, 0, 0);
        let want: Vec<f64> = offsets.windows(2).map(|w| x[w[0] as usize..w[1] as usize].iter().sum()).collect();
        for tile in [2048, 8192, 32768] {
            for lanes in [0, 1, 2, 32, AUTO_LANES | 4, AUTO_LANES | 8] {
                // SAFETY: `offsets` holds count + 1 values, non-decreasing, within n,
                // then their index over n elements; every tile a whole number of granules
                for order in [Pieces::Teams, Pieces::Tailed, Pieces::Staged] {
                    let got =
                        unsafe { segments::<Sum, f64>(&x, &x, segs, n, tile, lanes, order) }.expect("the results");
                    assert_eq!(got, want, "tile {tile} lanes {lanes}");
                }
            }
        }
    }

    /// The twin is not a serial sum in disguise: on random data its bits
    /// differ from the left-to-right sum's for most long rows.
    #[test]
    fn the_order_is_the_kernels() {
        let x: Vec<f32> = (0..1 << 20).map(|i| ((i as f32) * 0.618).sin() * 1e3).collect();
        let m = Matrix::new(16, 1 << 16);
        let got = shaped_fixed_order::<Sum, f32>(&[&x], Shape::Rows(m), Strategy::Auto).unwrap();
        let serial = x.chunks(1 << 16).map(|r| r.iter().sum::<f32>());
        assert!(got.iter().zip(serial).filter(|(g, s)| g.to_bits() != s.to_bits()).count() > 8);
    }
}
