//! What a kernel reduces: element types and operations, as open traits.
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
//! All three traits are open: a crate of your own implements [`Element`]
//! for its element type (a complex number), [`Bits`] for its accumulator (a
//! `(min, max)` pair) and [`Reduction`] for its operation, and the warp,
//! block and grid reductions of this crate take them as they take `f32`.
//!
//! # Laws
//! Kernels regroup and reorder the fold freely, so every operation obeys:
//! * identity: `combine(IDENTITY, a) == a` (lanes past `n` hold `IDENTITY`);
//! * associativity: `combine(a, combine(b, c)) == combine(combine(a, b), c)`;
//! * commutativity: `combine(a, b) == combine(b, a)`.
//!
//! Floating-point addition is not associative: a tree sum differs from the
//! serial sum by rounding, which the caller bounds; an operation that must
//! not depend on the order says how it orders its fold.

use crate::half::{bf16, f16};

/// An element type a kernel reads: any plain value with a name. The
/// primitive numbers and the half types have it; a type of your own (a
/// `#[repr(C)]` complex number) implements it with its name.
///
/// ```
/// use reduction_device::op::Element;
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Complex { re: f32, im: f32 }
/// impl Element for Complex {
///     const NAME: &'static str = "c32";
/// }
/// assert_eq!((<f32 as Element>::NAME, Complex::NAME), ("f32", "c32"));
/// ```
pub trait Element: Copy + PartialEq + core::fmt::Debug + Send + Sync + 'static {
    /// The type's name in PTX entry names (`single_pass_b256_sum_f32`).
    const NAME: &'static str;
}

macro_rules! elements {
    ($($t:ident)*) => {$(
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
elements!(i32 u32 i64 u64 f32 f64 f16 bf16);

/// Types whose every bit pattern is a valid value (integers, floats, and
/// `#[repr(C)]` structs of them): what a kernel writes into an accumulator or
/// output buffer can be read back as one, whatever the kernel did.
///
/// # Safety
/// Every `size_of::<Self>()` bytes must be a valid `Self`. The library's
/// kernels also need an output of at most 16 bytes (the host reads it
/// through a 16-byte slot) and an accumulator of at most 32 bytes, a
/// multiple of 4 (the single-pass kernel keeps 32 of them in shared
/// memory; it checks both when it is compiled).
pub unsafe trait Bits: Copy + Send + Sync + 'static {}

macro_rules! bits {
    ($($t:ty)*) => {$(
        // SAFETY: a number of 2 to 8 bytes: every bit pattern is a value.
        unsafe impl Bits for $t {}
    )*};
}
bits!(i32 u32 i64 u64 f32 f64 f16 bf16);

/// An operation that reduces elements of `T`: map, combine, finish (see the
/// module docs for the laws).
///
///
/// ```
/// use reduction_device::op::Reduction;
/// /// The sum of squares of `f32`s, accumulated in `f64`.
/// struct SquaresF64;
/// impl Reduction<f32> for SquaresF64 {
///     type Acc = f64;
///     type Out = f64;
///     const NAME: &'static str = "squares_f64";
///     const IDENTITY: f64 = 0.0;
///     fn map(x: f32, _: f32, _: u64) -> f64 { x as f64 * x as f64 }
///     fn combine(a: f64, b: f64) -> f64 { a + b }
///     fn finish(acc: f64, _: u64) -> f64 { acc }
/// }
/// // the serial definition of every operation, as the host's tests use it:
/// fn serial<R: Reduction<T>, T: Copy>(x: &[T], y: &[T]) -> R::Out {
///     let acc = (0..x.len()).fold(R::IDENTITY, |a, i| R::combine(a, R::map(x[i], y[i], i as u64)));
///     R::finish(acc, x.len() as u64)
/// }
/// let x = [1.0f32, 3.0, 3.0, -2.0];
/// assert_eq!(serial::<SquaresF64, f32>(&x, &x), 23.0);
/// ```
pub trait Reduction<T> {
    /// What partial results are (≤ 32 bytes; see [`Bits`]).
    type Acc: Bits;
    /// What the reduction returns (≤ 16 bytes; see [`Bits`]).
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
    /// same accumulator (the library's arg-min/max, `gpu::op::arg`).
    #[inline(always)]
    fn map_lanes<const L: usize>(x: [T; L], y: [T; L], first: u64) -> Self::Acc
    where
        T: Copy,
    {
        map_pairwise::<Self, T, L>(x, y, first)
    }
    /// `acc` with `V` vectors folded in (a thread's round of loads): vector
    /// `v`'s lane `k` is element `first[v] + k` (`x[v][k]`, and `y[v][k]`),
    /// and every element of `acc` comes before all of them. By default the
    /// vectors' [`map_lanes`](Self::map_lanes) are combined [`pairwise`] and
    /// the result with `acc` ([`fold_pairwise`]): for four,
    /// `combine(acc, combine(combine(m₀, m₁), combine(m₂, m₃)))`. An
    /// operation may give a cheaper way to the same accumulator (the
    /// library's arg-min/max skip a vector that cannot win), or to one of
    /// the same elements rounded otherwise (the library's logsumexp takes
    /// the round's maximum first and one exponential an element). The CPU
    /// twin of the reproducible kernels folds each round through it too.
    #[inline(always)]
    fn fold_vectors<const L: usize, const V: usize>(
        acc: Self::Acc,
        x: [[T; L]; V],
        y: [[T; L]; V],
        first: [u64; V],
    ) -> Self::Acc
    where
        T: Copy,
    {
        fold_pairwise::<Self, T, L, V>(acc, x, y, first)
    }
    /// `acc` with `L` more elements folded in, in order: element `k` is
    /// `x[k]` (and `y[k]`) at index `first + k·step` (a column's rows, as
    /// the column kernel loads them). By default one `combine` each,
    /// `combine(…combine(acc, map(x₀, y₀, first))…)`; an operation may merge
    /// the `L` as one part first (the variance: one merge for all of them).
    #[inline(always)]
    fn fold_strided<const L: usize>(acc: Self::Acc, x: [T; L], y: [T; L], first: u64, step: u64) -> Self::Acc
    where
        T: Copy,
    {
        let mut acc = acc;
        let mut k = 0;
        while k < L {
            acc = Self::combine(acc, Self::map(x[k], y[k], first + k as u64 * step));
            k += 1;
        }
        acc
    }
    /// `acc[k]` with column `k`'s `L` rows folded in, for each `k` below
    /// `width` (at most 8), as each one's [`fold_strided`](Self::fold_strided)
    /// would: `rows(k)` gives them (and their partners), row `j` at index
    /// `first + j·step`. These are a thread's columns in the column kernel,
    /// which fold the same rows, so every `acc[k]` holds as many elements,
    /// and an operation may share what depends on the count alone (the
    /// variance: one weight for all of them, the same bits). By default
    /// `None`: the kernel folds each column itself.
    #[inline(always)]
    fn fold_columns<const L: usize>(
        acc: [Self::Acc; 8],
        width: usize,
        rows: impl Fn(usize) -> ([T; L], [T; L]),
        first: u64,
        step: u64,
    ) -> Option<[Self::Acc; 8]>
    where
        T: Copy,
    {
        let _ = (acc, width, rows, first, step);
        None
    }
    /// Rows of a column that a thread of the columns kernel loads together
    /// and folds as one group ([`fold_columns`](Self::fold_columns), else
    /// [`fold_strided`](Self::fold_strided), with `L` this): 4 or 8. By
    /// default 4; 8 where a group's own cost (the variance's merge) is
    /// larger than its elements'.
    const COLUMN_ROWS: usize = 4;
    /// Whether a column block's row lanes meet as a tree where it has many
    /// of them (`gpu::shape::Columns::row_tree`) rather than in a chain
    /// from lane 0's part: for merges that cost far more than an add (the
    /// variance's in `f64`, logsumexp's with its exponentials). By default
    /// `false`.
    const COLUMN_TREE: bool = false;
    /// The accumulator of a short run of elements, from `IDENTITY`: the
    /// positions `e = from, from + step, ...` below `to`, element
    /// `element(e)` (`x`, and `y`) at index `first + (e − from)` (a lane's
    /// part of a segment's piece in shared memory, `segments_staged`). By
    /// default one `combine` each, in order; an operation may measure the
    /// run as one part (the variance its deviations from the first
    /// element, logsumexp its maximum first: no merge an element; the
    /// arg-min/max and extreme operations compare without merging). The
    /// CPU twin of the reproducible kernels folds each such run through it
    /// too.
    #[inline(always)]
    fn fold_run(from: u32, to: u32, step: u32, element: impl Fn(u32) -> (T, T), first: u64) -> Self::Acc {
        fold_each::<Self, T>(from, to, step, element, first)
    }
    /// Whether a piece that the 32 lanes of a warp fold together (a
    /// segment's piece in shared memory too long for one lane,
    /// `segments_staged`) is measured by [`fold_piece`](Self::fold_piece).
    /// By default (`false`) lane `l` folds its positions `from + l, from +
    /// l + 32, ...` as one run ([`fold_run`](Self::fold_run)) and the warp's
    /// tree combines the 32 runs.
    const PIECE_IN_PASSES: bool = false;
    /// The accumulator of a piece that the 32 lanes of a warp fold
    /// together, where [`PIECE_IN_PASSES`](Self::PIECE_IN_PASSES): the
    /// positions `from..to` (at least one), element `element(e)` at index
    /// `first + (e − from)`, measured in passes over them, in each of which
    /// every lane takes its positions `from + l, from + l + 32, ...` and
    /// [`WarpAdd::add`] adds the 32 lanes' values (the variance: the
    /// deviations' mean, then the squared deviations from it; no merge of
    /// the lanes' parts). The result is the same in every lane. Unused
    /// otherwise: by default `IDENTITY`.
    #[inline(always)]
    fn fold_piece(from: u32, to: u32, element: impl Fn(u32) -> (T, T), first: u64, lanes: &impl WarpAdd) -> Self::Acc {
        let _ = (from, to, element, first, lanes);
        Self::IDENTITY
    }
    /// The output from the accumulator of all `n` elements (`n` may be 0).
    fn finish(acc: Self::Acc, n: u64) -> Self::Out;
}

/// The 32 lanes of a warp, to add one value of each
/// ([`Reduction::fold_piece`]): on the GPU the lanes themselves, through
/// shuffles (`warp_reduce::Warp`); on the CPU a twin that runs the 32 in
/// turn and adds them in the same tree.
///
/// ```
/// use reduction_device::op::WarpAdd;
/// /// The 32 lanes on the CPU, added in the warp's tree (offsets 16, 8, 4, 2, 1).
/// struct Twin;
/// impl WarpAdd for Twin {
///     fn add(&self, value: impl Fn(u32) -> f64) -> f64 {
///         let mut v: [f64; 32] = core::array::from_fn(|l| value(l as u32));
///         for offset in [16, 8, 4, 2, 1] {
///             for l in 0..offset {
///                 v[l] += v[l + offset];
///             }
///         }
///         v[0]
///     }
/// }
/// assert_eq!(Twin.add(|l| l as f64), 496.0);
/// ```
pub trait WarpAdd {
    /// `value(l)` of every lane `l` (0 to 31), added in the warp's tree
    /// (`warp_reduce`'s pairs, offset 16 first): the same total in every
    /// lane.
    fn add(&self, value: impl Fn(u32) -> f64) -> f64;
}

/// [`Reduction::fold_run`]'s default, one `combine` an element in order:
/// for an operation's own `fold_run` to fall back on.
///
/// ```
/// use reduction_device::op::{Reduction, fold_each};
/// struct Sum;
/// impl Reduction<f64> for Sum {
///     type Acc = f64;
///     type Out = f64;
///     const NAME: &'static str = "sum";
///     const IDENTITY: f64 = 0.0;
///     fn map(x: f64, _: f64, _: u64) -> f64 { x }
///     fn combine(a: f64, b: f64) -> f64 { a + b }
///     fn finish(acc: f64, _: u64) -> f64 { acc }
/// }
/// let x = [1.0, 2.0, 4.0, 8.0, 16.0];
/// assert_eq!(fold_each::<Sum, f64>(1, 5, 2, |e| (x[e as usize], 0.0), 0), 2.0 + 8.0);
/// // every position, in order, four at a time or one at a time, up to the
/// // end of `u32`
/// let fold = |from, to, step| fold_each::<Sum, f64>(from, to, step, |e| (f64::from(e % 1000), 0.0), 0);
/// let each = |from: u32, to: u32, step: u32| (from..to).step_by(step as usize).map(|e| f64::from(e % 1000)).sum();
/// for (from, to, step) in [(0, 0, 1), (3, 4, 1), (1, 18, 1), (1, 18, 5), (0, 1000, 32), (u32::MAX - 40, u32::MAX, 1), (u32::MAX - 40, u32::MAX, 3), (u32::MAX - 100, u32::MAX - 12, 3), (5, 2, 1), (u32::MAX, 5, 2)] {
///     assert_eq!(fold(from, to, step), each(from, to, step));
/// }
/// ```
#[inline(always)]
pub fn fold_each<R: Reduction<T> + ?Sized, T>(
    from: u32,
    to: u32,
    step: u32,
    element: impl Fn(u32) -> (T, T),
    first: u64,
) -> R::Acc {
    each_position(from, to, step, R::IDENTITY, |acc, e| {
        let (x, y) = element(e);
        R::combine(acc, R::map(x, y, first + (e - from) as u64))
    })
}

/// `f(acc, e)` for the positions `e = from, from + step, ...` below `to`
/// (stopping before one that would wrap), in order from `acc`: four a pass
/// while four remain in a strided run, with one test and branch for the
/// four ([`fold_each`]'s loop, and the variance's passes over a piece).
///
/// ```
/// use reduction_device::op::each_position;
/// assert_eq!(each_position(3, 40, 5, Vec::new(), |mut v, e| { v.push(e); v }), [3, 8, 13, 18, 23, 28, 33, 38]);
/// assert_eq!(each_position(u32::MAX - 4, u32::MAX, 3, 0, |n, _| n + 1), 2);
/// ```
#[inline(always)]
pub fn each_position<A>(from: u32, to: u32, step: u32, mut acc: A, f: impl Fn(A, u32) -> A) -> A {
    let mut e = from;
    // a strided run (the warp's lanes sharing a longer piece, each about
    // as many elements) four at a time while four are left: the same
    // combines in the same order, with a quarter of the loop's tests and
    // branches (H200, `segments_staged`, lengths uniform in 0..512: the
    // bf16 sum in 6% less time). Not a run of consecutive elements (a
    // lane's own piece, as long as its segment, unlike its neighbours'):
    // there the warp waits for its longest lane's tests either way
    // (lengths uniform in 0..32: 2.5% more time). Only where no position
    // up to four steps past `to` wraps: then none of these adds does, and
    // the compiler steps one address for the four
    if step > 1 && from < to && step.checked_mul(4).and_then(|four| to.checked_add(four)).is_some() {
        // SAFETY (each `unchecked_add`): `e` stays below `to + step` (it
        // starts below `to`, and a pass starts only while `e + 3·step <
        // to`), and `to + 4·step` fits
        while unsafe { e.unchecked_add(3 * step) } < to {
            for k in 0..4 {
                acc = f(acc, unsafe { e.unchecked_add(k * step) });
            }
            e = unsafe { e.unchecked_add(4 * step) };
        }
    }
    while e < to {
        acc = f(acc, e);
        match e.checked_add(step) {
            Some(next) => e = next,
            None => break,
        }
    }
    acc
}

/// `x[0]`, …, `x[L-1]` combined pairwise, the tree of a 16-byte vector's
/// lanes (`L` a power of two): `f(f(x₀, x₁), f(x₂, x₃))` for four.
///
/// ```
/// assert_eq!(reduction_device::op::pairwise([1, 2, 3, 4], |a, b| 2 * a + b), 2 * (2 * 1 + 2) + (2 * 3 + 4));
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

/// The definition of [`Reduction::fold_vectors`]: each vector's
/// [`Reduction::map_lanes`], combined [`pairwise`], then combined with `acc`.
#[inline(always)]
pub fn fold_pairwise<R: Reduction<T> + ?Sized, T: Copy, const L: usize, const V: usize>(
    acc: R::Acc,
    x: [[T; L]; V],
    y: [[T; L]; V],
    first: [u64; V],
) -> R::Acc {
    R::combine(acc, pairwise_of::<_, V>(|v| R::map_lanes(x[v], y[v], first[v]), R::combine))
}

/// `f(0)`, …, `f(V-1)` combined [`pairwise`], each pair as soon as both
/// are made: a round's vectors, as [`fold_pairwise`] combines them. One
/// and four are written out, each index a constant: LLVM keeps a round in
/// registers only so, and does not unroll a loop whose body is large.
///
/// ```
/// assert_eq!(reduction_device::op::pairwise_of::<i32, 4>(|v| v as i32 + 1, |a, b| 2 * a + b), 2 * (2 * 1 + 2) + (2 * 3 + 4));
/// ```
#[inline(always)]
pub fn pairwise_of<A: Copy, const V: usize>(f: impl Fn(usize) -> A, combine: impl Fn(A, A) -> A + Copy) -> A {
    match V {
        1 => f(0),
        4 => combine(combine(f(0), f(1)), combine(f(2), f(3))),
        _ => pairwise(core::array::from_fn::<A, V, _>(f), combine),
    }
}

/// A plain operator (CUB's binary functor): a [`Reduction`] whose
/// accumulator and output are the element itself. Not a trait of its own
/// to implement: every such `Reduction` is one. The teaching kernels take
/// these.
///
/// ```
/// use reduction_device::op::{ReduceOp, Reduction};
/// struct WrappingSum;
/// impl Reduction<i32> for WrappingSum {
///     type Acc = i32;
///     type Out = i32;
///     const NAME: &'static str = "wrapping_sum";
///     const IDENTITY: i32 = 0;
///     fn map(x: i32, _: i32, _: u64) -> i32 { x }
///     fn combine(a: i32, b: i32) -> i32 { a.wrapping_add(b) }
///     fn finish(acc: i32, _: u64) -> i32 { acc }
/// }
/// fn plain<O: ReduceOp<i32>>(a: i32, b: i32) -> i32 {
///     O::combine(a, b)
/// }
/// assert_eq!(plain::<WrappingSum>(i32::MAX, 1), i32::MIN);
/// ```
pub trait ReduceOp<T>: Reduction<T, Acc = T, Out = T> {}
impl<R: Reduction<T, Acc = T, Out = T> + ?Sized, T> ReduceOp<T> for R {}
