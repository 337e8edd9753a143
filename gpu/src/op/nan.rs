//! The NaN-skipping reductions of the float types, torch's `nansum` and
//! `nanmean`. A NaN element is left out as if it were not there:
//!
//! * `nansum`: the sum of the other elements (`0` when all are NaN or there
//!   are none); `inf + -inf` is still NaN, as in torch;
//! * `nanmean`: their sum over their count (NaN when all are NaN or there
//!   are none, as `torch.nanmean`);
//! * `nanmin`, `nanmax`: the smallest and largest of them by the rules of
//!   [`Min`](super::Min) and [`Max`](super::Max) (`-0.0 < +0.0`); NaN when
//!   all are NaN, and no elements have none (`Error::Empty`), as NumPy's
//!   `nanmin`/`nanmax` (torch has no such reduction; its `fmin`/`fmax`
//!   are their element-wise form). The half types compare in `f32` and
//!   return the element.
//!
//! They accumulate as the plain ones do: in `f32` for `f32` and the half
//! types (whose results are `f32`), in `f64` for `f64`.

use super::{Bits, Reduction, each, widened};
use crate::half::{bf16, f16};

/// The sum of the elements that are not NaN.
///
/// ```
/// use gpu::op::{NanSum, Reduction};
/// assert_eq!(<NanSum as Reduction<f32>>::map(f32::NAN, 0.0, 0), 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NanSum;

/// The mean of the elements that are not NaN.
///
/// ```
/// use gpu::op::{NanMean, Reduction};
/// let acc = [1.0f64, f64::NAN, 2.0].iter().fold(<NanMean as Reduction<f64>>::IDENTITY, |a, &x| {
///     <NanMean as Reduction<f64>>::combine(a, <NanMean as Reduction<f64>>::map(x, x, 0))
/// });
/// assert_eq!(<NanMean as Reduction<f64>>::finish(acc, 3), 1.5);
/// assert!(<NanMean as Reduction<f64>>::finish(<NanMean as Reduction<f64>>::IDENTITY, 0).is_nan());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NanMean;

/// The smallest element that is not NaN.
///
/// ```
/// use gpu::op::{NanMin, Reduction};
/// assert_eq!(<NanMin as Reduction<f32>>::combine(f32::NAN, 2.0), 2.0);
/// assert!(<NanMin as Reduction<f64>>::IDENTITY.is_nan() && <NanMin as Reduction<f64>>::NEEDS_AN_ELEMENT);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NanMin;

/// The largest element that is not NaN.
///
/// ```
/// use gpu::op::{NanMax, Reduction};
/// assert_eq!(<NanMax as Reduction<f64>>::combine(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NanMax;

/// [`NanMean`]'s accumulator as the result (the sum and the count of the
/// elements that are not NaN): what each GPU computes when a NaN-skipping
/// mean spans several, so that the count survives to the one division.
///
/// ```
/// use gpu::op::{NanMeanParts, Reduction, SumCount};
/// let acc = <NanMeanParts as Reduction<f32>>::map(f32::NAN, 0.0, 0);
/// assert_eq!(<NanMeanParts as Reduction<f32>>::finish(acc, 1), SumCount { sum: 0.0, count: 0 });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NanMeanParts;

/// A sum and how many elements it holds: the accumulator of [`NanMean`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct SumCount<A> {
    /// The sum.
    pub sum: A,
    /// The elements in it.
    pub count: u64,
}

// SAFETY: `#[repr(C)]` of a float of 4 or 8 bytes and a `u64`: 16 bytes,
// every bit pattern is a value (the padding after an `f32` holds no value).
unsafe impl<A: Bits> Bits for SumCount<A> {}

/// Shuffled as the sum's words, then the count's.
#[cfg(target_arch = "nvptx64")]
impl<A: crate::prim::Shuffle> crate::prim::Shuffle for SumCount<A> {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        SumCount { sum: self.sum.shuffle_words(&f), count: self.count.shuffle_words(&f) }
    }
}

/// A round's elements that are not NaN (`V` vectors of `L` lanes, each
/// lane `w` of them widened): their sum in the definition's order (each
/// vector's lanes pairwise, then the vectors, a NaN lane taken as `0`) and
/// their count, in 32 bits.
#[inline(always)]
#[allow(clippy::eq_op)]
fn skipping<A: Copy + core::ops::Add<Output = A> + PartialEq + Default, const L: usize, const V: usize>(
    w: impl Fn(usize, usize) -> A,
) -> (A, u32) {
    let kept = |v: usize, k: usize| {
        let x = w(v, k);
        if x == x { Some(x) } else { None }
    };
    let sum = each::<A, L, V>(|v, k| kept(v, k).unwrap_or_default(), |a, b| a + b);
    let count = each::<u32, L, V>(|v, k| kept(v, k).is_some() as u32, |a, b| a + b);
    (sum, count)
}

/// `impl Reduction<$t>` for the three, accumulating in `$a` (`$t` widened
/// by `$widen`).
macro_rules! nan_ops {
    ($($t:ident in $a:ident: |$x:ident| $widen:expr;)*) => {$(
        impl Reduction<$t> for NanSum {
            type Acc = $a;
            type Out = $a;
            const NAME: &'static str = "nansum";
            const IDENTITY: $a = 0.0;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> $a {
                let w: $a = $widen;
                if w != w { 0.0 } else { w }
            }
            #[inline(always)]
            fn combine(a: $a, b: $a) -> $a {
                a + b
            }
            #[inline(always)]
            fn finish(acc: $a, _: u64) -> $a {
                acc
            }
        }

        impl Reduction<$t> for NanMean {
            type Acc = SumCount<$a>;
            type Out = $a;
            const NAME: &'static str = "nanmean";
            const IDENTITY: SumCount<$a> = SumCount { sum: 0.0, count: 0 };
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> SumCount<$a> {
                let w: $a = $widen;
                if w != w { SumCount { sum: 0.0, count: 0 } } else { SumCount { sum: w, count: 1 } }
            }
            #[inline(always)]
            fn combine(a: SumCount<$a>, b: SumCount<$a>) -> SumCount<$a> {
                SumCount { sum: a.sum + b.sum, count: a.count + b.count }
            }
            /// The definition's sum, the count in 32 bits (`skipping`).
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], _: [$t; L], _: u64) -> SumCount<$a> {
                let (sum, count) = skipping::<$a, L, 1>(|_, k| { let $x = x[k]; $widen });
                SumCount { sum, count: widened(count) }
            }
            /// The definition's sum, a round's count in 32 bits
            /// (`skipping`), widened once.
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: SumCount<$a>,
                x: [[$t; L]; V],
                _: [[$t; L]; V],
                _: [u64; V],
            ) -> SumCount<$a> {
                let (sum, count) = skipping::<$a, L, V>(|v, k| { let $x = x[v][k]; $widen });
                SumCount { sum: acc.sum + sum, count: acc.count + widened(count) }
            }
            /// A lane's run of a short segment: the same sums as one
            /// `combine` an element, the count in 32 bits (a run's
            /// positions are), widened once.
            #[inline(always)]
            fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> ($t, $t), _: u64) -> SumCount<$a> {
                let (mut sum, mut count, mut e): ($a, u32, u32) = (0.0, 0, from);
                while e < to {
                    let (x, y) = element(e);
                    let one = <Self as Reduction<$t>>::map(x, y, 0);
                    sum += one.sum;
                    count += one.count as u32;
                    e += step;
                }
                SumCount { sum, count: widened(count) }
            }
            #[inline(always)]
            fn finish(acc: SumCount<$a>, _: u64) -> $a {
                acc.sum / acc.count as $a // 0 / 0: NaN
            }
        }

        nan_ops!(@extreme NanMin "nanmin" Min, $t in $a: |$x| $widen, |m| m.min);
        nan_ops!(@extreme NanMax "nanmax" Max, $t in $a: |$x| $widen, |m| m.max);

        impl Reduction<$t> for NanMeanParts {
            type Acc = SumCount<$a>;
            type Out = SumCount<$a>;
            const NAME: &'static str = "nanmean_parts";
            const IDENTITY: SumCount<$a> = <NanMean as Reduction<$t>>::IDENTITY;
            #[inline(always)]
            fn map(x: $t, y: $t, i: u64) -> SumCount<$a> {
                <NanMean as Reduction<$t>>::map(x, y, i)
            }
            #[inline(always)]
            fn combine(a: SumCount<$a>, b: SumCount<$a>) -> SumCount<$a> {
                <NanMean as Reduction<$t>>::combine(a, b)
            }
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], y: [$t; L], first: u64) -> SumCount<$a> {
                <NanMean as Reduction<$t>>::map_lanes(x, y, first)
            }
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: SumCount<$a>,
                x: [[$t; L]; V],
                y: [[$t; L]; V],
                first: [u64; V],
            ) -> SumCount<$a> {
                <NanMean as Reduction<$t>>::fold_vectors(acc, x, y, first)
            }
            #[inline(always)]
            fn finish(acc: SumCount<$a>, _: u64) -> SumCount<$a> {
                acc
            }
        }
    )*};
    (@extreme $Op:ident $name:literal $Plain:ident, $t:ident in $a:ident: |$x:ident| $widen:expr, |$m:ident| $pick:expr) => {
        // NaN is the identity: a NaN is skipped, so none (or NaN only) stays NaN
        impl Reduction<$t> for $Op {
            type Acc = $a;
            type Out = $t;
            const NAME: &'static str = $name;
            const NEEDS_AN_ELEMENT: bool = true;
            const IDENTITY: $a = <$a>::NAN;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> $a {
                $widen
            }
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn combine(a: $a, b: $a) -> $a {
                // selections, as the plain operation's (no branches)
                let r = <super::$Plain as Reduction<$a>>::combine(a, b);
                let r = if b != b { a } else { r };
                if a != a { b } else { r }
            }
            super::range::by_extremes!($t, |x| x, |$m| $pick);
            #[inline(always)]
            fn finish(acc: $a, _: u64) -> $t {
                let narrow = |v: $a| -> $t { nan_ops!(@narrow $t, v) };
                narrow(acc)
            }
        }
    };
    (@narrow f32, $v:ident) => { $v };
    (@narrow f64, $v:ident) => { $v };
    (@narrow f16, $v:ident) => { f16::from_f32($v) };
    (@narrow bf16, $v:ident) => { bf16::from_f32($v) };
}
nan_ops! {
    f32 in f32: |x| x;
    f64 in f64: |x| x;
    f16 in f32: |x| x.to_f32();
    bf16 in f32: |x| x.to_f32();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_mean_parts_are_its_elements() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, 3.0e7];
        let parts = |m: SumCount<f32>| [m.sum.to_bits() as u64, m.count];
        crate::op::runs_as_their_elements::<NanMean, f32, 4>(&f, 4000, parts);
        crate::op::runs_as_their_elements::<NanMean, bf16, 4>(&f.map(bf16::from_f32), 4000, parts);
        let d = f.map(f64::from);
        crate::op::runs_as_their_elements::<NanMean, f64, 4>(&d, 4000, |m| [m.sum.to_bits(), m.count]);
    }

    #[test]
    fn a_round_s_mean_parts_are_its_elements() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, 3.0e7];
        let (h, d) = (f.map(bf16::from_f32), f.map(f64::from));
        let parts = |m: SumCount<f32>| [m.sum.to_bits() as u64, m.count];
        crate::op::rounds_as_their_elements::<NanMean, f32, 4, 4>(&f, 3000, parts);
        crate::op::rounds_as_their_elements::<NanMean, bf16, 8, 4>(&h, 3000, parts);
        crate::op::rounds_as_their_elements::<NanMean, f16, 8, 4>(&f.map(f16::from_f32), 3000, parts);
        crate::op::rounds_as_their_elements::<NanMean, f64, 2, 4>(&d, 3000, |m| [m.sum.to_bits(), m.count]);
        crate::op::rounds_as_their_elements::<NanMeanParts, bf16, 8, 4>(&h, 3000, parts);
    }
}
