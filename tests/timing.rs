//! Queued timing (`cli/src/timing.rs`, `testkit::hold`): the hold kernel
//! keeps the work behind it waiting until the host lets it go, reports a
//! timeout as an error, is let go when dropped; and runs timed behind it
//! measure no more than the same runs queued from the host loop.
//!
//! Every trial holds the process's one stream, so each runs alone.

mod common;

use std::time::{Duration, Instant};

use common::{ensure, gpu_trial_alone, reducer, run};
use libtest_mimic::{Failed, Trial};
use reduce::timing::{QUEUED_BATCH, Timing, time_runs_with};
use reduction::{Error, Options, Reducer, Sum};
use testkit::hold::Hold;

fn main() {
    let trials: Vec<Trial> = vec![
        gpu_trial_alone("timing::hold_keeps_the_work_behind_it_waiting", holds_until_released),
        gpu_trial_alone("timing::hold_timeout_is_an_error", timeout_is_an_error),
        gpu_trial_alone("timing::dropped_hold_lets_the_stream_go", drop_releases),
        gpu_trial_alone("timing::failed_work_in_a_batch_releases_the_hold", failed_work_releases),
        gpu_trial_alone("timing::queued_is_no_slower_than_the_host_loop", queued_vs_host_loop),
    ];
    run(trials)
}

/// An event recorded behind a launched hold is not reached until release.
fn holds_until_released() -> Result<(), Failed> {
    let gpu = reducer().gpu();
    let mut hold = Hold::new(gpu)?;
    hold.launch(Duration::from_secs(5))?;
    let behind = gpu.timing_event()?;
    behind.record(gpu.stream()).map_err(|e| format!("cuEventRecord: {e}"))?;
    std::thread::sleep(Duration::from_millis(50));
    ensure(!behind.is_complete(), || "an event queued behind the hold was reached before the release".into())?;
    hold.release()?;
    ensure(behind.is_complete(), || "the stream is idle after release, but the event is not complete".into())?;
    // the same hold can be launched again
    hold.launch(Duration::from_secs(5))?;
    hold.release()?;
    Ok(())
}

/// A hold the host comes back to too late reports `HoldTimedOut`, and can
/// be launched again afterwards.
fn timeout_is_an_error() -> Result<(), Failed> {
    let gpu = reducer().gpu();
    let mut hold = Hold::new(gpu)?;
    hold.launch(Duration::from_millis(5))?;
    std::thread::sleep(Duration::from_millis(200));
    match hold.release() {
        Err(Error::HoldTimedOut { timeout_ms }) => ensure(timeout_ms == 5.0, || format!("timeout_ms {timeout_ms}"))?,
        other => return Err(format!("released 200 ms after a 5 ms timeout: {other:?}, expected HoldTimedOut").into()),
    }
    hold.launch(Duration::from_secs(5))?;
    hold.release()?;
    Ok(())
}

/// Dropping a launched hold lets the GPU go at once (not after its timeout).
fn drop_releases() -> Result<(), Failed> {
    let gpu = reducer().gpu();
    let start = Instant::now();
    {
        let mut hold = Hold::new(gpu)?;
        hold.launch(Duration::from_secs(20))?;
    }
    gpu.synchronize()?;
    let waited = start.elapsed();
    ensure(waited < Duration::from_secs(5), || format!("a dropped hold kept the stream for {waited:?}"))
}

/// Work that fails inside a queued batch returns its own error promptly,
/// and queued timing works afterwards.
fn failed_work_releases() -> Result<(), Failed> {
    let r = reducer();
    let (data, mut out, prepared) = small_sum(r, 1 << 16)?;
    let start = Instant::now();
    let failing = time_runs_with(r.gpu(), Timing::Queued, 2, 3 * QUEUED_BATCH, |i| {
        if i == 2 + QUEUED_BATCH + 3 {
            return Err(Error::Invalid("planted failure".into()));
        }
        r.enqueue(&prepared, &[&data.as_view()], &mut out.as_view_mut())
    });
    ensure(matches!(&failing, Err(Error::Invalid(m)) if m == "planted failure"), || format!("{failing:?}"))?;
    ensure(start.elapsed() < Duration::from_secs(5), || format!("the failure took {:?}", start.elapsed()))?;
    let stats = time_runs_with(r.gpu(), Timing::Queued, 2, 10, |_| {
        r.enqueue(&prepared, &[&data.as_view()], &mut out.as_view_mut())
    })?;
    ensure(stats.runs == 10, || format!("{stats:?}"))
}

/// A small sum (a few µs: shorter than its submission) timed both ways in
/// one sitting, alternating: the queued median is no larger than the host
/// loop's plus noise, every run is counted, and the result is still right.
fn queued_vs_host_loop() -> Result<(), Failed> {
    let r = reducer();
    let n = 1 << 20;
    let (data, mut out, prepared) = small_sum(r, n)?;
    let runs = 3 * QUEUED_BATCH + 5; // several batches, the last one short
    let mut medians = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (k, timing) in Timing::ALL.into_iter().enumerate() {
            let stats = time_runs_with(r.gpu(), timing, 5, runs, |_| {
                r.enqueue(&prepared, &[&data.as_view()], &mut out.as_view_mut())
            })?;
            ensure(stats.runs == runs, || format!("{timing:?}: {stats:?}"))?;
            ensure(stats.min_ms > 0.0 && stats.min_ms <= stats.median_ms, || format!("{timing:?}: {stats:?}"))?;
            medians[k].push(stats.median_ms * 1e3);
        }
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (host_loop, queued) = (best(&medians[0]), best(&medians[1]));
    println!("n = {n}: host loop {host_loop:.2} µs, queued {queued:.2} µs (best median of 3 sittings each)");
    ensure(queued <= host_loop * 1.10 + 0.5, || {
        format!("queued {queued:.2} µs is slower than the host loop's {host_loop:.2} µs: {medians:?}")
    })?;
    let got = r.gpu().stream().clone_dtoh(&out).map_err(|e| format!("cuMemcpyDtoH: {e}"))?;
    ensure(got == [n as f32], || format!("the sum of {n} ones: {got:?}"))
}

type SmallSum = (
    reduction::cudarc::driver::CudaSlice<f32>,
    reduction::cudarc::driver::CudaSlice<f32>,
    reduction::Prepared<Sum, f32>,
);

/// `n` ones on the device, a one-element result and the prepared sum.
fn small_sum(r: &Reducer, n: usize) -> Result<SmallSum, Failed> {
    let stream = r.gpu().stream();
    let data = stream.clone_htod(&vec![1.0f32; n]).map_err(|e| format!("cuMemcpyHtoD: {e}"))?;
    let out = stream.alloc_zeros::<f32>(1).map_err(|e| format!("cuMemAlloc: {e}"))?;
    let prepared = r.prepare::<Sum, f32>(n, &Options::default())?;
    Ok((data, out, prepared))
}
