//! Sum, min and max: the operators of Harris's kernels, and the product,
//! for every element type. For the primitive types they are [`ReduceOp`](super::ReduceOp)s (accumulator and
//! output are the element). The half types are widened to `f32`: their sums
//! accumulate and return `f32`, their min and max return the element, which
//! narrowing gives back exactly.

use super::Reduction;
use crate::half::{bf16, f16};

/// `a + b` (wrapping for integers). Identity `0`.
///
/// ```
/// use gpu::half::f16;
/// use gpu::op::{Reduction, Sum};
/// assert_eq!(<Sum as Reduction<i32>>::combine(i32::MAX, 1), i32::MIN); // wraps
/// assert_eq!(<Sum as Reduction<f32>>::IDENTITY, 0.0);
/// let one = <Sum as Reduction<f16>>::map(f16::ONE, f16::ONE, 0);
/// assert_eq!((0..4096).fold(0.0, |a, _| <Sum as Reduction<f16>>::combine(a, one)), 4096.0f32); // f16 saturates at 2048
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;

/// The smaller element. Identity: the type's largest value (`+inf` for floats).
/// Floats: NaN propagates and `-0.0 < +0.0` (module docs of [`super`]).
///
/// ```
/// use gpu::op::{Min, Reduction};
/// assert_eq!(<Min as Reduction<u32>>::combine(7, 3), 3);
/// assert!(<Min as Reduction<f32>>::combine(0.0, -0.0).is_sign_negative());
/// assert!(<Min as Reduction<f64>>::combine(1.0, f64::NAN).is_nan());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

/// The larger element. Identity: the type's smallest value (`-inf` for floats).
/// Floats: NaN propagates and `-0.0 < +0.0` (module docs of [`super`]).
///
/// ```
/// use gpu::op::{Max, Reduction};
/// assert_eq!(<Max as Reduction<i64>>::combine(-7, 3), 3);
/// assert!(<Max as Reduction<f32>>::combine(-0.0, 0.0).is_sign_positive());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

/// `a · b` (wrapping for integers, like `torch.prod` on CUDA). Identity `1`.
/// The half types multiply in `f32` and return `f32`, as their sums do.
/// Each product rounds once, whatever the order: the result is within
/// `(n-1)·ε` of the exact product, relatively, until it underflows.
///
/// ```
/// use gpu::op::{Prod, Reduction};
/// assert_eq!(<Prod as Reduction<u32>>::combine(1 << 31, 2), 0); // wraps
/// assert_eq!(<Prod as Reduction<f64>>::combine(1.5, -2.0), -3.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Prod;

/// `impl Reduction<$t>` for `$Op` with `IDENTITY` and `combine` (a plain
/// operator: [`ReduceOp`](super::ReduceOp)), and the `$more` items given.
macro_rules! plain {
    ($Op:ident $name:literal, $t:ty, $identity:expr, |$a:ident, $b:ident| $combine:expr $(; $($more:tt)*)?) => {
        impl Reduction<$t> for $Op {
            type Acc = $t;
            type Out = $t;
            const NAME: &'static str = $name;
            const IDENTITY: $t = $identity;
            #[inline(always)]
            fn map(x: $t, _: $t, _: u64) -> $t {
                x
            }
            #[inline(always)]
            fn combine($a: $t, $b: $t) -> $t {
                $combine
            }
            #[inline(always)]
            fn finish(acc: $t, _: u64) -> $t {
                acc
            }
            $($($more)*)?
        }
    };
}

macro_rules! int_ops {
    ($($t:ident)*) => {$(
        plain!(Sum "sum", $t, 0, |a, b| a.wrapping_add(b));
        plain!(Min "min", $t, $t::MAX, |a, b| if b < a { b } else { a });
        plain!(Max "max", $t, $t::MIN, |a, b| if b > a { b } else { a });
        plain!(Prod "prod", $t, 1, |a, b| a.wrapping_mul(b));
    )*};
}
int_ops!(i32 u32 i64 u64);

/// Floats' min and max as selections, no branches: the plain
/// `min`/`max` instruction where the two differ, the bits OR-ed (min: a
/// minus sign stays) or AND-ed (max: a plus sign stays) where they are equal
/// (the same number, or `-0.0` and `+0.0`), and `NAN` where either is NaN
/// (one NaN, the same bits on the CPU and every GPU, whatever the inputs'
/// payloads). Branches here (a chain of comparisons) cost every vector of a
/// round its own divergence points; selections are a few instructions.
/// A lane's run of a short segment takes the plain `min`/`max` of its
/// elements where they tell the result
/// ([`Extremes::run_extremes`](super::range::Extremes::run_extremes)), as
/// `aminmax` does; a vector's lanes stay combined pairwise.
macro_rules! float_ops {
    ($($t:ident)*) => {$(
        plain!(Sum "sum", $t, 0.0, |a, b| a + b);
        plain!(Prod "prod", $t, 1.0, |a, b| a * b);
        plain!(Min "min", $t, $t::INFINITY, |a, b| {
            let tie = $t::from_bits(a.to_bits() | b.to_bits());
            let r = if a == b { tie } else { a.min(b) };
            #[allow(clippy::eq_op)]
            let nan = a != a || b != b;
            if nan { $t::NAN } else { r }
        }; super::range::by_extremes!(@run $t, |x| x, |m| m.min););
        plain!(Max "max", $t, $t::NEG_INFINITY, |a, b| {
            let tie = $t::from_bits(a.to_bits() & b.to_bits());
            let r = if a == b { tie } else { a.max(b) };
            #[allow(clippy::eq_op)]
            let nan = a != a || b != b;
            if nan { $t::NAN } else { r }
        }; super::range::by_extremes!(@run $t, |x| x, |m| m.max););
    )*};
}
float_ops!(f32 f64);

/// `impl Reduction<$h>` for `$Op`: widen to `f32`, combine as `f32`, and
/// finish with `$finish` (`f32` for sums, narrowed back for min and max);
/// min and max `$pick` a vector's lanes from its extremes.
macro_rules! half_ops {
    ($($h:ident)*) => {$(
        half_ops!(@one Sum, $h, f32, |acc| acc);
        half_ops!(@one Prod, $h, f32, |acc| acc);
        half_ops!(@one Min, $h, $h, |acc| $h::from_f32(acc), |m| m.min);
        half_ops!(@one Max, $h, $h, |acc| $h::from_f32(acc), |m| m.max);
    )*};
    (@one $Op:ident, $h:ident, $out:ty, |$acc:ident| $finish:expr $(, |$m:ident| $pick:expr)?) => {
        impl Reduction<$h> for $Op {
            type Acc = f32;
            type Out = $out;
            const NAME: &'static str = <$Op as Reduction<f32>>::NAME;
            const IDENTITY: f32 = <$Op as Reduction<f32>>::IDENTITY;
            #[inline(always)]
            fn map(x: $h, _: $h, _: u64) -> f32 {
                x.to_f32()
            }
            #[inline(always)]
            fn combine(a: f32, b: f32) -> f32 {
                <$Op as Reduction<f32>>::combine(a, b)
            }
            $(super::range::by_extremes!($h, |x| x, |$m| $pick);)?
            #[inline(always)]
            fn finish($acc: f32, _: u64) -> $out {
                $finish
            }
        }
    };
}
half_ops!(f16 bf16);
