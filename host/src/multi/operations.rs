//! The operations of [`MultiReducer`] by name, as [`Reducer`](crate::Reducer)
//! has them (`operations.rs`): each one [`MultiReducer::reduce`] over
//! the shards, one per GPU of this process or this rank's own.

use crate::error::{Error, Result};
use crate::input::{Element, Input, len};
use crate::multi::{MultiReducer, Sharded};
use crate::options::Options;
use crate::reducer::Output;
use gpu::op::power::{Order, root};
use gpu::op::{
    Arg, ArgMax, ArgMin, CountNonzero, Dot, Max, Mean, Min, Norm, Norm1, NormInf, NormNegInf, PowerSum, Reduction, Sum,
    SumSquares,
};

impl MultiReducer {
    /// The sum over every shard (one per GPU of this process).
    pub fn sum<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Sum, T>>
    where
        Sum: Sharded<T>,
    {
        self.one_input::<Sum, T, D>(shards, &Options::default())
    }

    /// The smallest element of all shards.
    pub fn min<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Min, T>>
    where
        Min: Sharded<T>,
    {
        self.one_input::<Min, T, D>(shards, &Options::default())
    }

    /// The largest element of all shards.
    pub fn max<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Max, T>>
    where
        Max: Sharded<T>,
    {
        self.one_input::<Max, T, D>(shards, &Options::default())
    }

    /// The smallest element and its global index (shards in rank order,
    /// one after the other), torch's rules (the first index on ties, the
    /// first NaN).
    pub fn argmin<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Arg<T>>
    where
        ArgMin: Sharded<T> + Reduction<T, Out = Arg<T>>,
    {
        self.one_input::<ArgMin, T, D>(shards, &Options::default())
    }

    /// The largest element and its global index (see [`argmin`](Self::argmin)).
    pub fn argmax<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Arg<T>>
    where
        ArgMax: Sharded<T> + Reduction<T, Out = Arg<T>>,
    {
        self.one_input::<ArgMax, T, D>(shards, &Options::default())
    }

    /// `Σ a[i]·b[i]`, `a` and `b` sharded alike (shard `k` of both on GPU `k`).
    pub fn dot<T: Element, D: Input<T> + ?Sized>(&self, a: &[&D], b: &[&D]) -> Result<Output<Dot, T>>
    where
        Dot: Sharded<T>,
    {
        if a.len() != b.len() {
            return Err(Error::Invalid(format!("dot: {} shards of a, {} of b", a.len(), b.len())));
        }
        let pairs: Vec<[&D; 2]> = a.iter().zip(b).map(|(x, y)| [*x, *y]).collect();
        let shards: Vec<&[&D]> = pairs.iter().map(|p| &p[..]).collect();
        self.reduce::<Dot, T, D>(&shards)
    }

    /// `Σ x[i]²` over all shards.
    pub fn sum_squares<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<SumSquares, T>>
    where
        SumSquares: Sharded<T>,
    {
        self.one_input::<SumSquares, T, D>(shards, &Options::default())
    }

    /// The L2 norm of all shards together.
    pub fn norm<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Norm, T>>
    where
        Norm: Sharded<T>,
    {
        self.one_input::<Norm, T, D>(shards, &Options::default())
    }

    /// The mean of all shards together.
    pub fn mean<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Mean, T>>
    where
        Mean: Sharded<T>,
    {
        self.one_input::<Mean, T, D>(shards, &Options::default())
    }

    /// The p-norm of all shards together ([`Reducer::norm_p`](crate::Reducer::norm_p)'s
    /// orders and results): for a `p` other than 0, 1, 2 and ±∞, each
    /// GPU's `Σ |x|ᵖ` ([`PowerSum`]) added in rank order, one root on the
    /// host. No elements in this process's shards (and no other process)
    /// with `p < 0`: [`Error::Empty`].
    pub fn norm_p<T: Element, D: Input<T> + ?Sized, A: Into<f64>>(&self, shards: &[&D], p: f64) -> Result<f64>
    where
        PowerSum: Sharded<T> + Reduction<T, Out = A>,
        Norm1: Sharded<T> + Reduction<T, Out = A>,
        Norm: Sharded<T> + Reduction<T, Out = A>,
        NormInf: Sharded<T> + Reduction<T, Out = A>,
        NormNegInf: Sharded<T> + Reduction<T, Out = A>,
        CountNonzero: Sharded<T> + Reduction<T, Out = u64>,
    {
        // all of the input is here when no other process holds a part
        let whole = self.world_size() == self.reducers().len();
        let elements: usize = shards.iter().map(|d| len(&d.source())).sum();
        let order = crate::dispatch::norm_order(p, whole.then_some(elements == 0))?;
        let none = Options::default();
        Ok(match order {
            Order::Count => self.one_input::<CountNonzero, T, D>(shards, &none)? as f64,
            Order::One => self.one_input::<Norm1, T, D>(shards, &none)?.into(),
            Order::Two => self.one_input::<Norm, T, D>(shards, &none)?.into(),
            Order::Inf => self.one_input::<NormInf, T, D>(shards, &none)?.into(),
            Order::NegInf => self.one_input::<NormNegInf, T, D>(shards, &none)?.into(),
            Order::Power(p) => {
                let s = self.one_input::<PowerSum, T, D>(shards, &Options { p: Some(p), ..none })?;
                root(s.into(), p)
            }
        })
    }

    pub(super) fn one_input<R: Sharded<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        shards: &[&D],
        opts: &Options,
    ) -> Result<R::Out> {
        let shards: Vec<[&D; 1]> = shards.iter().map(|s| [*s]).collect();
        let shards: Vec<&[&D]> = shards.iter().map(|s| &s[..]).collect();
        self.reduce_with::<R, T, D>(&shards, opts)
    }
}
