//! Reduction by key, planned: which kernel, its block, grid and shared
//! memory, from the kernel asked for, the value type and the length.

use super::{Launch, Level, Limits, Plan};
use crate::error::{Error, Result};
use crate::registry::{BY_KEY_HASH, BY_KEY_MATCH, Family, Kernel};
use gpu::names::DType;

/// Threads per block of every by-key launch (a multiple of 32, as the warp
/// kernels require).
///
/// ```
/// assert_eq!(reduction::dispatch::BY_KEY_BLOCK % 32, 0); // whole warps: the kernels shuffle
/// ```
pub const BY_KEY_BLOCK: u32 = 256;

/// Slots of the hash kernel's shared-memory table; it takes tiles of half as
/// many elements. The kernel sizes its table from the launch's shared memory,
/// so this number is a tuning choice, not something the kernel relies on.
///
/// ```
/// assert!(reduction::dispatch::HASH_SLOTS.is_power_of_two());
/// ```
pub const HASH_SLOTS: u32 = 2048;

/// How a by-key kernel sizes its launch: the registry row, known by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ByKeyKernel {
    /// Every kernel but the hash table's: a block of [`BY_KEY_BLOCK`]
    /// threads takes as many elements a step.
    Warp(&'static Kernel),
    /// Per-block pre-aggregation of tiles of `HASH_SLOTS / 2` elements in a
    /// shared-memory hash table of [`HASH_SLOTS`].
    Hash(&'static Kernel),
}

impl ByKeyKernel {
    /// The by-key kernel `kernel` names (`None`: [`BY_KEY_MATCH`]), or
    /// [`Error::Unsupported`] for a kernel of another family.
    pub(crate) fn of(kernel: Option<&'static Kernel>) -> Result<ByKeyKernel> {
        match kernel.unwrap_or(&BY_KEY_MATCH) {
            k if k.id == BY_KEY_HASH.id => Ok(ByKeyKernel::Hash(k)),
            k if k.family == Family::ByKey => Ok(ByKeyKernel::Warp(k)),
            k => Err(Error::Unsupported {
                kernel: k.id.to_string(),
                what: "reduction by key".into(),
                valid: Family::ByKey.kernels().map(|k| k.id).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Its registry row.
    pub(crate) fn row(self) -> &'static Kernel {
        match self {
            ByKeyKernel::Warp(k) | ByKeyKernel::Hash(k) => k,
        }
    }

    /// Dynamic shared memory of a launch with values of `value_bytes` bytes.
    pub(crate) fn smem(self, value_bytes: usize) -> u32 {
        match self {
            ByKeyKernel::Hash(_) => HASH_SLOTS * (value_bytes as u32 + 4),
            ByKeyKernel::Warp(_) => 0,
        }
    }

    /// Elements one block takes per step of its grid-stride loop.
    pub(crate) fn elements_per_block(self) -> usize {
        match self {
            ByKeyKernel::Hash(_) => HASH_SLOTS as usize / 2,
            ByKeyKernel::Warp(_) => BY_KEY_BLOCK as usize,
        }
    }
}

/// The plan of the by-key `kernel` on `n > 0` elements of `dtype`: blocks
/// of [`BY_KEY_BLOCK`], as many as fit on the
/// card at once, or fewer for small inputs; one launch.
///
/// ```
/// use reduction::{DType, dispatch::{Tuning, by_key_plan}, registry::Kernel};
/// let h100 = (Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 25e9 }, 1024, 16);
/// let p = by_key_plan(Kernel::find("hash")?, DType::F32, 1 << 20, &h100)?;
/// assert_eq!((p.entry.as_str(), p.block, p.levels[0].launches[0].grid), ("by_key_hash_f32", 256, 1024));
/// assert!(by_key_plan(Kernel::find("reduce3")?, DType::F32, 1 << 20, &h100).is_err());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn by_key_plan(kernel: &'static Kernel, dtype: DType, n: usize, card: &impl Limits) -> Result<Plan> {
    let kernel = ByKeyKernel::of(Some(kernel))?;
    let row = kernel.row();
    let entry = row.entry_named(BY_KEY_BLOCK, "sum", dtype.name());
    let smem = kernel.smem(dtype.size());
    let resident = card.resident_blocks(&entry, BY_KEY_BLOCK, smem)?;
    let needed = n.div_ceil(kernel.elements_per_block()).max(1);
    let grid = resident.min(u32::try_from(needed).unwrap_or(u32::MAX));
    let levels = vec![Level { launches: vec![Launch { in_offset: 0, n, grid, out_offset: 0 }], outputs: 0 }];
    Ok(Plan {
        kernel: row,
        entry,
        block: BY_KEY_BLOCK,
        levels,
        smem,
        partials: 0,
        inputs: 2,
        acc_bytes: dtype.size(),
        exponent: None,
    })
}
