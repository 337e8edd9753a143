//! Parallel reductions on NVIDIA GPUs, with the kernels written in Rust.
//!
//! The kernels live in the `gpu` crate, compiled to PTX by rustc's NVPTX
//! backend when this library is built (with the nightly that
//! `gpu/rust-toolchain.toml` names, fetched through rustup; your project
//! stays on stable) and embedded here. This library loads them with
//! [cudarc](https://docs.rs/cudarc), re-exported as [`cudarc`] so that your
//! code names the same `CudaSlice` this library takes. The CUDA driver is
//! loaded at run time: the library builds and runs without CUDA installed,
//! and reports [`Error::NoDriver`] instead of crashing.
//!
//! * [`Reducer`]: sum, min, max, arg-min/max of host slices or device
//!   buffers of `i32, u32, i64, u64, f32, f64, f16, bf16` (half sums in
//!   `f32`), dot products, sums of squares, norms and means of the float
//!   types, and operations of your own ([`Reducer::reduce_op`]), with the
//!   fastest kernel; sum, min and max also with any kernel of the
//!   [registry](KERNELS), for teaching;
//!   [`Reducer::reduce_by_key`]: one sum per key (the voting-and-shuffling article).
//! * [`KERNELS`]: Harris's seven steps, the 2023 review's two and ours, each with
//!   its launch [`Scheme`]; one registry for the library, its tests and tools.
//! * [`multi::MultiReducer`]: the same operations over data sharded across
//!   GPUs, one process for all or one process per GPU, combined through NCCL.
//! * [`plan`]: the launches of a reduction, as pure arithmetic.
//!
//! The CPU references, seeded inputs and checks the tests and benchmarks
//! use are the workspace's test kit (`reduction-testkit`), apart from this
//! library.
//!
//! ```no_run
//! use reduction::{Finish, Kernel, Options, Reducer, Sum};
//! # fn main() -> reduction::Result<()> {
//! let r = Reducer::new()?;
//! let data: Vec<i32> = (1..=1000).collect();
//! assert_eq!(r.sum(&data)?, 500_500);
//! // Harris's kernel 4, 256 threads, partials finished on the CPU:
//! let opts = Options { kernel: Some(Kernel::find("reduce4")?), block: Some(256), finish: Finish::Cpu, ..Options::default() };
//! assert_eq!(r.reduce_with::<Sum, _, _>(&data, &opts)?, 500_500);
//! // the default kernel finishes on the CPU too:
//! let cpu = Options { finish: Finish::Cpu, ..Default::default() };
//! assert_eq!(r.reduce_with::<Sum, _, _>(&data, &cpu)?, 500_500);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod by_key;
mod device;
mod dtype;
mod error;
mod input;
mod launch;
pub mod modes;
pub mod multi;
mod operations;
mod options;
pub mod plan;
mod prepared;
mod ptx;
mod reduce_by_key;
mod reducer;
mod registry;
mod scratch;
pub mod shape;
pub mod shape_order;
mod shaped;
mod tuning;

pub use by_key::{BY_KEY_BLOCK, ByKeyKernel, ByKeyValue};
/// The cudarc this library is built with (driver API, dynamic loading):
/// name its types through this path, e.g. `reduction::cudarc::driver::CudaSlice`.
pub use cudarc;
pub use device::{DeviceInfo, Gpu, no_gpu_reason};
pub use error::{Error, Result};
/// Half-precision element types (the `half` crate's `f16` and `bf16`).
pub use gpu::half;
pub use gpu::names::{BLOCK_SIZES, DType, Op};
/// Operations: the traits and every operation type (see [`Reducer::reduce_op`]).
pub use gpu::op;
pub use gpu::op::{Arg, ArgMax, ArgMin, Dot, Max, Mean, Min, Norm, ReduceOp, Reduction, Sum, SumSquares};
pub use input::{Element, Input, Source};
pub use modes::mode_entry;
pub use operations::Output;
pub use options::{Determinism, Finish, Options};
pub use prepared::Prepared;
pub use ptx::Ptx;
pub use reduce_by_key::check_host_input;
pub use reducer::Reducer;
pub use registry::{BlockParam, DEFAULT_BLOCK, DEFAULT_KERNEL, KERNELS, Kernel, PerThread, Scheme, shared_mem_bytes};
pub use shape::{Matrix, Offsets, Shape, Strategy};
pub use tuning::Tuning;
