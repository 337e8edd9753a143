//! Reduction by key (the voting-and-shuffling article): the kernels and the value types. One sum
//! per key, for more keys than fit in shared memory, as in a
//! particle-in-cell code where element `i` is a particle with value
//! `values[i]` in cell `keys[i]`.
//!
//! * [`ByKeyKernel`]: the four kernels (`gpu/src/kernels/by_key.rs` and
//!   `by_key_hash.rs`): one atomic per element; the voting-and-shuffling article's warp-aggregated
//!   atomics with its `get_peers` loop or with `match.any.sync`; per-block
//!   aggregation in a shared-memory hash table.
//! * [`Reducer::reduce_by_key`](crate::Reducer::reduce_by_key) and
//!   [`Reducer::reduce_by_key_into`](crate::Reducer::reduce_by_key_into): the
//!   API (`reduce_by_key.rs`).
//!
//! The key distributions and the CPU group-by sum every result is checked
//! against are the test kit's (`reduction-testkit`, `testkit::by_key`).

use crate::error::{Error, Result};
use crate::input::Element;
use gpu::names::DType;
/// The value types the by-key kernels are compiled for (`gpu/src/names.rs`).
///
/// ```
/// assert!(reduction::by_key::value_types().contains(&reduction::DType::F64));
/// ```
pub use gpu::names::by_key_types as value_types;

/// Threads per block of every by-key launch (a multiple of 32, as the warp
/// kernels require).
///
/// ```
/// assert_eq!(reduction::by_key::BY_KEY_BLOCK % 32, 0); // whole warps: the kernels shuffle
/// ```
pub const BY_KEY_BLOCK: u32 = 256;

/// Slots of the hash kernel's shared-memory table; it takes tiles of half as
/// many elements. The kernel sizes its table from the launch's shared memory,
/// so this number is a tuning choice, not something the kernel relies on.
///
/// ```
/// assert!(reduction::by_key::HASH_SLOTS.is_power_of_two());
/// ```
pub const HASH_SLOTS: u32 = 2048;

/// A kernel for reduction by key.
///
/// ```
/// use reduction::by_key::ByKeyKernel;
/// assert_eq!(ByKeyKernel::default(), ByKeyKernel::Match);
/// assert_eq!(ByKeyKernel::ALL.map(|k| k.id()), ["atomic", "ballot", "match", "hash"]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ByKeyKernel {
    /// One global atomic add per element: the baseline.
    Atomic,
    /// The voting-and-shuffling article: peers found with its `get_peers` loop (shuffle + ballot per
    /// distinct key), summed with `reduce_peers`, one atomic per group.
    Ballot,
    /// As `Ballot`, with the peers from one `match.any.sync` (sm_70+). The
    /// default: about one instruction more than `Atomic` when every key
    /// differs, far fewer atomics when keys repeat within a warp.
    #[default]
    Match,
    /// Per-block pre-aggregation of 1024-element tiles in a shared-memory
    /// hash table (the voting-and-shuffling article's third competitor).
    Hash,
}

impl ByKeyKernel {
    /// All kernels, baseline first.
    ///
    /// ```
    /// let ids: Vec<&str> = reduction::by_key::ByKeyKernel::ALL.iter().map(|k| k.id()).collect();
    /// assert_eq!(ids, ["atomic", "ballot", "match", "hash"]);
    /// ```
    pub const ALL: [ByKeyKernel; 4] = [ByKeyKernel::Atomic, ByKeyKernel::Ballot, ByKeyKernel::Match, ByKeyKernel::Hash];

    /// The id in entry names and on the command line.
    ///
    /// ```
    /// assert_eq!(reduction::by_key::ByKeyKernel::Ballot.id(), "ballot");
    /// ```
    pub fn id(self) -> &'static str {
        match self {
            ByKeyKernel::Atomic => "atomic",
            ByKeyKernel::Ballot => "ballot",
            ByKeyKernel::Match => "match",
            ByKeyKernel::Hash => "hash",
        }
    }

    /// What the kernel does, in a few words.
    ///
    /// ```
    /// assert_eq!(reduction::by_key::ByKeyKernel::Atomic.title(), "one atomic add per element");
    /// ```
    pub fn title(self) -> &'static str {
        match self {
            ByKeyKernel::Atomic => "one atomic add per element",
            ByKeyKernel::Ballot => "warp-aggregated, get_peers loop (shfl + ballot)",
            ByKeyKernel::Match => "warp-aggregated, match.any.sync",
            ByKeyKernel::Hash => "block-aggregated, shared-memory hash table",
        }
    }

    /// The kernel with this id, or an error listing the valid ids.
    ///
    /// ```
    /// use reduction::by_key::ByKeyKernel;
    /// assert_eq!(ByKeyKernel::find("match").unwrap(), ByKeyKernel::Match);
    /// assert!(ByKeyKernel::find("sort").unwrap_err().to_string().contains("atomic, ballot, match, hash"));
    /// ```
    pub fn find(id: &str) -> Result<ByKeyKernel> {
        ByKeyKernel::ALL.into_iter().find(|k| k.id() == id).ok_or_else(|| Error::UnknownKernel {
            name: id.to_string(),
            valid: ByKeyKernel::ALL.map(|k| k.id()).join(", "),
        })
    }

    /// The PTX entry for value type `ty`: `by_key_{id}_{ty}`.
    ///
    /// ```
    /// use reduction::{DType, by_key::ByKeyKernel};
    /// assert_eq!(ByKeyKernel::Match.entry(DType::F64), "by_key_match_f64");
    /// ```
    pub fn entry(self, ty: DType) -> String {
        format!("by_key_{}_{}", self.id(), ty.name())
    }

    /// Dynamic shared memory of a launch with values of `value_bytes` bytes.
    pub(crate) fn smem(self, value_bytes: usize) -> u32 {
        match self {
            ByKeyKernel::Hash => HASH_SLOTS * (value_bytes as u32 + 4),
            _ => 0,
        }
    }

    /// Elements one block takes per step of its grid-stride loop.
    pub(crate) fn elements_per_block(self) -> usize {
        match self {
            ByKeyKernel::Hash => HASH_SLOTS as usize / 2,
            _ => BY_KEY_BLOCK as usize,
        }
    }
}

/// Every by-key entry the PTX must have (the registry test checks both ways).
///
/// ```
/// let e = reduction::by_key::entries();
/// assert_eq!(e.len(), 8);
/// assert!(e.contains(&"by_key_atomic_f32".to_string()));
/// ```
/// Every by-key entry the PTX must have (the registry test checks both ways).
///
/// ```
/// let e = reduction::by_key::entries();
/// assert_eq!(e.len(), 8);
/// assert!(e.contains(&"by_key_atomic_f32".to_string()));
/// ```
pub fn entries() -> Vec<String> {
    ByKeyKernel::ALL.iter().flat_map(|k| value_types().map(|ty| k.entry(ty))).collect()
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A value type reduction by key supports: `f32` or `f64`.
///
/// ```
/// use reduction::by_key::ByKeyValue;
/// fn total<T: ByKeyValue>(values: &[T]) -> f64 {
///     values.iter().map(|v| v.to_f64()).sum()
/// }
/// assert_eq!(total(&[0.5f32, 0.25]), 0.75);
/// ```
pub trait ByKeyValue: Element + sealed::Sealed {
    /// The value, exactly, as `f64`.
    ///
    /// ```
    /// use reduction::by_key::ByKeyValue;
    /// assert_eq!(0.1f32.to_f64(), 0.1f32 as f64);
    /// assert_eq!(0.1f64.to_f64(), 0.1);
    /// ```
    fn to_f64(self) -> f64;
}

impl ByKeyValue for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl ByKeyValue for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

/// `num_keys` as the kernels' `u32`. Keys are `u32` and `u32::MAX` marks an
/// idle lane, so at most `u32::MAX` keys.
pub(crate) fn kernel_num_keys(num_keys: usize) -> Result<u32> {
    u32::try_from(num_keys).map_err(|_| Error::Unsupported {
        kernel: "reduce_by_key".into(),
        what: format!("{num_keys} keys"),
        valid: format!("at most {} keys (u32 keys; {:#x} marks an idle lane)", u32::MAX, u32::MAX),
    })
}

/// The checks of host input, made before anything is copied or launched:
/// as many keys as values, `num_keys` representable, every key below
/// `num_keys` (the first one that is not is named with its index).
///
/// ```
/// use reduction::{Error, by_key::check_host_input};
/// assert!(check_host_input(&[0, 3, 1], 3, 4).is_ok());
/// assert!(matches!(check_host_input(&[0, 3], 3, 4), Err(Error::LengthMismatch { keys: 2, values: 3 })));
/// assert!(matches!(check_host_input(&[0, 4, 9], 3, 4), Err(Error::KeyOutOfRange { index: 1, key: 4, num_keys: 4 })));
/// ```
pub fn check_host_input(keys: &[u32], values_len: usize, num_keys: usize) -> Result<()> {
    if keys.len() != values_len {
        return Err(Error::LengthMismatch { keys: keys.len(), values: values_len });
    }
    kernel_num_keys(num_keys)?;
    match keys.iter().position(|&k| k as usize >= num_keys) {
        Some(index) => Err(Error::KeyOutOfRange { index, key: keys[index], num_keys }),
        None => Ok(()),
    }
}
