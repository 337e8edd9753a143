//! The GPU's approximate base-2 exponential and logarithm (PTX
//! `ex2.approx` and `lg2.approx`, one special-function instruction each),
//! and the host's `exp2` and `log2` in their place on the CPU: what
//! [`logsumexp`](super::logsumexp) (flushing subnormals, `.ftz`) and
//! [`power`](super::power) (keeping them) are computed with.

/// `fn $name(x: f32) -> f32`: the PTX instruction `$ptx` on the GPU, `$host` on the CPU.
macro_rules! approx {
    ($(#[$doc:meta] $name:ident = $ptx:literal, $host:ident;)*) => {$(
        #[$doc]
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let r: f32;
                // SAFETY: pure arithmetic on registers.
                unsafe { core::arch::asm!(concat!($ptx, " {r}, {x};"), r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
                r
            }
            #[cfg(not(target_arch = "nvptx64"))]
            x.$host()
        }
    )*};
}
approx! {
    /// `2ˣ`, subnormal results flushed to 0: `ex2.approx.ftz.f32`.
    exp2_ftz = "ex2.approx.ftz.f32", exp2;
    /// `log₂ x`, subnormal inputs taken as 0: `lg2.approx.ftz.f32`.
    log2_ftz = "lg2.approx.ftz.f32", log2;
    /// `2ˣ`, subnormal results kept: `ex2.approx.f32`.
    exp2 = "ex2.approx.f32", exp2;
    /// `log₂ x`, subnormal inputs kept: `lg2.approx.f32`.
    log2 = "lg2.approx.f32", log2;
}
