//! GPU timing with CUDA events: warm up, then time each run between two
//! events on the stream, and report median, min and max.

use serde::{Deserialize, Serialize};

use reduction::{Error, Gpu, Result};

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
/// CUDA events, and return the event times. `i` counts all calls from 0, so
/// the caller can rotate through several input buffers.
///
/// ```no_run
/// use reduction::{Options, Reducer, Sum};
/// use reduce::timing::time_runs;
/// let r = Reducer::new()?;
/// let stream = r.gpu().stream();
/// let data = stream.clone_htod(&vec![1.0f32; 1 << 24]).unwrap();
/// let mut out = stream.alloc_zeros::<f32>(1).unwrap();
/// let stats = time_runs(r.gpu(), 5, 20, |_| {
///     r.reduce_into::<Sum, f32>(&data.as_view(), &mut out.as_view_mut(), &Options::default())
/// })?;
/// println!("{:.3} ms, {:.0} GB/s", stats.median_ms, stats.bandwidth(4 << 24) / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn time_runs(gpu: &Gpu, warmup: usize, runs: usize, mut work: impl FnMut(usize) -> Result<()>) -> Result<Stats> {
    if runs == 0 {
        return Err(Error::Invalid("no timed runs: at least one is needed".into()));
    }
    for i in 0..warmup {
        work(i)?;
    }
    let mut pairs = Vec::with_capacity(runs);
    for _ in 0..runs {
        pairs.push((gpu.timing_event()?, gpu.timing_event()?));
    }
    let stream = gpu.stream();
    for (i, (start, stop)) in pairs.iter().enumerate() {
        start.record(stream).map_err(Error::from_driver("cuEventRecord"))?;
        work(warmup + i)?;
        stop.record(stream).map_err(Error::from_driver("cuEventRecord"))?;
    }
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for (start, stop) in &pairs {
        times.push(start.elapsed_ms(stop).map_err(Error::from_driver("cuEventElapsedTime"))? as f64);
    }
    Stats::of(times)
}
