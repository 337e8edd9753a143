//! The `gpu_to_gpu` order: how the reproducible kernel
//! (`kernels/reproducible.rs`) splits `n` elements and combines the pieces,
//! as a function of `n` and the element size alone, never of the block
//! size, the grid or the GPU. This module also builds for the host, where
//! [`fixed_order`] performs the same computation serially: the CPU twin the
//! GPU results are compared with bit for bit.
//!
//! ```text
//! round R = elements [R·W, (R+1)·W), W = 32 lanes × 4 vectors × L   (L = 16 B / element size)
//! segment s = rounds s, s + segments, s + 2·segments, … (`rounds` of them)
//!   lane l, round r of the segment, vector j, element k:  i = (r·segments + s)·W + (32·j + l)·L + k
//!   lane l folds its elements in the order (r, j, k):  acc = accumulate(acc, x[i])   (from IDENTITY; i ≥ n skipped)
//!   the 32 lane results (lane_result(acc)): a shuffle-down tree (offsets 16, 8, 4, 2, 1)  → partial[s]
//! partials: the same 32-wide tree on groups of 32 (missing ones IDENTITY), level by level, until one is left
//! ```
//!
//! In one round a warp reads 32 lanes × 4 × 16 B = 2 KiB, whole 16-byte
//! vectors, each lane four of them in flight: the loads of the default
//! kernel. `rounds` (1 to 32, a power of two) grows with `n` so that there
//! are about [`TARGET_SEGMENTS`] segments, enough for every warp of a large
//! GPU, and few partials for the last block to combine. A segment's rounds
//! are `segments` rounds apart: warps that work through their segments
//! side by side read one window of the input at a time, as the default
//! kernel's grid-stride loop does, rather than each its own stretch.
//!
//! Any warp may compute any segment (they are assigned grid-stride): the
//! result is the same. The warp tree is the one `warp_reduce` performs with
//! shuffles: lane `i` adds lane `i + offset`'s value to its own.

use super::{Reduction, WarpAdd};

/// Lanes of a warp.
pub const WARP: usize = 32;
/// 16-byte vectors each lane loads per round (four loads in flight).
pub const VECTORS: usize = 4;
/// About this many segments (fewer for small `n`: a segment is at least one round).
pub const TARGET_SEGMENTS: usize = 8192;
/// The most rounds in a segment (64 KiB: a warp's unit of work).
pub const MAX_ROUNDS: usize = 32;

/// How `n` elements of `elem_size` bytes are split.
///
/// ```
/// use gpu::op::fixed_order::Geometry;
/// let g = Geometry::new(1 << 28, 4); // f32
/// assert_eq!((g.lanes, g.round, g.rounds, g.segment, g.segments), (4, 512, 32, 16384, 16384));
/// let g = Geometry::new(1000, 8); // f64
/// assert_eq!((g.round, g.rounds, g.segments), (256, 1, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Elements per 16-byte vector.
    pub lanes: usize,
    /// Elements per warp round: 32 lanes × [`VECTORS`] × `lanes`.
    pub round: usize,
    /// Rounds per segment.
    pub rounds: usize,
    /// Elements per segment.
    pub segment: usize,
    /// Segments: the partials the tree combines (at least 1).
    pub segments: usize,
}

impl Geometry {
    /// The split of `n` elements of `elem_size` (4 or 8) bytes.
    pub const fn new(n: usize, elem_size: usize) -> Geometry {
        let lanes = 16 / elem_size;
        let round = WARP * VECTORS * lanes;
        let rounds_total = n.div_ceil(round);
        let mut rounds = rounds_total.div_ceil(TARGET_SEGMENTS).next_power_of_two();
        if rounds > MAX_ROUNDS {
            rounds = MAX_ROUNDS;
        }
        let segment = rounds * round;
        let segments = if n == 0 { 1 } else { n.div_ceil(segment) };
        Geometry { lanes, round, rounds, segment, segments }
    }

    /// The first element of round `r` of segment `s`: rounds are numbered
    /// across segments, `r · segments + s`, so round `r` of every segment
    /// lies in one window of the input.
    ///
    /// ```
    /// use gpu::op::fixed_order::Geometry;
    /// let g = Geometry::new(1 << 28, 4);
    /// assert_eq!(g.round_start(1, 0), 512);
    /// assert_eq!(g.round_start(0, 1), 16384 * 512);
    /// ```
    pub const fn round_start(&self, s: usize, r: usize) -> usize {
        (r * self.segments + s) * self.round
    }

    /// How many of segment `s`'s rounds lie wholly within `n` elements:
    /// its first ones (a later round of a segment starts later).
    ///
    /// ```
    /// use gpu::op::fixed_order::Geometry;
    /// let g = Geometry::new(1000, 8); // rounds of 256 f64, 4 segments of one round
    /// assert_eq!([0, 1, 2, 3].map(|s| g.whole_rounds(s, 1000)), [1, 1, 1, 0]);
    /// ```
    pub const fn whole_rounds(&self, s: usize, n: usize) -> usize {
        // round r·segments + s is whole when it is below n / round; all are
        // but in the last few segments (no division by `segments` here: the
        // kernel calls this for every segment)
        let whole = n / self.round;
        if (self.rounds - 1) * self.segments + s < whole {
            return self.rounds;
        }
        let mut r = 0;
        while r < self.rounds && r * self.segments + s < whole {
            r += 1;
        }
        r
    }
}

/// Values the whole tree keeps: the `segments` partials, then each level's
/// outputs (`⌈m/32⌉` of the `m` before), down to one. The kernel's
/// `partials` buffer holds this many accumulators.
///
/// ```
/// use gpu::op::fixed_order::tree_len;
/// assert_eq!(tree_len(1), 1);
/// assert_eq!(tree_len(16384), 16384 + 512 + 16 + 1);
/// ```
pub const fn tree_len(segments: usize) -> usize {
    let (mut m, mut total) = (segments, segments);
    while m > 1 {
        m = m.div_ceil(WARP);
        total += m;
    }
    total
}

/// An operation the fixed-order kernel runs: how a lane adds one element
/// to its accumulator, what the lane hands to the warp tree, how two
/// accumulators merge and how the last one is finished. The defaults,
/// `combine(acc, map(x, y, i))`, the accumulator itself, `combine` and
/// `finish`, are what the default kernel does. The double-double sum
/// overrides the first two: the cheaper `Sum2` step
/// (`DoubleDouble::add_f64_lazy`), whose pair is then renormalized once
/// (`DoubleDouble::normalized`), so that its `combine` need not renormalize
/// its inputs. The `f32` logsumexp overrides all four with an exponential
/// and a logarithm of IEEE operations rounded once each
/// (`logsumexp::exp_neg_exact`), where the default kernel takes the GPU's
/// approximate ones, which a CPU cannot repeat bit for bit.
pub trait FixedOrder<T>: Reduction<T> {
    /// `acc` with element `i` (`x`, and `y` for two inputs) added.
    #[inline(always)]
    fn accumulate(acc: Self::Acc, x: T, y: T, i: u64) -> Self::Acc {
        Self::combine(acc, Self::map(x, y, i))
    }

    /// A lane's accumulator as the warp tree takes it (after its last
    /// [`FixedOrder::accumulate`]).
    #[inline(always)]
    fn lane_result(acc: Self::Acc) -> Self::Acc {
        acc
    }

    /// Two accumulators merged: in the warp trees and the tree over the
    /// partials.
    #[inline(always)]
    fn merge(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        Self::combine(a, b)
    }

    /// The result of the last accumulator, for `n` elements.
    #[inline(always)]
    fn result(acc: Self::Acc, n: u64) -> Self::Out {
        Self::finish(acc, n)
    }
}

macro_rules! fixed_order {
    ($($Op:ty: $($t:ty)*;)*) => {$($(
        impl FixedOrder<$t> for $Op {}
    )*)*};
}
fixed_order! {
    super::Sum: f32 f64;
    super::Dot: f32 f64;
    super::SumSquares: f32 f64;
    super::Norm: f32 f64;
    super::Mean: f32 f64;
    super::Moments: f32 f64;
    super::LogSumExp: f64;
}

impl FixedOrder<f64> for super::exact::DdSum {
    #[inline(always)]
    fn accumulate(acc: Self::Acc, x: f64, _: f64, _: u64) -> Self::Acc {
        acc.add_f64_lazy(x)
    }

    #[inline(always)]
    fn lane_result(acc: Self::Acc) -> Self::Acc {
        acc.normalized()
    }
}

/// The warp's shuffle-down tree on 32 values, in `warp_reduce`'s order:
/// for offset 16, 8, 4, 2, 1, value `i` becomes `combine(v[i], v[i + offset])`.
#[inline(always)]
pub fn warp_tree<A: Copy>(mut v: [A; WARP], combine: impl Fn(A, A) -> A) -> A {
    team_tree(&mut v, combine)
}

/// The 32 lanes of a warp on the CPU ([`WarpAdd`]): each lane's value in
/// turn, added in [`warp_tree`]'s order, so a piece that a warp's lanes
/// fold together ([`Reduction::fold_piece`]) has the GPU's bits.
///
/// ```
/// use gpu::op::{WarpAdd, fixed_order::TwinWarp};
/// assert_eq!(TwinWarp.add(|l| f64::from(l)), 496.0);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TwinWarp;

impl WarpAdd for TwinWarp {
    #[inline(always)]
    fn add(&self, value: impl Fn(u32) -> f64) -> f64 {
        warp_tree(core::array::from_fn(|l| value(l as u32)), |a, b| a + b)
    }
}

/// [`warp_tree`] on a team of `v.len()` lanes (a power of two up to 32):
/// `team_reduce`'s order, from offset `len / 2` down to 1. (Any power of
/// two: the columns kernel's last block combines its row lanes, up to 256,
/// in this order.)
#[inline(always)]
pub fn team_tree<A: Copy>(v: &mut [A], combine: impl Fn(A, A) -> A) -> A {
    let mut offset = v.len() / 2;
    while offset > 0 {
        for i in 0..offset {
            v[i] = combine(v[i], v[i + offset]);
        }
        offset /= 2;
    }
    v[0]
}

/// The CPU twin: operation `R` on `a` (and `b`, for two inputs; pass `a`
/// again otherwise) in exactly the order of the reproducible kernel, so its
/// result has the GPU's bits (NaN payloads aside: the GPU's NaN is
/// canonical, the CPU's carries the payload of an input).
///
/// # Panics
/// For two inputs, where `b` is shorter than `a` (the library's
/// `reduction::twin::fixed_order` refuses inputs of different lengths
/// with an error instead).
///
/// ```
/// use gpu::op::{Sum, fixed_order::fixed_order};
/// let xs: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32 - 3.0).collect();
/// assert_eq!(fixed_order::<Sum, f32>(&xs, &xs), xs.iter().sum::<f32>()); // exact data: any order agrees
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn fixed_order<R: FixedOrder<T>, T: Copy>(a: &[T], b: &[T]) -> R::Out {
    let n = a.len();
    let g = Geometry::new(n, size_of::<T>());
    let second = |i: usize| if R::INPUTS == 2 { b[i] } else { a[i] };
    let mut level: Vec<R::Acc> = (0..g.segments)
        .map(|s| {
            let mut lanes = [R::IDENTITY; WARP];
            for r in 0..g.rounds {
                let base = g.round_start(s, r);
                for j in 0..VECTORS {
                    for (l, acc) in lanes.iter_mut().enumerate() {
                        for k in 0..g.lanes {
                            let i = base + (j * WARP + l) * g.lanes + k;
                            if i < n {
                                *acc = R::accumulate(*acc, a[i], second(i), i as u64);
                            }
                        }
                    }
                }
            }
            warp_tree(lanes.map(R::lane_result), R::merge)
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(WARP)
            .map(|c| {
                let mut v = [R::IDENTITY; WARP];
                v[..c.len()].copy_from_slice(c);
                warp_tree(v, R::merge)
            })
            .collect();
    }
    R::result(level[0], n as u64)
}
