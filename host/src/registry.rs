//! The one list of kernels. Tests, the CLI and the benchmark all iterate
//! [`KERNELS`]; nothing else names a kernel. Each [`Kernel`] says how it is
//! launched ([`Scheme`], [`PerThread`], [`BlockParam`]) and at which block
//! sizes ([`BLOCK_SIZES`]); [`DEFAULT_KERNEL`] is what [`Reducer`](crate::Reducer)
//! runs unless told otherwise.

use crate::error::{Error, Result};
use gpu::layout::SINGLE_PASS_SMEM;
/// The block sizes kernels are compiled and launched with (`gpu/src/names.rs`).
pub use gpu::names::BLOCK_SIZES;
use gpu::names::{DType, Op};

/// The library's default kernel: one launch, 16-byte loads, any alignment
/// (`gpu/src/kernels/single_pass.rs`), at the GPU's default block
/// (the card's choice: [`dispatch`](crate::dispatch)).
///
/// ```
/// assert_eq!(reduction::registry::DEFAULT_KERNEL.id, "single_pass");
/// assert_eq!(reduction::registry::Kernel::find("single_pass").unwrap().step, reduction::registry::DEFAULT_KERNEL.step);
/// ```
pub const DEFAULT_KERNEL: &Kernel = &SINGLE_PASS;

/// Harris's block size for all his measurements (slide 10).
///
/// ```
/// assert!(reduction::registry::Kernel::find("reduce1").unwrap().check_block(reduction::registry::DEFAULT_BLOCK).is_ok());
/// ```
pub const DEFAULT_BLOCK: u32 = 128;

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

/// How a kernel is launched: the one fact `plan.rs` and `launch.rs` read.
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
}

/// The PTX parameter types of a multi-pass entry: `(input, output, n: u32)`.
const MULTI_PASS_PARAMS: &[&str] = &[".u64", ".u64", ".u32"];
/// The PTX parameter types of a single-pass entry: `(a, b, n: u64, partials,
/// ticket, out, done)`.
const SINGLE_PASS_PARAMS: &[&str] = &[".u64"; 7];

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
        }
    }

    /// The PTX types of the parameters a launch of this scheme passes, in
    /// order (pointers are `.u64`): the one description of the launch that
    /// every entry of the scheme must match, the Rust kernels and their CUDA
    /// C++ twins alike. The library compares it with the entry's `.param`
    /// list before the first launch ([`Error::Signature`]).
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

/// One kernel of the registry.
///
/// ```
/// use reduction::registry::KERNELS;
/// for k in KERNELS {
///     println!("{:>2} {:<12} {} ({})", k.step, k.id, k.title, k.source);
/// }
/// assert_eq!((KERNELS[0].id, KERNELS[0].step), ("reduce1", 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The id in entry names and on the command line: `reduce4`.
    pub id: &'static str,
    /// What the step does, in a few words.
    pub title: &'static str,
    /// Where it comes from (seed and slide).
    pub source: &'static str,
    /// The step number in the report's table (Harris's 1-7, the 2023 review's 8-9).
    pub step: u32,
    /// How it is launched.
    pub scheme: Scheme,
    /// How the block size is passed.
    pub block_param: BlockParam,
    /// The smallest block size it supports.
    pub min_block: u32,
    /// The alignment, in bytes, the input must have beyond the element's own
    /// (16 for kernels that assume whole 16-byte vectors), else 0.
    pub align: usize,
}

/// Every kernel, in teaching order.
///
/// ```
/// let steps: Vec<u32> = reduction::registry::KERNELS.iter().map(|k| k.step).collect();
/// assert_eq!(steps, (1..=11).collect::<Vec<_>>());
/// ```
pub const KERNELS: &[Kernel] = &[
    Kernel {
        id: "reduce1",
        title: "interleaved addressing, divergent branch",
        source: "Harris slides 7-10",
        step: 1,
        scheme: Scheme::MultiPass(PerThread::One),
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce2",
        title: "interleaved addressing, bank conflicts",
        source: "Harris slides 11-13",
        step: 2,
        scheme: Scheme::MultiPass(PerThread::One),
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce3",
        title: "sequential addressing",
        source: "Harris slides 14-16",
        step: 3,
        scheme: Scheme::MultiPass(PerThread::One),
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce4",
        title: "first add during global load",
        source: "Harris slides 17-19",
        step: 4,
        scheme: Scheme::MultiPass(PerThread::Two),
        block_param: BlockParam::Runtime,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce5",
        title: "unroll the last warp (__syncwarp)",
        source: "Harris slides 20-23, the 2023 review",
        step: 5,
        scheme: Scheme::MultiPass(PerThread::Two),
        block_param: BlockParam::Runtime,
        min_block: 64,
        align: 0,
    },
    Kernel {
        id: "reduce6",
        title: "completely unrolled (const BLOCK)",
        source: "Harris slides 24-28",
        step: 6,
        scheme: Scheme::MultiPass(PerThread::Two),
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce7",
        title: "multiple elements per thread",
        source: "Harris slides 29-35",
        step: 7,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce8",
        title: "last warp as a synced tile",
        source: "the 2023 review (Reduce8)",
        step: 8,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "reduce9",
        title: "warp shuffle for the last warp",
        source: "the 2023 review (Reduce9)",
        step: 9,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 0,
    },
    Kernel {
        id: "vectorized",
        title: "16-byte loads (aligned input)",
        source: "ours",
        step: 10,
        scheme: Scheme::MultiPass(PerThread::GridStride),
        block_param: BlockParam::Compiled,
        min_block: 32,
        align: 16,
    },
    SINGLE_PASS,
];

/// Step 11, the default ([`DEFAULT_KERNEL`]).
const SINGLE_PASS: Kernel = Kernel {
    id: "single_pass",
    title: "one launch: last block combines",
    source: "ours (threadFenceReduction)",
    step: 11,
    scheme: Scheme::SinglePass,
    block_param: BlockParam::Compiled,
    min_block: 32,
    align: 0,
};

impl Kernel {
    /// The registry entry with this id, or an error listing the valid ids.
    ///
    /// ```
    /// assert_eq!(reduction::registry::Kernel::find("reduce4").unwrap().step, 4);
    /// let err = reduction::registry::Kernel::find("reduce0").unwrap_err();
    /// assert!(err.to_string().contains("reduce1, reduce2"));
    /// ```
    pub fn find(id: &str) -> Result<&'static Kernel> {
        KERNELS.iter().find(|k| k.id == id).ok_or_else(|| Error::UnknownKernel {
            name: id.to_string(),
            valid: KERNELS.iter().map(|k| k.id).collect::<Vec<_>>().join(", "),
        })
    }

    /// The block sizes this kernel can be launched with.
    ///
    /// ```
    /// let k = reduction::registry::Kernel::find("reduce5").unwrap();
    /// assert_eq!(k.block_sizes().collect::<Vec<_>>(), [64, 128, 256, 512, 1024]);
    /// ```
    pub fn block_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        BLOCK_SIZES.into_iter().filter(|&b| b >= self.min_block)
    }

    /// `Ok(())` if `block` is one of [`Kernel::block_sizes`], else an error
    /// saying why (not a power of two, out of range, too small).
    ///
    /// ```
    /// let k = reduction::registry::Kernel::find("reduce5").unwrap();
    /// assert!(k.check_block(128).is_ok());
    /// assert!(k.check_block(32).unwrap_err().to_string().contains("too small"));
    /// assert!(k.check_block(100).unwrap_err().to_string().contains("not a power of two"));
    /// assert!(k.check_block(2048).unwrap_err().to_string().contains("more than 1024"));
    /// ```
    pub fn check_block(&self, block: u32) -> Result<()> {
        let why = if !block.is_power_of_two() {
            format!("block size {block}: not a power of two")
        } else if block > 1024 {
            format!("block size {block}: more than 1024 threads per block")
        } else if block < self.min_block {
            format!("block size {block}: too small, the kernel works on at least {} threads", self.min_block)
        } else {
            return Ok(());
        };
        Err(Error::Unsupported {
            kernel: self.id.to_string(),
            what: why,
            valid: self.block_sizes().map(|b| b.to_string()).collect::<Vec<_>>().join(", "),
        })
    }

    /// The PTX entry for this kernel at a block size, operator and type:
    /// `{id}_{op}_{type}` or `{id}_b{block}_{op}_{type}` (see `gpu/src/entries.rs`).
    ///
    /// ```
    /// use reduction::{DType, Op, registry::Kernel};
    /// let k = Kernel::find("reduce7").unwrap();
    /// assert_eq!(k.entry(256, Op::Sum, DType::F32), "reduce7_b256_sum_f32");
    /// assert_eq!(Kernel::find("reduce3").unwrap().entry(256, Op::Max, DType::U64), "reduce3_max_u64");
    /// ```
    pub fn entry(&self, block: u32, op: Op, ty: DType) -> String {
        self.entry_named(block, op.name(), ty.name())
    }

    /// [`Kernel::entry`] by names, for an operation of the user's own
    /// (`Reduction::NAME`).
    ///
    /// ```
    /// let k = reduction::registry::DEFAULT_KERNEL;
    /// assert_eq!(k.entry_named(256, "absmax", "f32"), "single_pass_b256_absmax_f32");
    /// ```
    pub fn entry_named(&self, block: u32, op: &str, ty: &str) -> String {
        match self.block_param {
            BlockParam::Runtime => format!("{}_{op}_{ty}", self.id),
            BlockParam::Compiled => format!("{}_b{block}_{op}_{ty}", self.id),
        }
    }

    /// Whether the kernel is compiled for operation `op` on `ty`: the default
    /// kernel for every pair of `Op::types`, the others for the plain
    /// operators on the primitive types.
    ///
    /// ```
    /// use reduction::{DType, Op, registry::Kernel};
    /// assert!(Kernel::find("single_pass").unwrap().supports(Op::ArgMax, DType::BF16));
    /// assert!(!Kernel::find("reduce7").unwrap().supports(Op::ArgMax, DType::F32));
    /// assert!(!Kernel::find("reduce7").unwrap().supports(Op::Sum, DType::F16));
    /// ```
    pub fn supports(&self, op: Op, ty: DType) -> bool {
        match self.scheme {
            Scheme::SinglePass => op.types().contains(&ty),
            Scheme::MultiPass(_) => op.is_plain() && !ty.is_half(),
        }
    }

    /// Every entry name this kernel has in the PTX, for the given ops and
    /// types (the pairs it [supports](Kernel::supports)).
    ///
    /// ```
    /// use reduction::{DType, Op, registry::Kernel};
    /// let reduce5: Vec<String> = Kernel::find("reduce5").unwrap().all_entries(&[Op::Sum], &[DType::I32, DType::F32]).collect();
    /// assert_eq!(reduce5, ["reduce5_sum_i32", "reduce5_sum_f32"]);
    /// let reduce7 = Kernel::find("reduce7").unwrap();
    /// assert_eq!(reduce7.all_entries(&[Op::Max], &[DType::U64]).count(), 6); // one per block size
    /// ```
    pub fn all_entries<'a>(&'a self, ops: &'a [Op], types: &'a [DType]) -> impl Iterator<Item = String> + 'a {
        let blocks: Vec<u32> = match self.block_param {
            BlockParam::Runtime => vec![self.min_block],
            BlockParam::Compiled => self.block_sizes().collect(),
        };
        blocks.into_iter().flat_map(move |b| {
            ops.iter().flat_map(move |&op| {
                types.iter().filter(move |&&ty| self.supports(op, ty)).map(move |&ty| self.entry(b, op, ty))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::ptx::Ptx;

    #[test]
    fn registry_and_ptx_name_the_same_entries() {
        let mut registry: BTreeSet<String> = KERNELS.iter().flat_map(|k| k.all_entries(Op::ALL, DType::ALL)).collect();
        registry.extend(crate::by_key::entries()); // reduction by key lists its own
        registry.extend(crate::modes::entries()); // so do the reproducible and accurate sums
        registry.extend(crate::shape::entries()); // and rows, columns, segments
        registry.insert(gpu::names::HOLD_ENTRY.to_string()); // and the hold kernel (the test kit times with it)
        let ptx = Ptx::embedded();
        let in_ptx: BTreeSet<String> = ptx.entries().map(str::to_string).collect();
        let missing: Vec<_> = registry.difference(&in_ptx).collect();
        let unlisted: Vec<_> = in_ptx.difference(&registry).collect();
        assert!(missing.is_empty(), "registry entries missing from the PTX: {missing:?}");
        assert!(unlisted.is_empty(), "PTX entries the registry does not know: {unlisted:?}");
    }

    /// Every kernel's entries declare the parameters its scheme's launch
    /// passes: the one launch description (its CUDA C++ twins are held to
    /// the same one on a GPU machine, where NVRTC compiles them).
    #[test]
    fn every_entry_takes_what_its_launch_passes() {
        let ptx = Ptx::embedded();
        let mut checked = 0;
        for k in KERNELS {
            for entry in k.all_entries(Op::ALL, DType::ALL) {
                let found = ptx.params(&entry).unwrap_or_else(|| panic!("{entry} is not in the PTX"));
                assert_eq!(found, k.scheme.params(), "{entry}");
                checked += 1;
            }
        }
        assert!(checked > 500, "{checked}");
        // a twin that fell behind (the single-pass entry without `b`) is told apart
        let stale = ".visible .entry single_pass_b128_sum_i32(\n.param .u64 p0,\n.param .u64 p1,\n.param .u64 p2,\n\
                     .param .u64 p3,\n.param .u64 p4,\n.param .u64 p5\n)\n{\n}\n";
        let stale = Ptx::from_text(stale, "stale").params("single_pass_b128_sum_i32").unwrap();
        assert_ne!(stale, Scheme::SinglePass.params());
    }

    #[test]
    fn ids_are_unique_and_steps_in_order() {
        let ids: BTreeSet<&str> = KERNELS.iter().map(|k| k.id).collect();
        assert_eq!(ids.len(), KERNELS.len());
        assert!(KERNELS.windows(2).all(|w| w[0].step < w[1].step));
    }

    #[test]
    fn block_checks_name_the_problem() {
        let k = Kernel::find("reduce1").unwrap();
        for bad in [0, 1, 16, 100, 2048] {
            assert!(matches!(k.check_block(bad), Err(Error::Unsupported { .. })), "block {bad}");
        }
        for good in BLOCK_SIZES {
            assert!(k.check_block(good).is_ok());
        }
    }
}
