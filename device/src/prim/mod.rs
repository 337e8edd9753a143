//! Device primitives with CUDA's names, so a reader of CUDA C++ finds each
//! one with grep: `threadIdx.x` is [`thread_idx_x`], `__syncthreads()` is
//! [`sync_threads`], `__shfl_down_sync` is [`shfl_down_sync`], `extern
//! __shared__ T sdata[]` is [`dyn_shared`]. Kernels use only these.
//!
//! Each is a thin wrapper over a `core::arch::nvptx` function, an LLVM NVVM
//! intrinsic or one line of inline PTX; its doc names the PTX it becomes.

pub mod atomic;
pub mod clock;
pub mod memory;
pub mod shared;
pub mod thread;
pub mod warp;

pub use atomic::{
    SharedAtomicAdd, atomic_add, atomic_cas_shared, atomic_inc, atomic_or_shared, threadfence, threadfence_system,
};
pub use clock::globaltimer;
pub use memory::{
    Lanes, Vector, load, load_relaxed, load_u64, load_volatile, load16_as, store, store_u64, store_volatile,
};
pub use shared::{DynShared, copies_commit, copies_wait, copy16_async, dyn_shared, dynamic_smem_size, shared_address};
pub use thread::{WARP_SIZE, block_dim_x, block_idx_x, grid_dim_x, lane_id, sync_threads, thread_idx_x, warp_id};
pub use warp::{FULL_MASK, Shuffle, ballot_sync, match_any_sync, shfl_down_sync, shfl_sync, shfl_xor_sync, sync_warp};
