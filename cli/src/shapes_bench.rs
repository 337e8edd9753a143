//! Timing rows, columns and segments (`Reducer::reduce_shaped`): the five
//! matrices of 2^28 elements (1 GiB of f32) along both axes, power-law
//! segments of 2^28 elements, and sweeps of the strategies (lanes per row,
//! column chunks) behind the automatic choice, of `f32` or another float
//! type. Each case is checked against the CPU once (the data are odd
//! multiples of 1/8, whose sums are exact, so sums are checked bit for
//! bit), with the output poisoned first; then the launch alone is timed
//! between CUDA events, the median of `runs`. GB/s count the bytes moved:
//! the matrix's (or segments') input, the offsets and the results.
//! The vendor side is
//! `cli/baselines/shapes_vendor.py`, run in the same sitting.

use reduction::cudarc::driver::{CudaSlice, DeviceRepr};
use reduction::op::Reduction;
use reduction::{
    Element, Error, Op, Options, Reducer, Result,
    shape::{Matrix, Shape, Strategy},
};
use serde::{Deserialize, Serialize};
use testkit::data::{Pattern, Sample, generate, unit};
use testkit::ops::{Number, Outcome, judge, shaped_depth};
use testkit::poisoned::Poisoned;

use crate::bench::WARMUP;
use crate::timing::time_runs;

/// Elements of the input every case reads from: 1 GiB of f32.
pub const ELEMENTS: usize = 1 << 28;

/// What one case reduces.
#[derive(Clone, Debug)]
pub enum Case {
    /// A matrix along axis 1 (rows) or 0 (columns).
    Axis(Matrix, usize),
    /// CSR segments of these lengths, back to back from element 0.
    Segments(String, Vec<u64>),
}

impl Case {
    /// `16384x16384 axis 1`, `segments loguniform`.
    pub fn name(&self) -> String {
        match self {
            Case::Axis(m, axis) => format!("{}x{} axis {axis}", m.rows, m.cols),
            Case::Segments(name, l) => format!("segments {name} ({} segments)", l.len()),
        }
    }

    fn elements(&self) -> usize {
        match self {
            Case::Axis(m, _) => m.rows * m.cols,
            Case::Segments(_, l) => l.iter().sum::<u64>() as usize,
        }
    }

    /// Bytes a reduction of the case moves: the input of `size`-byte
    /// elements, the segments' 64-bit offsets, and `result_bytes` of
    /// results.
    ///
    /// ```
    /// use reduce::shapes_bench::Case;
    /// assert_eq!(Case::Segments("two".into(), vec![3, 5]).bytes_moved(4, 2 * 4), 8 * 4 + 3 * 8 + 2 * 4);
    /// ```
    pub fn bytes_moved(&self, size: usize, result_bytes: usize) -> usize {
        let offsets = match self {
            Case::Axis(..) => 0,
            Case::Segments(_, l) => 8 * (l.len() + 1),
        };
        size * self.elements() + offsets + result_bytes
    }
}

/// One case's check and timing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShapeRow {
    /// [`Case::name`].
    pub case: String,
    /// `auto`, `lanes 4`, `chunks 16`: the strategy asked for.
    pub strategy: String,
    /// Results (rows, columns or segments).
    pub results: usize,
    /// Median time between the CUDA events around the launch, µs.
    pub median_us: f64,
    /// Bytes moved per second at the median, GB/s: the input, the
    /// offsets and the results ([`Case::bytes_moved`]).
    pub gbps: f64,
    /// Whether every result equals the CPU's.
    pub ok: bool,
}

/// The five matrices of 1 GiB of f32 each, both axes.
pub fn matrices() -> Vec<Case> {
    let shapes = [(16384, 16384), (1 << 20, 256), (256, 1 << 20), (1 << 24, 16), (4096, 65536)];
    shapes.iter().flat_map(|&(r, c)| [1, 0].map(|axis| Case::Axis(Matrix::new(r, c), axis))).collect()
}

/// Segment lengths `law(u)` for `draws` uniform `u` in (0, 1) from `seed`,
/// kept while their sum stays within `total`.
fn lengths_of(total: usize, draws: usize, seed: u64, law: impl Fn(f64) -> u64) -> Result<Vec<u64>> {
    let u: Vec<u64> = generate(Pattern::Random, draws, seed)?;
    let mut lengths = Vec::new();
    let mut sum = 0u64;
    for r in u {
        let l = law(unit(r));
        if sum + l > total as u64 {
            break;
        }
        sum += l;
        lengths.push(l);
    }
    Ok(lengths)
}

/// Segment lengths summing to at most `total`: `⌊10^(6u)⌋` for uniform `u`
/// (log-uniform from 1 to 10^6: a power law, density ∝ 1/length) or, with
/// `pareto`, `⌊u^-2⌋` capped at 10^6 (Pareto with exponent 1.5: mostly
/// short segments, a heavy tail).
pub fn power_law(total: usize, pareto: bool, seed: u64) -> Result<Vec<u64>> {
    if pareto {
        lengths_of(total, 1 << 20, seed, |u| u.powf(-2.0).min(1e6) as u64)
    } else {
        lengths_of(total, 1 << 20, seed, |u| 10f64.powf(6.0 * u) as u64)
    }
}

/// The segment cases' names, as `reduce shapes` runs them and `reduce run
/// --segments` takes them.
pub const SEGMENT_CASES: [&str; 6] = ["loguniform", "pareto1.5", "uniform32", "uniform512", "one", "zipf2"];

/// The segment case `name` (one of [`SEGMENT_CASES`]) over at most
/// [`ELEMENTS`]: log-uniform and Pareto lengths ([`power_law`]); 2^24
/// segments of lengths uniform in 0..32 and 2^20 in 0..512 (empty ones
/// among them); one segment of 2^28; Zipf's law with exponent 2 (`P(length
/// ≥ k) = 1/k`, capped at 10^6: mostly a few elements, half the elements
/// in segments of 1000 or more). `None` for another name.
pub fn segment_case(name: &str) -> Result<Option<Case>> {
    let lengths = match name {
        "loguniform" => power_law(ELEMENTS, false, 5)?,
        "pareto1.5" => power_law(ELEMENTS, true, 6)?,
        "uniform32" => lengths_of(ELEMENTS, 1 << 24, 7, |u| (u * 32.0) as u64)?,
        "uniform512" => lengths_of(ELEMENTS, 1 << 20, 8, |u| (u * 512.0) as u64)?,
        "one" => vec![ELEMENTS as u64],
        "zipf2" => lengths_of(ELEMENTS, 1 << 25, 9, |u| (1.0 / u).min(1e6) as u64)?,
        _ => return Ok(None),
    };
    Ok(Some(Case::Segments(name.into(), lengths)))
}

/// Every segment case, in [`SEGMENT_CASES`]' order.
pub fn segment_cases() -> Result<Vec<Case>> {
    SEGMENT_CASES.iter().filter_map(|name| segment_case(name).transpose()).collect()
}

/// Rows of 16 to 65536 elements (1 GiB each) for the lanes sweep.
pub fn sweep_cases() -> Vec<Case> {
    [16usize, 64, 256, 1024, 4096, 65536].iter().map(|&c| Case::Axis(Matrix::new(ELEMENTS / c, c), 1)).collect()
}

/// Elements of the input [`check_cases`] read from.
pub const CHECK_ELEMENTS: usize = 1 << 17;

/// The small cases `reduce check` runs (with `--kernel all`, the driver
/// program of `cargo xtask sanitize`), one for each shaped kernel on
/// 16-byte-aligned input: segments of 0 to 16 elements (`segments_paired`
/// where the operation has that form, else `segments_staged`), of 0 to 199
/// (`segments_staged`), a heavy tail in teams (`segments_tailed`), a heavy
/// tail long on average (for 4-byte elements and accumulators wider than
/// them, as the arg-max's, the busiest tiles first: `segments_scheduled`;
/// `segments_staged` otherwise), teams of 4 lanes
/// (`segments`), long segments over several tiles, one empty and
/// one of 3 elements among them (`segments_long`), rows of 8
/// (`rows_short`), rows of 8192 in 16 KiB tiles (`rows_long`) and columns.
pub fn check_cases() -> Vec<(Case, Strategy)> {
    let lengths = |count: u64, f: fn(u64) -> u64| (0..count).map(f).collect::<Vec<u64>>();
    let tiny = lengths(4001, |k| (k * 7919) % 17);
    let short = lengths(500, |k| (k * 7919) % 200);
    let tail = lengths(4001, |k| if k % 500 == 250 { 5000 } else { (k * 7919) % 17 });
    let heavy = lengths(400, |k| if k % 100 == 50 { 30_000 } else { 1 + (k * 7919) % 8 });
    let teams = Strategy::Segments { tile_bytes: 0, lanes: 4 };
    // 64 KiB a segment on average for 2-byte elements: long for every type
    let long = vec![0, (1 << 16) - 3, 3, 1 << 16];
    vec![
        (Case::Segments("0..16".into(), tiny), Strategy::Auto),
        (Case::Segments("0..199".into(), short.clone()), Strategy::Auto),
        (Case::Segments("tail".into(), tail), Strategy::Segments { tile_bytes: 0, lanes: 0 }),
        (Case::Segments("heavy".into(), heavy), Strategy::Auto),
        (Case::Segments("0..199".into(), short), teams),
        (Case::Segments("long".into(), long), Strategy::Auto),
        (Case::Axis(Matrix::new(1024, 8), 1), Strategy::Auto),
        (Case::Axis(Matrix::new(4, 8192), 1), Strategy::Segments { tile_bytes: 1 << 14, lanes: 0 }),
        (Case::Axis(Matrix::new(257, 100), 0), Strategy::Auto),
    ]
}

/// The input every case reads, on the host and the GPU: `ELEMENTS` odd
/// multiples of 1/8 (exact sums).
pub fn input<T: Element + Sample + Default + DeviceRepr>(r: &Reducer) -> Result<(Vec<T>, CudaSlice<T>)> {
    input_of(r, ELEMENTS)
}

/// [`input`] of `elements`.
pub fn input_of<T: Element + Sample + Default + DeviceRepr>(
    r: &Reducer,
    elements: usize,
) -> Result<(Vec<T>, CudaSlice<T>)> {
    let host: Vec<T> = generate(Pattern::Large, elements, 1)?;
    let device = r.gpu().stream().clone_htod(&host).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    Ok((host, device))
}

/// Whether `ok(part, result)` holds for each of `case`'s `got` results
/// and its elements in `host` (a row, a column, a segment), and `got`
/// holds one result per part. Judged on all the CPU's threads, each a
/// contiguous run of the results: on one thread a 1 GiB case took about
/// 9 s, the columns of 16384x16384 gathered from every row, once per
/// case and per strategy of a sweep. A thread that panics fails the check.
///
/// ```
/// use reduce::shapes_bench::{Case, every_part};
/// use reduction::shape::Matrix;
/// let host = [1, 2, 3, 4, 5, 6]; // two rows of three
/// let sum = |x: &[i32], g: i32| x.iter().sum::<i32>() == g;
/// assert!(every_part(&Case::Axis(Matrix::new(2, 3), 1), &host, &[6, 15], sum));
/// assert!(every_part(&Case::Axis(Matrix::new(2, 3), 0), &host, &[5, 7, 9], sum));
/// assert!(every_part(&Case::Segments("s".into(), vec![2, 0, 4]), &host, &[3, 0, 18], sum));
/// assert!(!every_part(&Case::Axis(Matrix::new(2, 3), 0), &host, &[5, 7, 8], sum)); // a wrong result
/// assert!(!every_part(&Case::Axis(Matrix::new(2, 3), 1), &host, &[6], sum)); // one missing
/// ```
pub fn every_part<T: Copy + Sync, O: Copy + Sync>(
    case: &Case,
    host: &[T],
    got: &[O],
    ok: impl Fn(&[T], O) -> bool + Sync,
) -> bool {
    let offsets = match case {
        Case::Segments(_, l) => reduction::shape::offsets_of(l, 0),
        Case::Axis(..) => Vec::new(),
    };
    let count = match case {
        Case::Axis(m, 1) => m.rows,
        Case::Axis(m, _) => m.cols,
        Case::Segments(_, l) => l.len(),
    };
    if got.len() != count {
        return false;
    }
    let part = |i: usize| -> Vec<T> {
        match case {
            Case::Axis(m, 1) => host[i * m.pitch..][..m.cols].to_vec(),
            Case::Axis(m, _) => (0..m.rows).map(|r| host[r * m.pitch + i]).collect(),
            Case::Segments(..) => host[offsets[i] as usize..offsets[i + 1] as usize].to_vec(),
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, count.max(1));
    let per = count.div_ceil(threads);
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..threads)
            .map(|t| {
                let (part, ok) = (&part, &ok);
                s.spawn(move || (t * per..((t + 1) * per).min(count)).all(|i| ok(&part(i), got[i])))
            })
            .collect();
        runs.into_iter().all(|run| run.join().unwrap_or(false))
    })
}

/// What `reduce shapes` says it reduces each part to for `op`.
///
/// ```
/// use reduction::Op;
/// assert_eq!(reduce::shapes_bench::what(Op::Sum), "sums");
/// assert_eq!(reduce::shapes_bench::what(Op::ArgMax), "argmax");
/// ```
pub fn what(op: Op) -> &'static str {
    match op {
        Op::Sum => "sums",
        Op::Moments => "means and M2 (moments)",
        other => other.name(),
    }
}

/// Check `case` reduced by `R` (the operation `op`) over `T` with
/// `strategy` against the CPU (the test kit's `judge`: sums bit for bit,
/// the data being odd multiples of 1/8; indices and picked values exactly;
/// other results within `shaped_depth`'s bound), then time `runs`
/// launches (none: checked only, the median and GB/s 0).
#[allow(clippy::too_many_arguments)]
pub fn measure<R: Reduction<T>, T: Element + Number + Outcome + Sync>(
    r: &Reducer,
    op: Op,
    case: &Case,
    strategy: Strategy,
    opts: &Options,
    host: &[T],
    device: &CudaSlice<T>,
    runs: usize,
) -> Result<ShapeRow>
where
    R::Out: Outcome + Sync,
{
    let offsets;
    let shape = match case {
        Case::Axis(m, axis) => Shape::axis(*m, *axis)?,
        Case::Segments(_, lengths) => {
            offsets = r.offsets(&reduction::shape::offsets_of(lengths, 0))?;
            Shape::Segments(&offsets)
        }
    };
    let results = shape.results();
    let opts = Options { strategy, ..*opts };
    let view = device.as_view();
    // poisoned, so that a result never written cannot pass
    let mut out = Poisoned::<R::Out>::many(r.gpu(), results)?;
    let launch = |out: &mut Poisoned<R::Out>| -> Result<()> {
        r.reduce_shaped_into::<R, T, _>(&[&view], shape, &mut out.view()?, &opts)
    };
    launch(&mut out)?;
    let got = out.read_all(r.gpu())?;
    let ok = every_part(case, host, &got, |x, g| judge::<R, T>(op, x, x, g, shaped_depth::<T>(op, x.len()), opts.p).0);
    let (median_us, gbps) = match runs {
        0 => (0.0, 0.0),
        _ => {
            let stats = time_runs(r.gpu(), WARMUP, runs, |_| launch(&mut out))?;
            let bytes = case.bytes_moved(size_of::<T>(), results * size_of::<R::Out>());
            (stats.median_ms * 1e3, stats.bandwidth(bytes) / 1e9)
        }
    };
    Ok(ShapeRow { case: case.name(), strategy: label(strategy), results, median_us, gbps, ok })
}

/// How a strategy is printed: `auto`, `tile 64K lanes 8`, `staged tile 32K`, `wide 2 chunks 4`
/// (`*` for a choice left automatic).
///
/// ```
/// use reduction::shape::Strategy;
/// assert_eq!(reduce::shapes_bench::label(Strategy::Segments { tile_bytes: 1 << 16, lanes: 0 }), "tile 64K lanes *");
/// assert_eq!(reduce::shapes_bench::label(Strategy::Staged { tile_bytes: 0 }), "staged tile *");
/// assert_eq!(reduce::shapes_bench::label(Strategy::Columns { wide: 0, chunks: 4 }), "wide * chunks 4");
/// ```
pub fn label(strategy: Strategy) -> String {
    let auto = |v: u32, unit: &str| if v == 0 { "*".to_string() } else { format!("{v}{unit}") };
    match strategy {
        Strategy::Auto => "auto".into(),
        Strategy::Segments { tile_bytes, lanes } => {
            format!("tile {} lanes {}", auto(tile_bytes >> 10, "K"), auto(lanes, ""))
        }
        Strategy::Staged { tile_bytes } => format!("staged tile {}", auto(tile_bytes >> 10, "K")),
        Strategy::Columns { wide, chunks } => format!("wide {} chunks {}", auto(wide, ""), auto(chunks, "")),
    }
}

/// One line of the table.
pub fn line(row: &ShapeRow) -> String {
    format!(
        "{:<36} {:<18} {:>9} {:>10.1} {:>8.0}  {}",
        row.case,
        row.strategy,
        row.results,
        row.median_us,
        row.gbps,
        if row.ok { "OK" } else { "MISMATCH" }
    )
}

/// The table's header.
pub fn header() -> String {
    format!("{:<36} {:<10} {:>9} {:>10} {:>8}  check", "case", "strategy", "results", "median µs", "GB/s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduction::dispatch::{
        ShapeKernel, heavy_tail_of, long_segments_of, paired_segments_of, shape_plan, short_segments_of,
        staged_scheduled_of,
    };
    use reduction::{DType, shape::Fit};

    /// The segments of [`check_cases`] are where the planner sends them
    /// for 4-byte elements (their offsets need a GPU: the planner's tests
    /// of their lengths), the rows and columns planned as the f32 sum's
    /// (`rows_short`, `rows_long`, `columns`), and every case fits
    /// [`CHECK_ELEMENTS`].
    #[test]
    fn check_cases_reach_each_shaped_kernel() {
        let cases = check_cases();
        let stats: Vec<(u64, u64, u64)> = cases
            .iter()
            .filter_map(|(c, _)| match c {
                Case::Segments(_, l) => Some((l.iter().copied().max()?, l.iter().sum(), l.len() as u64)),
                Case::Axis(..) => None,
            })
            .collect();
        let [(_, tiny, tiny_count), (longest, short, count), (tail_longest, tail, tail_count), heavy, _, long] =
            stats[..]
        else {
            panic!("{} segment cases", stats.len());
        };
        assert!(long_segments_of(long.0, long.1, long.2, 2));
        assert!(paired_segments_of(tiny, tiny_count, 4));
        assert!(short_segments_of(short, count, 4) && !paired_segments_of(short, count, 4));
        assert!(!heavy_tail_of(longest, short, count) && heavy_tail_of(tail_longest, tail, tail_count));
        assert!(!staged_scheduled_of(tail_longest, tail, tail_count, 4, 16));
        let scheduled = |size, acc| staged_scheduled_of(heavy.0, heavy.1, heavy.2, size, acc);
        assert!(scheduled(4, 16) && !scheduled(4, 4) && !scheduled(2, 16));
        assert!(cases.iter().all(|(c, _)| c.elements() <= CHECK_ELEMENTS));
        let planned: Vec<ShapeKernel> = cases
            .iter()
            .filter_map(|(c, strategy)| match c {
                Case::Axis(m, axis) => {
                    let shape = Shape::axis(*m, *axis).unwrap();
                    Some(shape_plan(Op::Sum, DType::F32, 4, CHECK_ELEMENTS, shape, *strategy, true, Fit::PORTABLE))
                }
                Case::Segments(..) => None,
            })
            .map(|plan| plan.unwrap().kernel)
            .collect();
        assert_eq!(planned, [ShapeKernel::RowsShort, ShapeKernel::RowsLong, ShapeKernel::Columns]);
    }
}
