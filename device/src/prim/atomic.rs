//! Atomic operations and memory fences on global memory.

use core::arch::asm;

/// CUDA `__threadfence()`; PTX `membar.gl` (`fence.sc.gpu` since sm_70).
///
/// Orders this thread's earlier global-memory writes before its later ones,
/// as every thread of the GPU observes them.
#[inline(always)]
pub fn threadfence() {
    // SAFETY: a fence has no operands and no preconditions.
    unsafe { asm!("membar.gl;", options(nostack)) }
}

/// CUDA `__threadfence_system()`; PTX `membar.sys` (`fence.sc.sys`).
///
/// Orders this thread's earlier writes before its later ones as every
/// observer sees them, the host included (for writes to mapped host memory).
#[inline(always)]
pub fn threadfence_system() {
    // SAFETY: a fence has no operands and no preconditions.
    unsafe { asm!("membar.sys;", options(nostack)) }
}

/// CUDA `atomicInc(p, limit)`; PTX `atom.global.inc.u32`: stores
/// `old >= limit ? 0 : old + 1` and returns `old`.
///
/// # Safety
/// `p` must point to a live, aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn atomic_inc(p: *mut u32, limit: u32) -> u32 {
    let old: u32;
    asm!("atom.global.inc.u32 {old}, [{p}], {limit};",
         old = out(reg32) old, p = in(reg64) p, limit = in(reg32) limit, options(nostack));
    old
}

/// An element type with a native atomic add in global memory.
pub trait AtomicAdd: Copy {
    /// CUDA `atomicAdd(p, v)` with the result unused; PTX `red.global.add`.
    ///
    /// # Safety
    /// `p` must point to a live, aligned `Self` in global memory.
    unsafe fn atomic_add(p: *mut Self, v: Self);
}

macro_rules! red_add {
    ($t:ty, $ptx:literal, $reg:ident) => {
        impl AtomicAdd for $t {
            #[inline(always)]
            unsafe fn atomic_add(p: *mut Self, v: Self) {
                asm!(concat!("red.global.add.", $ptx, " [{p}], {v};"),
                     p = in(reg64) p, v = in($reg) v, options(nostack));
            }
        }
    };
}
red_add!(u32, "u32", reg32);
red_add!(i32, "s32", reg32);
red_add!(u64, "u64", reg64);
red_add!(f32, "f32", reg32);
red_add!(f64, "f64", reg64);

/// CUDA `atomicAdd(p, v)` with the result unused: see [`AtomicAdd`].
///
/// # Safety
/// `p` must point to a live, aligned `T` in global memory.
#[inline(always)]
pub unsafe fn atomic_add<T: AtomicAdd>(p: *mut T, v: T) {
    T::atomic_add(p, v)
}

/// CUDA `atomicCAS(p, compare, value)` on shared memory; PTX
/// `atom.shared.cas.b32`. Returns the old value.
///
/// # Safety
/// `p` must point to a `u32` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_cas_shared(p: *mut u32, compare: u32, value: u32) -> u32 {
    let old: u32;
    asm!(
        "{{ .reg .u64 a; cvta.to.shared.u64 a, {p}; atom.shared.cas.b32 {old}, [a], {cmp}, {val}; }}",
        old = out(reg32) old, p = in(reg64) p, cmp = in(reg32) compare, val = in(reg32) value,
        options(nostack),
    );
    old
}

/// CUDA `atomicAdd(p, v)` on shared memory with the result unused; PTX
/// `red.shared.add`.
pub trait SharedAtomicAdd: Copy {
    /// # Safety
    /// `p` must point to a `Self` in this block's shared memory.
    unsafe fn atomic_add_shared(p: *mut Self, v: Self);
}

macro_rules! red_shared_add {
    ($t:ty, $ptx:literal, $reg:ident) => {
        impl SharedAtomicAdd for $t {
            #[inline(always)]
            unsafe fn atomic_add_shared(p: *mut Self, v: Self) {
                asm!(
                    concat!("{{ .reg .u64 a; cvta.to.shared.u64 a, {p}; red.shared.add.", $ptx, " [a], {v}; }}"),
                    p = in(reg64) p, v = in($reg) v, options(nostack),
                );
            }
        }
    };
}
red_shared_add!(f32, "f32", reg32);
red_shared_add!(f64, "f64", reg64);
// Two's complement: adding an i64 as u64 is signed addition (CUDA
// `atomicAdd(unsigned long long*, ...)` on shared memory, sm_60+).
red_shared_add!(i64, "u64", reg64);

/// CUDA `atomicOr(p, v)` on shared memory with the result unused; PTX
/// `red.shared.or.b32`.
///
/// # Safety
/// `p` must point to a `u32` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_or_shared(p: *mut u32, v: u32) {
    asm!(
        "{{ .reg .u64 a; cvta.to.shared.u64 a, {p}; red.shared.or.b32 [a], {v}; }}",
        p = in(reg64) p, v = in(reg32) v, options(nostack),
    );
}
