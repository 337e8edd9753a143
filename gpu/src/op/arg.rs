//! Arg-min and arg-max: the extreme element and its index, with torch's
//! rules (`torch.argmax`, `torch.max(dim)`):
//! * ties go to the **first** index (`-0.0` and `+0.0` are equal);
//! * for floats any NaN wins, and the first NaN's index is returned;
//! * `n = 0` has no answer: the host refuses it before launching.
//!
//! The accumulator is an [`Arg`]: the value (widened to `f32` for the half
//! types) and its `u64` index. `combine` picks by (NaN first, then the
//! better value, then the lower index): a total order, so the result does
//! not depend on how a kernel groups the elements.

use super::{Bits, Reduction, fold_pairwise, map_pairwise, pairwise};
use crate::half::{bf16, f16};

/// `f(e)` for the positions `e = from, from + step, ...` below `to`, in
/// that order (`step` at least 1): an arg-min/max run's loop. With `FOUR`
/// (a type's line in `arg_ops!` ends with it), four positions a pass, so
/// that the floats' branches of "does this element beat the best" (a
/// NaN's rule among them) are made selections four elements at a time:
/// H200, bf16 arg-max over the staged segments, Zipf's lengths 812 → 625
/// µs, uniform 0..32 593 → 451, `f32` 761 → 647 and 591 → 503 (the raw
/// output: docs/results/h200/segments.txt). The integers, whose
/// comparison is one selection already, take them one at a time (four:
/// `i32` up to 2% slower), and so does `f64` (four: Zipf's lengths 780 →
/// 894 µs); so does every other operation's run (four: up to 8% slower,
/// docs/src/performance/what-did-not-help.md).
///
/// ```
/// let mut seen = Vec::new();
/// gpu::op::arg::each_at::<true>(3, 20, 2, |e| seen.push(e));
/// assert_eq!(seen, [3, 5, 7, 9, 11, 13, 15, 17, 19]);
/// let mut again = Vec::new();
/// gpu::op::arg::each_at::<false>(3, 20, 2, |e| again.push(e));
/// assert_eq!(again, seen);
/// gpu::op::arg::each_at::<true>(7, 7, 1, |_| unreachable!());
/// ```
#[inline(always)]
pub fn each_at<const FOUR: bool>(from: u32, to: u32, step: u32, mut f: impl FnMut(u32)) {
    if !FOUR {
        let mut e = from;
        while e < to {
            f(e);
            e += step;
        }
        return;
    }
    if from >= to {
        return;
    }
    let step = step.max(1);
    let (mut e, mut left) = (from, (to - from - 1) / step + 1);
    while left >= 4 {
        // SAFETY: `e + 3·step` is a position below `to`, so none of these
        // sums overflows; said so, the four loads share one address and
        // constant offsets
        let at = |k: u32| unsafe { e.unchecked_add(step.unchecked_mul(k)) };
        f(e);
        f(at(1));
        f(at(2));
        f(at(3));
        (e, left) = (e.wrapping_add(step.wrapping_mul(4)), left - 4);
    }
    while left > 0 {
        f(e);
        (e, left) = (e.wrapping_add(step), left - 1);
    }
}

/// A value and the index where it was found.
///
/// ```
/// use gpu::op::{Arg, ArgMax, Reduction};
/// let a = Arg { value: 2.0f32, index: 7 };
/// let b = Arg { value: 2.0f32, index: 3 };
/// assert_eq!(<ArgMax as Reduction<f32>>::combine(a, b).index, 3); // ties: the first index
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Arg<V> {
    /// The element.
    pub value: V,
    /// Its position in the input (in the row or segment, for those).
    pub index: u64,
}

// SAFETY: `#[repr(C)]` of a `Bits` value of at most 8 bytes and a `u64`:
// 16 bytes (8 for the value, padded), any bit pattern is a value.
unsafe impl<V: Bits> Bits for Arg<V> {}

/// Shuffled as the value's words, then the index's.
#[cfg(target_arch = "nvptx64")]
impl<V: crate::prim::Shuffle> crate::prim::Shuffle for Arg<V> {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        Arg { value: self.value.shuffle_words(&f), index: self.index.shuffle_words(&f) }
    }
}

/// The index of the smallest element (the first one, on ties; the first NaN,
/// if any) and its value.
///
/// ```
/// use gpu::op::{Arg, ArgMin, Reduction};
/// let serial = |x: &[f32]| x.iter().enumerate().fold(<ArgMin as Reduction<f32>>::IDENTITY, |a, (i, &v)| {
///     <ArgMin as Reduction<f32>>::combine(a, <ArgMin as Reduction<f32>>::map(v, v, i as u64))
/// });
/// assert_eq!(serial(&[3.0, -1.0, 5.0, -1.0]).index, 1);
/// assert_eq!(serial(&[3.0, f32::NAN, -9.0, f32::NAN]).index, 1);
/// assert_eq!(serial(&[0.0, -0.0]).index, 0); // equal: the first
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMin;

/// The index of the largest element (the first one, on ties; the first NaN,
/// if any) and its value.
///
/// ```
/// use gpu::half::bf16;
/// use gpu::op::{ArgMax, Reduction};
/// let x = [bf16::from_f32(1.5), bf16::from_f32(4.0), bf16::from_f32(4.0)];
/// let acc = (0..3).fold(<ArgMax as Reduction<bf16>>::IDENTITY, |a, i| {
///     <ArgMax as Reduction<bf16>>::combine(a, <ArgMax as Reduction<bf16>>::map(x[i], x[i], i as u64))
/// });
/// let best = <ArgMax as Reduction<bf16>>::finish(acc, 3);
/// assert_eq!((best.value, best.index), (bf16::from_f32(4.0), 1));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgMax;

/// Whether `a` should be kept over `b` when looking for the maximum
/// (`MAX`) or the minimum: NaN first, then the better value, then the lower
/// index. `x != x` is the NaN test (false for integers).
#[inline(always)]
#[allow(clippy::eq_op)]
fn keeps<V: PartialOrd + Copy, const MAX: bool>(a: Arg<V>, b: Arg<V>) -> bool {
    let (a_nan, b_nan) = (a.value != a.value, b.value != b.value);
    if a_nan || b_nan {
        return a_nan && (!b_nan || a.index < b.index);
    }
    let better = if MAX { a.value > b.value } else { a.value < b.value };
    let worse = if MAX { a.value < b.value } else { a.value > b.value };
    better || (!worse && a.index < b.index)
}

/// Whether `b`, found after `a`, replaces it as the maximum (`MAX`) or the
/// minimum: a NaN over a number, else a strictly better value (so the first
/// of equal values stays). The order of [`keeps`] for lanes met in index
/// order (a pair of lanes, the left one first).
#[inline(always)]
#[allow(clippy::eq_op)]
fn beats<V: PartialOrd + Copy, const MAX: bool>(b: V, a: V) -> bool {
    let better = if MAX { b > a } else { b < a };
    better || (b != b && a == a)
}

/// `impl Reduction<$t>` for arg-min and arg-max: the accumulator value is
/// `$v` (`$t` itself, or `f32` for the half types), converted by `$to`
/// and back by `$from`.
macro_rules! arg_ops {
    ($($t:ident : $v:ident, $min:expr, $max:expr, |$x:ident| $to:expr, |$a:ident| $from:expr, $four:literal;)*) => {$(
        arg_ops!(@one ArgMin "argmin", false, $t, $v, $max, |$x| $to, |$a| $from, $four);
        arg_ops!(@one ArgMax "argmax", true, $t, $v, $min, |$x| $to, |$a| $from, $four);
    )*};
    (@one $Op:ident $name:literal, $max:literal, $t:ident, $v:ident, $worst:expr, |$x:ident| $to:expr, |$a:ident| $from:expr, $four:literal) => {
        impl Reduction<$t> for $Op {
            type Acc = Arg<$v>;
            type Out = Arg<$t>;
            const NAME: &'static str = $name;
            const NEEDS_AN_ELEMENT: bool = true;
            /// The worst value at an index past any input: every element beats it.
            const IDENTITY: Arg<$v> = Arg { value: $worst, index: u64::MAX };
            #[inline(always)]
            fn map($x: $t, _: $t, i: u64) -> Arg<$v> {
                Arg { value: $to, index: i }
            }
            #[inline(always)]
            fn combine(a: Arg<$v>, b: Arg<$v>) -> Arg<$v> {
                if keeps::<$v, $max>(a, b) { a } else { b }
            }
            /// The lanes of a vector come in index order, and the tree of
            /// [`pairwise`] keeps them so (left before right): a pair needs
            /// no index comparison (`beats`), and a lane carries a 32-bit
            /// lane number, made an index once. The same `Arg`. Taken for
            /// vectors of eight lanes (the half types), where it measured
            /// faster; for four or two it changed the resident grid and did
            /// not (docs/src/performance/tuning-operations.md, "Arg-max of half types").
            #[inline(always)]
            fn map_lanes<const L: usize>(x: [$t; L], y: [$t; L], first: u64) -> Arg<$v> {
                if L < 8 {
                    return map_pairwise::<Self, $t, L>(x, y, first);
                }
                let to = |$x: $t| -> $v { $to };
                let lanes: [($v, u32); L] = core::array::from_fn(|k| (to(x[k]), k as u32));
                let (value, lane) = pairwise(lanes, |a, b| if beats::<$v, $max>(b.0, a.0) { b } else { a });
                Arg { value, index: first + lane as u64 }
            }
            /// A round of four- or eight-lane vectors, one vector after
            /// the other: the lanes' best value, found without indices
            /// (`max`/`min`), is compared with `acc`'s, and only a vector
            /// that wins is searched for its first lane of that value; a
            /// vector with a NaN lane takes `map_lanes`. Every element of
            /// `acc` comes first, so an equal value keeps `acc`. The same
            /// `Arg` as the pairwise tree, for a fraction of its
            /// comparisons and selections where the best rarely changes:
            /// H200, 2^28, bf16 183.0 → 126.7 µs, f32 249.1 → 244.4
            /// (docs/src/performance/tuning-operations.md, "Arg-min/max: a vector that
            /// cannot win"). Two-lane vectors keep the tree.
            #[inline(always)]
            #[allow(clippy::eq_op)]
            fn fold_vectors<const L: usize, const V: usize>(
                acc: Arg<$v>,
                x: [[$t; L]; V],
                y: [[$t; L]; V],
                first: [u64; V],
            ) -> Arg<$v> {
                if L < 4 {
                    return fold_pairwise::<Self, $t, L, V>(acc, x, y, first);
                }
                let to = |$x: $t| -> $v { $to };
                let one = |acc: Arg<$v>, v: usize| {
                    let lanes: [$v; L] = core::array::from_fn(|k| to(x[v][k]));
                    let nan = lanes.iter().fold(false, |n, &l| n | (l != l));
                    let top = pairwise(lanes, |a, b| if $max { a.max(b) } else { a.min(b) });
                    if nan {
                        <Self as Reduction<$t>>::combine(acc, <Self as Reduction<$t>>::map_lanes(x[v], y[v], first[v]))
                    } else if (if $max { top > acc.value } else { top < acc.value }) | (acc.index == u64::MAX) {
                        let mut best = (lanes[L - 1], L as u32 - 1);
                        for k in (0..L - 1).rev() {
                            if lanes[k] == top {
                                best = (lanes[k], k as u32);
                            }
                        }
                        Arg { value: best.0, index: first[v] + best.1 as u64 }
                    } else {
                        acc
                    }
                };
                // the vectors by constant index (a loop over them kept the
                // round in local memory)
                match V {
                    1 => one(acc, 0),
                    4 => one(one(one(one(acc, 0), 1), 2), 3),
                    _ => (0..V).fold(acc, one),
                }
            }
            /// A run met in index order: a later element replaces the best
            /// only where it beats it (`beats`), so no index is compared, and the
            /// best's place is a 32-bit position in the run, made an index
            /// once; the floats' four positions a pass (`each_at`). The
            /// same `Arg` as one `combine` an element.
            #[inline(always)]
            fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> ($t, $t), first: u64) -> Arg<$v> {
                if from >= to {
                    return <Self as Reduction<$t>>::IDENTITY;
                }
                let to_v = |$x: $t| -> $v { $to };
                let (mut best, mut at) = (to_v(element(from).0), from);
                $crate::op::arg::each_at::<$four>(from.saturating_add(step), to, step, |e| {
                    let x = to_v(element(e).0);
                    if beats::<$v, $max>(x, best) {
                        (best, at) = (x, e);
                    }
                });
                Arg { value: best, index: first + (at - from) as u64 }
            }
            #[inline(always)]
            fn finish($a: Arg<$v>, _: u64) -> Arg<$t> {
                Arg { value: $from, index: $a.index }
            }
        }
    };
}
arg_ops! {
    i32: i32, i32::MIN, i32::MAX, |x| x, |a| a.value, false;
    u32: u32, u32::MIN, u32::MAX, |x| x, |a| a.value, false;
    i64: i64, i64::MIN, i64::MAX, |x| x, |a| a.value, false;
    u64: u64, u64::MIN, u64::MAX, |x| x, |a| a.value, false;
    f32: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x, |a| a.value, true;
    f64: f64, f64::NEG_INFINITY, f64::INFINITY, |x| x, |a| a.value, false;
    f16: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x.to_f32(), |a| f16::from_f32(a.value), true;
    bf16: f32, f32::NEG_INFINITY, f32::INFINITY, |x| x.to_f32(), |a| bf16::from_f32(a.value), true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `map_lanes` against its definition (`map_pairwise`) on every vector
    /// of eight lanes drawn from `values` (NaN, signed zeros, infinities,
    /// ties; the first five lanes in every combination): the same value
    /// bits and index.
    fn same_as_pairwise<T: Copy + core::fmt::Debug, R: Reduction<T, Acc = Arg<V>>, V: Bits>(
        values: &[T],
        bits: impl Fn(V) -> u64,
    ) {
        let mut lanes = [values[0]; 8];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for d in 0..values.len().pow(5) {
            for (k, lane) in lanes.iter_mut().enumerate() {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = if k < 5 { d / values.len().pow(k as u32) } else { (seed >> 33) as usize };
                *lane = values[i % values.len()];
            }
            let first = 1000 * d as u64;
            let want = map_pairwise::<R, T, 8>(lanes, lanes, first);
            let got = R::map_lanes(lanes, lanes, first);
            assert_eq!((bits(got.value), got.index), (bits(want.value), want.index), "{lanes:?}");
        }
    }

    /// `fold_vectors` against its definition (`fold_pairwise`): rounds of
    /// four `L`-lane vectors drawn from `values`, folded one after the
    /// other from the identity, give the same value bits and index after
    /// every round; also one vector at a time (a thread's last vectors).
    fn folds_as_pairwise<T: Copy + core::fmt::Debug, R: Reduction<T, Acc = Arg<V>>, V: Bits, const L: usize>(
        values: &[T],
        to_bits: impl Fn(V) -> u64,
    ) {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let bits = |a: Arg<V>| (to_bits(a.value), a.index);
        for trial in 0..4000 {
            // few distinct values in a trial, so that ties and wins are common
            let pool: [T; 3] = core::array::from_fn(|_| values[draw(values.len())]);
            let (mut got, mut want) = (R::IDENTITY, R::IDENTITY);
            for round in 0..4u64 {
                let x: [[T; L]; 4] = core::array::from_fn(|_| core::array::from_fn(|_| pool[draw(3)]));
                let first = [0, 1, 2, 3].map(|v| 64 * (4 * round + v) + L as u64 * (trial % 3));
                if trial % 2 == 0 {
                    got = R::fold_vectors(got, x, x, first);
                } else {
                    for v in 0..4 {
                        got = R::fold_vectors(got, [x[v]], [x[v]], [first[v]]);
                    }
                }
                want = fold_pairwise::<R, T, L, 4>(want, x, x, first);
                assert_eq!(bits(got), bits(want), "{x:?}");
            }
        }
    }

    #[test]
    fn the_round_shortcut_gives_the_pairwise_result() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.5, 3.0, -7.25];
        let fb = |v: f32| v.to_bits() as u64;
        folds_as_pairwise::<bf16, ArgMax, f32, 8>(&f.map(bf16::from_f32), fb);
        folds_as_pairwise::<bf16, ArgMin, f32, 8>(&f.map(bf16::from_f32), fb);
        folds_as_pairwise::<f16, ArgMax, f32, 8>(&f.map(f16::from_f32), fb);
        folds_as_pairwise::<f16, ArgMin, f32, 8>(&f.map(f16::from_f32), fb);
        folds_as_pairwise::<f32, ArgMax, f32, 4>(&f, fb);
        folds_as_pairwise::<f32, ArgMin, f32, 4>(&f, fb);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        folds_as_pairwise::<i32, ArgMax, i32, 4>(&i, |v| v as u64);
        folds_as_pairwise::<i32, ArgMin, i32, 4>(&i, |v| v as u64);
        folds_as_pairwise::<u32, ArgMax, u32, 4>(&[0, 3, 3, u32::MAX], |v| v as u64);
        // two lanes take the definition itself
        folds_as_pairwise::<f64, ArgMax, f64, 2>(&f.map(f64::from), f64::to_bits);
    }

    #[test]
    fn the_lanes_shortcut_gives_the_pairwise_result() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.5];
        let fb = |v: f32| v.to_bits() as u64;
        same_as_pairwise::<bf16, ArgMax, f32>(&f.map(bf16::from_f32), fb);
        same_as_pairwise::<bf16, ArgMin, f32>(&f.map(bf16::from_f32), fb);
        same_as_pairwise::<f16, ArgMax, f32>(&f.map(f16::from_f32), fb);
        same_as_pairwise::<f16, ArgMin, f32>(&f.map(f16::from_f32), fb);
        // the kernels give these types four or two lanes (the definition);
        // eight here check the shortcut's order for every kind of value
        same_as_pairwise::<f32, ArgMax, f32>(&f, fb);
        same_as_pairwise::<f64, ArgMin, f64>(&f.map(f64::from), f64::to_bits);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        same_as_pairwise::<i32, ArgMax, i32>(&i, |v| v as u64);
        same_as_pairwise::<i32, ArgMin, i32>(&i, |v| v as u64);
        same_as_pairwise::<u64, ArgMax, u64>(&[0, 3, 3, u64::MAX], |v| v);
    }

    /// Runs of three values each: ties, NaN and signed zeros common.
    fn runs_fold_as_their_elements<T: Copy + core::fmt::Debug, R: Reduction<T, Acc = Arg<V>>, V: Bits>(
        values: &[T],
        to_bits: impl Fn(V) -> u64,
    ) {
        crate::op::runs_as_their_elements::<R, T, 3>(values, 20_000, |a| [to_bits(a.value), a.index])
    }

    #[test]
    fn a_run_folds_as_its_elements_do() {
        let f = [0.0, -0.0, 1.5, -2.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3.0];
        let fb = |v: f32| v.to_bits() as u64;
        runs_fold_as_their_elements::<f32, ArgMax, f32>(&f, fb);
        runs_fold_as_their_elements::<f32, ArgMin, f32>(&f, fb);
        runs_fold_as_their_elements::<bf16, ArgMax, f32>(&f.map(bf16::from_f32), fb);
        runs_fold_as_their_elements::<f16, ArgMin, f32>(&f.map(f16::from_f32), fb);
        runs_fold_as_their_elements::<f64, ArgMax, f64>(&f.map(f64::from), f64::to_bits);
        let i = [0, -1, 7, 7, i32::MIN, i32::MAX];
        runs_fold_as_their_elements::<i32, ArgMax, i32>(&i, |v| v as u64);
        runs_fold_as_their_elements::<i32, ArgMin, i32>(&i, |v| v as u64);
        runs_fold_as_their_elements::<u64, ArgMin, u64>(&[0, 3, 3, u64::MAX], |v| v);
    }
}
