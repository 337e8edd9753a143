//! Step 13 (ours): the accurate `f32` sum, correctly rounded. Since the
//! exact sum rounded once does not depend on any order, it is also the same
//! on every GPU (`gpu_to_gpu`).
//!
//! Exact summation needs every bit of every input kept until the end. Doing
//! that with a superaccumulator (a long fixed-point number) per element
//! would cost integer work per element; instead (ExBLAS's design, with a
//! wider first level):
//!
//! 1. **A floating-point expansion per thread, in `f64`.** Each `f32` is
//!    widened exactly and added with [`two_sum`] to the thread's `s`; the
//!    rounding error (exact) is added with [`two_sum`] to `c`; only if *that*
//!    is inexact does its error, a residue, go to the block's
//!    superaccumulator. `s` and `c` hold 106 bits between them: for data
//!    whose sum spans fewer bits than that (nearly all data), the residue is
//!    always zero, and the loop is loads, one conversion and 12 `f64`
//!    additions per element, with the 16-byte loads of `single_pass` (four
//!    in flight per thread).
//!
//!    **A vector's four at once** ([`quad`]): when the largest magnitude of
//!    a 16-byte vector's four `f32`s is at most 2^27 times the smallest
//!    nonzero one, their sum needs at most 53 bits, so `(x₀ + x₁) + (x₂ +
//!    x₃)` in `f64` is exact and enters the expansion as one value: 3
//!    additions and the 12 of one element for four elements, instead of
//!    48, which the `f64` units of a fast card cannot keep up with. The
//!    test is a few `f32` comparisons; a vector that fails it (magnitudes
//!    over more than 27 binades) is added element by element. Exact either
//!    way, so the result (the exact sum, rounded once) does not change.
//! 2. **A superaccumulator per block** in shared memory: [`LIMBS`] `i64`
//!    limbs of 32-bit digits of weight 2^(32k-149) (`op/exact.rs`); a
//!    residue is split into three digits and added with 64-bit shared
//!    atomics (`red.shared.add.u64`). Integer addition: exact, in any order.
//!    At the end each thread adds `s` and `c` there too, summed across the
//!    warp first, one limb at a time and only the limbs some lane touches
//!    (one atomic per such limb per warp, not per thread). The host declares
//!    the kernel for one block of 1024 threads an SM
//!    ([`ACCURATE_F32_BOUNDS`](crate::layout::ACCURATE_F32_BOUNDS)), and the
//!    JIT fits it in 64 registers (72 undeclared).
//! 3. **One block combines.** Each block writes its limbs and flags; the
//!    last block (the ticket of `single_pass`) adds them up (integer sums,
//!    so in any order) and rounds the exact total once to `f32`
//!    ([`round_to_f32`]).
//!
//! Non-finite inputs never reach the limbs: a running `f64` sum of finite
//! `f32`s cannot overflow, so `s` itself turns `±inf` or NaN exactly when
//! such inputs were summed, following IEEE's rules; its class is OR-ed
//! into flags (NaN if any NaN or both infinities, else the infinity).
//!
//! Exact while a block's limbs take fewer than 2^31 additions each: at
//! most three per residue and two per thread, so for any `n` below 2^31
//! per block.
//!
//! Launch: block = a multiple of 32 up to 1024, any grid ≥ 1, `partials`
//! with [`ACCURATE_WORDS`] `i64` per block, `*ticket == 0`, shared memory
//! `layout::MODES_SMEM` bytes. Result: `out[0]`, then `*done = 1` unless
//! `done` is null.

use crate::layout::ACCURATE_WORDS;
use crate::op::exact::{LIMBS, digits, flags_of, round_to_f32, two_sum};
use crate::prim::*;
use crate::publish::publish;
use crate::warp_reduce::warp_reduce;

/// Vectors each thread loads before adding them.
const UNROLL: u64 = 4;

/// Byte offsets in shared memory: the block's limbs, the final limbs of the
/// last block, then the flags and the last-block flag.
const BLOCK_LIMBS: usize = 0;
const TOTAL_LIMBS: usize = 8 * LIMBS;
const FLAGS: usize = 16 * LIMBS;
const TOTAL_FLAGS: usize = FLAGS + 4;
const IS_LAST: usize = FLAGS + 8;

/// Add residue `r` (a multiple of 2^-149) to the shared limbs at `limbs`;
/// NaN and infinities are left out (the flags decide those results). Rare,
/// so out of line: the loop that calls it stays small.
#[inline(never)]
unsafe fn flush(limbs: *mut i64, r: f64) {
    if r.is_finite() {
        let (k, [d0, d1, d2]) = digits(r);
        let add = |j: usize, d: i64| {
            if d != 0 && k + j < LIMBS {
                i64::atomic_add_shared(limbs.wrapping_add(k + j), d);
            }
        };
        (add(0, d0), add(1, d1), add(2, d2));
    }
}

/// The exact sum of a vector's four `f32`s as one `f64`, when it fits: the
/// largest magnitude at most 2^27 times the smallest nonzero one (zeros
/// are left out of the smallest, a NaN out of both, where `f32::max` and
/// `min` skip it; it still makes the sum NaN). Then every element is a
/// multiple of the smallest one's unit in the last place (2^-149 for a
/// subnormal) and the sum is below 2^(24 + 27 + 2) of those units: 53
/// bits, exact in `f64`, and so are the two partial sums. An infinity
/// passes only beside values above 2^101 and makes the sum infinite (or
/// NaN with both signs), as adding it alone would.
///
/// ```text
/// [1.0, 2.0, -3.0, 0.5]       → Some(0.5)
/// [1.0, 2.0^-30, 0.0, 0.0]    → None: 30 binades apart
/// [0.0, -0.0, 0.0, 0.0]       → Some(0.0)
/// ```
#[inline(always)]
fn quad(v: [f32; 4]) -> Option<f64> {
    let m = v.map(f32::abs);
    let largest = m[0].max(m[1]).max(m[2].max(m[3]));
    let nonzero = m.map(|x| if x == 0.0 { f32::INFINITY } else { x });
    let smallest = nonzero[0].min(nonzero[1]).min(nonzero[2].min(nonzero[3]));
    // 2^27 · smallest is exact (or +inf for a smallest above 2^101)
    if largest <= smallest * 134217728.0 {
        Some((v[0] as f64 + v[1] as f64) + (v[2] as f64 + v[3] as f64))
    } else {
        None
    }
}

/// The accurate sum of `a[0..n]` into `out[0]` (`b` is not read).
///
/// # Safety
/// `a[0..n]` must be valid and aligned for `f32`, `partials` must hold
/// `ACCURATE_WORDS × grid_dim_x()` words, `*ticket` must be 0 and not used by
/// a concurrent launch, `done` null or a live `u32`, and the launch must
/// follow the module's *Launch* line.
#[inline(always)]
pub unsafe fn accurate_f32(
    a: *const f32,
    _b: *const f32,
    n: u64,
    partials: *mut i64,
    ticket: *mut u32,
    out: *mut f32,
    done: *mut u32,
) {
    let smem = dyn_shared::<u8>();
    let limbs = smem.at_byte::<i64>(BLOCK_LIMBS);
    let totals = smem.at_byte::<i64>(TOTAL_LIMBS);
    let mut flags = smem.at_byte::<u32>(FLAGS);
    let mut is_last = smem.at_byte::<u32>(IS_LAST);
    let tid = thread_idx_x();
    let block = block_dim_x();
    if tid < 2 * LIMBS as u32 {
        let mut all = smem.at_byte::<i64>(0);
        all[tid] = 0;
    } else if tid < 2 * LIMBS as u32 + 2 {
        flags[tid - 2 * LIMBS as u32] = 0; // FLAGS and TOTAL_FLAGS
    }
    sync_threads();

    // 1. the thread's expansion s + c; residues to the limbs
    let (mut s, mut c) = (-0.0f64, 0.0f64); // s stays -0.0 only if every input is -0.0
    let mut add = |x: f64| {
        let (s2, e) = two_sum(s, x);
        let (c2, r) = two_sum(c, e);
        (s, c) = (s2, c2);
        if r != 0.0 {
            flush(limbs.ptr(0), r);
        }
    };
    let gtid = (block_idx_x() * block + tid) as u64;
    let threads = (grid_dim_x() * block) as u64;
    let head = ((16 - a as u64 % 16) % 16 / 4).min(n);
    let mut i = gtid;
    while i < head {
        add(load_u64(a, i) as f64);
        i += threads;
    }
    let mut add4 = |v: [f32; 4]| match quad(v) {
        Some(sum) => add(sum),
        None => {
            for x in v {
                add(x as f64);
            }
        }
    };
    let body = a.wrapping_add(head as usize);
    let nvec = (n - head) / 4;
    let mut i = gtid;
    while i + (UNROLL - 1) * threads < nvec {
        let (w, x, y, z) = (
            f32::load16(body, i),
            f32::load16(body, i + threads),
            f32::load16(body, i + 2 * threads),
            f32::load16(body, i + 3 * threads),
        );
        (add4(w), add4(x), add4(y), add4(z));
        i += UNROLL * threads;
    }
    while i < nvec {
        add4(f32::load16(body, i));
        i += threads;
    }
    let mut i = head + nvec * 4 + gtid;
    while i < n {
        add(load_u64(a, i) as f64);
        i += threads;
    }

    // s and c into the limbs, summed over the warp first; the flags OR-ed
    let f = warp_reduce(flags_of(s), |x, y| x | y);
    let finite = s.is_finite();
    let (ks, ds) = if finite { digits(s) } else { (0, [0; 3]) };
    let (kc, dc) = if finite { digits(c) } else { (0, [0; 3]) };
    let at = |k: usize, d: [i64; 3], j: usize| match j.wrapping_sub(k) {
        0 => d[0],
        1 => d[1],
        2 => d[2],
        _ => 0,
    };
    // one limb at a time, and only the limbs some lane of the warp touches
    // (the warp is whole here: every thread of the block gets this far)
    for j in 0..LIMBS {
        let d = at(ks, ds, j) + at(kc, dc, j);
        if ballot_sync(u32::MAX, d != 0) != 0 {
            let sum = warp_reduce(d, |x, y| x + y);
            if lane_id() == 0 && sum != 0 {
                i64::atomic_add_shared(limbs.ptr(j as u32), sum);
            }
        }
    }
    if lane_id() == 0 {
        atomic_or_shared(flags.ptr(0), f);
    }
    sync_threads();

    // 2. the block's limbs and flags out; the ticket
    let word = |b: u32, w: usize| partials.wrapping_add(b as usize * ACCURATE_WORDS + w);
    if (tid as usize) < LIMBS {
        store(word(block_idx_x(), tid as usize), 0, limbs[tid]);
    } else if tid as usize == LIMBS {
        store(word(block_idx_x(), LIMBS), 0, flags[0] as i64);
    }
    threadfence();
    sync_threads();
    if tid == 0 {
        is_last[0] = (atomic_inc(ticket, grid_dim_x() - 1) == grid_dim_x() - 1) as u32;
    }
    sync_threads();
    if is_last[0] == 0 {
        return;
    }

    // 3. the last block: every block's limbs added up (16 threads per block
    // row, one per word), then rounded once
    threadfence();
    let (w, rows) = ((tid % 16) as usize, block / 16);
    let mut sum = 0i64;
    let mut b = tid / 16;
    while b < grid_dim_x() {
        if w <= LIMBS {
            let v = load_relaxed(word(b, w), 0);
            sum = if w < LIMBS { sum + v } else { sum | v };
        }
        b += rows;
    }
    if w < LIMBS && sum != 0 {
        i64::atomic_add_shared(totals.ptr(w as u32), sum);
    } else if w == LIMBS {
        atomic_or_shared(flags.ptr(((TOTAL_FLAGS - FLAGS) / 4) as u32), sum as u32);
    }
    sync_threads();
    if tid == 0 {
        let total: [i64; LIMBS] = core::array::from_fn(|k| totals[k as u32]);
        publish(out, round_to_f32(&total, flags[((TOTAL_FLAGS - FLAGS) / 4) as u32]), done);
    }
}
