//! Two operations of our own: the largest magnitude `max |x|`, and the count
//! of elements above a threshold. Each is a `Reduction` (map, combine,
//! finish; see `gpu::op`), and `single_pass_entries!` instantiates the
//! library's default kernel for it: no kernel code is written here.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, macro_metavar_expr_concat))]

use gpu::op::Reduction;

/// `max |x|` over f32 (NaN propagates, like the library's max).
pub struct AbsMax;

impl Reduction<f32> for AbsMax {
    type Acc = f32;
    type Out = f32;
    const NAME: &'static str = "absmax";
    const IDENTITY: f32 = 0.0;
    #[inline(always)]
    fn map(x: f32, _: f32, _: u64) -> f32 {
        f32::from_bits(x.to_bits() & 0x7fff_ffff) // |x|, sign bit cleared
    }
    #[inline(always)]
    fn combine(a: f32, b: f32) -> f32 {
        <gpu::op::Max as Reduction<f32>>::combine(a, b)
    }
    #[inline(always)]
    fn finish(acc: f32, _: u64) -> f32 {
        acc
    }
}

/// How many elements are above [`CountAbove::THRESHOLD`].
pub struct CountAbove;

impl CountAbove {
    /// The threshold, compiled in.
    pub const THRESHOLD: f32 = 0.5;
}

impl Reduction<f32> for CountAbove {
    type Acc = u64;
    type Out = u64;
    const NAME: &'static str = "count_above";
    const IDENTITY: u64 = 0;
    #[inline(always)]
    fn map(x: f32, _: f32, _: u64) -> u64 {
        (x > Self::THRESHOLD) as u64
    }
    #[inline(always)]
    fn combine(a: u64, b: u64) -> u64 {
        a + b
    }
    #[inline(always)]
    fn finish(acc: u64, _: u64) -> u64 {
        acc
    }
}

#[cfg(target_arch = "nvptx64")]
mod entries {
    use super::*;
    gpu::single_pass_entries!(AbsMax, absmax, f32);
    gpu::single_pass_entries!(CountAbove, count_above, f32);
}
