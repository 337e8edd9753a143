//! The serial CPU reference every GPU result is checked against.
//!
//! It is written with plain iterator code in a wider type, independently of
//! `gpu::op::ReduceOp`, so that a bug in an operator's `combine` is not
//! copied into the oracle:
//! * integer sums are computed exactly in `i128` and then wrapped to the
//!   type (what wrapping addition in any order gives);
//! * float sums are computed in `f64` with Neumaier's compensated summation
//!   (f32 input: exact to f64 rounding; f64 input: nearly exact); when that
//!   overflows, again on the inputs scaled by 2^-64, so that a sum whose
//!   exact value overflows is `±inf` and one whose partial sums overflow
//!   but whose exact value does not is finite;
//! * min/max: NaN if any element is NaN, else the least/greatest element by
//!   `total_cmp`, which orders `-0.0` below `+0.0`;
//! * the other operations of one input array, on that array: arg-min/max
//!   give their value (the min/max), the transforms their sum of `x·x`
//!   (`Dot` of the array with itself), `x·x` (`SumSquares`), its square root
//!   (`Norm`) or `x` divided by `n` (`Mean`). The indices, two-input dot
//!   products and the half types have their own references in
//!   [`super::ops`].
//!
//! ```
//! use reduction::Op;
//! use testkit::reference::Reference;
//! assert_eq!(i32::reference(Op::Sum, &[i32::MAX, 1]), i32::MIN);
//! assert!(f32::reference(Op::Min, &[0.0, -0.0]).is_sign_negative());
//! ```

use reduction::Op;

/// An element type with a serial reference.
///
/// ```
/// use reduction::Op;
/// use testkit::reference::Reference;
/// fn check<T: Reference>(op: Op, xs: &[T], got: T) -> bool {
///     T::matches(op, got, T::reference(op, xs), 2.0 * T::EPSILON * T::abs_sum(xs))
/// }
/// assert!(check(Op::Sum, &[0.1f32, 0.2, 0.3], 0.6));
/// assert!(!check(Op::Sum, &[1i32, 2], 4));
/// ```
pub trait Reference: Copy + PartialEq + std::fmt::Debug {
    /// The reference result of `op` over `xs` (integers exact, floats
    /// correctly rounded from a compensated f64 sum).
    ///
    /// ```
    /// use reduction::Op;
    /// use testkit::reference::Reference;
    /// assert_eq!(i32::reference(Op::Sum, &[i32::MAX, 1]), i32::MIN); // wraps
    /// assert_eq!(f64::reference(Op::Sum, &[1e16, 1.0, -1e16]), 1.0); // compensated
    /// assert_eq!(u32::reference(Op::Min, &[]), u32::MAX); // the identity
    /// ```
    fn reference(op: Op, xs: &[Self]) -> Self;
    /// Σ|x| as f64, for float error bounds (0 for integers).
    ///
    /// ```
    /// use testkit::reference::Reference;
    /// assert_eq!(f32::abs_sum(&[1.5, -2.5]), 4.0);
    /// assert_eq!(i64::abs_sum(&[-3, 4]), 0.0);
    /// ```
    fn abs_sum(xs: &[Self]) -> f64;
    /// Whether `got` is the same result as `expected`, allowing `tolerance`
    /// for float sums (integers and min/max must match exactly; NaN matches
    /// NaN). A float sum may overflow to `±inf` where `expected` is finite
    /// if the tolerance reaches past the type's largest value: its partial
    /// sums may overflow in some order.
    ///
    /// ```
    /// use reduction::Op;
    /// use testkit::reference::Reference;
    /// assert!(f32::matches(Op::Sum, 1.0, 1.0 + 1e-7, 1e-6));
    /// assert!(!f32::matches(Op::Min, 0.0, -0.0, 1.0)); // the sign of zero counts
    /// assert!(f64::matches(Op::Max, f64::NAN, f64::NAN, 0.0));
    /// assert!(!i32::matches(Op::Sum, 5, 6, 10.0)); // integers: exactly
    /// ```
    fn matches(op: Op, got: Self, expected: Self, tolerance: f64) -> bool;
    /// Machine epsilon of the type (0 for integers).
    const EPSILON: f64;
}

macro_rules! reference_int {
    ($($t:ty)*) => {$(
        impl Reference for $t {
            const EPSILON: f64 = 0.0;
            fn reference(op: Op, xs: &[Self]) -> Self {
                let squares = || xs.iter().map(|&x| (x as i128).wrapping_mul(x as i128)).fold(0i128, i128::wrapping_add);
                match op {
                    Op::Sum => xs.iter().map(|&x| x as i128).sum::<i128>() as $t,
                    Op::Min | Op::ArgMin => xs.iter().copied().min().unwrap_or(<$t>::MAX),
                    Op::Max | Op::ArgMax => xs.iter().copied().max().unwrap_or(<$t>::MIN),
                    Op::Dot | Op::SumSquares => squares() as $t,
                    Op::Norm => (squares() as f64).sqrt() as $t,
                    Op::Mean => (xs.iter().map(|&x| x as i128).sum::<i128>() / (xs.len().max(1) as i128)) as $t,
                    Op::Prod => xs.iter().fold(1 as $t, |a, &x| a.wrapping_mul(x)),
                    // not plain operators: `ops::judge` checks them
                    other => unreachable!("{other:?} has no plain reference (testkit::ops::judge checks it)"),
                }
            }
            fn abs_sum(_: &[Self]) -> f64 {
                0.0
            }
            fn matches(_: Op, got: Self, expected: Self, _: f64) -> bool {
                got == expected
            }
        }
    )*};
}
reference_int!(i32 u32 i64 u64);

/// Neumaier's compensated sum of finite f64 values.
fn neumaier(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for x in xs {
        let t = sum + x;
        c += if sum.abs() >= x.abs() { (sum - t) + x } else { (x - t) + sum };
        sum = t;
    }
    sum + c
}

/// The sum of finite values, rounded once: [`neumaier`], and where its
/// running sum overflowed, the same on the values scaled by 2^-64 (exact
/// for all but subnormal values, which cannot matter next to an overflow),
/// scaled back, which gives `±inf` exactly when the rounded sum overflows.
fn finite_sum(xs: &[f64]) -> f64 {
    let s = neumaier(xs.iter().copied());
    if s.is_finite() {
        return s;
    }
    const SCALE: f64 = 18446744073709551616.0; // 2^64
    neumaier(xs.iter().map(|&x| x / SCALE)) * SCALE
}

/// The correctly rounded f64 sum of float values, NaN and infinities as
/// IEEE 754 says (`inf + -inf` is NaN, else the infinity wins).
pub fn float_sum<T: Copy + Into<f64>>(xs: &[T]) -> f64 {
    let xs: Vec<f64> = xs.iter().map(|&x| x.into()).collect();
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    match (xs.contains(&f64::INFINITY), xs.contains(&f64::NEG_INFINITY)) {
        (true, true) => f64::NAN,
        (true, false) => f64::INFINITY,
        (false, true) => f64::NEG_INFINITY,
        (false, false) => finite_sum(&xs),
    }
}

macro_rules! reference_float {
    ($($t:ty)*) => {$(
        impl Reference for $t {
            const EPSILON: f64 = <$t>::EPSILON as f64;
            fn reference(op: Op, xs: &[Self]) -> Self {
                if xs.iter().any(|x| x.is_nan()) {
                    return <$t>::NAN;
                }
                let squares = || xs.iter().map(|&x| x * x).collect::<Vec<_>>();
                match op {
                    Op::Sum => float_sum(xs) as $t,
                    Op::Min | Op::ArgMin => xs.iter().copied().min_by(|a, b| a.total_cmp(b)).unwrap_or(<$t>::INFINITY),
                    Op::Max | Op::ArgMax => xs.iter().copied().max_by(|a, b| a.total_cmp(b)).unwrap_or(<$t>::NEG_INFINITY),
                    Op::Dot | Op::SumSquares => float_sum(&squares()) as $t,
                    Op::Norm => float_sum(&squares()).sqrt() as $t,
                    Op::Mean => (float_sum(xs) / xs.len() as f64) as $t,
                    Op::Prod => xs.iter().map(|&x| x as f64).product::<f64>() as $t,
                    // not plain operators: `ops::judge` checks them
                    other => unreachable!("{other:?} has no plain reference (testkit::ops::judge checks it)"),
                }
            }
            fn abs_sum(xs: &[Self]) -> f64 {
                xs.iter().map(|&x| (x as f64).abs()).sum()
            }
            fn matches(op: Op, got: Self, expected: Self, tolerance: f64) -> bool {
                if expected.is_nan() || got.is_nan() {
                    return expected.is_nan() && got.is_nan();
                }
                let picks = matches!(op, Op::Min | Op::Max | Op::ArgMin | Op::ArgMax);
                match op {
                    // min/max pick an element: exactly, sign of zero included.
                    _ if picks => got.to_bits() == expected.to_bits(),
                    _ if expected.is_finite() && got.is_infinite() => {
                        (expected as f64).abs() + tolerance >= <$t>::MAX as f64 && (got > 0.0) == (expected > 0.0)
                    }
                    _ if expected.is_finite() => approx::abs_diff_eq!(got as f64, expected as f64, epsilon = tolerance),
                    _ => got.to_bits() == expected.to_bits(),
                }
            }
        }
    )*};
}
reference_float!(f32 f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_sums_wrap() {
        assert_eq!(i32::reference(Op::Sum, &[i32::MAX, 1]), i32::MIN);
        assert_eq!(u64::reference(Op::Sum, &[u64::MAX, 2]), 1);
        assert_eq!(i32::reference(Op::Sum, &[]), 0);
    }

    #[test]
    fn min_max_and_identities() {
        assert_eq!(u32::reference(Op::Min, &[5, 3, 9]), 3);
        assert_eq!(i64::reference(Op::Max, &[-5, -3, -9]), -3);
        assert_eq!(i32::reference(Op::Min, &[]), i32::MAX);
        assert_eq!(f32::reference(Op::Max, &[]), f32::NEG_INFINITY);
    }

    #[test]
    fn float_rules() {
        assert!(f32::reference(Op::Sum, &[1.0, f32::NAN]).is_nan());
        assert!(f64::reference(Op::Max, &[f64::NAN, 1.0]).is_nan());
        assert!(f32::reference(Op::Sum, &[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
        assert_eq!(f32::reference(Op::Sum, &[f32::INFINITY, 1.0]), f32::INFINITY);
        assert!(f32::reference(Op::Min, &[0.0, -0.0]).is_sign_negative());
        assert!(f64::reference(Op::Max, &[-0.0, 0.0]).is_sign_positive());
        // Compensated: 1 + 1e-16 * 10 in f64 keeps the small terms.
        let xs: Vec<f64> = std::iter::once(1.0).chain(std::iter::repeat_n(1e-16, 10)).collect();
        assert_eq!(f64::reference(Op::Sum, &xs), 1.000000000000001);
    }

    #[test]
    fn overflow_is_infinite_and_only_then() {
        let max = f64::MAX;
        assert_eq!(f64::reference(Op::Sum, &[max, max]), f64::INFINITY);
        assert_eq!(f64::reference(Op::Sum, &[-max, -max]), f64::NEG_INFINITY);
        assert_eq!(f64::reference(Op::Sum, &[max, max, -max]), max); // the partials overflow, the sum does not
        assert_eq!(f32::reference(Op::Sum, &[f32::MAX, f32::MAX]), f32::INFINITY); // rounds to inf in f32
        // a GPU whose partials overflowed is accepted only where the bound reaches the overflow
        assert!(f64::matches(Op::Sum, f64::INFINITY, max, 3.0 * f64::EPSILON * 3.0 * max));
        assert!(!f64::matches(Op::Sum, f64::INFINITY, 1.0, 10.0));
        assert!(!f64::matches(Op::Sum, f64::NEG_INFINITY, max, f64::INFINITY));
    }

    #[test]
    fn matching_rules() {
        assert!(f32::matches(Op::Sum, 1.0, 1.0 + 1e-7, 1e-6));
        assert!(!f32::matches(Op::Sum, 1.0, 1.1, 1e-6));
        assert!(!f32::matches(Op::Min, 0.0, -0.0, 1.0));
        assert!(f64::matches(Op::Max, f64::NAN, f64::NAN, 0.0));
        assert!(!f64::matches(Op::Sum, 1.0, f64::NAN, 1e9));
        assert!(i32::matches(Op::Sum, 5, 5, 0.0) && !i32::matches(Op::Sum, 5, 6, 10.0));
    }
}
