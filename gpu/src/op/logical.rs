//! Tests of every element against zero: `all`, `any` and `count_nonzero`,
//! for every element type, as torch defines them: an element is *nonzero*
//! unless it is `0` (`-0.0` and `+0.0` for floats); NaN is nonzero. `all`
//! and `any` return `1` or `0` as a `u32` (`all` of no elements is `1`,
//! `any` of none `0`); `count_nonzero` counts in `u64`. The half types are
//! tested on their bits, without widening.

use super::{Reduction, each, widened};
use crate::half::{bf16, f16};

/// Whether every element is nonzero: `1` or `0`.
///
/// ```
/// use gpu::op::{All, Reduction};
/// let all = |x: &[f32]| x.iter().fold(<All as Reduction<f32>>::IDENTITY, |a, &v| {
///     <All as Reduction<f32>>::combine(a, <All as Reduction<f32>>::map(v, v, 0))
/// });
/// assert_eq!((all(&[1.0, f32::NAN]), all(&[1.0, -0.0]), all(&[])), (1, 0, 1));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct All;

/// Whether any element is nonzero: `1` or `0`.
///
/// ```
/// use gpu::op::{Any, Reduction};
/// assert_eq!(<Any as Reduction<i64>>::map(0, 0, 0), 0);
/// assert_eq!(<Any as Reduction<f64>>::map(f64::NAN, 0.0, 0), 1);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Any;

/// How many elements are nonzero, in `u64`.
///
/// ```
/// use gpu::op::{CountNonzero, Reduction};
/// assert_eq!(<CountNonzero as Reduction<f32>>::map_lanes([0.0, -0.0, 2.0, f32::NAN], [0.0; 4], 0), 2);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CountNonzero;

/// Whether an element is not zero (NaN is not zero; nor, for floats, is
/// anything but `±0`).
pub trait Nonzero: Copy {
    /// `self != 0`.
    fn nonzero(self) -> bool;
}

macro_rules! nonzero {
    ($($t:ty => |$x:ident| $test:expr),*) => {$(
        impl Nonzero for $t {
            #[inline(always)]
            fn nonzero(self) -> bool {
                let $x = self;
                $test
            }
        }
    )*};
}
nonzero!(
    i32 => |x| x != 0, u32 => |x| x != 0, i64 => |x| x != 0, u64 => |x| x != 0,
    f32 => |x| x.to_bits() << 1 != 0, f64 => |x| x.to_bits() << 1 != 0,
    f16 => |x| x.to_bits() << 1 != 0, bf16 => |x| x.to_bits() << 1 != 0
);

/// `impl Reduction<$t>` for a flag: `1` or `0` per element, combined with
/// `$combine` from `$identity`.
macro_rules! flag {
    ($Op:ident $name:literal, $identity:literal, |$a:ident, $b:ident| $combine:expr, $t:ty) => {
        impl Reduction<$t> for $Op {
            type Acc = u32;
            type Out = u32;
            const NAME: &'static str = $name;
            const IDENTITY: u32 = $identity;
            #[inline(always)]
            fn map(x: $t, _: $t, _: u64) -> u32 {
                x.nonzero() as u32
            }
            #[inline(always)]
            fn combine($a: u32, $b: u32) -> u32 {
                $combine
            }
            #[inline(always)]
            fn finish(acc: u32, _: u64) -> u32 {
                acc
            }
        }
    };
}

macro_rules! logical {
    ($($t:ty)*) => {$(
        flag!(All "all", 1, |a, b| a & b, $t);
        flag!(Any "any", 0, |a, b| a | b, $t);

        impl Reduction<$t> for CountNonzero {
            type Acc = u64;
            type Out = u64;
            const NAME: &'static str = "count_nonzero";
            const IDENTITY: u64 = 0;
            #[inline(always)]
            fn map(x: $t, _: $t, _: u64) -> u64 {
                x.nonzero() as u64
            }
            #[inline(always)]
            fn combine(a: u64, b: u64) -> u64 {
                a + b
            }
            /// A vector's lanes counted in 32 bits, widened once.
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], _: [$t; L], _: u64) -> u64 {
                widened(each::<u32, L, 1>(|_, k| x[k].nonzero() as u32, |a, b| a + b))
            }
            /// A round's lanes counted in 32 bits, widened once.
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(acc: u64, x: [[$t; L]; V], _: [[$t; L]; V], _: [u64; V]) -> u64 {
                acc + widened(each::<u32, L, V>(|v, k| x[v][k].nonzero() as u32, |a, b| a + b))
            }
            #[inline(always)]
            fn finish(acc: u64, _: u64) -> u64 {
                acc
            }
        }
    )*};
}
logical!(i32 u32 i64 u64 f32 f64 f16 bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_s_count_is_its_elements() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, f32::INFINITY, 1e-40, 3.0e7];
        let count = |c: u64| [c, 0];
        crate::op::rounds_as_their_elements::<CountNonzero, f32, 4, 4>(&f, 2000, count);
        crate::op::rounds_as_their_elements::<CountNonzero, bf16, 8, 4>(&f.map(bf16::from_f32), 2000, count);
        crate::op::rounds_as_their_elements::<CountNonzero, f16, 8, 4>(&f.map(f16::from_f32), 2000, count);
        crate::op::rounds_as_their_elements::<CountNonzero, i32, 4, 3>(&[0, 1, -1, i32::MIN], 2000, count);
        crate::op::rounds_as_their_elements::<CountNonzero, u64, 2, 3>(&[0, 1, u64::MAX], 2000, count);
    }
}
