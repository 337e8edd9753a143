//! Warp-level primitives.
//!
//! Since Volta (sm_70) the 32 threads of a warp are scheduled independently:
//! they are no longer guaranteed to run in lock step, so code that relies on
//! it (Harris's `volatile` last-warp unrolling) is a data race. CUDA 9 added
//! the `*_sync` forms: each takes a `mask` of the lanes that take part, waits
//! for them (converges them), then exchanges data. The mask-taking form is
//! the primitive here; kernels that use the whole warp pass [`FULL_MASK`].
//!
//! # Participation
//! Every lane named in `mask` must execute the same call with the same mask;
//! a lane that is not named must not. Breaking this is undefined behaviour
//! (in practice: a hang or garbage), which is why these functions are
//! `unsafe`.

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

#[allow(improper_ctypes)]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_down_i32(mask: u32, v: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly_i32(mask: u32, v: i32, lane_mask: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx_i32(mask: u32, v: i32, lane: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, predicate: bool) -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn match_any_i32(mask: u32, v: i32) -> u32;
}

/// CUDA `__syncwarp(mask)`; PTX `bar.warp.sync mask`.
///
/// Waits for the lanes in `mask` and orders their shared-memory accesses
/// before the call against those after it, like a `__syncthreads` for one
/// warp.
///
/// With the test-only feature `broken-sync-warp` the mask loses lanes 16-31
/// (a wrong mask, a real class of bug), so that `cargo xtask sanitize` can
/// show the sanitizer catching it.
///
/// # Safety
/// See the module's *Participation* rules.
#[inline(always)]
pub unsafe fn sync_warp(mask: u32) {
    #[cfg(not(feature = "broken-sync-warp"))]
    bar_warp_sync(mask);
    #[cfg(feature = "broken-sync-warp")]
    bar_warp_sync(mask & 0x0000_ffff);
}

/// A value the warp can exchange through shuffles: 32-bit types take one
/// `shfl.sync` (bit-cast to `i32`), 64-bit types take two (low and high
/// halves), as CUDA's `__shfl_*_sync` overloads for `double` and `long long` do.
pub trait Shuffle: Copy {
    /// Apply a 32-bit shuffle `f` to every 32-bit word of `self`.
    fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self;
}

macro_rules! shuffle_32 {
    ($($t:ty)*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
                <$t>::from_ne_bytes(f(i32::from_ne_bytes(self.to_ne_bytes())).to_ne_bytes())
            }
        }
    )*};
}
shuffle_32!(i32 u32 f32);

macro_rules! shuffle_64 {
    ($($t:ty)*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            fn shuffle_words(self, f: impl Fn(i32) -> i32) -> Self {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                let lo = f(bits as u32 as i32) as u32 as u64;
                let hi = f((bits >> 32) as u32 as i32) as u32 as u64;
                <$t>::from_ne_bytes((lo | hi << 32).to_ne_bytes())
            }
        }
    )*};
}
shuffle_64!(i64 u64 f64);

/// CUDA `__shfl_down_sync(mask, v, delta)`; PTX `shfl.sync.down.b32` (two for
/// 64-bit types).
///
/// Returns `v` of lane `lane_id() + delta`; a lane whose source would be past
/// lane 31 gets its own `v` back.
///
/// # Safety
/// See the module's *Participation* rules.
#[inline(always)]
pub unsafe fn shfl_down_sync<T: Shuffle>(mask: u32, v: T, delta: u32) -> T {
    // clamp 0x1f: the segment is the whole warp.
    // SAFETY: the caller upholds the participation rules for `mask`.
    v.shuffle_words(|w| unsafe { shfl_down_i32(mask, w, delta, 0x1f) })
}

/// CUDA `__shfl_xor_sync(mask, v, lane_mask)`; PTX `shfl.sync.bfly.b32` (two
/// for 64-bit types).
///
/// Returns `v` of lane `lane_id() ^ lane_mask`: lanes exchange values in pairs.
///
/// # Safety
/// See the module's *Participation* rules.
#[inline(always)]
pub unsafe fn shfl_xor_sync<T: Shuffle>(mask: u32, v: T, lane_mask: u32) -> T {
    // clamp 0x1f: the segment is the whole warp.
    // SAFETY: the caller upholds the participation rules for `mask`.
    v.shuffle_words(|w| unsafe { shfl_bfly_i32(mask, w, lane_mask, 0x1f) })
}

/// CUDA `__shfl_sync(mask, v, src_lane)`; PTX `shfl.sync.idx.b32`: every lane
/// gets `v` of lane `src_lane`.
///
/// # Safety
/// See the module's *Participation* rules; `src_lane` must be in `mask`.
#[inline(always)]
pub unsafe fn shfl_sync<T: Shuffle>(mask: u32, v: T, src_lane: u32) -> T {
    // SAFETY: the caller upholds the participation rules and puts `src_lane` in `mask`.
    v.shuffle_words(|w| unsafe { shfl_idx_i32(mask, w, src_lane, 0x1f) })
}

/// CUDA `__ballot_sync(mask, predicate)`; PTX `vote.sync.ballot.b32`: bit `i`
/// of the result is set when lane `i` (in `mask`) passed `true`.
///
/// # Safety
/// See the module's *Participation* rules.
#[inline(always)]
pub unsafe fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    vote_ballot_sync(mask, predicate)
}

/// CUDA `__match_any_sync(mask, v)`; PTX `match.any.sync.b32` (sm_70+): the
/// set of lanes in `mask` whose `v` equals this lane's.
///
/// # Safety
/// See the module's *Participation* rules.
#[inline(always)]
pub unsafe fn match_any_sync(mask: u32, v: u32) -> u32 {
    match_any_i32(mask, v as i32)
}
