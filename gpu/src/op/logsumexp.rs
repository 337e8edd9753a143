//! `log Σ exp(x)` in one pass, torch's `logsumexp`, without overflow: a
//! running maximum `m` and the sum `s` of `exp(x − m)`, rescaled when the
//! maximum grows (the online-softmax recurrence). Two parts merge as
//!
//! ```text
//! m = max(m_a, m_b),   s = s_a·exp(m_a − m) + s_b·exp(m_b − m)
//! ```
//!
//! and the result is `m + ln s`. As torch: no elements, or `-inf` only,
//! give `-inf`; a `+inf` gives `+inf`; a NaN gives NaN. A thread's round
//! of 16-byte vectors, and a column's group of rows, is folded in at
//! once, its maximum first, one exponential an element (`round_with`),
//! whose argument is one fused multiply-add for `f32` and the half types
//! ([`ExpLn::exp_below`]); the half types' maximum and NaN test by packed
//! comparisons on sm_80 and later (`range::RoundPeak`).
//!
//! `f32` and the half types accumulate in `f32` (the GPU's `ex2.approx` and
//! `lg2.approx`, within 2 units in the last place), `f64` in `f64` (an
//! exponential and a logarithm of this module's own, within 1 unit in the
//! last place; the GPU has none in hardware).
//!
//! Under `gpu_to_gpu` (the reproducible kernel, `fixed_order`, and the
//! shaped kernels' [`PortableLogSumExp`] entries), `f32` takes
//! [`exp_neg_exact`] and the `f64` logarithm instead of the approximate
//! instructions: IEEE operations rounded once each (additions,
//! multiplications, fused multiply-adds), so that every GPU and the CPU
//! twin give the same bits.

use super::range::RoundPeak;
use super::{Bits, Reduction};
use crate::half::{bf16, f16};

/// A running maximum and the sum of `exp(x − max)` over the elements so far.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MaxSum<A> {
    /// The largest element (`-inf` for none).
    pub max: A,
    /// `Σ exp(x − max)`.
    pub sum: A,
}

// SAFETY: `#[repr(C)]` of two equal floats: no padding, every bit pattern
// is a value.
unsafe impl<A: Bits> Bits for MaxSum<A> {}

/// Shuffled as `max`'s words, then `sum`'s.
#[cfg(target_arch = "nvptx64")]
impl<A: crate::prim::Shuffle> crate::prim::Shuffle for MaxSum<A> {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        MaxSum { max: self.max.shuffle_words(&f), sum: self.sum.shuffle_words(&f) }
    }
}

/// `log Σ exp(x)`.
///
/// ```
/// use gpu::op::{LogSumExp, Reduction};
/// let fold = |x: &[f64]| {
///     let acc = x.iter().fold(<LogSumExp as Reduction<f64>>::IDENTITY, |a, &v| {
///         <LogSumExp as Reduction<f64>>::combine(a, <LogSumExp as Reduction<f64>>::map(v, v, 0))
///     });
///     <LogSumExp as Reduction<f64>>::finish(acc, x.len() as u64)
/// };
/// assert!((fold(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-12); // no overflow
/// assert_eq!(fold(&[]), f64::NEG_INFINITY);
/// assert_eq!(fold(&[f64::NEG_INFINITY, 3.0]), 3.0);
/// assert_eq!(fold(&[f64::INFINITY, 3.0]), f64::INFINITY);
/// assert!(fold(&[f64::NAN, f64::INFINITY]).is_nan());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LogSumExp;

/// The float arithmetic the recurrence needs: `exp` of a difference that
/// is at most 0 and `ln` of a sum that is at least 1 (or 0 for none).
pub trait ExpLn:
    Copy + PartialOrd + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self> + core::ops::Mul<Output = Self>
{
    /// `-inf`.
    const NEG_INF: Self;
    /// `+inf`.
    const INF: Self;
    /// NaN.
    const NAN: Self;
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// `eˣ` for `x ≤ 0` (0 below the smallest value).
    fn exp_neg(self) -> Self;
    /// `exp(self − max)` for `self ≤ max`: an element's term of a part
    /// whose maximum is `max` (read only where `max` is finite).
    #[inline(always)]
    fn exp_below(self, max: Self) -> Self {
        (self - max).exp_neg()
    }
    /// The larger of two non-NaN values (of `-0.0` and `+0.0` either,
    /// which shift the exponentials' arguments alike); for a NaN either
    /// value (the callers test for NaN apart).
    fn larger(self, other: Self) -> Self;
    /// `ln x` for `x ≥ 0`.
    fn ln(self) -> Self;
}

impl ExpLn for f32 {
    const NEG_INF: f32 = f32::NEG_INFINITY;
    const INF: f32 = f32::INFINITY;
    const NAN: f32 = f32::NAN;
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    /// IEEE's `maxNum`: one `max.f32` instruction, where a comparison and
    /// a selection took two.
    #[inline(always)]
    fn larger(self, other: f32) -> f32 {
        self.max(other)
    }
    #[inline(always)]
    fn exp_neg(self) -> f32 {
        super::approx::exp2_ftz(self * core::f32::consts::LOG2_E)
    }
    /// `2^(x·log₂e − max·log₂e)`: one fused multiply-add an element, the
    /// product `max·log₂e` shared by the part's elements, where `(x −
    /// max)·log₂e` took two operations. The product rounds once, so a
    /// term's relative error grows by at most `|max|·2⁻²⁴` (H100, `bf16`
    /// over 2^24 segments of lengths uniform in 0..32, 3.6% less time).
    #[inline(always)]
    fn exp_below(self, max: f32) -> f32 {
        use core::f32::consts::LOG2_E;
        super::approx::exp2_ftz(fused(self, LOG2_E, -(max * LOG2_E)))
    }
    #[inline(always)]
    fn ln(self) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        return super::approx::log2_ftz(self) * core::f32::consts::LN_2;
        #[cfg(not(target_arch = "nvptx64"))]
        return self.ln();
    }
}

/// `c₀·rᵐ + c₁·rᵐ⁻¹ + … + cₘ` by Horner's rule, `p ← step(p, r, cᵢ)` a
/// coefficient: [`mul_then_add`] (a multiplication, then an addition) or
/// [`fused`] (rounded once), the same on every GPU and the CPU.
#[inline(always)]
fn horner<A: Copy>(c: &[A], r: A, step: impl Fn(A, A, A) -> A) -> A {
    let mut p = c[0];
    let mut i = 1;
    while i < c.len() {
        p = step(p, r, c[i]);
        i += 1;
    }
    p
}

/// `a·b + c` as a multiplication, then an addition, each rounded (never
/// fused).
#[inline(always)]
fn mul_then_add<A: core::ops::Add<Output = A> + core::ops::Mul<Output = A>>(a: A, b: A, c: A) -> A {
    a * b + c
}

/// `a·b + c` rounded once (IEEE's fused multiply-add): `fma.rn` on the
/// GPU, `mul_add` on the CPU, so both give the same bits.
#[inline(always)]
fn fused<A: Fused>(a: A, b: A, c: A) -> A {
    a.fused(b, c)
}

/// The float types with a fused multiply-add: [`fused`].
trait Fused: Copy {
    fn fused(self, b: Self, c: Self) -> Self;
}

macro_rules! fused {
    ($($t:ident $fma:ident;)*) => {$(
        impl Fused for $t {
            #[inline(always)]
            fn fused(self, b: $t, c: $t) -> $t {
                #[cfg(target_arch = "nvptx64")]
                #[allow(unused_unsafe)]
                // SAFETY: arithmetic on values, no memory.
                return unsafe { core::intrinsics::$fma(self, b, c) };
                #[cfg(not(target_arch = "nvptx64"))]
                return self.mul_add(b, c);
            }
        }
    )*};
}
fused! {
    f32 fmaf32;
    f64 fmaf64;
}

/// 1.5 · 2⁵²: adding and subtracting it rounds an `f64` below 2⁵¹ to an
/// integer (ties to even).
const ROUND: f64 = 6755399441055744.0;

/// `eˣ` in `f64` for `x` up to 709.79 (above: the callers'), NaN for NaN:
/// `x` held at -1400 from below (a selection, no branch), then
/// `x = k·ln 2 + r` with `|r| ≤ ln 2 / 2` (ln 2 in two parts, so
/// `k·ln2_hi` is exact), `eʳ` by its Taylor polynomial to `r¹³` (the rest
/// below 2·10⁻¹⁷) in fused Horner steps, scaled by `2ᵏ` in two steps (each
/// within the normal range, for `k` from -2020 to 1024, so that below
/// -745.2 the result underflows to 0). Within 1 unit in the last place of
/// the exact value for `|x| ≤ 1`, and `|x|·2⁻⁵³` more (the reduction's
/// rounding) beyond.
///
/// Straight-line code of 19 `f64` operations, 16 of them fused
/// multiply-adds (`k` read from the bits of `x·log₂e + 1.5·2⁵²`, not
/// converted): the `f64` logsumexp and `f64` p-norms are bound by this
/// exponential, not by memory, and the kernels run a round's exponentials
/// side by side.
#[inline(always)]
pub(crate) fn exp_in_range(x: f64) -> f64 {
    let x = if x < -1400.0 { -1400.0 } else { x };
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let t = fused(x, core::f64::consts::LOG2_E, ROUND);
    let k = t - ROUND;
    let r = fused(-k, LN2_LO, fused(-k, LN2_HI, x));
    // 1/13!, then 1/12! ... 1/0! in Horner's order
    const INVERSE_FACTORIALS: [f64; 14] = [
        1.0 / 6227020800.0,
        1.0 / 479001600.0,
        1.0 / 39916800.0,
        1.0 / 3628800.0,
        1.0 / 362880.0,
        1.0 / 40320.0,
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        1.0 / 2.0,
        1.0,
        1.0,
    ];
    let p = horner(&INVERSE_FACTORIALS, r, fused);
    // k as an integer: the low bits of t; 2^k as two powers within the normal range
    let k = (t.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
    let (k1, k2) = (k >> 1, k - (k >> 1));
    let two = |e: i64| f64::from_bits((e.wrapping_add(1023) as u64) << 52);
    p * two(k1) * two(k2)
}

impl ExpLn for f64 {
    const NEG_INF: f64 = f64::NEG_INFINITY;
    const INF: f64 = f64::INFINITY;
    const NAN: f64 = f64::NAN;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    /// A comparison and a selection: the GPU has no `f64` `max`
    /// instruction, and `max.f64` takes more.
    #[inline(always)]
    fn larger(self, other: f64) -> f64 {
        if other > self { other } else { self }
    }
    /// `exp_in_range`: 0 below -745.2, NaN for NaN.
    #[inline(always)]
    fn exp_neg(self) -> f64 {
        exp_in_range(self)
    }
    /// `x = 2ᵉ·f` with `f` in `[√½, √2)`, `ln f = 2·atanh t` for
    /// `t = (f − 1)/(f + 1)` (`|t| ≤ 0.172`) by its series to `t²¹`.
    #[inline(always)]
    fn ln(self) -> f64 {
        if self.is_nan() || self == f64::INFINITY {
            return self;
        }
        if self <= 0.0 {
            return if self == 0.0 { f64::NEG_INFINITY } else { f64::NAN };
        }
        // subnormal: scale into the normal range first
        let (x, shift) = if self < f64::MIN_POSITIVE { (self * 18014398509481984.0, -54) } else { (self, 0) };
        let bits = x.to_bits();
        let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023 + shift;
        let mut f = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
        if f > core::f64::consts::SQRT_2 {
            f *= 0.5;
            e += 1;
        }
        let t = (f - 1.0) / (f + 1.0);
        let t2 = t * t;
        const INVERSE_ODDS: [f64; 11] = [
            1.0 / 21.0,
            1.0 / 19.0,
            1.0 / 17.0,
            1.0 / 15.0,
            1.0 / 13.0,
            1.0 / 11.0,
            1.0 / 9.0,
            1.0 / 7.0,
            1.0 / 5.0,
            1.0 / 3.0,
            1.0,
        ];
        let p = horner(&INVERSE_ODDS, t2, mul_then_add);
        e as f64 * core::f64::consts::LN_2 + 2.0 * t * p
    }
}

/// `eˣ` for `x ≤ 0` in `f32` from IEEE operations alone (fused
/// multiply-adds, additions and multiplications, each rounded once; no
/// approximate instructions): the same bits on every GPU and on the CPU,
/// within 2 units in the last place. `x = k·ln 2 + r` with `|r| ≤ ln 2 /
/// 2` (ln 2 in two parts, so `k·ln2_hi` is exact), `eʳ` by its Taylor
/// polynomial to `r⁷` (the rest below 6·10⁻⁹) in fused Horner steps, scaled
/// by `2ᵏ` in two steps below the normal range. Ten fused
/// multiply-adds where separate multiplications and additions took 20: the
/// exponential is most of a `gpu_to_gpu` logsumexp's work.
///
/// ```
/// use gpu::op::logsumexp::exp_neg_exact;
/// for x in [0.0f32, -1e-7, -0.5, -1.0, -20.0, -87.0, -100.0] {
///     let (got, want) = (exp_neg_exact(x) as f64, (x as f64).exp());
///     // a unit in the last place: of the value, or of the subnormals below 2^-126
///     let unit = (want * f32::EPSILON as f64).max(f32::from_bits(1) as f64);
///     assert!((got - want).abs() <= 2.0 * unit, "{x}: {got} {want}");
/// }
/// assert_eq!(exp_neg_exact(-200.0), 0.0);
/// assert!(exp_neg_exact(f32::NAN).is_nan());
/// ```
#[inline(always)]
pub fn exp_neg_exact(x: f32) -> f32 {
    const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
    const LN2_LO: f32 = f32::from_bits(0x35bf_be8e);
    // 1.5 · 2²³: adding and subtracting it rounds an f32 below 2²² to an integer
    const ROUND32: f32 = 12582912.0;
    if x.is_nan() {
        return x;
    }
    if x < -104.0 {
        return 0.0; // below 2⁻¹⁵⁰
    }
    let k = fused(x, core::f32::consts::LOG2_E, ROUND32) - ROUND32;
    let r = fused(-k, LN2_LO, fused(-k, LN2_HI, x));
    const INVERSE_FACTORIALS: [f32; 8] =
        [1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 1.0 / 2.0, 1.0, 1.0];
    let p = horner(&INVERSE_FACTORIALS, r, fused);
    // 2^k for k in -150..=0, as two powers within the normal range
    let k = k as i32;
    let (k1, k2) = (k / 2, k - k / 2);
    let two = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    p * two(k1) * two(k2)
}

/// Merge two parts (see the module docs) with the exponential `exp`: a NaN
/// in either is NaN; a part whose maximum is `-inf` adds nothing; equal
/// maxima (two `+inf`) add their sums. Selections, not branches (as
/// [`Min`](super::Min) and [`Max`](super::Max)): the exponential is taken
/// whichever case holds, and the case picks the result, so the warp's and
/// the block's trees of merges have no divergence points.
#[inline(always)]
#[allow(clippy::eq_op)] // `x != x`: the NaN test, for either float type
fn merge_with<A: ExpLn>(a: MaxSum<A>, b: MaxSum<A>, exp: impl Fn(A) -> A) -> MaxSum<A> {
    let nan = a.max != a.max || b.max != b.max;
    let swap = b.max > a.max;
    let (hi, lo) = (if swap { b } else { a }, if swap { a } else { b });
    let e = exp(lo.max - hi.max);
    let scale = if lo.max == hi.max { A::ONE } else { e };
    let merged = MaxSum { max: hi.max, sum: hi.sum + lo.sum * scale };
    let r = if lo.max == A::NEG_INF { hi } else { merged };
    if nan { MaxSum { max: A::NAN, sum: A::NAN } } else { r }
}

/// The result of a part: `max + ln sum` with the logarithm `ln`; none, or
/// `-inf` only, give `-inf`; `+inf` gives `+inf` (not `inf + ln s`).
#[inline(always)]
fn result_with<A: ExpLn>(acc: MaxSum<A>, ln: impl Fn(A) -> A) -> A {
    if acc.max == A::NEG_INF || acc.max == A::INF {
        return acc.max;
    }
    acc.max + ln(acc.sum)
}

/// A vector's lanes: their maximum and the sum of `exp(x − max)`, one
/// exponential `exp` a lane; lanes with a NaN or an infinity merge one by
/// one.
#[inline(always)]
#[allow(clippy::eq_op)] // `x != x`: the NaN test, for either float type
fn lanes_with<A: ExpLn, const L: usize>(x: [A; L], exp: impl Fn(A) -> A + Copy) -> MaxSum<A> {
    let max = super::pairwise(x, A::larger);
    let finite = max != A::INF && max != A::NEG_INF && !(0..L).any(|k| x[k] != x[k]);
    if finite {
        let sum = super::pairwise(core::array::from_fn::<A, L, _>(|k| exp(x[k] - max)), |a, b| a + b);
        MaxSum { max, sum }
    } else {
        let parts = core::array::from_fn::<MaxSum<A>, L, _>(|k| MaxSum { max: x[k], sum: A::ONE });
        super::pairwise(parts, |a, b| merge_with(a, b, exp))
    }
}

/// `acc` with a round's `V` vectors of `L` lanes folded in: the largest of
/// them and `acc`'s maximum is the new maximum `m`, `acc`'s sum is
/// rescaled to it (an exponential only where the maximum grew) and each
/// element adds `exp(x − m)`: one exponential an element, where merging
/// each vector's [`lanes_with`] took one more for every vector. The
/// special results are [`merge_with`]'s without its cases: a NaN makes the
/// maximum NaN; with an infinite maximum (`±inf`) the sum is never read
/// (`result_with` and `merge_with` take the maximum alone) except for an
/// empty part's, kept as it was (0, or 1 for `-inf` elements).
#[inline(always)]
#[allow(clippy::eq_op)] // `x != x`: the NaN test, for either float type
fn round_with<T: Copy, A: ExpLn, const L: usize, const V: usize>(
    acc: MaxSum<A>,
    x: [[T; L]; V],
    peak: Option<A>,
    widen: impl Fn(T) -> A + Copy,
) -> MaxSum<A> {
    let x = |v: usize, k: usize| widen(x[v][k]);
    // the round's largest element, and whether one is NaN: `peak` where
    // the caller has it (NaN for a NaN), else lane by lane
    let (largest, nan) = match peak {
        Some(p) => (p, p != p),
        None => {
            (super::each::<A, L, V>(x, A::larger), super::each::<bool, L, V>(|v, k| x(v, k) != x(v, k), |a, b| a | b))
        }
    };
    // `acc`'s NaN, if any, stays (a NaN element makes `nan`)
    let max = if largest > acc.max { largest } else { acc.max };
    let scale = if acc.max < max { (acc.max - max).exp_neg() } else { A::ONE };
    let sum = acc.sum * scale + super::each::<A, L, V>(|v, k| x(v, k).exp_below(max), |a, b| a + b);
    MaxSum { max: if nan { A::NAN } else { max }, sum: if max == A::NEG_INF { acc.sum } else { sum } }
}

/// The part of a run of elements ([`Reduction::fold_run`]: a lane's part
/// of a short segment's piece in shared memory, `x(e)` at the positions
/// `e = from, from + step, ...` below `to`): its maximum in a first pass,
/// then the sum of `exp(x − max)` in a second, one exponential an element
/// (as [`round_with`] from the empty part), where merging the elements one
/// by one took an exponential and a rescaling each. The special results
/// are `round_with`'s.
#[inline(always)]
#[allow(clippy::eq_op)] // `x != x`: the NaN test, for either float type
fn run_with<A: ExpLn>(from: u32, to: u32, step: u32, x: impl Fn(u32) -> A) -> MaxSum<A> {
    let (mut max, mut nan, mut e) = (A::NEG_INF, false, from);
    while e < to {
        let v = x(e);
        max = max.larger(v);
        nan |= v != v;
        e += step;
    }
    let (mut sum, mut e) = (A::ZERO, from);
    while e < to {
        sum = sum + x(e).exp_below(max);
        e += step;
    }
    MaxSum { max: if nan { A::NAN } else { max }, sum: if max == A::NEG_INF { A::ZERO } else { sum } }
}

macro_rules! logsumexp {
    ($($t:ident in $a:ident: |$x:ident| $widen:expr;)*) => {$(
        impl Reduction<$t> for LogSumExp {
            type Acc = MaxSum<$a>;
            type Out = $a;
            const NAME: &'static str = "logsumexp";
            const IDENTITY: MaxSum<$a> = MaxSum { max: <$a>::NEG_INFINITY, sum: 0.0 };
            const COLUMN_TREE: bool = true;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> MaxSum<$a> {
                MaxSum { max: $widen, sum: 1.0 }
            }
            #[inline(always)]
            fn combine(a: MaxSum<$a>, b: MaxSum<$a>) -> MaxSum<$a> {
                merge_with(a, b, ExpLn::exp_neg)
            }
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], _: [$t; L], _: u64) -> MaxSum<$a> {
                let x = core::array::from_fn::<$a, L, _>(|k| {
                    let $x = x[k];
                    $widen
                });
                lanes_with(x, ExpLn::exp_neg)
            }
            /// A round's vectors as one part: `round_with`.
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: MaxSum<$a>,
                x: [[$t; L]; V],
                _: [[$t; L]; V],
                _: [u64; V],
            ) -> MaxSum<$a> {
                let widen = |$x: $t| -> $a { $widen };
                round_with(acc, x, <$t as RoundPeak<$a>>::round_peak(x), widen)
            }
            /// A short run as one part: `run_with`.
            #[inline(always)]
            fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> ($t, $t), _: u64) -> MaxSum<$a> {
                run_with(from, to, step, |e| -> $a {
                    let $x = element(e).0;
                    $widen
                })
            }
            /// A column's rows folded in as a round of one vector
            /// (`round_with`): one exponential a row, and the sum
            /// rescaled only where the maximum grew, where merging the
            /// rows' own part took one more every group (H100, `bf16`
            /// along the five 1 GiB matrices' columns 2.8-3.2% faster).
            #[inline(always)]
            fn fold_strided<const L: usize>(acc: MaxSum<$a>, x: [$t; L], _: [$t; L], _: u64, _: u64) -> MaxSum<$a> {
                let widen = |$x: $t| -> $a { $widen };
                round_with(acc, [x], <$t as RoundPeak<$a>>::round_peak([x]), widen)
            }
            #[inline(always)]
            fn finish(acc: MaxSum<$a>, _: u64) -> $a {
                result_with(acc, ExpLn::ln)
            }
        }
    )*};
}
logsumexp! {
    f32 in f32: |x| x;
    f64 in f64: |x| x;
    f16 in f32: |x| x.to_f32();
    bf16 in f32: |x| x.to_f32();
}

/// `log Σ exp(x)` of `f32`, as [`LogSumExp`] but with the exponential and
/// the logarithm of IEEE operations rounded once each
/// ([`exp_neg_exact`] for every exponential, the `f64` logarithm for the
/// last one, see the module docs): the same bits on every GPU and on the
/// CPU. The shaped kernels run it for a `gpu_to_gpu` logsumexp of `f32`
/// (entries `{kernel}_logsumexp_portable_f32`, `names::PORTABLE_SHAPES`);
/// the flat reproducible kernel's steps are its `combine` and `finish`
/// ([`FixedOrder`](super::fixed_order::FixedOrder) for [`LogSumExp`]).
///
/// ```
/// use gpu::op::{LogSumExp, PortableLogSumExp, Reduction};
/// let x = [1.0f32, -2.5, 3.25, 0.5];
/// let fold = |a, &v| PortableLogSumExp::combine(a, <PortableLogSumExp as Reduction<f32>>::map(v, v, 0));
/// let got = PortableLogSumExp::finish(x.iter().fold(PortableLogSumExp::IDENTITY, fold), 4);
/// let want = x.iter().map(|&v| (v as f64).exp()).sum::<f64>().ln();
/// assert!((got as f64 - want).abs() < 4.0 * f32::EPSILON as f64 * want);
/// assert_eq!(<PortableLogSumExp as Reduction<f32>>::NAME, <LogSumExp as Reduction<f32>>::NAME);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PortableLogSumExp;

impl Reduction<f32> for PortableLogSumExp {
    type Acc = MaxSum<f32>;
    type Out = f32;
    const NAME: &'static str = "logsumexp";
    const IDENTITY: MaxSum<f32> = MaxSum { max: f32::NEG_INFINITY, sum: 0.0 };
    #[inline(always)]
    fn map(x: f32, _: f32, _: u64) -> MaxSum<f32> {
        MaxSum { max: x, sum: 1.0 }
    }
    #[inline(always)]
    fn combine(a: MaxSum<f32>, b: MaxSum<f32>) -> MaxSum<f32> {
        merge_with(a, b, exp_neg_exact)
    }
    #[inline(always)]
    fn map_lanes<const L: usize>(x: [f32; L], _: [f32; L], _: u64) -> MaxSum<f32> {
        lanes_with(x, exp_neg_exact)
    }
    /// A column's rows merge as one part, as a vector's lanes do.
    #[inline(always)]
    fn fold_strided<const L: usize>(acc: MaxSum<f32>, x: [f32; L], y: [f32; L], first: u64, _: u64) -> MaxSum<f32> {
        Self::combine(acc, Self::map_lanes(x, y, first))
    }
    #[inline(always)]
    fn finish(acc: MaxSum<f32>, _: u64) -> f32 {
        result_with(MaxSum { max: acc.max as f64, sum: acc.sum as f64 }, ExpLn::ln) as f32
    }
}

/// The reproducible `f32` logsumexp: [`PortableLogSumExp`]'s arithmetic,
/// an element at a time.
impl super::fixed_order::FixedOrder<f32> for LogSumExp {
    #[inline(always)]
    fn accumulate(acc: MaxSum<f32>, x: f32, y: f32, i: u64) -> MaxSum<f32> {
        PortableLogSumExp::combine(acc, <PortableLogSumExp as Reduction<f32>>::map(x, y, i))
    }

    #[inline(always)]
    fn merge(a: MaxSum<f32>, b: MaxSum<f32>) -> MaxSum<f32> {
        PortableLogSumExp::combine(a, b)
    }

    #[inline(always)]
    fn result(acc: MaxSum<f32>, n: u64) -> f32 {
        PortableLogSumExp::finish(acc, n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{draws, fold_pairwise};
    use super::*;

    /// `exp_in_range` against the CPU's `exp` (itself within half a unit of
    /// the exact value): within 1.5 units in the last place for `|x| ≤ 1`,
    /// and the reduction's `|x|·2⁻⁵³` more beyond.
    #[test]
    fn the_f64_exponential_is_within_its_bound() {
        let mut draw = draws(7);
        for i in 0..200_000 {
            let x = if i % 2 == 0 { 2.0 * draw() - 1.0 } else { -745.0 + 1454.7 * draw() };
            let below = -745.2 - 1e4 * draw();
            assert_eq!(ExpLn::exp_neg(below).to_bits(), 0, "exp({below})");
            let (got, want) = (exp_in_range(x), x.exp());
            let unit = f64::from_bits(want.to_bits() + 1) - want; // a unit in the last place
            let bound = 1.5 * unit + x.abs() * want * f64::EPSILON / 2.0;
            assert!((got - want).abs() <= bound, "exp({x}) = {got}, want {want}");
        }
        assert!(ExpLn::exp_neg(f64::NAN).is_nan() && ExpLn::exp_neg(f64::NEG_INFINITY) == 0.0);
        assert_eq!((exp_in_range(0.0), exp_in_range(-745.0)), (1.0, 5e-324));
    }

    /// `fold_vectors` (a round's maximum first) against its definition
    /// (`fold_pairwise`: each vector's lanes, then the merges) on chains of
    /// rounds with NaNs, infinities and large spreads: the same maximum
    /// (NaN where it is NaN, either zero of a tie), the same sum where the
    /// maximum is finite, and the same result, each within a few units of
    /// the accumulator's last place of itself and of the maximum (the
    /// round's terms `exp_below` the maximum, whose product with `log₂e`
    /// rounds once).
    fn same_as_pairwise<T: Copy + core::fmt::Debug, A: ExpLn + Into<f64> + core::fmt::Debug, const L: usize>(
        from: impl Fn(f64) -> T,
        epsilon: f64,
    ) where
        LogSumExp: Reduction<T, Acc = MaxSum<A>, Out = A>,
    {
        let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0];
        let near = |g: f64, w: f64, bound: f64| {
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 8.0 * epsilon * bound
        };
        let mut draw = draws(11);
        for case in 0..30_000 {
            let (scale, rare) = ([1.0, 30.0, 700.0][case % 3], [0.0, 0.01, 0.3][case / 3 % 3]);
            let mut acc = <LogSumExp as Reduction<T>>::IDENTITY;
            for round in 0..3 {
                // now and then a first round of -inf only: an empty part
                let empty = round == 0 && case % 7 == 0;
                let x: [[T; L]; 4] = core::array::from_fn(|_| {
                    core::array::from_fn(|_| {
                        let r = draw();
                        from(if empty {
                            f64::NEG_INFINITY
                        } else if r < rare {
                            special[(r / rare * 5.0) as usize % 5]
                        } else {
                            scale * (2.0 * draw() - 1.0)
                        })
                    })
                });
                let got = <LogSumExp as Reduction<T>>::fold_vectors(acc, x, x, [0; 4]);
                let want = fold_pairwise::<LogSumExp, T, L, 4>(acc, x, x, [0; 4]);
                let (gm, wm): (f64, f64) = (got.max.into(), want.max.into());
                let (gs, ws): (f64, f64) = (got.sum.into(), want.sum.into());
                let sums = !wm.is_finite() || near(gs, ws, ws.abs() * (1.0 + wm.abs() / 8.0));
                // the same maximum (either zero where `-0.0` and `+0.0` tie)
                assert!(gm == wm || (gm.is_nan() && wm.is_nan()), "{x:?} after {acc:?}: {got:?} {want:?}");
                assert!(sums, "{x:?} after {acc:?}: {got:?} {want:?}");
                let finish = |m| -> f64 { <LogSumExp as Reduction<T>>::finish(m, 1).into() };
                let (gf, wf) = (finish(got), finish(want));
                assert!(near(gf, wf, wf.abs() + wm.abs() / 8.0), "{x:?} after {acc:?}: {got:?} {want:?}");
                acc = got;
            }
        }
    }

    /// A run of 0 to 40 elements as one part (`fold_run`) against merging
    /// them one by one from the empty part, on the data of the rounds
    /// above: the same maximum, the same result within a few units of
    /// itself and of the maximum.
    #[test]
    fn a_run_folds_as_its_elements_do() {
        let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
        let mut draw = draws(13);
        for case in 0..30_000 {
            let (scale, rare) = ([1.0, 30.0, 80.0][case % 3], [0.0, 0.01, 0.3][case / 3 % 3]);
            let x: Vec<f32> = (0..case % 41)
                .map(|_| {
                    let r = draw();
                    if r < rare {
                        special[(r / rare * 5.0) as usize % 5]
                    } else {
                        (scale * (2.0 * draw() - 1.0)) as f32
                    }
                })
                .collect();
            let (step, from) = (1 + (case % 3) as u32, (case / 41 % 2) as u32);
            let got = <LogSumExp as Reduction<f32>>::fold_run(from, x.len() as u32, step, |e| (x[e as usize], 0.0), 0);
            let mut want = <LogSumExp as Reduction<f32>>::IDENTITY;
            for &v in x.iter().skip(from as usize).step_by(step as usize) {
                want = <LogSumExp as Reduction<f32>>::combine(want, <LogSumExp as Reduction<f32>>::map(v, v, 0));
            }
            let finish = |m| <LogSumExp as Reduction<f32>>::finish(m, 1) as f64;
            let (g, w) = (finish(got), finish(want));
            assert!(got.max == want.max || (got.max.is_nan() && want.max.is_nan()), "{x:?}: {got:?} {want:?}");
            let near = g.to_bits() == w.to_bits()
                || (g.is_nan() && w.is_nan())
                || (g - w).abs() <= 8.0 * f32::EPSILON as f64 * (w.abs() + (got.max as f64).abs() / 8.0).max(1.0);
            assert!(near, "{x:?} from {from} step {step}: {got:?} {want:?}");
        }
    }

    #[test]
    fn a_round_folds_as_its_vectors_do() {
        same_as_pairwise::<f64, f64, 2>(|v| v, f64::EPSILON);
        same_as_pairwise::<f32, f32, 4>(|v| v as f32, f32::EPSILON as f64);
        same_as_pairwise::<bf16, f32, 8>(|v| bf16::from_f32(v as f32), f32::EPSILON as f64);
        same_as_pairwise::<f16, f32, 8>(|v| f16::from_f32(v as f32), f32::EPSILON as f64);
    }
}
