//! Half-precision element types: IEEE 754 binary16 ([`f16`](struct@f16)) and bfloat16
//! ([`bf16`]), the types of most tensors that are reduced.
//!
//! On the host they are the [`half`](https://docs.rs/half) crate's types, so
//! a user's `&[half::bf16]` is reduced as it is. On the GPU they are 16-bit
//! wrappers with the two conversions the kernels need; a kernel never does
//! arithmetic in 16 bits: it widens every element to `f32` first (4096 f16
//! ones summed in f16 would give 2048), and narrows only results that came
//! from an element (a min or a max), which is exact.

#[cfg(not(target_arch = "nvptx64"))]
pub use half::{bf16, f16};

#[cfg(target_arch = "nvptx64")]
pub use device::{bf16, f16};

#[cfg(target_arch = "nvptx64")]
mod device {
    /// IEEE 754 binary16: 1 sign, 5 exponent and 10 fraction bits.
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    #[repr(transparent)]
    pub struct f16(u16);

    /// bfloat16: the upper half of an `f32` (1 sign, 8 exponent, 7 fraction bits).
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    #[repr(transparent)]
    pub struct bf16(u16);

    impl f16 {
        /// The value as `f32`, exactly; PTX `cvt.f32.f16`.
        #[inline(always)]
        pub fn to_f32(self) -> f32 {
            let r: f32;
            // SAFETY: a register-to-register conversion.
            unsafe {
                core::arch::asm!("cvt.f32.f16 {r}, {h};", r = out(reg32) r, h = in(reg16) self.0, options(pure, nomem, nostack))
            };
            r
        }

        /// `x` rounded to nearest even; PTX `cvt.rn.f16.f32`.
        #[inline(always)]
        pub fn from_f32(x: f32) -> f16 {
            let h: u16;
            // SAFETY: a register-to-register conversion.
            unsafe {
                core::arch::asm!("cvt.rn.f16.f32 {h}, {x};", h = out(reg16) h, x = in(reg32) x, options(pure, nomem, nostack))
            };
            f16(h)
        }

        /// The 16 bits.
        #[inline(always)]
        pub const fn from_bits(bits: u16) -> f16 {
            f16(bits)
        }

        /// The 16 bits.
        #[inline(always)]
        pub const fn to_bits(self) -> u16 {
            self.0
        }
    }

    impl bf16 {
        /// The value as `f32`, exactly: the 16 bits become the upper half.
        #[inline(always)]
        pub fn to_f32(self) -> f32 {
            f32::from_bits((self.0 as u32) << 16)
        }

        /// `x` rounded to nearest even (NaN stays NaN), as the `half` crate does
        /// (`cvt.rn.bf16.f32` needs sm_80; this is three integer instructions).
        #[inline(always)]
        pub fn from_f32(x: f32) -> bf16 {
            let b = x.to_bits();
            if x != x {
                return bf16((b >> 16) as u16 | 0x0040);
            }
            bf16(((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16)
        }

        /// The 16 bits.
        #[inline(always)]
        pub const fn from_bits(bits: u16) -> bf16 {
            bf16(bits)
        }

        /// The 16 bits.
        #[inline(always)]
        pub const fn to_bits(self) -> u16 {
            self.0
        }
    }
}
