//! The library API: [`Reducer`] reduces host slices and device buffers with
//! any kernel of the registry, reusing its device scratch buffers. Its
//! other parts: what it reduces (`input.rs`) and how (`options.rs`), the
//! operations (`operations.rs`), reductions planned once and queued without
//! waiting (`prepared.rs`), rows, columns and segments (`shaped.rs`), and
//! the memory it keeps between calls (`scratch.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut};

use crate::device::Gpu;
use crate::dispatch::{self, Plan, Request};
use crate::error::{Error, Result, driver};
use crate::input::{Element, Input, Source};
use crate::launch::{Job, enqueue, enqueue_partials, grow};
use crate::options::{Finish, Options};
use crate::ptx::Ptx;
use crate::registry::Scheme;
use crate::scratch::{ScratchMap, ShapeScratch, TypedScratch, Work, typed};
use gpu::op::{ReduceOp, Reduction};

/// Reduces data on one GPU with the kernels of the registry.
///
/// Create one and keep it: the first call with a kernel loads it (a small
/// JIT compile), and device scratch buffers grow to the largest size seen and
/// are reused, so later calls allocate nothing. A `Reducer` is `Sync`; calls
/// from several threads take turns.
///
/// ```no_run
/// use reduction::{Max, Reducer};
/// # fn main() -> reduction::Result<()> {
/// let r = Reducer::new()?; // no driver or no GPU: Err(Error::NoDriver / NoDevice)
/// let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
/// let s: f32 = r.sum(&data)?;
/// assert_eq!(s, 499_500.0);
/// let on_device = r.gpu().stream().clone_htod(&data).unwrap();
/// assert_eq!(r.reduce::<Max, _, _>(&on_device)?, 999.0);
/// # Ok(()) }
/// ```
pub struct Reducer {
    gpu: Gpu,
    /// One [`Scratch`](crate::scratch::Scratch) per element type (`scratch.rs`).
    pub(crate) scratch: ScratchMap,
    /// The shaped reductions' buffers (`shaped.rs`), made on first use.
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

    /// Reduce with operator `O` and the default (fastest) kernel.
    ///
    /// ```no_run
    /// use reduction::{Min, Reducer};
    /// let r = Reducer::new()?;
    /// assert_eq!(r.reduce::<Min, _, _>(&[5i64, -7, 3][..])?, -7);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce<O: ReduceOp<T>, T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<T> {
        self.reduce_with::<O, T, D>(data, &Options::default())
    }

    /// Reduce with operator `O` and an explicit kernel, block size and finish.
    ///
    /// ```no_run
    /// use reduction::{Finish, Options, Reducer, Sum, registry::Kernel};
    /// let r = Reducer::new()?;
    /// let opts = Options { kernel: Some(Kernel::find("reduce1")?), block: Some(64), finish: Finish::Cpu, ..Options::default() };
    /// assert_eq!(r.reduce_with::<Sum, _, _>(&vec![1u32; 1000], &opts)?, 1000);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_with<O: ReduceOp<T>, T: Element, D: Input<T> + ?Sized>(&self, data: &D, opts: &Options) -> Result<T> {
        match data.source() {
            Source::Device(view) => self.reduce_view::<O, T>(&view, opts),
            Source::Host([]) => Ok(O::IDENTITY),
            Source::Host(host) => {
                let mut scratch = self.scratch::<T>()?;
                let s = &mut *scratch;
                let staged = self.stage(&mut s.staging[0], host)?;
                self.reduce_locked::<O, T>(&mut s.work, &staged, opts)
            }
        }
    }

    /// Copy `host` into `staging` (grown as needed) and view it there.
    pub(crate) fn stage<'a, T: Element>(&self, staging: &'a mut CudaSlice<T>, host: &[T]) -> Result<CudaView<'a, T>> {
        grow(&self.gpu, staging, host.len(), "the input copied from the host")?;
        let mut view = staging.slice_mut(..host.len());
        self.gpu.stream().memcpy_htod(host, &mut view).map_err(driver("cuMemcpyHtoD"))?;
        Ok(staging.slice(..host.len()))
    }

    /// Reduce the first `n` elements of a device buffer.
    ///
    /// ```no_run
    /// use reduction::{Error, Options, Reducer, Sum};
    /// let r = Reducer::new()?;
    /// let buf = r.gpu().stream().clone_htod(&[1i32, 2, 3, 4]).unwrap();
    /// assert_eq!(r.reduce_prefix::<Sum, _>(&buf, 3, &Options::default())?, 6);
    /// assert!(matches!(r.reduce_prefix::<Sum, i32>(&buf, 5, &Options::default()), Err(Error::SliceTooShort { len: 4, n: 5 })));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_prefix<O: ReduceOp<T>, T: Element>(
        &self,
        data: &CudaSlice<T>,
        n: usize,
        opts: &Options,
    ) -> Result<T> {
        if n > data.len() {
            return Err(Error::SliceTooShort { len: data.len(), n });
        }
        self.reduce_view::<O, T>(&data.slice(..n), opts)
    }

    /// Queue the reduction of `data` on the stream and leave the result in
    /// `out[0]`, without waiting: nothing is copied to the host. With
    /// no elements, `out` is left as it is.
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, Sum};
    /// let r = Reducer::new()?;
    /// let stream = r.gpu().stream();
    /// let data = stream.clone_htod(&vec![2.0f64; 1 << 20]).unwrap();
    /// let mut out = stream.alloc_zeros::<f64>(1).unwrap();
    /// r.reduce_into::<Sum, _>(&data.as_view(), &mut out.as_view_mut(), &Options::default())?;
    /// assert_eq!(stream.clone_dtoh(&out).unwrap()[0], 2097152.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_into<O: ReduceOp<T>, T: Element>(
        &self,
        data: &CudaView<'_, T>,
        out: &mut CudaViewMut<'_, T>,
        opts: &Options,
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.enqueue(&self.prepare::<O, T>(data.len(), opts)?, data, out)
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

    fn reduce_view<O: ReduceOp<T>, T: Element>(&self, data: &CudaView<'_, T>, opts: &Options) -> Result<T> {
        if data.is_empty() {
            return Ok(O::IDENTITY);
        }
        let mut scratch = self.scratch::<T>()?;
        self.reduce_locked::<O, T>(&mut scratch.work, data, opts)
    }

    /// Reduce non-empty `data` to one value on the host.
    fn reduce_locked<O: ReduceOp<T>, T: Element>(
        &self,
        s: &mut Work<T>,
        data: &CudaView<'_, T>,
        opts: &Options,
    ) -> Result<T> {
        match opts.finish {
            Finish::Gpu => self.run_locked::<O, T>(s, data, None, opts),
            Finish::Cpu => {
                let job = self.cached_job::<O, T>(&mut s.last, data.len(), opts)?;
                let count = enqueue_partials(&self.gpu, &mut s.bufs, job, data, &mut s.partials)?;
                let stream = self.gpu.stream();
                let host = stream.clone_dtoh(&s.partials.slice(..count)).map_err(driver("cuMemcpyDtoH"))?;
                Ok(host.into_iter().fold(O::IDENTITY, O::combine))
            }
        }
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
    /// a two-input operation) and return its output on the host.
    pub(crate) fn run_locked<R: Reduction<T>, T: Element>(
        &self,
        s: &mut Work<T>,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        opts: &Options,
    ) -> Result<R::Out> {
        let job = self.cached_job::<R, T>(&mut s.last, a.len(), opts)?;
        enqueue(&self.gpu, &mut s.bufs, job, &job.plan.levels, a, b, s.result.out())?;
        s.result.wait(&self.gpu, job.plan.kernel.scheme == Scheme::SinglePass)?;
        Ok(s.result.read())
    }
}
