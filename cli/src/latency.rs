//! What a user's call costs: `r.sum(&device_slice)` timed on the host clock
//! (launches, the wait, the result on the host), next to the same reduction
//! between CUDA events, planned before the first event (the kernels alone)
//! and planned inside the events (what the benchmark timed before
//! `Reducer::prepare`). `reduce latency` prints it; the README's figures
//! come from there.

use std::time::Instant;

use reduction::check::data::{Pattern, Sample};
use reduction::check::reference::Reference;
use reduction::{Element, Finish, Options, ReduceOp, Reducer, Result};
use serde::Serialize;

use crate::bench::{Rotated, WARMUP, measure};
use crate::timing::{Stats, time_runs};

/// One size: the three times, in microseconds (medians).
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// Elements.
    pub n: usize,
    /// Between CUDA events, planned before: the kernels alone.
    pub kernels_us: f64,
    /// Between CUDA events, planned inside them (host work in the region).
    pub planned_inside_us: f64,
    /// `reducer.reduce::<O, T>(&view)` on the host clock: the user's call.
    pub call_us: f64,
    /// Whether the default kernel's result matched the CPU.
    pub ok: bool,
}

/// Measure each size with `runs` timed repetitions of each kind (inputs
/// rotated past the L2, the default kernel, results checked once).
pub fn latency<O: ReduceOp<T>, T: Element + Reference + Sample>(
    r: &Reducer,
    sizes: &[usize],
    runs: usize,
    seed: u64,
) -> Result<Vec<Latency>> {
    let mut rows = Vec::new();
    for &n in sizes {
        let input = Rotated::<T>::new(r, Pattern::Random, n, seed)?;
        let opts = Options::default();
        let (kernel, block) = r.choose(n, &opts)?;
        let (checked, timed) = measure::<O, T>(r, kernel, block, Finish::Gpu, &input, runs)?;
        let gpu = r.gpu();
        let mut out = gpu.alloc::<T>(1, "the result")?;
        let inside = time_runs(gpu, WARMUP, runs, |i| {
            r.reduce_into::<O, T>(&input.copy(i).slice(..n), &mut out.as_view_mut(), &opts)
        })?;
        let mut times = Vec::with_capacity(runs);
        for i in 0..WARMUP + runs {
            let view = input.copy(i).slice(..n);
            let start = Instant::now();
            let v = r.reduce::<O, T, _>(&view)?;
            let elapsed = start.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(v);
            if i >= WARMUP {
                times.push(elapsed);
            }
        }
        let call = Stats::of(times)?;
        rows.push(Latency {
            n,
            kernels_us: timed.stats.median_ms * 1e3,
            planned_inside_us: inside.median_ms * 1e3,
            call_us: call.median_ms * 1e3,
            ok: checked.ok,
        });
    }
    Ok(rows)
}

/// The rows as a Markdown table.
///
/// ```
/// let rows = [reduce::latency::Latency { n: 1024, kernels_us: 5.5, planned_inside_us: 6.0, call_us: 9.0, ok: true }];
/// assert!(reduce::latency::table(&rows).contains("| 1024 | 5.5 | 6.0 | 9.0 | ok |"));
/// ```
pub fn table(rows: &[Latency]) -> String {
    let mut s = String::from(
        "| n | kernels, µs (events, planned before) | planned inside the events, µs | user call `r.sum(&view)`, µs (host clock) | check |\n|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {:.1} | {:.1} | {:.1} | {} |\n",
            r.n,
            r.kernels_us,
            r.planned_inside_us,
            r.call_us,
            if r.ok { "ok" } else { "MISMATCH" }
        );
    }
    s
}
