//! Shared memory: on-chip, one array per block, visible to all its threads.

use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

/// CUDA's `extern __shared__ T sdata[]`: the block's dynamic shared memory,
/// sized by the launch (`sharedMemBytes`), viewed as an array of `T`.
///
/// Indexing is unchecked, exactly like `sdata[tid]` in CUDA C++: the launch
/// decides the length, and the kernel cannot see it. The PTX has one
/// `.extern .shared` array; loads and stores become `ld.shared`/`st.shared`.
pub struct DynShared<T> {
    base: *mut T,
    _not_send: PhantomData<*mut T>,
}

/// The block's dynamic shared memory as an array of `T` (see [`DynShared`]).
///
/// # Safety
/// Every index the caller uses must be below the launch's shared-memory bytes
/// divided by `size_of::<T>()`, and accesses by different threads to the same
/// element must be ordered by a barrier ([`sync_threads`](super::sync_threads)
/// or [`sync_warp`](super::sync_warp)).
#[inline(always)]
pub unsafe fn dyn_shared<T>() -> DynShared<T> {
    DynShared { base: gpu_launch_sized_workgroup_mem::<T>(), _not_send: PhantomData }
}

impl<T> DynShared<T> {
    /// The same shared memory from `bytes` on, viewed as an array of `U`:
    /// for kernels that keep two arrays (or a flag and an array) in it.
    ///
    /// # Safety
    /// `bytes` must be a multiple of `align_of::<U>()`, and the caller's
    /// indices into the result must stay inside the launch's shared memory.
    #[inline(always)]
    pub unsafe fn at_byte<U>(&self, bytes: usize) -> DynShared<U> {
        DynShared { base: self.base.cast::<u8>().add(bytes).cast(), _not_send: PhantomData }
    }
}

impl<T: Copy> DynShared<T> {
    /// Element `i`, a `T` of 16 bytes (a vector's lanes,
    /// [`Vector::Lanes`](super::Vector::Lanes)), read as one
    /// `ld.shared.v4.b32`: indexing reads a `T` of 16-bit lanes as eight
    /// loads (and of 32-bit lanes as four), since `T` is only as aligned as
    /// its lanes.
    ///
    /// # Safety
    /// As for indexing, the element 16-byte aligned (the shared memory and
    /// `at_byte`'s offset too), and `T` without padding (a vector's lanes
    /// are): its 16 bytes are read as words, then as a `T`.
    #[inline(always)]
    pub unsafe fn read16(&self, i: u32) -> T {
        #[repr(C, align(16))]
        struct Words([u32; 4]);
        const { assert!(size_of::<T>() == 16) };
        // SAFETY: the caller's bound and alignment; 16 bytes of words are
        // 16 bytes of `T`, which the stage was filled with
        unsafe { core::mem::transmute_copy(&self.base.add(i as usize).cast::<Words>().read()) }
    }
}

impl<T> DynShared<T> {
    /// The address of element `i`, for the shared-memory atomics
    /// ([`atomic_or_shared`](super::atomic_or_shared), [`SharedAtomicAdd`](super::SharedAtomicAdd)).
    #[inline(always)]
    pub fn ptr(&self, i: u32) -> *mut T {
        self.base.wrapping_add(i as usize)
    }
}

impl<T> Index<u32> for DynShared<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: u32) -> &T {
        // SAFETY: the bound is the contract of `dyn_shared`, which created `self`.
        unsafe { &*self.base.add(i as usize) }
    }
}

impl<T> IndexMut<u32> for DynShared<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: u32) -> &mut T {
        // SAFETY: as for `index`.
        unsafe { &mut *self.base.add(i as usize) }
    }
}

/// CUDA's dynamic shared memory size of the launch; PTX `%dynamic_smem_size`.
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    let bytes: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe {
        core::arch::asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) bytes, options(pure, nomem, nostack))
    };
    bytes
}

/// The shared-window address of `p` (PTX `cvta.to.shared`), which the
/// asynchronous copies take.
///
/// # Safety
/// `p` must point into the block's shared memory.
#[inline(always)]
pub unsafe fn shared_address<T>(p: *mut T) -> u32 {
    let a: u64;
    core::arch::asm!("cvta.to.shared.u64 {a}, {p};", a = out(reg64) a, p = in(reg64) p, options(pure, nomem, nostack));
    a as u32
}

/// CUDA's `__pipeline_memcpy_async(dst, p + 16 × i, 16)`: 16 bytes copied
/// from global memory into shared memory at the shared-window address
/// `dst` (PTX `cp.async.cg.shared.global`, through L2 only), without a
/// register; the copy belongs to the next [`copies_commit`] group.
/// `cp.async` needs a PTX target of sm_80 or later (Ampere): a kernel
/// calls this under `#[cfg(target_feature = "sm_80")]`, with a form for
/// earlier targets beside it.
///
/// # Safety
/// `dst` and `p + 16 × i` must be 16-byte aligned, in bounds, and the
/// source not written during the kernel; nothing may read `dst` before
/// [`copies_wait`] says its group is complete.
#[inline(always)]
pub unsafe fn copy16_async<T>(dst: u32, p: *const T, i: u64) {
    core::arch::asm!(
        "cp.async.cg.shared.global [{d}], [{p}], 16;",
        d = in(reg32) dst,
        p = in(reg64) p.cast::<u8>().add(16 * i as usize),
        options(nostack),
    );
}

/// Close the group of asynchronous copies issued since the last one
/// (`cp.async.commit_group`); an empty group is allowed.
#[inline(always)]
pub fn copies_commit() {
    // SAFETY: committing has no preconditions.
    unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack)) };
}

/// Wait until at most `N` of this thread's committed groups are pending
/// (`cp.async.wait_group N`): the copies of the older ones are then in
/// shared memory, visible to this thread.
#[inline(always)]
pub fn copies_wait<const N: u32>() {
    // SAFETY: waiting has no preconditions.
    unsafe { core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack)) };
}
