//! Step 11 (ours): the whole reduction in one launch. The library's default.
//!
//! Harris needs a second launch because blocks cannot wait for each other.
//! They need not wait, though: the *last* block to finish can do the final
//! step (NVIDIA's `threadFenceReduction` sample). Changed from `vectorized`:
//!
//! 1. **One launch** (`grid_reduce.rs` of the device library, `device/src`).
//!    Each block writes its partial to `partials[block]`,
//!    then thread 0 makes that write visible to the whole GPU (`__threadfence`,
//!    *before* taking a ticket, or the last block could read a partial that is
//!    not there yet) and takes a ticket with `atomicInc(ticket, grid - 1)`.
//!    The block that draws `grid - 1` is last: every other partial is written,
//!    so it reduces them and writes `out[0]`. `atomicInc` wraps the counter
//!    back to 0 on that last ticket, so the next launch finds it zeroed. For
//!    small inputs this halves the launches; for all inputs it removes the
//!    gap between them. The result is deterministic: partials are combined in
//!    block order, whichever block is last. A grid of one block (inputs of
//!    a few thousand elements) is its own last block: it takes no ticket
//!    and needs no fence.
//! 2. **Any alignment.** The elements before the first 16-byte boundary (at
//!    most 7) and after the last whole vector are read one by one, so the
//!    16-byte loads work on any view of a buffer.
//! 3. **Four independent loads per iteration.** Each thread issues four
//!    16-byte loads before it combines any of them, 64 bytes in flight per
//!    thread; with full occupancy that is enough to cover DRAM latency. The
//!    last one to three vectors of a thread are also loaded together.
//! 4. **CUB's block reduction** (`block_reduce.rs`, beside it): warp shuffles, one
//!    barrier, instead of Harris's shared-memory tree.
//! 5. **64-bit indices**: one launch covers any `n`.
//! 6. **A completion flag for the host.** When `done` is not null, the last
//!    block's thread 0 stores the result, fences system-wide
//!    (`__threadfence_system`) and sets `*done = 1` (`publish.rs`). The library points `out`
//!    and `done` at pinned host memory mapped into the device, so a caller
//!    waiting for the result polls `done` in its own memory instead of
//!    calling into the driver (`reduce latency` measures the difference).
//! 7. **Any operation** ([`Reduction`]): each element is mapped to an
//!    accumulator (itself for a sum, value and index for an arg-max, a
//!    product of two inputs for a dot product, an `f32` for a half), the
//!    accumulators are combined, and the last block *finishes* the result (a
//!    square root for a norm). A second input `b`, read only by operations
//!    with `INPUTS == 2`, is loaded beside `a`; if the two are not equally
//!    misaligned, no 16-byte load can serve both and every element is read
//!    one by one (the host's views are usually aligned).
//!
//! Weighed and not kept: integer atomics on the output (they need the
//! output zeroed first, another operation, and work for sums only);
//! `redux.sync` (sm_80+) for the warp steps (two warp reductions per block
//! are not where the time goes; see docs/src/performance/harris.md).
//!
//! Launch: block = `BLOCK`, grid ≤ the blocks resident on the GPU,
//! `partials` with one accumulator per block, `*ticket == 0`, shared memory
//! `layout::SINGLE_PASS_SMEM` bytes. Result: `out[0]`, then `*done = 1`
//! unless `done` is null.

use crate::grid_reduce::grid_reduce;
use crate::layout::SINGLE_PASS_FLAG_OFFSET;
use crate::op::{Element, Reduction};
use crate::prim::*;
use crate::publish::publish;
use crate::strided_fold::{Ends, strided_fold};

/// The single-pass reduction of `a[0..n]` (and `b[0..n]`) with `R` into `out[0]`.
///
/// # Safety
/// `a[0..n]` must be valid and aligned for `T`, and `b[0..n]` too when
/// `R::INPUTS == 2` (else `b` is not read), `partials` must hold
/// `grid_dim_x()` accumulators, `*ticket` must be 0 and not used by a
/// concurrent launch, `done` null or a live `u32`, and the launch must follow
/// the module's *Launch* line.
#[inline(always)]
pub unsafe fn single_pass<T: Element + Vector, R: Reduction<T>, const BLOCK: u32>(
    a: *const T,
    b: *const T,
    n: u64,
    partials: *mut R::Acc,
    ticket: *mut u32,
    out: *mut R::Out,
    done: *mut u32,
) where
    R::Acc: Shuffle,
{
    const {
        assert!(
            size_of::<R::Acc>() % 4 == 0
                && size_of::<R::Acc>() * 32 <= SINGLE_PASS_FLAG_OFFSET
                && size_of::<R::Out>() <= 16
        )
    };
    let mut warp_sums = dyn_shared::<R::Acc>();
    let mut is_last = warp_sums.at_byte::<u32>(SINGLE_PASS_FLAG_OFFSET);
    let tid = thread_idx_x();
    let gtid = (block_idx_x() * BLOCK + tid) as u64;
    let threads = (grid_dim_x() * BLOCK) as u64;

    // the whole input, grid-stride: 16-byte loads, four in flight per thread
    // (`strided_fold.rs`, the loop the segments kernel shares)
    let v = strided_fold::<T, R>(a, b, 0, n, 0, gtid, threads, Ends::TailAtOnce);

    // one partial per block, and the last block to finish reduces them
    // (`grid_reduce.rs` of the device library)
    let total =
        grid_reduce::<R::Acc, BLOCK>(v, R::IDENTITY, R::combine, partials, ticket, &mut warp_sums, &mut is_last);
    if let Some(v) = total {
        publish(out, R::finish(v, n), done);
    }
}

/// The PTX entries `single_pass_b{block}_{name}_{type}` of operation `$Op`
/// (a [`Reduction`]) over element type `$t`, one per block size of
/// `names.rs`: the library instantiates its operations with it, and a user's
/// `no_std` kernel crate its own (`examples/custom-op`). `$name` must be the
/// operation's `NAME`, `$t` a type name that is in scope; the calling crate
/// needs the features `abi_gpu_kernel` and `macro_metavar_expr_concat`.
///
/// ```ignore
/// gpu::single_pass_entries!(AbsMax, absmax, f32); // single_pass_b32_absmax_f32 ... _b1024_
/// ```
#[macro_export]
macro_rules! single_pass_entries {
    ($Op:ty, $name:ident, $t:ident) => {
        // `names::BLOCK_SIZES` (a user's crate cannot call the crate-private
        // `with_block_sizes!`); the host's test that every registry entry is
        // in the PTX fails if the two lists part.
        $crate::single_pass_entries!(@blocks $Op, $name, $t; 32 64 128 256 512 1024);
    };
    (@blocks $Op:ty, $name:ident, $t:ident; $($block:literal)*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn ${concat(single_pass_b, $block, _, $name, _, $t)}(
            a: *const $t,
            b: *const $t,
            n: u64,
            partials: *mut <$Op as $crate::op::Reduction<$t>>::Acc,
            ticket: *mut u32,
            out: *mut <$Op as $crate::op::Reduction<$t>>::Out,
            done: *mut u32,
        ) {
            $crate::kernels::single_pass::single_pass::<$t, $Op, $block>(a, b, n, partials, ticket, out, done)
        }
    )*};
}
