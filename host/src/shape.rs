//! Rows, columns and segments: what a shaped reduction reduces
//! ([`Shape`]), checked before any GPU work, and how it is launched
//! ([`plan`], pure arithmetic). [`Reducer::reduce_shaped`](crate::Reducer::reduce_shaped)
//! runs it; `docs/src/guide/shapes.md` says how the kernels work and what they cost.

use crate::error::{Error, Result};
use gpu::names::{DType, Op};
/// The kernels' geometry (`gpu::shape`), for planners and tests.
pub use gpu::shape::{AUTO_LANES, Fit, MAX_TILE_BYTES, MIN_TILE_BYTES, SHAPE_BLOCK};
use gpu::shape::{Columns, SHAPE_WARPS, columns_smem, long_rows, short_row_vectors, tiles};

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
/// Made by [`Reducer::offsets`](crate::Reducer::offsets) (from host memory)
/// or [`Reducer::offsets_on_device`](crate::Reducer::offsets_on_device);
/// reusable for any number of reductions.
pub struct Offsets {
    pub(crate) device: cudarc::driver::CudaSlice<u64>,
    /// The same offsets on the host, for the CPU twin (`shape_order`).
    pub(crate) host: Vec<u64>,
    pub(crate) count: usize,
    pub(crate) end: u64,
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

/// CSR offsets for segments of `lengths` laid back to back from element
/// `first`.
///
/// ```
/// assert_eq!(reduction::shape::offsets_of(&[2, 0, 3], 5), [5, 7, 7, 10]);
/// ```
pub fn offsets_of(lengths: &[u64], first: u64) -> Vec<u64> {
    std::iter::once(first)
        .chain(lengths.iter().scan(first, |end, &l| {
            *end += l;
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
    /// Columns: tiles `wide` × 128 bytes of f32 across (1, 2 or 4), the
    /// rows split into `chunks` per column tile (1: a block per column
    /// tile, no combining step).
    Columns {
        /// Tile width, 1, 2 or 4; 0 chooses.
        wide: u32,
        /// Row chunks per column tile; 0 chooses.
        chunks: u32,
    },
}

/// Which shaped kernel a plan launches (`gpu/src/kernels/segments.rs`,
/// `columns.rs`): the entry `{name}_{op}_{type}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKernel {
    /// `segments`: any rows or CSR segments, in warp tiles and teams.
    Segments,
    /// `rows_short`: rows of 1 to 32 aligned 16-byte vectors, back to back
    /// (`gpu::shape::short_row_vectors`), a tile per block, a lane a
    /// vector; its own order.
    RowsShort,
    /// `rows_long`: rows a whole number of tiles (`gpu::shape::long_rows`),
    /// a tile per block; its own order.
    RowsLong,
    /// `columns`: one result per column.
    Columns,
}

impl ShapeKernel {
    /// Every shaped kernel.
    pub const ALL: [ShapeKernel; 4] =
        [ShapeKernel::Segments, ShapeKernel::RowsShort, ShapeKernel::RowsLong, ShapeKernel::Columns];

    /// The entries' prefix.
    pub fn name(self) -> &'static str {
        match self {
            ShapeKernel::Segments => "segments",
            ShapeKernel::RowsShort => "rows_short",
            ShapeKernel::RowsLong => "rows_long",
            ShapeKernel::Columns => "columns",
        }
    }
}

/// A shaped reduction, planned: the entry, its launch and its buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapePlan {
    /// The kernel the entry belongs to.
    pub kernel: ShapeKernel,
    /// `{kernel}_{op}_{type}`.
    pub entry: String,
    /// Blocks of [`SHAPE_BLOCK`] threads.
    pub grid: u32,
    /// Dynamic shared memory, bytes.
    pub smem: u32,
    /// Segments: elements per warp tile; rows (short and long): per block;
    /// columns: the tile width (`wide`).
    pub tile: u64,
    /// Lanes per team (0: per tile) for segments, chunks for columns.
    pub split: u32,
    /// Accumulators of scratch (pieces or chunk partials).
    pub partials: usize,
    /// Zeroed tickets.
    pub tickets: usize,
}

/// Plan operation `op` on `ty` (accumulators of `acc_bytes`) over `n`
/// elements shaped as `shape`, for a GPU of fit `fit` (its tiles, column
/// blocks and teams: `Tuning::fit`; `Fit::PORTABLE` for the `gpu_to_gpu`
/// orders). `aligned`: the inputs start on a 16-byte boundary, and for
/// columns every row does too (`gpu::shape::vector_columns`).
///
/// ```
/// use reduction::shape::{AUTO_LANES, Fit, Matrix, Shape, Strategy, plan};
/// use reduction::{DType, Op};
/// let rows = Shape::Rows(Matrix::new(1024, 1024));
/// let p = plan(Op::Sum, DType::F32, 4, 1 << 20, rows, Strategy::Auto, false, Fit::PORTABLE).unwrap();
/// assert_eq!((p.entry.as_str(), p.grid, p.tile, p.partials), ("segments_sum_f32", 32, 4096, 512));
/// assert_eq!(p.split, AUTO_LANES | 8); // teams chosen per tile, about 8 vectors a lane
/// let chunks = Strategy::Columns { wide: 1, chunks: 8 };
/// let columns = Shape::Columns(Matrix::new(1 << 16, 16));
/// let p = plan(Op::Sum, DType::F32, 4, 1 << 20, columns, chunks, true, Fit::PORTABLE).unwrap();
/// assert_eq!((p.entry.as_str(), p.grid, p.split, p.tickets), ("columns_sum_f32", 8, 8, 1));
/// let dot = Shape::Rows(Matrix::new(2, 5));
/// assert!(plan(Op::Dot, DType::I32, 4, 10, dot, Strategy::Auto, false, Fit::PORTABLE).is_err());
/// ```
#[allow(clippy::too_many_arguments)]
pub fn plan(
    op: Op,
    ty: DType,
    acc_bytes: usize,
    n: usize,
    shape: Shape<'_>,
    strategy: Strategy,
    aligned: bool,
    fit: Fit,
) -> Result<ShapePlan> {
    if !op.types().contains(&ty) {
        let valid: Vec<&str> = op.types().iter().map(|t| t.name()).collect();
        return Err(Error::Unsupported {
            kernel: op.name().into(),
            what: format!("the type {}", ty.name()),
            valid: valid.join(", "),
        });
    }
    shape.check(n)?;
    let n = shape.extent()?; // within the input, checked just above
    let (size, lanes) = (ty.size(), 16 / ty.size() as u32);
    let too_big = |what: &str| Error::Shape(format!("{what}: more blocks than one launch can have"));
    let wrong = |what: &str| Error::Shape(format!("{strategy:?}: {what}"));
    match shape {
        Shape::Rows(_) | Shape::Segments(_) => {
            let (tile_bytes, split) = match strategy {
                Strategy::Auto => (0, 0),
                Strategy::Segments { tile_bytes, lanes } => (tile_bytes as u64, lanes),
                Strategy::Columns { .. } => return Err(wrong("rows and segments take Auto or Segments")),
            };
            if !(split == 0 || split.is_power_of_two() && split <= 32) {
                return Err(wrong("lanes: 0 (automatic), 1, 2, 4, 8, 16 or 32"));
            }
            let tile_bytes = match tile_bytes {
                0 => gpu::shape::tile_bytes(n as u64, shape.results() as u64, size, fit.min_warps),
                t if t.is_power_of_two() && (MIN_TILE_BYTES..=MAX_TILE_BYTES).contains(&t) => t,
                _ => return Err(wrong("tile_bytes: 0 (automatic) or a power of two from 16 KiB to 256 KiB")),
            };
            let tile = tile_bytes / size as u64;
            let warp_tiles = tiles(n as u64, tile);
            // rows that kernels of their own take (fewer registers)
            let kernel = match shape {
                Shape::Rows(m) if short_row_vectors(m.cols as u64, m.pitch as u64, size, split, aligned) != 0 => {
                    ShapeKernel::RowsShort
                }
                Shape::Rows(m) if long_rows(m.cols as u64, m.pitch as u64, tile, split) => ShapeKernel::RowsLong,
                _ => ShapeKernel::Segments,
            };
            // segments: a warp a tile; rows: a block a tile (rows_long's warps' results in shared memory)
            let (blocks, smem) = match kernel {
                ShapeKernel::RowsLong => (warp_tiles, SHAPE_WARPS * acc_bytes as u32),
                ShapeKernel::RowsShort => (warp_tiles, 0),
                ShapeKernel::Segments | ShapeKernel::Columns => (warp_tiles.div_ceil(SHAPE_WARPS as u64), 0),
            };
            let grid = u32::try_from(blocks).map_err(|_| too_big("segments"))?;
            Ok(ShapePlan {
                kernel,
                entry: format!("{}_{}_{}", kernel.name(), op.name(), ty.name()), // as `entries` names them
                grid,
                smem,
                tile,
                split: if split == 0 { AUTO_LANES | fit.vectors_per_lane } else { split },
                partials: 2 * warp_tiles as usize,
                tickets: shape.results(),
            })
        }
        Shape::Columns(m) => {
            let (wide, chunks) = match strategy {
                Strategy::Auto => (0, 0),
                Strategy::Columns { wide, chunks } => (wide, chunks),
                Strategy::Segments { .. } => return Err(wrong("columns take Auto or Columns")),
            };
            let wide = match wide {
                0 => Columns::auto_wide(m.cols as u64, lanes, aligned, fit.column_blocks),
                1 | 2 | 4 => wide,
                _ => return Err(wrong("wide: 0 (automatic), 1, 2 or 4")),
            };
            let geo = Columns::new(m.cols as u64, lanes, aligned, wide);
            let chunks = if chunks == 0 {
                Columns::auto_chunks(m.rows as u64, geo.col_tiles, fit.column_blocks)
            } else {
                chunks
            };
            let grid = u32::try_from(geo.col_tiles * chunks as u64)
                .ok()
                .filter(|&g| g < 1 << 31)
                .ok_or_else(|| too_big("columns"))?;
            Ok(ShapePlan {
                kernel: ShapeKernel::Columns,
                entry: format!("{}_{}_{}", ShapeKernel::Columns.name(), op.name(), ty.name()),
                grid,
                smem: columns_smem(geo.width, acc_bytes),
                tile: wide as u64,
                split: chunks,
                partials: if chunks > 1 { chunks as usize * m.cols } else { 0 },
                tickets: geo.col_tiles as usize,
            })
        }
    }
}

/// Every shaped entry in the PTX: `segments_`, `rows_short_`, `rows_long_`
/// and `columns_` for each operation and type (the registry's test checks them both ways).
///
/// ```
/// assert!(reduction::shape::entries().contains(&"columns_argmax_bf16".to_string()));
/// ```
pub fn entries() -> Vec<String> {
    let pairs = Op::ALL.iter().flat_map(|&op| op.types().iter().map(move |&t| (op, t)));
    pairs.flat_map(|(op, t)| ShapeKernel::ALL.map(|k| format!("{}_{}_{}", k.name(), op.name(), t.name()))).collect()
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

    #[test]
    fn strategies_are_checked() {
        let m = Shape::Rows(Matrix::new(4, 4));
        let segs = |tile_bytes, lanes| Strategy::Segments { tile_bytes, lanes };
        let cols = |wide, chunks| Strategy::Columns { wide, chunks };
        for bad in [segs(0, 3), segs(0, 64), segs(8192, 0), segs(48 << 10, 0), segs(512 << 10, 0), cols(1, 2)] {
            assert!(plan(Op::Sum, DType::F32, 4, 16, m, bad, false, Fit::PORTABLE).is_err(), "{bad:?}");
        }
        assert!(plan(Op::Sum, DType::F32, 4, 16, m, segs(32 << 10, 4), false, Fit::PORTABLE).is_ok());
        let c = Shape::Columns(Matrix::new(4, 4));
        for bad in [cols(3, 0), cols(8, 1), segs(0, 4)] {
            assert!(plan(Op::Sum, DType::F32, 4, 16, c, bad, false, Fit::PORTABLE).is_err(), "{bad:?}");
        }
        assert!(plan(Op::Sum, DType::F32, 4, 16, c, cols(4, 2), false, Fit::PORTABLE).is_ok());
    }

    #[test]
    fn columns_aim_at_512_blocks() {
        let auto = |rows, cols| {
            let p = plan(
                Op::Sum,
                DType::F32,
                4,
                rows * cols,
                Shape::Columns(Matrix::new(rows, cols)),
                Strategy::Auto,
                true,
                Fit::PORTABLE,
            );
            p.map(|p| (p.tile, p.split, p.grid)).unwrap()
        };
        assert_eq!(auto(1 << 24, 16), (1, 512, 512));
        assert_eq!(auto(1 << 20, 256), (1, 64, 512));
        assert_eq!(auto(16384, 16384), (1, 1, 512));
        assert_eq!(auto(4096, 65536), (4, 1, 512));
        assert_eq!(auto(256, 1 << 20), (4, 1, 8192));
    }
}
