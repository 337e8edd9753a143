//! Global memory: the device's DRAM, reached through the L2 cache.

use crate::op::{Reduction, pairwise};

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

/// [`store`] with a 64-bit index.
///
/// # Safety
/// As for [`store`].
#[inline(always)]
pub unsafe fn store_u64<T>(p: *mut T, i: u64, v: T) {
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

/// CUDA `*(volatile T*)p`; PTX `ld.volatile.global`: a load that is
/// performed every time, from memory another agent (the host, through
/// mapped memory) may change while the kernel runs.
///
/// # Safety
/// `p` must point to a live, aligned `T`.
#[inline(always)]
pub unsafe fn load_volatile<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller keeps `p` live and aligned.
    unsafe { core::ptr::read_volatile(p) }
}

/// An element type that the kernels load 16 bytes at a time: eight 16-bit,
/// four 32-bit or two 64-bit elements in one `ld.global.nc.v4.b32` /
/// `ld.global.nc.v2.b64`. Wide loads move the same bytes with a quarter (or
/// half) of the load instructions, so fewer are needed in flight to keep
/// DRAM busy.
pub trait Vector: Copy {
    /// The 16 bytes as elements: `[T; 8]`, `[T; 4]` or `[T; 2]`.
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

/// The elements of one 16-byte vector: `[T; L]` for `L` = 8, 4 or 2.
pub trait Lanes<T>: Copy {
    /// The accumulator of `R` over the lanes, lane `k` (and its partner in
    /// `other`) being element `first + k`: [`Reduction::map_lanes`].
    fn map_reduce<R: Reduction<T>>(self, other: Self, first: u64) -> R::Acc;

    /// `acc` with the vectors `x` (and their partners `y`) folded in, vector
    /// `v`'s lane `k` being element `first[v] + k`: [`Reduction::fold_vectors`].
    fn fold_into<R: Reduction<T>, const V: usize>(acc: R::Acc, x: [Self; V], y: [Self; V], first: [u64; V]) -> R::Acc;

    /// Fold the lanes into `acc` one after the other, in order:
    /// `f(f(acc, a₀, b₀, first), a₁, b₁, first + 1)`... (the fixed order of
    /// the reproducible kernel).
    fn fold_in_order<A>(self, other: Self, first: u64, acc: A, f: impl Fn(A, T, T, u64) -> A) -> A;

    /// Lane `k` (`k` below the lane count).
    fn at(self, k: usize) -> T;

    /// Every lane `x`.
    fn splat(x: T) -> Self;

    /// Fold the lanes [`pairwise`] with `f`: `f(f(a, b), f(c, d))`.
    fn fold(self, f: impl Fn(T, T) -> T) -> T;
}

impl<T: Copy, const L: usize> Lanes<T> for [T; L] {
    #[inline(always)]
    fn map_reduce<R: Reduction<T>>(self, other: Self, first: u64) -> R::Acc {
        R::map_lanes(self, other, first)
    }

    #[inline(always)]
    fn fold_into<R: Reduction<T>, const V: usize>(acc: R::Acc, x: [Self; V], y: [Self; V], first: [u64; V]) -> R::Acc {
        R::fold_vectors(acc, x, y, first)
    }

    #[inline(always)]
    fn fold_in_order<A>(self, o: Self, first: u64, mut acc: A, f: impl Fn(A, T, T, u64) -> A) -> A {
        for k in 0..L {
            acc = f(acc, self[k], o[k], first + k as u64);
        }
        acc
    }

    #[inline(always)]
    fn at(self, k: usize) -> T {
        self[k]
    }

    #[inline(always)]
    fn splat(x: T) -> Self {
        [x; L]
    }

    #[inline(always)]
    fn fold(self, f: impl Fn(T, T) -> T) -> T {
        pairwise(self, f)
    }
}

/// The four 32-bit words at `p + 16 × i`, through the read-only path.
///
/// # Safety
/// As for [`Vector::load16`].
#[inline(always)]
unsafe fn load16_words<T>(p: *const T, i: u64) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    core::arch::asm!(
        "ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
        a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
        p = in(reg64) p.cast::<u8>().add(16 * i as usize),
        options(pure, readonly, nostack),
    );
    [a, b, c, d]
}

/// The 16 bytes at `p + 16 × i` as `L` elements of `T`, through the
/// read-only path (`ld.global.nc.v4.b32`): how an element type of your own
/// implements [`Vector::load16`] (a complex `f32` pair: `L = 2`).
///
/// # Safety
/// As for [`Vector::load16`]; `L` elements of `T` must be exactly 16 bytes
/// (checked when it is compiled), and every bit pattern a valid `T`.
#[inline(always)]
pub unsafe fn load16_as<T: Copy, const L: usize>(p: *const T, i: u64) -> [T; L] {
    const { assert!(size_of::<T>() * L == 16) };
    // SAFETY: 16 bytes of `[u32; 4]` are 16 bytes of `[T; L]`, every pattern valid
    unsafe { core::mem::transmute_copy(&load16_words(p, i)) }
}

macro_rules! vector_16 {
    ($($t:ty)*) => {$(
        impl Vector for $t {
            type Lanes = [$t; 8];
            const LANES: u32 = 8;
            #[inline(always)]
            unsafe fn load16(p: *const Self, i: u64) -> [$t; 8] {
                let w = load16_words(p, i);
                // little-endian: the low half of each word is the lower address
                core::array::from_fn(|k| <$t>::from_bits((w[k / 2] >> (16 * (k % 2))) as u16))
            }
        }
    )*};
}
vector_16!(crate::half::f16 crate::half::bf16);

macro_rules! vector_32 {
    ($($t:ty)*) => {$(
        impl Vector for $t {
            type Lanes = [$t; 4];
            const LANES: u32 = 4;
            #[inline(always)]
            unsafe fn load16(p: *const Self, i: u64) -> [$t; 4] {
                load16_words(p, i).map(|w| <$t>::from_ne_bytes(w.to_ne_bytes()))
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
/// line), one per 64-bit word (per 32-bit word for sizes that are not a
/// multiple of 8). Unlike `volatile` loads, relaxed loads to different
/// addresses may be in flight together.
///
/// # Safety
/// As for [`load`]; `size_of::<T>()` must be a multiple of 4, and every bit
/// pattern a valid `T` ([`crate::op::Bits`]).
#[inline(always)]
pub unsafe fn load_relaxed<T: Copy>(p: *const T, i: u32) -> T {
    let p = p.add(i as usize);
    let mut v = core::mem::MaybeUninit::<T>::uninit();
    if size_of::<T>() % 8 == 0 {
        for k in 0..size_of::<T>() / 8 {
            let w: u64;
            core::arch::asm!("ld.relaxed.gpu.global.b64 {w}, [{p}];", w = out(reg64) w, p = in(reg64) p.cast::<u64>().add(k), options(nostack, readonly));
            v.as_mut_ptr().cast::<u64>().add(k).write(w);
        }
    } else {
        for k in 0..size_of::<T>() / 4 {
            let w: u32;
            core::arch::asm!("ld.relaxed.gpu.global.b32 {w}, [{p}];", w = out(reg32) w, p = in(reg64) p.cast::<u32>().add(k), options(nostack, readonly));
            v.as_mut_ptr().cast::<u32>().add(k).write(w);
        }
    }
    v.assume_init()
}
