//! `reduce run --gpus all|N`: one operation over random data split across
//! GPUs (`reduction::multi`), checked against the CPU, then timed three ways
//! in one sitting:
//!
//! * **per GPU**: each GPU's own launch on its shard, between CUDA events on
//!   its stream (the shard's bytes over that time);
//! * **all GPUs**: the whole multi-GPU call as a user makes it (launches on
//!   every GPU, the NCCL exchange, the result on the host), host wall clock;
//! * **one GPU**: the same `n` elements reduced by GPU 0 alone, the same kind
//!   of call, host wall clock; the ratio of the two is the scaling.
//!
//! Inputs are rotated through copies that together exceed each GPU's L2;
//! medians after warm-up.

use std::time::Instant;

use reduction::cudarc::driver::{CudaSlice, CudaView};
use reduction::multi::{MultiReducer, Sharded};
use reduction::{DType, Element, Error, Op, Options, Reducer, Result};
use testkit::data::{Pattern, Sample, generate};
use testkit::ops::{Number, Outcome, verify_op};
use testkit::with_operation;

use crate::bench::{WARMUP, copies_wanted};
use crate::timing::{Stats, time_runs};

/// What `--gpus` asked for, the operation, its type and size.
pub struct MultiRun {
    /// `None`: every GPU.
    pub gpus: Option<usize>,
    /// The operation and element type.
    pub op: Op,
    /// The element type.
    pub dtype: DType,
    /// Elements in all (split over the GPUs).
    pub n: usize,
    /// Timed runs of each measurement.
    pub runs: usize,
    /// Seed of the random input.
    pub seed: u64,
}

/// Run, check and time; print the table; whether the result matched the CPU.
pub fn run(a: &MultiRun) -> Result<bool> {
    let m = match a.gpus {
        None => MultiReducer::all()?,
        Some(k) => MultiReducer::on(&(0..k).collect::<Vec<_>>())?,
    };
    with_operation!(a.op, a.dtype, |R, T| measure::<R, T>(&m, a), else Err(crate::ops_bench::unsupported(a.op, a.dtype)))
}

/// Device copies of `parts` of every input on its GPU: `sets[s][gpu][input]`.
type Copies<T> = Vec<Vec<Vec<Upload<T>>>>;

fn measure<R: Sharded<T>, T: Element + Sample + Number + Outcome + Default>(
    m: &MultiReducer,
    a: &MultiRun,
) -> Result<bool>
where
    R::Out: Outcome,
{
    let gpus = m.reducers();
    let inputs = R::INPUTS as usize;
    let host: Vec<Vec<T>> =
        (0..inputs as u64).map(|k| generate(Pattern::Random, a.n, a.seed + k)).collect::<Result<_>>()?;
    let parts = m.split(a.n);
    let shard_bytes = parts[0].len() * size_of::<T>() * inputs;
    let free = gpus.iter().map(|r| r.gpu().mem_info().map(|(f, _)| f)).collect::<Result<Vec<_>>>()?;
    let min_free = free.iter().copied().min().unwrap_or(0).saturating_sub(a.n * size_of::<T>() * inputs); // room for GPU 0's whole copy
    let sets = copies_wanted(gpus[0].gpu().info().l2_bytes, shard_bytes, min_free);
    let mut copies: Copies<T> = Vec::new();
    for _ in 0..sets {
        let set = gpus
            .iter()
            .zip(&parts)
            .map(|(r, part)| host.iter().map(|h| upload(r, &h[part.clone()])).collect::<Result<Vec<_>>>());
        copies.push(set.collect::<Result<_>>()?);
    }
    let shards_of = |s: usize| -> Vec<Vec<CudaView<'_, T>>> {
        copies[s % copies.len()].iter().map(|gpu| gpu.iter().map(view).collect()).collect()
    };
    let call = |s: usize| -> Result<R::Out> {
        let views = shards_of(s);
        let refs: Vec<Vec<&CudaView<'_, T>>> = views.iter().map(|g| g.iter().collect()).collect();
        let shards: Vec<&[&CudaView<'_, T>]> = refs.iter().map(Vec::as_slice).collect();
        m.reduce::<R, T, CudaView<'_, T>>(&shards)
    };

    // the check, on the first set
    let got = call(0)?;
    let (first, second) = (&host[0], host.get(1).unwrap_or(&host[0]));
    let checked = verify_op::<R, T>(&gpus[0], a.op, first, second, &Options::default(), got)?;

    // each GPU's launch alone, CUDA events on its stream
    let mut per_gpu = Vec::new();
    for (g, (r, part)) in gpus.iter().zip(&parts).enumerate() {
        let stats = if part.is_empty() {
            None
        } else {
            let prepared = r.prepare::<R::Shard, T>(part.len(), &Options::default())?;
            Some(time_runs(r.gpu(), WARMUP, a.runs, |i| {
                let set = &copies[i % copies.len()][g];
                let views: Vec<CudaView<'_, T>> = set.iter().map(view).collect();
                r.enqueue_to_host(&prepared, &views.iter().collect::<Vec<_>>())
            })?)
        };
        per_gpu.push(stats);
    }

    // the whole call on every GPU, then GPU 0 alone on all n elements
    let all = wall(a.runs, |i| call(i).map(drop))?;
    let whole: Vec<Upload<T>> = host.iter().map(|h| upload(&gpus[0], h)).collect::<Result<_>>()?;
    let whole_views: Vec<CudaView<'_, T>> = whole.iter().map(view).collect();
    let whole_refs: Vec<&CudaView<'_, T>> = whole_views.iter().collect();
    let one = wall(a.runs, |_| gpus[0].reduce::<R, T, CudaView<'_, T>>(&whole_refs, &Options::default()).map(drop))?;

    let bytes = a.n * size_of::<T>() * inputs;
    println!(
        "{} of {} {}, {} GPU(s), {} copies of each shard rotated; medians of {} runs; {}",
        a.op.name(),
        a.n,
        T::NAME,
        gpus.len(),
        sets,
        a.runs,
        reduction::multi::loaded_nccl().unwrap_or_else(|| "no NCCL (one GPU)".into())
    );
    println!("{:<8} {:<24} {:>12} {:>12} {:>10}", "GPU", "device", "elements", "median ms", "GB/s");
    for ((r, part), stats) in gpus.iter().zip(&parts).zip(&per_gpu) {
        let (ms, gbps) = stats
            .as_ref()
            .map_or((0.0, 0.0), |s| (s.median_ms, s.bandwidth(part.len() * size_of::<T>() * inputs) / 1e9));
        let info = r.gpu().info();
        println!("{:<8} {:<24} {:>12} {:>12.4} {:>10.1}", info.ordinal, info.name, part.len(), ms, gbps);
    }
    let per = |s: &Stats| s.bandwidth(bytes) / 1e9;
    println!(
        "{:<8} {:<24} {:>12} {:>12.4} {:>10.1}   (the whole call: launches, NCCL exchange, result on the host)",
        "all",
        "",
        a.n,
        all.median_ms,
        per(&all)
    );
    println!(
        "{:<8} {:<24} {:>12} {:>12.4} {:>10.1}   (the same call on GPU 0 alone)",
        "one",
        "",
        a.n,
        one.median_ms,
        per(&one)
    );
    println!(
        "all / one = {:.3} of the time; check {}: GPU {}, CPU {}",
        all.median_ms / one.median_ms,
        if checked.ok { "OK" } else { "MISMATCH" },
        checked.got,
        checked.expected
    );
    Ok(checked.ok)
}

/// A device copy of some elements (an empty one holds a spare element: no
/// allocation is empty).
struct Upload<T> {
    buf: CudaSlice<T>,
    len: usize,
}

/// `host` on `r`'s GPU.
fn upload<T: Element>(r: &Reducer, host: &[T]) -> Result<Upload<T>> {
    let stream = r.gpu().stream();
    let buf = if host.is_empty() { stream.alloc_zeros(1) } else { stream.clone_htod(host) };
    Ok(Upload { buf: buf.map_err(Error::from_driver("cuMemcpyHtoD"))?, len: host.len() })
}

/// The elements an [`Upload`] holds.
fn view<T>(u: &Upload<T>) -> CudaView<'_, T> {
    u.buf.slice(..u.len)
}

/// `work(i)` `WARMUP` times, then `runs` times under the host's clock.
fn wall(runs: usize, mut work: impl FnMut(usize) -> Result<()>) -> Result<Stats> {
    for i in 0..WARMUP {
        work(i)?;
    }
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let start = Instant::now();
        work(WARMUP + i)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Stats::of(times)
}
