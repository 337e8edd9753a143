//! Clocks a kernel can read.

use core::arch::asm;

/// The GPU's global nanosecond timer; PTX `mov.u64 %r, %globaltimer`. CUDA
/// C++ has no builtin for it and reads it with the same inline PTX (libcu++'s
/// `cuda::std::chrono::system_clock` does). Unlike CUDA `clock64()` (PTX
/// `%clock64`, SM cycles), it counts nanoseconds whatever the SM clock, so a
/// timeout in nanoseconds needs no clock rate; it advances in steps of up to
/// a microsecond on some GPUs.
#[inline(always)]
pub fn globaltimer() -> u64 {
    let t: u64;
    // SAFETY: reading a special register has no preconditions. Not `pure`:
    // each call must read the timer again (it must not be hoisted from a loop).
    unsafe { asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nomem, nostack)) };
    t
}
