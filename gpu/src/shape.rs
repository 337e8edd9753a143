//! Rows, columns and segments: the geometry that the kernels
//! `kernels/segments.rs` and `kernels/columns.rs` and the host's planner
//! share (this module, like `layout`, also builds for the host, where its
//! tests run).
//!
//! **Segments** (one result per row of a matrix, or per CSR segment
//! `offsets[s]..offsets[s+1]`): the input is cut into *warp tiles* of
//! 16 to 256 KiB ([`tile_bytes`], [`filling_tile_bytes`]), whatever the segments are. A warp reduces every segment
//! that overlaps its tile, in *teams* of `lanes` threads (1 to 32) that
//! each take one segment at a time; a segment that lies in one tile is
//! written at once, one that crosses tiles leaves a partial per tile, and
//! the last warp to finish one of its tiles combines them in tile order.
//! Every warp reads the same number of bytes, however long the segments: a
//! row of 16 elements and a row of 2^28 cost the same per byte. Rows that
//! kernels of their own take (`short_row_vectors`, `long_rows`) are cut
//! into tiles of the same sizes, a tile per *block*.
//!
//! **Columns** (one result per column): a block covers `unit_lanes` column
//! units (16-byte vectors, or single elements when rows are not
//! 16-byte-aligned) × `row_lanes` rows, so each warp reads whole 128-byte
//! lines; `chunks` blocks share each column tile's rows, and the last of
//! them combines their partials in chunk order.

/// Bytes of input per warp tile: the least, the most, and the powers of two
/// in between that the planner chooses from ([`tile_bytes`]).
pub const MIN_TILE_BYTES: u64 = 16 * 1024;

/// The largest warp tile, bytes.
pub const MAX_TILE_BYTES: u64 = 256 * 1024;

/// Threads per block of the shaped kernels but `segments` and
/// `segments_tailed` ([`SEGMENTS_BLOCK`]).
pub const SHAPE_BLOCK: u32 = 256;

/// Warps per block.
pub const SHAPE_WARPS: u32 = SHAPE_BLOCK / 32;

/// Threads per block of `segments` and `segments_tailed`, whose warps each
/// fold tiles of their own: two warps. A block keeps its place on the SM
/// until its slowest warp is done, and the SM starts no new block in its
/// place before then; with two warps a block, a warp whose tile took
/// longer (more pieces, a costlier fold) holds back one other warp, not
/// seven. H200, 1 GiB, blocks of 256 → 64
/// threads: rows of 1048576×256 f32 sums 254.0 → 248.2-248.5 µs, bf16
/// logsumexp 146.0 → 139.2, bf16 variance 170.7 → 167.3; bf16 variance
/// over log-uniform segments 172.9 → 167.4; f32 sums over them the same
/// (`docs/src/performance/tuning-shapes.md`).
pub const SEGMENTS_BLOCK: u32 = 64;

/// Warps per block of `segments` and `segments_tailed`.
pub const SEGMENTS_WARPS: u32 = SEGMENTS_BLOCK / 32;

/// Shared memory a warp of `segments_staged` stages a round of short
/// segments in: one stage of 4 KiB for one input (256 16-byte vectors,
/// eight loads a lane), two of 2 KiB for two (a dot product).
pub const STAGE_WARP_BYTES: u32 = 4096;

/// Blocks of `segments_staged` an SM holds at least: the host declares it
/// to the JIT with the block (`.maxntid`, `.minnctapersm`: CUDA's
/// `__launch_bounds__(SHAPE_BLOCK, 4)`), which then fits the kernel in 64
/// registers a thread (an f32 sum: 72 alone, three blocks an SM, a few
/// spilled instead). The kernel waits on its loads in turn, and a third more
/// warps keep a third more of them in flight: 8-12% faster on short
/// segments (H100).
pub const STAGED_BLOCKS_PER_SM: u32 = 4;

/// Row lanes from which a column block's row lanes meet as a tree
/// ([`Columns::row_tree`]): the tall matrices of one or two 16-byte
/// column units a row (8 or 16 columns of a half type).
pub const TREE_ROW_LANES: u32 = 128;

/// Blocks of the columns kernel an SM is planned for ([`Fit::of`]), and
/// declared to the JIT for those whose registers would allow fewer
/// (`reduction::dispatch::column_blocks_per_sm`: the variance of `f32`, 70
/// registers alone, 64 declared; 1 GiB matrices along their columns, an
/// H200 17-21% faster, an H100 3-6%). Where the card holds
/// fewer of an entry's blocks and the grid would run a second wave of them
/// and no third (`reduction::dispatch::second_wave`: three an SM, or the
/// half types' variance, two), it aims at half as many.
pub const COLUMN_BLOCKS_PER_SM: u32 = 4;

/// Shared memory a block of `segments_staged` needs: a warp's stages.
pub const fn staged_smem() -> u32 {
    SHAPE_WARPS * STAGE_WARP_BYTES
}

/// 16-byte vectors a stage of each of `inputs` inputs holds.
pub const fn stage_vectors(inputs: u32) -> u32 {
    STAGE_WARP_BYTES / 16 / inputs
}

/// Whether elements `begin..end` (of `width` a 16-byte vector, counted from
/// a 16-byte boundary: the start of the piece's tile) lie in one stage of
/// `segments_staged` for `inputs` inputs: their vectors, from the one
/// holding `begin` to the one holding `end - 1`, are at most
/// [`stage_vectors`]. A piece that does not fit alone is read by the whole
/// warp. In 32 bits, as the kernel counts a round's positions.
///
/// ```
/// use gpu::shape::fits_stage;
/// assert!(fits_stage(0, 1024, 4, 1) && !fits_stage(1, 1025, 4, 1)); // 256 vectors of f32; 257
/// assert!(fits_stage(0, 512, 4, 2) && !fits_stage(1, 513, 4, 2)); // a dot product's 128; 129
/// assert!(fits_stage(7, 7, 4, 1)); // an empty piece
/// ```
pub const fn fits_stage(begin: u32, end: u32, width: u32, inputs: u32) -> bool {
    end.div_ceil(width) - begin / width <= stage_vectors(inputs)
}

/// Whether `segments_staged` has, for an operation of `inputs` inputs and
/// accumulators of `acc_bytes`, the form whose lanes take a second
/// segment (`cur + 32 + lane`) while its rounds fill their 32 lanes, so a
/// round stages up to 64 short segments: one input and accumulators of at
/// most 4 bytes. Heavier operations would spill the second segment's
/// state (two segments a lane for every operation, H200: the bf16
/// variance over Zipf's lengths 924 → 1078 µs). The entries
/// `segments_paired_*` have that form where this holds
/// ([`crate::names::paired_form`]), and the host chooses them for short
/// segments (`reduction::dispatch::paired_segments`).
///
/// ```
/// use gpu::shape::staged_pairs;
/// assert!(staged_pairs(1, 4) && !staged_pairs(2, 4) && !staged_pairs(1, 8));
/// ```
pub const fn staged_pairs(inputs: u32, acc_bytes: usize) -> bool {
    inputs == 1 && acc_bytes <= 4
}

/// The longest piece of a stage one lane of `segments_staged` folds alone,
/// in order; the warp folds a longer one together (lane `l` the elements
/// `l, l + 32, ...` of it, then the warp's tree), so a round never waits
/// on one lane's long loop, while the warp takes the longer pieces one
/// after the other. 64 against 32: Zipf's lengths (2^28 `f32` on an H200)
/// 414 → 407 µs, their `bf16` variance 959 → 922, with fewer of those
/// turns; 16 made lengths uniform in 0..32 2.5 times as slow, 96 and 128
/// gave Zipf's less (`docs/src/performance/tuning-shapes.md`, a lane's pieces up
/// to 64 elements).
pub const STAGE_LANE_ELEMENTS: u64 = 64;

/// What the automatic choices of this module take from the GPU: the host
/// fills it from the driver's numbers (`reduction::Tuning`), and the
/// `gpu_to_gpu` orders use [`Fit::PORTABLE`] on every GPU, so that their
/// bits do not depend on the card.
///
/// ```
/// use gpu::shape::Fit;
/// // an H100 or H200: 132 SMs of 64 warps
/// assert_eq!(Fit::of(132, 64, 8), Fit { min_warps: 16384, column_blocks: 512, vectors_per_lane: 8 });
/// assert_eq!(Fit::of(108, 64, 8).column_blocks, 256); // an A100
/// assert_eq!(Fit::PORTABLE, Fit::of(132, 64, 8));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// Warps the automatic tile size keeps busy at least (while tiles stay
    /// at least [`MIN_TILE_BYTES`]): about two rounds of the warps resident
    /// on the GPU, so the last round of tiles is not one SM's lonely tail.
    pub min_warps: u64,
    /// Blocks the automatic column choice aims at: about four per SM.
    /// Fewer leave memory idle; more, each with fewer rows, pay the
    /// combining step more often and read shorter runs of each column.
    pub column_blocks: u64,
    /// 16-byte vectors a lane the automatic team size aims at
    /// ([`team_lanes`]).
    pub vectors_per_lane: u32,
}

impl Fit {
    /// The fit of an H100 or H200 (132 SMs of 64 warps, eight vectors a
    /// lane), where every automatic choice was measured: the one the
    /// `gpu_to_gpu` orders are defined with.
    pub const PORTABLE: Fit = Fit::of(132, 64, 8);

    /// The fit of a GPU with `sms` SMs of `warps_per_sm` resident warps
    /// each: two rounds of its warps and [`COLUMN_BLOCKS_PER_SM`] blocks an
    /// SM, each rounded down to a power of two (16384 and 512 on 132 SMs of
    /// 64 warps).
    pub const fn of(sms: u64, warps_per_sm: u64, vectors_per_lane: u32) -> Fit {
        Fit {
            min_warps: pow2_at_or_below(2 * sms * warps_per_sm),
            column_blocks: pow2_at_or_below(COLUMN_BLOCKS_PER_SM as u64 * sms),
            vectors_per_lane,
        }
    }
}

/// The automatic warp tile for `count` segments over `n` elements of `size`
/// bytes: the average segment's bytes rounded up to a power of two, so a
/// row fits one tile and needs no combining step, but no larger than the
/// power of two nearest the input's bytes over `min_warps` warps
/// ([`Fit::min_warps`]), within `MIN_TILE_BYTES..=MAX_TILE_BYTES`.
/// (Measured on an H200 at 1 GiB, every tile size:
/// `docs/src/guide/shapes.md`. The nearest, not the one below: 0.98 GiB of
/// log-uniform segment lengths read 2.6% faster in 64 KiB tiles than in
/// 32, `docs/src/performance/tuning-shapes.md`.)
///
/// ```
/// use gpu::shape::tile_bytes;
/// let w = gpu::shape::Fit::PORTABLE.min_warps;
/// assert_eq!(tile_bytes(1 << 28, 1 << 24, 4, w), 16 * 1024); // rows of 16 f32
/// assert_eq!(tile_bytes(1 << 28, 1 << 14, 4, w), 64 * 1024); // rows of 16384 f32: a row a tile
/// assert_eq!(tile_bytes(1 << 28, 1, 4, w), 64 * 1024); // one row of 1 GiB: 16384 warps
/// assert_eq!(tile_bytes(1 << 28, 1, 4, w / 2), 128 * 1024); // on half the warps
/// assert_eq!(tile_bytes(250_000_000, 1, 4, w), 64 * 1024); // 0.93 GiB: 61035 bytes a warp, nearer 64 KiB
/// assert_eq!(tile_bytes(180_000_000, 1, 4, w), 32 * 1024); // 0.67 GiB: 43945 bytes a warp
/// assert_eq!(tile_bytes(1 << 20, 1, 4, w), 16 * 1024); // 4 MiB: the smallest tiles
/// assert_eq!(tile_bytes(0, 0, 4, w), 16 * 1024);
/// ```
pub const fn tile_bytes(n: u64, count: u64, size: usize, min_warps: u64) -> u64 {
    let total = n.saturating_mul(size as u64);
    let average = match total.checked_div(count) {
        Some(a) => a,
        None => total,
    };
    let fill = pow2_nearest(per_warp(total, min_warps));
    within_tiles(if average.next_power_of_two() < fill { average.next_power_of_two() } else { fill })
}

/// The warp tile for `n` elements of `size` bytes that keeps `warps` warps
/// busy, whatever the segments: the largest power of two that makes
/// `warps` tiles, within `MIN_TILE_BYTES..=MAX_TILE_BYTES` (the host's
/// choice for segments of even lengths).
///
/// ```
/// use gpu::shape::filling_tile_bytes;
/// assert_eq!(filling_tile_bytes(1 << 28, 4, 4096), 256 * 1024); // 1 GiB on 4096 warps
/// assert_eq!(filling_tile_bytes(1 << 26, 4, 4096), 64 * 1024);
/// assert_eq!(filling_tile_bytes(1 << 20, 4, 4096), 16 * 1024);
/// assert_eq!(filling_tile_bytes(1 << 40, 4, 0), 256 * 1024);
/// ```
pub const fn filling_tile_bytes(n: u64, size: usize, warps: u64) -> u64 {
    within_tiles(pow2_at_or_below(per_warp(n.saturating_mul(size as u64), warps)))
}

/// `total` bytes over `warps` warps (all of them for 0 warps).
const fn per_warp(total: u64, warps: u64) -> u64 {
    total / if warps == 0 { 1 } else { warps }
}

/// The power of two nearest `x`: the one at or below it, or twice that
/// from one and a half times it (1 for 0).
const fn pow2_nearest(x: u64) -> u64 {
    let p = pow2_at_or_below(x);
    if x >= p + p / 2 { p.saturating_mul(2) } else { p }
}

/// `t` within `MIN_TILE_BYTES..=MAX_TILE_BYTES`.
const fn within_tiles(t: u64) -> u64 {
    if t < MIN_TILE_BYTES {
        MIN_TILE_BYTES
    } else if t > MAX_TILE_BYTES {
        MAX_TILE_BYTES
    } else {
        t
    }
}

/// The power of two at or below `x` (1 for 0).
const fn pow2_at_or_below(x: u64) -> u64 {
    if x == 0 { 1 } else { 1 << (63 - x.leading_zeros()) }
}

/// Warp tiles of `tile` elements (a power of two, as every tile the
/// planner makes) over `n` elements: at least one, so that empty segments
/// are written too.
///
/// ```
/// assert_eq!(gpu::shape::tiles(0, 4096), 1);
/// assert_eq!(gpu::shape::tiles(4097, 4096), 2);
/// ```
pub const fn tiles(n: u64, tile: u64) -> u64 {
    let t = (n >> tile.trailing_zeros()) + (n & tile.wrapping_sub(1) != 0) as u64;
    if t == 0 { 1 } else { t }
}

/// The tile (of `tile` elements, a power of two) that holds element `i`:
/// a shift, not a division (a 64-bit division is a long subroutine on the
/// GPU).
pub const fn tile_of(i: u64, tile: u64) -> u64 {
    i >> tile.trailing_zeros()
}

/// Lanes per team when a tile holds `segments` segments (or pieces) over
/// `elements` elements of `size` bytes: about `vectors_per_lane` 16-byte
/// vectors a lane ([`Fit::vectors_per_lane`]), a power of two from 1 to
/// 32. The kernels choose it per tile unless the caller fixes it
/// ([`lanes_for`]). (Measured at every team size on rows of 16 to 65536
/// f32: eight vectors a lane on an H200, four on an H100: `docs/src/guide/shapes.md`.)
///
/// ```
/// use gpu::shape::team_lanes;
/// assert_eq!(team_lanes(4096, 256, 4, 8), 1); // rows of 16 f32: a lane a row
/// assert_eq!(team_lanes(4096, 64, 4, 8), 2); // rows of 64 f32
/// assert_eq!(team_lanes(4096, 16, 4, 8), 8); // rows of 256 f32
/// assert_eq!(team_lanes(4096, 16, 4, 4), 16); // ... four vectors a lane
/// assert_eq!(team_lanes(4096, 1, 4, 8), 32); // inside one long row: the warp
/// assert_eq!(team_lanes(0, 0, 4, 8), 32);
/// ```
pub const fn team_lanes(elements: u64, segments: u64, size: usize, vectors_per_lane: u32) -> u32 {
    if segments == 0 {
        return 32;
    }
    let vectors = elements / segments * size as u64 / 16;
    let lanes = vectors / if vectors_per_lane == 0 { 1 } else { vectors_per_lane as u64 };
    if lanes >= 32 {
        32
    } else if lanes <= 1 {
        1
    } else {
        pow2_at_or_below(lanes) as u32
    }
}

/// Marks the `lanes` argument of the rows and segments kernels as
/// automatic: `AUTO_LANES | v` chooses the team per tile for about `v`
/// vectors a lane ([`lanes_for`]); 1 to 32 fix it.
pub const AUTO_LANES: u32 = 1 << 8;

/// The team of a tile for the kernels' `lanes` argument: the fixed team
/// it names, or, with [`AUTO_LANES`], [`team_lanes`] of the tile.
///
/// ```
/// use gpu::shape::{AUTO_LANES, lanes_for};
/// assert_eq!(lanes_for(AUTO_LANES | 8, 4096, 16, 4), 8); // rows of 256 f32
/// assert_eq!(lanes_for(AUTO_LANES | 4, 4096, 16, 4), 16);
/// assert_eq!(lanes_for(2, 4096, 16, 4), 2);
/// ```
pub const fn lanes_for(lanes: u32, elements: u64, segments: u64, size: usize) -> u32 {
    if lanes & AUTO_LANES != 0 { team_lanes(elements, segments, size, lanes & !AUTO_LANES) } else { lanes }
}

/// The lanes that read one segment's piece of `len` elements of `size`
/// bytes in a tile whose team is `team` ([`lanes_for`]): the team, or,
/// when the team is chosen per tile ([`AUTO_LANES`] `| v`), the whole warp
/// for a piece of more than `2·v` vectors a team lane. A team picked for
/// the tile's average reads at most `2·v` a lane of a segment of about that
/// length, so rows never change; but one long piece among short ones (a
/// heavy-tailed length law) would keep its team reading long after the
/// warp's other teams are done. Such pieces wait for the round's end and
/// the warp reads them one at a time, all 32 lanes (`kernels/segments.rs`).
///
/// ```
/// use gpu::shape::{AUTO_LANES, piece_lanes};
/// assert_eq!(piece_lanes(AUTO_LANES | 8, 4, 256, 4), 4); // 64 vectors: the team's
/// assert_eq!(piece_lanes(AUTO_LANES | 8, 4, 260, 4), 32); // 65: the warp's
/// assert_eq!(piece_lanes(4, 4, 100_000, 4), 4); // a team fixed by the caller
/// ```
pub const fn piece_lanes(lanes: u32, team: u32, len: u64, size: usize) -> u32 {
    let v = (lanes & !AUTO_LANES) as u64;
    if lanes & AUTO_LANES != 0 && len * size as u64 / 16 > 2 * v * team as u64 { 32 } else { team }
}

/// Rows short enough for `rows_short`, whose blocks read their tile
/// contiguously, a row in neighbouring lanes of one load: the
/// number of 16-byte vectors in a row (1, 2, 4, 8, 16 or 32) when rows of
/// `cols` elements of `size` bytes lie back to back (`pitch == cols`), each
/// a whole power of two of vectors up to 512 bytes, the inputs 16-byte
/// aligned (`aligned`) and the team size automatic (`lanes == 0`); else 0.
/// Such a row never crosses a tile (tiles are larger powers of two).
///
/// ```
/// use gpu::shape::short_row_vectors;
/// assert_eq!(short_row_vectors(16, 16, 4, 0, true), 4); // rows of 16 f32
/// assert_eq!(short_row_vectors(16, 16, 2, 0, true), 2); // of 16 bf16
/// assert_eq!(short_row_vectors(16, 17, 4, 0, true), 0); // a pitch
/// assert_eq!(short_row_vectors(12, 12, 4, 0, true), 0); // 3 vectors
/// assert_eq!(short_row_vectors(256, 256, 4, 0, true), 0); // 1 KiB
/// assert_eq!(short_row_vectors(16, 16, 4, 1, true), 0); // teams fixed
/// ```
pub const fn short_row_vectors(cols: u64, pitch: u64, size: usize, lanes: u32, aligned: bool) -> u32 {
    let bytes = cols * size as u64;
    if pitch != cols || lanes != 0 || !aligned || bytes == 0 || !bytes.is_multiple_of(16) {
        return 0;
    }
    let v = bytes / 16;
    if v.is_power_of_two() && v <= 32 { v as u32 } else { 0 }
}

/// Rows whose tiles of `tile` elements (a power of two) each lie inside
/// one row: rows back to back (`pitch == cols`), `cols` a whole number of
/// tiles, teams of the whole warp (`lanes` 0 or 32). Every tile is then one
/// piece of one row, folded by a block (`rows_long`).
///
/// ```
/// use gpu::shape::long_rows;
/// assert!(long_rows(16384, 16384, 16384, 0)); // a row a tile
/// assert!(long_rows(65536, 65536, 16384, 32)); // four tiles a row
/// assert!(!long_rows(65536, 65537, 16384, 0) && !long_rows(1000, 1000, 4096, 0));
/// ```
pub const fn long_rows(cols: u64, pitch: u64, tile: u64, lanes: u32) -> bool {
    pitch == cols && tile.is_power_of_two() && cols >= tile && cols.is_multiple_of(tile) && (lanes == 0 || lanes == 32)
}

/// Where segment `s` lies: `offsets[s]..offsets[s+1]` when `offsets` is not
/// null, else row `s` of a matrix, `s·pitch..s·pitch + cols`.
#[derive(Clone, Copy, Debug)]
pub struct Segments {
    /// CSR offsets (`count + 1` of them), or null for rows.
    pub offsets: *const u64,
    /// How many segments.
    pub count: u64,
    /// Row length (rows only).
    pub cols: u64,
    /// Elements from one row's start to the next (rows only).
    pub pitch: u64,
    /// The offsets' index over `n` elements ([`Segments::index_entries`]),
    /// or null (rows): `index_len(n)` entries
    /// `reaching`, then as many `starting`. `reaching[g]` is the first
    /// segment that [reaches](Segments::reaches) element
    /// `g·INDEX_GRANULE`, `starting[g]` the first that
    /// [starts from](Segments::starts_from) it. After them, as the host
    /// lays them out, the tiles' schedule ([`Segments::scheduled`]).
    pub index: *const u64,
}

/// The smallest tile of the offsets' schedule ([`Segments::scheduled`]):
/// 64 KiB of the widest type, `segments_long`'s smallest automatic tile.
pub const SCHEDULE_MIN_TILE: u64 = 4 * INDEX_GRANULE;

/// The tiles the offsets' schedule covers over `n` elements: from
/// [`SCHEDULE_MIN_TILE`], each twice the one before, up to the first that
/// makes one tile.
///
/// ```
/// use gpu::shape::{SCHEDULE_MIN_TILE as m, schedule_tiles};
/// assert_eq!(schedule_tiles(3 * m).collect::<Vec<_>>(), [m, 2 * m, 4 * m]);
/// assert_eq!(schedule_tiles(m).collect::<Vec<_>>(), [m]);
/// ```
pub fn schedule_tiles(n: u64) -> impl Iterator<Item = u64> {
    core::iter::successors(Some(SCHEDULE_MIN_TILE), move |&t| if tiles(n, t) > 1 { Some(t << 1) } else { None })
}

/// Where the schedule of tiles of `tile` elements over `n` starts, in
/// entries from the schedule's start (the tiles of every smaller size
/// before it, [`schedule_tiles`]); `None` for a tile it does not cover
/// (host only: the host passes it to the kernel).
///
/// ```
/// use gpu::shape::{SCHEDULE_MIN_TILE as m, schedule_at};
/// assert_eq!([schedule_at(3 * m, m), schedule_at(3 * m, 2 * m), schedule_at(3 * m, 4 * m)], [Some(0), Some(3), Some(5)]);
/// assert_eq!([schedule_at(3 * m, 8 * m), schedule_at(3 * m, m / 2), schedule_at(3 * m, 3 * m)], [None; 3]);
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn schedule_at(n: u64, tile: u64) -> Option<u64> {
    let mut at = 0;
    for t in schedule_tiles(n) {
        if t == tile {
            return Some(at);
        }
        at += tiles(n, t);
    }
    None
}

/// Elements between two entries of the offsets' index
/// ([`Segments::index`]): 16 KiB of the widest element, so that every
/// tile the planner makes (a power of two of at least [`MIN_TILE_BYTES`])
/// is a whole number of granules.
pub const INDEX_GRANULE: u64 = MIN_TILE_BYTES / 8;

/// Entries in each of the index's two arrays over `n` elements: one for
/// every granule boundary `g·INDEX_GRANULE` up to the first at or past `n`.
///
/// ```
/// use gpu::shape::{INDEX_GRANULE, index_len};
/// assert_eq!((index_len(0), index_len(1), index_len(INDEX_GRANULE), index_len(INDEX_GRANULE + 1)), (1, 2, 2, 3));
/// ```
pub const fn index_len(n: u64) -> u64 {
    n.div_ceil(INDEX_GRANULE) + 1
}

/// The first `s` in `lo..=hi` for which `pred` holds, for a `pred` that
/// is false and then true, and true at `hi`: a binary search.
fn first_where(mut lo: u64, mut hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) { hi = mid } else { lo = mid + 1 }
    }
    lo
}

impl Segments {
    /// Rows of a matrix: row `s` is `s·pitch..s·pitch + cols`.
    pub const fn rows(count: u64, cols: u64, pitch: u64) -> Segments {
        Segments { offsets: core::ptr::null(), count, cols, pitch, index: core::ptr::null() }
    }

    /// CSR segments: `offsets` holds `count + 1` offsets, `index` their
    /// index ([`Segments::index`]; null where none is needed).
    pub const fn csr(offsets: *const u64, count: u64, index: *const u64) -> Segments {
        Segments { offsets, count, cols: 0, pitch: 0, index }
    }

    /// The segments of a shaped entry's parameters: rows where `offsets`
    /// is null, else CSR whose `count + 1` offsets are followed by their
    /// index, as the host lays them out.
    pub const fn of_entry(offsets: *const u64, count: u64, cols: u64, pitch: u64) -> Segments {
        if offsets.is_null() {
            return Segments::rows(count, cols, pitch);
        }
        Segments::csr(offsets, count, offsets.wrapping_add(count as usize + 1))
    }

    /// The index of these CSR segments over `n` elements
    /// ([`Segments::index`]): `reaching` for every granule boundary, then
    /// `starting`. The host lays it out after the offsets; a kernel's warp
    /// reads two of its entries where it would search the offsets.
    ///
    /// # Safety
    /// As for [`Segments::bounds`].
    pub unsafe fn index_entries(self, n: u64) -> impl Iterator<Item = u64> {
        let at = |g: u64| g * INDEX_GRANULE;
        // SAFETY: the caller's; `first_where` asks for s ≤ count only
        let reaching =
            (0..index_len(n)).map(move |g| first_where(0, self.count, |s| unsafe { self.reaches(s, at(g)) }));
        let starting =
            (0..index_len(n)).map(move |g| first_where(0, self.count, |s| unsafe { self.starts_from(s, at(g)) }));
        reaching.chain(starting)
    }

    /// Entry `e` of the offsets' schedule over `n` elements: a tile. For
    /// each tile size it covers ([`schedule_tiles`]; that size's first
    /// entry [`schedule_at`]) the host lays out every tile, those with the
    /// most segments ([`Segments::tile_range`]) first: a block of
    /// `segments_long` reduces each of a tile's segments in turn, so those
    /// tiles cost the most, and started first they no longer end a launch.
    ///
    /// # Safety
    /// `index` that of these CSR offsets over `n` elements followed by
    /// their schedule, as the host lays them out; `e` within it.
    #[inline(always)]
    pub unsafe fn scheduled(&self, e: u64, n: u64) -> u32 {
        // SAFETY: the caller's; the schedule's entries are `u32`s, two a word
        unsafe { *(self.index.add(2 * index_len(n) as usize) as *const u32).add(e as usize) }
    }

    /// Tile `t` of `count_tiles` tiles of `tile` elements over `n`, as
    /// `(w0, w1, lo, hi)`: its elements `w0..w1` (the last tile's `w1` may
    /// pass `n`) and the segments `lo..hi` that overlap it (the last tile
    /// takes every segment left). Rows by arithmetic; CSR segments by two
    /// entries of their index, which the kernels read where they would
    /// search the offsets (⌈log16 count⌉ loads one after another, for a
    /// warp that probes 16 points a round), and the CPU twin too.
    ///
    /// # Safety
    /// As for [`Segments::bounds`]; for CSR segments, `index` that of
    /// these offsets over `n` elements, and `tile` a whole number of
    /// granules (as every tile the planner makes).
    #[inline(always)]
    pub unsafe fn tile_range(&self, t: u64, tile: u64, count_tiles: u64, n: u64) -> (u64, u64, u64, u64) {
        let (w0, w1, last) = (t * tile, (t + 1) * tile, t + 1 == count_tiles);
        let (lo, from_w1) = if self.offsets.is_null() {
            (self.first_row_reaching(w0), self.first_row_from(w1))
        } else {
            // w0 is granule t·k, and w1 = (t + 1)·k < n for every tile but the last
            let k = tile / INDEX_GRANULE;
            // SAFETY: the caller's index holds `index_len(n)` entries of each array
            unsafe {
                let starting = self.index.add(index_len(n) as usize);
                (*self.index.add((t * k) as usize), if last { 0 } else { *starting.add(((t + 1) * k) as usize) })
            }
        };
        (w0, w1, lo, if last { self.count } else { lo.max(from_w1) })
    }

    /// The first row that [reaches](Segments::reaches) element `w0`: of
    /// rows of at least one element (a row's pitch is at least its length),
    /// the first that ends past it, the first `s` with `s·pitch > w0 −
    /// cols`; of empty rows, the first starting at or after it; `count` if
    /// none. One 64-bit division.
    #[inline(always)]
    const fn first_row_reaching(&self, w0: u64) -> u64 {
        match (self.cols, w0) {
            (0, _) => self.first_row_from(w0),
            (c, w0) if w0 < c => 0,
            (c, w0) => self.first_row_above(w0 - c),
        }
    }

    /// The first row starting at or after element `w1`; `count` if none.
    #[inline(always)]
    const fn first_row_from(&self, w1: u64) -> u64 {
        match w1 {
            0 => 0,
            w1 => self.first_row_above(w1 - 1),
        }
    }

    /// The first row `s` with `s·pitch > x`, at most `count`.
    #[inline(always)]
    const fn first_row_above(&self, x: u64) -> u64 {
        match x.checked_div(self.pitch) {
            Some(q) if q < self.count => q + 1,
            _ => self.count,
        }
    }

    /// Segment `s` (`s < count`) as `(begin, end)`.
    ///
    /// # Safety
    /// For CSR segments `offsets` must hold `count + 1` values.
    #[inline(always)]
    pub unsafe fn bounds(&self, s: u64) -> (u64, u64) {
        if self.offsets.is_null() {
            (s * self.pitch, s * self.pitch + self.cols)
        } else {
            // SAFETY: s + 1 ≤ count, within the caller's offsets.
            unsafe { (*self.offsets.add(s as usize), *self.offsets.add(s as usize + 1)) }
        }
    }

    /// Whether segment `s` is at or past the start `w0` of a tile: it
    /// ends after `w0`, or it is empty and starts at or after it. True
    /// for `s == count`. Monotone in `s`, so the first segment a tile
    /// sees is found by a search (made once a granule, on the host:
    /// [`Segments::index_entries`]).
    ///
    /// # Safety
    /// As for [`Segments::bounds`].
    #[inline(always)]
    pub unsafe fn reaches(&self, s: u64, w0: u64) -> bool {
        if s >= self.count {
            return true;
        }
        // SAFETY: s < count.
        let (b, e) = unsafe { self.bounds(s) };
        e > w0 || b >= w0
    }

    /// Whether segment `s` starts at or after `w1` (the end of a tile):
    /// true for `s == count`.
    ///
    /// # Safety
    /// As for [`Segments::bounds`].
    #[inline(always)]
    pub unsafe fn starts_from(&self, s: u64, w1: u64) -> bool {
        // SAFETY: s < count.
        s >= self.count || unsafe { self.bounds(s).0 } >= w1
    }
}

/// The tile (of `tile` elements) of a non-empty segment `begin..end`'s
/// first and last element: the segment is written at once when they are
/// equal, else through a partial per tile.
pub const fn tile_span(begin: u64, end: u64, tile: u64) -> (u64, u64) {
    (tile_of(begin, tile), tile_of(end - 1, tile))
}

/// Where the partial of a segment piece goes: each tile has two slots, the
/// piece of the segment that runs past its end (`2t + 1`) and the piece of
/// the segment that started before it and ends in it (`2t`).
pub const fn piece_slot(tile: u64, runs_past: bool) -> u64 {
    2 * tile + runs_past as u64
}

/// How a column reduction is laid out (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    /// Columns per thread: a 16-byte vector's lanes, or 1.
    pub width: u32,
    /// Threads across a column tile (a power of two).
    pub unit_lanes: u32,
    /// Threads down the rows: `SHAPE_BLOCK / unit_lanes`.
    pub row_lanes: u32,
    /// Column tiles: `ceil(cols / (width · unit_lanes))`.
    pub col_tiles: u64,
}

impl Columns {
    /// The layout for `cols` columns of elements with `lanes` elements per
    /// 16-byte vector, `wide` x (8 vectors or 32 elements) across a tile
    /// (`wide` 1, 2, 4, 8 or 16; anything else counts as 1), at most 128
    /// threads across (two row lanes at least); `vector` when every row
    /// starts 16-byte-aligned and `cols` is a multiple of `lanes`.
    ///
    /// ```
    /// use gpu::shape::Columns;
    /// let c = Columns::new(16, 4, true, 1); // 16 f32 columns: 4 vectors
    /// assert_eq!((c.width, c.unit_lanes, c.row_lanes, c.col_tiles), (4, 4, 64, 1));
    /// let c = Columns::new(1000, 4, false, 1); // one element a thread, 32 across
    /// assert_eq!((c.width, c.unit_lanes, c.row_lanes, c.col_tiles), (1, 32, 8, 32));
    /// let c = Columns::new(1 << 20, 4, true, 4); // 512 bytes of each row a tile
    /// assert_eq!((c.width, c.unit_lanes, c.row_lanes, c.col_tiles), (4, 32, 8, 8192));
    /// let c = Columns::new(1 << 20, 4, true, 8); // 1 KiB: 256 columns, 4 row lanes
    /// assert_eq!((c.width, c.unit_lanes, c.row_lanes, c.col_tiles), (4, 64, 4, 4096));
    /// let c = Columns::new(1 << 20, 4, true, 16); // 2 KiB: 512 columns, 2 row lanes
    /// assert_eq!((c.width, c.unit_lanes, c.row_lanes, c.col_tiles), (4, 128, 2, 2048));
    /// ```
    pub const fn new(cols: u64, lanes: u32, vector: bool, wide: u32) -> Columns {
        let width = if vector && lanes > 0 { lanes } else { 1 };
        let units = cols.div_ceil(width as u64);
        let wide = if wide == 2 || wide == 4 || wide == 8 || wide == 16 { wide } else { 1 };
        // 8 vectors or 32 elements across (128 bytes of f32 per row), times
        // `wide`, within 128 threads
        let most: u32 = if vector { 8 * wide } else { 32 * wide };
        let most = if most > 128 { 128 } else { most };
        // a power of two from 1 to `most` (at most 128 < SHAPE_BLOCK), as a
        // shift so the kernels' divisions by it need no zero check
        let want = if units >= most as u64 { most as u64 } else { units };
        let shift = if want <= 1 { 0 } else { 64 - (want - 1).leading_zeros() };
        let unit_lanes = 1u32 << shift;
        Columns {
            width,
            unit_lanes,
            row_lanes: SHAPE_BLOCK >> shift,
            col_tiles: (units + unit_lanes as u64 - 1) >> shift,
        }
    }

    /// Whether a block's row lanes meet as a tree (lane `r` taking in lane
    /// `r + row_lanes/2`, then `r + row_lanes/4`, ...) rather than in a
    /// chain from lane 0's part, for an operation whose merge is `costly`
    /// (`Reduction::COLUMN_TREE`: the variance's in `f64`, logsumexp's with
    /// its exponentials): where there are [`TREE_ROW_LANES`] or more, and
    /// the thread holds eight columns (a half type's 16-byte vector). A
    /// thread of each column merges the row lanes' parts one after the
    /// other while the rest of the block waits, and in a grid of one wave
    /// every block's chain comes at its end, the memory idle: 127 merges
    /// for 16 columns of a half type. The tree's code costs the `f32`
    /// variance's kernel, held to 64 registers, three times the spills
    /// (24 → 72 bytes), and the other operations' merges are cheap.
    ///
    /// ```
    /// use gpu::shape::Columns;
    /// assert!(Columns::new(16, 8, true, 1).row_tree(true)); // 16 bf16 columns: 128 row lanes
    /// assert!(!Columns::new(16, 8, true, 1).row_tree(false)); // a sum
    /// assert!(!Columns::new(8, 4, true, 1).row_tree(true)); // 8 f32 columns
    /// assert!(!Columns::new(64, 8, true, 1).row_tree(true)); // 64 bf16 columns: 32 row lanes
    /// ```
    pub const fn row_tree(&self, costly: bool) -> bool {
        costly && self.width >= 8 && self.row_lanes >= TREE_ROW_LANES
    }

    /// Columns per column tile.
    pub const fn tile_cols(&self) -> u64 {
        (self.width * self.unit_lanes) as u64
    }

    /// The automatic tile width: the widest of 16, 8, 4 and 2, up to
    /// `most`, that still gives `blocks` column tiles
    /// ([`Fit::column_blocks`]), else 1. (Measured on an H200 at 1 GiB,
    /// every width and chunk count: `docs/src/guide/shapes.md`.)
    ///
    /// ```
    /// use gpu::shape::Columns;
    /// assert_eq!(Columns::auto_wide(16384, 4, true, 512, 16), 1); // 512 tiles of 32 columns
    /// assert_eq!(Columns::auto_wide(65536, 4, true, 512, 16), 4); // 512 tiles of 128 columns
    /// assert_eq!(Columns::auto_wide(1 << 20, 4, true, 512, 16), 16); // 2048 tiles of 512 columns
    /// assert_eq!(Columns::auto_wide(1 << 20, 4, true, 512, 4), 4);
    /// assert_eq!(Columns::auto_wide(16, 4, true, 512, 16), 1);
    /// ```
    pub const fn auto_wide(cols: u64, lanes: u32, vector: bool, blocks: u64, most: u32) -> u32 {
        let mut wide = 16;
        while wide > 1 && (wide > most || Columns::new(cols, lanes, vector, wide).col_tiles < blocks) {
            wide /= 2;
        }
        wide
    }

    /// The automatic number of row chunks for `rows` rows in `col_tiles`
    /// column tiles: enough for `blocks` blocks ([`Fit::column_blocks`]),
    /// each with at least 64 rows.
    ///
    /// ```
    /// use gpu::shape::Columns;
    /// assert_eq!(Columns::auto_chunks(16384, 512, 512), 1);
    /// assert_eq!(Columns::auto_chunks(1 << 20, 8, 512), 64);
    /// assert_eq!(Columns::auto_chunks(1 << 24, 1, 512), 512);
    /// assert_eq!(Columns::auto_chunks(1 << 24, 1, 256), 256);
    /// assert_eq!(Columns::auto_chunks(100, 1, 512), 1);
    /// ```
    pub const fn auto_chunks(rows: u64, col_tiles: u64, blocks: u64) -> u32 {
        let want = blocks.div_ceil(if col_tiles == 0 { 1 } else { col_tiles });
        let most = rows / 64;
        let c = if want < most { want } else { most };
        if c < 1 { 1 } else { c as u32 }
    }

    /// Rows per chunk when `rows` are shared by `chunks` blocks.
    pub const fn chunk_rows(rows: u64, chunks: u32) -> u64 {
        let c = rows.div_ceil(if chunks == 0 { 1 } else { chunks as u64 });
        if c == 0 { 1 } else { c }
    }
}

/// Whether a column reduction reads 16-byte units: the inputs at `a` (and
/// `b`, for two) are 16-byte aligned, and so is every row (`pitch` elements
/// of `size` bytes apart), and `cols` is a whole number of vectors.
///
/// ```
/// assert!(gpu::shape::vector_columns(256, 0, 1, 16, 16, 4));
/// assert!(!gpu::shape::vector_columns(256, 0, 1, 17, 16, 4));
/// ```
pub const fn vector_columns(a: u64, b: u64, inputs: u32, pitch: u64, cols: u64, size: usize) -> bool {
    let lanes = 16 / size as u64;
    a.is_multiple_of(16)
        && (inputs == 1 || b.is_multiple_of(16))
        && (pitch * size as u64).is_multiple_of(16)
        && cols.is_multiple_of(lanes)
}

/// Shared memory a column block needs: one accumulator of `acc_bytes` per
/// thread and column it holds, then the "last block" flag.
pub const fn columns_smem(width: u32, acc_bytes: usize) -> u32 {
    SHAPE_BLOCK * width * acc_bytes as u32 + 16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first `s` in `0..=count` with `pred(s)`, by a plain scan.
    fn first(count: u64, pred: impl Fn(u64) -> bool) -> u64 {
        (0..=count).find(|&s| pred(s)).unwrap()
    }

    /// Every non-empty segment is seen by exactly the tiles its elements
    /// lie in, every empty one by exactly one tile, and the pieces' slots
    /// never collide.
    #[test]
    fn tiles_see_every_segment_once_or_piecewise() {
        let size = 4;
        let te = MIN_TILE_BYTES / size as u64;
        let offsets: Vec<u64> = vec![0, 0, 3, 3, te - 1, te + 5, 3 * te, 3 * te, 3 * te + 1, 3 * te + 1];
        let n = 3 * te + 1;
        let segs = Segments::csr(offsets.as_ptr(), offsets.len() as u64 - 1, core::ptr::null());
        let mut seen = vec![Vec::new(); segs.count as usize];
        let mut slots = std::collections::HashSet::new();
        for t in 0..tiles(n, te) {
            let (_, w1, lo, hi) = scanned(segs, t, te, tiles(n, te));
            for s in lo..hi {
                seen[s as usize].push(t);
                let (b, e) = unsafe { segs.bounds(s) };
                if b < e && tile_span(b, e, te).0 != tile_span(b, e, te).1 {
                    assert!(slots.insert(piece_slot(t, e > w1)), "slot of tile {t} taken twice");
                }
            }
        }
        for s in 0..segs.count {
            let (b, e) = unsafe { segs.bounds(s) };
            let want: Vec<u64> = if b == e {
                vec![tile_of(b, te).min(tiles(n, te) - 1)]
            } else {
                let (t0, t1) = tile_span(b, e, te);
                (t0..=t1).collect()
            };
            assert_eq!(seen[s as usize], want, "segment {s} = {b}..{e}");
        }
    }

    /// A tile's segments by the index, laid out as the host lays it, are
    /// those of a plain scan, for tiles of one
    /// to eight granules over segments with empty ones on the granules'
    /// boundaries, a long one and a ragged end.
    #[test]
    fn the_index_finds_each_tiles_segments() {
        let g = INDEX_GRANULE;
        let lengths = [0, 3, g - 3, 0, 0, g, 5 * g + 7, 1, 0, 2 * g - 8, 0, 3, g + 1, 0];
        let mut offsets = vec![0u64];
        for l in lengths {
            offsets.push(offsets[offsets.len() - 1] + l);
        }
        let (count, n) = (lengths.len() as u64, offsets[lengths.len()]);
        let plain = Segments::csr(offsets.as_ptr(), count, core::ptr::null());
        let laid_out: Vec<u64> = offsets.iter().copied().chain(unsafe { plain.index_entries(n) }).collect();
        let indexed = Segments::of_entry(laid_out.as_ptr(), count, 0, 0);
        for tile in [g, 2 * g, 4 * g, 8 * g] {
            let count_tiles = tiles(n, tile);
            for t in 0..count_tiles {
                let want = scanned(plain, t, tile, count_tiles);
                assert_eq!(unsafe { indexed.tile_range(t, tile, count_tiles, n) }, want, "tile {t} of {tile}");
            }
        }
    }

    /// A tile's rows by arithmetic are those of a plain scan: rows back to
    /// back or apart, longer or shorter than a tile, and empty.
    #[test]
    fn rows_are_found_by_arithmetic() {
        for (count, cols, pitch) in
            [(100, 7, 7), (100, 7, 10), (9, 3000, 3000), (9, 3000, 4097), (40, 0, 5), (40, 0, 0), (1, 5, 5)]
        {
            let rows = Segments::rows(count, cols, pitch);
            let n = (count - 1) * pitch + cols;
            for tile in [1, 4, 64, 1024, 4096] {
                let count_tiles = tiles(n, tile);
                for t in 0..count_tiles {
                    let want = scanned(rows, t, tile, count_tiles);
                    assert_eq!(
                        unsafe { rows.tile_range(t, tile, count_tiles, n) },
                        want,
                        "{count}x{cols} (pitch {pitch}), tile {t} of {tile}"
                    );
                }
            }
        }
    }

    /// Tile `t`'s elements `w0..w1` and segments `lo..hi`, the segments by
    /// a plain scan of `reaches` and `starts_from`.
    fn scanned(segs: Segments, t: u64, tile: u64, count_tiles: u64) -> (u64, u64, u64, u64) {
        let (w0, w1) = (t * tile, (t + 1) * tile);
        let lo = first(segs.count, |s| unsafe { segs.reaches(s, w0) });
        let hi = if t + 1 == count_tiles {
            segs.count
        } else {
            lo.max(first(segs.count, |s| unsafe { segs.starts_from(s, w1) }))
        };
        (w0, w1, lo, hi)
    }

    #[test]
    fn rows_are_segments() {
        let segs = Segments::rows(3, 5, 8);
        assert_eq!(unsafe { segs.bounds(2) }, (16, 21));
        assert!(!unsafe { segs.reaches(0, 5) } && unsafe { segs.reaches(1, 5) });
        assert!(unsafe { segs.starts_from(3, 0) });
    }

    #[test]
    fn column_layouts_cover_the_block() {
        for cols in [1u64, 3, 4, 16, 100, 256, 1 << 20] {
            for (lanes, vector, wide) in [
                (4, true, 1),
                (2, true, 2),
                (8, true, 4),
                (4, false, 1),
                (4, false, 4),
                (4, true, 8),
                (4, true, 16),
                (8, true, 16),
                (2, true, 16),
                (4, false, 16),
            ] {
                let c = Columns::new(cols, lanes, vector, wide);
                assert_eq!(c.unit_lanes * c.row_lanes, SHAPE_BLOCK);
                assert!(c.col_tiles * c.tile_cols() >= cols && (c.col_tiles - 1) * c.tile_cols() < cols);
                assert!(c.row_lanes >= 2);
            }
        }
    }
}
