//! One result per row, column or CSR segment, on [`Reducer`]: every
//! operation of the library ([`Op`]) on every type it takes, into a new
//! host vector or a device buffer of the caller's.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr};

use crate::dispatch::{entry_operation, exponent, library_type, shaped_mode};
use crate::dispatch::{shape_launch, shape_plan, single_stretch};
use crate::error::{Error, Result, driver};
use crate::input::check_inputs;
use crate::input::{Element, Input, Source};
use crate::launch::{Out, enqueue, grow};
use crate::options::{Determinism, Finish, Options};
use crate::reducer::Reducer;
use crate::scratch::{ShapeScratch, Work, values_of};
use crate::shape::{Fit, Offsets, Shape, check_offsets, laid_out};
use gpu::names::Op;
use gpu::op::Reduction;
use gpu::shape::vector_columns;

impl Reducer {
    /// Check CSR `offsets` (at least one; never decreasing; ending within
    /// an input the GPU can hold), on the host or the device, and keep them
    /// on the GPU, for any number of [`Reducer::reduce_shaped`] calls. Offsets already on the GPU are
    /// copied to the host once to be checked (a kernel trusting unchecked
    /// offsets could read outside the input). Beside them goes their index,
    /// the first segment at each boundary of 2048 elements (16 bytes a
    /// boundary: 2 MiB for 2^28 elements), from which a kernel's warp finds
    /// its tile's segments without searching the offsets, and the tiles'
    /// schedule, those with the most segments first, which `segments_long`
    /// folds first (4 bytes a tile, for each tile
    /// size from 8192 elements up: 256 KiB for 2^28 elements).
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, Sum, shape::Shape};
    /// let r = Reducer::new()?;
    /// let segments = r.offsets(&[0, 2, 2, 5])?; // [0, 2), [2, 2) empty, [2, 5)
    /// let sums = r.reduce_shaped::<Sum, i32, _>(&[&vec![1, 2, 3, 4, 5]], Shape::Segments(&segments), &Options::default())?;
    /// assert_eq!(sums, [3, 0, 12]);
    /// assert!(r.offsets(&[0, 3, 2]).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn offsets<D: Input<u64> + ?Sized>(&self, offsets: &D) -> Result<Offsets> {
        let copied;
        let host = match offsets.source() {
            Source::Host(host) => host,
            Source::Device(view) => {
                copied = self.gpu().stream().clone_dtoh(&view).map_err(driver("cuMemcpyDtoH"))?;
                &copied[..]
            }
        };
        check_offsets(host)?;
        let (count, end) = (host.len() - 1, host[host.len() - 1]);
        // the index and schedule grow with `end`: offsets past any input
        // this GPU can hold (of 2-byte elements, the smallest) are refused
        // before they are built
        let total = self.gpu().info().total_mem as u64;
        if end > total / 2 {
            return Err(Error::Shape(format!(
                "the offsets end at element {end}, past any input this GPU's {total} bytes hold"
            )));
        }
        let longest = host.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        let host = laid_out(host);
        let mut device = self.gpu().alloc::<u64>(host.len(), "segment offsets and their index")?;
        self.gpu().stream().memcpy_htod(&host, &mut device).map_err(driver("cuMemcpyHtoD"))?;
        Ok(Offsets { device, host, count, end, longest })
    }

    /// Operation `R` on each row, column or segment of `inputs` (one, or
    /// two of the same length and shape for a dot product; host slices or
    /// device buffers), results on the host. An empty row or segment gives
    /// `finish(IDENTITY, 0)`: 0 for a sum, NaN for a mean, and for
    /// arg-min/max the index `u64::MAX` (no element). Indices of arg-min/max
    /// count from the row's, column's or segment's first element.
    ///
    /// Options: `strategy` splits the work ([`Strategy::Auto`](crate::shape::Strategy)
    /// chooses by shape); `determinism: Determinism::GpuToGpu` (f32/f64 sum,
    /// dot, sum_squares, norm, mean, moments, logsumexp) gives the bits of
    /// [`shaped_fixed_order`](crate::twin::shaped_fixed_order), the CPU
    /// twin, on any GPU: the order depends on the shape, the offsets and the
    /// strategy only, and a device view that does not start on a 16-byte
    /// boundary is first copied to one that does (on the GPU: slower, same
    /// bits). The shaped kernels have no other options (their block and
    /// grids come from the shape; `accurate` is for flat sums): setting them
    /// is an error. Checked before any GPU work: the shape against the
    /// input, the inputs, the options, the operation and type.
    ///
    /// ```no_run
    /// use reduction::{ArgMax, Options, Reducer, Sum, Determinism, shape::{Matrix, Shape}};
    /// use reduction::twin::shaped_fixed_order;
    /// let r = Reducer::new()?;
    /// let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
    /// let (m, auto) = (Matrix::new(3, 4), Options::default());
    /// assert_eq!(r.reduce_shaped::<Sum, f32, _>(&[&x], Shape::Rows(m), &auto)?, [6.0, 22.0, 38.0]);
    /// assert_eq!(r.reduce_shaped::<Sum, f32, _>(&[&x], Shape::Columns(m), &auto)?, [12.0, 15.0, 18.0, 21.0]);
    /// assert_eq!(r.reduce_shaped::<ArgMax, f32, _>(&[&x], Shape::Rows(m), &auto)?[2].index, 3);
    /// let y: Vec<f32> = (0..1 << 20).map(|i| (i as f32).sin()).collect();
    /// let (shape, repro) = (Shape::Rows(Matrix::new(1024, 1024)), Options { determinism: Determinism::GpuToGpu, ..auto });
    /// let gpu = r.reduce_shaped::<Sum, f32, _>(&[&y], shape, &repro)?;
    /// assert_eq!(gpu, shaped_fixed_order::<Sum, f32>(&[&y], shape, repro.strategy)?);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_shaped<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        shape: Shape<'_>,
        opts: &Options,
    ) -> Result<Vec<R::Out>> {
        let n = check_inputs::<R, T, D>(inputs)?;
        let op = check_shaped::<R, T>(n, shape, opts)?;
        let count = shape.results();
        if count == 0 {
            return Ok(Vec::new());
        }
        let bytes = shape.results_bytes(size_of::<R::Out>())?;
        let words = self.with_inputs::<T, D, _>(inputs, realign(opts), |work, a, b| {
            self.with_shape_scratch(|s| {
                grow(self.gpu(), &mut s.results, bytes.div_ceil(8), "the results")?;
                {
                    let mut view = s.results.as_view_mut();
                    let (out, _guard) = Out::of(&mut view, self.gpu());
                    let out = Out { len: count, ..out };
                    self.launch_shape::<R, T>(
                        op,
                        work,
                        &a,
                        b.as_ref(),
                        shape,
                        opts,
                        &mut s.partials,
                        &mut s.tickets,
                        out,
                    )?;
                }
                self.gpu().stream().clone_dtoh(&s.results.slice(..bytes.div_ceil(8))).map_err(driver("cuMemcpyDtoH"))
            })
        })?;
        Ok(values_of(&words, count))
    }

    /// [`Reducer::reduce_shaped`] with the results in `out` on the device
    /// (at least one slot per result), queued on the reducer's stream
    /// without waiting (host inputs are copied to the device first). For
    /// outputs that are not cudarc `DeviceRepr` types (an [`Arg`](crate::op::Arg)),
    /// view a byte buffer as them: `unsafe { bytes.transmute_mut::<Arg<f32>>(n) }`.
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, Sum, shape::{Matrix, Shape}};
    /// let r = Reducer::new()?;
    /// let s = r.gpu().stream();
    /// let x = s.clone_htod(&vec![1.0f32; 1 << 20]).unwrap();
    /// let mut sums = s.alloc_zeros::<f32>(1024).unwrap();
    /// let rows = Shape::Rows(Matrix::new(1024, 1024));
    /// r.reduce_shaped_into::<Sum, f32, _>(&[&x], rows, &mut sums.as_view_mut(), &Options::default())?;
    /// assert_eq!(s.clone_dtoh(&sums).unwrap()[0], 1024.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_shaped_into<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        shape: Shape<'_>,
        out: &mut CudaViewMut<'_, R::Out>,
        opts: &Options,
    ) -> Result<()> {
        let n = check_inputs::<R, T, D>(inputs)?;
        let op = check_shaped::<R, T>(n, shape, opts)?;
        if out.len() < shape.results() {
            return Err(Error::Shape(format!(
                "the output holds {} results, fewer than the {} the shape has",
                out.len(),
                shape.results()
            )));
        }
        if shape.results() == 0 {
            return Ok(());
        }
        let (out, _guard) = Out::of_given(out, self.gpu())?;
        self.with_inputs::<T, D, _>(inputs, realign(opts), |work, a, b| {
            self.with_shape_scratch(|s| {
                self.launch_shape::<R, T>(op, work, &a, b.as_ref(), shape, opts, &mut s.partials, &mut s.tickets, out)
            })
        })
    }

    /// Plan (with the strategy of `opts`, on this card's fit or the portable
    /// one they ask for) and queue the shaped kernel on checked inputs, or
    /// the flat kernel (with the flat reductions' `work`) where the shape
    /// covers a single stretch of them (`dispatch::single_stretch`).
    #[allow(clippy::too_many_arguments)]
    fn launch_shape<R: Reduction<T>, T: Element>(
        &self,
        op: Op,
        work: &mut Work<T>,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        shape: Shape<'_>,
        opts: &Options,
        partials: &mut CudaSlice<u64>,
        tickets: &mut CudaSlice<u32>,
        out: Out,
    ) -> Result<()> {
        let gpu = self.gpu();
        if let Shape::Segments(o) = shape {
            gpu.holds(&o.device, "the offsets")?;
        }
        if let Some(stretch) = single_stretch(shape, opts.strategy, realign(opts)) {
            shape.check(a.len())?;
            let (a, b) = (a.slice(stretch.clone()), b.map(|b| b.slice(stretch)));
            let job = self.cached_job::<R, T>(&mut work.last, a.len(), opts)?;
            return enqueue(gpu, &mut work.bufs, job, &job.plan.levels, &a, b.as_ref(), Out { len: 1, ..out });
        }
        let (a_addr, b_addr) = (a.device_ptr(gpu.stream()).0, b.map_or(0, |b| b.device_ptr(gpu.stream()).0));
        let aligned = match shape {
            Shape::Columns(m) => {
                vector_columns(a_addr, b_addr, R::INPUTS, m.pitch as u64, m.cols as u64, size_of::<T>())
            }
            _ => a_addr % 16 == 0 && (R::INPUTS == 1 || b_addr % 16 == 0),
        };
        let acc = size_of::<R::Acc>();
        let ty = library_type(T::NAME, "reduce_shaped")?;
        let (name, exponent) = entry_operation(R::NAME, exponent(R::NAME, opts)?);
        let op = Op::from_name(name).unwrap_or(op);
        let form = shaped_mode(R::NAME, T::NAME, opts)?;
        let plan = shape_launch(gpu, (op, ty, acc), a.len(), shape, opts.strategy, aligned, realign(opts), form)?;
        grow(gpu, partials, (plan.partials * acc).div_ceil(8), "partial results")?;
        if tickets.len() < plan.tickets {
            grow(gpu, tickets, plan.tickets, "tickets")?;
            gpu.stream().memset_zeros(tickets).map_err(driver("cuMemsetD8"))?;
        }
        let partials = Out::bytes_of(partials, gpu, acc);
        gpu.launch_shaped(&plan, R::INPUTS, exponent, a, b, shape, partials, &mut tickets.as_view_mut(), out)
    }

    /// Run `f` with the shaped reductions' buffers, locked.
    fn with_shape_scratch<V>(&self, f: impl FnOnce(&mut ShapeScratch) -> Result<V>) -> Result<V> {
        let mut guard = self.shapes.lock().unwrap_or_else(|p| p.into_inner());
        let s = match &mut *guard {
            Some(s) => s,
            empty => {
                let gpu = self.gpu();
                let mut tickets = gpu.alloc::<u32>(1, "tickets")?;
                gpu.stream().memset_zeros(&mut tickets).map_err(driver("cuMemsetD8"))?;
                let (partials, results) = (gpu.alloc(1, "partial results")?, gpu.alloc(1, "the results")?);
                empty.insert(ShapeScratch { partials, tickets, results })
            }
        };
        f(s)
    }
}

/// Whether `opts` ask for the order of an aligned input (`gpu_to_gpu`).
fn realign(opts: &Options) -> bool {
    opts.determinism == Determinism::GpuToGpu
}

/// The library operation `R` is, checked against `T`, the shape, the
/// strategy and the options (all before any GPU work).
fn check_shaped<R: Reduction<T>, T: Element>(n: usize, shape: Shape<'_>, opts: &Options) -> Result<Op> {
    let refuse = |what: &str, valid: &str| {
        Err(Error::Unsupported { kernel: "reduce_shaped".into(), what: what.into(), valid: valid.into() })
    };
    if let Some(k) = opts.kernel {
        return refuse(&format!("the kernel {} (the shaped kernels are chosen by shape)", k.id), "none");
    }
    if opts.finish != Finish::Gpu {
        return refuse("finishing on the CPU (each result is finished on the GPU)", "Finish::Gpu");
    }
    if opts.accurate {
        return refuse("accurate (the accurate sums are flat)", "run_to_run or gpu_to_gpu");
    }
    if opts.block.is_some() || opts.max_grid.is_some() {
        return refuse("a block size or grid cap (the shaped kernels run blocks of 256, grids from the shape)", "none");
    }
    shaped_mode(R::NAME, T::NAME, opts)?;
    exponent(R::NAME, opts)?;
    let op = Op::from_name(R::NAME).ok_or_else(|| Error::Unsupported {
        kernel: "reduce_shaped".into(),
        what: format!("the operation {} (the shaped kernels are built for the library's operations)", R::NAME),
        valid: Op::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", "),
    })?;
    shape_plan(
        op,
        library_type(T::NAME, "reduce_shaped")?,
        size_of::<R::Acc>(),
        n,
        shape,
        opts.strategy,
        false,
        Fit::PORTABLE,
    )?;
    Ok(op)
}
