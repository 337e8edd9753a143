//! The mean and the sum of squared deviations in one pass, what
//! `torch.var`, `torch.std`, `torch.var_mean` and `torch.std_mean` are made
//! of: [`Moments`] returns a [`MeanM2`], and [`MeanM2::var`] and
//! [`MeanM2::std`] finish it with torch's `correction`.
//!
//! # How
//! A thread's round of 16-byte vectors (or a single vector), a lane's run
//! of a short segment and a warp's piece of a longer one in shared memory
//! each measured as one part, Chan, Golub and LeVeque's pairwise merge
//! everywhere else ([`Welford::merge`]): two parts of
//! `n_a` and `n_b` elements with means `μ_a`, `μ_b` and sums of squared
//! deviations `M2_a`, `M2_b` merge into
//!
//! ```text
//! n = n_a + n_b,   δ = μ_b − μ_a,   μ = μ_a + δ·n_b/n,   M2 = M2_a + M2_b + δ²·n_a·n_b/n
//! ```
//!
//! No sum of squares is ever subtracted from a squared sum, so a large mean
//! costs nothing: `f32` data of mean 10⁶ and spread 10⁻² keeps its variance
//! to a few units in the last place of `f32`. A round's elements are
//! measured from its first in `f32` (`f64` for `f64`), where the
//! differences are exact or nearly; everything after is in `f64`: the accumulator is a
//! [`Welford`] of three `f64`s for every float type. `f32` values so large
//! that their differences overflow (beyond half of `f32::MAX`) give an
//! infinite or NaN variance.
//!
//! # Results, as torch gives them
//! * the mean of no elements is NaN, and so is the variance;
//! * a NaN or an infinity makes the variance NaN; the mean is then what
//!   torch's `var_mean` gives (NaN with a NaN; `±inf` with infinities of
//!   one sign, NaN with both);
//! * `var = M2 / max(0, n − correction)`: with `n ≤ correction` that is a
//!   division by zero (NaN, or `inf` for `M2 > 0`), as in torch.
//!
//! The results are `f64` for every element type (a mean rounded to `f32`
//! would lose what merging the parts of several GPUs needs).

use super::{Bits, Reduction, WarpAdd, each_position};
use crate::half::{bf16, f16};

/// A part's element count, mean and sum of squared deviations from it, all
/// `f64` (a count is exact to 2^53).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Welford {
    /// How many elements.
    pub count: f64,
    /// Their mean.
    pub mean: f64,
    /// `Σ (x − mean)²`.
    pub m2: f64,
}

// SAFETY: `#[repr(C)]` of three `f64`s: 24 bytes, no padding, every bit
// pattern is a value.
unsafe impl Bits for Welford {}

/// Shuffled as its three `f64`s.
#[cfg(target_arch = "nvptx64")]
impl crate::prim::Shuffle for Welford {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        Welford {
            count: self.count.shuffle_words(&f),
            mean: self.mean.shuffle_words(&f),
            m2: self.m2.shuffle_words(&f),
        }
    }
}

impl Welford {
    /// No elements.
    pub const EMPTY: Welford = Welford { count: 0.0, mean: 0.0, m2: 0.0 };

    /// One element (`M2` is `x · 0`: 0, or NaN for a NaN or an infinity).
    #[inline(always)]
    pub fn of(x: f64) -> Welford {
        Welford { count: 1.0, mean: x, m2: (x * 0.0).abs() }
    }

    /// Chan, Golub and LeVeque's merge of two parts (see the module docs);
    /// an empty part leaves the other as it is.
    ///
    /// Straight-line code: the empty parts are selections, not branches,
    /// and the weight `n_b / n` is `div.rn.f64`'s fast path written out
    /// (the same bits, no call), so the compiler can run a tree's
    /// divisions, which need only the counts, ahead of the means.
    ///
    /// ```
    /// use gpu::op::Welford;
    /// let (a, b) = (Welford::of(1.0).merge(Welford::of(2.0)), Welford::of(3.0).merge(Welford::of(6.0)));
    /// assert_eq!(a.merge(b), Welford { count: 4.0, mean: 3.0, m2: 14.0 });
    /// assert_eq!(Welford::EMPTY.merge(a), a);
    /// assert_eq!(a.merge(Welford::EMPTY), a);
    /// ```
    #[inline(always)]
    pub fn merge(self, b: Welford) -> Welford {
        if_empty(b.count, self, self.merge_part(b))
    }

    /// [`merge`](Self::merge) with a part `b` that is not empty (a round's
    /// vectors, a column's rows): the same bits without the selection for
    /// an empty `b`, which the compiler cannot drop for it (the selections
    /// are `asm`). The `f32` columns kernel's main loop took 285
    /// instructions instead of 300 (`ptxas` 12.9, sm_90).
    ///
    /// ```
    /// use gpu::op::Welford;
    /// let a = Welford::of(1.0).merge(Welford::of(2.0));
    /// assert_eq!(Welford::EMPTY.merge_part(a), a);
    /// assert_eq!(a.merge_part(Welford::of(3.0)), a.merge(Welford::of(3.0)));
    /// ```
    #[inline(always)]
    pub fn merge_part(self, b: Welford) -> Welford {
        let count = self.count + b.count;
        if_empty(self.count, b, self.weighted(b, count, ratio(b.count, count)))
    }

    /// The merge with `b`'s weight `w = n_b / n` given.
    #[inline(always)]
    fn weighted(self, b: Welford, count: f64, w: f64) -> Welford {
        let d = b.mean - self.mean;
        Welford { count, mean: self.mean + d * w, m2: self.m2 + b.m2 + d * d * self.count * w }
    }
}

/// `a` if `count` is 0, else `b`: on the GPU three selections (`selp`),
/// which LLVM does not turn back into a branch around the merge (it does
/// so with `if`, since the merge's division is costly), so the straight
/// line holds.
#[inline(always)]
fn if_empty(count: f64, a: Welford, b: Welford) -> Welford {
    #[cfg(target_arch = "nvptx64")]
    {
        let pick = |x: f64, y: f64| {
            let out: f64;
            // SAFETY: arithmetic on registers only.
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .pred p;",
                    "setp.eq.f64 p, {c}, 0d0000000000000000;",
                    "selp.f64 {o}, {x}, {y}, p;",
                    "}}",
                    o = out(reg64) out,
                    c = in(reg64) count,
                    x = in(reg64) x,
                    y = in(reg64) y,
                    options(pure, nomem, nostack)
                );
            }
            out
        };
        Welford { count: pick(a.count, b.count), mean: pick(a.mean, b.mean), m2: pick(a.m2, b.m2) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if count == 0.0 { a } else { b }
    }
}

/// `b / n` for element counts `1 ≤ b ≤ n ≤ 2^53`, correctly rounded: the
/// same bits as `b / n`. On the GPU it is the fast path of `div.rn.f64` as
/// `ptxas` writes it (a reciprocal estimate with its lowest bit set, two
/// refinements, Markstein's correction), without the test for operands
/// near the ends of the exponent range that sends those to a subroutine:
/// counts never are, and the subroutine's call would end the straight line.
/// Other operands (an empty part's `0 / n` or `0 / 0`) give a value that
/// [`Welford::merge`] does not select.
#[inline(always)]
fn ratio(b: f64, n: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let q: f64;
        // SAFETY: arithmetic on registers only.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .f64 r, e, m, t;",
                ".reg .b64 bits;",
                "rcp.approx.ftz.f64 r, {n};",
                "mov.b64 bits, r;",
                "or.b64 bits, bits, 1;",
                "mov.b64 r, bits;",
                "neg.f64 m, {n};",
                "fma.rn.f64 e, m, r, 0d3FF0000000000000;",
                "fma.rn.f64 e, e, e, e;",
                "fma.rn.f64 r, r, e, r;",
                "fma.rn.f64 e, m, r, 0d3FF0000000000000;",
                "fma.rn.f64 r, r, e, r;",
                "mul.rn.f64 t, {b}, r;",
                "fma.rn.f64 e, m, t, {b};",
                "fma.rn.f64 {q}, r, e, t;",
                "}}",
                q = out(reg64) q,
                b = in(reg64) b,
                n = in(reg64) n,
                options(pure, nomem, nostack)
            );
        }
        q
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        b / n
    }
}

/// A mean and the sum of squared deviations from it: [`Moments`]'s result,
/// in `f64` for every element type.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct MeanM2 {
    /// The mean (NaN for no elements).
    pub mean: f64,
    /// `Σ (x − mean)²`.
    pub m2: f64,
}

// SAFETY: `#[repr(C)]` of two `f64`s: no padding, every bit pattern is a
// value.
unsafe impl Bits for MeanM2 {}

impl MeanM2 {
    /// The variance of the `n` elements this came from with torch's
    /// `correction` (1: the sample variance, torch's default; 0: the
    /// population's): `M2 / max(0, n − correction)`.
    ///
    /// ```
    /// use gpu::op::MeanM2;
    /// let m = MeanM2 { mean: 2.0, m2: 8.0 };
    /// assert_eq!((m.var(5, 1.0), m.var(5, 0.0)), (2.0, 1.6));
    /// assert!(m.var(1, 1.0).is_infinite() && MeanM2 { mean: 1.0, m2: 0.0 }.var(1, 1.0).is_nan());
    /// ```
    pub fn var(self, n: u64, correction: f64) -> f64 {
        self.m2 / (n as f64 - correction).max(0.0)
    }

    /// The standard deviation: the square root of [`Self::var`].
    ///
    /// ```
    /// assert_eq!(gpu::op::MeanM2 { mean: 0.0, m2: 32.0 }.std(8, 0.0), 2.0);
    /// ```
    pub fn std(self, n: u64, correction: f64) -> f64 {
        sqrt(self.var(n, correction))
    }
}

/// `√x` in `f64`, correctly rounded (`sqrt.rn.f64` on the GPU).
fn sqrt(x: f64) -> f64 {
    super::transform::Sqrt::sqrt_rn(x)
}

/// The mean and the sum of squared deviations of the elements in one pass,
/// for `var`, `std`, `var_mean` and `std_mean` (see the module docs).
///
/// ```
/// use gpu::op::{MeanM2, Moments, Reduction};
/// let x = [2.0f32, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
/// let acc = <Moments as Reduction<f32>>::map_lanes([x[0], x[1], x[2], x[3]], [0.0; 4], 0);
/// let acc = <Moments as Reduction<f32>>::combine(acc, <Moments as Reduction<f32>>::map_lanes([x[4], x[5], x[6], x[7]], [0.0; 4], 4));
/// let out = <Moments as Reduction<f32>>::finish(acc, 8);
/// assert_eq!(out, MeanM2 { mean: 5.0, m2: 32.0 });
/// assert_eq!((out.var(8, 0.0), out.std(8, 0.0)), (4.0, 2.0));
/// assert!(<Moments as Reduction<f64>>::finish(Welford::EMPTY, 0).mean.is_nan());
/// # use gpu::op::Welford;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Moments;

/// The float types a vector's lanes are measured in: `f32` (for `f32` and
/// the half types, each widened first) and `f64`.
pub trait Lane:
    Copy + core::ops::Add<Output = Self> + core::ops::Sub<Output = Self> + core::ops::Mul<Output = Self>
{
    /// Widened to `f64` (exact).
    fn widen(self) -> f64;
    /// 0.
    const ZERO: Self;
    /// `1 / L` for a lane count `L` (a power of two: exact).
    fn inverse(l: usize) -> Self;
    /// Neither infinite nor NaN.
    fn finite(self) -> bool;
    /// `self / n`, correctly rounded.
    fn per(self, n: u32) -> Self;
    /// `x` rounded to this type.
    fn narrow(x: f64) -> Self;
}

impl Lane for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn widen(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn inverse(l: usize) -> f32 {
        1.0 / l as f32
    }
    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn per(self, n: u32) -> f32 {
        self / n as f32
    }
    #[inline(always)]
    fn narrow(x: f64) -> f32 {
        x as f32
    }
}

impl Lane for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn inverse(l: usize) -> f64 {
        1.0 / l as f64
    }
    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn per(self, n: u32) -> f64 {
        self / n as f64
    }
    #[inline(always)]
    fn narrow(x: f64) -> f64 {
        x
    }
}

/// The accumulator of a column's `L` rows, as the columns kernel folds
/// them: [`deviations`] from the first, and with an infinity or NaN among
/// them the mean is their plain mean (`±inf`, or NaN for both signs or a
/// NaN) and `M2` NaN. The plain mean is added beside the deviations where
/// [`round`] swaps the reference: so the columns kernels keep the
/// registers their blocks are tuned for (with the swap `f32`'s took 80
/// instead of 84, three blocks an SM where two ran, and lost 8-13% on the
/// H100).
#[inline(always)]
fn column_rows<A: Lane, const L: usize>(x: [A; L]) -> Welford {
    let (md, m2) = deviations([x], x[0]);
    let mean = if md.finite() {
        x[0].widen() + md.widen()
    } else {
        (super::pairwise(x, |a, b| a + b) * A::inverse(L)).widen()
    };
    Welford { count: L as f64, mean, m2: m2.widen() }
}

/// The accumulator of a round's `V` vectors of `L` lanes as one part
/// ([`Reduction::fold_vectors`]): [`deviations`] from its first element,
/// widened to `f64` once: no merge in `f64` within a round (merging each
/// vector's part by halves took three). A first element that is infinite
/// or NaN is replaced by 0 as the reference: the deviations' mean is then
/// the plain mean, `±inf` or NaN as torch's, and with any infinity or NaN
/// `M2` is NaN (`inf − inf`).
#[inline(always)]
fn round<A: Lane, const L: usize, const V: usize>(x: [[A; L]; V]) -> Welford {
    let x0 = if x[0][0].finite() { x[0][0] } else { A::ZERO };
    let (md, m2) = deviations(x, x0);
    Welford { count: (L * V) as f64, mean: x0.widen() + md.widen(), m2: m2.widen() }
}

/// The mean of the elements' deviations from `x0` and the sum of their
/// squared deviations from the mean, in the lanes' own type, where the
/// differences of nearby values are exact (the deviations from a rounded
/// mean would carry its rounding); added [`each`](super::each): lanes
/// pairwise, then the vectors.
#[inline(always)]
fn deviations<A: Lane, const L: usize, const V: usize>(x: [[A; L]; V], x0: A) -> (A, A) {
    let d = |v: usize, k: usize| x[v][k] - x0;
    let md = super::each::<A, L, V>(d, |a, b| a + b) * A::inverse(L * V);
    (md, super::each::<A, L, V>(|v, k| (d(v, k) - md) * (d(v, k) - md), |a, b| a + b))
}

/// The accumulator of a run of elements as one part
/// ([`Reduction::fold_run`]: a lane's part of a short segment's piece in
/// shared memory, `x(e)` at the positions `e = from, from + step, ...`
/// below `to`): as [`round`], the deviations from the first element (0 for
/// an infinite or NaN one) added in order in the lanes' own type, their
/// mean (divided by the count, rounded once) and the sum of the squared
/// deviations from it in a second pass; no merge in `f64`, where folding
/// the run an element at a time took one each.
#[inline(always)]
fn run<A: Lane>(from: u32, to: u32, step: u32, x: impl Fn(u32) -> A) -> Welford {
    if from >= to {
        return Welford::EMPTY;
    }
    let x0 = x(from);
    let x0 = if x0.finite() { x0 } else { A::ZERO };
    let (mut sum, mut count, mut e) = (A::ZERO, 0, from);
    while e < to {
        sum = sum + (x(e) - x0);
        count += 1;
        e += step;
    }
    let md = sum.per(count);
    let (mut m2, mut e) = (A::ZERO, from);
    while e < to {
        let d = x(e) - x0 - md;
        m2 = m2 + d * d;
        e += step;
    }
    Welford { count: count as f64, mean: x0.widen() + md.widen(), m2: m2.widen() }
}

/// The accumulator of a piece that the 32 lanes of a warp fold together
/// ([`Reduction::fold_piece`], positions `from..to`): as [`run`], the
/// deviations from its first element (0 for an infinite or NaN one) in the
/// lanes' own type, each lane adding its positions `from + l, from + l +
/// 32, ...`, the 32 lanes' sums added in `f64` by `lanes`; their mean,
/// rounded once to the lanes' type, and the sum of the squared deviations
/// from it in a second pass, added alike. No merge of the lanes' parts:
/// the warp's tree of merges took five `f64` divisions and a chain of five
/// merges a piece.
#[inline(always)]
fn piece<A: Lane>(from: u32, to: u32, x: impl Fn(u32) -> A, lanes: &impl WarpAdd) -> Welford {
    if from >= to {
        return Welford::EMPTY;
    }
    let x0 = x(from);
    let x0 = if x0.finite() { x0 } else { A::ZERO };
    // lane `l` adds its positions `from + l, from + l + 32, ...` in order
    let sum = lanes.add(|l| each_position(from.saturating_add(l), to, 32, A::ZERO, |s, e| s + (x(e) - x0)).widen());
    let count = (to - from) as f64;
    let md = sum / count;
    let mda = A::narrow(md);
    let m2 = lanes.add(|l| {
        let square = |s: A, e| {
            let d = x(e) - x0 - mda;
            s + d * d
        };
        each_position(from.saturating_add(l), to, 32, A::ZERO, square).widen()
    });
    Welford { count, mean: x0.widen() + md, m2 }
}

macro_rules! moments {
    ($($t:ident: |$x:ident| $widen:expr $(, $shared:ident $(($rows:literal))?)?;)*) => {$(
        impl Reduction<$t> for Moments {
            type Acc = Welford;
            type Out = MeanM2;
            const NAME: &'static str = "moments";
            const IDENTITY: Welford = Welford::EMPTY;
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> Welford {
                Welford::of($widen as f64)
            }
            #[inline(always)]
            fn combine(a: Welford, b: Welford) -> Welford {
                a.merge(b)
            }
            /// A vector's lanes: the `round` of one vector.
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], _: [$t; L], _: u64) -> Welford {
                round([x.map(|$x| $widen)])
            }
            /// A round's vectors as one part: `round`.
            #[inline(always)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: Welford,
                x: [[$t; L]; V],
                _: [[$t; L]; V],
                _: [u64; V],
            ) -> Welford {
                acc.merge_part(round(x.map(|v| v.map(|$x| $widen))))
            }
            /// A short run as one part: `run`.
            #[inline(always)]
            fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> ($t, $t), _: u64) -> Welford {
                run(from, to, step, |e| {
                    let $x = element(e).0;
                    $widen
                })
            }
            const PIECE_IN_PASSES: bool = true;
            const COLUMN_TREE: bool = true;
            /// A piece by a warp's lanes together in two passes: `piece`.
            #[inline(always)]
            fn fold_piece(from: u32, to: u32, element: impl Fn(u32) -> ($t, $t), _: u64, lanes: &impl WarpAdd) -> Welford {
                piece(from, to, |e| {
                    let $x = element(e).0;
                    $widen
                }, lanes)
            }
            /// A column's rows merge as one part, as a vector's lanes do.
            #[inline(always)]
            fn fold_strided<const L: usize>(acc: Welford, x: [$t; L], _: [$t; L], _: u64, _: u64) -> Welford {
                acc.merge_part(column_rows(x.map(|$x| $widen)))
            }
            $(moments!(@columns $t, $shared $(, $rows)?, |$x| $widen);)?
            #[inline(always)]
            fn finish(acc: Welford, _: u64) -> MeanM2 {
                MeanM2 { mean: if acc.count > 0.0 { acc.mean } else { f64::NAN }, m2: acc.m2 }
            }
        }
    )*};
    (@columns $t:ident, shared_weight $(, $rows:literal)?, |$x:ident| $widen:expr) => {
        $(const COLUMN_ROWS: usize = $rows;)?
        /// A thread's columns fold the same rows: one count and one weight
        /// for all of them (what each one's merge computes, the same bits),
        /// fewer registers (`f64`: 68 → 58, four blocks an SM instead of
        /// three).
        #[inline(always)]
        fn fold_columns<const L: usize>(
            mut acc: [Welford; 8],
            width: usize,
            rows: impl Fn(usize) -> ([$t; L], [$t; L]),
            _: u64,
            _: u64,
        ) -> Option<[Welford; 8]> {
            const { assert!(L > 0) };
            let (count, empty) = (acc[0].count + L as f64, acc[0].count == 0.0);
            let w = ratio(L as f64, count);
            super::each_column!(width, |k| {
                let part = column_rows(rows(k).0.map(|$x| $widen));
                acc[k] = if empty { part } else { acc[k].weighted(part, count, w) }
            });
            Some(acc)
        }
    };
}
// `f32` keeps a merge a column: at the four blocks an SM it is declared
// for, the shared weight spilled more (H200, 1 GiB matrices along their
// columns, 8-12% slower on three of four; an H100 6-12.5% slower on all
// five).
moments! {
    f32: |x| x;
    f64: |x| x, shared_weight;
    f16: |x| x.to_f32(), shared_weight(8);
    bf16: |x| x.to_f32(), shared_weight(8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round of four `f32` vectors as one part against the exact mean and
    /// `M2` (in `f64`, of the same values): near values measured from the
    /// first element keep both to a few units of `f32`'s last place at a
    /// large mean; infinities and NaN give torch's mean and a NaN `M2`, also
    /// when the first element is the infinity.
    #[test]
    fn a_round_is_one_part() {
        let mut draw = super::super::draws(5);
        for case in 0..2000 {
            let (mean, spread) = ([0.0, 1e6, -3e4][case % 3], [1.0, 1e-2, 1e3][case / 3 % 3]);
            let x: [[f32; 4]; 4] =
                core::array::from_fn(|_| core::array::from_fn(|_| (mean + spread * (2.0 * draw() - 1.0)) as f32));
            let wide = x.as_flattened().iter().map(|&v| v as f64);
            let exact_mean = wide.clone().sum::<f64>() / 16.0;
            let exact_m2 = wide.map(|v| (v - exact_mean) * (v - exact_mean)).sum::<f64>();
            let got = round(x);
            let unit = f32::EPSILON as f64 * spread;
            assert_eq!(got.count, 16.0);
            assert!((got.mean - exact_mean).abs() <= 4.0 * unit + 1e-15 * exact_mean.abs(), "{x:?}: {got:?}");
            assert!((got.m2 - exact_m2).abs() <= 64.0 * unit * spread, "{x:?}: {got:?} {exact_m2}");
        }
        let mut x = [[1.0f32; 4]; 4];
        for (at, value, mean) in
            [((0, 0), f32::INFINITY, f64::INFINITY), ((3, 1), f32::NEG_INFINITY, f64::NEG_INFINITY)]
        {
            x[at.0][at.1] = value;
            let got = round(x);
            assert!(got.mean == mean && got.m2.is_nan(), "{x:?}: {got:?}");
            x[at.0][at.1] = 1.0;
        }
        x[0][0] = f32::INFINITY;
        x[2][3] = f32::NEG_INFINITY;
        assert!(round(x).mean.is_nan());
        x[2][3] = f32::NAN;
        assert!(round(x).mean.is_nan() && round(x).m2.is_nan());
    }

    /// A run of 1 to 40 `f32` as one part against the exact mean and `M2`,
    /// as a round's: near values measured from the first element; the
    /// results of no element, of one, and of infinities and NaN as torch's.
    #[test]
    fn a_run_is_one_part() {
        let mut draw = super::super::draws(7);
        for case in 0..2000 {
            let (mean, spread) = ([0.0, 1e6, -3e4][case % 3], [1.0, 1e-2, 1e3][case / 3 % 3]);
            let len = 1 + case % 40;
            let x: Vec<f32> = (0..len).map(|_| (mean + spread * (2.0 * draw() - 1.0)) as f32).collect();
            let exact_mean = x.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
            let exact_m2 = x.iter().map(|&v| (v as f64 - exact_mean) * (v as f64 - exact_mean)).sum::<f64>();
            let got = <Moments as Reduction<f32>>::fold_run(0, len as u32, 1, |e| (x[e as usize], 0.0), 0);
            let unit = f32::EPSILON as f64 * spread;
            assert_eq!(got.count, len as f64);
            assert!((got.mean - exact_mean).abs() <= 4.0 * unit + 1e-15 * exact_mean.abs(), "{x:?}: {got:?}");
            assert!((got.m2 - exact_m2).abs() <= 4.0 * len as f64 * unit * spread, "{x:?}: {got:?} {exact_m2}");
        }
        let run = |x: &[f32]| <Moments as Reduction<f32>>::fold_run(0, x.len() as u32, 1, |e| (x[e as usize], 0.0), 0);
        assert_eq!(run(&[]), Welford::EMPTY);
        assert_eq!(run(&[2.5]), Welford::of(2.5));
        let inf = f32::INFINITY;
        assert!(run(&[inf, 1.0]).mean == f64::INFINITY && run(&[inf, 1.0]).m2.is_nan());
        assert!(run(&[1.0, -inf]).mean == f64::NEG_INFINITY && run(&[1.0, -inf]).m2.is_nan());
        assert!(run(&[inf, -inf]).mean.is_nan() && run(&[1.0, f32::NAN]).m2.is_nan());
    }

    /// A piece of 65 to 2048 `f32` that a warp's 32 lanes fold together,
    /// in two passes, against the exact mean and `M2`, as a run's; the
    /// results of infinities and NaN anywhere in it as torch's; and the
    /// lanes' positions: a piece that starts past 0 is the same piece.
    #[test]
    fn a_piece_is_one_part() {
        use super::super::fixed_order::TwinWarp;
        let piece = |x: &[f32], from: u32| {
            <Moments as Reduction<f32>>::fold_piece(from, x.len() as u32, |e| (x[e as usize], 0.0), 0, &TwinWarp)
        };
        let mut draw = super::super::draws(9);
        for case in 0..600 {
            let (mean, spread) = ([0.0, 1e6, -3e4][case % 3], [1.0, 1e-2, 1e3][case / 3 % 3]);
            let len = 65 + (case * 37) % 1984;
            let x: Vec<f32> = (0..len).map(|_| (mean + spread * (2.0 * draw() - 1.0)) as f32).collect();
            let exact_mean = x.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
            let exact_m2 = x.iter().map(|&v| (v as f64 - exact_mean) * (v as f64 - exact_mean)).sum::<f64>();
            let got = piece(&x, 0);
            let unit = f32::EPSILON as f64 * spread;
            assert_eq!(got.count, len as f64);
            assert!((got.mean - exact_mean).abs() <= 4.0 * unit + 1e-15 * exact_mean.abs(), "{len}: {got:?}");
            assert!((got.m2 - exact_m2).abs() <= 64.0 * len as f64 * unit * spread, "{len}: {got:?} {exact_m2}");
            let mut shifted = vec![f32::NAN; 7];
            shifted.extend_from_slice(&x);
            assert_eq!(piece(&shifted, 7), got);
        }
        let (inf, mut x) = (f32::INFINITY, vec![1.0f32; 100]);
        assert_eq!(piece(&x, 0), Welford { count: 100.0, mean: 1.0, m2: 0.0 });
        for at in [0, 37, 99] {
            x[at] = inf;
            assert!(piece(&x, 0).mean == f64::INFINITY && piece(&x, 0).m2.is_nan(), "+inf at {at}");
            x[at] = -inf;
            assert!(piece(&x, 0).mean == f64::NEG_INFINITY && piece(&x, 0).m2.is_nan(), "-inf at {at}");
            x[(at + 50) % 100] = inf;
            assert!(piece(&x, 0).mean.is_nan() && piece(&x, 0).m2.is_nan(), "both at {at}");
            x[(at + 50) % 100] = 1.0;
            x[at] = f32::NAN;
            assert!(piece(&x, 0).mean.is_nan() && piece(&x, 0).m2.is_nan(), "NaN at {at}");
            x[at] = 1.0;
        }
        assert_eq!(piece(&[], 0), Welford::EMPTY);
    }
}
