//! Reduction by key (the voting-and-shuffling article): the kernels and the value types. One sum
//! per key, for more keys than fit in shared memory, as in a
//! particle-in-cell code where element `i` is a particle with value
//! `values[i]` in cell `keys[i]`.
//!
//! * [`kernels`]: the four kernels of the registry (`gpu/src/kernels/by_key.rs` and
//!   `by_key_hash.rs`), chosen with [`Options::kernel`](crate::Options::kernel): one atomic per element; the voting-and-shuffling article's warp-aggregated
//!   atomics with its `get_peers` loop or with `match.any.sync`; per-block
//!   aggregation in a shared-memory hash table.
//! * [`Reducer::reduce_by_key`](crate::Reducer::reduce_by_key) and
//!   [`Reducer::reduce_by_key_into`](crate::Reducer::reduce_by_key_into): the
//!   API (`reducer/by_key.rs`).
//!
//! The key distributions and the CPU group-by sum every result is checked
//! against are the test kit's (`reduction-testkit`, `testkit::by_key`).

use crate::error::{Error, Result};
use crate::input::Element;
use crate::registry::{Family, Kernel};
use gpu::names::DType;
/// The value types the by-key kernels are compiled for (`gpu/src/names.rs`).
///
/// ```
/// assert!(reduction::by_key::value_types().contains(&reduction::DType::F64));
/// ```
pub use gpu::names::by_key_types as value_types;

/// The by-key launches' block and the hash table's slots (the dispatch's
/// choices).
pub use crate::dispatch::{BY_KEY_BLOCK, HASH_SLOTS};

/// The by-key kernels of the registry, baseline first; the default is
/// [`BY_KEY_MATCH`](crate::registry::BY_KEY_MATCH).
///
/// ```
/// let ids: Vec<&str> = reduction::by_key::kernels().map(|k| k.id).collect();
/// assert_eq!(ids, ["atomic", "ballot", "match", "hash"]);
/// ```
pub fn kernels() -> impl Iterator<Item = &'static Kernel> {
    Family::ByKey.kernels()
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
    /// The value type as a run-time value.
    const DTYPE: DType;
}

impl ByKeyValue for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl ByKeyValue for f64 {
    const DTYPE: DType = DType::F64;
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
