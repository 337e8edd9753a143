//! Folding a range of the input with a group of threads: the loop of the
//! default kernel (`kernels/single_pass.rs`: the whole input, every thread
//! of the grid) and of the segments kernel (`kernels/segments.rs`: one
//! segment's piece, the lanes of a team). 16-byte loads, four in flight per
//! thread; the elements before the first 16-byte boundary and after the
//! last whole vector one by one, so any view of a buffer works.

use crate::layout::ROUND_VECTORS;
use crate::op::{Element, Reduction};
use crate::prim::*;

/// How [`strided_fold`] loads the ends of a thread's part of the range.
/// Each way combines the same elements in the same order: the bits of the
/// result do not depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// The elements before the first 16-byte boundary one by one, then the
    /// vectors four at a time and the last (up to three) one at a time,
    /// then the elements after the last whole vector one by one.
    InTurn,
    /// As [`Ends::InTurn`], but a one-input thread's last (up to three)
    /// vectors are loaded together (one memory round trip, not three: what
    /// a short input on a grid of few blocks waits for).
    TailAtOnce,
    /// Where each thread has at most one element before the first 16-byte
    /// boundary and one after the last whole vector, those two are loaded
    /// before the vectors (one memory round trip for the range, not three:
    /// what a block folding short pieces one after another waits for) and
    /// combined where [`Ends::InTurn`] would combine them; otherwise as
    /// [`Ends::InTurn`].
    EndsFirst,
}

/// Fold elements `begin..end` of `a` (and `b`, read only when
/// `R::INPUTS == 2`) as thread `lane` of `lanes`, each element `i` mapped
/// with its index `i - base`, the ends loaded as `ends` says. If `a` and
/// `b` sit differently against a 16-byte boundary, every element is read
/// one by one.
///
/// # Safety
/// `a[begin..end]` (and `b[begin..end]` when `R::INPUTS == 2`) must be
/// valid, aligned for `T` and not written during the kernel.
#[inline(always)]
pub unsafe fn strided_fold<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    begin: u64,
    end: u64,
    base: u64,
    lane: u64,
    lanes: u64,
    ends: Ends,
) -> R::Acc {
    let two = R::INPUTS == 2;
    let element = |i: u64| {
        let x = load_u64(a, i);
        let y = if two { load_u64(b, i) } else { x };
        R::map(x, y, i - base)
    };
    let width = T::LANES as u64;
    let (start_a, start_b) = (a.wrapping_add(begin as usize) as u64, b.wrapping_add(begin as usize) as u64);
    let past_boundary = (start_a % 16) / size_of::<T>() as u64;
    let len = end - begin;
    let head = if two && start_a % 16 != start_b % 16 {
        len
    } else if past_boundary == 0 {
        0
    } else {
        (width - past_boundary).min(len)
    };
    let body = begin + head;
    let nvec = (len - head) / width;
    let tail = body + nvec * width;
    let early = ends == Ends::EndsFirst && head <= lanes && width <= lanes;
    let (first_one, last_one) = if early {
        let at = |i: u64, past: u64| if i < past { Some(element(i)) } else { None };
        (at(begin + lane, body), at(tail + lane, end))
    } else {
        (None, None)
    };
    let mut v = match first_one {
        Some(x) => R::combine(R::IDENTITY, x),
        None => R::IDENTITY,
    };
    let mut i = begin + lane;
    while !early && i < body {
        v = R::combine(v, element(i));
        i += lanes;
    }

    let (body_a, body_b) = (a.wrapping_add(body as usize), b.wrapping_add(body as usize));
    let load = |j: u64| {
        let x = T::load16(body_a, j);
        (x, if two { T::load16(body_b, j) } else { x })
    };
    // `Reduction::fold_vectors`: by default `combine(v, pairwise(...))` of
    // the vectors' `map_lanes`
    let first = |j: u64| body + j * width - base;
    let fold = |v: R::Acc, (x, y): (T::Lanes, T::Lanes), j: u64| T::Lanes::fold_into::<R, 1>(v, [x], [y], [first(j)]);
    let mut j = lane;
    while j + (ROUND_VECTORS - 1) * lanes < nvec {
        let (w, x, y, z) = (load(j), load(j + lanes), load(j + 2 * lanes), load(j + 3 * lanes));
        let at = [j, j + lanes, j + 2 * lanes, j + 3 * lanes];
        v = T::Lanes::fold_into::<R, 4>(v, [w.0, x.0, y.0, z.0], [w.1, x.1, y.1, z.1], at.map(first));
        j += ROUND_VECTORS * lanes;
    }
    // at most three vectors left for this thread. With `Ends::TailAtOnce`
    // and one input, all asked for before any is combined (one memory round
    // trip, not three: what a short input on a grid of few blocks waits
    // for), then combined in order as one at a time would be. Otherwise one
    // at a time: two inputs' six vectors would cost a dot product its second
    // block of 1024 threads an SM, and the segments kernel (whose tiles leave
    // no tail) a block an SM in registers.
    if two || ends != Ends::TailAtOnce {
        while j < nvec {
            v = fold(v, load(j), j);
            j += lanes;
        }
    } else if j < nvec {
        let w = load(j);
        if j + lanes < nvec {
            let x = load(j + lanes);
            if j + 2 * lanes < nvec {
                let y = load(j + 2 * lanes);
                v = fold(fold(fold(v, w, j), x, j + lanes), y, j + 2 * lanes);
            } else {
                v = fold(fold(v, w, j), x, j + lanes);
            }
        } else {
            v = fold(v, w, j);
        }
    }

    if let Some(x) = last_one {
        return R::combine(v, x);
    }
    let mut i = tail + lane;
    while !early && i < end {
        v = R::combine(v, element(i));
        i += lanes;
    }
    v
}
