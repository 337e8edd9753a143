//! The smallest and the largest element in one pass, `torch.aminmax`: both
//! by the rules of [`Min`] and [`Max`] (NaN propagates to both, `-0.0 <
//! +0.0`), for every element type; the half types compare in `f32` and
//! return the element. No elements have no result, as in torch (the host
//! refuses them).

use super::{Bits, Max, Min, Reduction};
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
