//! Reduction by key under test: the voting-and-shuffling article's key distributions and the CPU
//! group-by sum every result is checked against.
//!
//! ```
//! use testkit::by_key::{generate_keys, reference, KeyDist};
//! let keys = generate_keys(KeyDist::Sorted, 100, 10, 1)?;
//! let values = vec![1.0f64; 100];
//! assert_eq!(reference(&keys, &values, 10)?.sums, vec![10.0; 10]);
//! # Ok::<(), reduction::Error>(())
//! ```

use crate::data::{Sample, host_vec, splitmix64};
use crate::reference::Reference;
use reduction::{Error, Result, by_key::ByKeyValue};

/// A by-key value type as the tests and the benchmark use it: the library's
/// [`ByKeyValue`] (`f32`, `f64`) with this kit's serial reference (its
/// machine epsilon, for [`KeyedSums::tolerance`]) and seeded inputs.
///
/// ```
/// use testkit::by_key::{TestValue, reference};
/// use testkit::data::{Pattern, generate};
/// fn sums<T: TestValue>(keys: &[u32]) -> reduction::Result<Vec<f64>> {
///     let values: Vec<T> = generate(Pattern::Ones, keys.len(), 1)?;
///     Ok(reference(keys, &values, 2)?.sums)
/// }
/// assert_eq!(sums::<f32>(&[0, 1, 1])?, [1.0, 2.0]);
/// # Ok::<(), reduction::Error>(())
/// ```
pub trait TestValue: ByKeyValue + Reference + Sample + Default {}

impl<T: ByKeyValue + Reference + Sample + Default> TestValue for T {}

/// How the keys are ordered: the voting-and-shuffling article's three distributions.
///
/// ```
/// use testkit::by_key::{KeyDist, generate_keys, groups_per_warp};
/// assert_eq!(KeyDist::ALL.map(|d| d.name()), ["sorted", "window32", "window100", "random"]);
/// let sorted = generate_keys(KeyDist::Sorted, 3200, 320, 1)?;
/// assert_eq!(groups_per_warp(&sorted), 4.0); // 10 elements per key
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// let names: Vec<String> = testkit::by_key::KeyDist::ALL.iter().map(|d| d.name()).collect();
    /// assert_eq!(names, ["sorted", "window32", "window100", "random"]);
    /// ```
    pub const ALL: [KeyDist; 4] = [KeyDist::Sorted, KeyDist::Window(32), KeyDist::Window(100), KeyDist::Random];

    /// `sorted`, `window32`, `random`.
    ///
    /// ```
    /// assert_eq!(testkit::by_key::KeyDist::Window(100).name(), "window100");
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
    /// use testkit::by_key::KeyDist;
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
/// [`Error::HostMemory`] if they cannot be allocated.
///
/// ```
/// use testkit::by_key::{KeyDist, generate_keys};
/// assert_eq!(generate_keys(KeyDist::Sorted, 6, 3, 1)?, [0, 0, 1, 1, 2, 2]);
/// let w = generate_keys(KeyDist::Window(4), 1000, 100, 1)?;
/// assert!(w.iter().all(|&k| k < 100) && w.windows(2).any(|p| p[0] > p[1]));
/// assert_eq!(generate_keys(KeyDist::Random, 100, 7, 3)?, generate_keys(KeyDist::Random, 100, 7, 3)?);
/// assert!(matches!(generate_keys(KeyDist::Window(4), 1 << 61, 7, 3), Err(reduction::Error::HostMemory { .. })));
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn generate_keys(dist: KeyDist, n: usize, num_keys: u32, seed: u64) -> Result<Vec<u32>> {
    let sorted = |i: usize| (i as u128 * num_keys as u128 / n as u128) as u32;
    let random = |i: usize| splitmix64(splitmix64(seed) ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut keys = host_vec(n, 0, "the generated keys")?;
    match dist {
        KeyDist::Sorted => keys.iter_mut().enumerate().for_each(|(i, k)| *k = sorted(i)),
        KeyDist::Window(w) => {
            let mut moved = host_vec(n, (0, 0), "the generated keys' order")?;
            for (i, m) in moved.iter_mut().enumerate() {
                *m = (i as u64 + random(i) % w.max(1) as u64, sorted(i));
            }
            moved.sort_unstable();
            keys.iter_mut().zip(moved).for_each(|(k, (_, key))| *k = key);
        }
        KeyDist::Random => {
            keys.iter_mut().enumerate().for_each(|(i, k)| *k = (((random(i) >> 32) * num_keys as u64) >> 32) as u32)
        }
    }
    Ok(keys)
}

/// The average number of distinct keys in each warp's 32 consecutive
/// elements: the atomics per warp of the warp-aggregated kernels (32 for
/// plain atomics).
///
/// ```
/// use testkit::by_key::groups_per_warp;
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
/// let r = testkit::by_key::reference(&[0, 1, 0], &[1.0f64, -2.0, 3.0], 2)?;
/// assert_eq!(r.sums, [4.0, -2.0]);
/// assert_eq!(r.abs_sums, [4.0, 2.0]);
/// assert_eq!(r.counts, [2, 1]);
/// assert_eq!(r.out_of_range, 0);
/// # Ok::<(), reduction::Error>(())
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
/// [`Error::HostMemory`] if the `num_keys` sums cannot be allocated.
///
/// ```
/// let r = testkit::by_key::reference(&[1, 0, 1, 9], &[1.0f32, 2.0, -4.0, 8.0], 2)?;
/// assert_eq!((r.sums, r.abs_sums, r.counts, r.out_of_range), (vec![2.0, -3.0], vec![2.0, 5.0], vec![1, 2], 1));
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn reference<T: ByKeyValue>(keys: &[u32], values: &[T], num_keys: usize) -> Result<KeyedSums> {
    let what = "the reference's sums by key";
    let mut r = KeyedSums {
        sums: host_vec(num_keys, 0.0, what)?,
        abs_sums: host_vec(num_keys, 0.0, what)?,
        counts: host_vec(num_keys, 0, what)?,
        out_of_range: 0,
    };
    let mut compensation = host_vec(num_keys, 0.0f64, what)?;
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
    Ok(r)
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
    /// let r = testkit::by_key::reference(&[0, 0, 0], &[1.0f32, -2.0, 0.5], 2)?;
    /// assert_eq!(r.tolerance(0, f32::EPSILON as f64), 4.0 * f32::EPSILON as f64 * 3.5);
    /// assert_eq!(r.tolerance(1, f32::EPSILON as f64), 0.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn tolerance(&self, k: usize, epsilon: f64) -> f64 {
        (self.counts[k] + 1) as f64 * epsilon * self.abs_sums[k]
    }

    /// `Ok` if every `got[k]` is within [`KeyedSums::tolerance`] of the
    /// reference (`exact`: equal), else [`Error::Mismatch`] naming `case`, the
    /// first wrong key, its count and the tolerance.
    ///
    /// ```
    /// let r = testkit::by_key::reference(&[1, 1], &[0.5f64, 0.25], 2)?;
    /// assert!(r.check(&[0.0, 0.75], "ok", true).is_ok());
    /// let err = r.check(&[0.0, 0.5], "case", false).unwrap_err().to_string();
    /// assert!(err.starts_with("case: key 1 (2 elements"), "{err}");
    /// assert!(r.check(&[0.0], "short", false).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn check<T: ByKeyValue + Reference>(&self, got: &[T], case: &str, exact: bool) -> Result<()> {
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
            let within = approx::abs_diff_eq!(g.to_f64(), expected, epsilon = tol); // false for NaN
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Pattern, generate};

    #[test]
    fn window_keeps_the_keys_and_moves_them_little() {
        let (n, w) = (10_000, 32);
        let sorted = generate_keys(KeyDist::Sorted, n, 1000, 5).unwrap();
        let mut moved = generate_keys(KeyDist::Window(w), n, 1000, 5).unwrap();
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
        let keys = generate_keys(KeyDist::Sorted, 10_000_000, 1_000_000, 0).unwrap();
        let r = reference(&keys, &vec![1.0f32; keys.len()], 1_000_000).unwrap();
        assert!(r.counts.iter().all(|&c| c == 10));
    }

    #[test]
    fn random_keys_cover_the_range() {
        let keys = generate_keys(KeyDist::Random, 100_000, 10, 9).unwrap();
        let r = reference(&keys, &vec![1.0f64; keys.len()], 10).unwrap();
        assert!(r.counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{:?}", r.counts);
        assert_eq!(generate_keys(KeyDist::Random, 10, 0, 1).unwrap(), [0; 10]);
    }

    #[test]
    fn tolerance_rejects_a_missing_element() {
        // every value is >= 2^-23 in magnitude; dropping one must be caught
        let keys = generate_keys(KeyDist::Sorted, 1000, 100, 1).unwrap();
        let values: Vec<f32> = generate(Pattern::Large, 1000, 1).unwrap();
        let r = reference(&keys, &values, 100).unwrap();
        let mut got: Vec<f32> = r.sums.iter().map(|&s| s as f32).collect();
        assert!(r.check(&got, "exact", false).is_ok());
        let k = (0..100).find(|&k| values[10 * k] != 0.0).unwrap();
        got[k] -= values[10 * k];
        assert!(r.check(&got, "one element missing", false).is_err());
    }
}
