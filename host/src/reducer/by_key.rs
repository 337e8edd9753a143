//! Sums by key on [`Reducer`]: keys and values on the host or the device,
//! the sums back on the host ([`Reducer::reduce_by_key`]) or left on the
//! device ([`Reducer::reduce_by_key_into`]).
//!
//! Errors, never panics, for what a caller can get wrong: keys and values of
//! different lengths ([`Error::LengthMismatch`]), a host key `>= num_keys`
//! ([`Error::KeyOutOfRange`], found before anything runs), device keys `>=
//! num_keys` ([`Error::KeysOutOfRange`]: the kernels skip and count them),
//! an output shorter than `num_keys` ([`Error::OutputTooShort`]), a kernel
//! that is not a by-key kernel or other options ([`Error::Unsupported`]),
//! and device memory running out ([`Error::OutOfMemory`]).

use cudarc::driver::CudaViewMut;

use crate::by_key::{ByKeyValue, check_host_input, kernel_num_keys};
use crate::dispatch::ByKeyKernel;
use crate::error::{Error, Result, driver};
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
    /// device keys, which the kernels skip and count).
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
        check_by_key(keys, values, num_keys, opts)?;
        let mut sums = vec![T::default(); num_keys];
        if num_keys > 0 {
            let mut device = self.gpu().alloc::<T>(num_keys, "the per-key sums")?;
            self.reduce_by_key_into(keys, values, &mut device.as_view_mut(), num_keys, opts)?;
            self.gpu().stream().memcpy_dtoh(&device, &mut sums).map_err(driver("cuMemcpyDtoH"))?;
        }
        Ok(sums)
    }

    /// [`Reducer::reduce_by_key`] with the sums in `sums[..num_keys]` on the
    /// device (set to zero first, then added to); it waits for the
    /// kernel, to report keys out of range. An output shorter than
    /// `num_keys` is [`Error::OutputTooShort`].
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
        let gpu = self.gpu();
        let mut sums = sums.slice_mut(..num_keys);
        if num_keys > 0 {
            gpu.stream().memset_zeros(&mut sums).map_err(driver("cuMemsetD8"))?;
        }
        let n = len(&keys.source());
        if n == 0 {
            return Ok(());
        }
        let mut key_copy = gpu.alloc::<u32>(1, "the keys")?;
        let keys = match keys.source() {
            Source::Device(view) => view,
            Source::Host(host) => self.stage(&mut key_copy, host)?,
        };
        let (bad, count) = self.with_inputs::<T, D, _>(&[values], false, |_, values, _| {
            let mut bad = gpu.alloc::<u64>(1, "the out-of-range key counter")?;
            gpu.stream().memset_zeros(&mut bad).map_err(driver("cuMemsetD8"))?;
            let plan = crate::dispatch::by_key_plan(kernel.row(), T::DTYPE, n, gpu)?;
            let (out, _guard) = Out::of(&mut sums, gpu);
            gpu.launch_by_key(&plan, &keys, &values, out, &mut bad.as_view_mut())?;
            let mut count = [0u64];
            gpu.stream().memcpy_dtoh(&bad, &mut count).map_err(driver("cuMemcpyDtoH"))?;
            Ok((bad, count[0]))
        })?;
        drop(bad);
        match count {
            0 => Ok(()),
            count => Err(Error::KeysOutOfRange { count, n, num_keys }),
        }
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
