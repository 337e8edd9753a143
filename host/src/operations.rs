//! The operations people reduce, on [`Reducer`]: sum, min, max, arg-min/max,
//! dot product, sum of squares, L2 norm and mean, for every type the
//! operation has (`Op::types`), and any [`Reduction`] of the user's own
//! ([`Reducer::reduce_op`]). All run the default kernel (`single_pass`),
//! which takes any operation; the result comes back to the host.

use cudarc::driver::{CudaSlice, CudaView, DevicePtr};

use crate::error::{Error, Result, driver};
use crate::input::{Element, Input, Source};
use crate::launch::{Out, enqueue, grow};
use crate::options::Options;
use crate::reducer::Reducer;
use crate::scratch::Work;
use gpu::op::{Arg, ArgMax, ArgMin, Dot, Max, Mean, Min, Norm, Reduction, Sum, SumSquares};

/// What operation `R` returns for elements of `T`.
pub type Output<R, T> = <R as Reduction<T>>::Out;

impl Reducer {
    /// The sum: wrapping for integers; for `f16`/`bf16`, accumulated and
    /// returned in `f32`.
    ///
    /// ```no_run
    /// use reduction::half::f16;
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.sum(&vec![i32::MAX, 1])?, i32::MIN);
    /// assert_eq!(r.sum(&vec![f16::ONE; 4096])?, 4096.0f32); // in f16 it would stop at 2048
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn sum<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<Sum, T>>
    where
        Sum: Reduction<T>,
    {
        self.reduce_op::<Sum, T, D>(&[data], &Options::default())
    }

    /// The smallest element (`T::MAX` or `+inf` for no elements).
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.min(&vec![3u64, 1, 2])?, 1);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn min<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<Min, T>>
    where
        Min: Reduction<T>,
    {
        self.reduce_op::<Min, T, D>(&[data], &Options::default())
    }

    /// The largest element (`T::MIN` or `-inf` for no elements).
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.max(&vec![-1.5f64, 2.5])?, 2.5);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn max<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<Max, T>>
    where
        Max: Reduction<T>,
    {
        self.reduce_op::<Max, T, D>(&[data], &Options::default())
    }

    /// The smallest element and its index, with torch's rules: the first
    /// index on ties, and for floats the first NaN if there is one.
    /// [`Error::Empty`] for no elements.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// let m = r.argmin(&vec![4i32, -2, 7, -2])?;
    /// assert_eq!((m.value, m.index), (-2, 1));
    /// assert!(matches!(r.argmin::<f32, _>(&vec![]), Err(reduction::Error::Empty { .. })));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn argmin<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Arg<T>>
    where
        ArgMin: Reduction<T, Out = Arg<T>>,
    {
        self.reduce_op::<ArgMin, T, D>(&[data], &Options::default())
    }

    /// The largest element and its index (see [`Reducer::argmin`]).
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// let m = r.argmax(&vec![1.0f32, f32::NAN, 3.0, f32::NAN])?;
    /// assert_eq!(m.index, 1); // any NaN wins, the first one
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn argmax<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Arg<T>>
    where
        ArgMax: Reduction<T, Out = Arg<T>>,
    {
        self.reduce_op::<ArgMax, T, D>(&[data], &Options::default())
    }

    /// `Σ a[i]·b[i]` (accumulated in `f32`, or `f64` for `f64`);
    /// [`Error::InputsDiffer`] unless `a` and `b` have the same length.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.dot(&vec![1.0f32, 2.0, 3.0], &vec![4.0, 5.0, 6.0])?, 32.0);
    /// assert!(r.dot(&vec![1.0f64; 3], &vec![1.0; 4]).is_err());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn dot<T: Element, D: Input<T> + ?Sized>(&self, a: &D, b: &D) -> Result<Output<Dot, T>>
    where
        Dot: Reduction<T>,
    {
        self.reduce_op::<Dot, T, D>(&[a, b], &Options::default())
    }

    /// `Σ x[i]²`.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.sum_squares(&vec![3.0f64, 4.0])?, 25.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn sum_squares<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<SumSquares, T>>
    where
        SumSquares: Reduction<T>,
    {
        self.reduce_op::<SumSquares, T, D>(&[data], &Options::default())
    }

    /// The L2 norm `√Σ x[i]²`.
    ///
    /// ```no_run
    /// use reduction::half::bf16;
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.norm(&vec![bf16::from_f32(3.0), bf16::from_f32(4.0)])?, 5.0f32);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn norm<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<Norm, T>>
    where
        Norm: Reduction<T>,
    {
        self.reduce_op::<Norm, T, D>(&[data], &Options::default())
    }

    /// The mean (NaN for no elements, like `torch.mean`).
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// assert_eq!(r.mean(&vec![1.0f32, 2.0, 6.0])?, 3.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn mean<T: Element, D: Input<T> + ?Sized>(&self, data: &D) -> Result<Output<Mean, T>>
    where
        Mean: Reduction<T>,
    {
        self.reduce_op::<Mean, T, D>(&[data], &Options::default())
    }

    /// Run operation `R` (the library's or your own: `examples/custom-op`)
    /// on `inputs` (one, or two of the same length for a two-input
    /// operation) with the default kernel; `opts` may set the block size and
    /// cap the grid. Checked before any GPU work: the number of inputs and
    /// their lengths, a kernel other than `single_pass` ([`Error::Unsupported`]),
    /// and no elements for an operation without an identity result
    /// (arg-min/max: [`Error::Empty`]). With no elements, the result is
    /// `finish(IDENTITY, 0)`: 0 for sums, NaN for the mean.
    ///
    /// ```no_run
    /// use reduction::{Options, Reducer, op::SumSquares};
    /// let r = Reducer::new()?;
    /// let opts = Options { block: Some(1024), ..Options::default() };
    /// assert_eq!(r.reduce_op::<SumSquares, f32, _>(&[&vec![2.0f32; 8]], &opts)?, 32.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_op<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        inputs: &[&D],
        opts: &Options,
    ) -> Result<R::Out> {
        let n = check_inputs::<R, T, D>(inputs, opts)?;
        if n == 0 {
            if R::NEEDS_AN_ELEMENT {
                return Err(Error::Empty { op: R::NAME });
            }
            return Ok(R::finish(R::IDENTITY, 0));
        }
        self.with_inputs::<T, D, _>(inputs, false, |work, a, b| self.run_locked::<R, T>(work, &a, b.as_ref(), opts))
    }

    /// Queue operation `R` on checked, non-empty `inputs` (host ones copied to
    /// the device first) with its output at `out`, without waiting: one GPU's
    /// part of a multi-GPU reduction.
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

/// The elements of `inputs` for operation `R` with `opts`, once checked:
/// the number of inputs and their lengths, a kernel other than the default
/// ([`Error::Unsupported`]) and finishing on the CPU ([`Error::Invalid`]).
pub(crate) fn check_inputs<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(
    inputs: &[&D],
    opts: &Options,
) -> Result<usize> {
    if inputs.len() != R::INPUTS as usize {
        return Err(Error::Invalid(format!("{} takes {} input(s), given {}", R::NAME, R::INPUTS, inputs.len())));
    }
    let n = len(&inputs[0].source());
    if let Some(other) = inputs.get(1).map(|d| len(&d.source())).filter(|&m| m != n) {
        return Err(Error::InputsDiffer { op: R::NAME, a: n, b: other });
    }
    if let Some(k) = opts.kernel.filter(|k| k.id != crate::registry::DEFAULT_KERNEL.id) {
        return Err(Error::Unsupported {
            kernel: k.id.to_string(),
            what: format!("the operation {} (only the default kernel takes any operation)", R::NAME),
            valid: crate::registry::DEFAULT_KERNEL.id.to_string(),
        });
    }
    if opts.finish != crate::options::Finish::Gpu {
        return Err(Error::Invalid(format!("{}: finishing on the CPU is for sum, min and max only", R::NAME)));
    }
    Ok(n)
}

/// The elements a source holds.
pub(crate) fn len<T>(s: &Source<'_, T>) -> usize {
    match s {
        Source::Host(h) => h.len(),
        Source::Device(v) => v.len(),
    }
}
