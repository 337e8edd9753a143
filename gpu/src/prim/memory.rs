//! Global memory: the device's DRAM, reached through the L2 cache.

/// CUDA `p[i]` on a `const T*`: reads element `i`. PTX `ld.global` (or
/// `ld.shared` for a shared-memory pointer).
///
/// # Safety
/// `p.add(i)` must be in bounds of one allocation and aligned for `T`.
#[inline(always)]
pub unsafe fn load<T: Copy>(p: *const T, i: u32) -> T {
    // SAFETY: the caller keeps `p.add(i)` in bounds and aligned.
    unsafe { *p.add(i as usize) }
}

/// [`load`] with a 64-bit index, for kernels that cover more than 2^32
/// elements in one launch (`i` is a `u64` grid-stride position).
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn load_u64<T: Copy>(p: *const T, i: u64) -> T {
    // SAFETY: the caller keeps `p.add(i)` in bounds and aligned.
    unsafe { *p.add(i as usize) }
}

/// CUDA `p[i] = v` on a `T*`: writes element `i`.
///
/// # Safety
/// As for [`load`], and no other thread may access element `i` in the same
/// kernel without ordering.
#[inline(always)]
pub unsafe fn store<T>(p: *mut T, i: u32, v: T) {
    // SAFETY: the caller keeps `p.add(i)` in bounds, aligned and unraced.
    unsafe { *p.add(i as usize) = v }
}

/// CUDA `*(volatile T*)p = v`; PTX `st.volatile.global`: a store that is
/// performed, once, where a reader outside the kernel (the host, polling
/// mapped memory) can see it.
///
/// # Safety
/// `p` must point to a live, aligned `T`.
#[inline(always)]
pub unsafe fn store_volatile<T>(p: *mut T, v: T) {
    // SAFETY: the caller keeps `p` live and aligned.
    unsafe { core::ptr::write_volatile(p, v) }
}

/// An element type that the kernels load 16 bytes at a time: four 32-bit or
/// two 64-bit elements in one `ld.global.nc.v4.b32` / `ld.global.nc.v2.b64`.
/// Wide loads move the same bytes with a quarter (or half) of the load
/// instructions, so fewer are needed in flight to keep DRAM busy.
pub trait Vector: Copy {
    /// The 16 bytes as elements: `[T; 4]` or `[T; 2]`.
    type Lanes: Lanes<Self>;
    /// Elements per 16 bytes.
    const LANES: u32;
    /// CUDA `__ldg(reinterpret_cast<const int4*>(p) + i)`: 16 bytes through
    /// the read-only (non-coherent) data path.
    ///
    /// # Safety
    /// `p` must be 16-byte aligned, and the 16 bytes at `p + 16 × i` must be
    /// in bounds and not written by anyone during the kernel.
    unsafe fn load16(p: *const Self, i: u64) -> Self::Lanes;
}

/// The elements of one 16-byte vector.
pub trait Lanes<T>: Copy {
    /// Fold the lanes pairwise with `f`: `f(f(a, b), f(c, d))`.
    fn fold(self, f: impl Fn(T, T) -> T) -> T;
}

impl<T: Copy> Lanes<T> for [T; 4] {
    #[inline(always)]
    fn fold(self, f: impl Fn(T, T) -> T) -> T {
        f(f(self[0], self[1]), f(self[2], self[3]))
    }
}

impl<T: Copy> Lanes<T> for [T; 2] {
    #[inline(always)]
    fn fold(self, f: impl Fn(T, T) -> T) -> T {
        f(self[0], self[1])
    }
}

macro_rules! vector_32 {
    ($($t:ty)*) => {$(
        impl Vector for $t {
            type Lanes = [$t; 4];
            const LANES: u32 = 4;
            #[inline(always)]
            unsafe fn load16(p: *const Self, i: u64) -> [$t; 4] {
                let (a, b, c, d): (u32, u32, u32, u32);
                core::arch::asm!(
                    "ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                    a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
                    p = in(reg64) p.add(4 * i as usize),
                    options(pure, readonly, nostack),
                );
                [a, b, c, d].map(|w| <$t>::from_ne_bytes(w.to_ne_bytes()))
            }
        }
    )*};
}
vector_32!(i32 u32 f32);

macro_rules! vector_64 {
    ($($t:ty)*) => {$(
        impl Vector for $t {
            type Lanes = [$t; 2];
            const LANES: u32 = 2;
            #[inline(always)]
            unsafe fn load16(p: *const Self, i: u64) -> [$t; 2] {
                let (a, b): (u64, u64);
                core::arch::asm!(
                    "ld.global.nc.v2.b64 {{{a}, {b}}}, [{p}];",
                    a = out(reg64) a, b = out(reg64) b,
                    p = in(reg64) p.add(2 * i as usize),
                    options(pure, readonly, nostack),
                );
                [a, b].map(|w| <$t>::from_ne_bytes(w.to_ne_bytes()))
            }
        }
    )*};
}
vector_64!(i64 u64 f64);

/// A read of data that other blocks of the same launch wrote before a fence:
/// PTX `ld.relaxed.gpu.global` (it is served from L2, never from a stale L1
/// line). Unlike `volatile` loads, relaxed loads to different addresses may
/// be in flight together.
///
/// # Safety
/// As for [`load`]; `T` must be 4 or 8 bytes.
#[inline(always)]
pub unsafe fn load_relaxed<T: Copy>(p: *const T, i: u32) -> T {
    let p = p.add(i as usize);
    if size_of::<T>() == 8 {
        let v: u64;
        core::arch::asm!("ld.relaxed.gpu.global.b64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p, options(nostack, readonly));
        core::mem::transmute_copy(&v)
    } else {
        let v: u32;
        core::arch::asm!("ld.relaxed.gpu.global.b32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack, readonly));
        core::mem::transmute_copy(&v)
    }
}
