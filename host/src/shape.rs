//! Rows, columns and segments: what a shaped reduction reduces
//! ([`Shape`]) and how the work is split ([`Strategy`]), checked before any
//! GPU work; the dispatch plans the launch (`dispatch::shape_plan`).
//! [`Reducer::reduce_shaped`](crate::Reducer::reduce_shaped)
//! runs it; `docs/src/guide/shapes.md` says how the kernels work and what they cost.

use crate::error::{Error, Result};
use gpu::shape::Segments;
/// The kernels' geometry (`gpu::shape`), for planners and tests.
pub use gpu::shape::{AUTO_LANES, Fit, MAX_TILE_BYTES, MIN_TILE_BYTES, SHAPE_BLOCK};

/// A row-major matrix of `rows × cols` elements, row `i` starting at
/// element `i · pitch` of the input (`pitch ≥ cols`; the elements between
/// a row's end and the next row are not read).
///
/// ```
/// use reduction::shape::Matrix;
/// let m = Matrix::new(3, 4).pitch(6);
/// assert_eq!(m.elements_spanned().unwrap(), 2 * 6 + 4);
/// assert!(m.check(15).is_err() && m.check(16).is_ok());
/// assert!(Matrix::new(2, 5).pitch(4).check(100).is_err()); // pitch < cols
/// assert!(Matrix::new(0, 1 << 62).check(0).is_err()); // no rows, and columns past any memory
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Matrix {
    /// Rows.
    pub rows: usize,
    /// Elements per row.
    pub cols: usize,
    /// Elements from one row's start to the next.
    pub pitch: usize,
}

impl Matrix {
    /// `rows × cols`, rows back to back (`pitch = cols`).
    pub fn new(rows: usize, cols: usize) -> Matrix {
        Matrix { rows, cols, pitch: cols }
    }

    /// The same matrix with rows `pitch` elements apart.
    pub fn pitch(self, pitch: usize) -> Matrix {
        Matrix { pitch, ..self }
    }

    /// Elements from the first row's start to the last row's end.
    pub fn elements_spanned(&self) -> Result<usize> {
        let overflow = || Error::Shape(format!("{self}: rows × pitch overflows"));
        if self.rows == 0 {
            return Ok(0);
        }
        (self.rows - 1).checked_mul(self.pitch).and_then(|e| e.checked_add(self.cols)).ok_or_else(overflow)
    }

    /// That the matrix is well formed and lies within `len` elements.
    pub fn check(&self, len: usize) -> Result<()> {
        if self.pitch < self.cols {
            return Err(Error::Shape(format!("{self}: the pitch {} is smaller than cols {}", self.pitch, self.cols)));
        }
        self.rows.checked_mul(self.cols).ok_or_else(|| Error::Shape(format!("{self}: rows × cols overflows")))?;
        // each dimension's bytes, at 16 a position, fit the address space
        // (an empty matrix of 0 rows bounds its columns no other way)
        if self.rows.max(self.pitch) > isize::MAX as usize / 16 {
            return Err(Error::Shape(format!("{self}: a dimension past 2^59")));
        }
        let need = self.elements_spanned()?;
        if need > len {
            return Err(Error::Shape(format!("{self} spans {need} elements, but the input holds {len}")));
        }
        Ok(())
    }
}

impl std::fmt::Display for Matrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "matrix {}x{}", self.rows, self.cols)?;
        if self.pitch != self.cols {
            write!(f, " (pitch {})", self.pitch)?;
        }
        Ok(())
    }
}

/// CSR offsets, checked once and kept on the GPU: segment `i` is
/// `offsets[i]..offsets[i+1]` of the input (CUB's `DeviceSegmentedReduce`).
/// Made by [`Reducer::offsets`](crate::Reducer::offsets) from offsets on
/// the host or the device; reusable for any number of reductions.
pub struct Offsets {
    /// The offsets, then their index over `end` elements
    /// ([`laid_out`]).
    pub(crate) device: cudarc::driver::CudaSlice<u64>,
    /// The same on the host, for the CPU twin (`twin`).
    pub(crate) host: Vec<u64>,
    pub(crate) count: usize,
    pub(crate) end: u64,
    /// The longest segment's length (the planner's choice of kernel).
    pub(crate) longest: u64,
}

impl Offsets {
    /// How many segments.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The last offset: the input must hold at least this many elements.
    pub fn end(&self) -> u64 {
        self.end
    }
}

impl std::fmt::Debug for Offsets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Offsets {{ count: {}, end: {} }}", self.count, self.end)
    }
}

/// That `offsets` can be CSR offsets: at least one, never decreasing.
///
/// ```
/// use reduction::shape::check_offsets;
/// assert!(check_offsets(&[0, 3, 3, 10]).is_ok());
/// assert_eq!(check_offsets(&[0, 5, 4]).unwrap_err().to_string(), "offsets[2] = 4 is smaller than offsets[1] = 5 (offsets must not decrease)");
/// assert!(check_offsets(&[]).is_err());
/// ```
pub fn check_offsets(offsets: &[u64]) -> Result<()> {
    if offsets.is_empty() {
        return Err(Error::Shape("no offsets: n segments need n + 1 of them".into()));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::Shape(format!(
            "offsets[{}] = {} is smaller than offsets[{i}] = {} (offsets must not decrease)",
            i + 1,
            offsets[i + 1],
            offsets[i]
        )));
    }
    Ok(())
}

/// Checked CSR `offsets` followed by their index over the elements they
/// span (`gpu::shape::Segments::index`: the first segment reaching, and
/// the first starting from, each boundary of `INDEX_GRANULE` elements), as
/// the segments kernels and the CPU twin read them
/// (`gpu::shape::Segments::of_entry`), then the tiles' [`schedule`].
pub(crate) fn laid_out(offsets: &[u64]) -> Vec<u64> {
    let (count, end) = (offsets.len().saturating_sub(1) as u64, offsets.last().copied().unwrap_or(0));
    // SAFETY: `offsets` holds count + 1 values (the caller checked them)
    let index = unsafe { Segments::csr(offsets.as_ptr(), count, core::ptr::null()).index_entries(end) };
    let mut laid_out: Vec<u64> = offsets.iter().copied().chain(index).collect();
    // SAFETY: the offsets, then their index over `end` elements
    let schedule = unsafe { schedule(Segments::of_entry(laid_out.as_ptr(), count, 0, 0), end) };
    laid_out.extend(schedule);
    laid_out
}

/// The schedule of the tiles over `n` elements
/// (`gpu::shape::Segments::scheduled`): for each tile size it covers
/// (`gpu::shape::schedule_tiles`), every tile, those with the most
/// segments first, then by place; a `u32` each, two a word (the first in
/// the low half). A tile number past `u32` is never read
/// (`dispatch::scheduled_at`). A tile's segments are pieces its block
/// reduces one after another; ordered so, the costliest start first and
/// cheap ones fill the launch's end. H200, 2^28, log-uniform lengths, µs,
/// the grid's order → this one (`reduce shapes --case loguniform --runs 20
/// --type T`, one sitting): `bf16` 138.9 → 130.8, `f32` 245.8 → 240.1,
/// `f64` 476.2 → 469.8; the fewest first instead, `bf16` 152.9
/// (`docs/src/performance/tuning-shapes.md`, long segments a block a tile).
///
/// # Safety
/// `segs` CSR offsets followed by their index over `n` elements.
unsafe fn schedule(segs: Segments, n: u64) -> Vec<u64> {
    let entries: Vec<u32> = gpu::shape::schedule_tiles(n)
        .flat_map(|tile| {
            let count_tiles = gpu::shape::tiles(n, tile);
            // SAFETY: the caller's; every scheduled tile a whole number of granules
            let segments = |t| {
                let (_, _, lo, hi) = unsafe { segs.tile_range(t, tile, count_tiles, n) };
                hi - lo
            };
            let mut level: Vec<(u64, u64)> = (0..count_tiles).map(|t| (segments(t), t)).collect();
            level.sort_by_key(|&(segments, t)| (std::cmp::Reverse(segments), t));
            level.into_iter().map(|(_, t)| t as u32)
        })
        .collect();
    entries.chunks(2).map(|pair| pair[0] as u64 | (pair.get(1).copied().unwrap_or(0) as u64) << 32).collect()
}

/// CSR offsets for segments of `lengths` laid back to back from element
/// `first`.
///
/// ```
/// assert_eq!(reduction::shape::offsets_of(&[2, 0, 3], 5), [5, 7, 7, 10]);
/// // lengths past u64 end at u64::MAX, where no input reaches
/// assert_eq!(reduction::shape::offsets_of(&[u64::MAX, 1], 1), [1, u64::MAX, u64::MAX]);
/// ```
pub fn offsets_of(lengths: &[u64], first: u64) -> Vec<u64> {
    std::iter::once(first)
        .chain(lengths.iter().scan(first, |end, &l| {
            *end = end.saturating_add(l); // past u64: an end no input reaches, refused by the shape's check
            Some(*end)
        }))
        .collect()
}

/// What a shaped reduction gives one result for.
#[derive(Clone, Copy, Debug)]
pub enum Shape<'a> {
    /// Each row of the matrix (axis 1: `torch.sum(dim=1)`).
    Rows(Matrix),
    /// Each column of the matrix (axis 0: `torch.sum(dim=0)`).
    Columns(Matrix),
    /// Each CSR segment.
    Segments(&'a Offsets),
}

impl Shape<'_> {
    /// Axis 1 (rows) or 0 (columns) of `matrix`; any other axis is an error.
    ///
    /// ```
    /// use reduction::shape::{Matrix, Shape};
    /// assert!(matches!(Shape::axis(Matrix::new(2, 3), 0), Ok(Shape::Columns(_))));
    /// assert_eq!(Shape::axis(Matrix::new(2, 3), 2).unwrap_err().to_string(), "axis 2: a matrix has axes 0 (one result per column) and 1 (one per row)");
    /// ```
    pub fn axis(matrix: Matrix, axis: usize) -> Result<Shape<'static>> {
        match axis {
            0 => Ok(Shape::Columns(matrix)),
            1 => Ok(Shape::Rows(matrix)),
            _ => Err(Error::Shape(format!(
                "axis {axis}: a matrix has axes 0 (one result per column) and 1 (one per row)"
            ))),
        }
    }

    /// How many results.
    pub fn results(&self) -> usize {
        match self {
            Shape::Rows(m) => m.rows,
            Shape::Columns(m) => m.cols,
            Shape::Segments(o) => o.count,
        }
    }

    /// The bytes of its results, `out` bytes each: [`Error::Shape`] where
    /// they pass the address space (2^62 empty rows of `f32` sums).
    ///
    /// ```
    /// use reduction::shape::{Matrix, Shape};
    /// assert_eq!(Shape::Rows(Matrix::new(3, 0)).results_bytes(4)?, 12);
    /// assert!(Shape::Rows(Matrix::new((1 << 62) + 1, 0)).results_bytes(4).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn results_bytes(&self, out: usize) -> Result<usize> {
        let count = self.results();
        count
            .checked_mul(out)
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or_else(|| Error::Shape(format!("{count} results of {out} bytes do not fit in memory")))
    }

    /// The elements the shape's rows or segments span, from the input's
    /// start: what the segments kernel cuts into warp tiles (so the tiles,
    /// and the order of additions, do not depend on how much input follows).
    pub fn extent(&self) -> Result<usize> {
        match self {
            Shape::Rows(m) | Shape::Columns(m) => m.elements_spanned(),
            Shape::Segments(o) => Ok(o.end as usize),
        }
    }

    /// That the shape lies within an input of `len` elements.
    pub fn check(&self, len: usize) -> Result<()> {
        match self {
            Shape::Rows(m) | Shape::Columns(m) => m.check(len),
            Shape::Segments(o) if o.end > len as u64 => {
                Err(Error::Shape(format!("the offsets end at {}, past the input's {len} elements", o.end)))
            }
            Shape::Segments(_) => Ok(()),
        }
    }
}

/// How the kernels split the work; [`Strategy::Auto`] chooses by shape
/// (`docs/src/guide/shapes.md` has the measurements behind the choice). A 0 in a
/// field leaves that choice automatic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Everything chosen by shape: the warp tile from the average segment
    /// and the teams per tile (rows, segments); the tile width and the row
    /// chunks that fill the GPU (columns).
    #[default]
    Auto,
    /// Rows and segments: tiles of `tile_bytes` (a power of two, 16 to
    /// 256 KiB; a warp's, or for the rows kernels a block's)
    /// and teams of `lanes` lanes (1, 2, 4, 8, 16 or 32; 32 is a warp per
    /// segment).
    Segments {
        /// Bytes of input per tile; 0 chooses.
        tile_bytes: u32,
        /// Lanes per team; 0 chooses per tile.
        lanes: u32,
    },
    /// CSR segments (or rows) in warp tiles of `tile_bytes` (0 chooses), each
    /// round of short segments staged in shared memory and folded a lane a
    /// segment, long pieces by the whole warp (`segments_staged`: what
    /// [`Strategy::Auto`] picks for short segments on 16-byte-aligned input,
    /// with `segments_paired` for very short ones; on other input, the
    /// teams of [`Strategy::Segments`]).
    Staged {
        /// Bytes of input per tile; 0 chooses.
        tile_bytes: u32,
    },
    /// Columns: tiles `wide` × 128 bytes of f32 across (1, 2, 4, 8 or 16), the
    /// rows split into `chunks` per column tile (1: a block per column
    /// tile, no combining step).
    Columns {
        /// Tile width, 1, 2, 4, 8 or 16; 0 chooses.
        wide: u32,
        /// Row chunks per column tile; 0 chooses.
        chunks: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shapes_are_one_line_errors() {
        let cases = [
            Matrix::new(usize::MAX, 2).check(usize::MAX),
            Matrix::new(3, 4).pitch(3).check(100),
            Matrix::new(3, 4).check(11),
            Matrix::new(1 << 40, 1 << 40).check(usize::MAX),
            Shape::axis(Matrix::new(1, 1), 7).map(|_| ()),
            check_offsets(&[0, 2, 1]),
        ];
        for e in cases {
            let e = e.unwrap_err();
            assert!(matches!(e, Error::Shape(_)) && !e.to_string().contains('\n'), "{e}");
        }
    }

    #[test]
    fn empty_matrices_fit_anything() {
        assert!(Matrix::new(0, 5).check(0).is_ok());
        assert!(Matrix::new(5, 0).check(0).is_ok());
    }

    /// The schedule a kernel reads back (`Segments::scheduled`) gives, for
    /// every tile size it covers, each tile once, with the segments the
    /// index gives it, those with the most segments first and ties by
    /// place; a tile it does not cover gives none. Over lengths of 0 to
    /// 50,000 (runs of short ones, empty ones, long ones) and a ragged end.
    #[test]
    fn the_schedule_gives_every_tile_once_the_costliest_first() {
        let lengths: Vec<u64> =
            (0u64..400).map(|i| [0, 1, 7, 300, 50_000, 2, 2, 9000][(i * i % 13 % 8) as usize]).collect();
        let offsets = offsets_of(&lengths, 0);
        let (count, n) = (lengths.len() as u64, offsets[lengths.len()]);
        let laid_out = laid_out(&offsets);
        let segs = Segments::of_entry(laid_out.as_ptr(), count, 0, 0);
        let covered: Vec<u64> = gpu::shape::schedule_tiles(n).collect();
        assert!(covered.len() >= 5, "{covered:?}");
        for &tile in &covered {
            let count_tiles = gpu::shape::tiles(n, tile);
            let at = gpu::shape::schedule_at(n, tile).unwrap();
            // SAFETY: the offsets, their index and schedule over n elements; b below count_tiles
            let order: Vec<u64> = (0..count_tiles).map(|b| unsafe { segs.scheduled(at + b, n) } as u64).collect();
            let segments = |t: u64| {
                let (_, _, lo, hi) = unsafe { segs.tile_range(t, tile, count_tiles, n) };
                hi - lo
            };
            let mut seen = vec![false; count_tiles as usize];
            for (i, &t) in order.iter().enumerate() {
                assert!(!std::mem::replace(&mut seen[t as usize], true), "tile {t} of {tile} twice");
                if let Some(&u) = order.get(i + 1) {
                    let (p, q) = (segments(t), segments(u));
                    assert!(p > q || (p == q && t < u), "tile {t} ({p} segments) before {u} ({q}) of {tile}");
                }
            }
            assert!(tile > covered[0] || segments(order[0]) > segments(order[order.len() - 1]), "one order");
        }
        let last = covered[covered.len() - 1];
        for tile in [gpu::shape::SCHEDULE_MIN_TILE / 2, 2 * last, 3 * gpu::shape::SCHEDULE_MIN_TILE] {
            assert_eq!(gpu::shape::schedule_at(n, tile), None, "{tile}");
        }
        let entries: u64 = covered.iter().map(|&t| gpu::shape::tiles(n, t)).sum();
        assert_eq!(laid_out.len() as u64, count + 1 + 2 * gpu::shape::index_len(n) + entries.div_ceil(2));
        assert_eq!(gpu::shape::tiles(n, last), 1);
    }
}
