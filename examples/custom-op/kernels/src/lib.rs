//! Operations and an element type of our own, for the library's default
//! kernel:
//!
//! * [`AbsMax`]: the largest magnitude `max |x|` of `f32`s;
//! * [`CountAbove`]: how many `f32`s are above a threshold, counted in `u64`;
//! * [`AMinMax`]: the smallest and the largest `f32` in one pass, into a
//!   pair of our own, [`MinMax`] (torch's `aminmax`);
//! * [`ComplexSum`]: the sum of complex numbers, an element type of our
//!   own, [`Complex32`];
//! * `first_of_each_block_sum`: a kernel of our own on the device library
//!   alone, launched with cudarc.
//!
//! Each is a `Reduction` (map, combine, finish: `reduction_device::op`),
//! and `single_pass_entries!` instantiates the library's default kernel for
//! it: no kernel code is written here. The types implement the open traits
//! of the device library (`Bits`, `Element`; on the GPU `Shuffle` and
//! `Vector`) and, on the host, what the library asks of an element it
//! copies to a GPU.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, macro_metavar_expr_concat))]

use reduction_device::op::{Bits, Element, Reduction};

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

/// The smallest and the largest element: our own accumulator and result.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MinMax {
    /// The smallest element.
    pub min: f32,
    /// The largest element.
    pub max: f32,
}

// SAFETY: `#[repr(C)]` of two `f32`: 8 bytes, every bit pattern is a value.
unsafe impl Bits for MinMax {}

/// Crosses a warp as `min`'s word, then `max`'s.
#[cfg(target_arch = "nvptx64")]
impl reduction_device::prim::Shuffle for MinMax {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        MinMax { min: self.min.shuffle_words(&f), max: self.max.shuffle_words(&f) }
    }
}

/// The smallest and the largest `f32` in one pass (NaN propagates to both,
/// as the library's min and max do). With no elements: `(+inf, -inf)`.
pub struct AMinMax;

impl Reduction<f32> for AMinMax {
    type Acc = MinMax;
    type Out = MinMax;
    const NAME: &'static str = "aminmax";
    const IDENTITY: MinMax = MinMax { min: f32::INFINITY, max: f32::NEG_INFINITY };
    #[inline(always)]
    fn map(x: f32, _: f32, _: u64) -> MinMax {
        MinMax { min: x, max: x }
    }
    #[inline(always)]
    fn combine(a: MinMax, b: MinMax) -> MinMax {
        MinMax {
            min: <gpu::op::Min as Reduction<f32>>::combine(a.min, b.min),
            max: <gpu::op::Max as Reduction<f32>>::combine(a.max, b.max),
        }
    }
    #[inline(always)]
    fn finish(acc: MinMax, _: u64) -> MinMax {
        acc
    }
}

/// A complex number of two `f32`: our own element type.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(8))]
pub struct Complex32 {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

impl Element for Complex32 {
    // the name in its entries' names: `single_pass_b256_csum_Complex32`
    const NAME: &'static str = "Complex32";
}

// SAFETY: `#[repr(C)]` of two `f32`: 8 bytes, every bit pattern is a value.
unsafe impl Bits for Complex32 {}

/// Crosses a warp as `re`'s word, then `im`'s.
#[cfg(target_arch = "nvptx64")]
impl reduction_device::prim::Shuffle for Complex32 {
    #[inline(always)]
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
        Complex32 { re: self.re.shuffle_words(&f), im: self.im.shuffle_words(&f) }
    }
}

/// Loaded two at a time: one 16-byte load holds two complex numbers.
#[cfg(target_arch = "nvptx64")]
impl reduction_device::prim::Vector for Complex32 {
    type Lanes = [Complex32; 2];
    const LANES: u32 = 2;
    #[inline(always)]
    unsafe fn load16(p: *const Self, i: u64) -> [Complex32; 2] {
        // SAFETY: the caller's contract; two `Complex32` are 16 bytes
        unsafe { reduction_device::prim::load16_as(p, i) }
    }
}

/// On the host: copied to a GPU as it is (cudarc's traits, through the
/// library), printed, and an element of the library's `Reducer`.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::Complex32;
    use reduction::cudarc::driver::{DeviceRepr, ValidAsZeroBits};

    // SAFETY: `#[repr(C)]` of two `f32`, no padding: its bytes are the
    // device's layout, and all zeros is `0 + 0i`.
    unsafe impl DeviceRepr for Complex32 {}
    unsafe impl ValidAsZeroBits for Complex32 {}

    impl core::fmt::Display for Complex32 {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "{}{:+}i", self.re, self.im)
        }
    }

    impl reduction::Element for Complex32 {}
}

/// The sum of complex numbers (each part summed as `f32`).
pub struct ComplexSum;

impl Reduction<Complex32> for ComplexSum {
    type Acc = Complex32;
    type Out = Complex32;
    const NAME: &'static str = "csum";
    const IDENTITY: Complex32 = Complex32 { re: 0.0, im: 0.0 };
    #[inline(always)]
    fn map(x: Complex32, _: Complex32, _: u64) -> Complex32 {
        x
    }
    #[inline(always)]
    fn combine(a: Complex32, b: Complex32) -> Complex32 {
        Complex32 { re: a.re + b.re, im: a.im + b.im }
    }
    #[inline(always)]
    fn finish(acc: Complex32, _: u64) -> Complex32 {
        acc
    }
}

/// Threads per block of `first_of_each_block_sum`.
pub const OWN_BLOCK: u32 = 256;

/// A kernel of our own, on the device library alone: blocks of
/// [`OWN_BLOCK`] threads, thread `t` of block `b` holding `x[256 b + t]`
/// (0 past `n`); each block sums the values of its first `valid` threads
/// (`block_reduce`'s count of valid threads), and the grid's total of those
/// lands in `out[0]` in the same launch (`grid_reduce`). `partials` holds
/// one `f32` a block, `*ticket` is 0, shared memory 132 bytes.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn first_of_each_block_sum(
    x: *const f32,
    n: u32,
    valid: u32,
    partials: *mut f32,
    ticket: *mut u32,
    out: *mut f32,
) {
    use reduction_device::block_reduce::block_reduce;
    use reduction_device::grid_reduce::grid_reduce;
    use reduction_device::prim::*;
    let i = block_idx_x() * OWN_BLOCK + thread_idx_x();
    let v = if i < n { load(x, i) } else { 0.0 };
    let mut warp_sums = dyn_shared::<f32>();
    let mut is_last = warp_sums.at_byte::<u32>(32 * 4);
    let mine = block_reduce::<f32, OWN_BLOCK>(v, valid, 0.0, |a, b| a + b, &mut warp_sums);
    sync_threads(); // warp 0 has read `warp_sums`; the grid reduction writes them again
    let v = if thread_idx_x() == 0 { mine } else { 0.0 };
    if let Some(total) =
        grid_reduce::<f32, OWN_BLOCK>(v, 0.0, |a, b| a + b, partials, ticket, &mut warp_sums, &mut is_last)
    {
        store(out, 0, total);
    }
}

#[cfg(target_arch = "nvptx64")]
mod entries {
    use super::*;
    gpu::single_pass_entries!(AbsMax, absmax, f32);
    gpu::single_pass_entries!(CountAbove, count_above, f32);
    gpu::single_pass_entries!(AMinMax, aminmax, f32);
    gpu::single_pass_entries!(ComplexSum, csum, Complex32);
}
