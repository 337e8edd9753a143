//! Every kernel launch of the library. How a kernel is launched is a fact
//! of the registry ([`Scheme`]); this module reads it, once, in [`enqueue`]
//! and [`enqueue_partials`], and the `launch_*` functions of `kernels.rs`
//! (one per scheme) are the only places a kernel is started.

mod kernels;

use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr};

use crate::device::Gpu;
use crate::dispatch::{Level, Plan, scratch_sizes};
use crate::error::{Error, Result};
use crate::registry::{Kernel, Scheme};

/// A reduction, planned ([`Plan`]: the dispatch's decisions) with its
/// function loaded: everything the host works out before the first launch.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub plan: Plan,
    pub func: CudaFunction,
}

/// Where a launch writes its result(s): a device address and the elements
/// there. Made from a view the caller holds ([`Out::of`]) or from the
/// reducer's mapped host slot; the launch functions check `len`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Out {
    pub addr: u64,
    pub len: usize,
    /// A `u32` a single-pass kernel sets to 1 once `out[0]` is written and
    /// visible to the host, or 0 for none.
    pub done: u64,
}

impl Out {
    /// `view`'s address and length, and the guard cudarc uses to order the
    /// write with other streams: keep it until the launch is queued.
    pub fn of<'a, T>(view: &'a mut CudaViewMut<'_, T>, gpu: &'a Gpu) -> (Out, impl Drop + 'a) {
        let len = view.len();
        let (addr, guard) = view.device_ptr_mut(gpu.stream());
        (Out { addr, len, done: 0 }, guard)
    }

    /// [`Out::of`] for a view the caller gave: [`Error::OtherGpu`] unless
    /// it is in `gpu`'s memory, [`Error::Invalid`] unless it is aligned for
    /// `V` (a byte buffer viewed as [`Arg`](gpu::op::Arg)s can start
    /// anywhere, and a misaligned store would end the context).
    pub fn of_given<'a, V>(view: &'a mut CudaViewMut<'_, V>, gpu: &'a Gpu) -> Result<(Out, impl Drop + 'a)> {
        gpu.holds(view, "the output")?;
        let (out, guard) = Out::of(view, gpu);
        if out.addr % align_of::<V>() as u64 != 0 {
            return Err(Error::Invalid(format!(
                "the output at {:#x} is not aligned for {} ({} bytes)",
                out.addr,
                std::any::type_name::<V>(),
                align_of::<V>()
            )));
        }
        Ok((out, guard))
    }

    /// The first `len` elements of `T` of `buffer`, viewed as `len × size_of::<T>() / bytes`
    /// values of `bytes` bytes (a single-pass kernel's accumulators in a
    /// buffer of elements).
    pub(crate) fn bytes_of<T>(buffer: &mut CudaSlice<T>, gpu: &Gpu, bytes: usize) -> Out {
        let len = buffer.len() * size_of::<T>() / bytes;
        let (addr, _guard) = buffer.device_ptr_mut(gpu.stream());
        Out { addr, len, done: 0 }
    }

    /// The part from element `offset` on.
    fn skip<T>(self, offset: usize) -> Out {
        Out { addr: self.addr + (offset * size_of::<T>()) as u64, len: self.len.saturating_sub(offset), done: 0 }
    }
}

/// The device buffers the launches of one reduction use between its input
/// and its output, kept by the caller and grown as needed.
pub(crate) struct Buffers<T> {
    /// Partials of the even and odd levels (a single-pass kernel uses the
    /// first for its per-block partials, the second as a spare result slot).
    pub levels: [CudaSlice<T>; 2],
    /// The single-pass kernels' ticket counter: zeroed once, left zero by
    /// every launch.
    pub ticket: CudaSlice<u32>,
}

/// Make `buffer` hold at least `len` elements, freeing the old one first.
pub(crate) fn grow<T: DeviceRepr>(gpu: &Gpu, buffer: &mut CudaSlice<T>, len: usize, what: &'static str) -> Result<()> {
    if buffer.len() < len {
        *buffer = gpu.alloc(1, what)?; // drop the old buffer before the new one is taken
        *buffer = gpu.alloc(len, what)?;
    }
    Ok(())
}

/// `Misaligned` unless `data` starts at the alignment `kernel` needs.
fn check_alignment<T>(gpu: &Gpu, kernel: &Kernel, data: &CudaView<'_, T>) -> Result<()> {
    if kernel.align > 0 {
        let (addr, _) = data.device_ptr(gpu.stream());
        if addr % kernel.align as u64 != 0 {
            return Err(Error::Misaligned { kernel: kernel.id.to_string(), align: kernel.align, addr });
        }
    }
    Ok(())
}

/// Grow `partials` to hold `grid` accumulators of `job` and view them so.
fn accumulators<T: DeviceRepr>(gpu: &Gpu, partials: &mut CudaSlice<T>, job: &Job, count: usize) -> Result<Out> {
    let elements = (count * job.plan.acc_bytes).div_ceil(size_of::<T>());
    grow(gpu, partials, elements, "partial results")?;
    Ok(Out::bytes_of(partials, gpu, job.plan.acc_bytes))
}

/// Queue `levels` of `job` on non-empty `data` (and `second`, the other
/// input of a two-input operation): the last level writes into `out` (one
/// value, or a multi-pass level's per-block partials).
pub(crate) fn enqueue<T: DeviceRepr>(
    gpu: &Gpu,
    bufs: &mut Buffers<T>,
    job: &Job,
    levels: &[Level],
    data: &CudaView<'_, T>,
    second: Option<&CudaView<'_, T>>,
    out: Out,
) -> Result<()> {
    check_alignment(gpu, job.plan.kernel, data)?;
    match job.plan.kernel.scheme {
        Scheme::SinglePass => {
            let l = levels[0].launches[0];
            let partials = accumulators(gpu, &mut bufs.levels[0], job, job.plan.partials)?;
            gpu.launch_single_pass(job, data, second, partials, &mut bufs.ticket.as_view_mut(), out, l.grid)
        }
        Scheme::Segmented | Scheme::Columns | Scheme::ByKey | Scheme::Hold => {
            Err(Error::Invalid(format!("{}: not a flat reduction", job.plan.entry)))
        }
        Scheme::MultiPass(_) if second.is_some() || job.plan.acc_bytes != size_of::<T>() => Err(Error::Invalid(
            format!("{}: a multi-pass kernel takes one input and plain operators only", job.plan.entry),
        )),
        Scheme::MultiPass(_) => {
            let (a, b) = scratch_sizes(levels);
            for (buffer, need) in bufs.levels.iter_mut().zip([a, b]) {
                grow(gpu, buffer, need, "partial sums")?;
            }
            let [even, odd] = &mut bufs.levels;
            for (i, level) in levels.iter().enumerate() {
                let last = i + 1 == levels.len();
                let (input, output) = if i % 2 == 0 { (&*odd, &mut *even) } else { (&*even, &mut *odd) };
                for l in &level.launches {
                    let src = if i == 0 { data.slice(l.in_offset..) } else { input.slice(l.in_offset..) };
                    if last {
                        gpu.launch_reduce(job, &src, out.skip::<T>(l.out_offset), l.n, l.grid)?;
                    } else {
                        let mut dst = output.slice_mut(l.out_offset..);
                        let (dst, _guard) = Out::of(&mut dst, gpu);
                        gpu.launch_reduce(job, &src, dst, l.n, l.grid)?;
                    }
                }
            }
            Ok(())
        }
    }
}

/// Queue the first level of `job` on non-empty `data` with its per-block
/// partials in `partials[..count]`, and return `count`: what
/// [`Finish::Cpu`](crate::Finish::Cpu) folds on the host. Every scheme has
/// them: a multi-pass kernel's first level writes them as its output, a
/// single-pass kernel writes them before its last block combines them.
pub(crate) fn enqueue_partials<T: DeviceRepr>(
    gpu: &Gpu,
    bufs: &mut Buffers<T>,
    job: &Job,
    data: &CudaView<'_, T>,
    second: Option<&CudaView<'_, T>>,
    partials: &mut CudaSlice<T>,
) -> Result<usize> {
    check_alignment(gpu, job.plan.kernel, data)?;
    match job.plan.kernel.scheme {
        Scheme::SinglePass => {
            let l = job.plan.levels[0].launches[0];
            let p = accumulators(gpu, partials, job, job.plan.partials)?;
            let result = &mut bufs.levels[1];
            grow(gpu, result, 1, "the result")?;
            let (mut ticket, mut result) = (bufs.ticket.as_view_mut(), result.as_view_mut());
            let (out, _guard) = Out::of(&mut result, gpu);
            gpu.launch_single_pass(job, data, second, p, &mut ticket, out, l.grid)?;
            Ok(job.plan.partials)
        }
        Scheme::MultiPass(_) => {
            let count = job.plan.levels[0].outputs;
            grow(gpu, partials, count, "partial sums")?;
            let mut view = partials.slice_mut(..count);
            let (out, _guard) = Out::of(&mut view, gpu);
            enqueue(gpu, bufs, job, &job.plan.levels[..1], data, second, out)?;
            Ok(count)
        }
        Scheme::Segmented | Scheme::Columns | Scheme::ByKey | Scheme::Hold => {
            Err(Error::Invalid(format!("{}: not a flat reduction", job.plan.entry)))
        }
    }
}

/// Write `value` at device address `addr` and wait for it: the result of
/// no elements, where no kernel runs.
pub(crate) fn write_value<V: gpu::op::Bits>(gpu: &Gpu, addr: u64, value: V) -> Result<()> {
    let stream = gpu.stream();
    // SAFETY: `addr` is the caller's device buffer, room for one `V` (it
    // checked that the view is not empty); `value` lives until the stream
    // is synchronized below.
    unsafe { cudarc::driver::result::memcpy_htod_async(addr, std::slice::from_ref(&value), stream.cu_stream()) }
        .map_err(crate::error::driver("cuMemcpyHtoD"))?;
    gpu.synchronize()
}
