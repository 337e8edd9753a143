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

use super::{Bits, Reduction, map_pairwise, pairwise};
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

/// Shuffled as the value's words, then the index's.
#[cfg(target_arch = "nvptx64")]
impl<V: crate::prim::Shuffle> crate::prim::Shuffle for Arg<V> {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        Arg { value: self.value.shuffle_words(&f), index: self.index.shuffle_words(&f) }
    }
}

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

/// Whether `b`, found after `a`, replaces it as the maximum (`MAX`) or the
/// minimum: a NaN over a number, else a strictly better value (so the first
/// of equal values stays). The order of [`keeps`] for lanes met in index
/// order (a pair of lanes, the left one first).
#[inline(always)]
#[allow(clippy::eq_op)]
fn beats<V: PartialOrd + Copy, const MAX: bool>(b: V, a: V) -> bool {
    let better = if MAX { b > a } else { b < a };
    better || (b != b && a == a)
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
            /// The lanes of a vector come in index order, and the tree of
            /// [`pairwise`] keeps them so (left before right): a pair needs
            /// no index comparison (`beats`), and a lane carries a 32-bit
            /// lane number, made an index once. The same `Arg`. Taken for
            /// vectors of eight lanes (the half types), where it measured
            /// faster; for four or two it changed the resident grid and did
            /// not (docs/src/guide/operations.md, "Arg-max of half types").
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], y: [$t; L], first: u64) -> Arg<$v> {
                if L < 8 {
                    return map_pairwise::<Self, $t, L>(x, y, first);
                }
                let to = |$x: $t| -> $v { $to };
                let lanes: [($v, u32); L] = core::array::from_fn(|k| (to(x[k]), k as u32));
                let (value, lane) = pairwise(lanes, |a, b| if beats::<$v, $max>(b.0, a.0) { b } else { a });
                Arg { value, index: first + lane as u64 }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `map_lanes` against its definition (`map_pairwise`) on every vector
    /// of eight lanes drawn from `values` (NaN, signed zeros, infinities,
    /// ties; the first five lanes in every combination): the same value
    /// bits and index.
    fn same_as_pairwise<T: Copy + core::fmt::Debug, R: Reduction<T, Acc = Arg<V>>, V: Bits>(
        values: &[T],
        bits: impl Fn(V) -> u64,
    ) {
        let mut lanes = [values[0]; 8];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for d in 0..values.len().pow(5) {
            for (k, lane) in lanes.iter_mut().enumerate() {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = if k < 5 { d / values.len().pow(k as u32) } else { (seed >> 33) as usize };
                *lane = values[i % values.len()];
            }
            let first = 1000 * d as u64;
            let want = map_pairwise::<R, T, 8>(lanes, lanes, first);
            let got = R::map_lanes(lanes, lanes, first);
            assert_eq!((bits(got.value), got.index), (bits(want.value), want.index), "{lanes:?}");
        }
    }

    #[test]
    fn the_lanes_shortcut_gives_the_pairwise_result() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.5];
        let fb = |v: f32| v.to_bits() as u64;
        same_as_pairwise::<bf16, ArgMax, f32>(&f.map(bf16::from_f32), fb);
        same_as_pairwise::<bf16, ArgMin, f32>(&f.map(bf16::from_f32), fb);
        same_as_pairwise::<f16, ArgMax, f32>(&f.map(f16::from_f32), fb);
        same_as_pairwise::<f16, ArgMin, f32>(&f.map(f16::from_f32), fb);
        // the kernels give these types four or two lanes (the definition);
        // eight here check the shortcut's order for every kind of value
        same_as_pairwise::<f32, ArgMax, f32>(&f, fb);
        same_as_pairwise::<f64, ArgMin, f64>(&f.map(f64::from), f64::to_bits);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        same_as_pairwise::<i32, ArgMax, i32>(&i, |v| v as u64);
        same_as_pairwise::<i32, ArgMin, i32>(&i, |v| v as u64);
        same_as_pairwise::<u64, ArgMax, u64>(&[0, 3, 3, u64::MAX], |v| v);
    }
}
