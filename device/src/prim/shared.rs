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
