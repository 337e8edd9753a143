//! A device buffer for one result (or several), every byte poisoned (0xff: NaN, or an
//! index no input has) before a kernel writes it, then read back: how a
//! test or the benchmark checks a result left on the device
//! ([`Reducer::enqueue`](reduction::Reducer::enqueue)), whose
//! outputs need not be cudarc `DeviceRepr` types (an [`Arg`](reduction::op::Arg)).

use std::marker::PhantomData;

use reduction::cudarc::driver::{CudaSlice, CudaViewMut};
use reduction::op::Bits;
use reduction::{Error, Gpu, Result};

/// `V`s on the device (one, or [`Poisoned::many`]), poisoned until a
/// kernel writes them.
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
    len: usize,
    _v: PhantomData<V>,
}

impl<V: Bits> Poisoned<V> {
    /// A fresh buffer for one `V`, every byte 0xff.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::many(gpu, 1)
    }

    /// A fresh buffer for `len` `V`s back to back (at least one), every
    /// byte 0xff.
    pub fn many(gpu: &Gpu, len: usize) -> Result<Self> {
        let len = len.max(1);
        let bytes =
            gpu.stream().clone_htod(&vec![0xffu8; len * size_of::<V>()]).map_err(Error::from_driver("cuMemcpyHtoD"))?;
        Ok(Poisoned { bytes, len, _v: PhantomData })
    }

    /// The buffer as its `V`s, for a kernel to write.
    pub fn view(&mut self) -> Result<CudaViewMut<'_, V>> {
        // SAFETY: every bit pattern is a `V` (`Bits`); the buffer holds
        // `len · size_of::<V>()` bytes and, a fresh allocation, is aligned for it.
        unsafe { self.bytes.transmute_mut::<V>(self.len) }
            .ok_or_else(|| Error::Invalid("no room for the result".into()))
    }

    /// The (first) value now there (waits for the stream).
    pub fn read(&self, gpu: &Gpu) -> Result<V> {
        let all = self.read_all(gpu)?;
        all.into_iter().next().ok_or_else(|| Error::Invalid("no result to read".into()))
    }

    /// Every value now there, in order (waits for the stream).
    pub fn read_all(&self, gpu: &Gpu) -> Result<Vec<V>> {
        let bytes = gpu.stream().clone_dtoh(&self.bytes).map_err(Error::from_driver("cuMemcpyDtoH"))?;
        let size = size_of::<V>();
        if bytes.len() != self.len * size {
            return Err(Error::Invalid(format!("read {} bytes of {} {size}-byte results", bytes.len(), self.len)));
        }
        // SAFETY: each chunk holds `size_of::<V>()` bytes, any bit pattern
        // is a `V`, and the read is unaligned.
        Ok(bytes.chunks_exact(size).map(|c| unsafe { c.as_ptr().cast::<V>().read_unaligned() }).collect())
    }
}
