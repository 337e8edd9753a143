//! The ranks' results combined: each rank's slot (its result and its
//! count) gathered in rank order, made accumulators at their global offsets,
//! combined in that order and finished once with the total count.

use super::Sharded;
use crate::error::{Error, Result};
use crate::input::Element;
use gpu::op::Reduction;

/// Bytes each rank contributes to the exchange: its shard's result (at most
/// 16 bytes) at 0, its shard's length (`u64`) at [`COUNT_AT`].
pub(super) const SLOT: usize = 32;
/// Where a slot's count starts.
pub(super) const COUNT_AT: usize = 16;

/// The result from every rank's slot (`SLOT` bytes each, rank order): each
/// non-empty shard's result made an accumulator at its global offset, the
/// accumulators combined in rank order, finished with the total count.
pub(super) fn combine<R: Sharded<T>, T: Element>(gathered: &[u8]) -> Result<R::Out> {
    const { assert!(size_of::<<R::Shard as Reduction<T>>::Out>() <= COUNT_AT) };
    let (mut acc, mut offset) = (R::IDENTITY, 0u64);
    for slot in gathered.as_chunks::<SLOT>().0 {
        let mut count = [0u8; 8];
        count.copy_from_slice(&slot[COUNT_AT..COUNT_AT + 8]);
        let n = u64::from_le_bytes(count);
        if n > 0 {
            // SAFETY: the slot's first bytes are the shard's result, written
            // by the kernel (asserted above to fit before the count); every
            // bit pattern is a value of it (`Bits`); unaligned read of
            // initialized bytes.
            let out = unsafe { slot.as_ptr().cast::<<R::Shard as Reduction<T>>::Out>().read_unaligned() };
            acc = R::combine(acc, R::accumulate(out, offset, n));
        }
        offset += n;
    }
    if offset == 0 && R::NEEDS_AN_ELEMENT {
        return Err(Error::Empty { op: R::NAME });
    }
    Ok(R::finish(acc, offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu::half::{bf16, f16};
    use gpu::op::{
        AMinMax, All, Any, ArgMax, ArgMin, CountNonzero, Mean, Min, Moments, NanMean, Norm, PowerSum, Prod, Sum,
    };

    /// A rank's slot: the result's bytes at 0, the count at `COUNT_AT`.
    fn slot(result: &[u8], n: u64) -> Vec<u8> {
        let mut s = vec![0xAB; SLOT]; // garbage where nothing is written
        s[..result.len()].copy_from_slice(result);
        s[COUNT_AT..COUNT_AT + 8].copy_from_slice(&n.to_le_bytes());
        s
    }

    /// An `Arg<f32>` as the kernel lays it out (`repr(C)`: value, 4 bytes of
    /// padding, index).
    fn arg(value: f32, index: u64) -> Vec<u8> {
        [&value.to_le_bytes()[..], &[0; 4], &index.to_le_bytes()].concat()
    }

    #[test]
    fn arg_max_takes_the_lowest_global_index() {
        let tie = [slot(&arg(5.0, 999), 1000), slot(&arg(5.0, 0), 777)].concat();
        assert_eq!(combine::<ArgMax, f32>(&tie).unwrap().index, 999);
        let later = [slot(&arg(1.0, 3), 1000), slot(&arg(2.0, 3), 777)].concat();
        assert_eq!(combine::<ArgMax, f32>(&later).unwrap().index, 1003);
        let nan = [slot(&arg(9.0, 0), 10), slot(&arg(f32::NAN, 4), 10)].concat();
        assert_eq!(combine::<ArgMax, f32>(&nan).unwrap().index, 14);
        let first_empty = [slot(&[], 0), slot(&arg(-1.0, 3), 10)].concat();
        assert_eq!(combine::<ArgMin, f32>(&first_empty).unwrap().index, 3);
    }

    #[test]
    fn no_elements_anywhere() {
        let none = [slot(&[], 0), slot(&[], 0)].concat();
        assert!(matches!(combine::<ArgMax, f32>(&none), Err(Error::Empty { op: "argmax" })));
        assert_eq!(combine::<Sum, f64>(&none).unwrap(), 0.0);
        assert!(combine::<Mean, f32>(&none).unwrap().is_nan());
    }

    #[test]
    fn finished_once_from_the_total() {
        let sums = [slot(&6.0f64.to_le_bytes(), 3), slot(&4.0f64.to_le_bytes(), 1)].concat();
        assert_eq!(combine::<Mean, f64>(&sums).unwrap(), 2.5);
        let squares = [slot(&9.0f32.to_le_bytes(), 1), slot(&16.0f32.to_le_bytes(), 1)].concat();
        assert_eq!(combine::<Norm, f32>(&squares).unwrap(), 5.0);
        let halves =
            [slot(&f16::from_f32(-2.0).to_le_bytes(), 5), slot(&f16::from_f32(-3.0).to_le_bytes(), 5)].concat();
        assert_eq!(combine::<Min, f16>(&halves).unwrap(), f16::from_f32(-3.0));
    }

    /// torch's other reductions across ranks: a NaN-skipping mean divides
    /// the ranks' sum by their count of elements that are not NaN, not by
    /// `n`; min-and-max of halves widens both ends; counts and flags add
    /// and combine; an empty rank is skipped.
    #[test]
    fn the_other_reductions_across_ranks() {
        let parts = |sum: f32, count: u64| [&sum.to_le_bytes()[..], &[0; 4], &count.to_le_bytes()].concat();
        // rank 0: 10 elements, 4 of them NaN, summing to 6; rank 1: 5, none NaN, summing to 3
        let means = [slot(&parts(6.0, 6), 10), slot(&parts(3.0, 5), 5)].concat();
        assert_eq!(combine::<NanMean, f32>(&means).unwrap(), 9.0 / 11.0);
        let all_nan = [slot(&parts(0.0, 0), 4), slot(&[], 0)].concat();
        assert!(combine::<NanMean, f32>(&all_nan).unwrap().is_nan());
        let h = |x: f32| f16::from_f32(x).to_le_bytes();
        let ranges =
            [slot(&[h(-1.0), h(2.0)].concat(), 3), slot(&[], 0), slot(&[h(-4.0), h(1.0)].concat(), 3)].concat();
        let r = combine::<AMinMax, f16>(&ranges).unwrap();
        assert_eq!((r.min, r.max), (f16::from_f32(-4.0), f16::from_f32(2.0)));
        let counts = [slot(&7u64.to_le_bytes(), 9), slot(&5u64.to_le_bytes(), 5)].concat();
        assert_eq!(combine::<CountNonzero, f32>(&counts).unwrap(), 12);
        let flags = [slot(&1u32.to_le_bytes(), 9), slot(&0u32.to_le_bytes(), 5)].concat();
        assert_eq!((combine::<All, f32>(&flags).unwrap(), combine::<Any, f32>(&flags).unwrap()), (0, 1));
        let products = [slot(&3i32.to_le_bytes(), 2), slot(&(-2i32).to_le_bytes(), 2)].concat();
        assert_eq!(combine::<Prod, i32>(&products).unwrap(), -6);
        let none = [slot(&[], 0), slot(&[], 0)].concat();
        assert!(matches!(combine::<AMinMax, f32>(&none), Err(Error::Empty { op: "aminmax" })));
    }

    /// A variance across ranks: each rank's mean and `M2` (`f64`) with its
    /// length, merged by Chan's formula, an empty rank skipped; a large mean
    /// costs nothing (the parts' means are not rounded to `f32`).
    #[test]
    fn moments_merge_across_ranks() {
        let part = |mean: f64, m2: f64| [mean.to_le_bytes(), m2.to_le_bytes()].concat();
        // [1, 2, 3] and [10, 14]: mean 6, M2 2 + 8 + 3·2·(12 − 2)²/5 = 130
        let ranks = [slot(&part(2.0, 2.0), 3), slot(&[], 0), slot(&part(12.0, 8.0), 2)].concat();
        let m = combine::<Moments, f32>(&ranks).unwrap();
        assert_eq!((m.mean, m.m2, m.var(5, 1.0)), (6.0, 130.0, 32.5));
        // 1e6 + 0.0625·[0, 1] and 1e6 + 0.0625·[2, 3]: M2 = 0.0625² · 5
        let big = [slot(&part(1e6 + 0.03125, 0.001953125), 2), slot(&part(1e6 + 0.15625, 0.001953125), 2)].concat();
        assert_eq!(combine::<Moments, f32>(&big).unwrap().m2, 0.0625 * 0.0625 * 5.0);
        let none = [slot(&[], 0), slot(&[], 0)].concat();
        let m = combine::<Moments, f64>(&none).unwrap();
        assert!(m.mean.is_nan() && m.var(0, 1.0).is_nan());
    }

    /// The p-norm's sum across ranks: each rank's `Σ |x|ᵖ` added in rank
    /// order (an empty rank skipped, an infinite one kept), one root after.
    #[test]
    fn power_sums_add_across_ranks() {
        let ranks = [slot(&27.0f32.to_le_bytes(), 3), slot(&[], 0), slot(&37.0f32.to_le_bytes(), 2)].concat();
        let s = combine::<PowerSum, bf16>(&ranks).unwrap();
        assert_eq!(s, 64.0);
        assert!((gpu::op::power::root(s as f64, 3.0) - 4.0).abs() < 1e-15);
        let zero = [slot(&8.0f64.to_le_bytes(), 2), slot(&f64::INFINITY.to_le_bytes(), 1)].concat();
        assert_eq!(gpu::op::power::root(combine::<PowerSum, f64>(&zero).unwrap(), -1.0), 0.0);
        let none = [slot(&[], 0), slot(&[], 0)].concat();
        assert_eq!(combine::<PowerSum, f32>(&none).unwrap(), 0.0);
    }

    #[test]
    fn ranks_combine_in_order() {
        // (1e20 + 1) - 1e20 in rank order is 0 in f64, not 1: the same order on every rank
        let parts =
            [slot(&1e20f64.to_le_bytes(), 1), slot(&1.0f64.to_le_bytes(), 1), slot(&(-1e20f64).to_le_bytes(), 1)];
        assert_eq!(combine::<Sum, f64>(&parts.concat()).unwrap(), 0.0);
    }
}
