//! A reduction planned once ([`Prepared`]), then queued without waiting:
//! no host work per call but the launches, the result left on the device
//! (or in the reducer's result slot, for timing a reduction to the host).

use cudarc::driver::{CudaView, CudaViewMut};

use crate::device::Gpu;
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
///     r.enqueue(&sum, &[&data.as_view()], &mut out.as_view_mut())?;
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

    /// The inputs, once checked: as many as the operation reads, each
    /// exactly the elements it was prepared for ([`Error::Invalid`]).
    #[allow(clippy::type_complexity)]
    fn check<'v, 'a>(
        &self,
        inputs: &'v [&'v CudaView<'a, T>],
        gpu: &Gpu,
    ) -> Result<(&'v CudaView<'a, T>, Option<&'v CudaView<'a, T>>)>
    where
        O: Reduction<T>,
    {
        let wanted = self.job.plan.inputs as usize;
        if inputs.len() != wanted {
            return Err(Error::Invalid(format!("{} takes {wanted} input(s), given {}", O::NAME, inputs.len())));
        }
        if inputs.iter().any(|v| v.len() != self.n) {
            let lens: Vec<String> = inputs.iter().map(|v| v.len().to_string()).collect();
            return Err(Error::Invalid(format!(
                "the inputs hold {} elements; the reduction was prepared for {}",
                lens.join(" and "),
                self.n
            )));
        }
        for view in inputs {
            gpu.holds(*view, "an input")?;
        }
        Ok((inputs[0], inputs.get(1).copied()))
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

    /// Queue `prepared` on `inputs` (one, or two for a two-input operation;
    /// exactly its length) and leave the result in `out[0]` on the device,
    /// without waiting: [`Reducer::reduce_into`] with the planning done
    /// once. An empty `out`, or one not aligned for the output, is an error.
    pub fn enqueue<R: Reduction<T>, T: Element>(
        &self,
        prepared: &Prepared<R, T>,
        inputs: &[&CudaView<'_, T>],
        out: &mut CudaViewMut<'_, R::Out>,
    ) -> Result<()> {
        let (a, b) = prepared.check(inputs, self.gpu())?;
        if out.is_empty() {
            return Err(Error::SliceTooShort { len: 0, n: 1 });
        }
        let mut scratch = self.scratch::<T>()?;
        let (out, _guard) = Out::of_given(out, self.gpu())?;
        enqueue(self.gpu(), &mut scratch.work.bufs, &prepared.job, &prepared.job.plan.levels, a, b, out)
    }

    /// [`Reducer::enqueue`] with the result in the reducer's own result
    /// slot in mapped host memory, where the next call overwrites it: what
    /// a reduction to the host does, for timing it (the benchmark's
    /// `--result host`).
    pub fn enqueue_to_host<R: Reduction<T>, T: Element>(
        &self,
        prepared: &Prepared<R, T>,
        inputs: &[&CudaView<'_, T>],
    ) -> Result<()> {
        let (a, b) = prepared.check(inputs, self.gpu())?;
        let mut scratch = self.scratch::<T>()?;
        let s = &mut scratch.work;
        enqueue(self.gpu(), &mut s.bufs, &prepared.job, &prepared.job.plan.levels, a, b, s.result.out())
    }
}
