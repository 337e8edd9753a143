//! The smallest and the largest element in one pass, `torch.aminmax`: both
//! by the rules of [`Min`] and [`Max`] (NaN propagates to both, `-0.0 <
//! +0.0`), for every element type; the half types compare in `f32` and
//! return the element. No elements have no result, as in torch (the host
//! refuses them).
//!
//! [`Extremes`] finds a vector's smallest and largest lanes by those rules
//! (for `f32`, the plain float `min`/`max` instructions; for the half
//! types, on sm_80 and later, their packed forms, two lanes an instruction),
//! and the extreme operations take it for their `map_lanes`
//! ([`map_by_extremes`]).

use super::{Bits, Max, Min, Reduction, fold_each, map_pairwise, pairwise};
use crate::half::{bf16, f16};

/// A smallest and a largest value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct MinMax<V> {
    /// The smallest.
    pub min: V,
    /// The largest.
    pub max: V,
}

// SAFETY: `#[repr(C)]` of two equal `Bits` values of 2 to 8 bytes: no
// padding, every bit pattern is a value.
unsafe impl<V: Bits> Bits for MinMax<V> {}

/// Shuffled as `min`'s words, then `max`'s.
#[cfg(target_arch = "nvptx64")]
impl<V: crate::prim::Shuffle> crate::prim::Shuffle for MinMax<V> {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        MinMax { min: self.min.shuffle_words(&f), max: self.max.shuffle_words(&f) }
    }
}

/// Element types whose vectors' extremes have a shortcut.
pub trait Extremes: Copy {
    /// What the extremes are given as: the type itself, `f32` for the
    /// half types (the accumulator of their extreme operations).
    type Wide: Copy;

    /// The smallest and the largest of `lanes` (`L` a power of two) by the
    /// rules of [`Min`] and [`Max`] (`-0.0 < +0.0`), each `None` where the
    /// shortcut cannot tell it: a lane is NaN, the extreme is a zero (of
    /// which sign?), or the type takes the definition (`f64`: its vectors
    /// hold two lanes, one `combine`). An operation that needs one of the
    /// two reads only that one, and the other is not computed.
    fn extremes<const L: usize>(lanes: [Self; L]) -> MinMax<Option<Self::Wide>>;

    /// The same for a run of elements `at(e)`, `e = from, from + step, ...`
    /// below `to` (at least one): the plain `min`/`max` of each element in
    /// turn, `None` where they cannot tell (a NaN, a zero extreme).
    fn run_extremes(from: u32, to: u32, step: u32, at: impl Fn(u32) -> Self) -> MinMax<Option<Self::Wide>>;
}

/// [`Extremes::run_extremes`] of the values `at(e)`, in `min` and `max`;
/// `told(v)` whether an extreme `v` is the rules' own (not a zero of
/// floats, whose sign the plain instructions may lose).
#[inline(always)]
#[allow(clippy::eq_op)]
fn run_by<W: Copy + PartialEq>(
    (from, to, step): (u32, u32, u32),
    at: impl Fn(u32) -> W,
    min: impl Fn(W, W) -> W,
    max: impl Fn(W, W) -> W,
    told: impl Fn(W) -> bool,
) -> MinMax<Option<W>> {
    let first = at(from);
    let (mut lo, mut hi, mut nan) = (first, first, first != first);
    let mut e = from + step;
    while e < to {
        let w = at(e);
        (lo, hi, nan) = (min(lo, w), max(hi, w), nan | (w != w));
        e += step;
    }
    let keep = |v: W| (!nan && told(v)).then_some(v);
    MinMax { min: keep(lo), max: keep(hi) }
}

/// A lane's plain `min.f32`/`max.f32`, one instruction each, where the
/// `combine` of floats is several. Those skip a NaN and may pick either
/// zero of `-0.0` and `+0.0`, so a vector with a NaN, or whose extreme is a
/// zero, takes the definition: one rare path, so that the compiler does
/// not compute the definition's pieces beside the shortcut for every vector.
///
/// ```
/// use gpu::op::range::Extremes;
/// let m = f32::extremes([-1.0, -0.0, 0.0, -2.5]);
/// assert_eq!((m.min, m.max), (Some(-2.5), None)); // the largest is a zero
/// assert_eq!(f32::extremes([-0.0, 3.0]).min, None);
/// assert_eq!(f32::extremes([1.0, -f32::NAN, 2.0, 3.0]).max, None);
/// ```
impl Extremes for f32 {
    type Wide = f32;
    #[inline(always)]
    #[allow(clippy::eq_op, clippy::needless_range_loop)]
    fn extremes<const L: usize>(lanes: [f32; L]) -> MinMax<Option<f32>> {
        // indexed: an array's by-value iterator lands in local memory
        let mut nan = false;
        for k in 0..L {
            nan |= lanes[k] != lanes[k];
        }
        let (lo, hi) = (pairwise(lanes, f32::min), pairwise(lanes, f32::max));
        MinMax { min: (!nan && lo != 0.0).then_some(lo), max: (!nan && hi != 0.0).then_some(hi) }
    }
    #[inline(always)]
    fn run_extremes(from: u32, to: u32, step: u32, at: impl Fn(u32) -> f32) -> MinMax<Option<f32>> {
        run_by((from, to, step), at, f32::min, f32::max, |v| v != 0.0)
    }
}

impl Extremes for f64 {
    type Wide = f64;
    #[inline(always)]
    fn extremes<const L: usize>(_: [f64; L]) -> MinMax<Option<f64>> {
        MinMax { min: None, max: None }
    }
    /// A run is longer than a vector's two lanes: `f32`'s shortcut.
    #[inline(always)]
    fn run_extremes(from: u32, to: u32, step: u32, at: impl Fn(u32) -> f64) -> MinMax<Option<f64>> {
        run_by((from, to, step), at, f64::min, f64::max, |v| v != 0.0)
    }
}

/// Integers: their own `min` and `max`, the definition itself.
macro_rules! int_extremes {
    ($($t:ident)*) => {$(
        impl Extremes for $t {
            type Wide = $t;
            #[inline(always)]
            fn extremes<const L: usize>(lanes: [$t; L]) -> MinMax<Option<$t>> {
                MinMax { min: Some(pairwise(lanes, Ord::min)), max: Some(pairwise(lanes, Ord::max)) }
            }
            #[inline(always)]
            fn run_extremes(from: u32, to: u32, step: u32, at: impl Fn(u32) -> $t) -> MinMax<Option<$t>> {
                run_by((from, to, step), at, Ord::min, Ord::max, |_| true)
            }
        }
    )*};
}
int_extremes!(i32 u32 i64 u64);

/// The packed instruction `$ptx` of two 32-bit words, each two half-type lanes.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
macro_rules! packed {
    ($ptx:literal, $a:expr, $b:expr) => {{
        let r: u32;
        // SAFETY: arithmetic on registers only.
        unsafe {
            core::arch::asm!(concat!($ptx, " {r}, {a}, {b};"), r = out(reg32) r, a = in(reg32) $a, b = in(reg32) $b,
                options(pure, nomem, nostack))
        };
        r
    }};
}
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
use packed;

/// `op` (a packed instruction) over `lanes` (`L` even) as they lie in
/// 32-bit words, lane `2k` in word `k`'s low half: the words combined
/// pairwise, then the last word with its halves swapped, so that its low
/// half holds `op` of every lane.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[inline(always)]
fn packed_fold<H: Copy, const L: usize>(lanes: [H; L], bits: impl Fn(H) -> u16, op: impl Fn(u32, u32) -> u32) -> u32 {
    let w = packed_words(lanes, bits, &op);
    op(w, w.rotate_right(16))
}

/// [`packed_fold`] before its last step: one word, whose two halves
/// together hold `op` of every lane.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn packed_words<H: Copy, const L: usize>(lanes: [H; L], bits: impl Fn(H) -> u16, op: impl Fn(u32, u32) -> u32) -> u32 {
    // indexed: an array's by-value iterator lands in local memory
    let mut w = [0u32; L];
    for k in 0..L / 2 {
        w[k] = bits(lanes[2 * k]) as u32 | (bits(lanes[2 * k + 1]) as u32) << 16;
    }
    let mut width = L / 2;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            w[k] = op(w[2 * k], w[2 * k + 1]);
        }
    }
    w[0]
}

/// The largest lane of a round of half-type vectors as `f32`, NaN if any
/// lane is NaN, by packed comparisons (`max.NaN.bf16x2`, two lanes an
/// instruction: a vector's eight lanes to one word in three, the round's
/// words to one, its halves in one more), where widening and comparing
/// each lane in `f32` and testing it for NaN takes about three an element.
/// `None` where the card has no packed form (before sm_80), and for `f32`
/// and `f64`, which have none.
pub trait RoundPeak<A>: Copy {
    /// The round's largest lane in `A`, or NaN; `None` without a packed form.
    #[inline(always)]
    fn round_peak<const L: usize, const V: usize>(_: [[Self; L]; V]) -> Option<A> {
        None
    }
}

impl RoundPeak<f32> for f32 {}
impl RoundPeak<f64> for f64 {}

macro_rules! round_peak {
    ($($h:ident: $max:literal;)*) => {$(
        impl RoundPeak<f32> for $h {
            #[inline(always)]
            #[allow(unused_variables)]
            fn round_peak<const L: usize, const V: usize>(x: [[$h; L]; V]) -> Option<f32> {
                #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
                if L >= 2 && V >= 1 {
                    let op = |a: u32, b: u32| -> u32 { packed!($max, a, b) };
                    let w = super::each::<u32, 1, V>(|v, _| packed_words(x[v], $h::to_bits, op), op);
                    return Some($h::from_bits(op(w, w.rotate_right(16)) as u16).to_f32());
                }
                None
            }
        }
    )*};
}
round_peak! {
    bf16: "max.NaN.bf16x2";
    f16: "max.NaN.f16x2";
}

/// The half types: on cards of sm_80 and later, a vector's lanes compared
/// two at a time as they lie in its 32-bit words (`max.NaN.bf16x2`, ...:
/// three instructions take a vector's eight lanes to two, a swap of the
/// last word's halves and one more to one, where widening each lane and
/// comparing it in `f32` takes about three an element; a bf16 max reads at
/// 1% more speed on an H200, docs/src/performance/tuning-operations.md). The packed
/// forms keep a NaN (`.NaN`), so one look at the result finds a NaN lane,
/// and a zero extreme takes the definition, as in `f32`. Elsewhere the
/// lanes are widened to `f32` and take `f32`'s shortcut. Either way, the
/// extremes as `f32`.
macro_rules! half_extremes {
    ($($h:ident: $min:literal, $max:literal;)*) => {$(
        impl Extremes for $h {
            type Wide = f32;
            #[inline(always)]
            fn extremes<const L: usize>(lanes: [$h; L]) -> MinMax<Option<f32>> {
                #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
                if L >= 2 {
                    let fold = |op: fn(u32, u32) -> u32| {
                        // the low half of the last word
                        $h::from_bits(packed_fold(lanes, $h::to_bits, op) as u16).to_f32()
                    };
                    let (lo, hi) = (fold(|a, b| packed!($min, a, b)), fold(|a, b| packed!($max, a, b)));
                    #[allow(clippy::eq_op)]
                    let keep = |v: f32| (v == v && v != 0.0).then_some(v);
                    return MinMax { min: keep(lo), max: keep(hi) };
                }
                f32::extremes(core::array::from_fn::<f32, L, _>(|k| lanes[k].to_f32()))
            }
            /// Widened to `f32` an element, as they are combined.
            #[inline(always)]
            fn run_extremes(from: u32, to: u32, step: u32, at: impl Fn(u32) -> $h) -> MinMax<Option<f32>> {
                f32::run_extremes(from, to, step, |e| at(e).to_f32())
            }
        }
    )*};
}
half_extremes! {
    bf16: "min.NaN.bf16x2", "max.NaN.bf16x2";
    f16: "min.NaN.f16x2", "max.NaN.f16x2";
}

/// `R`'s `map_lanes` through the extremes of the lanes as `lane` maps
/// them (in their own type: the value or its magnitude): `pick(extremes)`
/// where it gives an accumulator, else the definition ([`map_pairwise`]).
/// The same accumulator, where `R` keeps one of the lanes by [`Min`]'s or
/// [`Max`]'s rules when none is NaN (min, max, `aminmax`, the NaN-skipping
/// ones, the ∞-norms).
#[inline(always)]
pub fn map_by_extremes<R: Reduction<T> + ?Sized, T: Extremes, const L: usize>(
    x: [T; L],
    y: [T; L],
    first: u64,
    lane: impl Fn(T) -> T,
    pick: impl Fn(MinMax<Option<T::Wide>>) -> Option<R::Acc>,
) -> R::Acc {
    match pick(T::extremes(core::array::from_fn::<T, L, _>(|k| lane(x[k])))) {
        Some(acc) => acc,
        None => map_pairwise::<R, T, L>(x, y, first),
    }
}

/// `R`'s `fold_run` through the extremes of the run's elements as `lane`
/// maps them ([`Extremes::run_extremes`]): `pick(extremes)` where it gives
/// an accumulator, else the definition ([`fold_each`]). The same
/// accumulator, as [`map_by_extremes`] gives a vector's.
#[inline(always)]
pub fn fold_run_by_extremes<R: Reduction<T> + ?Sized, T: Extremes>(
    (from, to, step): (u32, u32, u32),
    element: impl Fn(u32) -> (T, T),
    first: u64,
    lane: impl Fn(T) -> T,
    pick: impl Fn(MinMax<Option<T::Wide>>) -> Option<R::Acc>,
) -> R::Acc {
    if from >= to {
        return R::IDENTITY;
    }
    match pick(T::run_extremes(from, to, step, |e| lane(element(e).0))) {
        Some(acc) => acc,
        None => fold_each::<R, T>(from, to, step, element, first),
    }
}

/// `map_lanes` and `fold_run` of an extreme operation on `$t` through its [`Extremes`]:
/// `$lane` maps an element to what is compared (itself or its magnitude),
/// `$pick` makes the accumulator of the extremes. (A round's vectors stay combined pairwise: their extremes
/// at once took more registers and were slower, docs/src/performance/
/// what-did-not-help.md.) `by_extremes!(@run ...)` gives `fold_run` alone,
/// for the operations whose vectors keep their own `map_lanes`.
macro_rules! by_extremes {
    ($t:ty, |$x:ident| $lane:expr, |$m:ident| $pick:expr) => {
        /// The lanes' [`Extremes`](crate::op::range::Extremes) where they
        /// tell the result, the definition where they do not (a NaN lane,
        /// a zero extreme).
        #[inline(always)]
        fn map_lanes<const L: usize>(x: [$t; L], y: [$t; L], first: u64) -> Self::Acc {
            $crate::op::range::map_by_extremes::<Self, $t, L>(x, y, first, |$x: $t| $lane, |$m| $pick)
        }
        $crate::op::range::by_extremes!(@run $t, |$x| $lane, |$m| $pick);
    };
    (@run $t:ty, |$x:ident| $lane:expr, |$m:ident| $pick:expr) => {
        /// A run's [`Extremes`](crate::op::range::Extremes) where they tell
        /// the result, one `combine` an element where they do not.
        #[inline(always)]
        fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> ($t, $t), first: u64) -> Self::Acc {
            $crate::op::range::fold_run_by_extremes::<Self, $t>(
                (from, to, step),
                element,
                first,
                |$x: $t| $lane,
                |$m| $pick,
            )
        }
    };
}
pub(crate) use by_extremes;

/// The smallest and the largest element.
///
/// ```
/// use gpu::op::{AMinMax, MinMax, Reduction};
/// let r = [3i32, -1, 7].iter().fold(<AMinMax as Reduction<i32>>::IDENTITY, |a, &x| {
///     <AMinMax as Reduction<i32>>::combine(a, <AMinMax as Reduction<i32>>::map(x, x, 0))
/// });
/// assert_eq!(r, MinMax { min: -1, max: 7 });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AMinMax;

macro_rules! aminmax {
    ($($t:ident in $a:ident: |$x:ident| $widen:expr, |$v:ident| $narrow:expr;)*) => {$(
        impl Reduction<$t> for AMinMax {
            type Acc = MinMax<$a>;
            type Out = MinMax<$t>;
            const NAME: &'static str = "aminmax";
            const NEEDS_AN_ELEMENT: bool = true;
            const IDENTITY: MinMax<$a> =
                MinMax { min: <Min as Reduction<$a>>::IDENTITY, max: <Max as Reduction<$a>>::IDENTITY };
            #[inline(always)]
            fn map($x: $t, _: $t, _: u64) -> MinMax<$a> {
                let w: $a = $widen;
                MinMax { min: w, max: w }
            }
            #[inline(always)]
            fn combine(a: MinMax<$a>, b: MinMax<$a>) -> MinMax<$a> {
                MinMax { min: <Min as Reduction<$a>>::combine(a.min, b.min), max: <Max as Reduction<$a>>::combine(a.max, b.max) }
            }
            by_extremes!($t, |x| x, |m| Some(MinMax { min: m.min?, max: m.max? }));
            #[inline(always)]
            fn finish(acc: MinMax<$a>, _: u64) -> MinMax<$t> {
                let narrow = |$v: $a| -> $t { $narrow };
                MinMax { min: narrow(acc.min), max: narrow(acc.max) }
            }
        }
    )*};
}
aminmax! {
    i32 in i32: |x| x, |v| v;
    u32 in u32: |x| x, |v| v;
    i64 in i64: |x| x, |v| v;
    u64 in u64: |x| x, |v| v;
    f32 in f32: |x| x, |v| v;
    f64 in f64: |x| x, |v| v;
    f16 in f32: |x| x.to_f32(), |v| f16::from_f32(v);
    bf16 in f32: |x| x.to_f32(), |v| bf16::from_f32(v);
}

#[cfg(test)]
mod tests {
    use super::super::{NanMax, NanMin, NormInf, NormNegInf};
    use super::*;

    /// Runs of four values each: with and without a NaN or a zero extreme.
    fn runs_as_their_elements<R: Reduction<T>, T: Copy + core::fmt::Debug>(
        values: &[T],
        bits: impl Fn(R::Acc) -> [u64; 2],
    ) {
        crate::op::runs_as_their_elements::<R, T, 4>(values, 4000, bits)
    }

    /// `map_lanes` against its definition (`map_pairwise`) on every
    /// vector of `L` lanes drawn from `values` (the first five lanes in
    /// every combination, the rest pseudo-random): the same bits.
    fn same_as_pairwise<R: Reduction<T>, T: Copy + core::fmt::Debug, const L: usize>(
        values: &[T],
        bits: impl Fn(R::Acc) -> [u64; 2],
    ) {
        let mut lanes = [values[0]; L];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for d in 0..values.len().pow(5) {
            for (k, lane) in lanes.iter_mut().enumerate() {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = if k < 5 { d / values.len().pow(k as u32) } else { (seed >> 33) as usize };
                *lane = values[i % values.len()];
            }
            let want = bits(map_pairwise::<R, T, L>(lanes, lanes, 0));
            assert_eq!(bits(R::map_lanes(lanes, lanes, 0)), want, "{} of {lanes:?}", R::NAME);
        }
    }

    /// Every extreme operation of `T`, as the kernels give it `L` lanes,
    /// and over runs.
    fn extremes_of<T: Copy + core::fmt::Debug, const L: usize>(values: &[T])
    where
        Min: Reduction<T, Acc = f32>,
        Max: Reduction<T, Acc = f32>,
        NanMin: Reduction<T, Acc = f32>,
        NanMax: Reduction<T, Acc = f32>,
        NormInf: Reduction<T, Acc = f32>,
        NormNegInf: Reduction<T, Acc = f32>,
        AMinMax: Reduction<T, Acc = MinMax<f32>>,
    {
        let one = |v: f32| [v.to_bits() as u64, 0];
        same_as_pairwise::<Min, T, L>(values, one);
        same_as_pairwise::<Max, T, L>(values, one);
        same_as_pairwise::<NanMin, T, L>(values, one);
        same_as_pairwise::<NanMax, T, L>(values, one);
        same_as_pairwise::<NormInf, T, L>(values, one);
        same_as_pairwise::<NormNegInf, T, L>(values, one);
        same_as_pairwise::<AMinMax, T, L>(values, |m| [m.min.to_bits() as u64, m.max.to_bits() as u64]);
        runs_as_their_elements::<Min, T>(values, one);
        runs_as_their_elements::<Max, T>(values, one);
        runs_as_their_elements::<NanMin, T>(values, one);
        runs_as_their_elements::<NanMax, T>(values, one);
        runs_as_their_elements::<NormInf, T>(values, one);
        runs_as_their_elements::<NormNegInf, T>(values, one);
        runs_as_their_elements::<AMinMax, T>(values, |m| [m.min.to_bits() as u64, m.max.to_bits() as u64]);
    }

    #[test]
    fn a_run_s_extremes_give_its_elements_result() {
        // f32 and the half types: with their vectors, below
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40, f32::MAX];
        let d = f.map(f64::from);
        runs_as_their_elements::<AMinMax, f64>(&d, |m| [m.min.to_bits(), m.max.to_bits()]);
        runs_as_their_elements::<NormInf, f64>(&d, |v| [v.to_bits(), 0]);
        // the plain min and max of f64, whose vectors keep the pairwise tree
        runs_as_their_elements::<Min, f64>(&d, |v| [v.to_bits(), 0]);
        runs_as_their_elements::<Max, f64>(&d, |v| [v.to_bits(), 0]);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        runs_as_their_elements::<AMinMax, i32>(&i, |m| [m.min as u64, m.max as u64]);
        runs_as_their_elements::<AMinMax, u64>(&[0, 3, u64::MAX], |m| [m.min, m.max]);
    }

    #[test]
    fn the_extremes_give_the_pairwise_result() {
        // NaN of both signs, signed zeros, infinities, subnormals, the largest
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40, f32::MAX];
        let h = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-6, -1e-6, 65504.0];
        // the kernels' lanes: eight of a half type, four of f32
        extremes_of::<bf16, 8>(&f.map(bf16::from_f32));
        extremes_of::<f16, 8>(&h.map(f16::from_f32));
        extremes_of::<f32, 4>(&f);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        same_as_pairwise::<AMinMax, i32, 4>(&i, |m| [m.min as u64, m.max as u64]);
        same_as_pairwise::<AMinMax, u64, 2>(&[0, 3, u64::MAX], |m| [m.min, m.max]);
        let d = f.map(f64::from);
        same_as_pairwise::<AMinMax, f64, 2>(&d, |m| [m.min.to_bits(), m.max.to_bits()]);
    }
}
