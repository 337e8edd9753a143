//! Transform-reduce operations on floats: each element is mapped (a product,
//! a square) and the results summed, CUB's `TransformReduce`.
//!
//! How they accumulate: in `f32` for `f32` and the half types (each half is
//! widened exactly first), in `f64` for `f64`; like `torch.dot` and
//! `torch.linalg.vector_norm` on CUDA, and like the library's float sums,
//! with the same error bound: `|computed - exact| ≤ h·ε·Σ|mapped|`, where
//! `ε` is the accumulator's unit roundoff and `h` the longest chain of
//! additions (`reduction::dispatch::depth`; the GPU may fuse a product into the
//! sum, `fma`, which only tightens it). The norm is the square root of the
//! sum of squares, unscaled: it overflows to `inf` when that sum does.

use super::Reduction;
use crate::half::{bf16, f16};

/// `Σ x[i]·y[i]` over two inputs of the same length (the CUDA parallel-reduction notes's `dot_product`).
///
/// ```
/// use gpu::op::{Dot, Reduction};
/// assert_eq!(<Dot as Reduction<f64>>::map(3.0, 4.0, 0), 12.0);
/// assert_eq!(<Dot as Reduction<f32>>::INPUTS, 2);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Dot;

/// `Σ x[i]²`.
///
/// ```
/// use gpu::op::{Reduction, SumSquares};
/// assert_eq!(<SumSquares as Reduction<f32>>::map(-3.0, -3.0, 0), 9.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SumSquares;

/// The L2 norm `√Σ x[i]²`.
///
/// ```
/// use gpu::op::{Norm, Reduction};
/// assert_eq!(<Norm as Reduction<f32>>::finish(25.0, 2), 5.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Norm;

/// The mean `Σ x[i] / n` (NaN for `n = 0`, like `torch.mean`).
///
/// ```
/// use gpu::op::{Mean, Reduction};
/// assert_eq!(<Mean as Reduction<f64>>::finish(10.0, 4), 2.5);
/// assert!(<Mean as Reduction<f32>>::finish(0.0, 0).is_nan());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean;

/// The L1 norm `Σ |x[i]|` (`torch.linalg.vector_norm(x, ord=1)`).
///
/// ```
/// use gpu::op::{Norm1, Reduction};
/// assert_eq!(<Norm1 as Reduction<f32>>::map(-3.0, -3.0, 0), 3.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Norm1;

/// The L∞ norm `max |x[i]|` (`ord=inf`; NaN propagates). No elements have
/// none, as in torch: the host refuses them (`Error::Empty`).
///
/// ```
/// use gpu::op::{NormInf, Reduction};
/// assert_eq!(<NormInf as Reduction<f64>>::combine(2.0, 3.0), 3.0);
/// assert!(<NormInf as Reduction<f32>>::NEEDS_AN_ELEMENT);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NormInf;

/// The smallest magnitude `min |x[i]|` (`torch.linalg.vector_norm(x,
/// ord=-inf)`; NaN propagates). No elements have none, as in torch: the
/// host refuses them (`Error::Empty`); an empty row or segment gives the
/// identity, `+inf`.
///
/// ```
/// use gpu::op::{NormNegInf, Reduction};
/// assert_eq!(<NormNegInf as Reduction<f32>>::map(-3.0, -3.0, 0), 3.0);
/// assert_eq!(<NormNegInf as Reduction<f64>>::combine(2.0, 3.0), 2.0);
/// assert!(<NormNegInf as Reduction<f32>>::NEEDS_AN_ELEMENT);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NormNegInf;

/// `√x`, correctly rounded: PTX `sqrt.rn` on the GPU, `sqrt` on the host.
pub trait Sqrt {
    /// The square root.
    fn sqrt_rn(self) -> Self;
}

macro_rules! sqrt {
    ($($t:ident $intrinsic:ident),*) => {$(
        impl Sqrt for $t {
            #[inline(always)]
            fn sqrt_rn(self) -> $t {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: a pure arithmetic intrinsic.
                return unsafe { core::intrinsics::$intrinsic(self) };
                #[cfg(not(target_arch = "nvptx64"))]
                return self.sqrt();
            }
        }
    )*};
}
sqrt!(f32 sqrtf32, f64 sqrtf64);

/// A float's magnitude in its own type, the sign bit cleared: what the
/// ∞-norms compare (a half type's extremes are found before it is widened).
trait Magnitude {
    fn magnitude(self) -> Self;
}

macro_rules! magnitude {
    ($($t:ident: |$x:ident| $abs:expr;)*) => {$(
        impl Magnitude for $t {
            #[inline(always)]
            fn magnitude(self) -> $t {
                let $x = self;
                $abs
            }
        }
    )*};
}
magnitude! {
    f32: |x| x.abs();
    f64: |x| x.abs();
    f16: |x| f16::from_bits(x.to_bits() & 0x7fff);
    bf16: |x| bf16::from_bits(x.to_bits() & 0x7fff);
}

/// `impl Reduction<$t>` for the four operations, accumulating in `$acc`
/// after widening with `$to`.
macro_rules! transform_ops {
    ($($t:ident => $acc:ident, |$x:ident| $to:expr;)*) => {$(
        transform_ops!(@one Dot "dot", 2, $t, $acc, |$x| $to, |x, y| x * y, |s, _n| s);
        transform_ops!(@one SumSquares "sum_squares", 1, $t, $acc, |$x| $to, |x, _y| x * x, |s, _n| s);
        transform_ops!(@one Norm "norm", 1, $t, $acc, |$x| $to, |x, _y| x * x, |s, _n| s.sqrt_rn());
        transform_ops!(@one Mean "mean", 1, $t, $acc, |$x| $to, |x, _y| x, |s, n| s / n as $acc);
        transform_ops!(@one Norm1 "norm1", 1, $t, $acc, |$x| $to, |x, _y| x.abs(), |s, _n| s);
        transform_ops!(@extreme NormInf "norm_inf", max, 0.0, $t, $acc, |$x| $to, |m| m.max);
        transform_ops!(@extreme NormNegInf "norm_neg_inf", min, <$acc>::INFINITY, $t, $acc, |$x| $to, |m| m.min);
    )*};
    (@extreme $Op:ident $name:literal, $plain:ident, $identity:expr, $t:ident, $acc:ident, |$x:ident| $to:expr, |$m:ident| $pick:expr) => {
        impl Reduction<$t> for $Op {
            type Acc = $acc;
            type Out = $acc;
            const NAME: &'static str = $name;
            const NEEDS_AN_ELEMENT: bool = true;
            const IDENTITY: $acc = $identity;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> $acc {
                let w: $acc = $to;
                w.abs()
            }
            /// `Max`'s (`Min`'s) combine of magnitudes, where no `-0.0`
            /// meets `+0.0`: the plain instruction, `NAN` where either is
            /// NaN (three instructions where `Max`'s takes eight; the same
            /// bits).
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn combine(a: $acc, b: $acc) -> $acc {
                if a != a || b != b { <$acc>::NAN } else { a.$plain(b) }
            }
            super::range::by_extremes!($t, |x| x.magnitude(), |$m| $pick);
            #[inline(always)]
            fn finish(acc: $acc, _: u64) -> $acc {
                acc
            }
        }
    };
    (@one $Op:ident $name:literal, $inputs:literal, $t:ident, $acc:ident, |$x:ident| $to:expr,
        |$mx:ident, $my:ident| $map:expr, |$s:ident, $n:ident| $finish:expr) => {
        impl Reduction<$t> for $Op {
            type Acc = $acc;
            type Out = $acc;
            const NAME: &'static str = $name;
            const INPUTS: u32 = $inputs;
            const IDENTITY: $acc = 0.0;
            #[inline(always)]
            fn map(x: $t, y: $t, _: u64) -> $acc {
                let widen = |$x: $t| -> $acc { $to };
                let ($mx, $my) = (widen(x), widen(y));
                $map
            }
            #[inline(always)]
            fn combine(a: $acc, b: $acc) -> $acc {
                a + b
            }
            #[inline(always)]
            fn finish($s: $acc, $n: u64) -> $acc {
                $finish
            }
        }
    };
}
transform_ops! {
    f32 => f32, |x| x;
    f64 => f64, |x| x;
    f16 => f32, |x| x.to_f32();
    bf16 => f32, |x| x.to_f32();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{Max, Min};

    /// The ∞-norms combine magnitudes as `Max` and `Min` do, to the bit.
    #[test]
    fn the_infinity_norms_combine_as_max_and_min() {
        let f = [0.0f32, 1e-45, 1e-40, 1.0, 1.5, 3.0e38, f32::INFINITY, f32::NAN, -f32::NAN];
        for a in f.map(f32::abs) {
            for b in f.map(f32::abs) {
                let (max, min) = (<Max as Reduction<f32>>::combine(a, b), <Min as Reduction<f32>>::combine(a, b));
                assert_eq!(<NormInf as Reduction<f32>>::combine(a, b).to_bits(), max.to_bits(), "{a} {b}");
                assert_eq!(<NormNegInf as Reduction<f32>>::combine(a, b).to_bits(), min.to_bits(), "{a} {b}");
                let (a, b) = (a as f64, b as f64);
                let (max, min) = (<Max as Reduction<f64>>::combine(a, b), <Min as Reduction<f64>>::combine(a, b));
                assert_eq!(<NormInf as Reduction<f64>>::combine(a, b).to_bits(), max.to_bits(), "{a} {b}");
                assert_eq!(<NormNegInf as Reduction<f64>>::combine(a, b).to_bits(), min.to_bits(), "{a} {b}");
            }
        }
    }
}
