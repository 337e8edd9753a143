//! The reduction-by-key benchmark (the voting-and-shuffling article): elements per second and the
//! speedup over plain atomics, per key distribution and value type
//! (`docs/src/guide/by-key.md`).

use reduction::cudarc::driver::CudaSlice;
use reduction::{Error, Options, Reducer, Result, by_key, dispatch};
use serde::Serialize;
use testkit::by_key::{KeyDist, TestValue, generate_keys, groups_per_warp, reference};
use testkit::data::{Pattern, generate};

use crate::bench::{WARMUP, copies_wanted};
use crate::timing::{Stats, time_runs};

/// One kernel on one input: check and timing.
///
/// ```no_run
/// let r = reduction::Reducer::new()?;
/// for row in reduce::by_key_bench::bench(&r, 1 << 20, 1 << 16, 10)? {
///     println!("{} {} {}: {:.2} Gelem/s, {:.2}x", row.ty, row.dist, row.kernel, row.elements_per_s / 1e9, row.speedup);
/// }
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ByKeyRow {
    /// The kernel's registry id ([`reduction::by_key::kernels`]).
    pub kernel: &'static str,
    /// `f32` or `f64`.
    pub ty: &'static str,
    /// [`KeyDist::name`].
    pub dist: String,
    /// Elements.
    pub n: usize,
    /// Keys.
    pub num_keys: u32,
    /// Distinct keys per warp of 32 elements (see [`groups_per_warp`]).
    pub groups_per_warp: f64,
    /// Blocks in the grid of the launch.
    pub grid: u32,
    /// Threads per block of the launch ([`BY_KEY_BLOCK`](reduction::dispatch::BY_KEY_BLOCK)).
    pub block: u32,
    /// Times of the whole operation: zero the sums, then the kernel.
    pub stats: Stats,
    /// Elements per second at the median time.
    pub elements_per_s: f64,
    /// The atomic kernel's median time over this one's, same type and keys.
    pub speedup: f64,
    /// Whether the checked run matched the CPU reference.
    pub ok: bool,
    /// The mismatch, when not `ok`.
    pub error: Option<String>,
}

/// Seeds of the benchmark's keys and values.
const BENCH_SEED: u64 = 3;

/// The benchmark: for f32 and f64 and each of [`KeyDist::ALL`], `n` elements
/// with `keys` keys (the seed: 10^7 and 10^6), every [by-key kernel](reduction::by_key::kernels) checked
/// once against [`reference()`] through the same launch path, then timed
/// `runs` times after [`WARMUP`] runs. Each timed run zeroes the sums and
/// launches the kernel (the whole operation, the same for every kernel).
///
/// A wrong result does not stop the benchmark: the row has `ok: false` and
/// the mismatch in `error`.
///
/// ```no_run
/// use reduction::Reducer;
/// let r = Reducer::new()?;
/// let rows = reduce::by_key_bench::bench(&r, 10_000_000, 1_000_000, 20)?; // the seed's sizes
/// assert_eq!(rows.len(), 4 * 2 * 4); // distributions × types × kernels
/// assert!(rows.iter().all(|row| row.ok), "{:?}", rows.iter().find(|row| !row.ok));
/// reduce::by_key_bench::print_table(&rows);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn bench(reducer: &Reducer, n: usize, keys: u32, runs: usize) -> Result<Vec<ByKeyRow>> {
    if n == 0 || keys == 0 || runs == 0 {
        return Err(Error::Invalid(format!(
            "by-key benchmark: n = {n}, keys = {keys}, runs = {runs}: each must be at least 1"
        )));
    }
    let mut rows = Vec::new();
    for dist in KeyDist::ALL {
        let key_data = generate_keys(dist, n, keys, BENCH_SEED)?;
        let groups = groups_per_warp(&key_data);
        rows.extend(bench_type::<f32>(reducer, dist, &key_data, groups, keys, runs)?);
        rows.extend(bench_type::<f64>(reducer, dist, &key_data, groups, keys, runs)?);
    }
    Ok(rows)
}

/// [`bench()`] for one value type and one key distribution.
fn bench_type<T: TestValue>(
    reducer: &Reducer,
    dist: KeyDist,
    keys: &[u32],
    groups: f64,
    num_keys: u32,
    runs: usize,
) -> Result<Vec<ByKeyRow>> {
    let n = keys.len();
    let values: Vec<T> = generate(Pattern::Random, n, BENCH_SEED)?;
    let expected = reference(keys, &values, num_keys as usize)?;
    let gpu = reducer.gpu();
    let stream = gpu.stream();
    let mut d_keys = gpu.alloc::<u32>(n, "the benchmark keys")?;
    stream.memcpy_htod(keys, &mut d_keys).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    let mut d_values = gpu.alloc::<T>(n, "the benchmark values")?;
    stream.memcpy_htod(&values, &mut d_values).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    let mut d_sums: CudaSlice<T> = gpu.alloc(num_keys as usize, "the per-key sums")?;
    let (keys_view, values_view) = (d_keys.slice(..n), d_values.slice(..n));
    // More copies of keys and values, so that the timed runs, cycling
    // through them, read from DRAM and not from the L2 (the seed's 80 MB
    // against an H200's 60 MB L2).
    let (free, _) = gpu.mem_info()?;
    let copies = copies_wanted(gpu.info().l2_bytes, n * (4 + size_of::<T>()), free);
    let mut spare = Vec::new();
    for _ in 1..copies {
        let mut k = gpu.alloc::<u32>(n, "a copy of the benchmark keys")?;
        stream.memcpy_dtod(&d_keys, &mut k).map_err(Error::from_driver("cuMemcpyDtoD"))?;
        let mut v = gpu.alloc::<T>(n, "a copy of the benchmark values")?;
        stream.memcpy_dtod(&d_values, &mut v).map_err(Error::from_driver("cuMemcpyDtoD"))?;
        spare.push((k, v));
    }
    let copy = |i: usize| match i % copies {
        0 => (keys_view.slice(..), values_view.slice(..)),
        c => (spare[c - 1].0.slice(..n), spare[c - 1].1.slice(..n)),
    };

    let mut rows: Vec<ByKeyRow> = Vec::new();
    for kernel in by_key::kernels() {
        let case = format!("by_key {} {} {} n={n} keys={num_keys}", kernel.id, T::NAME, dist.name());
        let opts = Options { kernel: Some(kernel), ..Options::default() };
        // the check, through the same call as the timed runs (queued: the
        // sums zeroed, then the kernel)
        reducer.reduce_by_key_into(&keys_view, &values_view, &mut d_sums.as_view_mut(), num_keys as usize, &opts)?;
        let got = stream.clone_dtoh(&d_sums).map_err(Error::from_driver("cuMemcpyDtoH"))?;
        let error = expected.check(&got, &case, false).err().map(|e| e.to_string());

        let stats = time_runs(gpu, WARMUP, runs, |i| {
            let (keys, values) = copy(i);
            reducer.reduce_by_key_into(&keys, &values, &mut d_sums.as_view_mut(), num_keys as usize, &opts)
        })?;
        let plan = dispatch::by_key_plan(kernel, T::DTYPE, n, gpu)?;
        let baseline = rows.first().map_or(stats.median_ms, |r| r.stats.median_ms);
        rows.push(ByKeyRow {
            kernel: kernel.id,
            ty: T::NAME,
            dist: dist.name(),
            n,
            num_keys,
            groups_per_warp: groups,
            grid: plan.levels[0].launches[0].grid,
            block: plan.block,
            elements_per_s: n as f64 / (stats.median_ms * 1e-3),
            speedup: baseline / stats.median_ms,
            ok: error.is_none(),
            error,
            stats,
        });
    }
    Ok(rows)
}

/// Print the rows as two Markdown tables: every measurement, then the
/// speedup over `atomic` per distribution (rows) and type × kernel
/// (columns), as the seed's figure.
///
/// ```
/// reduce::by_key_bench::print_table(&[]); // no rows: only the header of the first table
/// ```
pub fn print_table(rows: &[ByKeyRow]) {
    print!("{}", format_table(rows));
}

/// The text [`print_table`] prints.
///
/// ```
/// let text = reduce::by_key_bench::format_table(&[]);
/// assert!(text.starts_with("| type | keys |"));
/// ```
pub fn format_table(rows: &[ByKeyRow]) -> String {
    let mut out = String::from(
        "| type | keys | groups/warp | kernel | median ms | min ms | Gelem/s | speedup vs atomic | check |\n\
         |---|---|---:|---|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        out += &format!(
            "| {} | {} | {:.2} | {} | {:.3} | {:.3} | {:.2} | {:.2}x | {} |\n",
            r.ty,
            r.dist,
            r.groups_per_warp,
            r.kernel,
            r.stats.median_ms,
            r.stats.min_ms,
            r.elements_per_s / 1e9,
            r.speedup,
            if r.ok { "ok" } else { "MISMATCH" }
        );
    }
    if let Some(first) = rows.first() {
        out += &format!("\nSpeedup over `atomic` (median times; n = {}, {} keys):\n\n", first.n, first.num_keys);
        let mut dists: Vec<&str> = Vec::new();
        let mut columns: Vec<(&str, &str)> = Vec::new();
        for r in rows.iter().filter(|r| r.kernel != reduction::registry::BY_KEY_ATOMIC.id) {
            if !dists.contains(&r.dist.as_str()) {
                dists.push(&r.dist);
            }
            if !columns.contains(&(r.ty, r.kernel)) {
                columns.push((r.ty, r.kernel));
            }
        }
        out += "| keys |";
        for (ty, kernel) in &columns {
            out += &format!(" {ty} {kernel} |");
        }
        out += "\n|---|";
        out += &"---:|".repeat(columns.len());
        out += "\n";
        for dist in dists {
            out += &format!("| {dist} |");
            for (ty, kernel) in &columns {
                match rows.iter().find(|r| r.dist == dist && r.ty == *ty && r.kernel == *kernel) {
                    Some(r) => out += &format!(" {:.2}x |", r.speedup),
                    None => out += " |",
                }
            }
            out += "\n";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_line_per_row_and_a_speedup_matrix() {
        let row = |kernel: &'static str, ty: &'static str, ms: f64| ByKeyRow {
            kernel,
            ty,
            dist: "sorted".into(),
            n: 100,
            num_keys: 10,
            groups_per_warp: 3.5,
            grid: 1,
            block: 256,
            stats: Stats::of(vec![ms]).unwrap(),
            elements_per_s: 100.0 / (ms * 1e-3),
            speedup: 2.0 / ms,
            ok: ty == "f32",
            error: None,
        };
        let rows =
            [row("atomic", "f32", 2.0), row("match", "f32", 1.0), row("atomic", "f64", 2.0), row("match", "f64", 4.0)];
        let text = format_table(&rows);
        assert!(text.contains("| f64 | sorted | 3.50 | match | 4.000 |"), "{text}");
        assert!(text.contains("| keys | f32 match | f64 match |"), "{text}");
        assert!(text.contains("| sorted | 2.00x | 0.50x |"), "{text}");
        assert!(text.contains("MISMATCH"), "{text}");
    }
}
