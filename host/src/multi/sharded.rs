//! How an operation spans GPUs: what each GPU computes on its shard, and
//! how that result joins the others.

use std::ops::Range;

use gpu::half::{bf16, f16};
use gpu::op::{
    AMinMax, All, Any, Arg, ArgMax, ArgMin, CountNonzero, Dot, LogSumExp, Max, MaxSum, Mean, MeanM2, Min, MinMax,
    Moments, NanMax, NanMean, NanMeanParts, NanMin, NanSum, Norm, Norm1, NormInf, NormNegInf, PowerSum, Prod,
    Reduction, Sum, SumSquares, Welford,
};

/// An operation the [`MultiReducer`](super::MultiReducer) runs over shards:
/// each GPU reduces its shard with [`Sharded::Shard`] (the library's kernel,
/// a single launch), the shards' results are exchanged through NCCL, turned
/// into this operation's accumulators ([`Sharded::accumulate`]), combined in
/// rank order with [`Reduction::combine`] and finished once with the total
/// element count: a norm takes one square root of the sum of every GPU's
/// sum of squares, a mean divides by the whole `n`, an arg-max keeps the
/// lowest **global** index on ties.
///
/// For an operation of your own whose `finish` is the identity, `Shard =
/// Self` and `accumulate` returns the result as it is (adding `offset` to
/// any index it holds).
///
/// ```
/// use reduction::multi::Sharded;
/// use reduction::{ArgMax, op::{Arg, Norm, Reduction}};
/// // shard 1 starts at element 1000; its arg-max at local index 7 is global 1007
/// let local = Arg { value: 2.5f32, index: 7 };
/// assert_eq!(<ArgMax as Sharded<f32>>::accumulate(local, 1000, 10).index, 1007);
/// // a norm spans GPUs as sums of squares, one square root at the end
/// let acc = <Norm as Sharded<f32>>::accumulate(9.0, 0, 3) + <Norm as Sharded<f32>>::accumulate(16.0, 3, 2);
/// assert_eq!(<Norm as Reduction<f32>>::finish(acc, 5), 5.0);
/// ```
pub trait Sharded<T>: Reduction<T> {
    /// What each GPU computes on its shard.
    type Shard: Reduction<T>;
    /// The shard's result as this operation's accumulator, for a shard of
    /// `len` elements that starts at element `offset` of the whole input.
    fn accumulate(shard: <Self::Shard as Reduction<T>>::Out, offset: u64, len: u64) -> Self::Acc;
}

/// `Shard = Self`, the result taken as it is (`finish` is the identity and
/// the output type is the accumulator's).
macro_rules! as_is {
    ($Op:ident: $($t:ty),*) => {$(
        impl Sharded<$t> for $Op {
            type Shard = $Op;
            fn accumulate(shard: <$Op as Reduction<$t>>::Out, _: u64, _: u64) -> <$Op as Reduction<$t>>::Acc {
                shard
            }
        }
    )*};
}
as_is!(Sum: i32, u32, i64, u64, f32, f64, f16, bf16);
as_is!(Min: i32, u32, i64, u64, f32, f64);
as_is!(Max: i32, u32, i64, u64, f32, f64);
as_is!(Dot: f32, f64, f16, bf16);
as_is!(SumSquares: f32, f64, f16, bf16);
as_is!(Prod: i32, u32, i64, u64, f32, f64, f16, bf16);
as_is!(All: i32, u32, i64, u64, f32, f64, f16, bf16);
as_is!(Any: i32, u32, i64, u64, f32, f64, f16, bf16);
as_is!(CountNonzero: i32, u32, i64, u64, f32, f64, f16, bf16);
as_is!(AMinMax: i32, u32, i64, u64, f32, f64);
as_is!(NanSum: f32, f64, f16, bf16);
as_is!(Norm1: f32, f64, f16, bf16);
as_is!(NormInf: f32, f64, f16, bf16);
as_is!(NormNegInf: f32, f64, f16, bf16);
as_is!(PowerSum: f32, f64, f16, bf16);
as_is!(NanMin: f32, f64);
as_is!(NanMax: f32, f64);

/// Half min/max return the element; they accumulate in `f32` (exact).
macro_rules! half_extremes {
    ($($Op:ident: $($t:ty),*;)*) => {$($(
        impl Sharded<$t> for $Op {
            type Shard = $Op;
            fn accumulate(shard: $t, _: u64, _: u64) -> f32 {
                shard.to_f32()
            }
        }
    )*)*};
}
half_extremes! { Min: f16, bf16; Max: f16, bf16; NanMin: f16, bf16; NanMax: f16, bf16; }

/// Half min-and-max: both ends widen to `f32` exactly.
macro_rules! half_ranges {
    ($($t:ty),*) => {$(
        impl Sharded<$t> for AMinMax {
            type Shard = AMinMax;
            fn accumulate(shard: MinMax<$t>, _: u64, _: u64) -> MinMax<f32> {
                MinMax { min: shard.min.to_f32(), max: shard.max.to_f32() }
            }
        }
    )*};
}
half_ranges!(f16, bf16);

/// Arg-min/max: the index moves by the shard's offset (an empty shard's
/// identity, index `u64::MAX`, stays past every input); half values widen
/// to `f32` exactly.
macro_rules! args {
    ($($t:ty => |$v:ident| $widen:expr),*) => {$(
        args!(@one ArgMin, $t, |$v| $widen);
        args!(@one ArgMax, $t, |$v| $widen);
    )*};
    (@one $Op:ident, $t:ty, |$v:ident| $widen:expr) => {
        impl Sharded<$t> for $Op {
            type Shard = $Op;
            fn accumulate(shard: Arg<$t>, offset: u64, _: u64) -> <$Op as Reduction<$t>>::Acc {
                let $v = shard.value;
                let index = if shard.index == u64::MAX { u64::MAX } else { shard.index + offset };
                Arg { value: $widen, index }
            }
        }
    };
}
args!(i32 => |v| v, u32 => |v| v, i64 => |v| v, u64 => |v| v, f32 => |v| v, f64 => |v| v, f16 => |v| v.to_f32(), bf16 => |v| v.to_f32());

/// Operations whose `finish` is not the identity span GPUs through the sum
/// they finish: the norm through the sum of squares, the mean through the
/// sum, the NaN-skipping mean through its sum and count.
macro_rules! through {
    ($Op:ident via $Shard:ident: $($t:ty),*) => {$(
        impl Sharded<$t> for $Op {
            type Shard = $Shard;
            fn accumulate(shard: <$Shard as Reduction<$t>>::Out, _: u64, _: u64) -> <$Op as Reduction<$t>>::Acc {
                shard
            }
        }
    )*};
}
through!(Norm via SumSquares: f32, f64, f16, bf16);
through!(Mean via Sum: f32, f64, f16, bf16);
through!(NanMean via NanMeanParts: f32, f64, f16, bf16);

/// The mean and `M2` span GPUs as each shard's mean and `M2` (`f64`) with
/// its length, merged by Chan's formula (`Welford::merge`).
macro_rules! moments {
    ($($t:ty),*) => {$(
        impl Sharded<$t> for Moments {
            type Shard = Moments;
            fn accumulate(shard: MeanM2, _: u64, len: u64) -> Welford {
                Welford { count: len as f64, mean: shard.mean, m2: shard.m2 }
            }
        }
    )*};
}
moments!(f32, f64, f16, bf16);

/// `log Σ exp` spans GPUs as each shard's result `L`, which is the
/// accumulator `(max L, sum 1)`: `exp(L)` is that shard's `Σ exp(x)`.
macro_rules! logsumexp {
    ($($t:ty => $a:ty),*) => {$(
        impl Sharded<$t> for LogSumExp {
            type Shard = LogSumExp;
            fn accumulate(shard: $a, _: u64, _: u64) -> MaxSum<$a> {
                MaxSum { max: shard, sum: 1.0 }
            }
        }
    )*};
}
logsumexp!(f32 => f32, f64 => f64, f16 => f32, bf16 => f32);

/// `n` elements cut into `parts` ranges in order, lengths differing by at
/// most one (the longer first).
///
/// ```
/// assert_eq!(reduction::multi::split(10, 3), [0..4, 4..7, 7..10]);
/// assert_eq!(reduction::multi::split(1, 2), [0..1, 1..1]);
/// ```
pub fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (base, extra) = (n / parts, n % parts);
    let mut start = 0;
    (0..parts)
        .map(|k| {
            let len = base + usize::from(k < extra);
            start += len;
            start - len..start
        })
        .collect()
}
