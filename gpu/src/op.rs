//! Reduction operators, written once for every element type.
//!
//! A reduction folds `n` values with an operator `combine` that starts from
//! `IDENTITY`. Every kernel in this crate is generic over the operator and the
//! element type, like CUB's `Reduce(input, op)`; `entries.rs` instantiates
//! them for `sum`, `min` and `max` over `i32, u32, i64, u64, f32, f64`.
//!
//! # Laws
//! Kernels regroup and reorder the fold freely, so every operator must obey:
//! * identity: `combine(IDENTITY, x) == x` (padding lanes past `n` hold
//!   `IDENTITY` and must not change the result);
//! * associativity: `combine(a, combine(b, c)) == combine(combine(a, b), c)`;
//! * commutativity: `combine(a, b) == combine(b, a)`.
//!
//! Integer sums wrap on overflow, like CUDA's `int` arithmetic: they are
//! exact modulo 2^bits, so the laws hold exactly. Floating-point addition is
//! not associative: a tree sum differs from the serial sum by rounding (the
//! host tests bound the difference), and NaN and infinities behave as IEEE 754
//! says (`inf + -inf` is NaN; NaN in, NaN out).
//!
//! # Floating-point `min` and `max`
//! They follow IEEE 754-2019 `minimum`/`maximum` (what `torch.min` does):
//! * NaN propagates: if any element is NaN, the result is NaN;
//! * `-0.0` is smaller than `+0.0`: `min(-0.0, +0.0) == -0.0` and
//!   `max(-0.0, +0.0) == +0.0`, whatever the order of the inputs.
//!
//! So the result does not depend on the order in which a kernel visits the
//! elements.

/// An element type the kernels are instantiated for.
pub trait Element: Copy + PartialEq + core::fmt::Debug + Send + Sync + 'static {
    /// The type's name in PTX entry names (`reduce7_b256_sum_f32`).
    const NAME: &'static str;
    /// The type as a run-time value (`names.rs` implements this trait for
    /// every type of its list).
    const DTYPE: crate::names::DType;
}

/// A reduction operator over `T`: CUB's binary functor, CubeCL's instruction.
///
/// See the module docs for the laws every implementation obeys.
pub trait ReduceOp<T: Element> {
    /// The operator's name in PTX entry names (`sum`, `min`, `max`).
    const NAME: &'static str;
    /// The operator as a run-time value.
    const OP: crate::names::Op;
    /// The neutral element: `combine(IDENTITY, x) == x` for every `x`.
    const IDENTITY: T;
    /// Combine two partial results.
    fn combine(a: T, b: T) -> T;
}

/// `a + b` (wrapping for integers). Identity `0`.
///
/// ```
/// use gpu::op::{ReduceOp, Sum};
/// assert_eq!(<Sum as ReduceOp<i32>>::combine(i32::MAX, 1), i32::MIN); // wraps
/// assert_eq!(<Sum as ReduceOp<f32>>::IDENTITY, 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;

/// The smaller element. Identity: the type's largest value (`+inf` for floats).
/// Floats: NaN propagates and `-0.0 < +0.0` (module docs).
///
/// ```
/// use gpu::op::{Min, ReduceOp};
/// assert_eq!(<Min as ReduceOp<u32>>::combine(7, 3), 3);
/// assert!(<Min as ReduceOp<f32>>::combine(0.0, -0.0).is_sign_negative());
/// assert!(<Min as ReduceOp<f64>>::combine(1.0, f64::NAN).is_nan());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

/// The larger element. Identity: the type's smallest value (`-inf` for floats).
/// Floats: NaN propagates and `-0.0 < +0.0` (module docs).
///
/// ```
/// use gpu::op::{Max, ReduceOp};
/// assert_eq!(<Max as ReduceOp<i64>>::combine(-7, 3), 3);
/// assert!(<Max as ReduceOp<f32>>::combine(-0.0, 0.0).is_sign_positive());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

macro_rules! int_ops {
    ($($t:ident)*) => {$(
        impl ReduceOp<$t> for Sum {
            const NAME: &'static str = "sum";
            const OP: crate::names::Op = crate::names::Op::Sum;
            const IDENTITY: $t = 0;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
        }
        impl ReduceOp<$t> for Min {
            const NAME: &'static str = "min";
            const OP: crate::names::Op = crate::names::Op::Min;
            const IDENTITY: $t = $t::MAX;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                if b < a { b } else { a }
            }
        }
        impl ReduceOp<$t> for Max {
            const NAME: &'static str = "max";
            const OP: crate::names::Op = crate::names::Op::Max;
            const IDENTITY: $t = $t::MIN;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                if b > a { b } else { a }
            }
        }
    )*};
}
int_ops!(i32 u32 i64 u64);

macro_rules! float_ops {
    ($($t:ident)*) => {$(
        impl ReduceOp<$t> for Sum {
            const NAME: &'static str = "sum";
            const OP: crate::names::Op = crate::names::Op::Sum;
            const IDENTITY: $t = 0.0;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a + b
            }
        }
        impl ReduceOp<$t> for Min {
            const NAME: &'static str = "min";
            const OP: crate::names::Op = crate::names::Op::Min;
            const IDENTITY: $t = $t::INFINITY;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                if a < b {
                    a
                } else if b < a {
                    b
                } else if a == b {
                    // Equal, so either both are the same number or they are
                    // -0.0 and +0.0: OR-ing the bits keeps a minus sign.
                    $t::from_bits(a.to_bits() | b.to_bits())
                } else {
                    a + b // at least one NaN: NaN out
                }
            }
        }
        impl ReduceOp<$t> for Max {
            const NAME: &'static str = "max";
            const OP: crate::names::Op = crate::names::Op::Max;
            const IDENTITY: $t = $t::NEG_INFINITY;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                if a > b {
                    a
                } else if b > a {
                    b
                } else if a == b {
                    // AND-ing the bits keeps a plus sign: max(-0.0, +0.0) = +0.0.
                    $t::from_bits(a.to_bits() & b.to_bits())
                } else {
                    a + b
                }
            }
        }
    )*};
}
float_ops!(f32 f64);
