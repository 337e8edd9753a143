//! The exact CPU reference for the accurate sums: every `f32`/`f64` added
//! into one big two's-complement fixed-point integer (unit 2^-1074, the
//! least `f64` subnormal; 40 limbs of 64 bits), so the sum is exact for any
//! finite inputs. Written apart from `gpu::op::exact` (different limbs,
//! carries propagated at once, rounding by comparing candidates instead of
//! by bits), so that a bug there is not copied here.
//!
//! ```
//! use testkit::exact::ExactSum;
//! let s = ExactSum::of(&[1e30f32 as f64, 1.0, -1e30f32 as f64]);
//! assert_eq!(s.rounded_f32(), 1.0);
//! assert_eq!(ExactSum::of(&[0.1, 0.2, -0.3]).to_f64(), 2.7755575615628914e-17);
//! ```

use std::cmp::Ordering;

/// Limbs: 2560 bits, from 2^-1074 past 2^1024 · 2^400.
const LIMBS: usize = 40;
/// The unit of limb 0.
const UNIT_EXP: i32 = -1074;

/// An exact sum of floats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactSum {
    limbs: Vec<u64>,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    /// Every element so far was `-0.0` (an exact zero is then `-0.0`).
    only_neg_zeros: bool,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum { limbs: vec![0; LIMBS], nan: false, pos_inf: false, neg_inf: false, only_neg_zeros: true }
    }
}

impl ExactSum {
    /// The exact sum of `xs`.
    pub fn of(xs: &[f64]) -> ExactSum {
        let mut s = ExactSum::default();
        xs.iter().for_each(|&x| s.add(x));
        s
    }

    /// Add `x`: NaN and infinities are remembered, finite values added exactly.
    pub fn add(&mut self, x: f64) {
        self.only_neg_zeros &= x.to_bits() == (-0.0f64).to_bits();
        if x.is_nan() {
            self.nan = true;
        } else if x.is_infinite() {
            if x > 0.0 { self.pos_inf = true } else { self.neg_inf = true }
        } else if x != 0.0 {
            let bits = x.to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i32;
            let frac = bits & ((1 << 52) - 1);
            let (m, e) = if exp == 0 { (frac, 1) } else { (frac | 1 << 52, exp) };
            let shift = (e - 1075 - UNIT_EXP) as usize; // ≥ 0: every f64 is a multiple of 2^-1074
            self.add_shifted(m, shift, x < 0.0);
        }
    }

    /// Add (or subtract) `m · 2^shift` units.
    fn add_shifted(&mut self, m: u64, shift: usize, negative: bool) {
        let (k, r) = (shift / 64, shift % 64);
        let w = (m as u128) << r;
        let parts = [w as u64, (w >> 64) as u64];
        let mut carry = 0u64; // in two's complement: subtracting adds the complement
        let mut borrow = false;
        for j in k..LIMBS {
            let p = if j - k < 2 { parts[j - k] } else { 0 };
            if negative {
                let (v, b1) = self.limbs[j].overflowing_sub(p);
                let (v, b2) = v.overflowing_sub(borrow as u64);
                self.limbs[j] = v;
                borrow = b1 || b2;
                if !borrow && j > k {
                    break;
                }
            } else {
                let (v, c1) = self.limbs[j].overflowing_add(p);
                let (v, c2) = v.overflowing_add(carry);
                self.limbs[j] = v;
                carry = (c1 || c2) as u64;
                if carry == 0 && j > k {
                    break;
                }
            }
        }
    }

    fn negative(&self) -> bool {
        self.limbs[LIMBS - 1] >> 63 == 1
    }

    /// |value| as limbs.
    fn magnitude(limbs: &[u64]) -> (bool, Vec<u64>) {
        let neg = limbs[LIMBS - 1] >> 63 == 1;
        if !neg {
            return (false, limbs.to_vec());
        }
        let mut out = limbs.iter().map(|l| !l).collect::<Vec<_>>();
        for l in out.iter_mut() {
            let (v, c) = l.overflowing_add(1);
            *l = v;
            if !c {
                break;
            }
        }
        (true, out)
    }

    /// `self - y`, exactly (finite `y`).
    fn minus(&self, y: f64) -> ExactSum {
        let mut d = self.clone();
        d.add(-y);
        d
    }

    /// The value rounded toward zero to `f64` precision or better, as an
    /// approximation (its error is below 2^-60 relative): for bounds.
    pub fn to_f64(&self) -> f64 {
        if self.nan || (self.pos_inf && self.neg_inf) {
            return f64::NAN;
        }
        if self.pos_inf || self.neg_inf {
            return if self.pos_inf { f64::INFINITY } else { f64::NEG_INFINITY };
        }
        let (neg, mag) = Self::magnitude(&self.limbs);
        let Some(top) = mag.iter().rposition(|&l| l != 0) else {
            return if self.only_neg_zeros { -0.0 } else { 0.0 };
        };
        let lo = if top > 0 { mag[top - 1] } else { 0 };
        let w = (mag[top] as u128) << 64 | lo as u128;
        let exp = 64 * (top as i32 - 1) + UNIT_EXP;
        // w as f64 (rounded), then scaled in two steps (no intermediate overflow)
        let v = (w as f64) * 2f64.powi(exp / 2) * 2f64.powi(exp - exp / 2);
        if neg { -v } else { v }
    }

    /// Exact comparison of |self - a| with |self - b|.
    fn closer(&self, a: f64, b: f64) -> Ordering {
        let (_, da) = Self::magnitude(&self.minus(a).limbs);
        let (_, db) = Self::magnitude(&self.minus(b).limbs);
        da.iter().rev().cmp(db.iter().rev())
    }

    /// The sum rounded once to `f32`, to nearest even (IEEE 754), with the
    /// rules for NaN, infinities, overflow and the sign of an exact zero.
    pub fn rounded_f32(&self) -> f32 {
        let approx = self.to_f64();
        if approx.is_nan() || approx.is_infinite() {
            return approx as f32;
        }
        if approx == 0.0 {
            return approx as f32; // exactly zero (the sign as IEEE says)
        }
        // past f32::MAX + ½ulp rounds to infinity (a tie there too: MAX is odd)
        let limit = 2f64.powi(128) - 2f64.powi(103);
        let over = |l: f64| {
            let (neg, mag) = Self::magnitude(&self.minus(l).limbs);
            !neg || mag.iter().all(|&x| x == 0)
        };
        if over(limit) {
            return f32::INFINITY;
        }
        if !over(-limit) {
            return f32::NEG_INFINITY;
        }
        let r0 = approx as f32;
        let candidates = [r0.next_down(), r0, r0.next_up()];
        let mut best = candidates[0];
        for &c in &candidates[1..] {
            if !c.is_finite() {
                continue;
            }
            match self.closer(c as f64, best as f64) {
                Ordering::Less => best = c,
                Ordering::Equal if c.to_bits() & 1 == 0 => best = c,
                _ => {}
            }
        }
        best
    }

    /// `|self - y|` in units of `ulp(y)` (approximate: for bounds).
    pub fn ulps(&self, y: f64) -> f64 {
        let diff = self.minus(y).to_f64().abs();
        diff / ulp(y)
    }

    /// `|self - y|`, approximately (to 2^-60 relative).
    pub fn distance(&self, y: f64) -> f64 {
        self.minus(y).to_f64().abs()
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative()
    }
}

/// The spacing of `f64`s at `y`: `ulp(y)`.
///
/// ```
/// assert_eq!(testkit::exact::ulp(1.0), f64::EPSILON);
/// ```
pub fn ulp(y: f64) -> f64 {
    let y = y.abs();
    if y == 0.0 || !y.is_finite() { f64::from_bits(1) } else { y.next_up() - y }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduction::op::exact::superaccumulate as superacc;

    fn exact32(xs: &[f32]) -> f32 {
        ExactSum::of(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>()).rounded_f32()
    }

    #[test]
    fn exact_on_what_f64_sums_exactly() {
        let xs: Vec<f64> = (0..10_000).map(|i| (i % 17) as f64 - 8.0).collect();
        assert_eq!(ExactSum::of(&xs).to_f64(), xs.iter().sum::<f64>());
        assert_eq!(ExactSum::of(&[1e300, 1.0, -1e300]).to_f64(), 1.0);
        assert_eq!(ExactSum::of(&[f64::MIN_POSITIVE / 4.0, -f64::MAX, f64::MAX]).to_f64(), f64::MIN_POSITIVE / 4.0);
        assert!(ExactSum::of(&[-1.0, 0.5]).is_negative());
    }

    #[test]
    fn rounds_like_ieee() {
        assert_eq!(exact32(&[1.0, 2f32.powi(-24)]), 1.0); // tie, to even
        assert_eq!(exact32(&[1.0, 2f32.powi(-24), f32::from_bits(1)]), 1.0 + f32::EPSILON);
        assert_eq!(exact32(&[f32::MAX, f32::MAX]), f32::INFINITY);
        assert_eq!(exact32(&[f32::MAX, f32::MAX, -f32::MAX]), f32::MAX);
        assert_eq!(exact32(&[-0.0, -0.0]).to_bits(), (-0.0f32).to_bits());
        assert_eq!(exact32(&[1.0, -1.0]).to_bits(), 0);
        assert!(exact32(&[f32::INFINITY, f32::NAN]).is_nan());
        assert!(exact32(&[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
        assert_eq!(exact32(&[f32::NEG_INFINITY, 1.0]), f32::NEG_INFINITY);
    }

    /// Two independent exact sums (this one, and the superaccumulator of
    /// `gpu::op::exact` that the GPU runs) agree on data that spans the
    /// whole f32 range and cancels.
    #[test]
    fn agrees_with_the_superaccumulator() {
        let mut state = 7u64;
        for trial in 0..200 {
            let xs: Vec<f32> = (0..1 + trial * 7)
                .map(|_| {
                    state = crate::data::splitmix64(state);
                    let x = f32::from_bits(state as u32 & 0x7f7f_ffff | (state >> 32) as u32 & 0x8000_0000);
                    if state.is_multiple_of(5) { -x } else { x }
                })
                .collect();
            let mut all = xs.clone();
            all.extend(xs.iter().rev().map(|x| -x)); // cancels to 0, then one survivor
            all.push(xs[0] * 0.5);
            assert_eq!(superacc(&all).to_bits(), exact32(&all).to_bits(), "trial {trial}");
            assert_eq!(superacc(&xs).to_bits(), exact32(&xs).to_bits(), "trial {trial}");
        }
    }

    /// A planted error: one element left out moves the sum, and the
    /// reference sees it even where the element is 2^-149 against 2^127.
    #[test]
    fn a_dropped_tiny_element_is_seen() {
        let xs = [2f32.powi(127), f32::from_bits(1), -(2f32.powi(127))];
        assert_eq!(exact32(&xs), f32::from_bits(1));
        assert_eq!(exact32(&[xs[0], xs[2]]), 0.0);
    }
}
