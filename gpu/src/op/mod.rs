//! What the kernels reduce: element types and operations, written once.
//!
//! An operation ([`Reduction`]) is CUB's `TransformReduce` and cubek's
//! `ReduceInstruction` in one trait: each element (or pair of elements, for
//! a dot product) is *mapped* to an accumulator, accumulators are *combined*
//! starting from an `IDENTITY`, and the final accumulator is *finished* into
//! the output:
//!
//! ```text
//! out = finish(combine(… combine(IDENTITY, map(x₀, y₀, 0)), …, map(xₙ₋₁, yₙ₋₁, n-1)), n)
//! ```
//!
//! | operation | accumulator | output | module |
//! |---|---|---|---|
//! | [`Sum`], [`Min`], [`Max`] | the element (`f32` for the half types) | the element (`f32` for half sums) | [`fold`] |
//! | [`ArgMin`], [`ArgMax`] | value and index | [`Arg`]: value and `u64` index | [`arg`] |
//! | [`Dot`], [`SumSquares`], [`Norm`], [`Mean`] | `f32` (`f64` for `f64`) | the same | [`transform`] |
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
//! Kernels regroup and reorder the fold freely, so every operation obeys:
//! * identity: `combine(IDENTITY, a) == a` (lanes past `n` hold `IDENTITY`);
//! * associativity: `combine(a, combine(b, c)) == combine(combine(a, b), c)`;
//! * commutativity: `combine(a, b) == combine(b, a)`.
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

pub mod arg;
pub mod exact;
pub mod fixed_order;
pub mod fold;
pub mod transform;

#[allow(unused_imports)] // named by the `with_all_types!` expansion below
use crate::half::{bf16, f16};

pub use arg::{Arg, ArgMax, ArgMin};
pub use fold::{Max, Min, Sum};
pub use transform::{Dot, Mean, Norm, SumSquares};

/// An element type the kernels are instantiated for: a type of the list
/// ([`TypeName`](crate::names::TypeName): its name and run-time value).
pub trait Element: crate::names::TypeName + Copy + PartialEq + core::fmt::Debug + Send + Sync + 'static {}

macro_rules! elements {
    (; $($V:ident $t:ident),*) => {
        $(impl Element for $t {})*
    };
}
with_all_types!(elements!());

/// Types whose every bit pattern is a valid value (integers, floats, and
/// `#[repr(C)]` structs of them): what a kernel writes into an accumulator or
/// output buffer can be read back as one, whatever the kernel did.
///
/// # Safety
/// Every `size_of::<Self>()` bytes must be a valid `Self`, and
/// `size_of::<Self>()` at most 16 (the host reads outputs through a 16-byte
/// slot; the single-pass kernel keeps 32 accumulators in shared memory and
/// also needs an accumulator's size to be a multiple of 4, which it checks
/// when it is compiled).
pub unsafe trait Bits: Copy + Send + Sync + 'static {}

macro_rules! bits {
    ($($t:ty)*) => {$(
        // SAFETY: a number of 2 to 8 bytes: every bit pattern is a value.
        unsafe impl Bits for $t {}
    )*};
}
bits!(i32 u32 i64 u64 f32 f64 crate::half::f16 crate::half::bf16);

/// An operation that reduces elements of `T`: map, combine, finish (see the
/// module docs for the laws).
///
/// ```
/// use gpu::op::{ArgMax, Dot, Reduction, Sum};
/// // the serial definition of every operation, as the host's tests use it:
/// fn serial<R: Reduction<T>, T: Copy>(x: &[T], y: &[T]) -> R::Out {
///     let acc = (0..x.len()).fold(R::IDENTITY, |a, i| R::combine(a, R::map(x[i], y[i], i as u64)));
///     R::finish(acc, x.len() as u64)
/// }
/// let x = [1.0f32, 3.0, 3.0, -2.0];
/// assert_eq!(serial::<Sum, f32>(&x, &x), 5.0);
/// assert_eq!(serial::<Dot, f32>(&x, &x), 23.0);
/// let best = serial::<ArgMax, f32>(&x, &x);
/// assert_eq!((best.value, best.index), (3.0, 1)); // the first of the ties
/// ```
pub trait Reduction<T> {
    /// What partial results are (≤ 16 bytes; see [`Bits`]).
    type Acc: Bits;
    /// What the reduction returns.
    type Out: Bits;
    /// The operation's name in PTX entry names: `single_pass_b256_{NAME}_f32`.
    const NAME: &'static str;
    /// How many input arrays it reads: 1, or 2 for a dot product.
    const INPUTS: u32 = 1;
    /// Whether no elements have no result (arg-min/max: there is no index
    /// to return); the host refuses them. Otherwise the result of no
    /// elements is `finish(IDENTITY, 0)`.
    const NEEDS_AN_ELEMENT: bool = false;
    /// The neutral accumulator: `combine(IDENTITY, a) == a` for every `a`.
    const IDENTITY: Self::Acc;
    /// Element `i`: `x[i]` (and `y[i]` when `INPUTS == 2`; else `y == x`).
    fn map(x: T, y: T, i: u64) -> Self::Acc;
    /// Combine two partial results.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The accumulator of one 16-byte vector's lanes, as the kernels load
    /// them: lane `k` is element `first + k` (`x[k]`, and `y[k]` when
    /// `INPUTS == 2`). By default each lane is mapped and the results are
    /// combined [`pairwise`]; an operation may give a cheaper way to the
    /// same accumulator (arg-min/max: [`arg`]).
    #[inline(always)]
    fn map_lanes<const L: usize>(x: [T; L], y: [T; L], first: u64) -> Self::Acc
    where
        T: Copy,
    {
        map_pairwise::<Self, T, L>(x, y, first)
    }
    /// The output from the accumulator of all `n` elements (`n` may be 0).
    fn finish(acc: Self::Acc, n: u64) -> Self::Out;
}

/// `x[0]`, …, `x[L-1]` combined pairwise, the tree of a 16-byte vector's
/// lanes (`L` a power of two): `f(f(x₀, x₁), f(x₂, x₃))` for four.
///
/// ```
/// assert_eq!(gpu::op::pairwise([1, 2, 3, 4], |a, b| 2 * a + b), 2 * (2 * 1 + 2) + (2 * 3 + 4));
/// ```
#[inline(always)]
pub fn pairwise<A: Copy, const L: usize>(mut x: [A; L], f: impl Fn(A, A) -> A) -> A {
    const { assert!(L.is_power_of_two()) };
    let mut width = L;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            x[k] = f(x[2 * k], x[2 * k + 1]);
        }
    }
    x[0]
}

/// The definition of [`Reduction::map_lanes`]: lane `k` mapped as element
/// `first + k`, the results combined [`pairwise`].
#[inline(always)]
pub fn map_pairwise<R: Reduction<T> + ?Sized, T: Copy, const L: usize>(x: [T; L], y: [T; L], first: u64) -> R::Acc {
    let lanes: [R::Acc; L] = core::array::from_fn(|k| R::map(x[k], y[k], first + k as u64));
    pairwise(lanes, R::combine)
}

/// A plain operator (CUB's binary functor): a [`Reduction`] whose
/// accumulator and output are the element itself. Not a trait of its own
/// to implement: every such `Reduction` is one. The teaching kernels take
/// these.
///
/// ```
/// use gpu::op::{ReduceOp, Reduction, Sum};
/// fn plain<O: ReduceOp<i32>>(a: i32, b: i32) -> i32 {
///     O::combine(a, b)
/// }
/// assert_eq!(plain::<Sum>(i32::MAX, 1), i32::MIN); // wraps
/// ```
pub trait ReduceOp<T>: Reduction<T, Acc = T, Out = T> {}
impl<R: Reduction<T, Acc = T, Out = T> + ?Sized, T> ReduceOp<T> for R {}
