//! The library API: [`Reducer`] reduces host slices and device buffers with
//! any kernel of the registry, reusing its device scratch buffers.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceRepr, ValidAsZeroBits};

use crate::device::{Gpu, Mapped};
use crate::error::{Error, Result, driver};
use crate::launch::{Buffers, Job, Out, enqueue, enqueue_partials, grow};
use crate::modes::{Determinism, ModeJob, mode_kernel};
use crate::plan::{Level, plan};
use crate::ptx::Ptx;
use crate::registry::{DEFAULT_BLOCK, DEFAULT_KERNEL, Kernel, Scheme, default_block, fit_block};
use gpu::half::{bf16, f16};
use gpu::op::{Bits, ReduceOp, Reduction};

/// An element type the library reduces: `i32, u32, i64, u64, f32, f64` and
/// the half types `f16`, `bf16` (the `half` crate's).
///
/// Integer sums wrap on overflow (like CUDA's `int`); float results follow
/// the rules in [`gpu::op`] (NaN propagates, `-0.0 < +0.0` for min/max);
/// half-precision sums accumulate in `f32` and return `f32`.
///
/// ```no_run
/// use reduction::{Element, ReduceOp, Reducer, Result, Sum};
/// fn mean<T: Element + Into<f64>>(r: &Reducer, xs: &[T]) -> Result<f64>
/// where
///     Sum: ReduceOp<T>,
/// {
///     Ok(r.sum(xs)?.into() / xs.len() as f64)
/// }
/// let r = Reducer::new()?;
/// assert_eq!(mean(&r, &[1.0f32, 2.0])?, 1.5);
/// assert_eq!(mean(&r, &[1u32, 2, 3, 4])?, 2.5);
/// # Ok::<(), reduction::Error>(())
/// ```
pub trait Element: gpu::op::Element + DeviceRepr + ValidAsZeroBits + Default + std::fmt::Display {}
impl Element for i32 {}
impl Element for u32 {}
impl Element for i64 {}
impl Element for u64 {}
impl Element for f32 {}
impl Element for f64 {}
impl Element for f16 {}
impl Element for bf16 {}

/// Where the last partials are combined.
///
/// ```
/// use reduction::{Finish, Options};
/// assert_eq!(Options::default().finish, Finish::Gpu);
/// let like_seed_004 = Options { finish: Finish::Cpu, ..Options::default() };
/// # let _ = like_seed_004;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Finish {
    /// Launch again on the partials until one value remains (Harris).
    #[default]
    Gpu,
    /// One launch; copy its per-block partials to the host and combine them
    /// there (seed 004 does this).
    Cpu,
}

/// How to reduce: which kernel, block size and finish. The default is the
/// library's fastest kernel for the device.
///
/// ```
/// use reduction::{Finish, Kernel, Options};
/// let teaching = Options { kernel: Some(Kernel::find("reduce4").unwrap()), block: Some(256), finish: Finish::Cpu, ..Options::default() };
/// assert!(Options::default().kernel.is_none());
/// # let _ = teaching;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `None`: the fastest kernel for this device and size.
    pub kernel: Option<&'static Kernel>,
    /// `None`: [`DEFAULT_BLOCK`] for an explicit kernel, the tuned size for the default.
    pub block: Option<u32>,
    /// Where the partials are combined.
    pub finish: Finish,
    /// At most this many blocks for a grid-stride kernel (`reduce7` on,
    /// `single_pass`): `None` is what the GPU holds at once. A smaller GPU
    /// in effect; for tuning and for results that must not depend on the
    /// GPU's size.
    pub max_grid: Option<u32>,
    /// How reproducible float results must be: [`Determinism::RunToRun`]
    /// (the default kernel) or [`Determinism::GpuToGpu`] (the same bits on
    /// any GPU, block size and grid: f32/f64 sum, dot, sum_squares, norm,
    /// mean). Other operations and types are refused
    /// ([`Error::Unsupported`]) before any GPU work.
    pub determinism: Determinism,
    /// The accurate f32/f64 sum: f32 correctly rounded (within ½ ulp of the
    /// exact sum, whatever the data), f64 within 1 ulp while Σ|x|/|Σx| <
    /// 2^32 (`docs/determinism.md`); both also `gpu_to_gpu`.
    pub accurate: bool,
}

/// Where the elements to reduce are.
///
/// ```
/// use reduction::{Input, Source};
/// let data = [1.0f32, 2.0];
/// match data[..].source() {
///     Source::Host(s) => assert_eq!(s, [1.0, 2.0]),
///     Source::Device(_) => unreachable!("a host slice"),
/// }
/// ```
#[derive(Debug)]
pub enum Source<'a, T> {
    /// In host memory: copied to a device staging buffer first.
    Host(&'a [T]),
    /// Already on the device.
    Device(CudaView<'a, T>),
}

/// Something to reduce: a host slice or a cudarc device buffer.
///
/// ```
/// use reduction::{Input, Source};
/// assert!(matches!(vec![1i32, 2].source(), Source::Host(s) if s.len() == 2));
/// ```
pub trait Input<T> {
    /// Where the elements are.
    ///
    /// ```
    /// use reduction::{Input, Source};
    /// let v = vec![3u64, 4];
    /// assert!(matches!(v.source(), Source::Host([3, 4])));
    /// ```
    fn source(&self) -> Source<'_, T>;
}

impl<T> Input<T> for [T] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for Vec<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for CudaSlice<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self.as_view())
    }
}

impl<T> Input<T> for CudaView<'_, T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self.slice(..))
    }
}

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
    result: MappedSlot,
    /// The first level's partials when they are finished on the CPU.
    partials: CudaSlice<T>,
    /// The last reduction planned, for calls that repeat it (the same
    /// operator, size and options): planning is then skipped.
    pub(crate) last: Option<(JobKey, Job)>,
}

/// What a [`Job`] depends on besides the element type: operator, size,
/// kernel and block asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct JobKey {
    op: &'static str,
    n: usize,
    kernel: Option<&'static str>,
    block: Option<u32>,
    max_grid: Option<u32>,
    determinism: Determinism,
    accurate: bool,
}

/// One result (at most 16 bytes: [`Bits`]) in pinned host memory mapped
/// into the device's address space. A reduction to the host lets its last
/// launch store the result here, so the call waits for the kernel and
/// reads: no copy is queued after the kernel (about half the time of a
/// small reduction, measured in `reduce latency`).
struct MappedSlot {
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
    fn out(&self) -> Out {
        // SAFETY: the flag's one `u32`, alive as long as `self`; no kernel
        // writes it now (the last one that did has finished: its caller
        // waited for it).
        unsafe { self.flag.ptr().write_volatile(0) };
        Out { addr: self.value.addr(), len: 1, done: self.flag.addr() }
    }

    /// Wait until the kernel has set the flag, polling host memory (no
    /// driver call); after [`POLL_FOR`], or for kernels that do not set it
    /// (`polls` false), wait in the driver.
    fn wait(&self, gpu: &Gpu, polls: bool) -> Result<()> {
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
    fn read<V: Bits>(&self) -> V {
        const { assert!(size_of::<V>() <= 16 && align_of::<V>() <= 8) };
        // SAFETY: `value` is the slot's 16 bytes, allocated (and kept alive
        // by `self`) and 8-byte aligned (two u64s from cuMemHostAlloc), room
        // and alignment for V (asserted above); every bit pattern is a V
        // (`Bits`); the kernel that wrote it is done with it (`wait`), and
        // the read is volatile because the device, not Rust, wrote it.
        unsafe { self.value.ptr().cast::<V>().read_volatile() }
    }
}

/// A reduction planned once, for `n` elements of `T` with operator `O` and
/// a kernel and block size: [`Reducer::enqueue`] then queues its launches
/// with no host work but the launches themselves. For timing kernels (the
/// benchmark prepares before its first CUDA event) and for calling the same
/// reduction in a loop.
///
/// ```no_run
/// use reduction::{Options, Reducer, Sum};
/// let r = Reducer::new()?;
/// let stream = r.gpu().stream();
/// let data = stream.clone_htod(&vec![1u32; 1 << 20]).unwrap();
/// let mut out = stream.alloc_zeros::<u32>(1).unwrap();
/// let sum = r.prepare::<Sum, u32>(1 << 20, &Options::default())?;
/// for _ in 0..10 {
///     r.enqueue(&sum, &data.as_view(), &mut out.as_view_mut())?;
/// }
/// assert_eq!(stream.clone_dtoh(&out).unwrap()[0], 1 << 20);
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct Prepared<O, T> {
    job: Job,
    n: usize,
    _op: std::marker::PhantomData<fn(O, T)>,
}

impl<O, T> Prepared<O, T> {
    /// The elements it reduces.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Never: a prepared reduction has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The kernel and block size it launches.
    pub fn kernel(&self) -> (&'static Kernel, u32) {
        (self.job.kernel, self.job.block)
    }

    /// `Error::Invalid` unless `a` (and `b`) hold exactly the elements it
    /// was prepared for (the launch checks that `b` is there when the
    /// operation reads two inputs).
    fn check(&self, a: &CudaView<'_, T>, b: Option<&CudaView<'_, T>>) -> Result<()> {
        if a.len() != self.n || b.is_some_and(|b| b.len() != self.n) {
            return Err(Error::Invalid(format!(
                "the inputs hold {}{} elements; the reduction was prepared for {}",
                a.len(),
                b.map(|b| format!(" and {}", b.len())).unwrap_or_default(),
                self.n
            )));
        }
        Ok(())
    }
}

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
    scratch: Mutex<HashMap<TypeId, Box<dyn Any + Send>>>,
    /// The shaped reductions' buffers (`shaped.rs`), made on first use.
    pub(crate) shapes: Mutex<Option<crate::shaped::ShapeScratch>>,
}

impl std::fmt::Debug for Reducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reducer").field("gpu", &self.gpu).finish_non_exhaustive()
    }
}

impl Reducer {
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
    /// use reduction::{Finish, Kernel, Options, Reducer, Sum};
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

    /// Plan the reduction of `n > 0` elements once ([`Prepared`]).
    ///
    /// ```no_run
    /// use reduction::{Error, Options, Reducer, Sum};
    /// let r = Reducer::new()?;
    /// let p = r.prepare::<Sum, f32>(1 << 24, &Options::default())?;
    /// assert_eq!((p.len(), p.kernel().0.id), (1 << 24, "single_pass"));
    /// assert!(matches!(r.prepare::<Sum, f32>(0, &Options::default()), Err(Error::Invalid(_))));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn prepare<R: Reduction<T>, T: Element>(&self, n: usize, opts: &Options) -> Result<Prepared<R, T>> {
        if n == 0 {
            return Err(Error::Invalid("a prepared reduction needs at least one element".into()));
        }
        Ok(Prepared { job: self.job_for::<R, T>(n, opts)?, n, _op: std::marker::PhantomData })
    }

    /// Queue `prepared` (any operation) on `a` (and `b`, for a two-input
    /// operation), exactly its length, without waiting; its result goes to
    /// the reducer's own result slot in mapped host memory, where the next
    /// call overwrites it: what a reduction to the host does, for timing it
    /// (the benchmark's `--result host`).
    pub fn enqueue_op<R: Reduction<T>, T: Element>(
        &self,
        prepared: &Prepared<R, T>,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
    ) -> Result<()> {
        prepared.check(a, b)?;
        let mut scratch = self.scratch::<T>()?;
        let s = &mut scratch.work;
        enqueue(&self.gpu, &mut s.bufs, &prepared.job, &prepared.job.levels, a, b, s.result.out())
    }

    /// Queue `prepared` (any operation) on `a` (and `b`, for a two-input
    /// operation), exactly its length, and leave the result in `out[0]` on
    /// the device, without waiting: nothing comes back to the host (an
    /// arg-max whose index the next kernel reads). For outputs that are not
    /// cudarc `DeviceRepr` types (an [`Arg`](crate::Arg)), view a byte
    /// buffer as them; an `out` not aligned for the output is an
    /// [`Error::Invalid`].
    ///
    /// ```no_run
    /// use reduction::{Arg, ArgMax, Options, Reducer};
    /// let r = Reducer::new()?;
    /// let s = r.gpu().stream();
    /// let x = s.clone_htod(&[1.0f32, 7.0, 3.0, 7.0]).unwrap();
    /// let mut bytes = s.alloc_zeros::<u8>(size_of::<Arg<f32>>()).unwrap();
    /// // SAFETY: every bit pattern is an `Arg<f32>`, and the allocation is aligned
    /// let mut out = unsafe { bytes.transmute_mut::<Arg<f32>>(1) }.unwrap();
    /// let p = r.prepare::<ArgMax, f32>(4, &Options::default())?;
    /// r.enqueue_op_into(&p, &x.as_view(), None, &mut out)?;
    /// let b = s.clone_dtoh(&bytes).unwrap();
    /// assert_eq!(u64::from_ne_bytes(b[8..16].try_into().unwrap()), 1); // the first 7.0
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn enqueue_op_into<R: Reduction<T>, T: Element>(
        &self,
        prepared: &Prepared<R, T>,
        a: &CudaView<'_, T>,
        b: Option<&CudaView<'_, T>>,
        out: &mut CudaViewMut<'_, R::Out>,
    ) -> Result<()> {
        prepared.check(a, b)?;
        if out.is_empty() {
            return Err(Error::SliceTooShort { len: 0, n: 1 });
        }
        let mut scratch = self.scratch::<T>()?;
        let (out, _guard) = Out::of_given(out, &self.gpu)?;
        enqueue(&self.gpu, &mut scratch.work.bufs, &prepared.job, &prepared.job.levels, a, b, out)
    }

    /// Queue `prepared` on `data` (exactly its length) and leave the result
    /// in `out[0]`, without waiting: [`Reducer::enqueue_op_into`] for the
    /// operations whose output is an element.
    pub fn enqueue<R: Reduction<T, Out = T>, T: Element>(
        &self,
        prepared: &Prepared<R, T>,
        data: &CudaView<'_, T>,
        out: &mut CudaViewMut<'_, T>,
    ) -> Result<()> {
        self.enqueue_op_into(prepared, data, None, out)
    }

    /// The kernel and block size for `n` elements: the caller's, checked, or
    /// the default: [`DEFAULT_KERNEL`] with 256 threads below 2^25 elements
    /// and 1024 from there on ([`default_block`]). Every kernel can finish
    /// on the CPU ([`Finish::Cpu`]).
    ///
    /// ```no_run
    /// use reduction::{Kernel, Options, Reducer};
    /// let r = Reducer::new()?;
    /// let (k, block) = r.choose(1 << 20, &Options::default())?;
    /// assert_eq!((k.id, block), ("single_pass", 256));
    /// let bad = Options { kernel: Some(Kernel::find("reduce5")?), block: Some(32), ..Options::default() };
    /// assert!(r.choose(1 << 20, &bad).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn choose(&self, n: usize, opts: &Options) -> Result<(&'static Kernel, u32)> {
        let (kernel, default_block) = match opts.kernel {
            Some(k) => (k, DEFAULT_BLOCK),
            None => (DEFAULT_KERNEL, default_block(n)),
        };
        let block = opts.block.unwrap_or(default_block);
        kernel.check_block(block)?;
        Ok((kernel, block))
    }

    /// Choose and plan `n > 0` elements of operation `R` on `T`: its entry,
    /// accumulator size and inputs.
    pub(crate) fn job_for<R: Reduction<T>, T: Element>(&self, n: usize, opts: &Options) -> Result<Job> {
        if let Some(mode) = mode_kernel(R::NAME, T::DTYPE, opts)? {
            return self.mode_job::<R, T>(mode, n, opts);
        }
        let (kernel, block) = self.choose(n, opts)?;
        let (block, entry) = fit_block(
            opts.block,
            block,
            |b| kernel.entry_named(b, R::NAME, T::NAME),
            |e| self.gpu.max_threads_per_block(e),
        )?;
        let levels = self.plan_entry(kernel, &entry, block, n, size_of::<T>(), opts.max_grid)?;
        let func = self.gpu.function(&entry)?;
        Ok(Job { kernel, block, entry, func, levels, inputs: R::INPUTS, acc_bytes: size_of::<R::Acc>(), mode: None })
    }

    /// A reproducible or accurate kernel ([`crate::modes`]) for `n` elements:
    /// launched like the default kernel (one launch, the last block
    /// finishes), at the block size asked for or the default one, on the
    /// grid it can use (at most `max_grid`; its result does not depend on it).
    fn mode_job<R: Reduction<T>, T: Element>(
        &self,
        mode: crate::modes::ModeKernel,
        n: usize,
        opts: &Options,
    ) -> Result<Job> {
        // the library's operations of that name: the entry's accumulator and output are these
        let (inputs, out_bytes) = (R::INPUTS, size_of::<R::Out>());
        if out_bytes != size_of::<T>() || inputs != if R::NAME == "dot" { 2 } else { 1 } {
            return Err(Error::Unsupported {
                kernel: "gpu_to_gpu".into(),
                what: format!("an operation of your own named {}", R::NAME),
                valid: "the library's sum, dot, sum_squares, norm, mean".into(),
            });
        }
        // the accurate kernels' registers allow fewer than 1024 threads a block
        let (block, entry) = fit_block(
            opts.block,
            default_block(n),
            |_| crate::modes::entry(mode, R::NAME, T::DTYPE),
            |e| self.gpu.max_threads_per_block(e),
        )?;
        DEFAULT_KERNEL.check_block(block)?;
        let resident = self.gpu.resident_blocks(&entry, block, gpu::layout::MODES_SMEM)?;
        let resident = opts.max_grid.map_or(resident, |g| resident.min(g.max(1)));
        let (job, grid) = ModeJob::plan(mode, T::DTYPE, n, block, resident);
        let func = self.gpu.function(&entry)?;
        let levels =
            vec![Level { launches: vec![crate::plan::Launch { in_offset: 0, n, grid, out_offset: 0 }], outputs: 1 }];
        let acc_bytes = job.acc_bytes;
        Ok(Job { kernel: DEFAULT_KERNEL, block, entry, func, levels, inputs, acc_bytes, mode: Some(job) })
    }

    /// The launches that reduce `n` elements with `kernel` at `block`
    /// threads on this device (grid-stride kernels get the grid the occupancy
    /// API allows, at most `max_grid` blocks).
    ///
    /// ```no_run
    /// use reduction::{Kernel, Reducer, Sum};
    /// let r = Reducer::new()?;
    /// let levels = r.plan::<Sum, f32>(Kernel::find("reduce7")?, 256, 1 << 24, None)?;
    /// assert_eq!(levels.len(), 2);
    /// let capped = r.plan::<Sum, f32>(Kernel::find("reduce7")?, 256, 1 << 24, Some(7))?;
    /// assert_eq!(capped[0].launches[0].grid, 7);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn plan<O: ReduceOp<T>, T: Element>(
        &self,
        kernel: &Kernel,
        block: u32,
        n: usize,
        max_grid: Option<u32>,
    ) -> Result<Vec<Level>> {
        let entry = kernel.entry(block, O::OP, T::DTYPE);
        self.plan_entry(kernel, &entry, block, n, size_of::<T>(), max_grid)
    }

    fn plan_entry(
        &self,
        kernel: &Kernel,
        entry: &str,
        block: u32,
        n: usize,
        elem_size: usize,
        max_grid: Option<u32>,
    ) -> Result<Vec<Level>> {
        let resident = if kernel.scheme.grid_stride() {
            let resident = self.gpu.resident_blocks(entry, block, kernel.scheme.smem(block, elem_size))?;
            max_grid.map_or(resident, |g| resident.min(g.max(1)))
        } else {
            0
        };
        Ok(plan(kernel, n, block, resident))
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
    /// it was the same, else planned now (and kept).
    pub(crate) fn cached_job<'s, R: Reduction<T>, T: Element>(
        &self,
        last: &'s mut Option<(JobKey, Job)>,
        n: usize,
        opts: &Options,
    ) -> Result<&'s Job> {
        let key = JobKey {
            op: R::NAME,
            n,
            kernel: opts.kernel.map(|k| k.id),
            block: opts.block,
            max_grid: opts.max_grid,
            determinism: opts.determinism,
            accurate: opts.accurate,
        };
        if last.as_ref().is_none_or(|(k, _)| *k != key) {
            *last = Some((key, self.job_for::<R, T>(n, opts)?));
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
        enqueue(&self.gpu, &mut s.bufs, job, &job.levels, a, b, s.result.out())?;
        s.result.wait(&self.gpu, job.kernel.scheme == Scheme::SinglePass)?;
        Ok(s.result.read())
    }

    pub(crate) fn scratch<T: Element>(&self) -> Result<TypedScratch<'_, T>> {
        let mut map = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(TypeId::of::<T>()) {
            let buffer = || self.gpu.alloc::<T>(1, "scratch");
            let mut ticket = self.gpu.alloc::<u32>(1, "the single-pass ticket")?;
            self.gpu.stream().memset_zeros(&mut ticket).map_err(driver("cuMemsetD8"))?;
            let bufs = Buffers { levels: [buffer()?, buffer()?], ticket };
            let work = Work { bufs, result: MappedSlot::new(&self.gpu)?, partials: buffer()?, last: None };
            slot.insert(Box::new(Scratch::<T> { work, staging: [buffer()?, buffer()?] }));
        }
        Ok(TypedScratch { guard: map, _t: std::marker::PhantomData })
    }
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
