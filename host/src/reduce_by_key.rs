//! The reduction-by-key API: host slices in and a `Vec` of per-key sums
//! out ([`Reducer::reduce_by_key`]), or device buffers in and out
//! ([`Reducer::reduce_by_key_into`]).
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

use cudarc::driver::{CudaView, CudaViewMut};

use crate::by_key::{BY_KEY_BLOCK, ByKeyKernel, ByKeyValue};
use crate::by_key::{check_host_input, kernel_num_keys};
use crate::error::{Error, Result, driver};
use crate::reducer::Reducer;

impl Reducer {
    /// The sum of `values[i]` over each key: `sums[k] = Σ values[i] for
    /// keys[i] == k`, `k < num_keys`, with the default kernel
    /// ([`ByKeyKernel::Match`]). Keys with no elements sum to 0.
    ///
    /// The order of the additions varies (atomics), so float sums may differ
    /// from run to run in the last bits; each is within `(count_k + 1) · ε ·
    /// Σ|x|` of the exact sum (the test kit's `KeyedSums::tolerance`).
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
    /// use reduction::{Reducer, by_key::ByKeyKernel};
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
    /// use reduction::{Error, Reducer, by_key::ByKeyKernel};
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

    /// Queue one launch of `kernel` and return at once: add `values[i]` to
    /// `sums[keys[i]]` for keys below `sums.len()`, and the number of the
    /// others to `bad[0]`. Nothing is zeroed and nothing is waited for: the
    /// building block of [`Reducer::reduce_by_key_into`], for callers who
    /// time or batch launches themselves.
    ///
    /// ```no_run
    /// use reduction::{Reducer, by_key::ByKeyKernel};
    /// let r = Reducer::new()?;
    /// let s = r.gpu().stream();
    /// let (keys, values) = (s.clone_htod(&[1u32, 1]).unwrap(), s.clone_htod(&[2.0f32, 3.0]).unwrap());
    /// let (mut sums, mut bad) = (s.alloc_zeros::<f32>(2).unwrap(), s.alloc_zeros::<u64>(1).unwrap());
    /// r.enqueue_by_key(ByKeyKernel::Atomic, &keys.as_view(), &values.as_view(), &mut sums.as_view_mut(), &mut bad.as_view_mut())?;
    /// assert_eq!(s.clone_dtoh(&sums).unwrap(), [0.0, 5.0]);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn enqueue_by_key<T: ByKeyValue>(
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
    ///
    /// ```no_run
    /// use reduction::{Reducer, by_key::ByKeyKernel};
    /// let r = Reducer::new()?;
    /// let (entry, grid, _) = r.by_key_shape::<f64>(ByKeyKernel::Match, 1000)?;
    /// assert_eq!((entry.as_str(), grid), ("by_key_match_f64", 4)); // 256 elements per block
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn by_key_shape<T: ByKeyValue>(&self, kernel: ByKeyKernel, n: usize) -> Result<(String, u32, u32)> {
        crate::dispatch::by_key(kernel, T::DTYPE, n, self.gpu())
    }
}
