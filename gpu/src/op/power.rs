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
//! How a term is computed: for a whole exponent from 3 to 64 ([`whole`]) as
//! a product, `|x|ⁿ` by binary powering ([`powers`], written out for the
//! cube, a loop over the exponent's bits for the others: within `(n − 1)`
//! roundings of the accumulator's type, no logarithm or exponential, so
//! these p-norms cost about what the sum of squares does); for any other
//! exponent, `f32` and the half types (widened exactly) as
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
//! `norm_neg_inf`). The host launches orders 1 and 2 as `norm1` and
//! `sum_squares`, the same terms in entries without the second form
//! (`reduction::dispatch::entry_operation`).

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

/// `eˣ` in `f64` for every `x`: 0 below -745.2, `+inf` above 709.79, NaN
/// for NaN.
#[inline(always)]
fn exp_f64(x: f64) -> f64 {
    if x > 709.79 { f64::INFINITY } else { exp_in_range(x) }
}

/// The exponent as a whole number from 3 to 64, `None` for any other:
/// such an exponent's terms are products ([`powers`]), no logarithm or
/// exponential.
///
/// ```
/// use gpu::op::power::whole;
/// assert_eq!((whole(3.0), whole(64.0)), (Some(3), Some(64)));
/// assert_eq!((whole(2.5), whole(65.0), whole(-3.0), whole(f64::NAN)), (None, None, None, None));
/// ```
#[inline(always)]
pub fn whole(p: f64) -> Option<u32> {
    let n = p as u32; // saturating: NaN and negatives give 0
    if (3..=64).contains(&n) && n as f64 == p { Some(n) } else { None }
}

/// `xⁿ` of each `x`, `n ≥ 1`, by binary powering: the bits of `n` from the
/// lowest, the base squared at each, the product taking the bases of the
/// set bits; one loop for all the lanes. At most `2·log₂ n` multiplications,
/// each rounded once: within `(n − 1)·2⁻²⁴` of `|x|ⁿ` relatively in `f32`
/// (`2⁻⁵³` in `f64`) where no product leaves the normal range; infinities,
/// zeros and NaN as `pow` gives them.
///
/// ```
/// use gpu::op::power::powers;
/// assert_eq!(powers([2.0f32, -3.0, 0.5, 0.0], 3), [8.0, -27.0, 0.125, 0.0]);
/// assert_eq!(powers([1.5f64, f64::INFINITY], 5), [7.59375, f64::INFINITY]);
/// ```
#[inline(always)]
pub fn powers<A: Copy + core::ops::Mul<Output = A>, const L: usize>(x: [A; L], n: u32) -> [A; L] {
    let (mut base, mut n) = (x, n);
    while n & 1 == 0 {
        base = base.map(|b| b * b);
        n >>= 1;
    }
    let mut product = base;
    n >>= 1;
    while n != 0 {
        base = base.map(|b| b * b);
        if n & 1 == 1 {
            product = core::array::from_fn(|k| product[k] * base[k]);
        }
        n >>= 1;
    }
    product
}

/// An element type's terms: the element widened to the accumulator `A`
/// (exactly), the accumulator's `|x|`, and `|x|ᵖ` of a widened element
/// for an exponent that is not [`whole`].
trait Term<A>: Copy {
    fn widen(self) -> A;
    fn abs(x: A) -> A;
    fn pow_abs(x: A, p: f64) -> A;
}

/// `Σ |x|ᵖ` of a round of `V` vectors, each vector's lanes added pairwise,
/// then the vectors: the terms are [`powers`] for a [`whole`] exponent,
/// [`Term::pow_abs`] (a logarithm and an exponential) for any other. The
/// exponent is the same for the whole launch: one branch a round, and each
/// form's code is what it would be alone (the round's logarithms and
/// exponentials side by side; a vector's products added before the next
/// vector's).
#[inline(always)]
fn round_sum<
    T: Term<A>,
    A: Copy + core::ops::Add<Output = A> + core::ops::Mul<Output = A>,
    const L: usize,
    const V: usize,
>(
    x: [[T; L]; V],
) -> A {
    let add = |a: A, b: A| a + b;
    let p = exponent();
    let vectors = |f: &dyn Fn([T; L]) -> A| super::pairwise_of::<A, V>(|v| f(x[v]), add);
    let products = |n: u32| vectors(&|v| super::pairwise(powers(v.map(|e| T::abs(e.widen())), n), add));
    match whole(p) {
        // the cube as straight-line products: `powers` of a constant
        Some(3) => products(3),
        Some(n) => products(n),
        None => vectors(&|v| super::pairwise(v.map(|e| T::pow_abs(e.widen(), p)), add)),
    }
}

macro_rules! power_sum {
    ($($t:ident in $acc:ident: |$x:ident| $widen:expr, $pow_abs:expr;)*) => {$(
        impl Term<$acc> for $t {
            #[inline(always)]
            fn widen(self) -> $acc {
                let $x = self;
                $widen
            }
            #[inline(always)]
            fn abs(x: $acc) -> $acc {
                x.abs()
            }
            #[inline(always)]
            fn pow_abs(x: $acc, p: f64) -> $acc {
                $pow_abs(x, p)
            }
        }
        impl Reduction<$t> for PowerSum {
            type Acc = $acc;
            type Out = $acc;
            const NAME: &'static str = "power_sum";
            const IDENTITY: $acc = 0.0;
            #[inline(always)]
            fn map(x: $t, _: $t, _: u64) -> $acc {
                round_sum([[x]])
            }
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], _: [$t; L], _: u64) -> $acc {
                round_sum([x])
            }
            /// A round's vectors with one choice of their terms' form
            /// (`round_sum`), added as the definition does: each
            /// vector's lanes pairwise, then the vectors pairwise, then to
            /// `acc`.
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: $acc,
                x: [[$t; L]; V],
                _: [[$t; L]; V],
                _: [u64; V],
            ) -> $acc {
                acc + round_sum(x)
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
    f32 in f32: |x| x, |v: f32, p: f64| pow_abs_f32(v, p as f32);
    f64 in f64: |x| x, pow_abs_f64;
    f16 in f32: |x| x.to_f32(), |v: f32, p: f64| pow_abs_f32(v, p as f32);
    bf16 in f32: |x| x.to_f32(), |v: f32, p: f64| pow_abs_f32(v, p as f32);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`powers`] against `f64`'s `powi` (exact to `2⁻⁵³` for these
    /// results): each `n` from 3 to 64 on bases whose power stays normal,
    /// within `(n − 1)·2⁻²⁴` relatively in `f32` (a unit's rounding of
    /// each of at most `n − 1` factors); zeros, infinities and NaN as `pow`.
    #[test]
    fn whole_powers_are_within_their_bound() {
        let mut draw = super::super::draws(3);
        for n in 3..=64u32 {
            let top = 120.0 / n as f64; // |x|ⁿ below 2¹²⁰ and above 2⁻¹²⁰
            let x: [f32; 64] = core::array::from_fn(|_| ((2.0 * draw() - 1.0) * top).exp2() as f32);
            let got = powers(x.map(f32::abs), n);
            for (&x, &got) in x.iter().zip(&got) {
                let want = (x.abs() as f64).powi(n as i32);
                let bound = (n - 1) as f64 * (f32::EPSILON as f64 / 2.0) * want;
                assert!((got as f64 - want).abs() <= bound, "|{x}|^{n} = {got}, want {want}");
            }
            let special = powers([0.0f32, f32::INFINITY, f32::NAN, 1.0], n);
            assert_eq!(special[..2], [0.0, f32::INFINITY]);
            assert!(special[2].is_nan() && special[3] == 1.0);
            assert_eq!(whole(n as f64), Some(n));
        }
    }
}
