//! Every kernel launch of the library. How a kernel is launched is a fact
//! of the registry ([`Scheme`]); this module reads it, once, in [`enqueue`]
//! and [`enqueue_partials`], and the three `launch_*` functions below are
//! the only places a kernel is started. Each checks what its kernel relies on
//! and cannot check itself (buffer lengths, a legal shape) and makes the one
//! `unsafe` launch with a `// SAFETY:` line.

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg,
};

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

    /// [`Out::of`] for a view the caller gave: [`Error::Invalid`] unless it
    /// is aligned for `V` (a byte buffer viewed as [`Arg`](gpu::op::Arg)s
    /// can start anywhere, and a misaligned store would end the context).
    pub fn of_given<'a, V>(view: &'a mut CudaViewMut<'_, V>, gpu: &'a Gpu) -> Result<(Out, impl Drop + 'a)> {
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
            gpu.launch_single_pass(job, data, None, p, &mut ticket, out, l.grid)?;
            Ok(job.plan.partials)
        }
        Scheme::MultiPass(_) => {
            let count = job.plan.levels[0].outputs;
            grow(gpu, partials, count, "partial sums")?;
            let mut view = partials.slice_mut(..count);
            let (out, _guard) = Out::of(&mut view, gpu);
            enqueue(gpu, bufs, job, &job.plan.levels[..1], data, None, out)?;
            Ok(count)
        }
    }
}

impl Gpu {
    /// Launch a reduction kernel `(g_idata: *const T, g_odata: *mut T, n: u32)`
    /// with `grid` blocks of `block` threads and [`shared_mem_bytes`](crate::registry::shared_mem_bytes) of
    /// shared memory.
    ///
    /// This, [`Gpu::launch_single_pass`], [`Gpu::launch_by_key`] (and the
    /// shape launches below) are the only places the library launches
    /// kernels (the test kit launches the hold kernel). They check what the kernel relies on
    /// and cannot check itself: the buffers are long enough for `n` and
    /// `grid`, and the shape is a legal launch.
    pub(crate) fn launch_reduce<T: DeviceRepr>(
        &self,
        job: &Job,
        input: &CudaView<'_, T>,
        output: Out,
        n: usize,
        grid: u32,
    ) -> Result<()> {
        let (entry, block) = (job.plan.entry.as_str(), job.plan.block);
        let n = u32::try_from(n).map_err(|_| Error::Invalid(format!("{entry}: {n} elements in one launch")))?;
        check_launch(entry, input.len(), n as usize, output.len, grid, block)?;
        let smem = job.plan.smem; // shared_mem_bytes(block, size of T): the multi-pass scheme's
        let mut args = self.stream().launch_builder(&job.func);
        args.arg(input).arg(&output.addr).arg(&n);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: every entry named like a two-pointer reduction kernel has
        // the signature (const T*, T*, u32) for this T (`gpu/src/entries.rs`;
        // the job was planned from the registry with T's name); it reads
        // input[0..n] and writes output[0..grid], both checked above (an
        // `Out` is the address and length of memory its maker holds for the
        // launch), and reads shared memory below shared_mem_bytes(block),
        // which the launch provides.
        unsafe { args.launch(cfg) }.map_err(|source| launch_error(entry, &cfg, source))?;
        Ok(())
    }

    /// Launch a single-pass kernel `(a: *const T, b: *const T, n: u64,
    /// partials: *mut Acc, ticket: *mut u32, out: *mut Out, done: *mut u32)`
    /// on all of `a` (and `b`, for a two-input operation); `*ticket` must be
    /// 0 (the kernel's last block leaves it 0 again).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_single_pass<T: DeviceRepr>(
        &self,
        job: &Job,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        partials: Out,
        ticket: &mut CudaViewMut<'_, u32>,
        out: Out,
        grid: u32,
    ) -> Result<()> {
        let (entry, block, n) = (job.plan.entry.as_str(), job.plan.block, a.len());
        // the accumulator slots and shared memory it was planned with
        let (need, smem) = (job.plan.partials, job.plan.smem);
        check_launch(entry, a.len(), n, partials.len, grid, block)?;
        if partials.len < need {
            return Err(Error::Invalid(format!("{entry}: {} partial slots, {need} needed", partials.len)));
        }
        if ticket.is_empty() || out.len == 0 {
            return Err(Error::Invalid(format!("{entry}: no room for the ticket or the result")));
        }
        let b_ptr = match (job.plan.inputs, b) {
            (1, None) => None,
            (2, Some(b)) if b.len() == n => Some(b.device_ptr(self.stream())),
            (inputs, b) => {
                return Err(Error::Invalid(format!(
                    "{entry}: takes {inputs} input(s) of one length; given {} of {n}{}",
                    1 + b.is_some() as u32,
                    b.map(|b| format!(" and {}", b.len())).unwrap_or_default()
                )));
            }
        };
        let b_addr = b_ptr.as_ref().map_or(0, |(addr, _guard)| *addr);
        let n = n as u64;
        let mut args = self.stream().launch_builder(&job.func);
        args.arg(a).arg(&b_addr).arg(&n).arg(&partials.addr).arg(ticket).arg(&out.addr).arg(&out.done);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: `single_pass_*` entries (and the mode entries `reproducible_*`
        // and `accurate_sum_*`, same signature: `gpu/src/entries.rs`; their
        // partials are the `need` accumulators of their plan, checked above,
        // and their shared memory MODES_SMEM) have the signature (const T*, const
        // T*, u64, Acc*, u32*, Out*, u32*) for this T and the operation named
        // in the entry (`single_pass_entries!`; the job was planned with that
        // operation's accumulator size and input count). The kernel reads
        // a[0..n], and b[0..n] only for two-input operations (b is then a
        // live view of n elements, checked above; else null), writes
        // partials[0..grid] (accumulators of `acc_bytes`, room checked
        // above), ticket[0], out[0] and (when not null) done[0] (`out` and its
        // flag are memory their maker holds for the launch, with room for
        // one output), and uses SINGLE_PASS_SMEM bytes of shared memory,
        // which the launch provides. Launches that share the ticket are
        // ordered by the stream.
        unsafe { args.launch(cfg) }.map_err(|source| launch_error(entry, &cfg, source))?;
        Ok(())
    }

    /// Launch a shaped kernel (`segments_*` or `columns_*`, as `plan`
    /// says) on `a` (and `b` for a two-input operation) with `shape`, its
    /// scratch in `partials` and `tickets` (zero; the kernel leaves them
    /// zero) and one result per row, column or segment in `out`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_shaped<T: DeviceRepr>(
        &self,
        plan: &crate::shape::ShapePlan,
        inputs: u32,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        shape: crate::shape::Shape<'_>,
        partials: Out,
        tickets: &mut CudaViewMut<'_, u32>,
        out: Out,
    ) -> Result<()> {
        use crate::shape::Shape;
        let entry = plan.entry.as_str();
        shape.check(a.len())?;
        let b_ptr = match (inputs, b) {
            (1, None) => None,
            (2, Some(b)) if b.len() == a.len() => Some(b.device_ptr(self.stream())),
            _ => return Err(Error::Invalid(format!("{entry}: takes {inputs} input(s) of one length"))),
        };
        let b_addr = b_ptr.as_ref().map_or(0, |(addr, _guard)| *addr);
        if partials.len < plan.partials
            || tickets.len() < plan.tickets
            || out.len < shape.results()
            || plan.grid == 0
            || plan.tile == 0
        {
            return Err(Error::Invalid(format!(
                "{entry}: bad launch: grid {}, tile {}, {} of {} partial slots, {} of {} tickets, {} of {} results",
                plan.grid,
                plan.tile,
                partials.len,
                plan.partials,
                tickets.len(),
                plan.tickets,
                out.len,
                shape.results()
            )));
        }
        let func = self.function(entry)?;
        let mut args = self.stream().launch_builder(&func);
        let (null, tile, wide, split) = (0u64, plan.tile, plan.tile as u32, plan.split);
        let (n, count, cols, pitch, offsets);
        match shape {
            Shape::Rows(m) => {
                (n, count, cols, pitch) = (m.elements_spanned()? as u64, m.rows as u64, m.cols as u64, m.pitch as u64);
                args.arg(a).arg(&b_addr).arg(&n).arg(&null).arg(&count).arg(&cols).arg(&pitch).arg(&tile).arg(&split);
            }
            Shape::Segments(o) => {
                (n, count, cols, pitch) = (o.end, o.count as u64, 0, 0);
                offsets = o.device.device_ptr(self.stream());
                let o = &offsets.0;
                args.arg(a).arg(&b_addr).arg(&n).arg(o).arg(&count).arg(&cols).arg(&pitch).arg(&tile).arg(&split);
            }
            Shape::Columns(m) => {
                (n, cols, pitch) = (m.rows as u64, m.cols as u64, m.pitch as u64);
                args.arg(a).arg(&b_addr).arg(&n).arg(&cols).arg(&pitch).arg(&wide).arg(&split);
            }
        }
        args.arg(&partials.addr).arg(tickets).arg(&out.addr);
        let cfg = LaunchConfig {
            grid_dim: (plan.grid, 1, 1),
            block_dim: (crate::shape::SHAPE_BLOCK, 1, 1),
            shared_mem_bytes: plan.smem,
        };
        // SAFETY: `segments_{op}_{type}` entries (and `rows_short_`,
        // `rows_long_`, which `plan` picks only for rows that meet
        // `shape::short_row_vectors` with aligned inputs, or `shape::long_rows`
        // with its tile) have the signature (const T*,
        // const T*, u64 n, const u64* offsets, u64 count, u64 cols, u64
        // pitch, u64 tile, u32 lanes, Acc*, u32*, Out*) and
        // `columns_{op}_{type}` (const T*, const T*, u64 rows, u64 cols, u64
        // pitch, u32 wide, u32 chunks, Acc*, u32*, Out*) for this T and the operation of the entry's
        // name (`gpu/src/entries.rs`; `plan` named it from R and T, and
        // sized `partials` with R's accumulator). Every element the kernel
        // reads lies in the shape, which `shape.check` put within `a` (and
        // `b`, of the same length, checked); the offsets were checked
        // non-decreasing when the `Offsets` were made and ending within `a`
        // above, and `Offsets` holds count + 1 of them on this GPU. It writes
        // partials[..plan.partials], tickets[..plan.tickets] (zero, left
        // zero) and out[..results], each checked above (`Out`s are memory
        // their makers hold for the launch), and uses `plan.smem` bytes of
        // shared memory, which the launch provides. Launches sharing the
        // scratch are ordered by the stream.
        unsafe { args.launch(cfg) }.map_err(|source| launch_error(entry, &cfg, source))?;
        Ok(())
    }

    /// Launch a reduction-by-key kernel `by_key_{variant}_{type}` `(keys: *const
    /// u32, values: *const T, n: u64, num_keys: u32, sums: *mut T, bad_keys:
    /// *mut u64)` on all of `keys` and `values`, with `num_keys = sums.len()`.
    /// The kernel adds to `sums` and `bad_keys[0]`; it writes nothing else.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_by_key<T: DeviceRepr + gpu::op::Element>(
        &self,
        entry: &str,
        keys: &CudaView<'_, u32>,
        values: &CudaView<'_, T>,
        sums: &mut CudaViewMut<'_, T>,
        bad_keys: &mut CudaViewMut<'_, u64>,
        grid: u32,
        block: u32,
        smem: u32,
    ) -> Result<()> {
        if !entry.starts_with("by_key_") || !entry.ends_with(&format!("_{}", T::NAME)) {
            return Err(Error::Invalid(format!("{entry}: not a by-key entry for {}", T::NAME)));
        }
        if keys.len() != values.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: values.len() });
        }
        let num_keys = u32::try_from(sums.len())
            .map_err(|_| Error::Invalid(format!("{entry}: {} sums, more than u32 keys can index", sums.len())))?;
        if bad_keys.is_empty() || grid == 0 || !block.is_multiple_of(32) || !(32..=1024).contains(&block) {
            return Err(Error::Invalid(format!(
                "{entry}: bad launch: grid {grid}, block {block}, {} counter slots",
                bad_keys.len()
            )));
        }
        let n = keys.len() as u64;
        let func = self.function(entry)?;
        let mut args = self.stream().launch_builder(&func);
        args.arg(keys).arg(values).arg(&n).arg(&num_keys).arg(sums).arg(bad_keys);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: `by_key_*_{T}` entries have the signature (const u32*,
        // const T*, u64, u32, T*, u64*) for this T (`gpu/src/entries.rs`;
        // the name's type suffix is checked above). The kernel reads
        // keys[0..n] and values[0..n] (n is both lengths, checked equal),
        // adds only to sums[k] for k < num_keys = sums.len() (other keys
        // are counted, not used as indices) and to bad_keys[0] (checked
        // non-empty). The warp kernels need whole warps (block a multiple of
        // 32, checked); the hash kernel sizes its table from the shared
        // memory the launch provides, whatever `smem` is.
        unsafe { args.launch(cfg) }.map_err(|source| launch_error(entry, &cfg, source))?;
        Ok(())
    }
}

/// A failed launch, with the kernel and its shape.
fn launch_error(entry: &str, cfg: &LaunchConfig, source: DriverError) -> Error {
    Error::Launch {
        entry: entry.to_string(),
        grid: cfg.grid_dim.0,
        block: cfg.block_dim.0,
        smem: cfg.shared_mem_bytes,
        source,
    }
}

/// The checks every launch makes: the input holds `n` elements, the output
/// one per block, and the shape is legal.
fn check_launch(entry: &str, input_len: usize, n: usize, output_len: usize, grid: u32, block: u32) -> Result<()> {
    if input_len < n {
        return Err(Error::SliceTooShort { len: input_len, n });
    }
    if output_len < grid as usize || grid == 0 || !block.is_power_of_two() || !(32..=1024).contains(&block) {
        return Err(Error::Invalid(format!(
            "{entry}: bad launch: grid {grid}, block {block}, {output_len} output slots"
        )));
    }
    Ok(())
}
