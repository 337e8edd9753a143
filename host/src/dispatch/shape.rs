//! The rows', columns' and segments' launches, planned ([`shape_plan`],
//! pure arithmetic): which kernel, its tile, teams or chunks, grid, shared
//! memory and scratch, from the shape, the strategy and the card's fit.

use crate::error::{Error, Result};
use crate::registry::{
    COLUMNS, Kernel, ROWS_LONG, ROWS_SHORT, SEGMENTS, SEGMENTS_LONG, SEGMENTS_PAIRED, SEGMENTS_SCHEDULED,
    SEGMENTS_STAGED, SEGMENTS_TAILED,
};
use crate::shape::{AUTO_LANES, Fit, MAX_TILE_BYTES, MIN_TILE_BYTES, Offsets, Shape, Strategy};
use gpu::names::{DType, Op, paired_form};
use gpu::shape::{
    COLUMN_BLOCKS_PER_SM, Columns, SEGMENTS_BLOCK, SHAPE_BLOCK, SHAPE_WARPS, columns_smem, long_rows,
    short_row_vectors, staged_smem, tiles,
};

/// Which shaped kernel a plan launches (`gpu/src/kernels/segments.rs`,
/// `columns.rs`): its registry row and the entry `{id}_{op}_{type}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKernel {
    /// `segments`: any rows or CSR segments, in warp tiles and teams.
    Segments,
    /// `segments_tailed`: CSR segments with a heavy tail ([`heavy_tail`])
    /// on input not 16-byte aligned (aligned input goes to `segments_staged`),
    /// as `segments` but for pieces far longer than their team was sized
    /// for (`gpu::shape::piece_lanes`), which the whole warp reads.
    SegmentsTailed,
    /// `segments_staged`: short CSR segments ([`short_segments`]), or with
    /// a [`heavy_tail`], of 16-byte-aligned input, a round of them staged in shared memory and
    /// folded a lane a segment, long pieces by the whole warp.
    SegmentsStaged,
    /// `segments_paired`: as `segments_staged`, for segments that average
    /// at most [`PAIRED`] bytes ([`paired_segments`]), a second segment a
    /// lane while the rounds fill their 32 lanes; for the operations whose
    /// entries have that form (`gpu::names::paired_form`).
    SegmentsPaired,
    /// `segments_scheduled`: as `segments_staged`, for segments with a
    /// heavy tail that are not short on average, to accumulators wider
    /// than an element ([`staged_scheduled`]),
    /// its tiles in the offsets' schedule, those with the most segments
    /// first (`gpu::shape::Segments::scheduled`).
    SegmentsScheduled,
    /// `segments_long`: CSR segments long on average ([`long_segments`]),
    /// a tile per block, as `rows_long` reads rows; its own order.
    SegmentsLong,
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
    pub const ALL: [ShapeKernel; 9] = [
        ShapeKernel::Segments,
        ShapeKernel::SegmentsTailed,
        ShapeKernel::SegmentsStaged,
        ShapeKernel::SegmentsPaired,
        ShapeKernel::SegmentsScheduled,
        ShapeKernel::SegmentsLong,
        ShapeKernel::RowsShort,
        ShapeKernel::RowsLong,
        ShapeKernel::Columns,
    ];

    /// Whether this is one of the staged kernels (`segments_staged`,
    /// `segments_paired`, `segments_scheduled`: one kernel's entries,
    /// `gpu/src/kernels/segments_staged.rs`): a warp's stage of shared
    /// memory, tiles from a counter after the segments' tickets, and the
    /// same pieces and bits.
    pub fn staged(self) -> bool {
        matches!(self, ShapeKernel::SegmentsStaged | ShapeKernel::SegmentsPaired | ShapeKernel::SegmentsScheduled)
    }

    /// Threads a block: [`SEGMENTS_BLOCK`] for `segments` and
    /// `segments_tailed`, [`SHAPE_BLOCK`] for the others.
    pub fn block(self) -> u32 {
        match self {
            ShapeKernel::Segments | ShapeKernel::SegmentsTailed => SEGMENTS_BLOCK,
            _ => SHAPE_BLOCK,
        }
    }

    /// Its row of the registry.
    pub fn row(self) -> &'static Kernel {
        match self {
            ShapeKernel::Segments => &SEGMENTS,
            ShapeKernel::SegmentsTailed => &SEGMENTS_TAILED,
            ShapeKernel::SegmentsStaged => &SEGMENTS_STAGED,
            ShapeKernel::SegmentsPaired => &SEGMENTS_PAIRED,
            ShapeKernel::SegmentsScheduled => &SEGMENTS_SCHEDULED,
            ShapeKernel::SegmentsLong => &SEGMENTS_LONG,
            ShapeKernel::RowsShort => &ROWS_SHORT,
            ShapeKernel::RowsLong => &ROWS_LONG,
            ShapeKernel::Columns => &COLUMNS,
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
    /// Blocks of [`ShapeKernel::block`] threads.
    pub grid: u32,
    /// Dynamic shared memory, bytes.
    pub smem: u32,
    /// Segments: elements per warp tile; rows (short and long): per block;
    /// columns: the tile width (`wide`).
    pub tile: u64,
    /// Lanes per team (0: per tile) for segments, chunks for columns; for
    /// `segments_long` and `segments_scheduled`, where the offsets'
    /// schedule of its tile starts, plus one (`gpu::shape::schedule_at`;
    /// for `segments_long` 0: none, the grid's order).
    pub split: u32,
    /// Accumulators of scratch (pieces or chunk partials).
    pub partials: usize,
    /// Zeroed tickets: one a segment, row or column tile, and for
    /// the staged kernels (`segments_staged`, `segments_paired` and
    /// `segments_scheduled`) one more, their tile
    /// counter (zero again after each launch).
    pub tickets: usize,
    /// Blocks an SM declared to the JIT with the block, where the planner
    /// wants more of them resident than the entry's registers allow
    /// ([`column_blocks_per_sm`]); `None` leaves the entry as it is.
    pub blocks_per_sm: Option<u32>,
}

impl ShapePlan {
    /// The plan with the entries of the portable form `form`
    /// (`dispatch::shaped_mode`), if any: `{kernel}_{form}_{type}`.
    pub(crate) fn in_form(self, form: Option<&str>, ty: DType) -> ShapePlan {
        match form {
            Some(form) => {
                ShapePlan { entry: self.kernel.row().entry_named(0, form, ty.name()), blocks_per_sm: None, ..self }
            }
            None => self,
        }
    }
}

/// Plan operation `op` on `ty` (accumulators of `acc_bytes`) over `n`
/// elements shaped as `shape`, for a GPU of fit `fit` (its tiles, column
/// blocks and teams: `Tuning::fit`; `Fit::PORTABLE` for the `gpu_to_gpu`
/// orders). `aligned`: the inputs start on a 16-byte boundary, and for
/// columns every row does too (`gpu::shape::vector_columns`).
///
/// ```
/// use reduction::dispatch::shape_plan as plan;
/// use reduction::shape::{AUTO_LANES, Fit, Matrix, Shape, Strategy};
/// use reduction::{DType, Op};
/// let rows = Shape::Rows(Matrix::new(1024, 1024));
/// let p = plan(Op::Sum, DType::F32, 4, 1 << 20, rows, Strategy::Auto, false, Fit::PORTABLE).unwrap();
/// assert_eq!((p.entry.as_str(), p.grid, p.tile, p.partials), ("segments_sum_f32", 128, 4096, 512));
/// assert_eq!(p.split, AUTO_LANES | 8); // teams chosen per tile, about 8 vectors a lane
/// let chunks = Strategy::Columns { wide: 1, chunks: 8 };
/// let columns = Shape::Columns(Matrix::new(1 << 16, 16));
/// let p = plan(Op::Sum, DType::F32, 4, 1 << 20, columns, chunks, true, Fit::PORTABLE).unwrap();
/// assert_eq!((p.entry.as_str(), p.grid, p.split, p.tickets), ("columns_sum_f32", 8, 8, 1));
/// let dot = Shape::Rows(Matrix::new(2, 5));
/// assert!(plan(Op::Dot, DType::I32, 4, 10, dot, Strategy::Auto, false, Fit::PORTABLE).is_err());
/// ```
#[allow(clippy::too_many_arguments)]
pub fn shape_plan(
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
            let (tile_bytes, split, staged) = match strategy {
                Strategy::Auto => (0, 0, matches!(shape, Shape::Segments(o) if short_segments(o, size))),
                Strategy::Segments { tile_bytes, lanes } => (tile_bytes as u64, lanes, false),
                Strategy::Staged { tile_bytes } => (tile_bytes as u64, 0, true),
                Strategy::Columns { .. } => return Err(wrong("rows and segments take Auto, Segments or Staged")),
            };
            if !(split == 0 || split.is_power_of_two() && split <= 32) {
                return Err(wrong("lanes: 0 (automatic), 1, 2, 4, 8, 16 or 32"));
            }
            let tailed = matches!(shape, Shape::Segments(o) if split == 0 && heavy_tail(o));
            let staged = aligned && (staged || tailed && strategy == Strategy::Auto);
            let long = !staged
                && acc_bytes <= LONG_ACC_BYTES
                && matches!(shape, Shape::Segments(o) if split == 0 && long_segments(o, size));
            let even = !long && matches!(shape, Shape::Segments(o) if even_lengths(o));
            // rows that `rows_short` takes (fewer registers)
            let short_rows = matches!(shape,
                Shape::Rows(m) if rows_short_takes(op, short_row_vectors(m.cols as u64, m.pitch as u64, size, split, aligned)));
            let tile_bytes = match tile_bytes {
                0 if even => {
                    let share = if staged { EVEN_STAGED_WARPS } else { EVEN_WARPS };
                    gpu::shape::filling_tile_bytes(n as u64, size, fit.min_warps / share)
                }
                0 if long => long_tile_bytes(n as u64, shape.results() as u64, size, fit.min_warps),
                0 => {
                    let t = gpu::shape::tile_bytes(n as u64, shape.results() as u64, size, fit.min_warps);
                    match shape {
                        _ if tailed || staged => t.max(TAILED_MIN_TILE_BYTES),
                        Shape::Rows(m) => {
                            let (row, pitch) = (m.cols as u64 * size as u64, m.pitch as u64 * size as u64);
                            t.max(rows_min_tile_bytes(op, short_rows, row, pitch))
                        }
                        _ => t, // segments (columns are planned below)
                    }
                }
                t if t.is_power_of_two() && (MIN_TILE_BYTES..=MAX_TILE_BYTES).contains(&t) => t,
                _ => return Err(wrong("tile_bytes: 0 (automatic) or a power of two from 16 KiB to 256 KiB")),
            };
            let tile = tile_bytes / size as u64;
            let warp_tiles = tiles(n as u64, tile);
            let schedule = scheduled_at(n as u64, tile);
            // rows that kernels of their own take (fewer registers)
            let kernel = match shape {
                _ if short_rows => ShapeKernel::RowsShort,
                Shape::Rows(m) if long_rows(m.cols as u64, m.pitch as u64, tile, split) => ShapeKernel::RowsLong,
                Shape::Segments(o) if staged && paired_segments(o, size) && paired_form(op, ty) => {
                    ShapeKernel::SegmentsPaired
                }
                Shape::Segments(o) if staged && staged_scheduled(o, size, acc_bytes) && schedule != 0 => {
                    ShapeKernel::SegmentsScheduled
                }
                _ if staged => ShapeKernel::SegmentsStaged,
                _ if long => ShapeKernel::SegmentsLong,
                _ if tailed => ShapeKernel::SegmentsTailed,
                _ => ShapeKernel::Segments,
            };
            // segments: a warp a tile; rows and long segments: a block a tile
            // (rows_long's warps' results in shared memory, segments_long's in two sets)
            let blocks = match kernel {
                ShapeKernel::RowsLong | ShapeKernel::RowsShort | ShapeKernel::SegmentsLong => warp_tiles,
                _ => warp_tiles.div_ceil(kernel.block() as u64 / 32),
            };
            let smem = match kernel {
                ShapeKernel::RowsLong => SHAPE_WARPS * acc_bytes as u32,
                ShapeKernel::SegmentsLong => 2 * SHAPE_WARPS * acc_bytes as u32,
                k if k.staged() => staged_smem(),
                _ => 0,
            };
            let grid = u32::try_from(blocks).map_err(|_| too_big("segments"))?;
            let counted = kernel.staged();
            if counted && warp_tiles >= 1 << 31 {
                return Err(Error::Shape("segments: 2^31 tiles or more, past the staged kernel's tile counter".into()));
            }
            Ok(ShapePlan {
                kernel,
                entry: kernel.row().entry(0, op, ty),
                grid,
                smem,
                tile,
                split: match (kernel, shape) {
                    (ShapeKernel::SegmentsLong | ShapeKernel::SegmentsScheduled, Shape::Segments(_)) => schedule,
                    _ if split == 0 => AUTO_LANES | team_vectors(op, matches!(shape, Shape::Rows(_)), fit),
                    _ => split,
                },
                partials: 2 * warp_tiles as usize,
                // the staged kernels' tile counter after the segments' tickets
                tickets: shape.results() + counted as usize,
                blocks_per_sm: None,
            })
        }
        Shape::Columns(m) => {
            let (wide, chunks) = match strategy {
                Strategy::Auto => (0, 0),
                Strategy::Columns { wide, chunks } => (wide, chunks),
                Strategy::Segments { .. } | Strategy::Staged { .. } => {
                    return Err(wrong("columns take Auto or Columns"));
                }
            };
            let wide = match wide {
                0 => Columns::auto_wide(m.cols as u64, lanes, aligned, fit.column_blocks, column_wide_most(op, ty)),
                1 | 2 | 4 | 8 | 16 => wide,
                _ => return Err(wrong("wide: 0 (automatic), 1, 2, 4, 8 or 16")),
            };
            let geo = Columns::new(m.cols as u64, lanes, aligned, wide);
            let chunks = if chunks == 0 {
                Columns::auto_chunks(m.rows as u64, geo.col_tiles, fit.column_blocks)
            } else {
                chunks
            };
            let grid = geo
                .col_tiles
                .checked_mul(chunks as u64)
                .and_then(|g| u32::try_from(g).ok())
                .filter(|&g| g < 1 << 31)
                .ok_or_else(|| too_big("columns"))?;
            Ok(ShapePlan {
                kernel: ShapeKernel::Columns,
                entry: ShapeKernel::Columns.row().entry(0, op, ty),
                grid,
                smem: columns_smem(geo.width, acc_bytes),
                tile: wide as u64,
                split: chunks,
                partials: if chunks > 1 { chunks as usize * m.cols } else { 0 },
                tickets: geo.col_tiles as usize,
                blocks_per_sm: column_blocks_per_sm(op, ty),
            })
        }
    }
}

/// What `segments_long` takes for `lanes` over CSR
/// segments of `n` elements in tiles of `tile`: one more than the entry
/// where the offsets' schedule of that tile starts
/// (`gpu::shape::schedule_at`: the tiles with the most segments first), or
/// 0 where it does not cover the tile (or its entries or tiles lie past
/// what `u32` holds), and the tiles go in their order.
///
/// ```
/// use gpu::shape::SCHEDULE_MIN_TILE as m;
/// use reduction::dispatch::scheduled_at;
/// assert_eq!([scheduled_at(3 * m, m), scheduled_at(3 * m, 2 * m), scheduled_at(3 * m, m / 2)], [1, 4, 0]);
/// ```
pub fn scheduled_at(n: u64, tile: u64) -> u32 {
    let fits = |at: u64| u32::try_from(at + tiles(n, tile)).ok().map(|_| at as u32 + 1);
    gpu::shape::schedule_at(n, tile).and_then(fits).unwrap_or(0)
}

/// The one stretch of the input a `shape` covers, where the flat kernel
/// reduces it instead of a shaped one: a single CSR segment or a single
/// row, not empty, under [`Strategy::Auto`], outside the portable orders of
/// `gpu_to_gpu` (`portable`), whose bits are the shaped kernels'. The flat
/// kernel's grid sweeps the stretch together, where the shaped kernels cut
/// it into tiles and combine their pieces (2^28 `f32` on an H200: one
/// segment 277.0 → 240.7 µs, one row 287.5 → 240.5;
/// `docs/src/performance/tuning-shapes.md`, a single segment or row).
///
/// ```
/// use reduction::dispatch::single_stretch;
/// use reduction::shape::{Matrix, Shape, Strategy};
/// let row = Shape::Rows(Matrix::new(1, 1000));
/// assert_eq!(single_stretch(row, Strategy::Auto, false), Some(0..1000));
/// assert_eq!(single_stretch(row, Strategy::Auto, true), None); // gpu_to_gpu
/// assert_eq!(single_stretch(row, Strategy::Staged { tile_bytes: 0 }, false), None);
/// assert_eq!(single_stretch(Shape::Rows(Matrix::new(2, 1000)), Strategy::Auto, false), None);
/// assert_eq!(single_stretch(Shape::Columns(Matrix::new(1, 1000)), Strategy::Auto, false), None);
/// ```
pub fn single_stretch(shape: Shape<'_>, strategy: Strategy, portable: bool) -> Option<std::ops::Range<usize>> {
    if strategy != Strategy::Auto || portable {
        return None;
    }
    let (start, end) = match shape {
        Shape::Segments(o) if o.count == 1 => (*o.host.first()? as usize, *o.host.get(1)? as usize),
        Shape::Rows(m) if m.rows == 1 => (0, m.cols),
        _ => return None,
    };
    (start < end).then_some(start..end)
}

/// The 16-byte vectors a lane of a segments kernel's team aims at for `op`
/// (the teams chosen per tile, [`AUTO_LANES`] `| v`): the card's
/// [`Fit::vectors_per_lane`], and twice that for the variance and
/// logsumexp along `rows` (of one length), whose merges of two parts (the
/// variance's about 50 instructions of `f64` with a division, logsumexp's
/// a maximum and two exponentials) cost more than a vector's elements:
/// their teams' trees are fewer and shorter. Not for segments, whose
/// lengths vary about the tile's average: a team half as wide reads a long
/// one twice as long. H200, rows of 256 `f32` (64 vectors), µs
/// (`docs/src/performance/tuning-heavier-shapes.md`): the variance, the binaries before
/// and after in one sitting, two passes each (`reduce shapes --op moments
/// --case "1048576x256 axis 1,segments" --runs 20`), 305.6-305.8 →
/// 280.2-280.3, log-uniform segments 279.5-279.7 → 290.6-291.0 (the other
/// segments the same); logsumexp, the sweep of the teams (`reduce shapes
/// --op logsumexp --case "1048576x256 axis 1" --sweep --runs 20`), eight
/// lanes (the card's aim) 270.1, four 261.3.
///
/// ```
/// use reduction::dispatch::team_vectors;
/// use reduction::shape::Fit;
/// use reduction::Op;
/// let (h200, h100) = (Fit::of(132, 64, 8), Fit::of(132, 64, 4));
/// assert_eq!((team_vectors(Op::Sum, true, h200), team_vectors(Op::Moments, true, h200)), (8, 16));
/// assert_eq!((team_vectors(Op::Sum, true, h100), team_vectors(Op::Moments, true, h100)), (4, 8));
/// assert_eq!(team_vectors(Op::LogSumExp, true, h200), 16);
/// assert_eq!(team_vectors(Op::Moments, false, h200), 8); // segments
/// ```
pub fn team_vectors(op: Op, rows: bool, fit: Fit) -> u32 {
    match op {
        Op::Moments | Op::LogSumExp if rows => 2 * fit.vectors_per_lane,
        _ => fit.vectors_per_lane,
    }
}

/// Whether `rows_short` takes `op`'s rows of `vectors` 16-byte vectors
/// (`gpu::shape::short_row_vectors`, 0 for rows it cannot take). It folds
/// a row with a lane a vector and merges the row's lanes: one addition a
/// level for a sum, but the variance's and logsumexp's merges of two parts
/// cost more than a vector's elements, and past two vectors (the variance)
/// or four (logsumexp) the segments kernel's teams, a lane for about
/// sixteen vectors ([`team_vectors`]), merge less. H200, the binaries before
/// and after in one sitting (`reduce shapes --op moments|logsumexp --type
/// f32|bf16|f16 --case "1048576x256 axis 1,16777216x16 axis 1" --runs
/// 20`), µs: the variance's rows of 16 `f32` (four vectors) 377.9 → 356.5,
/// its rows of 256 `bf16` (32 vectors) 372.9 → 174.6 and logsumexp's 251.6
/// → 170.1 (`f16` the same); kept in `rows_short`, by the sweeps, the rows
/// of 16 `bf16` (two vectors: the variance 188.9, logsumexp 160.7, against
/// 345.4 and 304.8 with a lane a team) and logsumexp's of 16 `f32` (275.9,
/// against 313.2) (`docs/src/performance/tuning-heavier-shapes.md`, short rows of the
/// costly merges).
///
/// ```
/// use reduction::dispatch::rows_short_takes;
/// use reduction::Op;
/// assert!(rows_short_takes(Op::Sum, 32) && rows_short_takes(Op::LogSumExp, 4));
/// assert!(rows_short_takes(Op::Moments, 2) && !rows_short_takes(Op::Moments, 4));
/// assert!(!rows_short_takes(Op::LogSumExp, 8) && !rows_short_takes(Op::Sum, 0));
/// ```
pub fn rows_short_takes(op: Op, vectors: u32) -> bool {
    let most = match op {
        Op::Moments => 2,
        Op::LogSumExp => 4,
        _ => u32::MAX,
    };
    (1..=most).contains(&vectors)
}

/// The smallest automatic tile for `op`'s rows of `row_bytes`, in
/// `rows_short` (`short_rows`) or in the teams: 32 KiB for logsumexp's in
/// `rows_short` and the variance's in teams shorter than 16 KiB, whose
/// merges of two parts (a maximum and two exponentials; about 50
/// instructions of `f64` with a division) cost more than a vector's
/// elements, so that each block (`rows_short`) or warp folds twice the
/// rows before its lanes merge; the tile rule's 16 KiB for the others (rows
/// of 16 KiB stay whole tiles of `rows_long`). H200, µs, the binaries
/// before and after in one sitting (`reduce shapes --op moments|logsumexp
/// --type f32|bf16 --case "1048576x256 axis 1,16777216x16 axis 1" --runs
/// 20`; `docs/src/performance/tuning-heavier-shapes.md`, short rows in larger tiles): the
/// variance's rows of 16 `f32` 355.7 → 342.6, of 256 `f32` 280.7 → 278.6,
/// of 256 `bf16` 175.4 → 172.5; kept at 16 KiB, the variance's rows of 16
/// `bf16` (`rows_short`: 187.7 → 190.2 at 32 KiB) and logsumexp's rows of
/// 256 `f32` (teams: 263.4 → 266.1); logsumexp's rows of 16 `f32` in
/// `rows_short` 294.0 → 275.9 (an earlier sitting).
///
/// 32 KiB too for every operation's rows whose pitch (`pitch_bytes`) is
/// neither a power of two nor a whole number of 16 KiB tiles (which
/// `rows_long` may take whole): tiles of 16 KiB end inside one row in every few,
/// and each such row leaves two pieces, a ticket and a combination, where
/// a tile twice as large ends inside half as many. H200, 2^28 `f32` sums,
/// `reduce run --shape RxC [--tile 32]`, µs, 16 → 32 KiB: rows of 250
/// 365.0 → 344.4, of 1000 317.9 → 299.9, of 3000 298.6 → 278.4, of 100
/// 361.2 → 361.5 (`docs/src/performance/tuning-shapes.md`).
///
/// ```
/// use reduction::dispatch::rows_min_tile_bytes;
/// use reduction::Op;
/// let kib = |op, short, bytes| rows_min_tile_bytes(op, short, bytes, bytes) >> 10;
/// assert_eq!((kib(Op::LogSumExp, true, 64), kib(Op::LogSumExp, false, 1024)), (32, 16));
/// assert_eq!((kib(Op::Moments, false, 64), kib(Op::Moments, true, 32)), (32, 16));
/// assert_eq!((kib(Op::Moments, false, 16 << 10), kib(Op::Sum, true, 64)), (16, 16));
/// assert_eq!((kib(Op::Sum, false, 4000), rows_min_tile_bytes(Op::Sum, false, 4000, 4096) >> 10), (32, 16));
/// assert_eq!(kib(Op::Sum, false, 48 << 10), 16); // three 16 KiB tiles a row
/// ```
pub fn rows_min_tile_bytes(op: Op, short_rows: bool, row_bytes: u64, pitch_bytes: u64) -> u64 {
    match op {
        _ if !pitch_bytes.is_power_of_two() && !pitch_bytes.is_multiple_of(MIN_TILE_BYTES) => 2 * MIN_TILE_BYTES,
        Op::LogSumExp if short_rows => 2 * MIN_TILE_BYTES,
        Op::Moments if !short_rows && row_bytes < MIN_TILE_BYTES => 2 * MIN_TILE_BYTES,
        _ => MIN_TILE_BYTES,
    }
}

/// The widest column tile `Strategy::Auto` gives the columns kernel of
/// `op` over `ty` (`wide`, [`Columns::auto_wide`]), where the matrix has
/// the columns for it. A block's row lanes meet once, at its end, in a
/// chain of merges; a wider tile has fewer row lanes and so fewer blocks
/// and shorter chains: for the variance (Chan's merge, a division) and the
/// half types (eight columns a thread) 16, 2 KiB of each row and two row
/// lanes. The `f32` and `f64` sum and logsumexp keep 4, whose block ends
/// cost little: 256×2^20 `f32` along its columns on an H200, µs, wide 4 →
/// 16, one sitting: the variance 298.5 → 262.1, logsumexp 245.8 → 265.1,
/// the sum 241.1 → 243.1; `bf16` the variance 247.5 → 209.3, logsumexp
/// 180.7 → 166.3, the sum 131.5 → 128.8 (`reduce shapes --op OP --type T
/// --case "256x1048576 axis 0" [--sweep]`, `docs/src/performance/tuning-heavier-shapes.md`).
///
/// ```
/// use reduction::dispatch::column_wide_most;
/// use reduction::{DType, Op};
/// assert_eq!(column_wide_most(Op::Moments, DType::F32), 16);
/// assert_eq!(column_wide_most(Op::LogSumExp, DType::BF16), 16);
/// assert_eq!(column_wide_most(Op::LogSumExp, DType::F32), 4);
/// assert_eq!(column_wide_most(Op::Sum, DType::F64), 4);
/// ```
pub fn column_wide_most(op: Op, ty: DType) -> u32 {
    match (op, ty) {
        (Op::Moments, _) | (_, DType::F16 | DType::BF16) => 16,
        _ => 4,
    }
}

/// The blocks an SM the columns kernel of `op` over `ty` is declared to the
/// JIT ([`ShapePlan::blocks_per_sm`]), where its registers alone would
/// leave too few warps to keep the loads in flight. Measured with the
/// matrices of 2^28 elements along their columns (`reduce shapes --op
/// moments --case "axis 0" [--type T]`, `docs/src/performance/tuning-heavier-shapes.md`):
///
/// * the variance of `f32`: the [`COLUMN_BLOCKS_PER_SM`] it is planned for
///   (70 registers alone, three blocks an SM; declared, 64 and a few
///   spilled): an H200 17-21% faster on all five matrices (when it took 84
///   registers alone), an H100 3-6% faster on all five (at 70, against
///   the grid that follows [`second_wave`] undeclared, itself
///   8.6-18% faster than the 512 blocks of four matrices);
/// * the variance of the half types: [`HALF_COLUMN_BLOCKS_PER_SM`] (eight
///   columns a thread, 160 registers alone: one block an SM; declared,
///   128 and a few spilled): an H200 1.5-1.6 times as fast, an H100 the
///   same.
///
/// ```
/// use reduction::dispatch::column_blocks_per_sm;
/// use reduction::{DType, Op};
/// assert_eq!(column_blocks_per_sm(Op::Moments, DType::F32), Some(4));
/// assert_eq!(column_blocks_per_sm(Op::Moments, DType::BF16), Some(2));
/// assert_eq!(column_blocks_per_sm(Op::Moments, DType::F64), None);
/// assert_eq!(column_blocks_per_sm(Op::Sum, DType::F32), None);
/// ```
pub fn column_blocks_per_sm(op: Op, ty: DType) -> Option<u32> {
    match (op, ty) {
        (Op::Moments, DType::F32) => Some(COLUMN_BLOCKS_PER_SM),
        (Op::Moments, DType::F16 | DType::BF16) => Some(HALF_COLUMN_BLOCKS_PER_SM),
        _ => None,
    }
}

/// Whether a grid of `grid` blocks, of which the card holds `resident` at
/// once, runs a second wave and no third: more than one wave, at most two.
/// Its second wave's blocks each pay a block's start and end again (the
/// columns' row lanes meet in a chain of merges, and the chunks' partials
/// in the last block), and where the second is less than half full they
/// run with the card mostly idle; half as many blocks, each with twice the
/// rows or columns, run in one wave together. The columns kernel aims at
/// [`Fit::column_blocks`], 512 on 132 SMs, four blocks an SM; an entry of
/// 65-80 registers a thread, undeclared ([`column_blocks_per_sm`]), holds
/// three an SM, 396 blocks at once. H100, 16384² `f32` along its columns,
/// the variance at 70 registers, undeclared: 512 blocks (32 columns a
/// block) 425.8 µs, 256 (64 columns) 378.0, 1024 (64 columns, four chunks
/// of rows) 374.8 (`reduce shapes --op moments --case "16384x16384 axis 0"
/// --sweep --runs 10`); `nanmean` of `bf16` (74 registers) along four of
/// the five matrices 4-12% faster. The variance of the half types,
/// declared two an SM (264 blocks at once), in two nearly full waves of
/// 512: 16384² `bf16` 196.8 µs against 185.2 in one wave of 256, 16777216×16
/// 218.3 against 199.9 (`--sweep`, `docs/src/performance/tuning-heavier-shapes.md`).
///
/// ```
/// use reduction::dispatch::second_wave;
/// assert!(second_wave(512, 396)); // three blocks an SM of 132
/// assert!(second_wave(512, 264)); // two: two waves, the second nearly full
/// assert!(!second_wave(512, 528)); // four: one wave
/// assert!(!second_wave(2048, 396)); // five waves and a little
/// assert!(!second_wave(256, 396));
/// ```
pub fn second_wave(grid: u64, resident: u64) -> bool {
    resident < grid && grid <= 2 * resident
}

/// Blocks an SM the variance of the half types along columns is declared
/// for ([`column_blocks_per_sm`]).
pub const HALF_COLUMN_BLOCKS_PER_SM: u32 = 2;

/// Whether CSR segments are short: on average at most [`SHORT`] bytes of
/// elements of `size` bytes. On 16-byte-aligned input, short segments and
/// those with a [`heavy_tail`] (mostly short too) go to `segments_staged`,
/// which reads a round of them as one stretch where `segments` would read
/// each in a chain of dependent loads (2^28 f32, H100 / H200: lengths
/// uniform in 0..32 630 → 496 / 552 → 411 µs, Zipf's 1006 → 750 / 936 →
/// 695, Pareto's 423 → 410 / 322 → 301; uniform in 0..512, 1 KiB on
/// average, since the stage is copied by `cp.async` on sm_80 and later,
/// 511 → 422 / 385 → 382 with 256 KiB tiles; `docs/src/performance/tuning-shapes.md`,
/// the staged segments).
pub fn short_segments(o: &Offsets, size: usize) -> bool {
    let (_, elements, count) = lengths(o);
    short_segments_of(elements, count, size)
}

/// The longest average segment, bytes, of [`short_segments`].
pub const SHORT: u64 = 1024;

/// [`short_segments`] of `count` segments over `elements` of `size` bytes.
///
/// ```
/// use reduction::dispatch::short_segments_of;
/// assert!(short_segments_of(1 << 28, 1 << 24, 4)); // uniform lengths 0..32: 64 bytes
/// assert!(short_segments_of(1 << 28, 1 << 20, 4)); // uniform lengths 0..512: 1 KiB
/// assert!(!short_segments_of(1 << 28, 1 << 17, 4)); // 8 KiB
/// assert!(!short_segments_of(0, 0, 4));
/// ```
pub fn short_segments_of(elements: u64, count: u64, size: usize) -> bool {
    average_within(elements, count, size, SHORT)
}

/// Whether `count` segments (at least one) over `elements` of `size` bytes
/// average at most `bytes`.
fn average_within(elements: u64, count: u64, size: usize, bytes: u64) -> bool {
    count >= 1 && elements * size as u64 <= bytes * count
}

/// Whether short segments go to `segments_paired`, whose lanes take a
/// second segment while its rounds fill their 32 lanes (where the
/// operation allows it, `gpu::names::paired_form`): segments of at most
/// [`PAIRED`] bytes on average, 64 of which fill a stage. Rounds of up to
/// 64 such segments wait on their stage half as often (2^28, H200: Zipf's
/// lengths, the f32 sum 408 → 378 µs, the bf16 sum 389 → 352; lengths
/// uniform in 0..32, the bf16 sum 268 → 245); on longer
/// segments a round seldom fills its 32 lanes, and `segments_staged` takes
/// them (`docs/src/performance/tuning-shapes.md`, the staged segments two a
/// lane).
pub fn paired_segments(o: &Offsets, size: usize) -> bool {
    let (_, elements, count) = lengths(o);
    paired_segments_of(elements, count, size)
}

/// The longest average segment, bytes, of [`paired_segments`]: a 64th of
/// a stage.
pub const PAIRED: u64 = gpu::shape::STAGE_WARP_BYTES as u64 / 64;

/// [`paired_segments`] of `count` segments over `elements` of `size` bytes.
///
/// ```
/// use reduction::dispatch::paired_segments_of;
/// assert!(paired_segments_of(1 << 28, 1 << 24, 4)); // uniform lengths 0..32: 64 bytes
/// assert!(paired_segments_of(1 << 28, 19_000_000, 4)); // Zipf's: about 14 elements
/// assert!(!paired_segments_of(1 << 28, 1 << 20, 2)); // uniform lengths 0..512 of bf16: 512 bytes
/// assert!(!paired_segments_of(0, 0, 4));
/// ```
pub fn paired_segments_of(elements: u64, count: u64, size: usize) -> bool {
    average_within(elements, count, size, PAIRED)
}

/// Whether CSR segments are long: on average at least [`LONG`] bytes of
/// elements of `size` bytes, without a [`heavy_tail`]; the planner sends
/// them to `segments_long` for operations of accumulators of at most
/// [`LONG_ACC_BYTES`]. `segments_long`
/// reads them a tile per block, as `rows_long` reads long rows: each
/// block's loads a few contiguous runs of 4 KiB, where the segments
/// kernel's warp tiles keep thousands of streams open at once
/// (`docs/src/performance/tuning-shapes.md`, long segments a block a tile).
///
/// ```
/// use reduction::dispatch::long_segments_of;
/// assert!(long_segments_of(70_000, 1 << 28, 3778, 4)); // log-uniform: about 71,000 elements
/// assert!(long_segments_of(1 << 28, 1 << 28, 1, 2)); // one segment
/// assert!(!long_segments_of(1 << 20, 1 << 28, 1 << 17, 4)); // 8 KiB
/// assert!(!long_segments_of(200_000_000, 1 << 28, 1024, 4)); // one holds most: a heavy tail
/// ```
pub fn long_segments(o: &Offsets, size: usize) -> bool {
    let (longest, elements, count) = lengths(o);
    long_segments_of(longest, elements, count, size)
}

/// The shortest average segment, bytes, of [`long_segments`].
pub const LONG: u64 = 64 << 10;

/// The largest accumulator, bytes, of the operations `segments_long`
/// takes: a block's reduction of each piece merges its 256 threads'
/// parts, and where a merge is costly (the variance's, with a division)
/// or a part large (an arg-extreme's value and index) that costs more than
/// the block saves. H200, 2^28, log-uniform lengths, µs, the warp kernel →
/// `segments_long` (`reduce shapes --case loguniform --op
/// moments,logsumexp,argmax,max --type bf16|f32 --runs 20`): the variance
/// `bf16` 159.5 → 201.2, `f32` 271.9 → 293.2; arg-max `bf16` 154.9 → 173.4,
/// `f32` 270.1 → 269.8; logsumexp `bf16` 150.6 → 153.1, `f32` 265.7 →
/// 264.5; max `bf16` 147.0 → 141.9, `f32` 279.3 → 265.1
/// (`docs/src/performance/tuning-shapes.md`, long segments a block a tile).
pub const LONG_ACC_BYTES: usize = 8;

/// The smallest automatic tile of `segments_long`: four rounds of a
/// block's loads.
pub const LONG_MIN_TILE_BYTES: u64 = 64 << 10;

/// The share of `Fit::min_warps` whose tiles `segments_long` fills (a
/// block a tile): one round of the resident warps, 8192 tiles on 132 SMs
/// (128 KiB for 1 GiB, where the warp kernels' rule gives 64 KiB). Each
/// tile starts by finding its segments and leaves a piece and a ticket for
/// each long one; half as many tiles pay that half as often. H200, 2^28,
/// log-uniform lengths, µs, 64 → 128 KiB (`reduce shapes --sweep --case
/// loguniform --runs 20`): the `f32` sum 249.6 → 245.6; `bf16` keeps 64
/// KiB, `f64` 474.3 → 475.7 at 256 KiB (`docs/src/performance/tuning-shapes.md`,
/// long segments).
pub const LONG_WARPS: u64 = 2;

/// `segments_long`'s automatic tile, bytes, for `n` elements of `size`
/// bytes in `count` segments on a card of `min_warps` (`Fit::min_warps`):
/// the warp kernels' rule over a [`LONG_WARPS`]th of the warps, at least
/// [`LONG_MIN_TILE_BYTES`].
fn long_tile_bytes(n: u64, count: u64, size: usize, min_warps: u64) -> u64 {
    gpu::shape::tile_bytes(n, count, size, min_warps / LONG_WARPS).max(LONG_MIN_TILE_BYTES)
}

/// [`long_segments`] of `count` segments over `elements` of `size` bytes,
/// the longest `longest` long.
pub fn long_segments_of(longest: u64, elements: u64, count: u64, size: usize) -> bool {
    count >= 1 && elements * size as u64 >= LONG * count && !heavy_tail_of(longest, elements, count)
}

/// Whether segments have a heavy tail: the longest more than [`TAIL`]
/// times the average. Their tiles mix many short segments with pieces of
/// long ones, which `segments_tailed` gives the whole warp; its extra
/// registers would cost every other case (2^28 f32, H200 / H100: Pareto
/// lengths 421 → 336 / 467 → 427 µs and Zipf's 1372 → 990 / 1382 → 1051
/// with it, but lengths uniform in 0..512 509 → 685 / 590 → 752, rows of
/// 1000 358 → 411 / 437 → 486, and log-uniform lengths, whose longest is
/// 14 times the average, 373 → 381 on the H100;
/// `docs/src/performance/tuning-shapes.md`). Its tiles are at least
/// [`TAILED_MIN_TILE_BYTES`].
pub fn heavy_tail(o: &Offsets) -> bool {
    let (longest, elements, count) = lengths(o);
    heavy_tail_of(longest, elements, count)
}

/// What the planner reads of `o`'s lengths: the longest, the elements the
/// segments cover, and how many segments.
fn lengths(o: &Offsets) -> (u64, u64, u64) {
    let first = o.host.first().copied().unwrap_or(0);
    (o.longest, o.end - first, o.count as u64)
}

/// How many times the average segment the longest must exceed for
/// [`heavy_tail`].
pub const TAIL: u64 = 64;

/// Whether staged segments go to `segments_scheduled`, which takes its
/// tiles in the offsets' schedule, those with the most segments first
/// (`gpu::shape::Segments::scheduled`), rather than in the input's order:
/// segments staged for their [`heavy_tail`], not for being
/// [`short_segments`] (Pareto's lengths, 131,050 segments over 2^28
/// elements, most of a few elements and a few of up to 10^6), reduced to
/// accumulators of `acc_bytes`, more than an element's `size` (every
/// operation of the half types, whose sums and extremes accumulate in
/// `f32`; the variance, logsumexp, arg-extremes and counts of `f32`). A
/// tile of many short segments costs far more than one inside a long
/// segment, the more so as each segment's accumulator is wider than its
/// elements (a 32 KiB tile of `bf16` holds twice the segments of one of
/// `f32`), and taken first those tiles no longer end the launch. H200,
/// 2^28, µs, the counter's order → the schedule's (`reduce shapes --case
/// pareto --type T --op OP --runs 10`): `bf16` sum 154.8 → 145.0, max
/// 157.0 → 146.8, arg-max 176.5 → 154.3, variance 200.8 → 164.5,
/// logsumexp 184.4 → 159.2; `f32` variance 302.4 → 296.0, logsumexp 284.6
/// → 279.2, arg-max 294.3 → 290.6. Where the accumulator is an element
/// wide, the schedule's order costs a little (`f32` sum 276.0 → 277.6, max
/// 277.6 → 280.2), and where most segments are short (Zipf's lengths,
/// uniform in 0..32) much: tiles of even lengths hold about as many
/// segments each, and the schedule's order reads them as a shuffle of the
/// input (`docs/src/performance/tuning-shapes.md`, heavy tails: the busiest tiles
/// first).
pub fn staged_scheduled(o: &Offsets, size: usize, acc_bytes: usize) -> bool {
    let (longest, elements, count) = lengths(o);
    staged_scheduled_of(longest, elements, count, size, acc_bytes)
}

/// [`staged_scheduled`] of `count` segments over `elements` of `size`
/// bytes, the longest `longest`, to accumulators of `acc_bytes`.
///
/// ```
/// use reduction::dispatch::staged_scheduled_of;
/// // Pareto's lengths, about 2048 elements: the bf16 sum (an f32 accumulator), the f32 variance
/// assert!(staged_scheduled_of(1_000_000, 1 << 28, 131_050, 2, 4) && staged_scheduled_of(1_000_000, 1 << 28, 131_050, 4, 24));
/// assert!(!staged_scheduled_of(1_000_000, 1 << 28, 131_050, 4, 4)); // the f32 sum
/// assert!(!staged_scheduled_of(1_000_000, 1 << 28, 18_917_785, 2, 4)); // Zipf's: about 14, short
/// assert!(!staged_scheduled_of(1_000_000, 1 << 28, 3778, 2, 4)); // log-uniform: no heavy tail
/// assert!(!staged_scheduled_of(511, 1 << 28, 1 << 20, 2, 4)); // uniform 0..512: neither
/// ```
pub fn staged_scheduled_of(longest: u64, elements: u64, count: u64, size: usize, acc_bytes: usize) -> bool {
    acc_bytes > size && heavy_tail_of(longest, elements, count) && !short_segments_of(elements, count, size)
}

/// The smallest automatic tile of `segments_tailed` and `segments_staged`:
/// fewer rounds a tile, each with its long pieces (Pareto and Zipf
/// lengths, 16 → 32 KiB: 336 → 322 µs and 990 → 952 on the H200, 427 →
/// 426 and 1049 → 1016 on the H100; staged on the H100, 410 → 402 and 929
/// → 883).
pub const TAILED_MIN_TILE_BYTES: u64 = 32 << 10;

/// [`heavy_tail`] of `count` segments over `elements`, the longest
/// `longest` long.
///
/// ```
/// use reduction::dispatch::heavy_tail_of;
/// assert!(!heavy_tail_of(511, 1 << 28, 1 << 20)); // uniform lengths 0..512
/// assert!(heavy_tail_of(1_000_000, 1 << 28, 131_050)); // Pareto: average 2048
/// assert!(!heavy_tail_of(1_000_000, 1 << 28, 3778)); // log-uniform: average 71051
/// assert!(!heavy_tail_of(1 << 28, 1 << 28, 1)); // one segment
/// ```
pub fn heavy_tail_of(longest: u64, elements: u64, count: u64) -> bool {
    count >= 2 && longest > TAIL * (elements / count)
}

/// Whether CSR segments are of even lengths: the longest at most [`EVEN`]
/// times the average, so that every tile of the input holds about the same
/// work (a single segment too). Their automatic tiles are the largest that
/// keep `Fit::min_warps / EVEN_WARPS` warps busy (256 KiB for 1 GiB on an
/// H100 or H200, against 16 KiB for short segments and 64 KiB for long
/// ones otherwise): each tile starts by finding its segments, and a long
/// segment leaves a piece per tile, both paid once per tile, while
/// even tiles leave nothing for small ones to balance. Lengths with a
/// spread keep the rule of `gpu::shape::tile_bytes`, where small tiles
/// balance the work (`docs/src/performance/tuning-shapes.md`, tiles).
pub fn even_lengths(o: &Offsets) -> bool {
    let (longest, elements, count) = lengths(o);
    even_lengths_of(longest, elements, count)
}

/// How many times the average segment the longest may be for
/// [`even_lengths`].
pub const EVEN: u64 = 4;

/// The share of `Fit::min_warps` (two rounds of the resident warps) whose
/// tiles segments of [`even_lengths`] fill: 4096 warps on 132 SMs of 64,
/// half a round.
pub const EVEN_WARPS: u64 = 4;

/// The share of `Fit::min_warps` whose tiles segments of [`even_lengths`]
/// fill when `segments_staged` reads them: a quarter round, 2048 warps on
/// 132 SMs (256 KiB tiles for the 0.97 GiB of lengths uniform in 0..32,
/// where [`EVEN_WARPS`] gives 128 KiB). A lane folds a whole segment per
/// round there, and longer tiles mean fewer rounds cut at a tile's end.
/// 2^28 f32, the staged kernel at 128 and 256 KiB, H100 / H200: lengths
/// uniform in 0..32 501.2 → 489.6 / 378.2 → 367.8 µs, in 0..512 430.3 →
/// 421.9 / 387.9 → 381.5.
pub const EVEN_STAGED_WARPS: u64 = 8;

/// [`even_lengths`] of `count` segments over `elements`, the longest
/// `longest` long.
///
/// ```
/// use reduction::dispatch::even_lengths_of;
/// assert!(even_lengths_of(31, 1 << 28, 1 << 24)); // uniform lengths 0..32
/// assert!(even_lengths_of(511, 1 << 28, 1 << 20)); // uniform lengths 0..512
/// assert!(even_lengths_of(1 << 28, 1 << 28, 1)); // one segment
/// assert!(!even_lengths_of(1_000_000, 1 << 28, 3778)); // log-uniform 1..10^6: average 71051
/// assert!(!even_lengths_of(1_000_000, 1 << 28, 131_050)); // Pareto
/// assert!(!even_lengths_of(0, 0, 0));
/// ```
pub fn even_lengths_of(longest: u64, elements: u64, count: u64) -> bool {
    count >= 1 && longest <= EVEN * (elements / count).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Matrix;

    #[test]
    fn strategies_are_checked() {
        let m = Shape::Rows(Matrix::new(4, 4));
        let segs = |tile_bytes, lanes| Strategy::Segments { tile_bytes, lanes };
        let cols = |wide, chunks| Strategy::Columns { wide, chunks };
        for bad in [segs(0, 3), segs(0, 64), segs(8192, 0), segs(48 << 10, 0), segs(512 << 10, 0), cols(1, 2)] {
            assert!(shape_plan(Op::Sum, DType::F32, 4, 16, m, bad, false, Fit::PORTABLE).is_err(), "{bad:?}");
        }
        assert!(shape_plan(Op::Sum, DType::F32, 4, 16, m, segs(32 << 10, 4), false, Fit::PORTABLE).is_ok());
        let c = Shape::Columns(Matrix::new(4, 4));
        for bad in [cols(3, 0), cols(32, 1), segs(0, 4)] {
            assert!(shape_plan(Op::Sum, DType::F32, 4, 16, c, bad, false, Fit::PORTABLE).is_err(), "{bad:?}");
        }
        assert!(shape_plan(Op::Sum, DType::F32, 4, 16, c, cols(16, 2), false, Fit::PORTABLE).is_ok());
    }

    /// The staged kernel takes one ticket more than the results: its tile
    /// counter; the other kernels one a result.
    #[test]
    fn the_staged_kernel_counts_its_tiles_after_the_tickets() {
        let m = Shape::Rows(Matrix::new(64, 1000));
        let plan = |strategy, aligned| shape_plan(Op::Sum, DType::F32, 4, 64_000, m, strategy, aligned, Fit::PORTABLE);
        let staged = plan(Strategy::Staged { tile_bytes: 0 }, true).unwrap();
        assert_eq!((staged.kernel, staged.tickets), (ShapeKernel::SegmentsStaged, 65));
        let teams = plan(Strategy::Segments { tile_bytes: 0, lanes: 0 }, true).unwrap();
        assert_eq!((teams.kernel, teams.tickets), (ShapeKernel::Segments, 64));
    }

    /// Rows of 256 `f32` go to the teams: the variance's and logsumexp's
    /// aim at twice the vectors a lane of a sum's (`team_vectors`).
    #[test]
    fn costly_merges_take_narrower_teams_along_rows() {
        let m = Shape::Rows(Matrix::new(1024, 256));
        let split = |op| shape_plan(op, DType::F32, 24, 1 << 18, m, Strategy::Auto, true, Fit::PORTABLE).unwrap().split;
        assert_eq!(
            (split(Op::Sum), split(Op::Moments), split(Op::LogSumExp)),
            (AUTO_LANES | 8, AUTO_LANES | 16, AUTO_LANES | 16)
        );
    }

    /// Rows of 256 `bf16` (32 vectors): a sum's in `rows_short`, the
    /// variance's and logsumexp's in teams of two lanes; rows of 16: the
    /// variance's `f32` (four vectors) in teams of a lane, its `bf16` (two)
    /// and logsumexp's `f32` in `rows_short` (`rows_short_takes`).
    #[test]
    fn costly_merges_take_teams_for_short_rows() {
        let plan = |op, ty: DType, rows, cols| {
            let m = Shape::Rows(Matrix::new(rows, cols));
            shape_plan(op, ty, 24, rows * cols, m, Strategy::Auto, true, Fit::PORTABLE).unwrap()
        };
        assert_eq!(plan(Op::Sum, DType::BF16, 1024, 256).kernel, ShapeKernel::RowsShort);
        for op in [Op::Moments, Op::LogSumExp] {
            let p = plan(op, DType::BF16, 1024, 256);
            assert_eq!((p.kernel, p.split), (ShapeKernel::Segments, AUTO_LANES | 16), "{op:?}");
        }
        assert_eq!(plan(Op::Moments, DType::F32, 1 << 12, 16).kernel, ShapeKernel::Segments);
        assert_eq!(plan(Op::Moments, DType::BF16, 1 << 12, 16).kernel, ShapeKernel::RowsShort);
        assert_eq!(plan(Op::LogSumExp, DType::F32, 1 << 12, 16).kernel, ShapeKernel::RowsShort);
    }

    /// Rows of 16 and 256 `f32`: logsumexp's in `rows_short` and the
    /// variance's in teams take tiles of 32 KiB, the others 16 KiB
    /// (`rows_min_tile_bytes`), but for rows such tiles would cut; rows of 16 KiB stay whole tiles of
    /// `rows_long`; a tile given is kept.
    #[test]
    fn costly_merges_fold_short_rows_in_larger_tiles() {
        let plan = |op, cols, strategy| {
            let m = Shape::Rows(Matrix::new((1 << 24) / cols, cols));
            shape_plan(op, DType::F32, 8, 1 << 24, m, strategy, true, Fit::PORTABLE).unwrap()
        };
        let auto = |op, cols| {
            let p = plan(op, cols, Strategy::Auto);
            (p.kernel, p.tile)
        };
        assert_eq!(auto(Op::LogSumExp, 16), (ShapeKernel::RowsShort, 8192));
        assert_eq!(auto(Op::Moments, 16), (ShapeKernel::Segments, 8192));
        assert_eq!(auto(Op::Sum, 16), (ShapeKernel::RowsShort, 4096));
        assert_eq!(auto(Op::Moments, 256), (ShapeKernel::Segments, 8192));
        assert_eq!(auto(Op::LogSumExp, 256), (ShapeKernel::Segments, 4096));
        assert_eq!(auto(Op::Moments, 4096), (ShapeKernel::RowsLong, 4096));
        // rows that 16 KiB tiles would cut: 32 KiB for every operation
        assert_eq!(auto(Op::Sum, 1000), (ShapeKernel::Segments, 8192));
        assert_eq!(auto(Op::Sum, 1024), (ShapeKernel::Segments, 4096));
        let given = plan(Op::LogSumExp, 16, Strategy::Segments { tile_bytes: 16 << 10, lanes: 0 });
        assert_eq!((given.kernel, given.tile), (ShapeKernel::RowsShort, 4096));
    }

    #[test]
    fn columns_aim_at_512_blocks() {
        let auto = |rows, cols| {
            let p = shape_plan(
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

    /// Log-uniform lengths (2^28 elements in 3778 segments) take tiles of
    /// 128 KiB in `f32` in `segments_long`, 8192 tiles whatever the type;
    /// 2^22 elements the smallest tile.
    #[test]
    fn long_segments_take_a_round_of_tiles() {
        let tile = |n, size| long_tile_bytes(n, 3778, size, Fit::PORTABLE.min_warps);
        assert_eq!([tile(1 << 28, 2), tile(1 << 28, 4), tile(1 << 28, 8)], [64 << 10, 128 << 10, 256 << 10]);
        assert_eq!(tile(1 << 22, 4), LONG_MIN_TILE_BYTES);
    }

    /// Lengths uniform in 0..32 and 0..512 (as `reduce shapes` draws them:
    /// a little under 2^28 elements) are short, even, and take 256 KiB
    /// tiles in the staged kernel where the teams would take 128 KiB.
    #[test]
    fn even_short_segments_are_staged_in_256_kib_tiles() {
        for (count, longest) in [(1u64 << 24, 31u64), (1 << 20, 511)] {
            let n = count * longest / 2;
            assert!(short_segments_of(n, count, 4) && even_lengths_of(longest, n, count));
            let tile = |share| gpu::shape::filling_tile_bytes(n, 4, Fit::PORTABLE.min_warps / share);
            assert_eq!((tile(EVEN_STAGED_WARPS), tile(EVEN_WARPS)), (256 << 10, 128 << 10), "{count} segments");
        }
    }
}
