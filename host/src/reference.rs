//! The serial CPU reference every GPU result is checked against.
//!
//! It is written with plain iterator code in a wider type, independently of
//! `gpu::op::ReduceOp`, so that a bug in an operator's `combine` is not
//! copied into the oracle:
//! * integer sums are computed exactly in `i128` and then wrapped to the
//!   type (what wrapping addition in any order gives);
//! * float sums are computed in `f64` with Neumaier's compensated summation
//!   (f32 input: exact to f64 rounding; f64 input: nearly exact);
//! * min/max: NaN if any element is NaN, else the least/greatest element by
//!   `total_cmp`, which orders `-0.0` below `+0.0`.
//!
//! ```
//! use reduction::{Op, Reference};
//! assert_eq!(i32::reference(Op::Sum, &[i32::MAX, 1]), i32::MIN);
//! assert!(f32::reference(Op::Min, &[0.0, -0.0]).is_sign_negative());
//! ```

use serde::Serialize;

/// The operators, as a run-time value (CLI, tests, reports).
///
/// ```
/// use reduction::{Op, Reference};
/// for op in Op::ALL {
///     assert_eq!(Op::parse(op.name()).unwrap(), op);
/// }
/// assert_eq!(i32::reference(Op::Min, &[4, -2, 9]), -2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Op {
    /// The sum (wrapping for integers): [`Sum`](crate::Sum).
    Sum,
    /// The smallest element: [`Min`](crate::Min).
    Min,
    /// The largest element: [`Max`](crate::Max).
    Max,
}

impl Op {
    /// All operators.
    ///
    /// ```
    /// use reduction::{Op, Reference};
    /// let sums: Vec<i32> = Op::ALL.iter().map(|&op| i32::reference(op, &[3, 1, 2])).collect();
    /// assert_eq!(sums, [6, 1, 3]);
    /// ```
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// The name in entry names: `sum`, `min`, `max`.
    ///
    /// ```
    /// assert_eq!(reduction::Op::Max.name(), "max");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// Parse `sum`, `min` or `max`.
    ///
    /// ```
    /// assert_eq!(reduction::Op::parse("min").unwrap(), reduction::Op::Min);
    /// assert!(reduction::Op::parse("prod").is_err());
    /// ```
    pub fn parse(s: &str) -> crate::Result<Op> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| crate::Error::Invalid(format!("unknown operator {s:?} (valid: sum, min, max)")))
    }
}

/// An element type with a serial reference.
///
/// ```
/// use reduction::{Op, Reference};
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
    /// use reduction::{Op, Reference};
    /// assert_eq!(i32::reference(Op::Sum, &[i32::MAX, 1]), i32::MIN); // wraps
    /// assert_eq!(f64::reference(Op::Sum, &[1e16, 1.0, -1e16]), 1.0); // compensated
    /// assert_eq!(u32::reference(Op::Min, &[]), u32::MAX); // the identity
    /// ```
    fn reference(op: Op, xs: &[Self]) -> Self;
    /// Σ|x| as f64, for float error bounds (0 for integers).
    ///
    /// ```
    /// use reduction::Reference;
    /// assert_eq!(f32::abs_sum(&[1.5, -2.5]), 4.0);
    /// assert_eq!(i64::abs_sum(&[-3, 4]), 0.0);
    /// ```
    fn abs_sum(xs: &[Self]) -> f64;
    /// Whether `got` is the same result as `expected`, allowing `tolerance`
    /// for float sums (integers and min/max must match exactly; NaN matches NaN).
    ///
    /// ```
    /// use reduction::{Op, Reference};
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
                match op {
                    Op::Sum => xs.iter().map(|&x| x as i128).sum::<i128>() as $t,
                    Op::Min => xs.iter().copied().min().unwrap_or(<$t>::MAX),
                    Op::Max => xs.iter().copied().max().unwrap_or(<$t>::MIN),
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

/// Neumaier's compensated sum of f64 values.
fn neumaier(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for x in xs {
        let t = sum + x;
        c += if sum.abs() >= x.abs() { (sum - t) + x } else { (x - t) + sum };
        sum = t;
    }
    sum + c
}

macro_rules! reference_float {
    ($($t:ty)*) => {$(
        impl Reference for $t {
            const EPSILON: f64 = <$t>::EPSILON as f64;
            fn reference(op: Op, xs: &[Self]) -> Self {
                if xs.iter().any(|x| x.is_nan()) {
                    return <$t>::NAN;
                }
                match op {
                    Op::Sum => {
                        // Infinities: IEEE says inf + -inf = NaN, else the infinity wins.
                        let pos = xs.iter().any(|&x| x == <$t>::INFINITY);
                        let neg = xs.iter().any(|&x| x == <$t>::NEG_INFINITY);
                        match (pos, neg) {
                            (true, true) => <$t>::NAN,
                            (true, false) => <$t>::INFINITY,
                            (false, true) => <$t>::NEG_INFINITY,
                            (false, false) => neumaier(xs.iter().map(|&x| x as f64)) as $t,
                        }
                    }
                    Op::Min => xs.iter().copied().min_by(|a, b| a.total_cmp(b)).unwrap_or(<$t>::INFINITY),
                    Op::Max => xs.iter().copied().max_by(|a, b| a.total_cmp(b)).unwrap_or(<$t>::NEG_INFINITY),
                }
            }
            fn abs_sum(xs: &[Self]) -> f64 {
                xs.iter().map(|&x| (x as f64).abs()).sum()
            }
            fn matches(op: Op, got: Self, expected: Self, tolerance: f64) -> bool {
                if expected.is_nan() || got.is_nan() {
                    return expected.is_nan() && got.is_nan();
                }
                match op {
                    Op::Sum if expected.is_finite() => {
                        approx::abs_diff_eq!(got as f64, expected as f64, epsilon = tolerance)
                    }
                    // min/max pick an element: exactly, sign of zero included.
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
    fn matching_rules() {
        assert!(f32::matches(Op::Sum, 1.0, 1.0 + 1e-7, 1e-6));
        assert!(!f32::matches(Op::Sum, 1.0, 1.1, 1e-6));
        assert!(!f32::matches(Op::Min, 0.0, -0.0, 1.0));
        assert!(f64::matches(Op::Max, f64::NAN, f64::NAN, 0.0));
        assert!(!f64::matches(Op::Sum, 1.0, f64::NAN, 1e9));
        assert!(i32::matches(Op::Sum, 5, 5, 0.0) && !i32::matches(Op::Sum, 5, 6, 10.0));
    }
}
