//! Reduction by key (seed 003): one sum per key, for more keys than fit in
//! shared memory, as in a particle-in-cell code where element `i` is a
//! particle with value `values[i]` in cell `keys[i]`.
//!
//! * [`Reducer::reduce_by_key`]: host slices in, `Vec` of per-key sums out.
//! * [`Reducer::reduce_by_key_into`]: device buffers in and out.
//! * [`ByKeyKernel`]: the four kernels (`gpu/src/kernels/by_key.rs` and
//!   `by_key_hash.rs`): one atomic per element; seed 003's warp-aggregated
//!   atomics with its `get_peers` loop or with `match.any.sync`; per-block
//!   aggregation in a shared-memory hash table.
//! * [`KeyDist`], [`generate_keys`], [`reference()`]: the seed's key
//!   distributions, and the CPU group-by sum every result is checked against.
//! * [`bench()`] and [`print_table`]: elements per second and the speedup over
//!   plain atomics per distribution and type (`docs/by_key.md`).
//!
//! Errors, never panics, for what a caller can get wrong: keys and values of
//! different lengths ([`Error::LengthMismatch`]), a host key `>= num_keys`
//! ([`Error::KeyOutOfRange`], found before anything runs), device keys `>=
//! num_keys` ([`Error::KeysOutOfRange`]: the kernels skip and count them),
//! an output shorter than `num_keys` ([`Error::OutputTooShort`]), and device
//! memory running out ([`Error::OutOfMemory`]).
//!
//! ```no_run
//! use reduction::Reducer;
//! # fn main() -> reduction::Result<()> {
//! let r = Reducer::new()?;
//! let keys = [0u32, 0, 2, 2, 2];
//! let values = [1.0f64, 2.0, 3.0, 4.0, 5.0];
//! assert_eq!(r.reduce_by_key(&keys, &values, 4)?, [3.0, 0.0, 12.0, 0.0]);
//! # Ok(()) }
//! ```
//!
//! ```
//! use reduction::by_key::{generate_keys, reference, KeyDist};
//! let keys = generate_keys(KeyDist::Sorted, 100, 10, 1);
//! let values = vec![1.0f64; 100];
//! assert_eq!(reference(&keys, &values, 10).sums, vec![10.0; 10]);
//! ```

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};
use serde::Serialize;

use crate::bench::WARMUP;
use crate::data::{Pattern, Sample, generate, splitmix64};
use crate::error::{Error, Result, driver};
use crate::reducer::{Element, Reducer};
use crate::reference::Reference;
use crate::timing::{Stats, time_runs};

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

/// The value types the by-key kernels are compiled for.
///
/// ```
/// assert!(reduction::by_key::VALUE_TYPES.contains(&"f64"));
/// ```
pub const VALUE_TYPES: [&str; 2] = ["f32", "f64"];

/// A kernel for reduction by key.
///
/// ```
/// use reduction::ByKeyKernel;
/// assert_eq!(ByKeyKernel::default(), ByKeyKernel::Match);
/// assert_eq!(ByKeyKernel::ALL.map(|k| k.id()), ["atomic", "ballot", "match", "hash"]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ByKeyKernel {
    /// One global atomic add per element: the baseline.
    Atomic,
    /// Seed 003: peers found with its `get_peers` loop (shuffle + ballot per
    /// distinct key), summed with `reduce_peers`, one atomic per group.
    Ballot,
    /// As `Ballot`, with the peers from one `match.any.sync` (sm_70+). The
    /// default: about one instruction more than `Atomic` when every key
    /// differs, far fewer atomics when keys repeat within a warp.
    #[default]
    Match,
    /// Per-block pre-aggregation of 1024-element tiles in a shared-memory
    /// hash table (seed 003's third competitor).
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
    /// assert_eq!(reduction::ByKeyKernel::Ballot.id(), "ballot");
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
    /// assert_eq!(reduction::ByKeyKernel::Atomic.title(), "one atomic add per element");
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
    /// use reduction::ByKeyKernel;
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
    /// assert_eq!(reduction::ByKeyKernel::Match.entry("f64"), "by_key_match_f64");
    /// ```
    pub fn entry(self, ty: &str) -> String {
        format!("by_key_{}_{ty}", self.id())
    }

    /// Dynamic shared memory of a launch with values of `value_bytes` bytes.
    fn smem(self, value_bytes: usize) -> u32 {
        match self {
            ByKeyKernel::Hash => HASH_SLOTS * (value_bytes as u32 + 4),
            _ => 0,
        }
    }

    /// Elements one block takes per step of its grid-stride loop.
    fn elements_per_block(self) -> usize {
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
pub fn entries() -> Vec<String> {
    ByKeyKernel::ALL.iter().flat_map(|k| VALUE_TYPES.map(|ty| k.entry(ty))).collect()
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A value type reduction by key supports: `f32` or `f64`.
///
/// ```
/// use reduction::ByKeyValue;
/// fn total<T: ByKeyValue>(values: &[T]) -> f64 {
///     values.iter().map(|v| v.to_f64()).sum()
/// }
/// assert_eq!(total(&[0.5f32, 0.25]), 0.75);
/// ```
pub trait ByKeyValue: Element + Sample + Reference + sealed::Sealed {
    /// The value, exactly, as `f64`.
    ///
    /// ```
    /// use reduction::ByKeyValue;
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
fn kernel_num_keys(num_keys: usize) -> Result<u32> {
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

impl Reducer {
    /// The sum of `values[i]` over each key: `sums[k] = Σ values[i] for
    /// keys[i] == k`, `k < num_keys`, with the default kernel
    /// ([`ByKeyKernel::Match`]). Keys with no elements sum to 0.
    ///
    /// The order of the additions varies (atomics), so float sums may differ
    /// from run to run in the last bits; each is within `(count_k + 1) · ε ·
    /// Σ|x|` of the exact sum (see [`KeyedSums::tolerance`]).
    ///
    /// Errors: [`Error::LengthMismatch`], [`Error::KeyOutOfRange`] (checked on
    /// the host before anything runs), [`Error::OutOfMemory`].
    ///
    /// Each call allocates device buffers for the keys, values and sums; to
    /// reduce repeatedly, keep them on the device and call
    /// [`Reducer::reduce_by_key_into`].
    ///
    /// ```no_run
    /// use reduction::{Error, Reducer};
    /// let r = Reducer::new()?;
    /// assert_eq!(r.reduce_by_key(&[1u32, 1, 0], &[0.5f32, 0.25, 2.0], 2)?, [2.0, 0.75]);
    /// let err = r.reduce_by_key(&[0u32, 5], &[1.0f32, 1.0], 2).unwrap_err();
    /// assert!(matches!(err, Error::KeyOutOfRange { index: 1, key: 5, num_keys: 2 }));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_by_key<T: ByKeyValue>(&self, keys: &[u32], values: &[T], num_keys: usize) -> Result<Vec<T>> {
        self.reduce_by_key_with(keys, values, num_keys, ByKeyKernel::default())
    }

    /// [`Reducer::reduce_by_key`] with a chosen kernel.
    ///
    /// ```no_run
    /// use reduction::{ByKeyKernel, Reducer};
    /// let r = Reducer::new()?;
    /// let sums = r.reduce_by_key_with(&[0u32, 0, 1], &[1.0f64, 2.0, 3.0], 2, ByKeyKernel::Ballot)?;
    /// assert_eq!(sums, [3.0, 3.0]);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_by_key_with<T: ByKeyValue>(
        &self,
        keys: &[u32],
        values: &[T],
        num_keys: usize,
        kernel: ByKeyKernel,
    ) -> Result<Vec<T>> {
        check_host_input(keys, values.len(), num_keys)?;
        let mut sums = vec![T::default(); num_keys];
        if keys.is_empty() || num_keys == 0 {
            return Ok(sums);
        }
        let gpu = self.gpu();
        let stream = gpu.stream();
        let mut d_keys = gpu.alloc::<u32>(keys.len(), "the keys")?;
        stream.memcpy_htod(keys, &mut d_keys).map_err(driver("cuMemcpyHtoD"))?;
        let mut d_values = gpu.alloc::<T>(values.len(), "the values")?;
        stream.memcpy_htod(values, &mut d_values).map_err(driver("cuMemcpyHtoD"))?;
        let mut d_sums = gpu.alloc::<T>(num_keys, "the per-key sums")?;
        self.reduce_by_key_into(
            &d_keys.slice(..keys.len()),
            &d_values.slice(..values.len()),
            &mut d_sums.as_view_mut(),
            num_keys,
            kernel,
        )?;
        stream.memcpy_dtoh(&d_sums.slice(..num_keys), &mut sums).map_err(driver("cuMemcpyDtoH"))?;
        Ok(sums)
    }

    /// Device buffers: zero `sums[0..num_keys]`, then add each `values[i]` to
    /// `sums[keys[i]]` with `kernel`. `sums[num_keys..]` is left alone.
    ///
    /// Keys `>= num_keys` cannot be checked on the host without copying
    /// them: the kernel skips them (nothing is written outside
    /// `sums[0..num_keys]`) and counts them; if any were found, this returns
    /// [`Error::KeysOutOfRange`] with their number, and `sums` holds the sums
    /// of the other elements. Reading the count waits for the kernel.
    ///
    /// Errors: [`Error::LengthMismatch`], [`Error::OutputTooShort`],
    /// [`Error::KeysOutOfRange`], [`Error::OutOfMemory`].
    ///
    /// ```no_run
    /// use reduction::{ByKeyKernel, Error, Reducer};
    /// let r = Reducer::new()?;
    /// let stream = r.gpu().stream();
    /// let keys = stream.clone_htod(&[0u32, 1, 7, 1]).unwrap();
    /// let values = stream.clone_htod(&[1.0f32, 2.0, 4.0, 8.0]).unwrap();
    /// let mut sums = stream.alloc_zeros::<f32>(2).unwrap();
    /// let err = r.reduce_by_key_into(&keys.as_view(), &values.as_view(), &mut sums.as_view_mut(), 2, ByKeyKernel::Match);
    /// assert!(matches!(err, Err(Error::KeysOutOfRange { count: 1, n: 4, num_keys: 2 })));
    /// assert_eq!(stream.clone_dtoh(&sums).unwrap(), [1.0, 10.0]);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_by_key_into<T: ByKeyValue>(
        &self,
        keys: &CudaView<'_, u32>,
        values: &CudaView<'_, T>,
        sums: &mut CudaViewMut<'_, T>,
        num_keys: usize,
        kernel: ByKeyKernel,
    ) -> Result<()> {
        if keys.len() != values.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: values.len() });
        }
        kernel_num_keys(num_keys)?;
        if sums.len() < num_keys {
            return Err(Error::OutputTooShort { len: sums.len(), num_keys });
        }
        let mut sums = sums.slice_mut(..num_keys);
        let gpu = self.gpu();
        if num_keys > 0 {
            gpu.stream().memset_zeros(&mut sums).map_err(driver("cuMemsetD8"))?;
        }
        if keys.is_empty() {
            return Ok(());
        }
        let mut bad = gpu.alloc::<u64>(1, "the out-of-range key counter")?;
        gpu.stream().memset_zeros(&mut bad).map_err(driver("cuMemsetD8"))?;
        self.enqueue_by_key(kernel, keys, values, &mut sums, &mut bad.as_view_mut())?;
        let mut count = [0u64];
        gpu.stream().memcpy_dtoh(&bad, &mut count).map_err(driver("cuMemcpyDtoH"))?;
        match count[0] {
            0 => Ok(()),
            count => Err(Error::KeysOutOfRange { count, n: keys.len(), num_keys }),
        }
    }

    /// Queue one launch of `kernel`: add `values[i]` to `sums[keys[i]]` for
    /// keys below `sums.len()`, and the number of the others to `bad[0]`.
    fn enqueue_by_key<T: ByKeyValue>(
        &self,
        kernel: ByKeyKernel,
        keys: &CudaView<'_, u32>,
        values: &CudaView<'_, T>,
        sums: &mut CudaViewMut<'_, T>,
        bad: &mut CudaViewMut<'_, u64>,
    ) -> Result<()> {
        let (entry, grid, smem) = self.by_key_shape::<T>(kernel, keys.len())?;
        self.gpu().launch_by_key(&entry, keys, values, sums, bad, grid, BY_KEY_BLOCK, smem)
    }

    /// Entry, grid and shared memory of `kernel` on `n` elements of `T`: the
    /// blocks that fit on the GPU at once, or fewer for small inputs.
    fn by_key_shape<T: ByKeyValue>(&self, kernel: ByKeyKernel, n: usize) -> Result<(String, u32, u32)> {
        let entry = kernel.entry(T::NAME);
        let smem = kernel.smem(size_of::<T>());
        let resident = self.gpu().resident_blocks(&entry, BY_KEY_BLOCK, smem)?;
        let needed = n.div_ceil(kernel.elements_per_block()).max(1);
        let grid = resident.min(u32::try_from(needed).unwrap_or(u32::MAX));
        Ok((entry, grid, smem))
    }
}

/// How the keys are ordered: seed 003's three distributions.
///
/// ```
/// use reduction::by_key::{KeyDist, generate_keys, groups_per_warp};
/// assert_eq!(KeyDist::ALL.map(|d| d.name()), ["sorted", "window32", "window100", "random"]);
/// let sorted = generate_keys(KeyDist::Sorted, 3200, 320, 1);
/// assert_eq!(groups_per_warp(&sorted), 4.0); // 10 elements per key
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum KeyDist {
    /// Sorted, `n / num_keys` elements per key (the seed's particles sorted
    /// by cell, 10 per cell).
    Sorted,
    /// Partially sorted: sorted, then every element moved by a random
    /// distance below the window (sort by `i + U[0, window)`), as when
    /// particles were sorted a few time steps ago.
    Window(u32),
    /// Uniformly random keys.
    Random,
}

impl KeyDist {
    /// The distributions of the benchmark and the tests.
    ///
    /// ```
    /// let names: Vec<String> = reduction::by_key::KeyDist::ALL.iter().map(|d| d.name()).collect();
    /// assert_eq!(names, ["sorted", "window32", "window100", "random"]);
    /// ```
    pub const ALL: [KeyDist; 4] = [KeyDist::Sorted, KeyDist::Window(32), KeyDist::Window(100), KeyDist::Random];

    /// `sorted`, `window32`, `random`.
    ///
    /// ```
    /// assert_eq!(reduction::by_key::KeyDist::Window(100).name(), "window100");
    /// ```
    pub fn name(self) -> String {
        match self {
            KeyDist::Sorted => "sorted".into(),
            KeyDist::Window(w) => format!("window{w}"),
            KeyDist::Random => "random".into(),
        }
    }

    /// Parse a name of [`KeyDist::name`].
    ///
    /// ```
    /// use reduction::by_key::KeyDist;
    /// assert_eq!(KeyDist::parse("window32").unwrap(), KeyDist::Window(32));
    /// assert!(KeyDist::parse("shuffled").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<KeyDist> {
        match s {
            "sorted" => Ok(KeyDist::Sorted),
            "random" => Ok(KeyDist::Random),
            _ => s.strip_prefix("window").and_then(|w| w.parse().ok()).map(KeyDist::Window).ok_or_else(|| {
                Error::Invalid(format!("unknown key distribution {s:?} (valid: sorted, windowW, random)"))
            }),
        }
    }
}

/// `n` keys below `num_keys` in distribution `dist`, seeded. With
/// `num_keys == 0` every key is 0 (out of range: for error tests).
///
/// ```
/// use reduction::by_key::{KeyDist, generate_keys};
/// assert_eq!(generate_keys(KeyDist::Sorted, 6, 3, 1), [0, 0, 1, 1, 2, 2]);
/// let w = generate_keys(KeyDist::Window(4), 1000, 100, 1);
/// assert!(w.iter().all(|&k| k < 100) && w.windows(2).any(|p| p[0] > p[1]));
/// assert_eq!(generate_keys(KeyDist::Random, 100, 7, 3), generate_keys(KeyDist::Random, 100, 7, 3));
/// ```
pub fn generate_keys(dist: KeyDist, n: usize, num_keys: u32, seed: u64) -> Vec<u32> {
    let sorted = |i: usize| (i as u128 * num_keys as u128 / n as u128) as u32;
    let random = |i: usize| splitmix64(splitmix64(seed) ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    match dist {
        KeyDist::Sorted => (0..n).map(sorted).collect(),
        KeyDist::Window(w) => {
            let mut moved: Vec<(u64, u32)> =
                (0..n).map(|i| (i as u64 + random(i) % w.max(1) as u64, sorted(i))).collect();
            moved.sort_unstable();
            moved.into_iter().map(|(_, k)| k).collect()
        }
        KeyDist::Random => (0..n).map(|i| (((random(i) >> 32) * num_keys as u64) >> 32) as u32).collect(),
    }
}

/// The average number of distinct keys in each warp's 32 consecutive
/// elements: the atomics per warp of the warp-aggregated kernels (32 for
/// plain atomics).
///
/// ```
/// use reduction::by_key::groups_per_warp;
/// assert_eq!(groups_per_warp(&[5; 64]), 1.0);
/// assert_eq!(groups_per_warp(&(0..64).collect::<Vec<u32>>()), 32.0);
/// ```
pub fn groups_per_warp(keys: &[u32]) -> f64 {
    if keys.is_empty() {
        return 0.0;
    }
    let mut total = 0usize;
    let mut warp = Vec::with_capacity(32);
    for chunk in keys.chunks(32) {
        warp.clear();
        warp.extend_from_slice(chunk);
        warp.sort_unstable();
        warp.dedup();
        total += warp.len();
    }
    total as f64 / keys.len().div_ceil(32) as f64
}

/// The CPU group-by sum: per key, the compensated f64 sum, the sum of
/// absolute values and the number of elements.
///
/// ```
/// let r = reduction::by_key::reference(&[0, 1, 0], &[1.0f64, -2.0, 3.0], 2);
/// assert_eq!(r.sums, [4.0, -2.0]);
/// assert_eq!(r.abs_sums, [4.0, 2.0]);
/// assert_eq!(r.counts, [2, 1]);
/// assert_eq!(r.out_of_range, 0);
/// ```
#[derive(Clone, Debug)]
pub struct KeyedSums {
    /// Neumaier-compensated f64 sum per key.
    pub sums: Vec<f64>,
    /// Σ|x| per key.
    pub abs_sums: Vec<f64>,
    /// Elements per key.
    pub counts: Vec<u64>,
    /// Elements whose key is `>= num_keys` (left out of every sum).
    pub out_of_range: u64,
}

/// The serial CPU reference of reduction by key, written independently of
/// the kernels: plain loops, f64, Neumaier's compensation per key. Keys
/// `>= num_keys` are counted in [`KeyedSums::out_of_range`] and left out, as
/// the kernels do.
///
/// ```
/// let r = reduction::by_key::reference(&[1, 0, 1, 9], &[1.0f32, 2.0, -4.0, 8.0], 2);
/// assert_eq!((r.sums, r.abs_sums, r.counts, r.out_of_range), (vec![2.0, -3.0], vec![2.0, 5.0], vec![1, 2], 1));
/// ```
pub fn reference<T: ByKeyValue>(keys: &[u32], values: &[T], num_keys: usize) -> KeyedSums {
    let mut r = KeyedSums {
        sums: vec![0.0; num_keys],
        abs_sums: vec![0.0; num_keys],
        counts: vec![0; num_keys],
        out_of_range: 0,
    };
    let mut compensation = vec![0.0f64; num_keys];
    for (&key, &v) in keys.iter().zip(values) {
        let k = key as usize;
        if k >= num_keys {
            r.out_of_range += 1;
            continue;
        }
        let x = v.to_f64();
        let (sum, c) = (&mut r.sums[k], &mut compensation[k]);
        let t = *sum + x;
        *c += if sum.abs() >= x.abs() { (*sum - t) + x } else { (x - t) + *sum };
        *sum = t;
        r.abs_sums[k] += x.abs();
        r.counts[k] += 1;
    }
    for (sum, c) in r.sums.iter_mut().zip(compensation) {
        *sum += c;
    }
    r
}

impl KeyedSums {
    /// How far a GPU sum of key `k` may be from [`KeyedSums::sums`]:
    /// `(count_k + 1) · ε · Σ|x|`, with `ε` the value type's machine epsilon.
    ///
    /// Any order of the `count_k - 1` additions, each rounded in the value
    /// type, is within `(count_k - 1) · ε/2 · Σ|x|` of the exact sum (to first
    /// order), and the reference is within rounding of f64 of it; the bound
    /// takes twice that and some. A key with no elements must be exactly 0.
    ///
    /// ```
    /// let r = reduction::by_key::reference(&[0, 0, 0], &[1.0f32, -2.0, 0.5], 2);
    /// assert_eq!(r.tolerance(0, f32::EPSILON as f64), 4.0 * f32::EPSILON as f64 * 3.5);
    /// assert_eq!(r.tolerance(1, f32::EPSILON as f64), 0.0);
    /// ```
    pub fn tolerance(&self, k: usize, epsilon: f64) -> f64 {
        (self.counts[k] + 1) as f64 * epsilon * self.abs_sums[k]
    }

    /// `Ok` if every `got[k]` is within [`KeyedSums::tolerance`] of the
    /// reference (`exact`: equal), else [`Error::Mismatch`] naming `case`, the
    /// first wrong key, its count and the tolerance.
    ///
    /// ```
    /// let r = reduction::by_key::reference(&[1, 1], &[0.5f64, 0.25], 2);
    /// assert!(r.check(&[0.0, 0.75], "ok", true).is_ok());
    /// let err = r.check(&[0.0, 0.5], "case", false).unwrap_err().to_string();
    /// assert!(err.starts_with("case: key 1 (2 elements"), "{err}");
    /// assert!(r.check(&[0.0], "short", false).is_err());
    /// ```
    pub fn check<T: ByKeyValue>(&self, got: &[T], case: &str, exact: bool) -> Result<()> {
        if got.len() != self.sums.len() {
            return Err(Error::Mismatch {
                case: case.to_string(),
                got: format!("{} sums", got.len()),
                expected: format!("{} sums", self.sums.len()),
            });
        }
        for (k, &g) in got.iter().enumerate() {
            let tol = if exact { 0.0 } else { self.tolerance(k, T::EPSILON) };
            let expected = self.sums[k];
            let within = (g.to_f64() - expected).abs() <= tol; // false for NaN
            if !within {
                return Err(Error::Mismatch {
                    case: format!("{case}: key {k} ({} elements, tolerance {tol:e})", self.counts[k]),
                    got: format!("{g:?}"),
                    expected: format!("{expected:?}"),
                });
            }
        }
        Ok(())
    }
}

/// One kernel on one input: check and timing.
///
/// ```no_run
/// let r = reduction::Reducer::new()?;
/// for row in reduction::by_key::bench(&r, 1 << 20, 1 << 16, 10)? {
///     println!("{} {} {}: {:.2} Gelem/s, {:.2}x", row.ty, row.dist, row.kernel, row.elements_per_s / 1e9, row.speedup);
/// }
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ByKeyRow {
    /// [`ByKeyKernel::id`].
    pub kernel: &'static str,
    /// `f32` or `f64`.
    pub ty: &'static str,
    /// [`KeyDist::name`].
    pub dist: String,
    /// Elements.
    pub n: usize,
    /// Keys.
    pub num_keys: u32,
    /// Distinct keys per warp of 32 elements (see [`groups_per_warp`]).
    pub groups_per_warp: f64,
    /// Blocks in the grid of the launch.
    pub grid: u32,
    /// Threads per block of the launch ([`BY_KEY_BLOCK`]).
    pub block: u32,
    /// Times of the whole operation: zero the sums, then the kernel.
    pub stats: Stats,
    /// Elements per second at the median time.
    pub elements_per_s: f64,
    /// The atomic kernel's median time over this one's, same type and keys.
    pub speedup: f64,
    /// Whether the checked run matched the CPU reference.
    pub ok: bool,
    /// The mismatch, when not `ok`.
    pub error: Option<String>,
}

/// Seeds of the benchmark's keys and values.
const BENCH_SEED: u64 = 3;

/// The benchmark: for f32 and f64 and each of [`KeyDist::ALL`], `n` elements
/// with `keys` keys (the seed: 10^7 and 10^6), every [`ByKeyKernel`] checked
/// once against [`reference()`] through the same launch path, then timed
/// `runs` times after [`WARMUP`] runs. Each timed run zeroes the sums and
/// launches the kernel (the whole operation, the same for every kernel).
///
/// A wrong result does not stop the benchmark: the row has `ok: false` and
/// the mismatch in `error`.
///
/// ```no_run
/// use reduction::{Reducer, by_key};
/// let r = Reducer::new()?;
/// let rows = by_key::bench(&r, 10_000_000, 1_000_000, 20)?; // the seed's sizes
/// assert_eq!(rows.len(), 4 * 2 * 4); // distributions × types × kernels
/// assert!(rows.iter().all(|row| row.ok), "{:?}", rows.iter().find(|row| !row.ok));
/// by_key::print_table(&rows);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn bench(reducer: &Reducer, n: usize, keys: u32, runs: usize) -> Result<Vec<ByKeyRow>> {
    if n == 0 || keys == 0 || runs == 0 {
        return Err(Error::Invalid(format!(
            "by-key benchmark: n = {n}, keys = {keys}, runs = {runs}: each must be at least 1"
        )));
    }
    kernel_num_keys(keys as usize)?;
    let mut rows = Vec::new();
    for dist in KeyDist::ALL {
        let key_data = generate_keys(dist, n, keys, BENCH_SEED);
        let groups = groups_per_warp(&key_data);
        rows.extend(bench_type::<f32>(reducer, dist, &key_data, groups, keys, runs)?);
        rows.extend(bench_type::<f64>(reducer, dist, &key_data, groups, keys, runs)?);
    }
    Ok(rows)
}

/// [`bench()`] for one value type and one key distribution.
fn bench_type<T: ByKeyValue>(
    reducer: &Reducer,
    dist: KeyDist,
    keys: &[u32],
    groups: f64,
    num_keys: u32,
    runs: usize,
) -> Result<Vec<ByKeyRow>> {
    let n = keys.len();
    let values: Vec<T> = generate(Pattern::Random, n, BENCH_SEED);
    let expected = reference(keys, &values, num_keys as usize);
    let gpu = reducer.gpu();
    let stream = gpu.stream();
    let mut d_keys = gpu.alloc::<u32>(n, "the benchmark keys")?;
    stream.memcpy_htod(keys, &mut d_keys).map_err(driver("cuMemcpyHtoD"))?;
    let mut d_values = gpu.alloc::<T>(n, "the benchmark values")?;
    stream.memcpy_htod(&values, &mut d_values).map_err(driver("cuMemcpyHtoD"))?;
    let mut d_sums: CudaSlice<T> = gpu.alloc(num_keys as usize, "the per-key sums")?;
    let mut bad = gpu.alloc::<u64>(1, "the out-of-range key counter")?;
    let (keys_view, values_view) = (d_keys.slice(..n), d_values.slice(..n));

    let mut rows: Vec<ByKeyRow> = Vec::new();
    for kernel in ByKeyKernel::ALL {
        let case = format!("by_key {} {} {} n={n} keys={num_keys}", kernel.id(), T::NAME, dist.name());
        // the check, through the same launch path as the timed runs
        let checked =
            reducer.reduce_by_key_into(&keys_view, &values_view, &mut d_sums.as_view_mut(), num_keys as usize, kernel);
        let error = match checked {
            Ok(()) => {
                let got = stream.clone_dtoh(&d_sums).map_err(driver("cuMemcpyDtoH"))?;
                expected.check(&got, &case, false).err().map(|e| e.to_string())
            }
            Err(e @ Error::KeysOutOfRange { .. }) => Some(format!("{case}: {e}")),
            Err(e) => return Err(e),
        };

        stream.memset_zeros(&mut bad).map_err(driver("cuMemsetD8"))?;
        let stats = time_runs(gpu, WARMUP, runs, |_| {
            stream.memset_zeros(&mut d_sums).map_err(driver("cuMemsetD8"))?;
            reducer.enqueue_by_key(kernel, &keys_view, &values_view, &mut d_sums.as_view_mut(), &mut bad.as_view_mut())
        })?;
        let (_, grid, _) = reducer.by_key_shape::<T>(kernel, n)?;
        let baseline = rows.first().map_or(stats.median_ms, |r| r.stats.median_ms);
        rows.push(ByKeyRow {
            kernel: kernel.id(),
            ty: T::NAME,
            dist: dist.name(),
            n,
            num_keys,
            groups_per_warp: groups,
            grid,
            block: BY_KEY_BLOCK,
            elements_per_s: n as f64 / (stats.median_ms * 1e-3),
            speedup: baseline / stats.median_ms,
            ok: error.is_none(),
            error,
            stats,
        });
    }
    Ok(rows)
}

/// Print the rows as two Markdown tables: every measurement, then the
/// speedup over `atomic` per distribution (rows) and type × kernel
/// (columns), as the seed's figure.
///
/// ```
/// reduction::by_key::print_table(&[]); // no rows: only the header of the first table
/// ```
pub fn print_table(rows: &[ByKeyRow]) {
    print!("{}", format_table(rows));
}

/// The text [`print_table`] prints.
///
/// ```
/// let text = reduction::by_key::format_table(&[]);
/// assert!(text.starts_with("| type | keys |"));
/// ```
pub fn format_table(rows: &[ByKeyRow]) -> String {
    let mut out = String::from(
        "| type | keys | groups/warp | kernel | median ms | min ms | Gelem/s | speedup vs atomic | check |\n\
         |---|---|---:|---|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        out += &format!(
            "| {} | {} | {:.2} | {} | {:.3} | {:.3} | {:.2} | {:.2}x | {} |\n",
            r.ty,
            r.dist,
            r.groups_per_warp,
            r.kernel,
            r.stats.median_ms,
            r.stats.min_ms,
            r.elements_per_s / 1e9,
            r.speedup,
            if r.ok { "ok" } else { "MISMATCH" }
        );
    }
    if let Some(first) = rows.first() {
        out += &format!("\nSpeedup over `atomic` (median times; n = {}, {} keys):\n\n", first.n, first.num_keys);
        let mut dists: Vec<&str> = Vec::new();
        let mut columns: Vec<(&str, &str)> = Vec::new();
        for r in rows.iter().filter(|r| r.kernel != ByKeyKernel::Atomic.id()) {
            if !dists.contains(&r.dist.as_str()) {
                dists.push(&r.dist);
            }
            if !columns.contains(&(r.ty, r.kernel)) {
                columns.push((r.ty, r.kernel));
            }
        }
        out += "| keys |";
        for (ty, kernel) in &columns {
            out += &format!(" {ty} {kernel} |");
        }
        out += "\n|---|";
        out += &"---:|".repeat(columns.len());
        out += "\n";
        for dist in dists {
            out += &format!("| {dist} |");
            for (ty, kernel) in &columns {
                match rows.iter().find(|r| r.dist == dist && r.ty == *ty && r.kernel == *kernel) {
                    Some(r) => out += &format!(" {:.2}x |", r.speedup),
                    None => out += " |",
                }
            }
            out += "\n";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_keeps_the_keys_and_moves_them_little() {
        let (n, w) = (10_000, 32);
        let sorted = generate_keys(KeyDist::Sorted, n, 1000, 5);
        let mut moved = generate_keys(KeyDist::Window(w), n, 1000, 5);
        // an element at position p came from position >= p - w + 1 and <= p + w - 1
        for (p, &k) in moved.iter().enumerate() {
            let lo = p.saturating_sub(w as usize);
            let hi = (p + w as usize).min(n - 1);
            assert!(sorted[lo] <= k && k <= sorted[hi], "position {p}: key {k}");
        }
        moved.sort_unstable();
        assert_eq!(moved, sorted);
    }

    #[test]
    fn sorted_has_n_over_keys_per_key() {
        let keys = generate_keys(KeyDist::Sorted, 10_000_000, 1_000_000, 0);
        let r = reference(&keys, &vec![1.0f32; keys.len()], 1_000_000);
        assert!(r.counts.iter().all(|&c| c == 10));
    }

    #[test]
    fn random_keys_cover_the_range() {
        let keys = generate_keys(KeyDist::Random, 100_000, 10, 9);
        let r = reference(&keys, &vec![1.0f64; keys.len()], 10);
        assert!(r.counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{:?}", r.counts);
        assert_eq!(generate_keys(KeyDist::Random, 10, 0, 1), [0; 10]);
    }

    #[test]
    fn the_table_has_one_line_per_row_and_a_speedup_matrix() {
        let row = |kernel: &'static str, ty: &'static str, ms: f64| ByKeyRow {
            kernel,
            ty,
            dist: "sorted".into(),
            n: 100,
            num_keys: 10,
            groups_per_warp: 3.5,
            grid: 1,
            block: 256,
            stats: Stats::of(vec![ms]),
            elements_per_s: 100.0 / (ms * 1e-3),
            speedup: 2.0 / ms,
            ok: ty == "f32",
            error: None,
        };
        let rows =
            [row("atomic", "f32", 2.0), row("match", "f32", 1.0), row("atomic", "f64", 2.0), row("match", "f64", 4.0)];
        let text = format_table(&rows);
        assert!(text.contains("| f64 | sorted | 3.50 | match | 4.000 |"), "{text}");
        assert!(text.contains("| keys | f32 match | f64 match |"), "{text}");
        assert!(text.contains("| sorted | 2.00x | 0.50x |"), "{text}");
        assert!(text.contains("MISMATCH"), "{text}");
    }

    #[test]
    fn tolerance_rejects_a_missing_element() {
        // every value is >= 2^-23 in magnitude; dropping one must be caught
        let keys = generate_keys(KeyDist::Sorted, 1000, 100, 1);
        let values: Vec<f32> = generate(Pattern::Large, 1000, 1);
        let r = reference(&keys, &values, 100);
        let mut got: Vec<f32> = r.sums.iter().map(|&s| s as f32).collect();
        assert!(r.check(&got, "exact", false).is_ok());
        let k = (0..100).find(|&k| values[10 * k] != 0.0).unwrap();
        got[k] -= values[10 * k];
        assert!(r.check(&got, "one element missing", false).is_err());
    }
}
