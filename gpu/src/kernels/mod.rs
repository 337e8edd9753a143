//! The kernels, one file per step.
//!
//! Steps 1-7 are Mark Harris's "Optimizing Parallel Reduction in CUDA"
//! (Harris's slides); 8 and 9 come from the 2023 review of it on a V100.
//! Harris numbers his kernels from 1, as we do; NVIDIA's cuda-samples
//! `reduction_kernel.cu` numbers the same kernels from `reduce0`.
//!
//! Steps 1-7 are self-contained on purpose: `diff` two neighbouring files and
//! you see that slide's change and nothing else.
//!
//! `vectorized` (step 10) and `single_pass` (step 11) are ours: 16-byte
//! loads, then the whole reduction in one launch; `single_pass` is the
//! library's default.
//!
//! `reproducible` (step 12) and `accurate` (step 13) are the float sums
//! whose bits do not depend on the GPU: a fixed order of additions, and an
//! exactly rounded sum (`docs/src/guide/determinism.md`).
//!
//! `segments` (step 14, with `segments_staged` for short segments) and
//! `columns` (step 15) give one result per row, CSR segment or column
//! (`docs/src/guide/shapes.md`).
//!
//! `by_key` and `by_key_hash` solve a different problem, one sum per key
//! for many keys (the voting-and-shuffling article's warp-aggregated atomics; `docs/src/guide/by-key.md`).
//!
//! `hold` reduces nothing: it holds the stream until the host lets it go,
//! so that a benchmark can queue its timed runs behind it (`cli/src/timing.rs`).
//!
//! Every kernel here is an `unsafe fn` generic over the element type `T` and
//! the operator `O`; `entries.rs` turns each into named PTX entries. Every
//! kernel reduces `g_idata[0..n]` for any `n` (padding with `O::IDENTITY`)
//! and writes one partial result per block to `g_odata[block_idx_x()]`; the
//! host launches again on the partials until one value remains (Harris's
//! "kernel decomposition").

pub mod accurate;
pub mod by_key;
pub mod by_key_hash;
pub mod columns;
pub mod hold;
pub mod reduce1_interleaved_divergent;
pub mod reduce2_interleaved_bank_conflicts;
pub mod reduce3_sequential;
pub mod reduce4_first_add_during_load;
pub mod reduce5_unroll_last_warp;
pub mod reduce6_complete_unroll;
pub mod reduce7_multiple_elements;
pub mod reduce8_warp_tile;
pub mod reduce9_warp_shuffle;
pub mod reproducible;
pub mod segments;
pub mod segments_staged;
pub mod single_pass;
pub mod vectorized;
