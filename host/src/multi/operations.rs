//! The operations of [`MultiReducer`] by name, as [`Reducer`](crate::Reducer)
//! has them (`operations.rs`): each one [`MultiReducer::reduce`] over
//! the shards, one per GPU of this process or this rank's own.

use crate::error::{Error, Result};
use crate::input::{Element, Input};
use crate::multi::{MultiReducer, Sharded};
use crate::reducer::Output;
use gpu::op::{Arg, ArgMax, ArgMin, Dot, Max, Mean, Min, Norm, Reduction, Sum, SumSquares};

impl MultiReducer {
    /// The sum over every shard (one per GPU of this process).
    pub fn sum<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Sum, T>>
    where
        Sum: Sharded<T>,
    {
        self.one_input::<Sum, T, D>(shards)
    }

    /// The smallest element of all shards.
    pub fn min<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Min, T>>
    where
        Min: Sharded<T>,
    {
        self.one_input::<Min, T, D>(shards)
    }

    /// The largest element of all shards.
    pub fn max<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Max, T>>
    where
        Max: Sharded<T>,
    {
        self.one_input::<Max, T, D>(shards)
    }

    /// The smallest element and its global index (shards in rank order,
    /// one after the other), torch's rules (the first index on ties, the
    /// first NaN).
    pub fn argmin<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Arg<T>>
    where
        ArgMin: Sharded<T> + Reduction<T, Out = Arg<T>>,
    {
        self.one_input::<ArgMin, T, D>(shards)
    }

    /// The largest element and its global index (see [`argmin`](Self::argmin)).
    pub fn argmax<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Arg<T>>
    where
        ArgMax: Sharded<T> + Reduction<T, Out = Arg<T>>,
    {
        self.one_input::<ArgMax, T, D>(shards)
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
        self.one_input::<SumSquares, T, D>(shards)
    }

    /// The L2 norm of all shards together.
    pub fn norm<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Norm, T>>
    where
        Norm: Sharded<T>,
    {
        self.one_input::<Norm, T, D>(shards)
    }

    /// The mean of all shards together.
    pub fn mean<T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<Output<Mean, T>>
    where
        Mean: Sharded<T>,
    {
        self.one_input::<Mean, T, D>(shards)
    }

    pub(super) fn one_input<R: Sharded<T>, T: Element, D: Input<T> + ?Sized>(&self, shards: &[&D]) -> Result<R::Out> {
        let shards: Vec<[&D; 1]> = shards.iter().map(|s| [*s]).collect();
        let shards: Vec<&[&D]> = shards.iter().map(|s| &s[..]).collect();
        self.reduce::<R, T, D>(&shards)
    }
}
