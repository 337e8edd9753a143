//! The operations people reduce, on [`Reducer`]: sum, min, max, arg-min/max,
//! dot product, sum of squares, L2 and p-norms, mean, variance and standard deviation, for every type the
//! operation has (`Op::types`): [`Reducer::reduce`] with the default
//! options, the result on the host.

use crate::error::Result;
use crate::input::{Element, Input};
use crate::options::Options;
use crate::reducer::Reducer;
use gpu::op::power::{Order, root};
use gpu::op::{
    Arg, ArgMax, ArgMin, CountNonzero, Dot, Max, Mean, MeanM2, Min, Moments, Norm, Norm1, NormInf, NormNegInf,
    PowerSum, Reduction, Sum, SumSquares,
};

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
        self.reduce::<Sum, T, D>(&[data], &Options::default())
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
        self.reduce::<Min, T, D>(&[data], &Options::default())
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
        self.reduce::<Max, T, D>(&[data], &Options::default())
    }

    /// The smallest element and its index, with torch's rules: the first
    /// index on ties, and for floats the first NaN if there is one.
    /// [`Error::Empty`](crate::Error::Empty) for no elements.
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
        self.reduce::<ArgMin, T, D>(&[data], &Options::default())
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
        self.reduce::<ArgMax, T, D>(&[data], &Options::default())
    }

    /// `Σ a[i]·b[i]` (accumulated in `f32`, or `f64` for `f64`);
    /// [`Error::InputsDiffer`](crate::Error::InputsDiffer) unless `a` and `b` have the same length.
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
        self.reduce::<Dot, T, D>(&[a, b], &Options::default())
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
        self.reduce::<SumSquares, T, D>(&[data], &Options::default())
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
        self.reduce::<Norm, T, D>(&[data], &Options::default())
    }

    /// The p-norm, `torch.linalg.vector_norm(x, ord=p)`, in `f64` for every
    /// element type: the nonzero count for `p = 0`, `Σ |x|` for 1,
    /// `√Σ x²` for 2, `max |x|` for `+inf`, `min |x|` for `-inf`
    /// (the library's own norms), and `(Σ |x|ᵖ)^(1/p)` for any other `p`:
    /// one pass of [`PowerSum`] (its terms from the GPU's approximate
    /// `exp2` and `log2` for `f32` and the half types: within about 2⁻²⁰
    /// relatively, `gpu::op::power`), the root in `f64` on the host. No
    /// elements give 0, or [`Error::Empty`](crate::Error::Empty) for `p < 0`
    /// and `p = ±inf` (no identity, as in torch); NaN for `p` is
    /// [`Error::Invalid`](crate::Error::Invalid). For rows, columns and
    /// segments, [`reduce_shaped`](Self::reduce_shaped) `PowerSum` with
    /// `Options { p: Some(p), .. }` and take `gpu::op::power::root` of each.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// let x = vec![3.0f32, -4.0, 0.0];
    /// assert_eq!((r.norm_p(&x, 2.0)?, r.norm_p(&x, 0.0)?, r.norm_p(&x, f64::INFINITY)?), (5.0, 2.0, 4.0));
    /// assert!((r.norm_p(&x, 3.0)? - 91f64.cbrt()).abs() < 1e-4);
    /// assert!(r.norm_p(&Vec::<f32>::new(), -1.0).is_err()); // no identity
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn norm_p<T: Element, D: Input<T> + ?Sized, A: Into<f64>>(&self, data: &D, p: f64) -> Result<f64>
    where
        PowerSum: Reduction<T, Out = A>,
        Norm1: Reduction<T, Out = A>,
        Norm: Reduction<T, Out = A>,
        NormInf: Reduction<T, Out = A>,
        NormNegInf: Reduction<T, Out = A>,
        CountNonzero: Reduction<T, Out = u64>,
    {
        let order = crate::dispatch::norm_order(p, Some(crate::input::len(&data.source()) == 0))?;
        Ok(match order {
            Order::Count => self.reduce::<CountNonzero, T, D>(&[data], &Options::default())? as f64,
            Order::One => self.reduce::<Norm1, T, D>(&[data], &Options::default())?.into(),
            Order::Two => self.reduce::<Norm, T, D>(&[data], &Options::default())?.into(),
            Order::Inf => self.reduce::<NormInf, T, D>(&[data], &Options::default())?.into(),
            Order::NegInf => self.reduce::<NormNegInf, T, D>(&[data], &Options::default())?.into(),
            Order::Power(p) => {
                let s = self.reduce::<PowerSum, T, D>(&[data], &Options { p: Some(p), ..Options::default() })?;
                root(s.into(), p)
            }
        })
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
        self.reduce::<Mean, T, D>(&[data], &Options::default())
    }

    /// The variance with torch's `correction` (1 for the sample variance,
    /// `torch.var`'s default; 0 for the population's), in one pass
    /// ([`Moments`]: Welford within a vector, Chan's merge between them):
    /// `M2 / max(0, n − correction)`, NaN for no elements or a NaN or an
    /// infinity among them; in `f64` for every element type.
    ///
    /// ```no_run
    /// let r = reduction::Reducer::new()?;
    /// let x = vec![2.0f32, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    /// assert_eq!((r.var(&x, 0.0)?, r.std(&x, 0.0)?), (4.0, 2.0));
    /// assert_eq!(r.var_mean(&x, 1.0)?, (32.0 / 7.0, 5.0));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn var<T: Element, D: Input<T> + ?Sized>(&self, data: &D, correction: f64) -> Result<f64>
    where
        Moments: Reduction<T, Out = MeanM2>,
    {
        Ok(self.var_mean(data, correction)?.0)
    }

    /// The standard deviation: the square root of [`Reducer::var`].
    pub fn std<T: Element, D: Input<T> + ?Sized>(&self, data: &D, correction: f64) -> Result<f64>
    where
        Moments: Reduction<T, Out = MeanM2>,
    {
        Ok(self.std_mean(data, correction)?.0)
    }

    /// The variance and the mean from the one pass, `torch.var_mean`.
    pub fn var_mean<T: Element, D: Input<T> + ?Sized>(&self, data: &D, correction: f64) -> Result<(f64, f64)>
    where
        Moments: Reduction<T, Out = MeanM2>,
    {
        let m = self.reduce::<Moments, T, D>(&[data], &Options::default())?;
        Ok((m.var(crate::input::len(&data.source()) as u64, correction), m.mean))
    }

    /// The standard deviation and the mean from the one pass, `torch.std_mean`.
    pub fn std_mean<T: Element, D: Input<T> + ?Sized>(&self, data: &D, correction: f64) -> Result<(f64, f64)>
    where
        Moments: Reduction<T, Out = MeanM2>,
    {
        let m = self.reduce::<Moments, T, D>(&[data], &Options::default())?;
        Ok((m.std(crate::input::len(&data.source()) as u64, correction), m.mean))
    }
}
