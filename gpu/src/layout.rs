//! Launch facts that the kernels and the host must agree on, compiled into
//! both (this module, like `op`, also builds for the host).

/// `single_pass`: shared memory holds 32 warp results of at most 16 bytes
/// (an arg-max's value and index), then a `u32` flag ("this block is the last").
pub const SINGLE_PASS_FLAG_OFFSET: usize = 32 * 16;

/// `single_pass`: dynamic shared memory per block, in bytes.
pub const SINGLE_PASS_SMEM: u32 = SINGLE_PASS_FLAG_OFFSET as u32 + 4;
