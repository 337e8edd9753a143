//! How a reduction hands its one result over: the last block's thread 0
//! stores it, and when the host waits on a flag in mapped host memory
//! (`done` not null), fences system-wide and sets the flag. The host polls
//! the flag in its own memory instead of calling into the driver.

use crate::prim::{store, store_volatile, threadfence_system};

/// `out[0] = v`, then, unless `done` is null, `*done = 1` once `v` is
/// visible to the host.
///
/// # Safety
/// `out` must be valid for one `V` and `done` null or a live `u32`, neither
/// written by another thread of the launch.
#[inline(always)]
pub unsafe fn publish<V>(out: *mut V, v: V, done: *mut u32) {
    // SAFETY: the caller's contract
    unsafe {
        store(out, 0, v);
        if !done.is_null() {
            threadfence_system(); // the result is visible before the flag
            store_volatile(done, 1);
        }
    }
}
