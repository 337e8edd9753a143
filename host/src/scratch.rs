//! The device memory a [`Reducer`] keeps between calls, one set per element
//! type: staging for host input, the launches' partials and ticket, the
//! last job planned, and the result slot in mapped host memory that a
//! reduction to the host waits on.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use cudarc::driver::CudaSlice;

use crate::device::{Gpu, Mapped};
use crate::dispatch::Request;
use crate::error::{Result, driver};
use crate::input::Element;
use crate::launch::{Buffers, Job, Out};
use gpu::op::Bits;

/// Device buffers of one element type, kept between calls and grown to the
/// largest size seen.
pub(crate) struct Scratch<T> {
    pub work: Work<T>,
    /// Host input is copied here (the second input of a dot product to the second).
    pub staging: [CudaSlice<T>; 2],
}

/// The buffers a reduction to the host writes.
pub(crate) struct Work<T> {
    pub(crate) bufs: Buffers<T>,
    /// The result, when the caller wants it on the host: written by the
    /// kernel straight into host memory.
    pub(crate) result: MappedSlot,
    /// The first level's partials when they are finished on the CPU.
    pub(crate) partials: CudaSlice<T>,
    /// The last reduction planned and the request it answered, for calls
    /// that repeat it: planning is then skipped.
    pub(crate) last: Option<(Request, Job)>,
}

/// One result (at most 16 bytes: [`Bits`]) in pinned host memory mapped
/// into the device's address space. A reduction to the host lets its last
/// launch store the result here, so the call waits for the kernel and
/// reads: no copy is queued after the kernel (about half the time of a
/// small reduction, measured in `reduce latency`).
pub(crate) struct MappedSlot {
    /// The value (16 bytes) and the flag a single-pass kernel sets once the
    /// value is there.
    value: Mapped<u64>,
    flag: Mapped<u32>,
}

/// How long a caller polls the completion flag before it waits in the
/// driver (which also reports a kernel that failed): longer than any
/// reduction of a few GiB takes.
const POLL_FOR: std::time::Duration = std::time::Duration::from_millis(5);

impl MappedSlot {
    fn new(gpu: &Gpu) -> Result<Self> {
        Ok(MappedSlot { value: gpu.alloc_mapped::<u64>(2)?, flag: gpu.alloc_mapped::<u32>(1)? })
    }

    /// Where the kernel writes, the flag cleared first.
    pub(crate) fn out(&self) -> Out {
        // SAFETY: the flag's one `u32`, alive as long as `self`; no kernel
        // writes it now (the last one that did has finished: its caller
        // waited for it).
        unsafe { self.flag.ptr().write_volatile(0) };
        Out { addr: self.value.addr(), len: 1, done: self.flag.addr() }
    }

    /// Wait until the kernel has set the flag, polling host memory (no
    /// driver call); after [`POLL_FOR`], or for kernels that do not set it
    /// (`polls` false), wait in the driver.
    pub(crate) fn wait(&self, gpu: &Gpu, polls: bool) -> Result<()> {
        if polls {
            let start = std::time::Instant::now();
            // SAFETY: as in `out`; the device writes the flag, hence volatile.
            while unsafe { self.flag.ptr().read_volatile() } == 0 {
                if start.elapsed() > POLL_FOR {
                    return gpu.synchronize();
                }
                std::hint::spin_loop();
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            return Ok(());
        }
        gpu.synchronize()
    }

    /// The value, once the work that writes it has finished (the caller
    /// synchronizes the stream first).
    pub(crate) fn read<V: Bits>(&self) -> V {
        const { assert!(size_of::<V>() <= 16 && align_of::<V>() <= 8) };
        // SAFETY: `value` is the slot's 16 bytes, allocated (and kept alive
        // by `self`) and 8-byte aligned (two u64s from cuMemHostAlloc), room
        // and alignment for V (asserted above); every bit pattern is a V
        // (`Bits`); the kernel that wrote it is done with it (`wait`), and
        // the read is volatile because the device, not Rust, wrote it.
        unsafe { self.value.ptr().cast::<V>().read_volatile() }
    }
}

/// `count` values of `V` from the first bytes of `words` (results a
/// kernel wrote into a buffer of another type).
pub(crate) fn values_of<V: Bits, W: Copy>(words: &[W], count: usize) -> Vec<V> {
    let count = count.min(size_of_val(words) / size_of::<V>().max(1));
    (0..count)
        .map(|i| {
            // SAFETY: value `i` lies within `words` (`count` is capped above); every
            // bit pattern is a `V` (`Bits`), and the read is unaligned.
            unsafe { words.as_ptr().cast::<u8>().add(i * size_of::<V>()).cast::<V>().read_unaligned() }
        })
        .collect()
}

/// Every element type's scratch, by type (a reducer keeps one).
pub(crate) type ScratchMap = Mutex<HashMap<TypeId, Box<dyn Any + Send>>>;

/// `T`'s scratch in `map`, made on `gpu` on first use, with the map locked.
pub(crate) fn typed<'a, T: Element>(map: &'a ScratchMap, gpu: &Gpu) -> Result<TypedScratch<'a, T>> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(TypeId::of::<T>()) {
        let buffer = || gpu.alloc::<T>(1, "scratch");
        let mut ticket = gpu.alloc::<u32>(1, "the single-pass ticket")?;
        gpu.stream().memset_zeros(&mut ticket).map_err(driver("cuMemsetD8"))?;
        let bufs = Buffers { levels: [buffer()?, buffer()?], ticket };
        let work = Work { bufs, result: MappedSlot::new(gpu)?, partials: buffer()?, last: None };
        slot.insert(Box::new(Scratch::<T> { work, staging: [buffer()?, buffer()?] }));
    }
    Ok(TypedScratch { guard: map, _t: std::marker::PhantomData })
}

/// The device buffers of shaped reductions, kept between calls.
pub(crate) struct ShapeScratch {
    /// Pieces of segments across tiles, or column chunks' partials (8-byte words).
    pub(crate) partials: CudaSlice<u64>,
    /// Tickets, zero between launches (every launch leaves them zero).
    pub(crate) tickets: CudaSlice<u32>,
    /// Results on their way to the host (8-byte words).
    pub(crate) results: CudaSlice<u64>,
}

/// The locked scratch map, viewed as one type's [`Scratch`].
pub(crate) struct TypedScratch<'a, T> {
    guard: MutexGuard<'a, HashMap<TypeId, Box<dyn Any + Send>>>,
    _t: std::marker::PhantomData<T>,
}

impl<T: 'static> std::ops::Deref for TypedScratch<'_, T> {
    type Target = Scratch<T>;
    fn deref(&self) -> &Scratch<T> {
        self.guard
            .get(&TypeId::of::<T>())
            .and_then(|b| b.downcast_ref())
            .expect("scratch() inserted this type before building the guard")
    }
}

impl<T: 'static> std::ops::DerefMut for TypedScratch<'_, T> {
    fn deref_mut(&mut self) -> &mut Scratch<T> {
        self.guard
            .get_mut(&TypeId::of::<T>())
            .and_then(|b| b.downcast_mut())
            .expect("scratch() inserted this type before building the guard")
    }
}
