//! Step 15 (ours): one result per column of a row-major matrix (torch's
//! `sum(dim=0)`, batch statistics).
//!
//! A thread reducing a column alone would read one element per row, 4
//! bytes out of every 32-byte sector. Instead (`gpu::shape::Columns`):
//!
//! 1. **Column tiles.** Neighbouring threads take neighbouring column
//!    *units* (a 16-byte vector of columns when every row starts 16-byte
//!    aligned, else one column): 8 to 128 vectors (or 32 to 128
//!    elements) across, so a warp reads whole 128-byte lines of one or
//!    several rows at once, and the block's
//!    other threads take the rows in between (`row_lanes` rows at a time).
//!    Each thread keeps one accumulator per column it holds and folds its
//!    rows in order, in groups of `Reduction::COLUMN_ROWS` (four, or eight
//!    for the variance of the half types, whose merge a group costs more
//!    than its elements), the group's loads in flight together.
//! 2. **Across the block**: the accumulators meet in shared memory and one
//!    thread per column (several columns a thread when the tile is wider
//!    than the block) combines them in row-lane order; for the half types'
//!    variance and logsumexp with 128 row lanes or more, as a tree
//!    (`Columns::row_tree`, `Reduction::COLUMN_TREE`: a chain of 127
//!    costly merges held every block's end, in a grid of one wave with the
//!    memory idle).
//! 3. **Row chunks.** A tall matrix has few column tiles, too few blocks to
//!    fill the GPU: `chunks` blocks then share each tile's rows, write a
//!    partial per column, and the last of them (`atomicInc` on the tile's
//!    ticket, which wraps back to 0) combines them with the whole block:
//!    row lane `l` the partials of chunks `l`, `l + row_lanes`, ... in
//!    order, then the row lanes as a tree (lane `r` takes in lane
//!    `r + row_lanes/2`, then `r + row_lanes/4`, ...). The rest of the GPU
//!    is idle by then: a chain of 63 merges a column (16 `f32` columns, 64
//!    row lanes) and 8-byte loads from L2 made that block's work 17 µs of
//!    the variance's 375 along 16777216×16 on an H100
//!    (`docs/src/performance/tuning-heavier-shapes.md`).
//!
//! The combining order depends on the shape and `chunks` alone, so results
//! are the same from run to run (`run_to_run`).
//!
//! Launch: block `SHAPE_BLOCK`, grid `col_tiles × chunks`,
//! `shape::columns_smem(width, size_of::<Acc>())` bytes of shared memory,
//! `partials` with `chunks × cols` accumulators when `chunks > 1`,
//! `tickets[0..col_tiles]` zero.

use crate::op::{Element, Reduction, each_column};
use crate::prim::*;
use crate::shape::{Columns, SHAPE_BLOCK, vector_columns};

/// One result per column of the `rows × cols` matrix at `a` (row `r` at
/// `a + r·pitch`), and `b` for two inputs, into `out[0..cols]`, in column
/// tiles `wide` times 128 bytes across (`Columns::new`).
///
/// # Safety
/// Every row's `cols` elements of `a` (and `b`) valid, aligned and not
/// written during the kernel; `partials` with `chunks × cols` accumulators
/// when `chunks > 1`, `tickets[0..col_tiles]` zero and not used by a
/// concurrent launch; `out[0..cols]` writable; the launch as the module's
/// *Launch* line says (the host plans it with the same `Columns`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn columns<T: Element + Vector, R: Reduction<T>>(
    a: *const T,
    b: *const T,
    rows: u64,
    cols: u64,
    pitch: u64,
    wide: u32,
    chunks: u32,
    partials: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) {
    if vector_columns(a as u64, b as u64, R::INPUTS, pitch, cols, size_of::<T>()) {
        columns_with::<T, R, true>(a, b, rows, cols, pitch, wide, chunks, partials, tickets, out)
    } else {
        columns_with::<T, R, false>(a, b, rows, cols, pitch, wide, chunks, partials, tickets, out)
    }
}

/// [`columns`] with 16-byte column units (`VECTOR`) or single columns.
/// (The `width` accumulators are indexed by constants only, through
/// [`each_column!`]; iterator chains and loops LLVM did not unroll left them
/// in local memory.)
#[inline(always)]
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
unsafe fn columns_with<T: Element + Vector, R: Reduction<T>, const VECTOR: bool>(
    a: *const T,
    b: *const T,
    rows: u64,
    cols: u64,
    pitch: u64,
    wide: u32,
    chunks: u32,
    partials: *mut R::Acc,
    tickets: *mut u32,
    out: *mut R::Out,
) {
    let geo = Columns::new(cols, T::LANES, VECTOR, wide);
    let width = if VECTOR { T::LANES as usize } else { 1 };
    let two = R::INPUTS == 2;
    let col_tiles = geo.col_tiles.max(1);
    let (tile, chunk) = (block_idx_x() as u64 % col_tiles, block_idx_x() as u64 / col_tiles);
    let tid = thread_idx_x();
    let (unit_lane, row_lane) = (tid % geo.unit_lanes, tid / geo.unit_lanes);
    let unit = tile * geo.unit_lanes as u64 + unit_lane as u64;
    let col0 = unit * width as u64;
    let live = col0 < cols; // a whole unit: `vector_columns` wants cols % LANES == 0
    let step = geo.row_lanes as u64;

    // 1. this thread's rows of its chunk, in order
    let mut acc = [R::IDENTITY; 8];
    let per_chunk = Columns::chunk_rows(rows, chunks);
    let (r0, r1) = (chunk * per_chunk, ((chunk + 1) * per_chunk).min(rows));
    let load = |r: u64| {
        let (ra, rb) = (a.wrapping_add((r * pitch) as usize), b.wrapping_add((r * pitch) as usize));
        if VECTOR {
            let x = T::load16(ra, unit);
            (x, if two { T::load16(rb, unit) } else { x })
        } else {
            // one column: only the first lane is folded
            let x = load_u64(ra, col0);
            (T::Lanes::splat(x), T::Lanes::splat(if two { load_u64(rb, col0) } else { x }))
        }
    };
    let fold = |acc: &mut [R::Acc; 8], (x, y): (T::Lanes, T::Lanes), r: u64| {
        each_column!(width, |k| acc[k] = R::combine(acc[k], R::map(x.at(k), y.at(k), r)));
    };
    if live {
        // each column's rows `R::COLUMN_ROWS` at a time, then one by one
        const { assert!(R::COLUMN_ROWS == 4 || R::COLUMN_ROWS == 8, "groups of 4 or 8 rows") };
        let mut r = r0 + row_lane as u64;
        r = if R::COLUMN_ROWS == 8 {
            fold_groups::<T, R, 8>(&mut acc, width, (r, r1, step), load)
        } else {
            fold_groups::<T, R, 4>(&mut acc, width, (r, r1, step), load)
        };
        while r < r1 {
            fold(&mut acc, load(r), r);
            r += step;
        }
    }

    // 2. across the block's row lanes
    let tile_cols = geo.tile_cols();
    let mut shared = dyn_shared::<R::Acc>();
    let mut is_last = shared.at_byte::<u32>(SHAPE_BLOCK as usize * width * size_of::<R::Acc>());
    across_rows::<T, R>(&mut shared, &acc, width, geo, tid, geo.row_tree(R::COLUMN_TREE), |c, combined| {
        let col = tile * tile_cols + c as u64;
        if col < cols {
            if chunks == 1 {
                store_u64(out, col, R::finish(combined, rows));
            } else {
                store_u64(partials, chunk * cols + col, combined);
            }
        }
    });
    if chunks == 1 {
        return;
    }

    // 3. the last chunk of the tile combines the chunks' partials
    threadfence(); // this block's partials are visible GPU-wide before the ticket is taken
    sync_threads();
    if tid == 0 {
        is_last[0] = (atomic_inc(tickets.add(tile as usize), chunks - 1) == chunks - 1) as u32;
    }
    sync_threads();
    if is_last[0] == 0 {
        return;
    }
    threadfence();
    let mut acc = [R::IDENTITY; 8];
    if live {
        let mut k = row_lane as u64;
        while k < chunks as u64 {
            // plain loads: the fence above ordered them after the other
            // blocks' partials (and emptied this SM's L1), and through L1 a
            // warp asks L2 for each 32-byte sector once, where a relaxed
            // load asks for its 8 bytes alone
            each_column!(width, |j| { acc[j] = R::combine(acc[j], load_u64(partials, k * cols + col0 + j as u64)) });
            k += step;
        }
    }
    across_rows::<T, R>(&mut shared, &acc, width, geo, tid, true, |c, combined| {
        let col = tile * tile_cols + c as u64;
        if col < cols {
            store_u64(out, col, R::finish(combined, rows));
        }
    });
}

/// A thread's rows `r, r + step, ...` of its columns (row `r` is
/// `load(r)`), `G` at a time while `G` are left below `r1`: the `G` loads
/// issued together, then each column's `G` rows folded as one
/// `Reduction::fold_columns` (else each one's `Reduction::fold_strided`).
/// Returns the first row not folded.
#[inline(always)]
fn fold_groups<T: Element + Vector, R: Reduction<T>, const G: usize>(
    acc: &mut [R::Acc; 8],
    width: usize,
    (mut r, r1, step): (u64, u64, u64),
    load: impl Fn(u64) -> (T::Lanes, T::Lanes),
) -> u64 {
    while r + (G as u64 - 1) * step < r1 {
        let v: [(T::Lanes, T::Lanes); G] = core::array::from_fn(|i| load(r + i as u64 * step));
        let rows = move |k: usize| -> ([T; G], [T; G]) {
            (core::array::from_fn(|i| v[i].0.at(k)), core::array::from_fn(|i| v[i].1.at(k)))
        };
        match R::fold_columns(*acc, width, rows, r, step) {
            Some(folded) => *acc = folded,
            None => {
                each_column!(width, |k| {
                    let (a, b) = rows(k);
                    acc[k] = R::fold_strided(acc[k], a, b, r, step);
                });
            }
        }
        r += G as u64 * step;
    }
    r
}

/// Combine the `width` accumulators of every thread across the row lanes,
/// in row-lane order (`tree`: as a tree, lane `r` taking in lane
/// `r + row_lanes/2`, then `r + row_lanes/4`, ...: fewer merges one after
/// the other, more barriers), through shared memory, and hand each of the tile's
/// columns `c` to `put(c, combined)` in thread `c mod SHAPE_BLOCK` (a tile
/// wider than the block: several a thread). Begins with a barrier (earlier
/// readers of `shared` are done), so the caller may call it twice.
///
/// # Safety
/// Every thread of the block must call it; shared memory as the *Launch*
/// line says.
#[inline(always)]
unsafe fn across_rows<T, R: Reduction<T>>(
    shared: &mut DynShared<R::Acc>,
    acc: &[R::Acc; 8],
    width: usize,
    geo: Columns,
    tid: u32,
    tree: bool,
    mut put: impl FnMut(u32, R::Acc),
) {
    let tile_cols = geo.tile_cols() as u32;
    let (unit_lane, row_lane) = (tid % geo.unit_lanes, tid / geo.unit_lanes);
    sync_threads(); // earlier readers of `shared` are done
    each_column!(width, |k| shared[row_lane * tile_cols + unit_lane * width as u32 + k as u32] = acc[k]);
    sync_threads();
    if tree {
        // half = row_lanes / 2, ..., 2; then lane 0 takes in lane 1 (two row
        // lanes at least: `Columns::new`)
        let mut half = geo.row_lanes / 2;
        while half > 1 {
            let mut i = tid;
            while i < half * tile_cols {
                shared[i] = R::combine(shared[i], shared[i + half * tile_cols]);
                i += SHAPE_BLOCK;
            }
            sync_threads();
            half /= 2;
        }
        let mut c = tid;
        while c < tile_cols {
            put(c, R::combine(shared[c], shared[tile_cols + c]));
            c += SHAPE_BLOCK;
        }
        return;
    }
    // from row lane 0's accumulator on, not the identity merged with it
    // (the CPU twin does the same): at the 64 registers the f32 variance is
    // declared for, `ptxas` reloaded 104 bytes of spills instead of 176 when
    // this came in (44 since `put`), and 256×2^20 along its columns, whose
    // blocks were short, took 301 µs instead of 336 on an H200
    let mut c = tid;
    while c < tile_cols {
        let mut v = shared[c];
        for r in 1..geo.row_lanes {
            v = R::combine(v, shared[r * tile_cols + c]);
        }
        put(c, v);
        c += SHAPE_BLOCK;
    }
}
