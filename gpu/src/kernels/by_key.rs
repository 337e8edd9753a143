//! Reduction by key (the voting-and-shuffling article): one sum per key, with far more keys than fit
//! in shared memory.
//!
//! The problem comes from particle-in-cell codes (the seed's Multiparticle
//! Collision Dynamics): element `i` is a particle with value `values[i]` in
//! cell `keys[i]`, and each cell needs the sum of its particles' values,
//! `sums[k] = Σ values[i] over keys[i] == k`. With 10^6 cells the sums live
//! in global memory, so every partial sum ends in an atomic add there.
//!
//! Three kernels, one per way of issuing those atomics:
//!
//! 1. [`by_key_atomic`], the baseline: one `atomicAdd(&sums[key], value)`
//!    per element.
//! 2. [`by_key_ballot`]: the voting-and-shuffling article's *warp-aggregated atomics*. When keys are
//!    sorted or nearly so, the 32 lanes of a warp hold only a few distinct
//!    keys. The warp finds each lane's *peers* (the lanes with the same key)
//!    with the seed's `get_peers`, a loop of one shuffle and one ballot per
//!    distinct key; adds up each group of peers with the seed's
//!    `reduce_peers`, a tree of shuffles that runs for all groups at once;
//!    and lets the first lane of each group issue the group's one atomic.
//!    Sorted input with 10 elements per key has about 4 keys per warp: 4
//!    atomics instead of 32.
//! 3. [`by_key_match`]: the same with `__match_any_sync` (PTX
//!    `match.any.sync`, sm_70+) in place of the `get_peers` loop: one
//!    instruction returns every lane's peers.
//!
//! The seed's third competitor, per-block pre-aggregation in a shared-memory
//! hash table, is in `by_key_hash.rs`.
//!
//! When it does not pay: with random keys all 32 keys of a warp differ, so
//! the warp still issues 32 atomics, after a `get_peers` loop of 32 rounds.
//! The seed found plain atomics at least as fast for f32 (native atomic adds
//! on the same address are cheap) and for random keys; the aggregation won
//! for f64 with sorted keys, where its GPUs had no native f64 atomic add
//! (a `atomicCAS` loop, which diverges when lanes collide). Every GPU this
//! crate targets (sm_75+) adds f64 natively (`red.global.add.f64`), so the
//! question is measured again; see `docs/src/guide/by-key.md`.
//!
//! # Common rules of the three kernels
//! * Keys `>= num_keys` are not added anywhere: the kernel counts them in
//!   `*bad_keys` (a `u64`), which the host reads and turns into an error. So a
//!   wrong key in device data cannot write outside `sums`.
//! * The sums are *added to*: the host zeroes `sums` first. The order of the
//!   additions into one key varies from run to run (atomics), so float sums
//!   are not bit-reproducible.
//! * Grid-stride loops with 64-bit indices: any grid covers any `n`.
//!
//! Launch: any grid, block a multiple of 32 (the warp kernels need every
//! warp full: each iteration the whole warp takes 32 consecutive elements,
//! lanes past `n` take part with an idle key), no shared memory; `sums`
//! holds `num_keys` elements, `keys` and `values` hold `n`, `*bad_keys` is 0
//! (the kernels only add to it).

use crate::op::{Element, ReduceOp, Reduction, Sum};
use crate::prim::atomic::AtomicAdd;
use crate::prim::*;

/// The key of a lane past `n`. It is `>= num_keys` for every `num_keys` a
/// `u32` can hold, so the lane's group issues no atomic.
const IDLE: u32 = u32::MAX;

/// A value type the by-key kernels sum: shuffled between lanes and added
/// atomically in global memory (f32 and f64 in `entries.rs`).
pub trait Value: Element + Shuffle + AtomicAdd {}
impl<T: Element + Shuffle + AtomicAdd> Value for T {}

/// This thread's index in the grid and the number of threads in it.
#[inline(always)]
fn grid_position() -> (u64, u64) {
    let gtid = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    (gtid, grid_dim_x() as u64 * block_dim_x() as u64)
}

/// Kernel 1, the baseline: every element is one atomic add.
///
/// # Safety
/// `keys[0..n]` and `values[0..n]` must be valid, `sums[0..num_keys]` and
/// `*bad_keys` writable and aligned; see the module's *Launch* line.
#[inline(always)]
pub unsafe fn by_key_atomic<T: Value>(
    keys: *const u32,
    values: *const T,
    n: u64,
    num_keys: u32,
    sums: *mut T,
    bad_keys: *mut u64,
) {
    let (mut i, threads) = grid_position();
    while i < n {
        let key = load_u64(keys, i);
        let x = load_u64(values, i);
        if key < num_keys {
            atomic_add(sums.add(key as usize), x);
        } else {
            atomic_add(bad_keys, 1u64);
        }
        i += threads;
    }
}

/// The voting-and-shuffling article's `get_peers`: the lanes of the warp whose `key` equals this
/// lane's, as a bit mask (bit `l` for lane `l`).
///
/// Take the key of the first lane not yet claimed, broadcast it with a
/// shuffle, and ballot which lanes hold it: those are one group of peers.
/// Remove them from the pool and repeat until this lane's group is found.
/// A warp with `d` distinct keys runs `d` rounds.
///
/// The seed was written for Kepler's `__shfl`/`__ballot`, which need no
/// mask. Since Volta the `*_sync` forms must name the lanes that take part:
/// lanes leave the loop as soon as their group is found, so the lanes still
/// in it are exactly those `unclaimed`, and that is the mask (the CUDA 9
/// port of the seed's code).
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn get_peers(key: u32) -> u32 {
    // in the beginning, all lanes are available
    let mut unclaimed = FULL_MASK;
    loop {
        // fetch key of first unclaimed lane and compare with this key
        // (`trailing_zeros` is CUDA's `__ffs(x) - 1`)
        let first = unclaimed.trailing_zeros();
        let is_peer = key == shfl_sync(unclaimed, key, first);
        // determine which lanes had a match
        let peers = ballot_sync(unclaimed, is_peer);
        // remove lanes with matching keys from the pool
        unclaimed ^= peers;
        // quit if we had a match
        if is_peer {
            return peers;
        }
    }
}

/// The voting-and-shuffling article's `reduce_peers`: the sum of `x` over each group of `peers`,
/// valid in the group's first (lowest) lane.
///
/// Every group is reduced as a tree, all groups at once. Number each lane
/// by its rank among its peers, `rel_pos`. In round `r` (0, 1, ...), each
/// lane adds the value of its next peer still in the tree; the lanes whose
/// `rel_pos` has bit `r` set have now been added, and leave every lane's
/// `peers`. After `⌈log2(group size)⌉` rounds the first lane of each group
/// holds the group's sum. As the seed notes, shuffles have no bank
/// conflicts, so neighbouring peers are combined first (Harris's "far away"
/// order is for shared memory). Example, one group on lanes 0-4:
///
/// ```text
/// round 0: 0+=1  1+=2  2+=3  3+=4       (1 and 3 are done)
/// round 1: 0+=2        2+=4             (2 is done)
/// round 2: 0+=4                         (lane 0: x0+x1+x2+x3+x4)
/// ```
///
/// Changed from the seed: `rel_pos` is the popcount of the peers *below*
/// this lane, `peers & ((1 << lane) - 1)`. The seed's `peers << (32 - lane)`
/// shifts by 32 in lane 0, which PTX's `shl` clamps to 0 but Rust (like C)
/// does not. The seed's last line, `__shfl(x, first)`, gives the sum to
/// every peer; only the first lane uses it here, so it is left out.
///
/// # Safety
/// All 32 lanes of the warp must call it together, each with its own
/// group's `peers` (as [`get_peers`] or `match_any_sync` return them).
#[inline(always)]
pub unsafe fn reduce_peers<T: Value>(peers: u32, mut x: T) -> T
where
    Sum: ReduceOp<T>,
{
    let lane = lane_id();
    // calculate own relative position among peers
    let mut rel_pos = (peers & ((1u32 << lane) - 1)).count_ones();
    // ignore peers with lower (or same) lane index
    let mut peers = peers & (0xffff_fffe << lane);
    // __any(peers)
    while ballot_sync(FULL_MASK, peers != 0) != 0 {
        // find next-highest remaining peer (32 when there is none)
        let next = peers.trailing_zeros();
        // __shfl() only works if both threads participate, so we always do.
        let t = shfl_sync(FULL_MASK, x, next % WARP_SIZE);
        // only add if there was anything to add
        if peers != 0 {
            x = Sum::combine(x, t);
        }
        // all lanes with their least significant index bit set are done
        let done = rel_pos & 1 != 0;
        // remove all peers that are already done
        peers &= !ballot_sync(FULL_MASK, done);
        // abuse relative position as iteration counter
        rel_pos >>= 1;
    }
    x
}

/// How a warp finds each lane's peers.
pub trait FindPeers {
    /// The lanes whose `key` equals this lane's.
    ///
    /// # Safety
    /// All 32 lanes of the warp must call it together.
    unsafe fn peers(key: u32) -> u32;
}

/// The voting-and-shuffling article's loop: [`get_peers`] (one shuffle and one ballot per distinct
/// key in the warp; works on any GPU with shuffles).
pub struct Ballot;

impl FindPeers for Ballot {
    #[inline(always)]
    unsafe fn peers(key: u32) -> u32 {
        get_peers(key)
    }
}

/// One `match.any.sync` (sm_70+): the hardware compares all keys at once.
pub struct Match;

impl FindPeers for Match {
    #[inline(always)]
    unsafe fn peers(key: u32) -> u32 {
        match_any_sync(FULL_MASK, key)
    }
}

/// Kernels 2 and 3: warp-aggregated atomics, one atomic add per group of
/// equal keys in each warp's 32 consecutive elements; `P` finds the groups.
///
/// Each iteration of the grid-stride loop, warp `w` takes elements
/// `base .. base + 32`; the loop condition depends on `base` only, so whole
/// warps iterate together (the shuffles need all 32 lanes). Lanes past `n`
/// take part with key [`IDLE`] and value 0.
///
/// # Safety
/// As [`by_key_atomic`], and the block size must be a multiple of 32.
#[inline(always)]
pub unsafe fn by_key_warp<T: Value, P: FindPeers>(
    keys: *const u32,
    values: *const T,
    n: u64,
    num_keys: u32,
    sums: *mut T,
    bad_keys: *mut u64,
) where
    Sum: ReduceOp<T>,
{
    let lane = lane_id();
    let (gtid, threads) = grid_position();
    let mut base = gtid - lane as u64;
    while base < n {
        let i = base + lane as u64;
        let (key, x) = if i < n { (load_u64(keys, i), load_u64(values, i)) } else { (IDLE, Sum::IDENTITY) };
        // count the out-of-range keys, one atomic per warp that has any
        let bad = ballot_sync(FULL_MASK, i < n && key >= num_keys);
        if bad != 0 && lane == 0 {
            atomic_add(bad_keys, bad.count_ones() as u64);
        }
        let peers = P::peers(key);
        let sum = reduce_peers(peers, x);
        // the group's first lane holds its sum and issues its one atomic
        if lane == peers.trailing_zeros() && key < num_keys {
            atomic_add(sums.add(key as usize), sum);
        }
        base += threads;
    }
}

/// Kernel 2: warp-aggregated with the seed's `get_peers` loop.
///
/// # Safety
/// As [`by_key_warp`].
#[inline(always)]
pub unsafe fn by_key_ballot<T: Value>(
    keys: *const u32,
    values: *const T,
    n: u64,
    num_keys: u32,
    sums: *mut T,
    bad_keys: *mut u64,
) where
    Sum: ReduceOp<T>,
{
    by_key_warp::<T, Ballot>(keys, values, n, num_keys, sums, bad_keys)
}

/// Kernel 3: warp-aggregated with `match.any.sync`.
///
/// # Safety
/// As [`by_key_warp`].
#[inline(always)]
pub unsafe fn by_key_match<T: Value>(
    keys: *const u32,
    values: *const T,
    n: u64,
    num_keys: u32,
    sums: *mut T,
    bad_keys: *mut u64,
) where
    Sum: ReduceOp<T>,
{
    by_key_warp::<T, Match>(keys, values, n, num_keys, sums, bad_keys)
}
