//! The PTX entry table: the only `extern "gpu-kernel"` items in the crate.
//!
//! Every kernel is instantiated for every operator and element type, and the
//! const-`BLOCK` kernels for every block size from 32 to 1024. Names follow
//! one rule, which the host's registry relies on:
//!
//! * `{kernel}_{op}_{type}` when the block size is chosen at launch
//!   (`reduce3_sum_i32`);
//! * `{kernel}_b{block}_{op}_{type}` when it is compiled in (`reduce7_b256_max_f64`).
//!
//! All take `(g_idata: *const T, g_odata: *mut T, n: u32)` except
//! `single_pass`, which takes `(a: *const T, b: *const T, n: u64, partials:
//! *mut Acc, ticket: *mut u32, out: *mut Out, done: *mut u32)` and is
//! instantiated for every operation of `with_operations!` (`names.rs`) with
//! [`single_pass_entries!`], the macro a user's kernel crate calls for its
//! own operation.

use crate::half::{bf16, f16};
use crate::kernels::*;
use crate::op::*;

/// Calls `$m!(op, Op, type)` for each (operator, type) pair of the lists in
/// `names.rs`.
macro_rules! for_each_op_and_type {
    ($m:ident) => {
        with_types!(for_each_op_and_type!(@types $m));
    };
    (@types $m:ident ; $($V:ident $t:ident),*) => {$(
        with_ops!(for_each_op_and_type!(@ops $m, $t));
    )*};
    (@ops $m:ident, $t:ident ; $($Op:ident $op:ident),*) => {$(
        $m!($op, $Op, $t);
    )*};
}

/// `{kernel}_{op}_{type}`: block size chosen at launch.
macro_rules! entry {
    ($kernel:ident, $module:ident :: $f:ident, $op:ident, $Op:ty, $t:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn ${concat($kernel, _, $op, _, $t)}(
            g_idata: *const $t,
            g_odata: *mut $t,
            n: u32,
        ) {
            $module::$f::<$t, $Op>(g_idata, g_odata, n)
        }
    };
}

/// `{kernel}_b{block}_{op}_{type}`, one per block size of `names.rs`.
macro_rules! entry_per_block {
    ($kernel:ident, $module:ident :: $f:ident, $op:ident, $Op:ty, $t:ident ; $($block:literal)*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn ${concat($kernel, _b, $block, _, $op, _, $t)}(
            g_idata: *const $t,
            g_odata: *mut $t,
            n: u32,
        ) {
            $module::$f::<$t, $Op, $block>(g_idata, g_odata, n)
        }
    )*};
}

macro_rules! seed_kernels {
    ($op:ident, $Op:ty, $t:ident) => {
        entry!(reduce1, reduce1_interleaved_divergent::reduce1, $op, $Op, $t);
        entry!(reduce2, reduce2_interleaved_bank_conflicts::reduce2, $op, $Op, $t);
        entry!(reduce3, reduce3_sequential::reduce3, $op, $Op, $t);
        entry!(reduce4, reduce4_first_add_during_load::reduce4, $op, $Op, $t);
        entry!(reduce5, reduce5_unroll_last_warp::reduce5, $op, $Op, $t);
        with_block_sizes!(entry_per_block!(reduce6, reduce6_complete_unroll::reduce6, $op, $Op, $t));
        with_block_sizes!(entry_per_block!(reduce7, reduce7_multiple_elements::reduce7, $op, $Op, $t));
        with_block_sizes!(entry_per_block!(reduce8, reduce8_warp_tile::reduce8, $op, $Op, $t));
        with_block_sizes!(entry_per_block!(reduce9, reduce9_warp_shuffle::reduce9, $op, $Op, $t));
        with_block_sizes!(entry_per_block!(vectorized, vectorized::vectorized, $op, $Op, $t));
    };
}
for_each_op_and_type!(seed_kernels);

/// `single_pass_b{block}_{op}_{type}` for every operation and its types.
macro_rules! single_pass_for_operations {
    (; $($Op:ident $op:ident [$($T:ident $t:ident),*]),*) => {$($(
        crate::single_pass_entries!($Op, $op, $t);
    )*)*};
}
with_operations!(single_pass_for_operations!());

// What each GPU computes of an operation that spans several (the host's
// `multi::Sharded`) where its result alone would not do: the default kernel only.
with_shard_parts!(single_pass_for_operations!());

// ---- Rows, columns and segments (`kernels/segments.rs`, `kernels/columns.rs`) ----
//
// `segments_{op}_{type}` `(a, b, n: u64, offsets: *const u64, count: u64,
// cols: u64, pitch: u64, tile: u64, lanes: u32, pieces: *mut Acc, tickets:
// *mut u32, out: *mut Out)`: one result per CSR segment (`offsets` not null)
// or row; `segments_staged_` (the same signature) for short segments
// through shared memory, `segments_paired_` for very short ones, two a
// lane a round where the operation allows it (`shape::staged_pairs`; a
// `trap` where not); `segments_scheduled_` for those with a heavy tail,
// as `segments_staged_` but its tiles in the offsets' schedule; and
// `segments_long_` for long ones, a block a tile (it and
// `segments_scheduled_` read `lanes` as where the offsets' schedule of
// their tile starts, plus one: `shape::schedule_at`; for `segments_long_`
// 0 for none);
// `rows_short_` and `rows_long_` for rows the host found short or long
// (`shape::short_row_vectors`, `shape::long_rows`), with fewer registers; `columns_{op}_{type}` `(a, b, rows: u64, cols: u64, pitch: u64,
// wide: u32, chunks: u32, partials: *mut Acc, tickets: *mut u32, out: *mut
// Out)`: one per column. Every operation and type of `with_operations!`, block `SHAPE_BLOCK`.

/// One entry of the segments signature: `$body` sees the parameters by the
/// names given.
macro_rules! segments_entry {
    ($name:ident, $Op:ident, $t:ident,
     |$a:ident, $b:ident, $n:ident, $o:ident, $c:ident, $cols:ident, $p:ident, $tile:ident, $l:ident, $pc:ident, $tk:ident, $out:ident| $body:expr) => {
        #[unsafe(no_mangle)]
        #[allow(unused_variables)]
        pub unsafe extern "gpu-kernel" fn $name(
            $a: *const $t,
            $b: *const $t,
            $n: u64,
            $o: *const u64,
            $c: u64,
            $cols: u64,
            $p: u64,
            $tile: u64,
            $l: u32,
            $pc: *mut <$Op as Reduction<$t>>::Acc,
            $tk: *mut u32,
            $out: *mut <$Op as Reduction<$t>>::Out,
        ) {
            $body
        }
    };
}

macro_rules! shape_entries {
    (; $($Op:ident $op:ident [$($T:ident $t:ident),*]),*) => {$($(
        segments_entry!(${concat(segments_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments::segments::<$t, $Op, false>(a, b, n, segs, tile, l, pieces, tk, out)
        });
        segments_entry!(${concat(segments_tailed_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments::segments::<$t, $Op, true>(a, b, n, segs, tile, l, pieces, tk, out)
        });
        segments_entry!(${concat(segments_staged_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments_staged::staged::<$t, $Op, false, false>(a, b, n, segs, tile, 0, pieces, tk, out)
        });
        segments_entry!(${concat(segments_scheduled_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments_staged::staged::<$t, $Op, false, true>(a, b, n, segs, tile, l, pieces, tk, out)
        });
        segments_entry!(${concat(segments_paired_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments_staged::staged::<$t, $Op, true, false>(a, b, n, segs, tile, 0, pieces, tk, out)
        });
        segments_entry!(${concat(rows_short_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            segments::short_rows::<$t, $Op>(a, b, n, cols, tile, out)
        });
        segments_entry!(${concat(rows_long_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            segments::long_rows::<$t, $Op>(a, b, n, cols, tile, pieces, tk, out)
        });
        segments_entry!(${concat(segments_long_, $op, _, $t)}, $Op, $t, |a, b, n, o, c, cols, p, tile, l, pieces, tk, out| {
            let segs = crate::shape::Segments::of_entry(o, c, cols, p);
            segments::long_segments::<$t, $Op>(a, b, n, segs, tile, l, pieces, tk, out)
        });

        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn ${concat(columns_, $op, _, $t)}(
            a: *const $t,
            b: *const $t,
            rows: u64,
            cols: u64,
            pitch: u64,
            wide: u32,
            chunks: u32,
            partials: *mut <$Op as Reduction<$t>>::Acc,
            tickets: *mut u32,
            out: *mut <$Op as Reduction<$t>>::Out,
        ) {
            columns::columns::<$t, $Op>(a, b, rows, cols, pitch, wide, chunks, partials, tickets, out)
        }
    )*)*};
}
with_operations!(shape_entries!());

// The portable forms of `with_portable_shapes!` (`names.rs`), for `gpu_to_gpu`.
macro_rules! portable_shape_entries {
    (; $($V:ident: $Op:ident $op:ident [$($T:ident $t:ident),*]),*) => {
        shape_entries!(; $($Op $op [$($T $t),*]),*);
    };
}
with_portable_shapes!(portable_shape_entries!());

// ---- Reproducible and accurate sums (`kernels/reproducible.rs`, `kernels/accurate.rs`) ----
//
// `reproducible_{op}_{type}` for the operations and types of
// `with_reproducible!`, `accurate_sum_f32` (the superaccumulator) and
// `accurate_sum_f64` (double-double in the reproducible kernel's order).
// The block size is read at run time. All take the single-pass signature
// `(a, b, n: u64, partials, ticket: *mut u32, out, done: *mut u32)`.

macro_rules! mode_entry {
    ($name:ident, $t:ident, $Acc:ty, $Out:ty, |$a:ident, $b:ident, $n:ident, $p:ident, $tk:ident, $o:ident, $d:ident| $body:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(
            $a: *const $t,
            $b: *const $t,
            $n: u64,
            $p: *mut $Acc,
            $tk: *mut u32,
            $o: *mut $Out,
            $d: *mut u32,
        ) {
            $body
        }
    };
}

macro_rules! reproducible_entries {
    (; $($Op:ident $op:ident),* ; $($t:ident)*) => {
        reproducible_entries!(@ops [$($Op $op),*] $($t)*);
    };
    (@ops $ops:tt $($t:ident)*) => {$(
        reproducible_entries!(@one $t $ops);
    )*};
    (@one $t:ident [$($Op:ident $op:ident),*]) => {$(
        mode_entry!(${concat(reproducible_, $op, _, $t)}, $t, <$Op as Reduction<$t>>::Acc, <$Op as Reduction<$t>>::Out,
            |a, b, n, p, tk, o, d| reproducible::reproducible::<$t, $Op>(a, b, n, p, tk, o, d));
    )*};
}
with_reproducible!(reproducible_entries!());

mode_entry!(accurate_sum_f32, f32, i64, f32, |a, b, n, p, tk, o, d| accurate::accurate_f32(a, b, n, p, tk, o, d));
mode_entry!(accurate_sum_f64, f64, exact::DoubleDouble, f64, |a, b, n, p, tk, o, d| {
    reproducible::reproducible::<f64, exact::DdSum>(a, b, n, p, tk, o, d)
});

// ---- Reduction by key (the voting-and-shuffling article, `kernels/by_key.rs`, `kernels/by_key_hash.rs`) ----
//
// `by_key_{variant}_{type}` for variant `atomic`, `ballot`, `match`, `hash`
// and type `f32`, `f64` (`names.rs`). All take
// `(keys: *const u32, values: *const T, n: u64, num_keys: u32, sums: *mut T,
// bad_keys: *mut u64)` and add `values[i]` to `sums[keys[i]]`.

macro_rules! by_key_entries {
    (; $($t:ident)*) => {$(
        by_key_entries!(@one atomic, by_key::by_key_atomic, $t);
        by_key_entries!(@one ballot, by_key::by_key_ballot, $t);
        by_key_entries!(@one match, by_key::by_key_match, $t);
        by_key_entries!(@one hash, by_key_hash::by_key_hash, $t);
    )*};
    (@one $variant:ident, $module:ident :: $f:ident, $t:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn ${concat(by_key_, $variant, _, $t)}(
            keys: *const u32,
            values: *const $t,
            n: u64,
            num_keys: u32,
            sums: *mut $t,
            bad_keys: *mut u64,
        ) {
            $module::$f::<$t>(keys, values, n, num_keys, sums, bad_keys)
        }
    };
}
with_by_key_types!(by_key_entries!());

// ---- Timing: the hold kernel (`kernels/hold.rs`) ----
//
// `hold(flag: *const u32, outcome: *mut u32, timeout_ns: u64)`, grid 1,
// block 1: holds the stream until the host sets `*flag` (`names::HOLD_ENTRY`).

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn hold(flag: *const u32, outcome: *mut u32, timeout_ns: u64) {
    hold::hold(flag, outcome, timeout_ns)
}
