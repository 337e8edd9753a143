//! Sums by key on [`Reducer`]: keys and values on the host or the device,
//! the sums back on the host ([`Reducer::reduce_by_key`]) or left on the
//! device ([`Reducer::reduce_by_key_into`]).
//!
//! Errors, never panics, for what a caller can get wrong: keys and values of
//! different lengths ([`Error::LengthMismatch`]), a host key `>= num_keys`
//! ([`Error::KeyOutOfRange`], found before anything runs), device keys `>=
//! num_keys` ([`Error::KeysOutOfRange`] from [`Reducer::reduce_by_key`]:
//! the kernels skip and count them),
//! an output shorter than `num_keys` ([`Error::OutputTooShort`]), a kernel
//! that is not a by-key kernel or other options ([`Error::Unsupported`]),
//! and device memory running out ([`Error::OutOfMemory`]).

use cudarc::driver::{CudaSlice, CudaViewMut};

use crate::by_key::{ByKeyValue, check_host_input, kernel_num_keys};
use crate::dispatch::ByKeyKernel;
use crate::error::{Error, Result, driver, host_vec};
use crate::input::len;
use crate::input::{Input, Source};
use crate::launch::Out;
use crate::options::Options;
use crate::reducer::Reducer;

impl Reducer {
    /// The sum of the values of each key `0..num_keys` (0 for a key with no
    /// values): `sums[k] = Σ values[i] where keys[i] == k`. Keys and values
    /// are host slices or device buffers; the sums come back to the host.
    /// `opts.kernel` may name one of the [by-key kernels](crate::by_key::kernels)
    /// (the default is `match`); other options are refused. Float sums are
    /// added with atomics, in an order that may change from run to run.
    ///
    /// Errors, before any GPU work for host keys: keys and values of
    /// different lengths ([`Error::LengthMismatch`]), a key `>= num_keys`
    /// ([`Error::KeyOutOfRange`] on the host; [`Error::KeysOutOfRange`] for
    /// device keys, which the kernels skip and count; the sums of the
    /// others are computed all the same). `num_keys` sums that fit in
    /// neither the device's memory nor the host's: [`Error::OutOfMemory`],
    /// [`Error::HostMemory`].
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, registry::Kernel};
    /// let r = Reducer::new()?;
    /// let (keys, values) = ([0u32, 0, 2, 2, 2], [1.0f64, 2.0, 3.0, 4.0, 5.0]);
    /// assert_eq!(r.reduce_by_key(&keys, &values, 4, &Options::default())?, [3.0, 0.0, 12.0, 0.0]);
    /// let hash = Options { kernel: Some(Kernel::find("hash")?), ..Options::default() };
    /// assert_eq!(r.reduce_by_key(&keys, &values, 3, &hash)?, [3.0, 0.0, 12.0]);
    /// assert!(r.reduce_by_key(&keys, &values, 2, &hash).is_err()); // key 2
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_by_key<T: ByKeyValue, K: Input<u32> + ?Sized, D: Input<T> + ?Sized>(
        &self,
        keys: &K,
        values: &D,
        num_keys: usize,
        opts: &Options,
    ) -> Result<Vec<T>> {
        let kernel = check_by_key(keys, values, num_keys, opts)?;
        let stream = self.gpu().stream();
        let mut device = self.gpu().alloc::<T>(num_keys, "the per-key sums")?;
        let mut sums = host_vec(num_keys, "the per-key sums", std::iter::repeat_n(T::default(), num_keys))?;
        let counter = self.queue_by_key(kernel, keys, values, &mut device.as_view_mut(), num_keys)?;
        if num_keys > 0 {
            stream.memcpy_dtoh(&device.slice(..num_keys), &mut sums).map_err(driver("cuMemcpyDtoH"))?;
        }
        if let Some(counter) = counter {
            let mut count = [0u64];
            stream.memcpy_dtoh(&counter, &mut count).map_err(driver("cuMemcpyDtoH"))?;
            if count[0] > 0 {
                return Err(Error::KeysOutOfRange { count: count[0], n: len(&keys.source()), num_keys });
            }
        }
        Ok(sums)
    }

    /// [`Reducer::reduce_by_key`] with the sums in `sums[..num_keys]` on the
    /// device (set to zero first, then added to), queued on the reducer's
    /// stream without waiting, as [`Reducer::reduce_into`] is. Host keys are
    /// checked before anything runs; device keys at or past `num_keys` are
    /// skipped by the kernels, and only [`Reducer::reduce_by_key`], which
    /// waits, reports them. An output shorter than `num_keys` is
    /// [`Error::OutputTooShort`].
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer};
    /// let r = Reducer::new()?;
    /// let s = r.gpu().stream();
    /// let keys = s.clone_htod(&[1u32, 1, 0]).unwrap();
    /// let mut sums = s.alloc_zeros::<f32>(2).unwrap();
    /// r.reduce_by_key_into(&keys, &[1.0f32, 2.0, 5.0], &mut sums.as_view_mut(), 2, &Options::default())?;
    /// assert_eq!(s.clone_dtoh(&sums).unwrap(), [5.0, 3.0]);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_by_key_into<T: ByKeyValue, K: Input<u32> + ?Sized, D: Input<T> + ?Sized>(
        &self,
        keys: &K,
        values: &D,
        sums: &mut CudaViewMut<'_, T>,
        num_keys: usize,
        opts: &Options,
    ) -> Result<()> {
        let kernel = check_by_key(keys, values, num_keys, opts)?;
        if sums.len() < num_keys {
            return Err(Error::OutputTooShort { len: sums.len(), num_keys });
        }
        self.gpu().holds(sums, "the sums")?;
        self.queue_by_key(kernel, keys, values, sums, num_keys).map(drop)
    }

    /// Zero `sums[..num_keys]` and queue `kernel` on checked keys and
    /// values (host ones copied to the device first); the counter of keys
    /// out of range it adds to, or `None` when there are no keys. Buffers
    /// dropped here are freed in stream order, after the kernel.
    fn queue_by_key<T: ByKeyValue, K: Input<u32> + ?Sized, D: Input<T> + ?Sized>(
        &self,
        kernel: ByKeyKernel,
        keys: &K,
        values: &D,
        sums: &mut CudaViewMut<'_, T>,
        num_keys: usize,
    ) -> Result<Option<CudaSlice<u64>>> {
        let gpu = self.gpu();
        let mut sums = sums.slice_mut(..num_keys);
        if num_keys > 0 {
            gpu.stream().memset_zeros(&mut sums).map_err(driver("cuMemsetD8"))?;
        }
        let n = len(&keys.source());
        if n == 0 {
            return Ok(None);
        }
        let mut key_copy;
        let keys = match keys.source() {
            Source::Device(view) => {
                gpu.holds(&view, "the keys")?;
                view
            }
            Source::Host(host) => {
                key_copy = gpu.alloc::<u32>(host.len(), "the keys")?;
                self.stage(&mut key_copy, host)?
            }
        };
        self.with_inputs::<T, D, _>(&[values], false, |_, values, _| {
            let mut counter = gpu.alloc::<u64>(1, "the out-of-range key counter")?;
            gpu.stream().memset_zeros(&mut counter).map_err(driver("cuMemsetD8"))?;
            let plan = crate::dispatch::by_key_plan(kernel.row(), T::DTYPE, n, gpu)?;
            let (out, _guard) = Out::of(&mut sums, gpu);
            gpu.launch_by_key(&plan, &keys, &values, out, &mut counter.as_view_mut())?;
            Ok(Some(counter))
        })
    }
}

/// The checks made before anything is copied or launched: as many keys as
/// values, `num_keys` representable, host keys below `num_keys`, and the
/// options (a by-key kernel or none, nothing else).
fn check_by_key<T: ByKeyValue, K: Input<u32> + ?Sized, D: Input<T> + ?Sized>(
    keys: &K,
    values: &D,
    num_keys: usize,
    opts: &Options,
) -> Result<ByKeyKernel> {
    let kernel = ByKeyKernel::of(opts.kernel)?;
    if *opts != (Options { kernel: opts.kernel, ..Options::default() }) {
        return Err(Error::Unsupported {
            kernel: kernel.row().id.into(),
            what: "options other than the kernel (its blocks and grid come from the keys)".into(),
            valid: "Options { kernel, ..Options::default() }".into(),
        });
    }
    let values = len(&values.source());
    match keys.source() {
        Source::Host(host) => check_host_input(host, values, num_keys)?,
        Source::Device(view) if view.len() != values => {
            return Err(Error::LengthMismatch { keys: view.len(), values });
        }
        Source::Device(_) => {
            kernel_num_keys(num_keys)?;
        }
    }
    Ok(kernel)
}
