//! What the kernels reduce: element types and operations, written once.
//!
//! Each operation is a [`Reduction`], the device library's open trait
//! (`reduction_device::op`): every element is *mapped* to an accumulator,
//! accumulators are *combined* from an `IDENTITY` in any grouping and
//! order, and the final one is *finished* into the output.
//!
//! | operation | accumulator | output | module |
//! |---|---|---|---|
//! | [`Sum`], [`Min`], [`Max`], [`Prod`] | the element (`f32` for the half types) | the element (`f32` for half sums and products) | [`fold`] |
//! | [`All`], [`Any`], [`CountNonzero`] | `u32`, `u32`, `u64` | the same: `1` or `0`, a count | [`logical`] |
//! | [`AMinMax`] | [`MinMax`] of the element (`f32` for the half types) | [`MinMax`] of the element | [`range`] |
//! | [`NanSum`], [`NanMean`], [`NanMin`], [`NanMax`] | as `Sum`, a [`SumCount`], as `Min`, `Max` | as `Sum`, `Mean`, the element | [`nan`] |
//! | [`LogSumExp`] | [`MaxSum`]: running maximum and rescaled sum, `f32` (`f64` for `f64`) | the accumulator's float | [`logsumexp`] |
//! | [`PortableLogSumExp`] (the shaped kernels' `gpu_to_gpu` logsumexp of `f32`) | [`MaxSum`] of `f32` | `f32` | [`logsumexp`] |
//! | [`Moments`] (`var`, `std`, `var_mean`, `std_mean`) | [`Welford`]: count, mean, `M2` in `f64` | [`MeanM2`]: mean and `M2` in `f64` | [`moments`] |
//! | [`ArgMin`], [`ArgMax`] | value and index | [`Arg`]: value and `u64` index | [`arg`] |
//! | [`Dot`], [`SumSquares`], [`Norm`], [`Mean`], [`Norm1`], [`NormInf`], [`NormNegInf`] | `f32` (`f64` for `f64`) | the same | [`transform`] |
//! | [`PowerSum`] (the p-norm's sum of powers, `p` set at run time) | `f32` (`f64` for `f64`) | the same | [`power`] |
//! | [`exact::DdSum`] (the accurate `f64` sum) | [`exact::DoubleDouble`] | `f64` | [`exact`] |
//!
//! The reproducible (`gpu_to_gpu`) kernel runs the float sums in the order
//! of [`fixed_order`], which its CPU twin repeats; the accurate `f32` sum
//! adds into the integer superaccumulator of [`exact`].
//!
//! The default kernel (`kernels/single_pass.rs`) takes any `Reduction`, so
//! no kernel is written per operation; a user's own operation is one more
//! `impl` in their own crate (`examples/custom-op`). The teaching kernels
//! keep Harris's simple form: a [`ReduceOp`], whose accumulator and output
//! are the element itself.
//!
//! # Laws
//! Every operation obeys the laws of [`Reduction`] (identity,
//! associativity, commutativity), as the kernels regroup the fold freely.
//!
//! Integer sums wrap on overflow, like CUDA's `int` arithmetic: they are
//! exact modulo 2^bits, so the laws hold exactly. Floating-point addition is
//! not associative: a tree sum differs from the serial sum by rounding (the
//! host tests bound the difference), and NaN and infinities behave as IEEE 754
//! says (`inf + -inf` is NaN; NaN in, NaN out). Arg-min/max break ties by the
//! index, so they obey the laws exactly.
//!
//! # Floating-point `min` and `max`
//! They follow IEEE 754-2019 `minimum`/`maximum` (what `torch.min` does):
//! * NaN propagates: if any element is NaN, the result is NaN;
//! * `-0.0` is smaller than `+0.0`: `min(-0.0, +0.0) == -0.0` and
//!   `max(-0.0, +0.0) == +0.0`, whatever the order of the inputs.
//!
//! So the result does not depend on the order in which a kernel visits the
//! elements.

/// `body` for each column `k` below `width` (at most 8, a constant), written
/// out: LLVM keeps per-column accumulators and loaded lanes in registers only when
/// every index is a constant, and it does not unroll a loop whose body is
/// large (`logsumexp`'s), leaving them in local memory.
macro_rules! each_column {
    ($width:expr, |$k:ident| $body:expr) => {
        each_column!(@ $width, $k, $body; 0 1 2 3 4 5 6 7)
    };
    (@ $width:expr, $k:ident, $body:expr; $($i:literal)*) => {$(
        if $i < $width {
            let $k: usize = $i;
            $body;
        }
    )*};
}
pub(crate) use each_column;

/// A pseudo-random generator for the unit tests: uniform in `[0, 1)`, from
/// the high bits of a 64-bit linear congruential sequence.
#[cfg(test)]
pub(crate) fn draws(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `R::fold_run` against one `combine` an element ([`fold_each`]) on
/// `cases` runs of up to 40 elements, each drawn from `P` of `values` (few,
/// so that ties, NaN and zero extremes are common and runs without them
/// too), from the first or second element, a step of 1 to 3, the run
/// `0`, `7` or `2^40` elements into its segment: the same bits.
#[cfg(test)]
pub(crate) fn runs_as_their_elements<R: Reduction<T>, T: Copy + core::fmt::Debug, const P: usize>(
    values: &[T],
    cases: u32,
    bits: impl Fn(R::Acc) -> [u64; 2],
) {
    let mut draw = draws(31);
    let mut pick = |n: usize| (draw() * n as f64) as usize % n;
    for case in 0..cases {
        let pool: [T; P] = core::array::from_fn(|_| values[pick(values.len())]);
        let x: Vec<T> = (0..case % 41).map(|_| pool[pick(P)]).collect();
        let (from, step, to) = (case / 41 % 2, 1 + case % 3, x.len() as u32);
        let first = [0, 7, 1 << 40][case as usize % 3];
        let element = |e: u32| (x[e as usize], x[e as usize]);
        let want = bits(fold_each::<R, T>(from, to, step, element, first));
        let got = bits(R::fold_run(from, to, step, element, first));
        assert_eq!(got, want, "{} of {x:?} from {from} step {step} first {first}", R::NAME);
    }
}

/// `R::fold_vectors` and `R::map_lanes` against their definitions
/// (each lane mapped, the lanes and then the vectors combined pairwise) on
/// `cases` chains of three rounds of four `L`-lane vectors, each drawn
/// from `P` of `values`, folded a round at a time or a vector at a time
/// (a thread's last vectors): the same bits after every round.
#[cfg(test)]
pub(crate) fn rounds_as_their_elements<R: Reduction<T>, T: Copy + core::fmt::Debug, const L: usize, const P: usize>(
    values: &[T],
    cases: u32,
    bits: impl Fn(R::Acc) -> [u64; 2],
) {
    let mut draw = draws(47);
    let mut pick = |n: usize| (draw() * n as f64) as usize % n;
    for case in 0..cases {
        let pool: [T; P] = core::array::from_fn(|_| values[pick(values.len())]);
        let (mut got, mut want) = (R::IDENTITY, R::IDENTITY);
        for round in 0..3u64 {
            let x: [[T; L]; 4] = core::array::from_fn(|_| core::array::from_fn(|_| pool[pick(P)]));
            let first = [0, 1, 2, 3].map(|v| (4 * round + v) * L as u64);
            let lanes = |v: usize| map_pairwise::<R, T, L>(x[v], x[v], first[v]);
            if case % 2 == 0 {
                got = R::fold_vectors(got, x, x, first);
                want = R::combine(want, pairwise_of::<_, 4>(lanes, R::combine));
            } else {
                for v in 0..4 {
                    got = R::fold_vectors(got, [x[v]], [x[v]], [first[v]]);
                    want = R::combine(want, lanes(v));
                }
            }
            assert_eq!(bits(got), bits(want), "{} of {x:?}", R::NAME);
            assert_eq!(bits(R::map_lanes(x[0], x[0], first[0])), bits(lanes(0)), "{} of {:?}", R::NAME, x[0]);
        }
    }
}

/// A round's count of elements, made of 32-bit additions, as the `u64` of
/// the accumulators. Widened where LLVM cannot see it: otherwise it widens
/// the additions themselves (a count's zero-extension moved to its
/// operands), and on the GPU each 64-bit addition is two instructions, a
/// 64-bit selection two more (`count_nonzero` of a bf16 round: six
/// instructions an element where three do).
#[inline(always)]
pub(crate) fn widened(count: u32) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let c: u32;
        // SAFETY: a register copy; no memory, no side effect.
        unsafe {
            core::arch::asm!("mov.b32 {c}, {x};", c = out(reg32) c, x = in(reg32) count, options(pure, nomem, nostack))
        };
        c as u64
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        count as u64
    }
}

/// `f(v, k)` of each lane `k` of each vector `v` of a round, combined with
/// `g`: the lanes [`pairwise`], then the vectors.
#[inline(always)]
pub(crate) fn each<B: Copy, const L: usize, const V: usize>(
    f: impl Fn(usize, usize) -> B,
    g: impl Fn(B, B) -> B + Copy,
) -> B {
    pairwise(core::array::from_fn::<B, V, _>(|v| pairwise(core::array::from_fn::<B, L, _>(|k| f(v, k)), g)), g)
}

pub mod approx;
pub mod arg;
pub mod exact;
pub mod fixed_order;
pub mod fold;
pub mod logical;
pub mod logsumexp;
pub mod moments;
pub mod nan;
pub mod power;
pub mod range;
pub mod transform;

pub use arg::{Arg, ArgMax, ArgMin};
pub use fold::{Max, Min, Prod, Sum};
pub use logical::{All, Any, CountNonzero};
pub use logsumexp::{ExpLn, LogSumExp, MaxSum, PortableLogSumExp};
pub use moments::{MeanM2, Moments, Welford};
pub use nan::{NanMax, NanMean, NanMeanParts, NanMin, NanSum, SumCount};
pub use power::PowerSum;
pub use range::{AMinMax, MinMax};
pub use transform::{Dot, Mean, Norm, Norm1, NormInf, NormNegInf, SumSquares};

/// The traits every operation implements, from the device library: a
/// user's own operation implements the same ones in its own crate.
pub use reduction_device::op::{
    Bits, Element, ReduceOp, Reduction, WarpAdd, each_position, fold_each, fold_pairwise, map_pairwise, pairwise,
    pairwise_of,
};
