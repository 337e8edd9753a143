//! The launches themselves: one function per launch scheme, each the only
//! place its kernels are started. Each checks what its kernel relies on and
//! cannot check itself (buffer lengths, a legal shape) and makes the one
//! `unsafe` launch with a `// SAFETY:` line.

use cudarc::driver::{CudaView, CudaViewMut, DevicePtr, DeviceRepr, DriverError, LaunchConfig, PushKernelArg};

use super::{Job, Out};
use crate::device::Gpu;
use crate::dispatch::Plan;
use crate::error::{Error, Result};
use crate::registry::Scheme;

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
        // a `power_sum` entry reads its exponent from its module: written first
        self.launch_with_exponent(entry, job.plan.exponent, || {
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
            unsafe { args.launch(cfg) }.map(drop).map_err(|source| launch_error(entry, &cfg, source))
        })
    }

    /// Launch a shaped kernel (`segments_*` or `columns_*`, as `plan`
    /// says) on `a` (and `b` for a two-input operation) with `shape`, its
    /// scratch in `partials` and `tickets` (zero; the kernel leaves them
    /// zero) and one result per row, column or segment in `out`; a
    /// `power_sum` entry with its `exponent`
    /// ([`dispatch::exponent`](crate::dispatch::exponent)).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_shaped<T: DeviceRepr>(
        &self,
        plan: &crate::dispatch::ShapePlan,
        inputs: u32,
        exponent: Option<f64>,
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
            || matches!(shape, Shape::Segments(_)) && !plan.tile.is_multiple_of(gpu::shape::INDEX_GRANULE)
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
        let bound = plan.blocks_per_sm.map(|blocks| (plan.kernel.block(), blocks));
        let func = self.function_bounded(entry, plan.kernel.row().scheme.params(), bound)?;
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
            block_dim: (plan.kernel.block(), 1, 1),
            shared_mem_bytes: plan.smem,
        };
        crate::device::allow_smem(&func, plan.smem).map_err(|source| launch_error(entry, &cfg, source))?;
        self.launch_with_exponent(entry, exponent, || {
            // SAFETY: `segments_{op}_{type}` entries (and `segments_long_`,
            // `rows_short_`, `rows_long_`, which `plan` picks only for rows that
            // meet `shape::short_row_vectors` with aligned inputs, or
            // `shape::long_rows` with its tile) have the signature (const T*,
            // const T*, u64 n, const u64* offsets, u64 count, u64 cols, u64
            // pitch, u64 tile, u32 lanes, Acc*, u32*, Out*) and
            // `columns_{op}_{type}` (const T*, const T*, u64 rows, u64 cols, u64
            // pitch, u32 wide, u32 chunks, Acc*, u32*, Out*) for this T and the operation of the entry's
            // name (`gpu/src/entries.rs`; `plan` named it from R and T, and
            // sized `partials` with R's accumulator). Every element the kernel
            // reads lies in the shape, which `shape.check` put within `a` (and
            // `b`, of the same length, checked); the offsets were checked
            // non-decreasing when the `Offsets` were made and ending within `a`
            // above, and `Offsets` holds count + 1 of them on this GPU, followed by
            // their index over `n = end` elements (`Reducer::offsets`). It writes
            // partials[..plan.partials], tickets[..plan.tickets] (zero, left
            // zero) and out[..results], each checked above (`Out`s are memory
            // their makers hold for the launch), and uses `plan.smem` bytes of
            // shared memory, which the launch provides. Launches sharing the
            // scratch are ordered by the stream.
            unsafe { args.launch(cfg) }.map(drop).map_err(|source| launch_error(entry, &cfg, source))
        })
    }

    /// Launch the by-key kernel of `plan` `(keys: *const u32, values: *const
    /// T, n: u64, num_keys: u32, sums: *mut T, bad_keys: *mut u64)` on all
    /// of `keys` and `values`, with `num_keys = sums.len`. The kernel adds
    /// to `sums` and `bad_keys[0]`; it writes nothing else.
    pub(crate) fn launch_by_key<T: DeviceRepr + gpu::op::Element>(
        &self,
        plan: &Plan,
        keys: &CudaView<'_, u32>,
        values: &CudaView<'_, T>,
        sums: Out,
        bad_keys: &mut CudaViewMut<'_, u64>,
    ) -> Result<()> {
        let (entry, block, smem) = (plan.entry.as_str(), plan.block, plan.smem);
        let grid = plan.levels.first().and_then(|l| l.launches.first()).map_or(0, |l| l.grid);
        if plan.kernel.scheme != Scheme::ByKey || !entry.ends_with(&format!("_{}", T::NAME)) {
            return Err(Error::Invalid(format!("{entry}: not a by-key entry for {}", T::NAME)));
        }
        if keys.len() != values.len() {
            return Err(Error::LengthMismatch { keys: keys.len(), values: values.len() });
        }
        let num_keys = u32::try_from(sums.len)
            .map_err(|_| Error::Invalid(format!("{entry}: {} sums, more than u32 keys can index", sums.len)))?;
        if bad_keys.is_empty() || grid == 0 || !block.is_multiple_of(32) || !(32..=1024).contains(&block) {
            return Err(Error::Invalid(format!(
                "{entry}: bad launch: grid {grid}, block {block}, {} counter slots",
                bad_keys.len()
            )));
        }
        let n = keys.len() as u64;
        let func = self.function_for(entry, plan.kernel.scheme.params())?;
        let mut args = self.stream().launch_builder(&func);
        args.arg(keys).arg(values).arg(&n).arg(&num_keys).arg(&sums.addr).arg(bad_keys);
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: the entry's parameters are those of the by-key scheme,
        // (const u32*, const T*, u64, u32, T*, u64*) (`function_for` checked
        // them), for this T (the name's type suffix is checked above). The
        // kernel reads keys[0..n] and values[0..n] (n is both lengths,
        // checked equal), adds only to sums[k] for k < num_keys = sums.len
        // (an `Out` its maker holds for the launch; other keys are counted,
        // not used as indices) and to bad_keys[0] (checked non-empty). The
        // warp kernels need whole warps (block a multiple of 32, checked);
        // the hash kernel sizes its table from the shared memory the launch
        // provides, whatever `smem` is.
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
