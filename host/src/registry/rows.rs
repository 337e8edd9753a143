//! The rows of the registry: every kernel, with what it computes and how
//! it is launched.

use super::{BlockParam, Family, Kernel, PerThread, Scheme};
use gpu::names::HOLD_ENTRY;

/// The teaching table's kernels, in order: Harris's steps, the 2023
/// review's, ours, and the default kernel last.
///
/// ```
/// let steps: Vec<u32> = reduction::registry::KERNELS.iter().map(|k| k.step).collect();
/// assert_eq!(steps, (1..=11).collect::<Vec<_>>());
/// ```
pub const KERNELS: &[Kernel] = REGISTRY.split_at(11).0;

/// Every kernel of the library: [`KERNELS`], then the kernels with a
/// launch of their own.
///
/// ```
/// use reduction::registry::{Family, REGISTRY};
/// assert_eq!(REGISTRY.iter().filter(|k| k.family == Family::ByKey).count(), 4);
/// assert!(REGISTRY.iter().all(|k| (k.step > 0) == matches!(k.family, Family::Step | Family::Default)));
/// ```
pub const REGISTRY: &[Kernel] = &[
    Kernel {
        id: "reduce1",
        title: "interleaved addressing, divergent branch",
        source: "Harris slides 7-10",
        step: 1,
        scheme: Scheme::MultiPass(PerThread::One),
        family: Family::Step,
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce2",
        title: "interleaved addressing, bank conflicts",
        source: "Harris slides 11-13",
        step: 2,
        scheme: Scheme::MultiPass(PerThread::One),
        family: Family::Step,
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce3",
        title: "sequential addressing",
        source: "Harris slides 14-16",
        step: 3,
        scheme: Scheme::MultiPass(PerThread::One),
        family: Family::Step,
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce4",
        title: "first add during global load",
        source: "Harris slides 17-19",
        step: 4,
        scheme: Scheme::MultiPass(PerThread::Two),
        family: Family::Step,
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce5",
        title: "unroll the last warp (__syncwarp)",
        source: "Harris slides 20-23, the 2023 review",
        step: 5,
        scheme: Scheme::MultiPass(PerThread::Two),
        family: Family::Step,
        block_param: BlockParam::Runtime,
        min_block: 64,
        align: 0,
    },
    Kernel {
        id: "reduce6",
        title: "completely unrolled (const BLOCK)",
        source: "Harris slides 24-28",
        step: 6,
        scheme: Scheme::MultiPass(PerThread::Two),
        family: Family::Step,
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce7",
        title: "multiple elements per thread",
        source: "Harris slides 29-35",
        step: 7,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        family: Family::Step,
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce8",
        title: "last warp as a synced tile",
        source: "the 2023 review (Reduce8)",
        step: 8,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        family: Family::Step,
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce9",
        title: "warp shuffle for the last warp",
        source: "the 2023 review (Reduce9)",
        step: 9,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        family: Family::Step,
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "vectorized",
        title: "16-byte loads (aligned input)",
        source: "ours",
        step: 10,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        family: Family::Step,
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 16,
    },
    SINGLE_PASS,
    REPRODUCIBLE,
    ACCURATE,
    SEGMENTS,
    SEGMENTS_TAILED,
    SEGMENTS_STAGED,
    SEGMENTS_PAIRED,
    SEGMENTS_SCHEDULED,
    SEGMENTS_LONG,
    ROWS_SHORT,
    ROWS_LONG,
    COLUMNS,
    BY_KEY_ATOMIC,
    BY_KEY_BALLOT,
    BY_KEY_MATCH,
    BY_KEY_HASH,
    HOLD,
];

/// `gpu_to_gpu` sums, dot products, sums of squares, norms and means.
pub const REPRODUCIBLE: Kernel = row(
    "reproducible",
    "the same bits on every GPU: a fixed order",
    "ours (CCCL's gpu_to_gpu)",
    Family::Reproducible,
    Scheme::SinglePass,
);
/// The accurate sums.
pub const ACCURATE: Kernel =
    row("accurate", "correctly rounded f32 sum, double-double f64", "ours", Family::Accurate, Scheme::SinglePass);
/// Segments, and rows the two kernels below do not take.
pub const SEGMENTS: Kernel =
    row("segments", "one result per segment (or row): warp teams", "ours", Family::Shaped, Scheme::Segmented);
/// Segments whose lengths have a heavy tail: a long piece among short ones
/// is read by the whole warp.
pub const SEGMENTS_TAILED: Kernel = row(
    "segments_tailed",
    "one result per segment: warp teams, long pieces by the warp",
    "ours",
    Family::Shaped,
    Scheme::Segmented,
);
/// Short segments of aligned input: a round of them staged in shared
/// memory, a lane each.
pub const SEGMENTS_STAGED: Kernel = row(
    "segments_staged",
    "one result per segment: rounds staged in shared memory, a lane each",
    "ours",
    Family::Shaped,
    Scheme::Segmented,
);
/// Very short segments of aligned input: as [`SEGMENTS_STAGED`], with a
/// second segment a lane while the rounds fill their 32 lanes.
pub const SEGMENTS_PAIRED: Kernel = row(
    "segments_paired",
    "one result per segment: rounds staged in shared memory, two a lane",
    "ours",
    Family::Shaped,
    Scheme::Segmented,
);
/// Segments with a heavy tail that are not short on average: as
/// [`SEGMENTS_STAGED`], the tiles with the most segments first.
pub const SEGMENTS_SCHEDULED: Kernel = row(
    "segments_scheduled",
    "one result per segment: rounds staged in shared memory, the busiest tiles first",
    "ours",
    Family::Shaped,
    Scheme::Segmented,
);
/// Segments long on average: a block a tile, as long rows.
pub const SEGMENTS_LONG: Kernel =
    row("segments_long", "one result per segment: blocks on tiles", "ours", Family::Shaped, Scheme::Segmented);
/// Short rows of aligned input.
pub const ROWS_SHORT: Kernel =
    row("rows_short", "one result per short row: 16-byte vectors", "ours", Family::Shaped, Scheme::Segmented);
/// Long rows.
pub const ROWS_LONG: Kernel =
    row("rows_long", "one result per long row: blocks on tiles", "ours", Family::Shaped, Scheme::Segmented);
/// Columns.
pub const COLUMNS: Kernel =
    row("columns", "one result per column: tiles across", "ours", Family::Shaped, Scheme::Columns);
/// By key: the baseline.
pub const BY_KEY_ATOMIC: Kernel =
    row("atomic", "one atomic add per element", "the voting-and-shuffling article", Family::ByKey, Scheme::ByKey);
/// By key: peers by shuffles and ballots.
pub const BY_KEY_BALLOT: Kernel = row(
    "ballot",
    "warp-aggregated, get_peers loop (shfl + ballot)",
    "the voting-and-shuffling article",
    Family::ByKey,
    Scheme::ByKey,
);
/// By key: peers by `match.any.sync`.
pub const BY_KEY_MATCH: Kernel =
    row("match", "warp-aggregated, match.any.sync", "the voting-and-shuffling article", Family::ByKey, Scheme::ByKey);
/// By key: a hash table in shared memory.
pub const BY_KEY_HASH: Kernel =
    row("hash", "block-aggregated, shared-memory hash table", "ours", Family::ByKey, Scheme::ByKey);
/// The hold kernel.
pub const HOLD: Kernel =
    row(HOLD_ENTRY, "holds the stream until the host releases it", "ours (for timing)", Family::Hold, Scheme::Hold);

/// A registry row outside the teaching table: one entry per operation and
/// type (or per type, or one), any block size from 32.
const fn row(id: &'static str, title: &'static str, source: &'static str, family: Family, scheme: Scheme) -> Kernel {
    Kernel { id, title, source, step: 0, family, scheme, block_param: BlockParam::Runtime, min_block: 32, align: 0 }
}

/// Step 11, the default ([`DEFAULT_KERNEL`]).
pub(super) const SINGLE_PASS: Kernel = Kernel {
    id: "single_pass",
    title: "one launch: last block combines",
    source: "ours (threadFenceReduction)",
    step: 11,
    family: Family::Default,
    scheme: Scheme::SinglePass,
    block_param: BlockParam::Compiled,
    min_block: 32,
    align: 0,
};
