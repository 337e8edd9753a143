//! Parallel reductions on NVIDIA GPUs, with the kernels written in Rust.
//!
//! The kernels live in the `gpu` crate (compiled to PTX by rustc's NVPTX
//! backend, embedded here at build time); this library loads them with
//! [cudarc](https://docs.rs/cudarc) (the CUDA driver is loaded at run time, so
//! the library builds and runs without CUDA installed, and reports
//! [`Error::NoDriver`] instead of crashing).
//!
//! * [`Reducer`]: sum, min and max of host slices or device buffers of
//!   `i32, u32, i64, u64, f32, f64`, with the fastest kernel by default or
//!   any kernel of the [registry](KERNELS) for teaching.
//! * [`KERNELS`]: Harris's seven steps and seed 004's two, one registry for
//!   the tests, the CLI and the benchmark.
//! * [`mod@plan`]: the launches of a multi-pass reduction, as pure arithmetic.
//! * [`by_key`]: one sum per key for many keys, [`Reducer::reduce_by_key`]
//!   (seed 003's warp-aggregated atomics).
//! * [`mod@reference`]: the serial CPU reference.
//!
//! ```no_run
//! use reduction::{Finish, Kernel, Options, Reducer, Sum};
//! # fn main() -> reduction::Result<()> {
//! let r = Reducer::new()?;
//! let data: Vec<i32> = (1..=1000).collect();
//! assert_eq!(r.sum(&data)?, 500_500);
//! // Harris's kernel 4, 256 threads, partials finished on the CPU:
//! let opts = Options { kernel: Some(Kernel::find("reduce4")?), block: Some(256), finish: Finish::Cpu };
//! assert_eq!(r.reduce_with::<Sum, _, _>(&data, &opts)?, 500_500);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod bench;
pub mod by_key;
pub mod data;
mod device;
mod dtype;
mod error;
pub mod nvrtc;
pub mod plan;
mod ptx;
mod reducer;
pub mod reference;
mod registry;
pub mod svg;
mod timing;

pub use by_key::{ByKeyKernel, ByKeyValue};
pub use device::{DeviceInfo, Gpu, no_gpu_reason};
pub use dtype::DType;
pub use error::{Error, Result};
pub use gpu::op::{Max, Min, ReduceOp, Sum};
pub use plan::{Launch, Level, MAX_CHUNK, depth, grid_for, plan, scratch_sizes};
pub use ptx::Ptx;
pub use reducer::{Element, Finish, Input, Options, Reducer, Source, default_block};
pub use reference::{Op, Reference};
pub use registry::{BLOCK_SIZES, BlockParam, DEFAULT_BLOCK, KERNELS, Kernel, PerThread, shared_mem_bytes};
pub use timing::{Stats, time_runs};
