//! Launch planning: which launches reduce `n` elements with a kernel. Pure
//! arithmetic on the CPU, shared by the library, the tests and the benchmark.
//!
//! CUDA has no barrier across blocks, so a reduction is a sequence of
//! launches (Harris's *kernel decomposition*, slide 5): the first level reads
//! the input and writes one partial per block; each next level reduces the
//! previous level's partials with the same kernel, until one value remains.
//!
//! ```
//! use reduction::{dispatch::levels, registry::Kernel};
//! // Harris's kernel 3 on 2^20 elements with 128 threads: three launches.
//! let levels = levels(Kernel::find("reduce3").unwrap(), 1 << 20, 128, 264);
//! assert_eq!(levels.iter().map(|l| l.outputs).collect::<Vec<_>>(), [8192, 64, 1]);
//! ```

use crate::registry::{Kernel, PerThread, Scheme};
use gpu::layout::ROUND_VECTORS;

/// The most elements one launch reads. Kernels index with `u32` and step by
/// `2 × block × grid`; with `n ≤ 2^31` no index can wrap. Longer inputs are
/// split into chunks of this size, each its own launch, whose partials are
/// written side by side.
///
/// ```
/// use reduction::{dispatch::{MAX_CHUNK, levels}, registry::Kernel};
/// let levels = levels(Kernel::find("reduce4").unwrap(), MAX_CHUNK + 1, 256, 1056);
/// assert_eq!(levels[0].launches.len(), 2); // two launches: MAX_CHUNK elements, then 1
/// ```
pub const MAX_CHUNK: usize = 1 << 31;

/// One kernel launch.
///
/// ```
/// use reduction::{dispatch::{MAX_CHUNK, levels}, registry::Kernel};
/// // 2^31 + 17 elements: the first level is two launches, partials side by side.
/// let first = &levels(Kernel::find("reduce4").unwrap(), MAX_CHUNK + 17, 256, 1000)[0];
/// let [a, b] = first.launches[..] else { panic!("two launches") };
/// assert_eq!((a.in_offset, a.n, a.out_offset), (0, MAX_CHUNK, 0));
/// assert_eq!((b.in_offset, b.n, b.out_offset), (MAX_CHUNK, 17, a.grid as usize));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// First element this launch reads, in its level's input.
    pub in_offset: usize,
    /// How many elements it reads.
    pub n: usize,
    /// Blocks in the grid: one partial each.
    pub grid: u32,
    /// Where its first partial goes, in its level's output.
    pub out_offset: usize,
}

/// The launches of one level.
///
/// ```
/// use reduction::{dispatch::levels, registry::Kernel};
/// // reduce3 reads one element per thread: 1000 elements, 8 blocks of 128, then 1 block.
/// let levels = levels(Kernel::find("reduce3").unwrap(), 1000, 128, 0);
/// assert_eq!(levels.iter().map(|l| l.outputs).collect::<Vec<_>>(), [8, 1]);
/// assert_eq!((levels[1].launches[0].n, levels[1].launches[0].grid), (8, 1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// The level's launches: one per chunk of at most [`MAX_CHUNK`] input
    /// elements, their partials written side by side.
    pub launches: Vec<Launch>,
    /// How many values the level writes: one per block, or one in all for a
    /// single-pass kernel.
    pub outputs: usize,
}

/// Blocks for one launch of `kernel` over `n` elements: enough to cover them
/// (one or two elements per thread), or for grid-stride kernels at most the
/// `resident` blocks the GPU holds at once.
///
/// ```
/// use reduction::{dispatch::grid_for, registry::Kernel};
/// assert_eq!(grid_for(Kernel::find("reduce1").unwrap(), 1000, 128, 264), 8);
/// assert_eq!(grid_for(Kernel::find("reduce4").unwrap(), 1000, 128, 264), 4);
/// assert_eq!(grid_for(Kernel::find("reduce7").unwrap(), 1 << 24, 128, 264), 264);
/// assert_eq!(grid_for(Kernel::find("reduce7").unwrap(), 100, 128, 264), 1);
/// ```
pub fn grid_for(kernel: &Kernel, n: usize, block: u32, resident: u32) -> u32 {
    let block = block.max(1) as usize;
    let grid = match kernel.scheme {
        Scheme::MultiPass(PerThread::One) => n.div_ceil(block),
        Scheme::MultiPass(PerThread::Two) => n.div_ceil(2 * block),
        Scheme::MultiPass(PerThread::GridStride) => n.div_ceil(2 * block).min(resident.max(1) as usize),
        Scheme::SinglePass => n.div_ceil(16 * block).min(resident.max(1) as usize),
        // not flat kernels: their plans have no levels (`dispatch::plan` refuses them)
        Scheme::Segmented | Scheme::Columns | Scheme::ByKey | Scheme::Hold => 1,
    };
    grid.max(1) as u32
}

/// The most blocks a single-pass launch over `n` elements of `elem_size`
/// bytes should have on `resident` blocks: `resident`, unless its threads
/// would have at most two rounds of [`ROUND_VECTORS`] 16-byte loads each;
/// then the fewest blocks with which every thread's loads come in those
/// rounds, whole (`gpu/src/strided_fold.rs`), and no thread is left a tail.
/// The library uses it for operations that do little per element (the
/// `Reducer`'s planning says which). Measured on an H200 (`reduce ops`,
/// `docs/src/performance/tuning.md`, a grid of whole rounds): a bf16 sum of
/// 2^24 elements took 13.76-13.86 µs on 1024 blocks of 256 (two rounds a
/// thread), 14.38-14.42 on the 1056 resident; of 2^22, 8.22-8.27 on 512
/// (one round), 8.35-8.38 on 1024.
///
/// ```
/// use reduction::dispatch::grid_in_whole_rounds;
/// assert_eq!(grid_in_whole_rounds(1 << 24, 2, 256, 1056), 1024); // bf16: two rounds a thread
/// assert_eq!(grid_in_whole_rounds(1 << 22, 2, 256, 1056), 512); // one round
/// assert_eq!(grid_in_whole_rounds(1 << 24, 4, 256, 1056), 1056); // f32: four rounds, every block
/// ```
pub fn grid_in_whole_rounds(n: usize, elem_size: usize, block: u32, resident: u32) -> u32 {
    Rounds::of(n, elem_size, block).grid_in_whole_rounds(resident)
}

/// The most blocks a single-pass launch over `n` elements of `elem_size`
/// bytes should have on `resident` blocks over `sms` SMs, for an operation
/// whose merge is heavy (the variance's: a count, a mean and a sum of
/// squared deviations, about 50 `f64` instructions a merge: a warp's trees
/// take about 600 instructions whatever its share of the input). On a short
/// input, one whose threads would have at most eight rounds of
/// [`ROUND_VECTORS`] 16-byte loads each, fewer warps pay for those trees:
/// half the blocks an SM holds where that gives each thread at most four
/// rounds, else three quarters, in whole blocks on every SM. Longer inputs,
/// and cards that hold one block an SM, keep `resident`. Measured on an
/// H100 (`reduce ops --max-grid G`, one sitting, two passes;
/// `docs/src/performance/tuning.md`, the variance's grid on short inputs):
/// the `f32` variance of 2^22 elements took 13.71-13.79 µs on 264 blocks of
/// 256, 14.14-14.29 on the 528 resident; of 2^24, 29.63-29.82 on 396 and
/// 30.43-30.56 on 528; the `bf16` variance of 2^21 9.82-9.95 on 264 and
/// 10.43-10.50 on 512; and of 2^25 on 99 of the 132 resident blocks of
/// 1024, 31.68-31.78 against 30.98-31.01 on all of them.
///
/// ```
/// use reduction::dispatch::grid_for_heavy_merges;
/// assert_eq!(grid_for_heavy_merges(1 << 22, 4, 256, 528, 132), 264); // f32: four rounds a thread on half
/// assert_eq!(grid_for_heavy_merges(1 << 24, 4, 256, 528, 132), 396); // three quarters
/// assert_eq!(grid_for_heavy_merges(1 << 25, 4, 256, 528, 132), 528); // 15.5 rounds on every block
/// assert_eq!(grid_for_heavy_merges(1 << 25, 2, 1024, 132, 132), 132); // bf16: one block an SM, all kept
/// ```
pub fn grid_for_heavy_merges(n: usize, elem_size: usize, block: u32, resident: u32, sms: u32) -> u32 {
    let resident = resident.max(1);
    let rounds = Rounds::of(n, elem_size, block);
    if rounds.on(resident) > SHORT_ROUNDS {
        return resident;
    }
    let half = share_of_each_sm(resident, sms, 1, 2, 2);
    if rounds.on(half) <= 4 { half } else { share_of_each_sm(resident, sms, 3, 4, 2) }
}

/// The most blocks a single-pass logsumexp over `n` elements of
/// `elem_size` bytes (an accumulator of at most 8 bytes) should have on
/// `resident` blocks over `sms` SMs: those of [`grid_in_whole_rounds`];
/// where that keeps every block (more than two rounds a thread) on a short
/// input (at most eight), half the blocks an SM holds where it holds four
/// or more (blocks of 256 threads, not the three of 512 from 2^25
/// elements on an H100), in whole blocks on every SM. An element costs an
/// exponential and a merge rescales a sum by one, so fewer warps doing
/// more rounds each cost less. Measured on an
/// H100 (`reduce ops --op logsumexp --max-grid G`, one sitting, two passes;
/// `docs/src/performance/tuning.md`, logsumexp on short inputs): `f32`
/// of 2^23 elements took 18.08-18.11 µs on 396 blocks of 256 and
/// 18.66-18.69 on the 792 resident, of 2^24 28.77-28.78 and 29.50-29.57;
/// `bf16` of 2^24 18.38-18.50 and 19.07-19.14, `f16` 18.37-18.45 and
/// 19.22-19.30; where [`grid_in_whole_rounds`] gives fewer blocks, it does
/// better than half (`bf16` of 2^23 12.83-12.86 µs on 512, 13.07-13.23 on 396).
///
/// ```
/// use reduction::dispatch::grid_for_logsumexp;
/// assert_eq!(grid_for_logsumexp(1 << 23, 4, 256, 792, 132), 396); // f32: three rounds a thread on all
/// assert_eq!(grid_for_logsumexp(1 << 23, 2, 256, 792, 132), 512); // bf16: two rounds, whole
/// assert_eq!(grid_for_logsumexp(1 << 25, 4, 512, 396, 132), 396); // eleven rounds: every block
/// assert_eq!(grid_for_logsumexp(1 << 25, 2, 512, 396, 132), 396); // three blocks an SM: all kept
/// ```
pub fn grid_for_logsumexp(n: usize, elem_size: usize, block: u32, resident: u32, sms: u32) -> u32 {
    let resident = resident.max(1);
    let rounds = Rounds::of(n, elem_size, block);
    let grid = rounds.grid_in_whole_rounds(resident);
    if grid < resident || rounds.on(resident) > SHORT_ROUNDS {
        return grid;
    }
    share_of_each_sm(resident, sms, 1, 2, 4)
}

/// The most rounds of [`ROUND_VECTORS`] loads a thread has on an input
/// [`grid_for_heavy_merges`] and [`grid_for_logsumexp`] call short.
const SHORT_ROUNDS: usize = 8;

/// `num / den` of the blocks each of `sms` SMs holds, of `resident` on
/// the card, in whole blocks on every SM; all of them where an SM holds
/// fewer than `least`.
fn share_of_each_sm(resident: u32, sms: u32, num: u64, den: u64, least: u32) -> u32 {
    let resident = resident.max(1);
    let sms = sms.clamp(1, resident);
    let per_sm = resident / sms;
    if per_sm < least {
        return resident;
    }
    (per_sm as u64 * num / den * sms as u64).clamp(1, resident as u64) as u32
}

/// An input's 16-byte vectors and how many of them a block's round of
/// [`ROUND_VECTORS`] loads a thread takes: what the grids above count
/// rounds with.
struct Rounds {
    vectors: usize,
    round: usize,
}

impl Rounds {
    /// For `n` elements of `elem_size` bytes and blocks of `block` threads.
    fn of(n: usize, elem_size: usize, block: u32) -> Rounds {
        Rounds {
            vectors: n.saturating_mul(elem_size).div_ceil(16),
            round: ROUND_VECTORS as usize * block.max(1) as usize,
        }
    }

    /// The rounds each thread has on `blocks` blocks.
    fn on(&self, blocks: u32) -> usize {
        self.vectors.div_ceil(self.round.saturating_mul(blocks.max(1) as usize))
    }

    /// The fewest blocks on which each thread has at most `rounds` rounds.
    fn fewest_blocks_for(&self, rounds: usize) -> usize {
        self.vectors.div_ceil(self.round.saturating_mul(rounds.max(1)))
    }

    /// [`grid_in_whole_rounds`] on `resident` blocks.
    fn grid_in_whole_rounds(&self, resident: u32) -> u32 {
        let resident = resident.max(1);
        let each = self.on(resident);
        if each > 2 {
            return resident;
        }
        self.fewest_blocks_for(each).clamp(1, resident as usize) as u32
    }
}

/// The levels that reduce `n > 0` elements to one. Levels after the first
/// read partials; a grid-stride kernel reduces them with a single block. A
/// single-pass kernel is one launch over all `n` elements.
///
/// ```
/// use reduction::{dispatch::levels, registry::Kernel};
/// let l = levels(Kernel::find("reduce3").unwrap(), 1 << 20, 128, 264);
/// let grids: Vec<usize> = l.iter().map(|l| l.outputs).collect();
/// assert_eq!(grids, [8192, 64, 1]);
/// let l = levels(Kernel::find("reduce7").unwrap(), 1 << 20, 128, 264);
/// assert_eq!(l.iter().map(|l| l.outputs).collect::<Vec<_>>(), [264, 1]);
/// let l = levels(Kernel::find("single_pass").unwrap(), 3 << 31, 256, 1056);
/// assert_eq!((l.len(), l[0].launches[0].grid, l[0].outputs), (1, 1056, 1));
/// ```
pub fn levels(kernel: &Kernel, n: usize, block: u32, resident: u32) -> Vec<Level> {
    if kernel.scheme == Scheme::SinglePass {
        let grid = grid_for(kernel, n, block, resident);
        return vec![Level { launches: vec![Launch { in_offset: 0, n, grid, out_offset: 0 }], outputs: 1 }];
    }
    let mut levels = Vec::new();
    let mut remaining = n;
    while remaining > 1 || levels.is_empty() {
        let resident = if levels.is_empty() { resident } else { 1 };
        let mut launches = Vec::new();
        let mut out_offset = 0;
        for in_offset in (0..remaining).step_by(MAX_CHUNK) {
            let len = (remaining - in_offset).min(MAX_CHUNK);
            let grid = grid_for(kernel, len, block, resident);
            launches.push(Launch { in_offset, n: len, grid, out_offset });
            out_offset += grid as usize;
        }
        remaining = out_offset;
        levels.push(Level { launches, outputs: out_offset });
    }
    levels
}

/// Partials buffers a plan needs: the largest output of the even levels
/// and of the odd levels, not counting the last level (it writes the result).
/// Levels alternate between the two buffers.
///
/// ```
/// use reduction::{dispatch::{levels, scratch_sizes}, registry::Kernel};
/// assert_eq!(scratch_sizes(&levels(Kernel::find("reduce3").unwrap(), 1 << 20, 128, 264)), (8192, 64));
/// ```
pub fn scratch_sizes(levels: &[Level]) -> (usize, usize) {
    let mut sizes = (0, 0);
    for (i, level) in levels.iter().enumerate().take(levels.len().saturating_sub(1)) {
        let slot = if i % 2 == 0 { &mut sizes.0 } else { &mut sizes.1 };
        *slot = (*slot).max(level.outputs);
    }
    sizes
}

/// The longest chain of `combine`s from an input element to the result,
/// the `h` of the floating-point error bound `|error| <= h · ε · Σ|x|`
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, §4.2): per
/// level, the elements one thread folds in sequence plus the block's tree.
///
/// ```
/// use reduction::{dispatch::{depth, levels}, registry::Kernel};
/// let k = Kernel::find("reduce3").unwrap();
/// assert_eq!(depth(k, &levels(k, 1 << 20, 128, 264), 128), 3 * 7); // three levels of 7 rounds
/// let k = Kernel::find("reduce7").unwrap();
/// // 2^20 / (2 × 128 × 264) → 16 iterations of 2 adds and a 7-round tree,
/// // then one block over the 264 partials: 2 iterations of 2 adds and the tree.
/// assert_eq!(depth(k, &levels(k, 1 << 20, 128, 264), 128), (32 + 7) + (4 + 7));
/// ```
pub fn depth(kernel: &Kernel, levels: &[Level], block: u32) -> usize {
    let block = block.max(1);
    let tree = block.ilog2() as usize;
    levels
        .iter()
        .map(|level| {
            let chain = level
                .launches
                .iter()
                .map(|l| match kernel.scheme {
                    Scheme::MultiPass(PerThread::One) => 0,
                    Scheme::MultiPass(PerThread::Two) => 1,
                    Scheme::MultiPass(PerThread::GridStride) => 2 * l.n.div_ceil(2 * block as usize * l.grid as usize),
                    // Each thread's elements, then the last block's fold of
                    // one partial per block, then its block reduction.
                    Scheme::SinglePass => {
                        l.n.div_ceil(block as usize * l.grid as usize)
                            + (l.grid as usize).div_ceil(block as usize)
                            + tree
                    }
                    Scheme::Segmented | Scheme::Columns | Scheme::ByKey | Scheme::Hold => 0,
                })
                .max()
                .unwrap_or(0);
            chain + tree
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::KERNELS;

    #[test]
    fn every_level_covers_its_input_and_ends_in_one() {
        for kernel in KERNELS {
            for block in kernel.block_sizes() {
                for n in [1usize, 2, 31, 33, 127, 128, 129, 1000, 65537, (1 << 20) + 7, 3 << 30] {
                    let levels = levels(kernel, n, block, 132 * 8);
                    assert_eq!(levels.last().map(|l| l.outputs), Some(1), "{} b{block} n={n}", kernel.id);
                    let mut input = n;
                    for level in &levels {
                        let covered: usize = level.launches.iter().map(|l| l.n).sum();
                        assert_eq!(covered, input);
                        for l in &level.launches {
                            let per_block = match kernel.scheme {
                                Scheme::MultiPass(PerThread::One) => block as usize,
                                _ => 2 * block as usize,
                            };
                            if kernel.scheme == Scheme::SinglePass {
                                assert_eq!(levels.len(), 1);
                            } else if kernel.scheme.grid_stride() {
                                // The stride 2 × block × grid is a u32, and i < n plus one stride fits.
                                assert!(l.n as u64 + 2 * block as u64 * l.grid as u64 <= u32::MAX as u64);
                            } else {
                                // One block per `per_block` elements, and no block index past u32.
                                assert!(l.grid as usize * per_block >= l.n);
                                assert!(l.grid as u64 * per_block as u64 <= l.n as u64 + per_block as u64);
                            }
                        }
                        input = level.outputs;
                    }
                }
            }
        }
    }

    #[test]
    fn long_inputs_are_chunked() {
        let k = Kernel::find("reduce4").unwrap();
        let levels = levels(k, MAX_CHUNK + 17, 256, 1000);
        let first = &levels[0].launches;
        assert_eq!(first.len(), 2);
        assert_eq!(first[1].in_offset, MAX_CHUNK);
        assert_eq!(first[1].n, 17);
        assert_eq!(first[1].out_offset, first[0].grid as usize);
    }

    #[test]
    fn short_grids_give_every_thread_whole_rounds() {
        for elem_size in [1, 2, 4, 8, 16] {
            for block in [32u32, 256, 1024] {
                for resident in [1u32, 7, 264, 1056] {
                    for n in [0usize, 1, 17, 1000, 4097, 1 << 16, (1 << 20) + 3, 1 << 22, 1 << 24, 1 << 28] {
                        let grid = grid_in_whole_rounds(n, elem_size, block, resident);
                        assert!((1..=resident).contains(&grid), "n={n} size {elem_size} b{block} r{resident}: {grid}");
                        let round = ROUND_VECTORS as usize * block as usize;
                        let vectors = (n * elem_size).div_ceil(16);
                        let rounds = vectors.div_ceil(round * resident as usize);
                        if rounds > 2 {
                            assert_eq!(grid, resident);
                        } else if vectors > 0 {
                            // covered in `rounds` rounds, and one block fewer would not be
                            let per_block = round * rounds;
                            assert!(grid as usize * per_block >= vectors && (grid as usize - 1) * per_block < vectors);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn heavy_merges_run_fewer_blocks_only_on_short_inputs() {
        for elem_size in [2, 4, 8] {
            for block in [0u32, 256, 1024] {
                for (resident, sms) in
                    [(0u32, 0u32), (1, 132), (3, 1), (132, 132), (264, 132), (528, 132), (660, 132), (99, 132)]
                {
                    for n in [0usize, 1, 1000, 1 << 20, 1 << 22, (1 << 24) + 3, 1 << 28, usize::MAX] {
                        let grid = grid_for_heavy_merges(n, elem_size, block, resident, sms);
                        let (resident, sms) = (resident.max(1), sms.clamp(1, resident.max(1)));
                        let at = format!("n={n} size {elem_size} b{block} r{resident} on {sms}: {grid}");
                        assert!((1..=resident).contains(&grid), "{at}");
                        let round = ROUND_VECTORS as usize * block.max(1) as usize;
                        let vectors = n.saturating_mul(elem_size).div_ceil(16);
                        let per_sm = resident / sms;
                        if vectors.div_ceil(round * resident as usize) > 8 || per_sm < 2 {
                            assert_eq!(grid, resident, "{at}: a long input, or one block an SM, keeps every block");
                        } else {
                            assert!(grid == per_sm / 2 * sms || grid == per_sm * 3 / 4 * sms, "{at}");
                            assert!(
                                grid.is_multiple_of(sms) && grid < resident,
                                "{at}: whole blocks on every SM, fewer"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn one_element_is_one_launch() {
        for kernel in KERNELS {
            assert_eq!(levels(kernel, 1, 128, 10).len(), 1);
        }
    }
}
