//! Arg-min and arg-max: the extreme element and its index, with torch's
//! rules (`torch.argmax`, `torch.max(dim)`):
//! * ties go to the **first** index (`-0.0` and `+0.0` are equal);
//! * for floats any NaN wins, and the first NaN's index is returned;
//! * `n = 0` has no answer: the host refuses it before launching.
//!
//! The accumulator is an [`Arg`]: the value (widened to `f32` for the half
//! types) and its `u64` index. `combine` picks by (NaN first, then the
//! better value, then the lower index): a total order, so the result does
//! not depend on how a kernel groups the elements.

use super::{Bits, Reduction};
use crate::half::{bf16, f16};

/// A value and the index where it was found.
///
/// ```
/// use gpu::op::{Arg, ArgMax, Reduction};
/// let a = Arg { value: 2.0f32, index: 7 };
/// let b = Arg { value: 2.0f32, index: 3 };
/// assert_eq!(<ArgMax as Reduction<f32>>::combine(a, b).index, 3); // ties: the first index
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Arg<V> {
    /// The element.
    pub value: V,
    /// Its position in the input (in the row or segment, for those).
    pub index: u64,
}

// SAFETY: `#[repr(C)]` of a `Bits` value of at most 8 bytes and a `u64`:
// 16 bytes (8 for the value, padded), any bit pattern is a value.
unsafe impl<V: Bits> Bits for Arg<V> {}

/// The index of the smallest element (the first one, on ties; the first NaN,
/// if any) and its value.
///
/// ```
/// use gpu::op::{Arg, ArgMin, Reduction};
/// let serial = |x: &[f32]| x.iter().enumerate().fold(<ArgMin as Reduction<f32>>::IDENTITY, |a, (i, &v)| {
///     <ArgMin as Reduction<f32>>::combine(a, <ArgMin as Reduction<f32>>::map(v, v, i as u64))
/// });
/// assert_eq!(serial(&[3.0, -1.0, 5.0, -1.0]).index, 1);
/// assert_eq!(serial(&[3.0, f32::NAN, -9.0, f32::NAN]).index, 1);
/// assert_eq!(serial(&[0.0, -0.0]).index, 0); // equal: the first
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMin;

/// The index of the largest element (the first one, on ties; the first NaN,
/// if any) and its value.
///
/// ```
/// use gpu::half::bf16;
/// use gpu::op::{ArgMax, Reduction};
/// let x = [bf16::from_f32(1.5), bf16::from_f32(4.0), bf16::from_f32(4.0)];
/// let acc = (0..3).fold(<ArgMax as Reduction<bf16>>::IDENTITY, |a, i| {
///     <ArgMax as Reduction<bf16>>::combine(a, <ArgMax as Reduction<bf16>>::map(x[i], x[i], i as u64))
/// });
/// let best = <ArgMax as Reduction<bf16>>::finish(acc, 3);
/// assert_eq!((best.value, best.index), (bf16::from_f32(4.0), 1));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMax;

/// Whether `a` should be kept over `b` when looking for the maximum
/// (`MAX`) or the minimum: NaN first, then the better value, then the lower
/// index. `x != x` is the NaN test (false for integers).
#[inline(always)]
#[allow(clippy::eq_op)]
fn keeps<V: PartialOrd + Copy, const MAX: bool>(a: Arg<V>, b: Arg<V>) -> bool {
    let (a_nan, b_nan) = (a.value != a.value, b.value != b.value);
    if a_nan || b_nan {
        return a_nan && (!b_nan || a.index < b.index);
    }
    let better = if MAX { a.value > b.value } else { a.value < b.value };
    let worse = if MAX { a.value < b.value } else { a.value > b.value };
    better || (!worse && a.index < b.index)
}

/// `impl Reduction<$t>` for arg-min and arg-max: the accumulator value is
/// `$v` (`$t` itself, or `f32` for the half types), converted by `$to`
/// and back by `$from`.
macro_rules! arg_ops {
    ($($t:ident : $v:ident, $min:expr, $max:expr, |$x:ident| $to:expr, |$a:ident| $from:expr;)*) => {$(
        arg_ops!(@one ArgMin "argmin", false, $t, $v, $max, |$x| $to, |$a| $from);
        arg_ops!(@one ArgMax "argmax", true, $t, $v, $min, |$x| $to, |$a| $from);
    )*};
    (@one $Op:ident $name:literal, $max:literal, $t:ident, $v:ident, $worst:expr, |$x:ident| $to:expr, |$a:ident| $from:expr) => {
        impl Reduction<$t> for $Op {
            type Acc = Arg<$v>;
            type Out = Arg<$t>;
            const NAME: &'static str = $name;
            const NEEDS_AN_ELEMENT: bool = true;
            /// The worst value at an index past any input: every element beats it.
            const IDENTITY: Arg<$v> = Arg { value: $worst, index: u64::MAX };
            #[inline(always)]
            fn map($x: $t, _: $t, i: u64) -> Arg<$v> {
                Arg { value: $to, index: i }
            }
            #[inline(always)]
            fn combine(a: Arg<$v>, b: Arg<$v>) -> Arg<$v> {
                if keeps::<$v, $max>(a, b) { a } else { b }
            }
            #[inline(always)]
            fn finish($a: Arg<$v>, _: u64) -> Arg<$t> {
                Arg { value: $from, index: $a.index }
            }
        }
    };
}
arg_ops! {
    i32: i32, i32::MIN, i32::MAX, |x| x, |a| a.value;
    u32: u32, u32::MIN, u32::MAX, |x| x, |a| a.value;
    i64: i64, i64::MIN, i64::MAX, |x| x, |a| a.value;
    u64: u64, u64::MIN, u64::MAX, |x| x, |a| a.value;
    f32: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x, |a| a.value;
    f64: f64, f64::NEG_INFINITY, f64::INFINITY, |x| x, |a| a.value;
    f16: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x.to_f32(), |a| f16::from_f32(a.value);
    bf16: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x.to_f32(), |a| bf16::from_f32(a.value);
}
