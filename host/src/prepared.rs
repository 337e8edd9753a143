//! A reduction planned once ([`Prepared`]), then queued without waiting:
//! no host work per call but the launches, the result left on the device
//! (or in the reducer's result slot, for timing a reduction to the host).

use cudarc::driver::{CudaView, CudaViewMut};

use crate::dispatch::Level;
use crate::error::{Error, Result};
use crate::input::Element;
use crate::launch::{Job, Out, enqueue};
use crate::options::Options;
use crate::reducer::Reducer;
use crate::registry::Kernel;
use gpu::op::Reduction;

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
    pub(crate) job: Job,
    pub(crate) n: usize,
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
        (self.job.plan.kernel, self.job.plan.block)
    }

    /// The launches it queues, level by level (as [`dispatch`](crate::dispatch)
    /// planned them): what the error bound of a float result is derived from
    /// ([`dispatch::depth`](crate::dispatch::depth)).
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, Sum, dispatch::depth};
    /// let r = Reducer::new()?;
    /// let p = r.prepare::<Sum, f32>(1 << 20, &Options::default())?;
    /// let (kernel, block) = p.kernel();
    /// assert!(depth(kernel, p.levels(), block) > 0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn levels(&self) -> &[Level] {
        &self.job.plan.levels
    }

    /// The blocks of its first launch (the only one of a single-pass kernel).
    pub fn grid(&self) -> u32 {
        self.job.plan.levels.first().and_then(|l| l.launches.first()).map_or(0, |l| l.grid)
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

impl Reducer {
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
        enqueue(self.gpu(), &mut s.bufs, &prepared.job, &prepared.job.plan.levels, a, b, s.result.out())
    }

    /// Queue `prepared` (any operation) on `a` (and `b`, for a two-input
    /// operation), exactly its length, and leave the result in `out[0]` on
    /// the device, without waiting: nothing comes back to the host (an
    /// arg-max whose index the next kernel reads). For outputs that are not
    /// cudarc `DeviceRepr` types (an [`Arg`](crate::op::Arg)), view a byte
    /// buffer as them; an `out` not aligned for the output is an
    /// [`Error::Invalid`].
    ///
    /// ```no_run
    /// use reduction::{ArgMax, Options, Reducer, op::Arg};
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
        let (out, _guard) = Out::of_given(out, self.gpu())?;
        enqueue(self.gpu(), &mut scratch.work.bufs, &prepared.job, &prepared.job.plan.levels, a, b, out)
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
}
