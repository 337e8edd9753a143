//! The one list of kernels ([`REGISTRY`]): the teaching steps and the
//! default kernel ([`KERNELS`], the rows of Harris's table), then the
//! reproducible and accurate sums, the rows', columns' and segments'
//! kernels, the by-key kernels and the hold kernel. Nothing else names a
//! kernel. Each [`Kernel`] says what it computes ([`Family`]), how it is
//! launched ([`Scheme`], [`PerThread`], [`BlockParam`]) and at which block
//! sizes ([`BLOCK_SIZES`]); [`DEFAULT_KERNEL`] is what [`Reducer`](crate::Reducer)
//! runs unless told otherwise.

mod rows;
mod scheme;

use crate::error::{Error, Result};
/// The block sizes kernels are compiled and launched with (`gpu/src/names.rs`).
pub use gpu::names::BLOCK_SIZES;
use gpu::names::{DType, MODE_TYPES, Op, REPRODUCIBLE_OPS, by_key_types};
use rows::SINGLE_PASS;
pub use rows::{
    ACCURATE, BY_KEY_ATOMIC, BY_KEY_BALLOT, BY_KEY_HASH, BY_KEY_MATCH, COLUMNS, HOLD, KERNELS, REGISTRY, REPRODUCIBLE,
    ROWS_LONG, ROWS_SHORT, SEGMENTS, SEGMENTS_LONG, SEGMENTS_PAIRED, SEGMENTS_SCHEDULED, SEGMENTS_STAGED,
    SEGMENTS_TAILED,
};
pub use scheme::{BlockParam, PerThread, Scheme, shared_mem_bytes};

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
    /// The step number in the report's table (Harris's 1-7, the 2023
    /// review's 8-9, ours 10-11); 0 for the kernels outside it.
    pub step: u32,
    /// What it computes: which operations and types it has entries for.
    pub family: Family,
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

/// What a kernel computes: which operations and types it has entries for.
///
/// ```
/// use reduction::{DType, Op, registry::{Family, Kernel}};
/// assert_eq!(Kernel::find("reduce4").unwrap().family, Family::Step);
/// assert!(Family::Reproducible.supports(Op::Mean, DType::F64) && !Family::Accurate.supports(Op::Mean, DType::F64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// A teaching step: the plain operators (sum, min, max) on the 32- and
    /// 64-bit types.
    Step,
    /// The default kernel: every operation on every type it has
    /// ([`Op::types`]), and the user's own operations.
    Default,
    /// `gpu_to_gpu`: sum, dot, sum_squares, norm and mean of f32 and f64.
    Reproducible,
    /// The accurate sums of f32 and f64.
    Accurate,
    /// Rows, columns and segments: every operation on every type it has.
    Shaped,
    /// Sums by key of f32 and f64.
    ByKey,
    /// No operation: the hold kernel.
    Hold,
}

impl Family {
    /// Whether kernels of this family have entries for `op` on `ty`.
    pub fn supports(self, op: Op, ty: DType) -> bool {
        match self {
            Family::Step => op.is_plain() && !ty.is_half(),
            Family::Default | Family::Shaped => op.types().contains(&ty),
            Family::Reproducible => REPRODUCIBLE_OPS.contains(&op) && MODE_TYPES.contains(&ty),
            Family::Accurate => op == Op::Sum && MODE_TYPES.contains(&ty),
            Family::ByKey => op == Op::Sum && by_key_types().contains(&ty),
            Family::Hold => false,
        }
    }

    /// This family's kernels, in registry order.
    ///
    /// ```
    /// use reduction::registry::Family;
    /// assert_eq!(Family::Shaped.kernels().map(|k| k.id).collect::<Vec<_>>(), ["segments", "segments_tailed", "segments_staged", "segments_paired", "segments_scheduled", "segments_long", "rows_short", "rows_long", "columns"]);
    /// ```
    pub fn kernels(self) -> impl Iterator<Item = &'static Kernel> {
        REGISTRY.iter().filter(move |k| k.family == self)
    }
}

impl Kernel {
    /// The registry entry with this id, or an error listing the valid ids.
    ///
    /// ```
    /// assert_eq!(reduction::registry::Kernel::find("reduce4").unwrap().step, 4);
    /// let err = reduction::registry::Kernel::find("reduce0").unwrap_err();
    /// assert!(err.to_string().contains("reduce1, reduce2"));
    /// ```
    pub fn find(id: &str) -> Result<&'static Kernel> {
        REGISTRY.iter().find(|k| k.id == id).ok_or_else(|| Error::UnknownKernel {
            name: id.to_string(),
            valid: REGISTRY.iter().map(|k| k.id).collect::<Vec<_>>().join(", "),
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
        match (self.scheme, self.block_param) {
            (Scheme::Hold, _) => self.id.to_string(),
            (Scheme::ByKey, _) => format!("by_key_{}_{ty}", self.id),
            (_, BlockParam::Runtime) => format!("{}_{op}_{ty}", self.id),
            (_, BlockParam::Compiled) => format!("{}_b{block}_{op}_{ty}", self.id),
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
        self.family.supports(op, ty)
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
    pub fn all_entries<'a>(&'a self, ops: &'a [Op], types: &'a [DType]) -> Box<dyn Iterator<Item = String> + 'a> {
        if self.family == Family::Hold {
            return Box::new(std::iter::once(self.id.to_string()));
        }
        let blocks: Vec<u32> = match self.block_param {
            BlockParam::Runtime => vec![self.min_block],
            BlockParam::Compiled => self.block_sizes().collect(),
        };
        Box::new(blocks.into_iter().flat_map(move |b| {
            ops.iter().flat_map(move |&op| {
                types.iter().filter(move |&&ty| self.supports(op, ty)).map(move |&ty| self.entry(b, op, ty))
            })
        }))
    }

    /// Every entry this kernel has in the PTX.
    ///
    /// ```
    /// use reduction::registry::Kernel;
    /// assert_eq!(Kernel::find("hash").unwrap().entries(), ["by_key_hash_f32", "by_key_hash_f64"]);
    /// assert_eq!(Kernel::find("accurate").unwrap().entries(), ["accurate_sum_f32", "accurate_sum_f64"]);
    /// ```
    pub fn entries(&self) -> Vec<String> {
        let mut entries: Vec<String> = self.all_entries(Op::ALL, DType::ALL).collect();
        if self.family == Family::Default {
            // the multi-GPU path's parts (`names::SHARD_PARTS`)
            for b in self.block_sizes() {
                for (name, types) in gpu::names::SHARD_PARTS {
                    entries.extend(types.iter().map(|ty| self.entry_named(b, name, ty.name())));
                }
            }
        }
        if self.family == Family::Shaped {
            // the portable forms for `gpu_to_gpu` (`names::PORTABLE_SHAPES`)
            for (form, _, types) in gpu::names::PORTABLE_SHAPES {
                entries.extend(types.iter().map(|ty| self.entry_named(0, form, ty.name())));
            }
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::ptx::Ptx;

    #[test]
    fn registry_and_ptx_name_the_same_entries() {
        let registry: BTreeSet<String> = REGISTRY.iter().flat_map(|k| k.entries()).collect();
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
        for k in REGISTRY {
            for entry in k.entries() {
                let found = ptx.params(&entry).unwrap_or_else(|| panic!("{entry} is not in the PTX"));
                assert_eq!(found, k.scheme.params(), "{entry}");
                checked += 1;
            }
        }
        assert!(checked > 900, "{checked}");
        // a twin that fell behind (the single-pass entry without `b`) is told apart
        let stale = ".visible .entry single_pass_b128_sum_i32(\n.param .u64 p0,\n.param .u64 p1,\n.param .u64 p2,\n\
                     .param .u64 p3,\n.param .u64 p4,\n.param .u64 p5\n)\n{\n}\n";
        let stale = Ptx::from_text(stale, "stale").params("single_pass_b128_sum_i32").unwrap();
        assert_ne!(stale, Scheme::SinglePass.params());
    }

    #[test]
    fn ids_are_unique_and_steps_in_order() {
        let ids: BTreeSet<&str> = REGISTRY.iter().map(|k| k.id).collect();
        assert_eq!(ids.len(), REGISTRY.len());
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
