//! A device buffer for one result, every byte poisoned (0xff: NaN, or an
//! index no input has) before a kernel writes it, then read back: how a
//! test or the benchmark checks a result left on the device
//! ([`Reducer::enqueue`](reduction::Reducer::enqueue)), whose
//! outputs need not be cudarc `DeviceRepr` types (an [`Arg`](reduction::op::Arg)).

use std::marker::PhantomData;

use reduction::cudarc::driver::{CudaSlice, CudaViewMut};
use reduction::op::Bits;
use reduction::{Error, Gpu, Result};

/// One `V` on the device, poisoned until a kernel writes it.
///
/// ```no_run
/// use testkit::poisoned::Poisoned;
/// use reduction::{ArgMax, Options, Reducer, op::Arg};
/// let r = Reducer::new()?;
/// let x = r.gpu().stream().clone_htod(&[1.0f32, 7.0, 3.0]).unwrap();
/// let mut out = Poisoned::<Arg<f32>>::new(r.gpu())?;
/// let p = r.prepare::<ArgMax, f32>(3, &Options::default())?;
/// r.enqueue(&p, &[&x.as_view()], &mut out.view()?)?;
/// assert_eq!(out.read(r.gpu())?.index, 1);
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct Poisoned<V> {
    bytes: CudaSlice<u8>,
    _v: PhantomData<V>,
}

impl<V: Bits> Poisoned<V> {
    /// A fresh buffer, every byte 0xff.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let bytes =
            gpu.stream().clone_htod(&vec![0xffu8; size_of::<V>()]).map_err(Error::from_driver("cuMemcpyHtoD"))?;
        Ok(Poisoned { bytes, _v: PhantomData })
    }

    /// The buffer as one `V`, for a kernel to write.
    pub fn view(&mut self) -> Result<CudaViewMut<'_, V>> {
        // SAFETY: every bit pattern is a `V` (`Bits`); the buffer holds
        // `size_of::<V>()` bytes and, a fresh allocation, is aligned for it.
        unsafe { self.bytes.transmute_mut::<V>(1) }.ok_or_else(|| Error::Invalid("no room for the result".into()))
    }

    /// The value now there (waits for the stream).
    pub fn read(&self, gpu: &Gpu) -> Result<V> {
        let bytes = gpu.stream().clone_dtoh(&self.bytes).map_err(Error::from_driver("cuMemcpyDtoH"))?;
        if bytes.len() != size_of::<V>() {
            return Err(Error::Invalid(format!("read {} bytes of a {}-byte result", bytes.len(), size_of::<V>())));
        }
        // SAFETY: `bytes` holds `size_of::<V>()` bytes (checked), any bit
        // pattern is a `V`, and the read is unaligned.
        Ok(unsafe { bytes.as_ptr().cast::<V>().read_unaligned() })
    }
}
