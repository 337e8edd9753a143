//! What a user's call costs: `r.sum(&device_slice)` timed on the host clock
//! (launches, the wait, the result on the host), next to the same reduction
//! between CUDA events, planned before the first event (the kernels alone)
//! and planned inside the events (what the benchmark timed before
//! `Reducer::prepare`). `reduce latency` prints it; the README's figures
//! come from there. The two event-timed columns are queued from the host
//! loop or behind a hold kernel ([`Timing`]): queued, the host's work
//! (planning included) leaves the events, and both columns hold the GPU's
//! work alone.

use std::time::Instant;

use reduction::{Element, Finish, Options, Reducer, Result, op::ReduceOp};
use serde::Serialize;
use testkit::data::{Pattern, Sample};
use testkit::reference::Reference;

use crate::bench::{Rotated, WARMUP, measure_with};
use crate::timing::{Stats, Timing, time_runs_with};

/// One size: the three times, in microseconds (medians).
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// Elements.
    pub n: usize,
    /// How the event-timed columns' runs were queued.
    pub timing: Timing,
    /// Between CUDA events, planned before: the kernels alone.
    pub kernels_us: f64,
    /// Between CUDA events, planned inside them (host work in the region).
    pub planned_inside_us: f64,
    /// `reducer.reduce::<O, T>(&[&view], &Options::default())` on the host clock: the user's call.
    pub call_us: f64,
    /// Where the call's time goes, on the host clock: planning alone
    /// (`Reducer::prepare`, no GPU work).
    pub plan_us: f64,
    /// Queueing the prepared launches and waiting for them (result left on
    /// the device).
    pub launch_wait_us: f64,
    /// Waiting on the idle stream.
    pub wait_us: f64,
    /// A new `Reducer`'s first call on the host clock: the reducer made,
    /// the kernel's entry loaded (the driver's JIT, or its cache on disk:
    /// `CUDA_CACHE_DISABLE=1` makes every load a JIT), the launch and the
    /// wait. Once per process before it, the embedded PTX is inflated.
    pub first_call_us: f64,
    /// Whether the default kernel's result matched the CPU.
    pub ok: bool,
}

/// Measure each size with `runs` timed repetitions of each kind (inputs
/// rotated past the L2, the default kernel with at most `max_grid` blocks,
/// results checked once), the event-timed ones queued as `timing` says.
pub fn latency<O: ReduceOp<T>, T: Element + Reference + Sample>(
    r: &Reducer,
    sizes: &[usize],
    runs: usize,
    seed: u64,
    max_grid: Option<u32>,
    timing: Timing,
) -> Result<Vec<Latency>> {
    let mut rows = Vec::new();
    for &n in sizes {
        let input = Rotated::<T>::new(r, Pattern::Random, n, seed)?;
        let opts = Options { max_grid, ..Options::default() };
        let start = Instant::now();
        let fresh = Reducer::with_ptx(r.gpu().info().ordinal, r.gpu().ptx().clone())?;
        fresh.reduce::<O, T, _>(&[&input.copy(0).slice(..n)], &opts)?;
        let first_call_us = start.elapsed().as_secs_f64() * 1e6;
        drop(fresh);
        let plan = r.plan::<O, T>(n, &opts)?;
        let (kernel, block) = (plan.kernel, plan.block);
        let (checked, timed) = measure_with::<O, T>(r, kernel, block, Finish::Gpu, &input, runs, timing)?;
        let gpu = r.gpu();
        let mut out = gpu.alloc::<T>(1, "the result")?;
        let inside = time_runs_with(gpu, timing, WARMUP, runs, |i| {
            r.reduce_into::<O, T, _>(&[&input.copy(i).slice(..n)], &mut out.as_view_mut(), &opts)
        })?;
        let call = host_clock(runs, |i| r.reduce::<O, T, _>(&[&input.copy(i).slice(..n)], &opts).map(drop))?;
        let plan = host_clock(runs, |_| r.prepare::<O, T>(n, &opts).map(drop))?;
        let prepared = r.prepare::<O, T>(n, &opts)?;
        let launch_wait = host_clock(runs, |i| {
            r.enqueue(&prepared, &[&input.copy(i).slice(..n)], &mut out.as_view_mut())?;
            gpu.synchronize()
        })?;
        let wait = host_clock(runs, |_| gpu.synchronize())?;
        rows.push(Latency {
            n,
            timing,
            kernels_us: timed.stats.median_ms * 1e3,
            planned_inside_us: inside.median_ms * 1e3,
            call_us: call,
            plan_us: plan,
            launch_wait_us: launch_wait,
            wait_us: wait,
            first_call_us,
            ok: checked.ok,
        });
    }
    Ok(rows)
}

/// The median of `runs` calls of `f(i)` (after [`WARMUP`] untimed ones) on
/// the host clock, in microseconds.
fn host_clock(runs: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<f64> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..WARMUP + runs {
        let start = Instant::now();
        f(i)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if i >= WARMUP {
            times.push(ms);
        }
    }
    Ok(Stats::of(times)?.median_ms * 1e3)
}

/// The rows as a Markdown table.
///
/// ```
/// use reduce::latency::{Latency, table};
/// let row = Latency { n: 1024, timing: Default::default(), kernels_us: 5.5, planned_inside_us: 6.0, call_us: 9.0, plan_us: 0.4, launch_wait_us: 8.0, wait_us: 0.2, first_call_us: 2500.0, ok: true };
/// assert!(table(&[row]).contains("| 1024 | 5.5 | 6.0 | 9.0 | 0.4 | 8.0 | 0.2 | 2500 | ok |"));
/// ```
pub fn table(rows: &[Latency]) -> String {
    let mut s = String::from(
        "| n | kernels, µs (events, planned before) | planned inside the events, µs | user call `r.sum(&view)`, µs (host clock) | of which planning | launch + wait | wait alone | a new reducer's first call, µs | check |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {} |\n",
            r.n,
            r.kernels_us,
            r.planned_inside_us,
            r.call_us,
            r.plan_us,
            r.launch_wait_us,
            r.wait_us,
            r.first_call_us,
            if r.ok { "ok" } else { "MISMATCH" }
        );
    }
    s
}
