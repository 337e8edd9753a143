//! Holding the stream while the host queues work: the hold kernel
//! (`gpu/src/kernels/hold.rs`, NVIDIA nvbench's "blocking kernel") spins on
//! a flag in mapped host memory, so that everything queued behind it starts
//! only when the host lets it go, and then runs back to back, however long
//! the host took to queue it. Benchmarks use it to time short kernels
//! without the host's submission in the timed region.
//!
//! The kernel is in the library's PTX (its registry test lists the entry);
//! its host side is here, with the benchmarks that use it: the flag words and
//! the launch, through the library's [`Gpu`] and cudarc.
//!
//! ```no_run
//! use std::time::Duration;
//! use testkit::hold::Hold;
//! let r = reduction::Reducer::new()?;
//! let gpu = r.gpu();
//! let mut hold = Hold::new(gpu)?;
//! hold.launch(Duration::from_millis(200))?;
//! // ... queue work on gpu.stream(): nothing of it starts yet ...
//! hold.release()?; // lets it go and waits for all of it
//! # Ok::<(), reduction::Error>(())
//! ```

use std::time::Duration;

use gpu::names::{HOLD_ENTRY, HOLD_RELEASED, HOLD_TIMED_OUT};
use reduction::cudarc::driver::{LaunchConfig, PinnedHostSlice, PushKernelArg, sys};
use reduction::registry::HOLD;
use reduction::{Error, Gpu, Result};

/// One `u32` of pinned host memory mapped into the device's address space:
/// the host reads and writes it through a volatile pointer, the kernel
/// through its device address. Freed on drop.
struct Word {
    /// The host address, read once at allocation (a `usize`, so the owner
    /// stays `Send` and `Sync`).
    host: usize,
    /// The address the kernel uses.
    addr: u64,
    _slice: PinnedHostSlice<u32>,
}

impl Word {
    fn new(gpu: &Gpu) -> Result<Self> {
        let ctx = gpu.stream().context();
        // SAFETY: the memory is uninitialised; `Hold::launch` writes it
        // before any kernel or host read.
        let slice = unsafe { ctx.alloc_pinned_with_flags::<u32>(1, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(Error::from_driver("cuMemHostAlloc"))?;
        let host = slice.as_ptr().map_err(Error::from_driver("cuEventSynchronize"))?;
        let mut addr: sys::CUdeviceptr = 0;
        // SAFETY: `host` is the start of a live cuMemHostAlloc allocation made
        // with DEVICEMAP in this context; the call writes one address.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut addr, host as *mut std::ffi::c_void, 0) }
            .result()
            .map_err(Error::from_driver("cuMemHostGetDevicePointer"))?;
        Ok(Word { host: host as usize, addr, _slice: slice })
    }

    /// The host's pointer to the word; reads and writes through it are
    /// volatile, since the device may access it too.
    fn ptr(&self) -> *mut u32 {
        self.host as *mut u32
    }
}

/// The hold kernel's flag and outcome words, in mapped host memory, and the
/// stream it holds. Launch it ([`Hold::launch`]), queue work, then
/// [`Hold::release`]. Dropping a launched hold releases it and waits for
/// the stream, so the GPU never spins on memory that has been freed.
pub struct Hold<'a> {
    gpu: &'a Gpu,
    /// The flag the host sets (freed on drop, after the stream is idle).
    flag: Word,
    /// The outcome the kernel writes.
    outcome: Word,
    /// The timeout of the launch in flight, if one is.
    launched: Option<Duration>,
}

impl std::fmt::Debug for Hold<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hold").field("launched", &self.launched).finish()
    }
}

impl<'a> Hold<'a> {
    /// Allocate the flag and outcome words and load the kernel (its JIT
    /// compilation happens here, not at the first launch).
    pub fn new(gpu: &'a Gpu) -> Result<Self> {
        gpu.function_for(HOLD_ENTRY, HOLD.scheme.params())?;
        Ok(Hold { gpu, flag: Word::new(gpu)?, outcome: Word::new(gpu)?, launched: None })
    }

    /// Queue the hold kernel: work queued on the stream after this call waits
    /// until [`Hold::release`], or until `timeout` has passed on the GPU.
    /// An error if a launch is already in flight.
    pub fn launch(&mut self, timeout: Duration) -> Result<()> {
        if self.launched.is_some() {
            return Err(Error::Invalid("the hold kernel is already launched: release it first".into()));
        }
        // SAFETY: both words are live `u32`s owned by `self`; no kernel
        // reads or writes them now (none is launched: a release or drop
        // waited for the last one).
        unsafe {
            self.flag.ptr().write_volatile(0);
            self.outcome.ptr().write_volatile(0);
        }
        let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        let func = self.gpu.function_for(HOLD_ENTRY, HOLD.scheme.params())?;
        let mut args = self.gpu.stream().launch_builder(&func);
        args.arg(&self.flag.addr).arg(&self.outcome.addr).arg(&timeout_ns);
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `hold` has the signature (const u32*, u32*, u64)
        // (`gpu/src/entries.rs`); it reads `*flag` and writes `*outcome`, one
        // `u32` each, mapped (so the device reaches them) and owned by `self`,
        // which waits for the stream to pass the kernel before they are freed
        // (`release`, or `drop`); it stops after `timeout_ns` whatever the
        // flag says.
        unsafe { args.launch(cfg) }.map_err(|source| Error::Launch {
            entry: HOLD_ENTRY.to_string(),
            grid: 1,
            block: 1,
            smem: 0,
            source,
        })?;
        self.launched = Some(timeout);
        Ok(())
    }

    /// Set the flag, wait for everything queued on the stream, and check
    /// that the hold kernel was released by the flag: [`Error::HoldTimedOut`]
    /// if it gave up first (the work behind it then started while the host
    /// was still queueing), an error if no launch is in flight.
    pub fn release(&mut self) -> Result<()> {
        let Some(timeout) = self.launched.take() else {
            return Err(Error::Invalid("the hold kernel is not launched: nothing to release".into()));
        };
        self.set_flag();
        self.gpu.synchronize()?;
        // SAFETY: a live `u32` owned by `self`; the kernel that wrote it has
        // finished (the stream is idle).
        let outcome = unsafe { self.outcome.ptr().read_volatile() };
        outcome_result(outcome, timeout)
    }

    fn set_flag(&self) {
        // SAFETY: a live `u32` owned by `self`; the kernel only reads it.
        unsafe { self.flag.ptr().write_volatile(1) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

/// What the hold kernel's outcome word means.
fn outcome_result(outcome: u32, timeout: Duration) -> Result<()> {
    match outcome {
        HOLD_RELEASED => Ok(()),
        HOLD_TIMED_OUT => Err(Error::HoldTimedOut { timeout_ms: timeout.as_secs_f64() * 1e3 }),
        other => Err(Error::Invalid(format!(
            "the hold kernel left outcome {other} (expected {HOLD_RELEASED}: released, or {HOLD_TIMED_OUT}: timed out)"
        ))),
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        if self.launched.take().is_some() {
            // an early return between launch and release: let the GPU go and
            // wait for it before the words are freed (an error here has
            // already been reported by the call that failed, or will be by
            // the next one)
            self.set_flag();
            let _ = self.gpu.synchronize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_read_as_the_kernel_writes_them() {
        let t = Duration::from_millis(200);
        assert!(outcome_result(HOLD_RELEASED, t).is_ok());
        let timed_out = outcome_result(HOLD_TIMED_OUT, t).unwrap_err();
        assert!(matches!(timed_out, Error::HoldTimedOut { timeout_ms } if timeout_ms == 200.0), "{timed_out}");
        assert!(matches!(outcome_result(0, t), Err(Error::Invalid(m)) if m.contains("outcome 0")));
    }
}
