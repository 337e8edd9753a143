//! Launch facts that the kernels and the host must agree on, compiled into
//! both (this module, like `op`, also builds for the host).

/// `single_pass`: shared memory holds 32 warp results of at most 32 bytes
/// (a variance's count, mean and `M2`), then a `u32` flag ("this block is
/// the last").
pub const SINGLE_PASS_FLAG_OFFSET: usize = 32 * 32;

/// `single_pass` and `segments` (`strided_fold.rs`): 16-byte vectors a
/// thread loads before it combines any of them, a *round*; the host sizes
/// short inputs' grids in whole rounds (`reduction::plan::grid_in_whole_rounds`).
pub const ROUND_VECTORS: u64 = 4;

/// `single_pass`: dynamic shared memory per block, in bytes.
pub const SINGLE_PASS_SMEM: u32 = SINGLE_PASS_FLAG_OFFSET as u32 + 4;

/// The reproducible and accurate kernels (`kernels/reproducible.rs`,
/// `kernels/accurate.rs`): dynamic shared memory per block, in bytes (the
/// accurate kernel's two sets of 12 limbs, its flags and the last-block flag).
pub const MODES_SMEM: u32 = 256;

/// The accurate `f32` kernel: `i64` words of `partials` per block (12 limbs,
/// the flags, padding).
pub const ACCURATE_WORDS: usize = 16;
