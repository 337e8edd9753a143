//! Reductions across GPUs (`reduction::multi`), against the CPU references
//! of `testkit::ops` on the whole input: every operation × type on
//! uneven shards (one empty, lengths differing by a lot), arg-min/max ties
//! and NaN on both sides of a shard boundary (the global index), half sums
//! past f16's saturation, host slices split over the GPUs, the NCCL bootstrap
//! of one process per GPU with a world of one, and the typed errors.
//!
//! One-GPU trials need no NCCL; two-GPU trials need two GPUs and NCCL and
//! print `SKIPPED: <what is missing>` otherwise (`REDUCTION_REQUIRE_GPUS=2`
//! makes that a failure).

mod common;

use common::{cpu_trial, ensure, multi_gpu_trial};
use libtest_mimic::{Failed, Trial};
use reduction::cudarc::driver::{CudaSlice, CudaView};
use reduction::half::f16;
use reduction::multi::{MultiReducer, Sharded, UniqueId, split};
use reduction::{ArgMax, ArgMin, Element, Error, Op, Options, Sum};
use testkit::data::{Pattern, Sample, generate};
use testkit::ops::{Number, Outcome, power_sum_reference, verify_op};
use testkit::with_operation;

trait TestElement: Element + Sample + Number + Outcome + Default {}

/// Each shard's host data and its padded device copy.
type Shards<T> = (Vec<Vec<T>>, Vec<CudaSlice<T>>);

/// Two shards' data changed in place.
type Plant = Box<dyn Fn(&mut [f32], &mut [f32])>;
impl<T: Element + Sample + Number + Outcome + Default> TestElement for T {}

/// Shard lengths on two GPUs: one empty, tiny, equal, very uneven, large.
const TWO_SHARDS: &[[usize; 2]] =
    &[[0, 5], [7, 0], [1, 1], [1000, 1001], [33, (1 << 20) + 3], [(1 << 24) + 1, 3], [(1 << 22) - 1, (1 << 22) + 1]];

/// The default kernel at 256 threads: the error bound of a whole input's check.
fn at256() -> Options {
    Options { block: Some(256), ..Options::default() }
}

fn main() {
    let mut trials: Vec<Trial> = vec![
        cpu_trial("errors::refused_before_any_gpu", refused_before_any_gpu),
        cpu_trial("split::covers_in_order", split_covers),
        multi_gpu_trial("one_gpu::every_operation_without_nccl", 1, false, one_gpu_every_operation),
        multi_gpu_trial("bootstrap::world_of_one", 1, true, world_of_one),
    ];
    for &op in Op::ALL {
        for &t in op.types() {
            trials.push(multi_gpu_trial(format!("two_gpus::{}_{}", op.name(), t.name()), 2, true, move || {
                with_operation!(op, t, |R, T| two_gpus::<R, T>(op), else Err("not an operation of the type".into()))
            }));
        }
    }
    trials.extend([
        multi_gpu_trial("two_gpus::arg_ties_and_nan_across_the_boundary", 2, true, ties_across_the_boundary),
        multi_gpu_trial("two_gpus::half_sum_past_saturation", 2, true, half_sum),
        multi_gpu_trial("two_gpus::host_slice_split", 2, true, host_slice),
        multi_gpu_trial("two_gpus::norm_p_orders", 2, true, norm_p_orders),
        multi_gpu_trial("two_gpus::typed_errors", 2, true, typed_errors),
        multi_gpu_trial("planted::a_dropped_shard_fails_the_check", 2, true, planted_dropped_shard),
    ]);
    common::run(trials)
}

fn refused_before_any_gpu() -> Result<(), Failed> {
    ensure(matches!(MultiReducer::on(&[]), Err(Error::Invalid(_))), || "no GPUs accepted".into())?;
    ensure(matches!(MultiReducer::on(&[1, 0, 1]), Err(Error::Invalid(m)) if m.contains("GPU 1")), || {
        "a GPU listed twice accepted".into()
    })?;
    let id: UniqueId = "00".repeat(128).parse()?;
    ensure(matches!(MultiReducer::from_rank(0, 2, 2, &id), Err(Error::Invalid(m)) if m.contains("rank 2")), || {
        "rank 2 of 2 accepted".into()
    })?;
    for bad in ["", "xyz", &"0".repeat(255), &"g".repeat(256)] {
        ensure(bad.parse::<UniqueId>().is_err(), || format!("{bad:?} parsed as an id"))?;
    }
    Ok(())
}

fn split_covers() -> Result<(), Failed> {
    for n in [0, 1, 2, 7, 1000, (1 << 20) + 3] {
        for parts in 1..=9 {
            let r = split(n, parts);
            let contiguous = r.windows(2).all(|w| w[0].end == w[1].start);
            let lens: Vec<usize> = r.iter().map(|p| p.len()).collect();
            let even = lens.iter().max().unwrap_or(&0) - lens.iter().min().unwrap_or(&0) <= 1;
            ensure(r.len() == parts && r[0].start == 0 && r[parts - 1].end == n && contiguous && even, || {
                format!("split({n}, {parts}) = {r:?}")
            })?;
        }
    }
    Ok(())
}

/// The process's reducer over the first two GPUs (made once: NCCL
/// communicators live as long as the process).
fn two() -> &'static MultiReducer {
    static M: std::sync::OnceLock<MultiReducer> = std::sync::OnceLock::new();
    M.get_or_init(|| MultiReducer::on(&[0, 1]).unwrap_or_else(|e| panic!("two GPUs and NCCL were found, but: {e}")))
}

/// Host data for each shard and its device copy on that shard's GPU (one
/// element more than the shard: no allocation is empty; view the shard with
/// [`view`]).
fn shards<T: TestElement>(m: &MultiReducer, lens: &[usize], seed: u64) -> Result<Shards<T>, Failed> {
    let host: Vec<Vec<T>> = lens
        .iter()
        .enumerate()
        .map(|(k, &n)| generate(Pattern::Random, n, seed + k as u64))
        .collect::<Result<_, _>>()?;
    let device = host
        .iter()
        .zip(m.reducers())
        .map(|(h, r)| {
            let padded: Vec<T> = h.iter().copied().chain([T::default()]).collect();
            r.gpu().stream().clone_htod(&padded).map_err(|e| Failed::from(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    Ok((host, device))
}

/// The shard held in `d` (all but its last element).
fn view<T>(d: &CudaSlice<T>) -> CudaView<'_, T> {
    d.slice(..d.len() - 1)
}

/// Operation `R` over device shards `a` (and `b`), checked against the CPU on
/// the concatenated input. `Ok(false)` for an empty input `R` refuses.
fn check_shards<R: Sharded<T>, T: TestElement>(
    m: &MultiReducer,
    op: Op,
    (a_host, a): (&[Vec<T>], &[CudaSlice<T>]),
    (b_host, b): (&[Vec<T>], &[CudaSlice<T>]),
) -> Result<bool, Failed>
where
    R::Out: Outcome,
{
    let (a, b): (Vec<CudaView<'_, T>>, Vec<CudaView<'_, T>>) =
        (a.iter().map(view).collect(), b.iter().map(view).collect());
    let inputs: Vec<Vec<&CudaView<'_, T>>> =
        a.iter().zip(&b).map(|(x, y)| if R::INPUTS == 2 { vec![x, y] } else { vec![x] }).collect();
    let shards: Vec<&[&CudaView<'_, T>]> = inputs.iter().map(Vec::as_slice).collect();
    let (whole_a, whole_b) = (a_host.concat(), b_host.concat());
    let got = match m.reduce::<R, T, CudaView<'_, T>>(&shards) {
        Err(Error::Empty { .. }) if whole_a.is_empty() && R::NEEDS_AN_ELEMENT => return Ok(false),
        other => other?,
    };
    let r = &m.reducers()[0];
    let c = verify_op::<R, T>(r, op, &whole_a, &whole_b, &Options::default(), got)?;
    ensure(c.ok, || {
        format!(
            "{} {} shards {:?}: GPU {}, CPU {}",
            op.name(),
            T::NAME,
            a_host.iter().map(Vec::len).collect::<Vec<_>>(),
            c.got,
            c.expected
        )
    })?;
    Ok(true)
}

fn two_gpus<R: Sharded<T>, T: TestElement>(op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let m = two();
    for (k, lens) in TWO_SHARDS.iter().enumerate() {
        let (a_host, a) = shards::<T>(m, lens, 10 * k as u64)?;
        let (b_host, b) = shards::<T>(m, lens, 500 + 10 * k as u64)?;
        check_shards::<R, T>(m, op, (&a_host, &a), (&b_host, &b))?;
    }
    Ok(())
}

fn one_gpu_every_operation() -> Result<(), Failed> {
    let m = MultiReducer::on(&[0])?;
    for &op in Op::ALL {
        for &t in op.types() {
            with_operation!(op, t, |R, T| one_gpu::<R, T>(&m, op), else Err("not an operation of the type".into()))?;
        }
    }
    Ok(())
}

fn one_gpu<R: Sharded<T>, T: TestElement>(m: &MultiReducer, op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    for (k, n) in [0, 1, 1000, (1 << 20) + 3].into_iter().enumerate() {
        let (a_host, a) = shards::<T>(m, &[n], 70 + k as u64)?;
        let (b_host, b) = shards::<T>(m, &[n], 90 + k as u64)?;
        check_shards::<R, T>(m, op, (&a_host, &a), (&b_host, &b))?;
    }
    Ok(())
}

fn world_of_one() -> Result<(), Failed> {
    let id = UniqueId::new()?;
    let text = id.to_string();
    let m = MultiReducer::from_rank(0, 0, 1, &text.parse()?)?;
    ensure(m.world_size() == 1 && m.ranks() == (0..1), || format!("{m:?}"))?;
    let (host, dev) = shards::<f32>(&m, &[(1 << 20) + 3], 5)?;
    let got = m.reduce::<ArgMax, f32, CudaView<'_, f32>>(&[&[&view(&dev[0])]])?;
    let c = verify_op::<ArgMax, f32>(&m.reducers()[0], Op::ArgMax, &host[0], &host[0], &at256(), got)?;
    ensure(c.ok, || format!("argmax over NCCL, world 1: GPU {}, CPU {}", c.got, c.expected))?;
    let sum = m.sum(&[&host[0]])?; // a host shard
    let c = verify_op::<Sum, f32>(&m.reducers()[0], Op::Sum, &host[0], &host[0], &at256(), sum)?;
    ensure(c.ok, || format!("sum over NCCL, world 1: GPU {}, CPU {}", c.got, c.expected))
}

/// Ties and NaN on both sides of the boundary between the shards: the
/// lowest global index wins, an index in shard 1 counts from its start.
fn ties_across_the_boundary() -> Result<(), Failed> {
    let m = two();
    let (n0, n1) = (1000usize, 777usize);
    let base = |n: usize, seed: u64| -> Result<Vec<f32>, Failed> { Ok(generate(Pattern::Random, n, seed)?) };
    let cases: [(&str, Plant, Op, u64); 5] = [
        (
            "max at shard 0's last, tie at shard 1's first",
            Box::new(|a, b| (a[999], b[0]) = (5.0, 5.0)),
            Op::ArgMax,
            999,
        ),
        ("max only in shard 1", Box::new(|_, b| b[10] = 5.0), Op::ArgMax, 1010),
        ("tie: shard 1's earlier local index loses", Box::new(|a, b| (a[500], b[3]) = (5.0, 5.0)), Op::ArgMax, 500),
        (
            "NaN only in shard 1 beats a larger value in shard 0",
            Box::new(|a, b| (a[0], b[776]) = (9.0, f32::NAN)),
            Op::ArgMax,
            1776,
        ),
        (
            "-0.0 and +0.0 tie for the min across shards",
            Box::new(|a, b| {
                a.iter_mut().chain(b.iter_mut()).for_each(|x| *x = x.abs() + 1.0);
                (a[999], b[0]) = (-0.0, 0.0);
            }),
            Op::ArgMin,
            999,
        ),
    ];
    for (what, plant, op, want) in cases {
        let (mut a, mut b) = (base(n0, 1)?, base(n1, 2)?);
        plant(&mut a, &mut b);
        let got = if op == Op::ArgMax { m.argmax(&[&a, &b])? } else { m.argmin(&[&a, &b])? };
        ensure(got.index == want, || format!("{what}: index {} (want {want})", got.index))?;
        let whole = [a, b].concat();
        let c = if op == Op::ArgMax {
            verify_op::<ArgMax, f32>(&m.reducers()[0], op, &whole, &whole, &at256(), got)?
        } else {
            verify_op::<ArgMin, f32>(&m.reducers()[0], op, &whole, &whole, &at256(), got)?
        };
        ensure(c.ok, || format!("{what}: GPU {}, CPU {}", c.got, c.expected))?;
    }
    Ok(())
}

fn half_sum() -> Result<(), Failed> {
    let ones = vec![f16::ONE; 2048];
    let got: f32 = two().sum(&[&ones, &ones])?;
    ensure(got == 4096.0, || format!("4096 f16 ones over two GPUs: {got}"))
}

fn host_slice() -> Result<(), Failed> {
    let m = two();
    let data: Vec<i64> = generate(Pattern::Random, (1 << 21) + 5, 3)?;
    let got = m.reduce_host::<Sum, i64>(&data)?;
    let want = data.iter().fold(0i64, |s, &x| s.wrapping_add(x));
    ensure(got == want, || format!("sum of a split host slice: {got}, CPU {want}"))?;
    let scattered = m.scatter(&data)?;
    ensure(scattered.iter().map(CudaSlice::len).collect::<Vec<_>>() == [(1 << 20) + 3, (1 << 20) + 2], || {
        "scatter's parts".into()
    })?;
    let views: Vec<&CudaSlice<i64>> = scattered.iter().collect();
    ensure(m.sum(&views)? == want, || "sum of scattered shards".into())
}

/// `MultiReducer::norm_p` of every kind of order (0, 1, 2, ±∞ and the
/// general `p`, the GPUs' sums of powers added in rank order) against the
/// CPU on both shards together; a shard left out of the CPU's norm is told
/// apart.
fn norm_p_orders() -> Result<(), Failed> {
    let m = two();
    let (host, dev) = shards::<f32>(m, &[(1 << 20) + 3, (1 << 20) - 5], 31)?;
    let whole = host.concat();
    let cpu = |x: &[f32], p: f64| -> f64 {
        let a = x.iter().map(|&v| (v as f64).abs());
        match p {
            0.0 => a.filter(|&v| v != 0.0).count() as f64,
            f64::INFINITY => a.fold(0.0, f64::max),
            f64::NEG_INFINITY => a.fold(f64::INFINITY, f64::min),
            p => power_sum_reference(x, p, 0, 0.0).0.powf(1.0 / p),
        }
    };
    for p in [0.0, 1.0, 2.0, 3.0, 0.5, -2.5, f64::INFINITY, f64::NEG_INFINITY] {
        let got = m.norm_p::<f32, _, f32>(&[&view(&dev[0]), &view(&dev[1])], p)?;
        let want = cpu(&whole, p);
        let close = |w: f64| (got - w).abs() <= 1e-4 * w.abs();
        ensure(close(want), || format!("norm_p({p}) of two shards: GPUs {got}, CPU {want}"))?;
        if p.is_finite() {
            ensure(!close(cpu(&host[0], p)), || format!("norm_p({p}): shard 1 left out passes"))?;
        }
    }
    Ok(())
}

fn typed_errors() -> Result<(), Failed> {
    let m = two();
    let (_, dev) = shards::<f32>(m, &[100, 100], 9)?;
    let r = m.sum(&[&dev[0]]);
    ensure(matches!(r, Err(Error::Shards { given: 1, gpus: 2 })), || format!("one shard for two GPUs: {r:?}"))?;
    let r = m.sum(&[&dev[1], &dev[0]]);
    ensure(matches!(r, Err(Error::ShardDevice { shard: 0, on: 1, expected: 0 })), || format!("swapped shards: {r:?}"))?;
    // one GPU's reducer given the other's buffer: refused before a kernel faults on it
    let r = m.reducers()[0].reduce::<reduction::Sum, f32, _>(&[&dev[1]], &reduction::Options::default());
    ensure(matches!(r, Err(Error::OtherGpu { on: 1, expected: 0, .. })), || format!("GPU 1's input on GPU 0: {r:?}"))?;
    // the refused calls left nothing behind on either GPU
    let both = m.sum(&[&view(&dev[0]), &view(&dev[1])]);
    ensure(both.is_ok(), || format!("a good call after the swapped shards: {both:?}"))?;
    let (_, short) = shards::<f32>(m, &[100, 99], 9)?;
    let r = m.dot(&[&view(&dev[0]), &view(&dev[1])], &[&view(&short[0]), &view(&short[1])]);
    ensure(matches!(r, Err(Error::InputsDiffer { op: "dot", a: 100, b: 99 })), || format!("dot of 100 and 99: {r:?}"))?;
    let empty: Vec<f32> = Vec::new();
    let r = m.argmax(&[&empty, &empty]);
    ensure(matches!(r, Err(Error::Empty { op: "argmax" })), || format!("argmax of nothing: {r:?}"))?;
    let one = m.argmax(&[&empty, &vec![1.0f32]])?;
    ensure(one.index == 0, || format!("argmax of one element on GPU 1: {one:?}"))
}

/// The check rejects a result that left one shard out.
fn planted_dropped_shard() -> Result<(), Failed> {
    let m = two();
    let (host, dev) = shards::<f32>(m, &[1 << 20, 1 << 20], 21)?;
    let whole = host.concat();
    let all = m.sum(&[&view(&dev[0]), &view(&dev[1])])?;
    let c = verify_op::<Sum, f32>(&m.reducers()[0], Op::Sum, &whole, &whole, &at256(), all)?;
    ensure(c.ok, || format!("the sum of both shards failed the check: {} vs {}", c.got, c.expected))?;
    let dropped = m.sum(&[&view(&dev[0]), &dev[1].slice(0..0)])?;
    let c = verify_op::<Sum, f32>(&m.reducers()[0], Op::Sum, &whole, &whole, &at256(), dropped)?;
    ensure(!c.ok, || format!("a sum without shard 1 passed the check: {} vs {}", c.got, c.expected))
}
