//! Global memory: the device's DRAM, reached through the L2 cache.

/// CUDA `p[i]` on a `const T*`: reads element `i`.
///
/// # Safety
/// `p.add(i)` must be in bounds of one allocation and aligned for `T`.
#[inline(always)]
pub unsafe fn load<T: Copy>(p: *const T, i: u32) -> T {
    *p.add(i as usize)
}

/// CUDA `p[i] = v` on a `T*`: writes element `i`.
///
/// # Safety
/// As for [`load`], and no other thread may access element `i` in the same
/// kernel without ordering.
#[inline(always)]
pub unsafe fn store<T>(p: *mut T, i: u32, v: T) {
    *p.add(i as usize) = v
}
