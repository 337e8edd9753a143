//! `Σ |x|ᵖ` for an exponent `p` given at run time: the sum under torch's
//! p-norm, `torch.linalg.vector_norm(x, ord=p) = (Σ |x|ᵖ)^(1/p)`, whose
//! root the host takes (`Reducer::norm_p`).
//!
//! The exponent is not a kernel parameter: the operation reads it from the
//! module's global [`EXPONENT_SYMBOL`] (an `f64`), which the host writes on
//! the kernel's stream before each launch of a `power_sum` entry, so that a
//! launch sees the exponent it was queued with. On the host the operation
//! maps with [`DEFAULT_EXPONENT`] (the library never maps it there).
//!
//! How a term is computed: `f32` and the half types (widened exactly) as
//! `2^(p·log₂|x|)` with the GPU's `lg2.approx` and `ex2.approx` (subnormals
//! kept, no flush), summed in `f32`; each term is within
//! `(|p| + 1)·2⁻²¹ + |p·log₂|x||·2⁻²²` of `|x|ᵖ`, relatively. `f64` as
//! `e^(p·ln|x|)` with the `f64` logarithm and exponential of
//! [`logsumexp`](super::logsumexp) (the GPU has none in hardware), summed in
//! `f64`: within `(4·|p·ln|x|| + 8)·2⁻⁵³`. The sums round as the library's
//! float sums do. As `pow` does: `0ᵖ` is 0 for `p > 0` and `+inf` for
//! `p < 0`, `infᵖ` the other way round, and NaN gives NaN. The exponent
//! must be finite and not 0 (the host checks it before any launch: the
//! norms of order 0 and ±∞ are `count_nonzero`, `norm_inf` and
//! `norm_neg_inf`).

use super::logsumexp::{ExpLn, exp_in_range};
use super::{Reduction, approx};
use crate::half::{bf16, f16};

/// The name of the module global that holds the exponent (an `f64`) on the
/// GPU.
pub const EXPONENT_SYMBOL: &str = "POWER_SUM_EXPONENT";

/// The exponent when none is given: 2, torch's default order.
pub const DEFAULT_EXPONENT: f64 = 2.0;

/// The exponent of the launch under way, which the host writes before it.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
static mut POWER_SUM_EXPONENT: f64 = DEFAULT_EXPONENT;

/// The exponent: on the GPU the module global the host set for this launch,
/// on the host [`DEFAULT_EXPONENT`].
#[inline(always)]
pub fn exponent() -> f64 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the host writes the global only on the kernel's stream, before
    // the launch: no kernel reads it while it changes.
    return unsafe { core::ptr::read(&raw const POWER_SUM_EXPONENT) };
    #[cfg(not(target_arch = "nvptx64"))]
    return DEFAULT_EXPONENT;
}

/// `Σ |x[i]|ᵖ` (see the module docs).
///
/// ```
/// use gpu::op::{PowerSum, Reduction};
/// // on the host the exponent is the default, 2
/// assert!((<PowerSum as Reduction<f64>>::map(-3.0, -3.0, 0) - 9.0).abs() < 1e-14);
/// assert_eq!(<PowerSum as Reduction<f32>>::combine(1.0, 2.0), 3.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PowerSum;

/// `|x|ᵖ` in `f32`: `2^(p·log₂|x|)` with the GPU's approximate base-2
/// logarithm and exponential (the host's `log2` and `exp2` on the CPU).
///
/// ```
/// use gpu::op::power::pow_abs_f32;
/// assert!((pow_abs_f32(-2.0, 3.0) - 8.0).abs() < 1e-5);
/// assert_eq!((pow_abs_f32(0.0, 1.5), pow_abs_f32(-0.0, -1.5)), (0.0, f32::INFINITY));
/// assert_eq!((pow_abs_f32(f32::INFINITY, 2.5), pow_abs_f32(f32::NEG_INFINITY, -2.5)), (f32::INFINITY, 0.0));
/// assert!(pow_abs_f32(f32::NAN, 0.5).is_nan());
/// ```
#[inline(always)]
pub fn pow_abs_f32(x: f32, p: f32) -> f32 {
    approx::exp2(p * approx::log2(x.abs()))
}

/// `|x|ᵖ` in `f64`: `e^(p·ln|x|)` with the logarithm and exponential of
/// [`logsumexp`](super::logsumexp).
///
/// ```
/// use gpu::op::power::pow_abs_f64;
/// assert!((pow_abs_f64(-2.0, 3.0) - 8.0).abs() < 1e-14);
/// assert!((pow_abs_f64(1e-300, -1.0) / 1e300 - 1.0).abs() < 1e-12); // |p·ln|x|| = 691
/// assert_eq!((pow_abs_f64(0.0, 0.5), pow_abs_f64(0.0, -0.5)), (0.0, f64::INFINITY));
/// assert_eq!((pow_abs_f64(1e300, 2.0), pow_abs_f64(f64::INFINITY, -1.0)), (f64::INFINITY, 0.0));
/// assert!(pow_abs_f64(f64::NAN, 3.0).is_nan());
/// ```
#[inline(always)]
pub fn pow_abs_f64(x: f64, p: f64) -> f64 {
    exp_f64(p * ExpLn::ln(x.abs()))
}

/// `eˣ` in `f64` for every `x`: 0 below -745.2, `+inf` above 709.79.
#[inline(always)]
fn exp_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < -745.2 {
        return 0.0;
    }
    if x > 709.79 {
        return f64::INFINITY;
    }
    exp_in_range(x)
}

macro_rules! power_sum {
    ($($t:ident in $acc:ident: |$x:ident| $term:expr;)*) => {$(
        impl Reduction<$t> for PowerSum {
            type Acc = $acc;
            type Out = $acc;
            const NAME: &'static str = "power_sum";
            const IDENTITY: $acc = 0.0;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> $acc {
                $term
            }
            #[inline(always)]
            fn combine(a: $acc, b: $acc) -> $acc {
                a + b
            }
            #[inline(always)]
            fn finish(acc: $acc, _: u64) -> $acc {
                acc
            }
        }
    )*};
}
power_sum! {
    f32 in f32: |x| pow_abs_f32(x, exponent() as f32);
    f64 in f64: |x| pow_abs_f64(x, exponent());
    f16 in f32: |x| pow_abs_f32(x.to_f32(), exponent() as f32);
    bf16 in f32: |x| pow_abs_f32(x.to_f32(), exponent() as f32);
}

/// The p-norm from the sum `s = Σ |x|ᵖ`: `s^(1/p)` in `f64` (0 for `s = 0`
/// and `p > 0`, `+inf` for `p < 0`; torch's results for no elements are the
/// caller's).
///
/// ```
/// use gpu::op::power::root;
/// assert!((root(8.0, 3.0) - 2.0).abs() < 1e-15);
/// assert_eq!((root(0.0, 1.5), root(0.0, -1.5), root(f64::INFINITY, -2.0)), (0.0, f64::INFINITY, 0.0));
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn root(s: f64, p: f64) -> f64 {
    s.powf(1.0 / p)
}

/// How a p-norm of order `p` is computed, as torch computes
/// `vector_norm(x, ord=p)`: the nonzero count for 0, the library's own
/// norms for 1, 2 and ±∞, and `(Σ |x|ᵖ)^(1/p)` ([`PowerSum`], then
/// [`root`]) for any other finite `p`.
///
/// ```
/// use gpu::op::power::Order;
/// assert_eq!(Order::of(0.0), Some(Order::Count));
/// assert_eq!(Order::of(f64::NEG_INFINITY), Some(Order::NegInf));
/// assert_eq!(Order::of(-0.5), Some(Order::Power(-0.5)));
/// assert_eq!(Order::of(f64::NAN), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order {
    /// `p = 0`: the number of nonzero elements (`CountNonzero`).
    Count,
    /// `p = 1`: `Σ |x|` (`Norm1`).
    One,
    /// `p = 2`: `√Σ x²` (`Norm`).
    Two,
    /// `p = +∞`: `max |x|` (`NormInf`).
    Inf,
    /// `p = -∞`: `min |x|` (`NormNegInf`).
    NegInf,
    /// Any other finite `p`: `(Σ |x|ᵖ)^(1/p)`.
    Power(f64),
}

impl Order {
    /// The order of `p`; `None` for NaN.
    pub fn of(p: f64) -> Option<Order> {
        Some(match p {
            _ if p.is_nan() => return None,
            0.0 => Order::Count,
            1.0 => Order::One,
            2.0 => Order::Two,
            f64::INFINITY => Order::Inf,
            f64::NEG_INFINITY => Order::NegInf,
            p => Order::Power(p),
        })
    }
}
