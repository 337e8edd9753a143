//! Not a reduction: the hold kernel, for timing (NVIDIA nvbench's "blocking
//! kernel").
//!
//! A benchmark that queues (start event, launch, stop event) from the host
//! one run at a time measures the host as well when a run is shorter than
//! its submission: the GPU finishes, idles, and the next start event is
//! recorded when the host gets there. Launch this kernel first, queue every
//! run behind it, then let it go: the runs then execute back to back, and
//! each pair of events holds the GPU's work alone.
//!
//! One thread spins on a flag in host-mapped memory with volatile loads
//! (`ld.volatile.global`, read again on every pass) until the host sets it,
//! or until `timeout_ns` have passed on `%globaltimer` (the host did not
//! come back: the launch queue filled, or the host blocked). It writes
//! [`HOLD_RELEASED`] or [`HOLD_TIMED_OUT`] to `outcome`; after the timeout
//! the runs behind it start while the host is still queueing, so their
//! times are not the queued figure and the host must not report them as such.
//!
//! Launch: grid 1, block 1, no shared memory; `flag` and `outcome` are
//! `u32`s of mapped host memory, the flag zero at launch.

use crate::names::{HOLD_RELEASED, HOLD_TIMED_OUT};
use crate::prim::*;

/// Spin until `*flag != 0` (then `*outcome = HOLD_RELEASED`) or until
/// `timeout_ns` nanoseconds have passed (then `*outcome = HOLD_TIMED_OUT`).
/// Threads other than thread 0 of block 0 return at once.
///
/// # Safety
/// `flag` and `outcome` must point to live, aligned `u32`s the device can
/// reach (mapped host memory); nothing else may write `outcome` meanwhile.
#[inline(always)]
pub unsafe fn hold(flag: *const u32, outcome: *mut u32, timeout_ns: u64) {
    if thread_idx_x() != 0 || block_idx_x() != 0 {
        return;
    }
    let start = globaltimer();
    loop {
        if load_volatile(flag) != 0 {
            store_volatile(outcome, HOLD_RELEASED);
            return;
        }
        if globaltimer().wrapping_sub(start) > timeout_ns {
            store_volatile(outcome, HOLD_TIMED_OUT);
            return;
        }
    }
}
