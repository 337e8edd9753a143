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
//!   types, and operations of your own ([`Reducer::reduce`]), with the
//!   fastest kernel; sum, min and max also with any kernel of the
//!   [registry](registry::KERNELS), for teaching;
//!   [`Reducer::reduce_by_key`]: one sum per key (the voting-and-shuffling article).
//! * [`op`]: the operations ([`Sum`], [`Min`], [`Max`], [`ArgMin`],
//!   [`ArgMax`] also here at the root; the transforms, [`op::Arg`] and the
//!   operator trait [`op::Reduction`] there, which your own operations
//!   implement; [`op::ReduceOp`] names the plain ones).
//! * [`registry`]: Harris's seven steps, the 2023 review's two and ours, each
//!   with its launch [`Scheme`](registry::Scheme); one registry for the
//!   library, its tests and tools.
//! * [`device`]: the GPU ([`Gpu`], also here) and what it reports.
//! * [`Options`]: the kernel, block size, finish and grid cap, how
//!   reproducible a float result must be ([`Determinism`]), the accurate
//!   sums, and how shaped reductions split the work.
//! * [`shape`]: rows, columns and segments of a matrix; [`twin`]: the
//!   CPU twins of the reproducible orders (the same bits on a CPU).
//! * [`by_key`]: reduction by key, its kernels and value types.
//! * [`multi::MultiReducer`]: the same operations over data sharded across
//!   GPUs, one process for all or one process per GPU, combined through NCCL.
//! * [`dispatch`]: every launch decided in one place, from the request and
//!   the card's limits, as pure arithmetic.
//!
//! The CPU references, seeded inputs and checks the tests and benchmarks
//! use are the workspace's test kit (`reduction-testkit`), apart from this
//! library.
//!
//! ```no_run
//! use reduction::registry::Kernel;
//! use reduction::{Finish, Options, Reducer, Sum};
//! # fn main() -> reduction::Result<()> {
//! let r = Reducer::new()?;
//! let data: Vec<i32> = (1..=1000).collect();
//! assert_eq!(r.sum(&data)?, 500_500);
//! // Harris's kernel 4, 256 threads, partials finished on the CPU:
//! let opts = Options { kernel: Some(Kernel::find("reduce4")?), block: Some(256), finish: Finish::Cpu, ..Options::default() };
//! assert_eq!(r.reduce::<Sum, _, _>(&[&data], &opts)?, 500_500);
//! // the default kernel finishes on the CPU too:
//! let cpu = Options { finish: Finish::Cpu, ..Default::default() };
//! assert_eq!(r.reduce::<Sum, _, _>(&[&data], &cpu)?, 500_500);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod by_key;
pub mod device;
pub mod dispatch;
mod error;
mod input;
mod launch;
pub mod multi;
mod options;
mod ptx;
mod reducer;
pub mod registry;
mod scratch;
pub mod shape;
pub mod twin;

/// The cudarc this library is built with (driver API, dynamic loading):
/// name its types through this path, e.g. `reduction::cudarc::driver::CudaSlice`.
pub use cudarc;
pub use device::Gpu;
pub use error::{Error, Result};
/// Half-precision element types (the `half` crate's `f16` and `bf16`).
pub use gpu::half;
pub use gpu::names::{DType, Op};
/// Operations: the traits and every operation type (see [`Reducer::reduce`]).
pub use gpu::op;
pub use gpu::op::{ArgMax, ArgMin, Max, Min, Sum};
pub use input::{Element, Input, Source};
pub use options::{Determinism, Finish, Options};
pub use ptx::Ptx;
pub use reducer::Output;
pub use reducer::Prepared;
pub use reducer::Reducer;

#[cfg(test)]
mod tests {
    /// The root stays a short list (at most 30 names: modules, re-exports
    /// and macros); the rest is reached through its module.
    #[test]
    fn the_root_names_at_most_30_items() {
        let src = include_str!("lib.rs");
        let mut names = 0;
        for line in src.lines() {
            if line.starts_with("pub mod ") || line.starts_with("#[macro_export]") {
                names += 1;
            } else if let Some(used) = line.strip_prefix("pub use ") {
                names += match (used.find('{'), used.rfind('}')) {
                    (Some(open), Some(close)) => used[open + 1..close].split(',').count(),
                    _ => 1,
                };
            }
        }
        assert!((20..=30).contains(&names), "{names} public items at the root");
    }
}
