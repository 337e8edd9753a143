//! Launch facts that the kernels and the host must agree on, compiled into
//! both (this module, like `op`, also builds for the host).

/// `single_pass`: shared memory holds 32 warp results of at most 32 bytes
/// (a variance's count, mean and `M2`), then a `u32` flag ("this block is
/// the last").
pub const SINGLE_PASS_FLAG_OFFSET: usize = 32 * 32;

/// `single_pass` and `segments` (`strided_fold.rs`): 16-byte vectors a
/// thread loads before it combines any of them, a *round*; the host sizes
/// short inputs' grids in whole rounds (`reduction::dispatch::grid_in_whole_rounds`).
pub const ROUND_VECTORS: u64 = 4;

/// `single_pass`: dynamic shared memory per block, in bytes.
pub const SINGLE_PASS_SMEM: u32 = SINGLE_PASS_FLAG_OFFSET as u32 + 4;

/// The reproducible kernel (`kernels/reproducible.rs`): where the slots of
/// its warps' partials start in shared memory, after the last-block flag,
/// the bytes of a slot (the largest accumulator they hold), and the most
/// sweeps of 32 warps they hold.
pub const MODES_SLOTS_OFFSET: usize = 16;
/// See [`MODES_SLOTS_OFFSET`].
pub const MODES_SLOT_BYTES: usize = 32;
/// See [`MODES_SLOTS_OFFSET`].
pub const MODES_SWEEPS: u32 = 8;

/// The reproducible and accurate kernels (`kernels/reproducible.rs`,
/// `kernels/accurate.rs`): dynamic shared memory per block, in bytes (the
/// reproducible kernel's flag and slots; the accurate kernel's two sets of
/// 12 limbs, its flags and the last-block flag, in less).
pub const MODES_SMEM: u32 = (MODES_SLOTS_OFFSET + MODES_SWEEPS as usize * 32 * MODES_SLOT_BYTES) as u32;

/// The accurate `f32` kernel: `i64` words of `partials` per block (12 limbs,
/// the flags, padding).
pub const ACCURATE_WORDS: usize = 16;

/// The accurate `f32` kernel's launch bounds, `(threads a block, blocks an
/// SM)`: the host declares them to the JIT (`.maxntid`, `.minnctapersm`:
/// CUDA's `__launch_bounds__(1024, 1)`, `names::launch_bounds`), which then
/// fits the kernel in 64 registers a thread (72 undeclared: three blocks
/// of 256 an SM). One block of 1024 an SM is 32 warps instead of 24, and
/// the fewest blocks whose limbs the last block adds: at 2^28, 0.913× →
/// 0.955× of the default sum on an H200, 0.959× → 0.977× on an H100 (two
/// blocks of 512 with the same registers: 0.951×, 0.972×; four of 256:
/// 0.919× on the H200).
pub const ACCURATE_F32_BOUNDS: (u32, u32) = (1024, 1);

/// The reproducible `f64` logsumexp's launch bounds, `(threads a block,
/// blocks an SM)`, declared as [`ACCURATE_F32_BOUNDS`] are: 76 registers
/// undeclared, 64 declared without a spill, so blocks of 1024 instead of
/// 512, whose blocks combine their groups of the fixed tree; at 2^28 on an
/// H200, 858 → 723 µs.
pub const REPRODUCIBLE_LOGSUMEXP_F64_BOUNDS: (u32, u32) = (1024, 1);
