//! GPU timing with CUDA events: warm up, then time each run between two
//! events on the stream, and report median, min and max.
//!
//! Two ways to queue the timed runs ([`Timing`]):
//!
//! * **host loop** (the default, and every figure before it): the host
//!   queues (start event, work, stop event) for one run after the other
//!   while the GPU runs them. A run shorter than its submission leaves the
//!   GPU idle until the host has queued the next, so each pair of events
//!   also holds the host's `cuLaunchKernel` and `cuEventRecord` (on an H200
//!   this library's runs were not that short: both ways agreed within
//!   0.2 µs at 2^22, `docs/src/performance/tuning.md`, timing; torch's and CuPy's differ).
//! * **queued** (NVIDIA nvbench's "blocking kernel"): the hold kernel
//!   ([`testkit::hold`]) is launched first, the runs of a batch are
//!   queued behind it, then it is let go: the runs execute back to back and
//!   each pair of events holds the GPU's work alone. A hold kernel that
//!   timed out (the host took longer to queue than [`HOLD_TIMEOUT`]) is an
//!   error ([`reduction::Error::HoldTimedOut`]), never a figure.

use std::ops::Range;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use reduction::{Error, Gpu, Result};
use testkit::hold::Hold;

/// The most timed runs one measurement takes: each holds two CUDA events
/// until it is read. `--runs` is checked against it before any GPU work.
pub const MAX_RUNS: usize = 100_000;

/// `runs` if it is from 1 to [`MAX_RUNS`], else [`Error::Invalid`] naming it.
///
/// ```
/// use reduce::timing::{MAX_RUNS, check_runs};
/// assert_eq!(check_runs(30).unwrap(), 30);
/// assert!(check_runs(0).unwrap_err().to_string().contains("0 timed runs: from 1 to 100000"));
/// assert!(check_runs(MAX_RUNS + 1).is_err());
/// ```
pub fn check_runs(runs: usize) -> Result<usize> {
    if (1..=MAX_RUNS).contains(&runs) {
        Ok(runs)
    } else {
        Err(Error::Invalid(format!("{runs} timed runs: from 1 to {MAX_RUNS}")))
    }
}

/// How the timed runs are queued (see the module's doc).
///
/// ```
/// use reduce::timing::Timing;
/// assert_eq!("queued".parse::<Timing>().unwrap(), Timing::Queued);
/// assert_eq!(Timing::default().name(), "host-loop");
/// assert!("batched".parse::<Timing>().unwrap_err().contains("host-loop, queued"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timing {
    /// The host queues each run's events and work as the GPU runs them.
    #[default]
    HostLoop,
    /// Runs queued in batches behind the hold kernel, then let go at once.
    Queued,
}

impl Timing {
    /// Every method, the default first.
    pub const ALL: [Timing; 2] = [Timing::HostLoop, Timing::Queued];

    /// The name on the command line and in tables: `host-loop`, `queued`.
    pub const fn name(self) -> &'static str {
        match self {
            Timing::HostLoop => "host-loop",
            Timing::Queued => "queued",
        }
    }

    /// One line saying what the events enclose, for a table's heading.
    pub const fn describe(self) -> &'static str {
        match self {
            Timing::HostLoop => {
                "timing host-loop: each run's events and launches queued by the host as the GPU runs (short runs include the host's submission)"
            }
            Timing::Queued => {
                "timing queued: runs queued in batches behind a hold kernel, then run back to back (the events enclose the GPU's work alone)"
            }
        }
    }
}

impl std::str::FromStr for Timing {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        by_name(&Timing::ALL, Timing::name, "timing", s)
    }
}

/// The one of `all` whose `name` is `s`, or an error naming `what` and
/// the valid names: the parser of the benchmarks' small choices.
///
/// ```
/// use reduce::timing::{Timing, by_name};
/// assert_eq!(by_name(&Timing::ALL, Timing::name, "timing", "queued"), Ok(Timing::Queued));
/// assert_eq!(by_name(&Timing::ALL, Timing::name, "timing", "x").unwrap_err(), "unknown timing \"x\" (valid: host-loop, queued)");
/// ```
pub fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, what: &str, s: &str) -> std::result::Result<T, String> {
    all.iter().copied().find(|&t| name(t) == s).ok_or_else(|| {
        let valid: Vec<&str> = all.iter().map(|&t| name(t)).collect();
        format!("unknown {what} {s:?} (valid: {})", valid.join(", "))
    })
}

/// At most this many runs are queued behind one hold kernel: few enough
/// that the launch queue never fills (each run is two events and a launch
/// or two), and the host queues a batch in well under [`HOLD_TIMEOUT`].
pub const QUEUED_BATCH: usize = 32;

/// Warm-up runs before timing.
pub const WARMUP: usize = 5;

/// How long the hold kernel waits for the host before it gives up (and the
/// batch is reported as an error).
pub const HOLD_TIMEOUT: Duration = Duration::from_millis(200);

/// `runs` split into the fewest batches of at most `max` runs, as even as
/// possible (sizes differ by at most one, larger first), as ranges of run
/// indices in order. Empty for no runs.
///
/// ```
/// use reduce::timing::batches;
/// assert_eq!(batches(100, 32), [0..25, 25..50, 50..75, 75..100]);
/// assert_eq!(batches(5, 32), [0..5]);
/// assert!(batches(0, 32).is_empty());
/// ```
pub fn batches(runs: usize, max: usize) -> Vec<Range<usize>> {
    let count = runs.div_ceil(max.max(1));
    let mut start = 0;
    (0..count)
        .map(|k| {
            let len = runs / count + usize::from(k < runs % count);
            start += len;
            start - len..start
        })
        .collect()
}

/// Times of repeated runs, in milliseconds.
///
/// ```
/// let s = reduce::timing::Stats::of(vec![2.0, 1.0, 4.0]).unwrap();
/// assert_eq!((s.median_ms, s.min_ms, s.max_ms, s.runs), (2.0, 1.0, 4.0, 3));
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stats {
    /// Median of the timed runs.
    pub median_ms: f64,
    /// Fastest run.
    pub min_ms: f64,
    /// Slowest run.
    pub max_ms: f64,
    /// Number of timed runs.
    pub runs: usize,
}

impl Stats {
    /// Summary of `times`; an error for no times.
    ///
    /// ```
    /// use reduce::timing::Stats;
    /// let s = Stats::of(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
    /// assert_eq!((s.median_ms, s.min_ms, s.max_ms, s.runs), (2.5, 1.0, 10.0, 4));
    /// assert!(Stats::of(vec![]).is_err());
    /// ```
    pub fn of(mut times: Vec<f64>) -> Result<Self> {
        times.sort_by(f64::total_cmp);
        let n = times.len();
        let (Some(&min_ms), Some(&max_ms)) = (times.first(), times.last()) else {
            return Err(Error::Invalid("no timed runs: at least one is needed".into()));
        };
        let median_ms = if n % 2 == 1 { times[n / 2] } else { (times[n / 2 - 1] + times[n / 2]) / 2.0 };
        Ok(Stats { median_ms, min_ms, max_ms, runs: n })
    }

    /// Bytes per second for moving `bytes` in the median time.
    ///
    /// ```
    /// let s = reduce::timing::Stats::of(vec![1.0]).unwrap(); // 1 ms
    /// assert!((s.bandwidth(1_000_000) - 1e9).abs() < 1.0); // 1 MB in 1 ms: 1 GB/s
    /// ```
    pub fn bandwidth(&self, bytes: usize) -> f64 {
        bytes as f64 / (self.median_ms * 1e-3)
    }
}

/// Run `work(i)` `warmup` times untimed, then `runs` times, each between two
/// CUDA events queued from the host loop ([`Timing::HostLoop`]), and return
/// the event times. `i` counts all calls from 0, so the caller can rotate
/// through several input buffers.
///
/// ```no_run
/// use reduction::{Options, Reducer, Sum};
/// use reduce::timing::time_runs;
/// let r = Reducer::new()?;
/// let stream = r.gpu().stream();
/// let data = stream.clone_htod(&vec![1.0f32; 1 << 24]).unwrap();
/// let mut out = stream.alloc_zeros::<f32>(1).unwrap();
/// let stats = time_runs(r.gpu(), 5, 20, |_| {
///     r.reduce_into::<Sum, f32, _>(&[&data.as_view()], &mut out.as_view_mut(), &Options::default())
/// })?;
/// println!("{:.3} ms, {:.0} GB/s", stats.median_ms, stats.bandwidth(4 << 24) / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn time_runs(gpu: &Gpu, warmup: usize, runs: usize, work: impl FnMut(usize) -> Result<()>) -> Result<Stats> {
    time_runs_with(gpu, Timing::HostLoop, warmup, runs, work)
}

/// [`time_runs`] with the runs queued as `timing` says. Queued, the runs go
/// in [`batches`] of at most [`QUEUED_BATCH`], each behind a hold kernel
/// that the host lets go once the whole batch is queued; the warm-up runs
/// stay outside. [`reduction::Error::HoldTimedOut`] if a hold kernel gave up
/// waiting (its batch's times would include the host's queueing). `work`
/// must only queue work: a call that waits for the stream inside a batch
/// waits for the hold kernel, which then times out.
///
/// ```no_run
/// use reduction::{Options, Reducer, Sum};
/// use reduce::timing::{Timing, time_runs_with};
/// let r = Reducer::new()?;
/// let data = r.gpu().stream().clone_htod(&vec![1.0f32; 1 << 22]).unwrap();
/// let mut out = r.gpu().stream().alloc_zeros::<f32>(1).unwrap();
/// let p = r.prepare::<Sum, f32>(1 << 22, &Options::default())?;
/// let stats = time_runs_with(r.gpu(), Timing::Queued, 5, 100, |_| {
///     r.enqueue(&p, &[&data.as_view()], &mut out.as_view_mut())
/// })?;
/// println!("{:.1} µs, the GPU's work alone", stats.median_ms * 1e3);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn time_runs_with(
    gpu: &Gpu,
    timing: Timing,
    warmup: usize,
    runs: usize,
    mut work: impl FnMut(usize) -> Result<()>,
) -> Result<Stats> {
    check_runs(runs)?;
    for i in 0..warmup {
        work(i)?;
    }
    let mut pairs = Vec::with_capacity(runs);
    for _ in 0..runs {
        pairs.push((gpu.timing_event()?, gpu.timing_event()?));
    }
    // the one loop that queues timed runs: (start, work(i), stop) for each
    // run of `range`
    let mut queue = |range: Range<usize>| -> Result<()> {
        for (k, (start, stop)) in pairs[range.clone()].iter().enumerate() {
            start.record(gpu.stream()).map_err(Error::from_driver("cuEventRecord"))?;
            work(warmup + range.start + k)?;
            stop.record(gpu.stream()).map_err(Error::from_driver("cuEventRecord"))?;
        }
        Ok(())
    };
    match timing {
        Timing::HostLoop => {
            queue(0..runs)?;
            gpu.synchronize()?;
        }
        Timing::Queued => {
            gpu.synchronize()?; // the warm-up has finished before the first hold
            let mut hold = Hold::new(gpu)?;
            for batch in batches(runs, QUEUED_BATCH) {
                hold.launch(HOLD_TIMEOUT)?;
                queue(batch)?;
                hold.release()?; // lets the batch go, waits, checks the hold was not timed out
            }
        }
    }
    let mut times = Vec::with_capacity(runs);
    for (start, stop) in &pairs {
        times.push(start.elapsed_ms(stop).map_err(Error::from_driver("cuEventElapsedTime"))? as f64);
    }
    Stats::of(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_run_once_in_order_and_evenly() {
        for runs in 0..=300 {
            for max in [1, 2, 7, 32, 64] {
                let b = batches(runs, max);
                assert_eq!(b.len(), runs.div_ceil(max), "runs {runs}, max {max}: the fewest batches");
                assert_eq!(b.iter().map(|r| r.len()).sum::<usize>(), runs, "runs {runs}, max {max}");
                assert!(b.iter().all(|r| !r.is_empty() && r.len() <= max), "runs {runs}, max {max}: {b:?}");
                assert!(b.windows(2).all(|w| w[0].end == w[1].start), "runs {runs}, max {max}: in order");
                assert_eq!(b.first().map_or(0, |r| r.start), 0);
                let (lo, hi) = (b.iter().map(|r| r.len()).min(), b.iter().map(|r| r.len()).max());
                assert!(hi.zip(lo).is_none_or(|(h, l)| h - l <= 1), "runs {runs}, max {max}: {b:?}");
            }
        }
        assert_eq!(batches(3, 0), [0..1, 1..2, 2..3], "a zero maximum counts as one");
    }

    #[test]
    fn timing_names_round_trip() {
        for t in Timing::ALL {
            assert_eq!(t.name().parse::<Timing>(), Ok(t));
            assert!(t.describe().starts_with(&format!("timing {}:", t.name())));
        }
        assert!("host_loop".parse::<Timing>().is_err());
    }

    #[test]
    fn stats_of_odd_and_even_counts() {
        let s = Stats::of(vec![5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median_ms, s.min_ms, s.max_ms, s.runs), (3.0, 1.0, 5.0, 3));
        let s = Stats::of(vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median_ms, s.runs), (2.5, 4));
        assert!(Stats::of(Vec::new()).is_err());
    }
}
