//! Reduction by key, kernel 4 (the voting-and-shuffling article's third competitor): per-block
//! pre-aggregation in a shared-memory hash table.
//!
//! The seed compared its warp-aggregated atomics (`by_key.rs`) with "a
//! binning algorithm using shared memory atomics with a hashing function to
//! calculate bin indices per block on the fly". The keys do not fit in
//! shared memory (10^6 of them), but the keys of a *tile* of consecutive
//! elements do. Each block, for each of its tiles:
//!
//! 1. clears a hash table of `slots` (key, sum) pairs in shared memory;
//! 2. inserts every element of the tile: the slot is `key % slots`, then
//!    the next ones (linear probing); the first thread to bring a key claims
//!    an empty slot with a shared `atomicCAS`, and every thread adds its value
//!    to its key's slot with a shared `atomicAdd`;
//! 3. flushes the table: one global atomic add per distinct key of the tile.
//!
//! A tile has `slots / 2` elements, so it holds at most `slots / 2` distinct
//! keys and the table is never more than half full: probe sequences stay
//! short and always end. Sorted keys are consecutive within a tile, and
//! `key % slots` puts consecutive keys in distinct slots: no collisions.
//!
//! Compared with the warp kernels: aggregation over a whole tile (1024
//! elements hold about 103 keys for sorted input with 10 per key: 10× fewer
//! global atomics than one per element, where the warp kernels get 8×: 4
//! keys per 32 elements), and it still works when a key's elements are
//! scattered across warps within the tile (partially sorted input). The price is three barriers per tile, a table
//! to clear and scan, and shared-memory atomics that collide when many
//! threads add to one key (f64 shared atomic adds are a compare-and-swap
//! loop in the hardware).
//!
//! The table's size comes from the launch: the kernel reads its dynamic
//! shared memory size (`%dynamic_smem_size`) and uses the largest power of
//! two of slots that fits. So no constant is shared with the host for
//! safety; with too little shared memory for a tile of one element per
//! thread, the block falls back to one global atomic per element.
//!
//! Keys `>= num_keys` are counted in `*bad_keys`, as in `by_key.rs`.
//!
//! Launch: any grid, any block size (grid-stride over tiles; all threads of
//! a block reach every barrier), dynamic shared memory `slots × (size_of::<T>()
//! + 4)` bytes (the host uses 2048 slots); other arguments as `by_key.rs`.

use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

use super::by_key::{Value, by_key_atomic};
use crate::op::{ReduceOp, Reduction, Sum};
use crate::prim::*;

/// An empty slot's key. No valid key equals it (keys are `< num_keys <= u32::MAX`).
const EMPTY: u32 = u32::MAX;

/// The number of table slots that `bytes` of shared memory hold, rounded
/// down to a power of two (0 if not even one).
#[inline(always)]
fn table_slots<T>(bytes: u32) -> u32 {
    let fit = bytes / (size_of::<T>() as u32 + 4);
    if fit == 0 { 0 } else { 1 << (31 - fit.leading_zeros()) }
}

/// Kernel 4: tiles of `slots / 2` consecutive elements, aggregated by key in
/// a shared-memory hash table, then one global atomic per distinct key.
///
/// # Safety
/// `keys[0..n]` and `values[0..n]` must be valid, `sums[0..num_keys]` and
/// `*bad_keys` writable and aligned; see the module's *Launch* line.
#[inline(always)]
pub unsafe fn by_key_hash<T: Value + SharedAtomicAdd>(
    keys: *const u32,
    values: *const T,
    n: u64,
    num_keys: u32,
    sums: *mut T,
    bad_keys: *mut u64,
) where
    Sum: ReduceOp<T>,
{
    let tid = thread_idx_x();
    let block = block_dim_x();
    let slots = table_slots::<T>(dynamic_smem_size());
    let tile = slots / 2;
    if tile < block {
        // not even one element per thread fits: plain atomics (the same for every block)
        return by_key_atomic(keys, values, n, num_keys, sums, bad_keys);
    }
    // The block's dynamic shared memory (`extern __shared__`): sums first
    // (aligned for T), then keys. Used through raw pointers rather than
    // `DynShared`'s indexing: threads update the same slots at once with
    // atomics, where a `&mut` to a slot would be a data race in Rust's rules.
    let table_sums: *mut T = gpu_launch_sized_workgroup_mem::<T>();
    let table_keys = table_sums.add(slots as usize).cast::<u32>();

    let mut start = block_idx_x() as u64 * tile as u64;
    let stride = grid_dim_x() as u64 * tile as u64;
    while start < n {
        // 1. clear the table
        let mut s = tid;
        while s < slots {
            store(table_keys, s, EMPTY);
            store(table_sums, s, Sum::IDENTITY);
            s += block;
        }
        sync_threads();

        // 2. insert the tile's elements (coalesced: thread t takes t, t + block, ...)
        let mut j = tid;
        while j < tile {
            let i = start + j as u64;
            if i < n {
                let key = load_u64(keys, i);
                let x = load_u64(values, i);
                if key < num_keys {
                    let mut h = key & (slots - 1); // key % slots: slots is a power of two
                    let mut probes = 0;
                    loop {
                        let old = atomic_cas_shared(table_keys.add(h as usize), EMPTY, key);
                        if old == EMPTY || old == key {
                            T::atomic_add_shared(table_sums.add(h as usize), x);
                            break;
                        }
                        h = (h + 1) & (slots - 1);
                        probes += 1;
                        if probes == slots {
                            // a full table; cannot happen (at most half full), but the loop must end
                            atomic_add(sums.add(key as usize), x);
                            break;
                        }
                    }
                } else {
                    atomic_add(bad_keys, 1u64);
                }
            }
            j += block;
        }
        sync_threads();

        // 3. flush: one global atomic per distinct key of the tile
        let mut s = tid;
        while s < slots {
            let key = load(table_keys, s);
            if key != EMPTY {
                atomic_add(sums.add(key as usize), load(table_sums, s));
            }
            s += block;
        }
        sync_threads(); // everyone has read the table before the next tile clears it

        start += stride;
    }
}
