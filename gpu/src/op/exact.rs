//! Error-free arithmetic for the accurate sums, written once for the GPU and
//! the host (this module also builds for the host, where the library's CPU
//! twins and tests call the same functions).
//!
//! * [`two_sum`] and [`fast_two_sum`]: `a + b = s + e` exactly (Knuth,
//!   Dekker), the error-free transformations every accurate summation is
//!   built from.
//! * [`DoubleDouble`] and [`DdSum`]: an `f64` sum carried in two `f64`s
//!   (`hi + lo`); the accurate `f64` sum (`Sum2` per lane, double-double
//!   between lanes; `docs/src/guide/determinism.md` derives its bound).
//! * The superaccumulator of the accurate `f32` sum: any `f64` that is a
//!   multiple of 2^-149 (every `f32`, and every sum and rounding error of
//!   `f32`s) is split into three signed 32-bit [`digits`] of a fixed-point
//!   number with [`LIMBS`] limbs of weight 2^(32k-149), `i64` each, so that
//!   adding into it is integer addition: exact, and the same in any order.
//!   [`round_to_f32`] rounds the total once, to nearest even.
//!
//! Every function here is plain IEEE 754 arithmetic in round-to-nearest
//! (`add.rn`/`sub.rn` on the GPU: rustc never fuses or reorders them), so
//! the host and the GPU compute the same bits.

use super::{Bits, Reduction};

/// Knuth's TwoSum: `s = fl(a + b)` and `e = (a + b) - s` exactly, for any
/// finite `a`, `b` (6 additions, no branch, no condition on magnitudes).
///
/// ```
/// use gpu::op::exact::two_sum;
/// assert_eq!(two_sum(1.0, 1e-30), (1.0, 1e-30)); // the lost part comes back
/// assert_eq!(two_sum(3.0, 4.0), (7.0, 0.0));
/// ```
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bp = s - a;
    let ap = s - bp;
    (s, (a - ap) + (b - bp))
}

/// Dekker's FastTwoSum: the same as [`two_sum`] in 3 additions, when
/// `|a| ≥ |b|` (or `a` is 0).
///
/// ```
/// use gpu::op::exact::fast_two_sum;
/// assert_eq!(fast_two_sum(1.0, 1e-30), (1.0, 1e-30));
/// ```
#[inline(always)]
pub fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// A double-double number `hi + lo` with `hi = fl(hi + lo)`.
///
/// ```
/// use gpu::op::exact::DoubleDouble;
/// let x = DoubleDouble::from(1.0).add_f64(1e-20).add_f64(-1.0);
/// assert_eq!(x.hi, 1e-20); // plain f64 would give 0
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct DoubleDouble {
    /// The leading part: the value rounded to `f64`.
    pub hi: f64,
    /// The rest, `|lo| ≤ ½ulp(hi)`.
    pub lo: f64,
}

// SAFETY: `#[repr(C)]` of two `f64`: 16 bytes, any bit pattern is a value.
unsafe impl Bits for DoubleDouble {}

/// Shuffled as `hi`'s words, then `lo`'s.
#[cfg(target_arch = "nvptx64")]
impl crate::prim::Shuffle for DoubleDouble {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        DoubleDouble { hi: self.hi.shuffle_words(&f), lo: self.lo.shuffle_words(&f) }
    }
}

impl From<f64> for DoubleDouble {
    #[inline(always)]
    fn from(x: f64) -> Self {
        DoubleDouble { hi: x, lo: 0.0 }
    }
}

impl DoubleDouble {
    /// `self + x` (Joldes, Muller, Popescu 2017, `DWPlusFP`: relative error
    /// at most 2u², u = 2^-53): `(h, e) = TwoSum(hi, x); t = lo + e;
    /// (hi, lo) = FastTwoSum(h, t)`. 10 additions.
    #[inline(always)]
    pub fn add_f64(self, x: f64) -> Self {
        let (h, e) = two_sum(self.hi, x);
        let (hi, lo) = fast_two_sum(h, self.lo + e);
        DoubleDouble { hi, lo }
    }

    /// `self + x` without renormalizing (one step of Ogita, Rump and
    /// Oishi's `Sum2`): `(hi, e) = TwoSum(hi, x); lo = lo + e`. 7
    /// additions, and only one of them (`hi + x`) on the chain to the next
    /// element's `hi`: the rounding errors are kept exactly and added up in
    /// plain `f64` beside it, so `lo` may grow past ½ulp(`hi`) (see
    /// [`DoubleDouble::normalized`]).
    ///
    /// ```
    /// use gpu::op::exact::DoubleDouble;
    /// let x = DoubleDouble::from(1e16).add_f64_lazy(1.0).add_f64_lazy(1.0);
    /// assert_eq!((x.hi, x.lo), (1e16, 2.0)); // both 1.0s kept in lo
    /// ```
    #[inline(always)]
    pub fn add_f64_lazy(self, x: f64) -> Self {
        let (hi, e) = two_sum(self.hi, x);
        DoubleDouble { hi, lo: self.lo + e }
    }

    /// The same value with `hi = fl(hi + lo)` and `|lo| ≤ ½ulp(hi)`:
    /// `TwoSum(hi, lo)`, exact (6 additions); a normalized pair comes back
    /// unchanged.
    ///
    /// ```
    /// use gpu::op::exact::DoubleDouble;
    /// let x = DoubleDouble { hi: 1.0, lo: 3.0 }.normalized();
    /// assert_eq!((x.hi, x.lo), (4.0, 0.0));
    /// assert_eq!(x.normalized(), x);
    /// ```
    #[inline(always)]
    pub fn normalized(self) -> Self {
        let (hi, lo) = two_sum(self.hi, self.lo);
        DoubleDouble { hi, lo }
    }

    /// `self + other` (`AccurateDWPlusDW`, relative error at most 3u²): the
    /// two leading parts and the two trailing parts are added error-free,
    /// then renormalized twice. 20 additions.
    #[inline(always)]
    pub fn add_dd(self, other: Self) -> Self {
        let (s, e) = two_sum(self.hi, other.hi);
        let (t, f) = two_sum(self.lo, other.lo);
        let (s, e) = fast_two_sum(s, e + t);
        let (hi, lo) = fast_two_sum(s, e + f);
        DoubleDouble { hi, lo }
    }
}

/// The accurate `f64` sum: each lane adds its elements with
/// [`DoubleDouble::add_f64_lazy`] (`Sum2`: `hi` a plain running sum, `lo`
/// the plain sum of its exact rounding errors) and renormalizes the pair
/// once at the end ([`DoubleDouble::normalized`], the fixed order's
/// `lane_result`); partial sums are combined with [`DoubleDouble::add_dd`],
/// whose results are normalized, and the result is rounded to `f64`
/// (`hi + lo`). `combine` expects normalized pairs (every pair the fixed
/// order hands it is one). Only the fixed-order kernel
/// (`kernels/reproducible.rs`) runs it, so it is also `gpu_to_gpu`
/// reproducible; `docs/src/guide/determinism.md` derives its bound.
///
/// ```
/// use gpu::op::{Reduction, exact::DdSum, fixed_order::FixedOrder};
/// let xs = [1e100, 1.0, -1e100];
/// let acc = xs.iter().fold(<DdSum as Reduction<f64>>::IDENTITY, |a, &x| <DdSum as FixedOrder<f64>>::accumulate(a, x, x, 0));
/// assert_eq!(<DdSum as Reduction<f64>>::finish(acc, 3), 1.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct DdSum;

impl Reduction<f64> for DdSum {
    type Acc = DoubleDouble;
    type Out = f64;
    const NAME: &'static str = "sum";
    const IDENTITY: DoubleDouble = DoubleDouble { hi: 0.0, lo: 0.0 };
    #[inline(always)]
    fn map(x: f64, _: f64, _: u64) -> DoubleDouble {
        DoubleDouble::from(x)
    }
    #[inline(always)]
    fn combine(a: DoubleDouble, b: DoubleDouble) -> DoubleDouble {
        a.add_dd(b)
    }
    #[inline(always)]
    fn finish(acc: DoubleDouble, _: u64) -> f64 {
        acc.hi + acc.lo
    }
}

/// Limbs of the superaccumulator: weights 2^-149 (the least `f32`
/// subnormal) up to 2^(32·12-149) = 2^235, room for 2^128 (the `f32`
/// range) times 2^64 elements and a carry.
pub const LIMBS: usize = 12;

/// The exponent of limb 0's unit: every finite `f32` is a multiple of it.
pub const LIMB0_EXP: i32 = -149;

/// Non-finite results, kept beside the limbs as bit flags (OR-ed together
/// across threads and blocks): a NaN was summed (or `+inf` met `-inf` in a
/// partial sum, which is NaN too).
pub const FLAG_NAN: u32 = 1;
/// A `+inf` was summed.
pub const FLAG_POS_INF: u32 = 2;
/// A `-inf` was summed.
pub const FLAG_NEG_INF: u32 = 4;
/// Something other than `-0.0` was summed: without it, an exact zero is
/// `-0.0` (IEEE 754: a sum of `-0.0`s is `-0.0`, any other exact zero `+0.0`).
pub const FLAG_NOT_NEG_ZERO: u32 = 8;

/// The flags a running `f64` sum `s` of `f32`s contributes: its class
/// (a plain `f64` sum of finite `f32`s never overflows, so `s` is ±inf or
/// NaN only when such inputs were summed; IEEE rules then make it NaN for
/// NaN or for both infinities), and whether it is something other than `-0.0`.
///
/// ```
/// use gpu::op::exact::*;
/// assert_eq!(flags_of(f64::NAN), FLAG_NAN | FLAG_NOT_NEG_ZERO);
/// assert_eq!(flags_of(-0.0), 0);
/// assert_eq!(flags_of(0.0), FLAG_NOT_NEG_ZERO);
/// ```
#[inline(always)]
pub fn flags_of(s: f64) -> u32 {
    let class = if s.is_nan() {
        FLAG_NAN
    } else if s == f64::INFINITY {
        FLAG_POS_INF
    } else if s == f64::NEG_INFINITY {
        FLAG_NEG_INF
    } else {
        0
    };
    class | if s.to_bits() == (-0.0f64).to_bits() { 0 } else { FLAG_NOT_NEG_ZERO }
}

/// `x` (finite, a multiple of 2^-149, `|x| < 2^(32·(LIMBS-2)-149)`) as
/// three signed 32-bit digits `d` at limbs `k, k+1, k+2`: `x = Σ d[j] ·
/// 2^(32(k+j)-149)`. Zero gives `(0, [0; 3])`. Integer work only: the
/// mantissa shifted into place.
///
/// ```
/// use gpu::op::exact::digits;
/// assert_eq!(digits(1.0), (3, [0, 1 << 21, 0])); // 1 = 2^149 units: digit 1 of limb 3, weight 2^(32·4-149) = 2^-21
/// assert_eq!(digits(-3.0 * 2f64.powi(-149)), (0, [-3, 0, 0]));
/// ```
#[inline(always)]
pub fn digits(x: f64) -> (usize, [i64; 3]) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0 && frac == 0 {
        return (0, [0; 3]);
    }
    // value = m · 2^(e - 1075) (with the implicit bit for normal numbers)
    let (m, e) = if biased == 0 { (frac, 1) } else { (frac | 1 << 52, biased) };
    // the mantissa's lsb, in units of 2^-149; below 0 only where the
    // mantissa's low bits are zero (x is a multiple of 2^-149 by contract)
    let p = e - 1075 - LIMB0_EXP;
    let (m, p) = if p < 0 { (m >> (-p).min(63) as u32, 0) } else { (m, p as u32) };
    let (k, r) = ((p / 32) as usize, p % 32);
    let w = (m as u128) << r; // at most 85 bits
    let d = [(w & 0xffff_ffff) as i64, ((w >> 32) & 0xffff_ffff) as i64, (w >> 64) as i64];
    if bits >> 63 == 1 { (k, [-d[0], -d[1], -d[2]]) } else { (k, d) }
}

/// Add `x` (see [`digits`]) into `limbs`, on the host (the GPU kernel does
/// the same with shared-memory atomics).
///
/// ```
/// use gpu::op::exact::*;
/// let mut limbs = [0i64; LIMBS];
/// for x in [1e30f32, 1.0, -1e30] { add_to_limbs(&mut limbs, x as f64); }
/// assert_eq!(round_to_f32(&limbs, FLAG_NOT_NEG_ZERO), 1.0);
/// ```
pub fn add_to_limbs(limbs: &mut [i64; LIMBS], x: f64) {
    let (k, d) = digits(x);
    for (j, &dj) in d.iter().enumerate() {
        if k + j < LIMBS {
            limbs[k + j] += dj;
        }
    }
}

/// The exact value of `limbs` (with the non-finite `flags`) rounded once to
/// `f32`, to nearest even: NaN for [`FLAG_NAN`] or both infinities, else
/// `±inf` for one of them, else the rounded sum (`±inf` past `f32::MAX`;
/// `-0.0` for an exact zero without [`FLAG_NOT_NEG_ZERO`]). Subnormal
/// results are exact (they are multiples of 2^-149). Integer work only.
///
/// ```
/// use gpu::op::exact::*;
/// let mut limbs = [0i64; LIMBS];
/// add_to_limbs(&mut limbs, 1.0);
/// add_to_limbs(&mut limbs, 2f64.powi(-24)); // exactly half an ulp of 1.0f32: ties to even
/// assert_eq!(round_to_f32(&limbs, FLAG_NOT_NEG_ZERO), 1.0);
/// add_to_limbs(&mut limbs, 2f64.powi(-149)); // a hair more: up
/// assert_eq!(round_to_f32(&limbs, FLAG_NOT_NEG_ZERO), 1.0 + f32::EPSILON);
/// assert!(round_to_f32(&limbs, FLAG_POS_INF | FLAG_NEG_INF).is_nan());
/// ```
#[inline(always)]
pub fn round_to_f32(limbs: &[i64; LIMBS], flags: u32) -> f32 {
    if flags & FLAG_NAN != 0 || flags & (FLAG_POS_INF | FLAG_NEG_INF) == FLAG_POS_INF | FLAG_NEG_INF {
        return f32::NAN;
    }
    if flags & FLAG_POS_INF != 0 {
        return f32::INFINITY;
    }
    if flags & FLAG_NEG_INF != 0 {
        return f32::NEG_INFINITY;
    }
    // carries: 32-bit digits, the sign in the final carry (no indexing:
    // nothing here may panic on the GPU)
    let mut d = [0u32; LIMBS];
    let mut carry: i128 = 0;
    for (dk, &limb) in d.iter_mut().zip(limbs) {
        let t = limb as i128 + carry;
        *dk = (t & 0xffff_ffff) as u32;
        carry = t >> 32;
    }
    let negative = carry < 0;
    if negative {
        // two's complement: invert and add one (the sign extension is all ones)
        let mut c = 1u64;
        for dk in d.iter_mut() {
            let t = (!*dk) as u64 + c;
            *dk = t as u32;
            c = t >> 32;
        }
    } else if carry > 0 {
        return f32::INFINITY; // past 2^235: far past f32::MAX
    }
    let sign = if negative { 1u32 << 31 } else { 0 };
    let Some(h) = d.iter().rposition(|&x| x != 0) else {
        return if flags & FLAG_NOT_NEG_ZERO == 0 { -0.0 } else { 0.0 };
    };
    // the top 96 bits (digits h, h-1, h-2) and whether any lower bit is set
    let at = |k: usize| d.get(k).map_or(0u128, |&x| x as u128);
    let w = at(h) << 64 | if h >= 1 { at(h - 1) << 32 } else { 0 } | if h >= 2 { at(h - 2) } else { 0 };
    let sticky = d.iter().enumerate().any(|(k, &x)| k + 2 < h && x != 0);
    let w_exp = 32 * (h as i32 - 2) + LIMB0_EXP; // the weight of w's lsb
    let p = 127 - w.leading_zeros() as i32; // w's msb
    let e = p + w_exp; // the exponent of the value's msb
    if e < -126 {
        // subnormal: below 2^-126 = 2^23 units of 2^-149, so all in digit 0
        // (h = 0), and exact: f32's subnormals are the multiples of 2^-149
        return f32::from_bits(sign | at(0) as u32);
    }
    if e > 127 {
        return f32::from_bits(sign | 0x7f80_0000);
    }
    // normal: keep 24 bits
    let shift = p - 23;
    let (mut mant, mut e) = if shift <= 0 {
        ((w << (-shift) as u32) as u32, e)
    } else {
        let shift = shift as u32;
        let mant = (w >> shift) as u32;
        let rem = w & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && (sticky || mant & 1 == 1));
        (mant + up as u32, e)
    };
    if mant == 1 << 24 {
        mant >>= 1;
        e += 1;
        if e > 127 {
            return f32::from_bits(sign | 0x7f80_0000);
        }
    }
    f32::from_bits(sign | (((e + 127) as u32) << 23) | (mant & 0x7f_ffff))
}

/// The sum of `xs` through the superaccumulator, serially: what the
/// accurate f32 kernel computes, for checks on the host.
///
/// ```
/// assert_eq!(gpu::op::exact::superaccumulate(&[1e30, 1.0, -1e30]), 1.0);
/// ```
pub fn superaccumulate(xs: &[f32]) -> f32 {
    let mut limbs = [0i64; LIMBS];
    let mut flags = 0;
    for &x in xs {
        if x.is_finite() {
            add_to_limbs(&mut limbs, x as f64);
        }
        flags |= flags_of(x as f64);
    }
    round_to_f32(&limbs, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(xs: &[f32]) -> f32 {
        superaccumulate(xs)
    }

    #[test]
    fn rounding_at_the_edges() {
        assert_eq!(exact(&[f32::MAX, f32::MAX, -f32::MAX]), f32::MAX);
        assert_eq!(exact(&[f32::MAX, f32::MAX]), f32::INFINITY);
        assert_eq!(exact(&[-f32::MAX, -f32::MAX]), f32::NEG_INFINITY);
        let tiny = f32::from_bits(1);
        assert_eq!(exact(&[tiny, tiny, tiny]), f32::from_bits(3));
        assert_eq!(exact(&[f32::MIN_POSITIVE, -tiny]), f32::from_bits(0x007f_ffff));
        assert_eq!(exact(&[-0.0, -0.0]).to_bits(), (-0.0f32).to_bits());
        assert_eq!(exact(&[-0.0, 0.0]).to_bits(), 0);
        assert_eq!(exact(&[1.0, -1.0]).to_bits(), 0);
        assert!(exact(&[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
        assert_eq!(exact(&[f32::INFINITY, 1.0]), f32::INFINITY);
        // 1 + 2^-24 + 2^-149: just above the tie, up
        assert_eq!(exact(&[1.0, 2f32.powi(-24), tiny]), 1.0 + f32::EPSILON);
        assert_eq!(exact(&[1.0, 2f32.powi(-24)]), 1.0); // the tie, to even
        assert_eq!(exact(&[1.0 + f32::EPSILON, 2f32.powi(-24)]), 1.0 + 2.0 * f32::EPSILON); // tie, to even (up)
        assert_eq!(exact(&[-1.0, -(2f32.powi(-24)), -tiny]), -(1.0 + f32::EPSILON));
    }

    #[test]
    fn double_double_keeps_what_f64_drops() {
        let x = DoubleDouble::from(1e16).add_f64(1.0).add_f64(1.0).add_f64(-1e16);
        assert_eq!(x.hi, 2.0);
        let y = DoubleDouble::from(1.0).add_dd(DoubleDouble { hi: 1e-17, lo: 0.0 }).add_dd(DoubleDouble::from(-1.0));
        assert_eq!(y.hi, 1e-17);
    }
}
