//! The library API: [`Reducer`] reduces host slices and device buffers with
//! any kernel of the registry, reusing its device scratch buffers: flat
//! reductions to the host or the device here, the short calls
//! (`operations.rs`), reductions planned once and queued without waiting
//! (`prepared.rs`), rows, columns and segments (`shape.rs`), and sums by
//! key (`by_key.rs`). What it reduces is `input.rs`, how `options.rs`; the
//! memory it keeps between calls `scratch.rs`.

mod by_key;
mod operations;
mod prepared;
mod shape;

pub use operations::Output;
pub use prepared::Prepared;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr};

use crate::device::Gpu;
use crate::dispatch::{self, Plan, Request};
use crate::error::{Error, Result, driver};
use crate::input::{Element, Input, Source, check_inputs, empty};
use crate::launch::{Job, Out, enqueue, enqueue_partials, grow, write_value};
use crate::options::{Finish, Options};
use crate::ptx::Ptx;
use crate::registry::Scheme;
use crate::scratch::{ScratchMap, ShapeScratch, TypedScratch, Work, typed, values_of};
use gpu::op::Reduction;

/// Reduces data on one GPU with the kernels of the registry.
///
/// Create one and keep it: the first call with a kernel loads it (a small
/// JIT compile), and device scratch buffers grow to the largest size seen and
/// are reused, so later calls allocate nothing. A `Reducer` is `Sync`; calls
/// from several threads take turns.
///
/// ```no_run
/// use reduction::Reducer;
/// # fn main() -> reduction::Result<()> {
/// let r = Reducer::new()?; // no driver or no GPU: Err(Error::NoDriver / NoDevice)
/// let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
/// let s: f32 = r.sum(&data)?;
/// assert_eq!(s, 499_500.0);
/// let on_device = r.gpu().stream().clone_htod(&data).unwrap();
/// assert_eq!(r.max(&on_device)?, 999.0);
/// # Ok(()) }
/// ```
pub struct Reducer {
    gpu: Gpu,
    /// One [`Scratch`](crate::scratch::Scratch) per element type (`scratch.rs`).
    pub(crate) scratch: ScratchMap,
    /// The shaped reductions' buffers (`shape.rs`), made on first use.
    pub(crate) shapes: Mutex<Option<ShapeScratch>>,
}

impl std::fmt::Debug for Reducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reducer").field("gpu", &self.gpu).finish_non_exhaustive()
    }
}

impl Reducer {
    /// This type's scratch, made on first use, with the map locked.
    pub(crate) fn scratch<T: Element>(&self) -> Result<TypedScratch<'_, T>> {
        typed::<T>(&self.scratch, &self.gpu)
    }

    /// A reducer on device 0 with the embedded kernels.
    ///
    /// Errors: [`Error::NoDriver`] without the NVIDIA driver, [`Error::NoDevice`]
    /// without a GPU; never a panic.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// println!("{}", r.gpu().info().name);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn new() -> Result<Self> {
        Self::with_ptx(0, Ptx::embedded())
    }

    /// A reducer on device `ordinal` with the kernels of `ptx` (see [`Ptx::from_file`]).
    ///
    /// ```no_run
    /// use reduction::{Ptx, Reducer};
    /// let r = Reducer::with_ptx(0, Ptx::from_file("target/ptx/gpu.ptx")?)?;
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn with_ptx(ordinal: usize, ptx: Ptx) -> Result<Self> {
        Ok(Self::from_gpu(Gpu::open(ordinal, ptx)?))
    }

    /// A reducer that queues its work on `stream`, after what is already
    /// there: use this when your data comes from your own cudarc stream.
    ///
    /// ```no_run
    /// let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    /// let r = reduction::Reducer::on_stream(ctx.default_stream())?;
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn on_stream(stream: Arc<CudaStream>) -> Result<Self> {
        Ok(Self::from_gpu(Gpu::from_stream(stream, Ptx::embedded())?))
    }

    pub(crate) fn from_gpu(gpu: Gpu) -> Self {
        Reducer { gpu, scratch: Mutex::new(HashMap::new()), shapes: Mutex::new(None) }
    }

    /// The device, its stream and its kernels.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert!(r.gpu().info().sm_count > 0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Operation `R` (the library's or your own: `examples/custom-op`) on
    /// `inputs` (one, or two of the same length for a two-input operation
    /// such as [`Dot`](crate::op::Dot)), host slices or device buffers,
    /// with the result on the host. `opts` choose the kernel (any operation
    /// runs on the default one; the teaching kernels take the plain
    /// operators sum, min and max), block size, finish, grid cap,
    /// determinism and accuracy. Checked before any GPU work: the number of
    /// inputs and their lengths, the kernel, block and mode against the
    /// operation and type, and no elements for an operation without an
    /// identity result (arg-min/max: [`Error::Empty`]). With no elements,
    /// the result is `finish(IDENTITY, 0)`: 0 for sums, NaN for the mean.
    ///
    /// ```no_run
    /// use reduction::{Finish, Max, Options, Reducer, Sum, op::SumSquares, registry::Kernel};
    /// let r = Reducer::new()?;
    /// let on_device = r.gpu().stream().clone_htod(&[5i64, -7, 3]).unwrap();
    /// assert_eq!(r.reduce::<Max, _, _>(&[&on_device], &Options::default())?, 5);
    /// let teaching = Options { kernel: Some(Kernel::find("reduce1")?), block: Some(64), finish: Finish::Cpu, ..Options::default() };
    /// assert_eq!(r.reduce::<Sum, _, _>(&[&vec![1u32; 1000]], &teaching)?, 1000);
    /// let wide = Options { block: Some(1024), ..Options::default() };
    /// assert_eq!(r.reduce::<SumSquares, f32, _>(&[&vec![2.0f32; 8]], &wide)?, 32.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        opts: &Options,
    ) -> Result<R::Out> {
        if check_inputs::<R, T, D>(inputs)? == 0 {
            dispatch::exponent(R::NAME, opts)?; // checked before the result of none too
            return empty::<R, T>();
        }
        self.with_inputs::<T, D, _>(inputs, false, |work, a, b| self.run_locked::<R, T>(work, &a, b.as_ref(), opts))
    }

    /// [`Reducer::reduce`] with the result left in `out[0]` on the device,
    /// queued on the reducer's stream without waiting: nothing comes back
    /// to the host (an arg-max whose index the next kernel reads). Host
    /// inputs are copied to the device first. With no elements `out[0]` is
    /// set to `finish(IDENTITY, 0)`. For outputs that are not cudarc
    /// `DeviceRepr` types (an [`Arg`](crate::op::Arg)), view a byte buffer
    /// as them; an `out` that is empty or not aligned for the output is an
    /// error, as is [`Finish::Cpu`].
    ///
    /// ```no_run
    /// use reduction::{ArgMax, Options, Reducer, Sum, op::Arg};
    /// let r = Reducer::new()?;
    /// let stream = r.gpu().stream();
    /// let data = stream.clone_htod(&vec![2.0f64; 1 << 20]).unwrap();
    /// let mut out = stream.alloc_zeros::<f64>(1).unwrap();
    /// r.reduce_into::<Sum, _, _>(&[&data], &mut out.as_view_mut(), &Options::default())?;
    /// assert_eq!(stream.clone_dtoh(&out).unwrap()[0], 2097152.0);
    /// let mut bytes = stream.alloc_zeros::<u8>(size_of::<Arg<f32>>()).unwrap();
    /// // SAFETY: every bit pattern is an `Arg<f32>`, and the allocation is aligned
    /// let mut best = unsafe { bytes.transmute_mut::<Arg<f32>>(1) }.unwrap();
    /// r.reduce_into::<ArgMax, f32, _>(&[&vec![1.0f32, 7.0, 3.0, 7.0]], &mut best, &Options::default())?;
    /// let b = stream.clone_dtoh(&bytes).unwrap();
    /// assert_eq!(u64::from_ne_bytes(b[8..16].try_into().unwrap()), 1); // the first 7.0
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_into<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        out: &mut CudaViewMut<'_, R::Out>,
        opts: &Options,
    ) -> Result<()> {
        let n = check_inputs::<R, T, D>(inputs)?;
        if opts.finish == Finish::Cpu {
            return Err(Error::Invalid("a result left on the device is finished on the GPU (Finish::Gpu)".into()));
        }
        if out.is_empty() {
            return Err(Error::SliceTooShort { len: 0, n: 1 });
        }
        dispatch::exponent(R::NAME, opts)?;
        let (out, _guard) = Out::of_given(out, self.gpu())?;
        match n {
            0 => write_value(self.gpu(), out.addr, empty::<R, T>()?),
            _ => self.enqueue_to::<R, T, D>(inputs, opts, out),
        }
    }

    /// Queue operation `R` on checked, non-empty `inputs` (host ones copied to
    /// the device first) with its output at `out`, without waiting.
    pub(crate) fn enqueue_to<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        opts: &Options,
        out: Out,
    ) -> Result<()> {
        self.with_inputs::<T, D, _>(inputs, false, |work, a, b| {
            let job = self.cached_job::<R, T>(&mut work.last, a.len(), opts)?;
            enqueue(self.gpu(), &mut work.bufs, job, &job.plan.levels, &a, b.as_ref(), out)
        })
    }

    /// Copy `host` into `staging` (grown as needed) and view it there.
    pub(crate) fn stage<'a, T: Element>(&self, staging: &'a mut CudaSlice<T>, host: &[T]) -> Result<CudaView<'a, T>> {
        grow(&self.gpu, staging, host.len(), "the input copied from the host")?;
        let mut view = staging.slice_mut(..host.len());
        self.gpu.stream().memcpy_htod(host, &mut view).map_err(driver("cuMemcpyHtoD"))?;
        Ok(staging.slice(..host.len()))
    }

    /// How `n` elements of operation `R` on `T` with `opts` are reduced on
    /// this GPU: the kernel, its entry, the block, the levels of launches
    /// with their grids, the shared memory and the partials, as
    /// [`dispatch::plan`](crate::dispatch::plan) decides them from this
    /// card's limits. The default kernel runs at the card's default block
    /// (on an H100 or H200 256 threads below 2^25 elements, 512 for
    /// arg-min/max from 2^21, 1024 from 2^25); a teaching kernel at Harris's
    /// 128 unless told otherwise. Nothing is launched.
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, Sum, registry::Kernel};
    /// let r = Reducer::new()?;
    /// let p = r.plan::<Sum, f32>(1 << 20, &Options::default())?;
    /// assert_eq!((p.kernel.id, p.block), ("single_pass", 256));
    /// let capped = Options { kernel: Some(Kernel::find("reduce7")?), block: Some(256), max_grid: Some(7), ..Options::default() };
    /// assert_eq!(r.plan::<Sum, f32>(1 << 24, &capped)?.levels[0].launches[0].grid, 7);
    /// let bad = Options { kernel: Some(Kernel::find("reduce5")?), block: Some(32), ..Options::default() };
    /// assert!(r.plan::<Sum, f32>(1 << 20, &bad).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn plan<R: Reduction<T>, T: Element>(&self, n: usize, opts: &Options) -> Result<Plan> {
        dispatch::plan(&Request::of::<R, T>(n, opts), &self.gpu)
    }

    /// Plan `n > 0` elements of operation `R` on `T` and load its entry,
    /// checked against its scheme's parameters.
    pub(crate) fn job_for<R: Reduction<T>, T: Element>(&self, n: usize, opts: &Options) -> Result<Job> {
        self.job(&Request::of::<R, T>(n, opts))
    }

    fn job(&self, request: &Request) -> Result<Job> {
        let plan = dispatch::plan(request, &self.gpu)?;
        let func = self.gpu.function_for(&plan.entry, plan.kernel.scheme.params())?;
        Ok(Job { plan, func })
    }

    /// The planned job for `n` elements of `R` with `opts`: the last one, if
    /// it was asked for with the same request, else planned now (and kept).
    pub(crate) fn cached_job<'s, R: Reduction<T>, T: Element>(
        &self,
        last: &'s mut Option<(Request, Job)>,
        n: usize,
        opts: &Options,
    ) -> Result<&'s Job> {
        let request = Request::of::<R, T>(n, opts);
        if last.as_ref().is_none_or(|(asked, _)| *asked != request) {
            *last = Some((request, self.job(&request)?));
        }
        match last {
            Some((_, job)) => Ok(job),
            None => Err(Error::Invalid("no job planned".into())), // set just above
        }
    }

    /// Run operation `R` on non-empty `a` (and `b`, of the same length, for
    /// a two-input operation) and return its output on the host: the last
    /// block's result from the reducer's mapped slot ([`Finish::Gpu`]), or
    /// one launch's per-block partials copied to the host and combined
    /// there in block order ([`Finish::Cpu`]).
    fn run_locked<R: Reduction<T>, T: Element>(
        &self,
        s: &mut Work<T>,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        opts: &Options,
    ) -> Result<R::Out> {
        let job = self.cached_job::<R, T>(&mut s.last, a.len(), opts)?;
        match opts.finish {
            Finish::Gpu => {
                enqueue(&self.gpu, &mut s.bufs, job, &job.plan.levels, a, b, s.result.out())?;
                s.result.wait(&self.gpu, job.plan.kernel.scheme == Scheme::SinglePass)?;
                Ok(s.result.read())
            }
            Finish::Cpu => {
                let count = enqueue_partials(&self.gpu, &mut s.bufs, job, a, b, &mut s.partials)?;
                let elements = (count * size_of::<R::Acc>()).div_ceil(size_of::<T>());
                let stream = self.gpu.stream();
                let host = stream.clone_dtoh(&s.partials.slice(..elements)).map_err(driver("cuMemcpyDtoH"))?;
                let acc = values_of::<R::Acc, T>(&host, count).into_iter().fold(R::IDENTITY, R::combine);
                Ok(R::finish(acc, a.len() as u64))
            }
        }
    }

    /// Run `f` on `inputs` as device views (host inputs staged in this
    /// type's scratch buffers), with the scratch locked. With `aligned`,
    /// device views that do not start on a 16-byte boundary are staged too
    /// (copied on the GPU), so `f` sees the order of an aligned input.
    pub(crate) fn with_inputs<T: Element, D: Input<T> + ?Sized, V>(
        &self,
        inputs: &[&D],
        aligned: bool,
        f: impl FnOnce(&mut Work<T>, CudaView<'_, T>, Option<CudaView<'_, T>>) -> Result<V>,
    ) -> Result<V> {
        let (first, second) = (inputs[0].source(), inputs.get(1).map(|d| d.source()));
        for source in [Some(&first), second.as_ref()].into_iter().flatten() {
            if let Source::Device(view) = source {
                self.gpu().holds(view, "an input")?;
            }
        }
        let mut scratch = self.scratch::<T>()?;
        let s = &mut *scratch;
        let [stage_a, stage_b] = &mut s.staging;
        let (a, b) = match (first, second) {
            (Source::Device(a), None) => (self.realign(stage_a, a, aligned)?, None),
            (Source::Device(a), Some(Source::Device(b))) => {
                (self.realign(stage_a, a, aligned)?, Some(self.realign(stage_b, b, aligned)?))
            }
            (Source::Host(a), None) => (self.stage(stage_a, a)?, None),
            (Source::Host(a), Some(Source::Host(b))) => (self.stage(stage_a, a)?, Some(self.stage(stage_b, b)?)),
            _ => return Err(Error::Invalid("both inputs on the host or both on the device".into())),
        };
        f(&mut s.work, a, b)
    }

    /// `view`, or (with `aligned`, when it does not start on a 16-byte
    /// boundary) a copy of it in `staging`, which does.
    fn realign<'a, T: Element>(
        &self,
        staging: &'a mut CudaSlice<T>,
        view: CudaView<'a, T>,
        aligned: bool,
    ) -> Result<CudaView<'a, T>> {
        if !aligned || view.device_ptr(self.gpu().stream()).0 % 16 == 0 {
            return Ok(view);
        }
        grow(self.gpu(), staging, view.len(), "an aligned copy of the input")?;
        let mut copy = staging.slice_mut(..view.len());
        self.gpu().stream().memcpy_dtod(&view, &mut copy).map_err(driver("cuMemcpyDtoD"))?;
        Ok(staging.slice(..view.len()))
    }
}
