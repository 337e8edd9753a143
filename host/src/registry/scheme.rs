//! How a kernel is launched ([`Scheme`]) and how its block size reaches it
//! ([`BlockParam`]): the facts of a registry row that `dispatch` and
//! `launch/` read.

use gpu::layout::SINGLE_PASS_SMEM;

/// Dynamic shared memory for a launch of `block` threads: one element per
/// thread, but never fewer than 64. The last-warp code of steps 6 and 7
/// (Harris's `sdata[tid] += sdata[tid + 16]` for all 32 lanes) reads up to
/// `sdata[47]`, past the array of a 32-thread block; the extra lanes' values
/// are never used, but the reads must stay inside the allocation. NVIDIA's
/// cuda-samples pad the same way (`smemSize = 2 * threads` for `threads <= 32`).
///
/// ```
/// assert_eq!(reduction::registry::shared_mem_bytes(32, 4), 256);
/// assert_eq!(reduction::registry::shared_mem_bytes(256, 8), 2048);
/// ```
pub fn shared_mem_bytes(block: u32, elem_size: usize) -> u32 {
    block.max(64) * elem_size as u32
}

/// How a kernel is launched: the one fact the dispatch and `launch/` read.
/// Adding a kernel of an existing scheme touches its file, its entry and its
/// registry row, nothing else.
///
/// ```
/// use reduction::registry::{Kernel, PerThread, Scheme};
/// assert_eq!(Kernel::find("reduce3").unwrap().scheme, Scheme::MultiPass(PerThread::One));
/// assert_eq!(Kernel::find("reduce4").unwrap().scheme, Scheme::MultiPass(PerThread::Two));
/// assert_eq!(Kernel::find("reduce7").unwrap().scheme, Scheme::MultiPass(PerThread::GridStride));
/// assert_eq!(Kernel::find("single_pass").unwrap().scheme, Scheme::SinglePass);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Harris's kernel decomposition: a kernel `(input: *const T, output: *mut
    /// T, n: u32)` writes one partial per block, and is launched again on the
    /// partials until one value remains. One element per thread of shared
    /// memory ([`shared_mem_bytes`]).
    MultiPass(PerThread),
    /// One launch `(a: *const T, b: *const T, n: u64, partials: *mut Acc,
    /// ticket: *mut u32, out: *mut Out, done: *mut u32)`: every block writes
    /// its partial, the last one to finish combines them into `out[0]` (`b`
    /// is the second input of two-input operations, not read by the others).
    /// Grid-stride, at least 16 elements per thread; `SINGLE_PASS_SMEM` bytes
    /// of shared memory.
    SinglePass,
    /// One result per row or segment: `(a, b, n: u64, offsets, count: u64,
    /// cols: u64, pitch: u64, tile: u64, lanes: u32, partials, tickets,
    /// out)`, blocks of the kernel's threads (`dispatch::ShapeKernel::block`)
    /// on the grid and shared memory the shape's plan gives (rows are
    /// segments of equal length, `offsets` null).
    Segmented,
    /// One result per column: `(a, b, rows: u64, cols: u64, pitch: u64,
    /// wide: u32, chunks: u32, partials, tickets, out)`, as `Segmented`.
    Columns,
    /// Reduction by key: `(keys, values, n: u64, num_keys: u32, sums,
    /// bad_keys)`, blocks of [`BY_KEY_BLOCK`](crate::dispatch::BY_KEY_BLOCK).
    ByKey,
    /// One thread that holds the stream until the host releases it: `(flag,
    /// outcome, timeout_ns: u64)`.
    Hold,
}

/// The PTX parameter types of a multi-pass entry: `(input, output, n: u32)`.
const MULTI_PASS_PARAMS: &[&str] = &[".u64", ".u64", ".u32"];
/// The PTX parameter types of a single-pass entry: `(a, b, n: u64, partials,
/// ticket, out, done)`.
const SINGLE_PASS_PARAMS: &[&str] = &[".u64"; 7];
/// Of a rows or segments entry.
const SEGMENTED_PARAMS: &[&str] =
    &[".u64", ".u64", ".u64", ".u64", ".u64", ".u64", ".u64", ".u64", ".u32", ".u64", ".u64", ".u64"];
/// Of a columns entry.
const COLUMNS_PARAMS: &[&str] = &[".u64", ".u64", ".u64", ".u64", ".u64", ".u32", ".u32", ".u64", ".u64", ".u64"];
/// Of a by-key entry.
const BY_KEY_PARAMS: &[&str] = &[".u64", ".u64", ".u64", ".u32", ".u64", ".u64"];
/// Of the hold kernel.
const HOLD_PARAMS: &[&str] = &[".u64"; 3];

/// How many input elements one thread of a multi-pass kernel reads in the
/// first pass.
///
/// ```
/// use reduction::registry::{PerThread, Scheme};
/// assert_ne!(Scheme::MultiPass(PerThread::One), Scheme::MultiPass(PerThread::Two));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerThread {
    /// One element: grid = ceil(n / block).
    One,
    /// Two elements, added during the load: grid = ceil(n / (2 × block)).
    Two,
    /// As many as it takes, in a grid-stride loop: the grid is what fits on
    /// the GPU at once (SM count × resident blocks per SM).
    GridStride,
}

impl Scheme {
    /// Dynamic shared memory of a launch with `block` threads and elements
    /// of `elem_size` bytes.
    ///
    /// ```
    /// use reduction::registry::{PerThread, Scheme};
    /// assert_eq!(Scheme::MultiPass(PerThread::One).smem(256, 4), 1024);
    /// assert_eq!(Scheme::SinglePass.smem(256, 4), Scheme::SinglePass.smem(1024, 8)); // fixed
    /// ```
    pub fn smem(self, block: u32, elem_size: usize) -> u32 {
        match self {
            Scheme::MultiPass(_) => shared_mem_bytes(block, elem_size),
            Scheme::SinglePass => SINGLE_PASS_SMEM,
            // set by the shape's or the keys' plan; the hold kernel has none
            Scheme::Segmented | Scheme::Columns | Scheme::ByKey | Scheme::Hold => 0,
        }
    }

    /// The PTX types of the parameters a launch of this scheme passes, in
    /// order (pointers are `.u64`): the one description of the launch that
    /// every entry of the scheme must match, the Rust kernels and their CUDA
    /// C++ twins alike. The library compares it with the entry's `.param`
    /// list before the first launch ([`Error::Signature`](crate::Error::Signature)).
    ///
    /// ```
    /// use reduction::registry::{PerThread, Scheme};
    /// assert_eq!(Scheme::MultiPass(PerThread::One).params(), [".u64", ".u64", ".u32"]);
    /// assert_eq!(Scheme::SinglePass.params().len(), 7); // a, b, n, partials, ticket, out, done
    /// ```
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Scheme::MultiPass(_) => MULTI_PASS_PARAMS,
            Scheme::SinglePass => SINGLE_PASS_PARAMS,
            Scheme::Segmented => SEGMENTED_PARAMS,
            Scheme::Columns => COLUMNS_PARAMS,
            Scheme::ByKey => BY_KEY_PARAMS,
            Scheme::Hold => HOLD_PARAMS,
        }
    }

    /// Whether the grid is limited to the blocks resident on the GPU at
    /// once (grid-stride kernels), rather than set by `n`.
    ///
    /// ```
    /// use reduction::registry::{PerThread, Scheme};
    /// assert!(Scheme::SinglePass.grid_stride() && !Scheme::MultiPass(PerThread::Two).grid_stride());
    /// ```
    pub fn grid_stride(self) -> bool {
        matches!(self, Scheme::SinglePass | Scheme::MultiPass(PerThread::GridStride))
    }
}

/// How the block size reaches the kernel.
///
/// ```
/// use reduction::{DType, Op, registry::{BlockParam, Kernel}};
/// let k = Kernel::find("reduce6").unwrap();
/// assert_eq!(k.block_param, BlockParam::Compiled);
/// assert_eq!(k.entry(128, Op::Sum, DType::I32), "reduce6_b128_sum_i32"); // the block size is in the name
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockParam {
    /// Read at run time from `blockDim.x`: one entry per op and type.
    Runtime,
    /// A const generic: one entry per block size (`_b256_`).
    Compiled,
}
