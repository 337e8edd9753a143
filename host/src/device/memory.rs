//! The device's memory: buffers ([`Gpu::alloc`]), pinned host memory the
//! device writes ([`Mapped`]), and how much there is.

use std::sync::atomic::Ordering;

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, DeviceRepr, DeviceSlice, DriverError, PinnedHostSlice, ValidAsZeroBits};

use super::Gpu;
use crate::error::{Error, Result, driver};

/// Pinned host memory mapped into the device's address space
/// ([`Gpu::alloc_mapped`]): kept alive as long as this value, freed on drop.
pub(crate) struct Mapped<T> {
    /// The host address, read once at allocation (a `usize`, so the owner
    /// stays `Send` and `Sync`).
    host: usize,
    /// The address kernels use.
    addr: u64,
    _slice: PinnedHostSlice<T>,
}

impl<T> Mapped<T> {
    /// The host's pointer to the first element; reads and writes through it
    /// are volatile, since the device may write the memory too.
    pub(crate) fn ptr(&self) -> *mut T {
        self.host as *mut T
    }

    /// The device address of the first element.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }
}

/// The GPU whose memory holds `buffer`: its context's, in which cudarc
/// allocated it.
pub(crate) fn gpu_of<T>(buffer: &impl DeviceSlice<T>) -> usize {
    buffer.stream().context().ordinal()
}

impl Gpu {
    /// That `buffer` (`what`: an input, the output, ...) is in this GPU's
    /// memory, else [`Error::OtherGpu`]: a kernel given another GPU's
    /// address faults and ends the context.
    pub(crate) fn holds<T>(&self, buffer: &impl DeviceSlice<T>, what: &'static str) -> Result<()> {
        let (on, expected) = (gpu_of(buffer), self.info.ordinal);
        if on == expected { Ok(()) } else { Err(Error::OtherGpu { what, on, expected }) }
    }

    /// `(free, total)` device memory in bytes.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// let (free, total) = gpu.mem_info()?;
    /// assert!(free <= total);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(driver("cuMemGetInfo"))
    }

    /// How many device buffers [`Gpu::alloc`] has allocated so far (to check
    /// that repeated reductions reuse their scratch buffers).
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// let data = vec![1.0f32; 1 << 20];
    /// r.sum(&data)?;
    /// let before = r.gpu().allocations();
    /// r.sum(&data)?; // same type and size: the scratch buffers are reused
    /// assert_eq!(r.gpu().allocations(), before);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn allocations(&self) -> usize {
        self.allocations.load(Ordering::Relaxed)
    }

    /// Allocate `len` elements; running out of memory, or a `len` whose
    /// bytes overflow `usize`, is [`Error::OutOfMemory`].
    ///
    /// The memory is not initialised: write it before reading it.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// let mut buf = gpu.alloc::<f32>(1 << 20, "my buffer")?;
    /// gpu.stream().memset_zeros(&mut buf).unwrap();
    /// assert_eq!(buf.len(), 1 << 20);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn alloc<T: DeviceRepr>(&self, len: usize, what: &'static str) -> Result<CudaSlice<T>> {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        let out_of_memory = |bytes| {
            let (free, total) = self.mem_info().unwrap_or((0, self.info.total_mem));
            Error::OutOfMemory { what, bytes, free, total }
        };
        // a length whose bytes overflow is refused here: cudarc would
        // allocate the wrapped size under the full length
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| out_of_memory(usize::MAX))?;
        // SAFETY: the memory is uninitialised; every caller writes before it reads.
        match unsafe { self.stream.alloc::<T>(len.max(1)) } {
            Ok(slice) => Ok(slice),
            Err(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY)) => Err(out_of_memory(bytes)),
            Err(e) => Err(driver("cuMemAlloc")(e)),
        }
    }

    /// `len` elements of pinned host memory mapped into the device's address
    /// space, with its host and device addresses: kernels store to it, the
    /// host reads it after synchronizing. The memory is not initialised.
    pub(crate) fn alloc_mapped<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<Mapped<T>> {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the memory is uninitialised; the callers let a kernel write
        // it before they read it.
        let slice = unsafe { self.ctx.alloc_pinned_with_flags::<T>(len.max(1), sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(driver("cuMemHostAlloc"))?;
        let host = slice.as_ptr().map_err(driver("cuEventSynchronize"))?;
        let mut addr: sys::CUdeviceptr = 0;
        // SAFETY: `host` is the start of a live cuMemHostAlloc allocation made
        // with DEVICEMAP in this context; the call writes one address.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut addr, host as *mut std::ffi::c_void, 0) }
            .result()
            .map_err(driver("cuMemHostGetDevicePointer"))?;
        Ok(Mapped { host: host as usize, addr, _slice: slice })
    }
}
