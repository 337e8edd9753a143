//! Reproducible (`gpu_to_gpu`) float sums, variance moments and logsumexp,
//! and the accurate float sums (`docs/src/guide/determinism.md`):
//! the GPU's bits against the CPU twin (`gpu::op::fixed_order::fixed_order`)
//! across block sizes 128..1024, grids capped at 1, 7, 66, 132 and 264
//! blocks, and runs; the accurate sums against the exact reference
//! (`testkit::exact`) on adversarial data; the default kernel's
//! `run_to_run` promise over 100 runs; the typed errors; and planted errors
//! the checks must reject. The CPU trials run everywhere.

mod common;

use common::{cpu_trial, ensure, gpu_trial, reducer};
use libtest_mimic::{Failed, Trial};
use reduction::half::f16;
use reduction::op::exact::{DdSum, DoubleDouble};
use reduction::op::fixed_order::{FixedOrder, Geometry, fixed_order};
use reduction::shape::offsets_of;
use reduction::twin::shaped_fixed_order;
use reduction::{
    ArgMax, DType, Determinism, Error, Min, Options, Reducer, Sum,
    op::{Dot, LogSumExp, Mean, MeanM2, Moments, Norm, SumSquares, logsumexp::exp_neg_exact},
    registry::Kernel,
    shape::{Matrix, Shape, Strategy},
};
use testkit::data::{Pattern, generate, splitmix64};
use testkit::exact::ExactSum;
use testkit::ops::{logsumexp_reference, moments_reference};

const BLOCKS: [u32; 4] = [128, 256, 512, 1024];
const GRIDS: [Option<u32>; 6] = [None, Some(1), Some(7), Some(66), Some(132), Some(264)];

fn main() {
    let mut trials: Vec<Trial> = vec![
        cpu_trial("cpu::twin_matches_a_plain_sum_on_exact_data", twin_exact),
        cpu_trial("cpu::twin_depends_on_order_planted_swap", twin_planted_swap),
        cpu_trial("cpu::double_double_within_one_ulp_below_2^32", dd_within_one_ulp),
        cpu_trial("cpu::double_double_beyond_2^32_within_the_bound", dd_beyond),
        cpu_trial("cpu::double_double_bound_below_2^16_u^2", dd_coefficient_below_2_16),
        cpu_trial("cpu::double_double_one_renormalization_same_bits", dd_renormalize_once),
        cpu_trial("cpu::exact_exp_f32_within_2_ulp", exact_exp_f32),
        cpu_trial("cpu::reproducible_logsumexp_and_variance_near_exact", reproducible_near_exact),
    ];
    trials.extend([
        gpu_trial("gpu_to_gpu::sum_f32", || reproducible_all::<Sum, f32>(true)),
        gpu_trial("gpu_to_gpu::sum_f64", || reproducible_all::<Sum, f64>(true)),
        gpu_trial("gpu_to_gpu::dot_f32", || reproducible_all::<Dot, f32>(false)),
        gpu_trial("gpu_to_gpu::dot_f64", || reproducible_all::<Dot, f64>(false)),
        gpu_trial("gpu_to_gpu::sum_squares_f32", || reproducible_all::<SumSquares, f32>(false)),
        gpu_trial("gpu_to_gpu::sum_squares_f64", || reproducible_all::<SumSquares, f64>(false)),
        gpu_trial("gpu_to_gpu::norm_f32", || reproducible_all::<Norm, f32>(false)),
        gpu_trial("gpu_to_gpu::norm_f64", || reproducible_all::<Norm, f64>(false)),
        gpu_trial("gpu_to_gpu::mean_f32", || reproducible_all::<Mean, f32>(false)),
        gpu_trial("gpu_to_gpu::mean_f64", || reproducible_all::<Mean, f64>(false)),
        gpu_trial("gpu_to_gpu::moments_f32", || reproducible_all::<Moments, f32>(false)),
        gpu_trial("gpu_to_gpu::moments_f64", || reproducible_all::<Moments, f64>(false)),
        gpu_trial("gpu_to_gpu::logsumexp_f32", || reproducible_all::<LogSumExp, f32>(false)),
        gpu_trial("gpu_to_gpu::logsumexp_f64", || reproducible_all::<LogSumExp, f64>(false)),
        gpu_trial("gpu_to_gpu::unaligned_views", unaligned),
        gpu_trial("gpu_to_gpu::shaped_sum_f32", shaped_all::<Sum, f32>),
        gpu_trial("gpu_to_gpu::shaped_sum_f64", shaped_all::<Sum, f64>),
        gpu_trial("gpu_to_gpu::shaped_dot_f32", shaped_all::<Dot, f32>),
        gpu_trial("gpu_to_gpu::shaped_dot_f64", shaped_all::<Dot, f64>),
        gpu_trial("gpu_to_gpu::shaped_sum_squares_f32", shaped_all::<SumSquares, f32>),
        gpu_trial("gpu_to_gpu::shaped_norm_f64", shaped_all::<Norm, f64>),
        gpu_trial("gpu_to_gpu::shaped_mean_f32", shaped_all::<Mean, f32>),
        gpu_trial("gpu_to_gpu::shaped_moments_f32", shaped_all::<Moments, f32>),
        gpu_trial("gpu_to_gpu::shaped_moments_f64", shaped_all::<Moments, f64>),
        gpu_trial("gpu_to_gpu::shaped_logsumexp_f32", shaped_all::<LogSumExp, f32>),
        gpu_trial("gpu_to_gpu::shaped_logsumexp_f64", shaped_all::<LogSumExp, f64>),
        gpu_trial("gpu_to_gpu::shaped_unaligned_views", shaped_unaligned),
        gpu_trial("gpu_to_gpu::shaped_planted_other_order_fails", shaped_planted),
        gpu_trial("errors::shaped_options_typed", shaped_errors),
        gpu_trial("run_to_run::default_and_gpu_to_gpu_100_runs", hundred_runs),
        gpu_trial("accurate::f32_correctly_rounded", accurate_f32),
        gpu_trial("accurate::f64_within_one_ulp_below_2^32", accurate_f64),
        gpu_trial("accurate::planted_dropped_element_fails", accurate_planted),
        gpu_trial("errors::typed_before_any_launch", typed_errors),
    ]);
    common::run(trials)
}

/// Float types of the modes.
trait Float: reduction::Element + testkit::data::Sample + Default + Copy + 'static {
    fn of(x: f64) -> Self;
    fn to(self) -> f64;
    fn bits(self) -> u64;
}
impl Float for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn to(self) -> f64 {
        self as f64
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Float for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn to(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// The same bits, or both NaN (the GPU's NaN is canonical, the CPU's keeps
/// an input's payload).
fn same<T: Float>(a: T, b: T) -> bool {
    a.bits() == b.bits() || (a.to().is_nan() && b.to().is_nan())
}

/// A result compared bit for bit: a float ([`same`]) or a variance's mean
/// and `M2`, each.
trait Bitwise: Copy + std::fmt::Debug {
    fn same_bits(self, other: Self) -> bool;
}
impl Bitwise for f32 {
    fn same_bits(self, other: Self) -> bool {
        same(self, other)
    }
}
impl Bitwise for f64 {
    fn same_bits(self, other: Self) -> bool {
        same(self, other)
    }
}
impl Bitwise for MeanM2 {
    fn same_bits(self, other: Self) -> bool {
        same(self.mean, other.mean) && same(self.m2, other.m2)
    }
}

/// Random data, data with NaN/±inf/-0.0 (`specials`), and data that cancels
/// to a small remainder (`cancel`): pairs ±x of large random values in a
/// random order, plus small values.
fn datasets<T: Float>(n: usize, seed: u64) -> Result<Vec<(&'static str, Vec<T>)>, Failed> {
    let random: Vec<T> = generate(Pattern::Random, n, seed)?;
    let mut specials = random.clone();
    for (k, v) in [-0.0, f64::INFINITY, f64::NAN, f64::NEG_INFINITY].into_iter().enumerate() {
        if n > 4 * k + 3 {
            specials[(splitmix64(seed + k as u64) % n as u64) as usize] = T::of(v);
        }
    }
    let neg_zeros = vec![T::of(-0.0); n];
    // values over 40 binades, then the same negated in reverse order, and
    // small ones between: the exact sum is small, every partial sum rounds
    let half: Vec<f64> = (0..n / 2)
        .map(|k| {
            let r = splitmix64(seed ^ k as u64);
            ((r >> 11) as f64 / (1u64 << 53) as f64) * 2f64.powi((r % 41) as i32 - 20)
        })
        .collect();
    let cancel: Vec<T> = (0..n)
        .map(|i| match i {
            _ if i % 64 == 63 => T::of(1e-3),
            _ if i < n / 2 => T::of(half[i]),
            _ if n - 1 - i < half.len() => T::of(-half[n - 1 - i]),
            _ => T::of(0.5),
        })
        .collect();
    Ok(vec![("random", random), ("specials", specials), ("neg_zeros", neg_zeros), ("cancel", cancel)])
}

/// GPU bits == the CPU twin's, at every block size and grid cap, for the
/// sizes; the large sizes on the sum only (`big`).
fn reproducible_all<R: FixedOrder<T>, T: Float>(big: bool) -> Result<(), Failed>
where
    R::Out: Bitwise,
{
    let mut sizes = vec![1usize, 33, 1000, 4097, (1 << 20) + 7];
    if big {
        sizes.extend([(1 << 24) + 3, 3 << 22]);
    }
    let r = reducer();
    let repro = Options { determinism: Determinism::GpuToGpu, ..Default::default() };
    let ty = DType::of::<T>().ok_or("a library type")?;
    let blocks = mode_blocks(R::NAME, ty, &repro)?; // the variance's registers allow fewer than 1024 threads
    for (k, &n) in sizes.iter().enumerate() {
        for (name, a) in datasets::<T>(n, 40 + k as u64)? {
            let b: Vec<T> = generate(Pattern::Random, n, 99)?;
            let expected = fixed_order::<R, T>(&a, if R::INPUTS == 2 { &b } else { &a });
            let inputs: Vec<&[T]> = if R::INPUTS == 2 { vec![&a, &b] } else { vec![&a] };
            let grids: &[Option<u32>] = if n > 1 << 22 { &GRIDS[..3] } else { &GRIDS };
            for &block in &blocks {
                for &max_grid in grids {
                    let opts = Options { block: Some(block), max_grid, ..repro };
                    let got = r.reduce::<R, T, [T]>(&inputs, &opts)?;
                    ensure(got.same_bits(expected), || {
                        format!(
                            "{} {} {name} n={n} block {block} grid {max_grid:?}: GPU {got:?}, CPU twin {expected:?}",
                            R::NAME,
                            T::NAME
                        )
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// Views at offsets 1..3 (no 16-byte loads): the same bits as the twin.
fn unaligned() -> Result<(), Failed> {
    let n = (1 << 20) + 5;
    let a: Vec<f32> = generate(Pattern::Random, n, 3)?;
    let b: Vec<f32> = generate(Pattern::Random, n, 4)?;
    let stream = reducer().gpu().stream();
    let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let opts = Options { determinism: Determinism::GpuToGpu, ..Default::default() };
    for (oa, ob) in [(1, 1), (3, 3), (0, 2), (2, 1)] {
        let m = n - 4;
        let (va, vb) = (da.slice(oa..oa + m), db.slice(ob..ob + m));
        let got = reducer().reduce::<Dot, f32, _>(&[&va, &vb], &opts)?;
        let expected = fixed_order::<Dot, f32>(&a[oa..oa + m], &b[ob..ob + m]);
        ensure(got.to_bits() == expected.to_bits(), || format!("offsets {oa},{ob}: GPU {got}, CPU {expected}"))?;
    }
    Ok(())
}

/// 100 runs of the default sum and of the reproducible one: one result each.
fn hundred_runs() -> Result<(), Failed> {
    let a: Vec<f32> = generate(Pattern::Random, (1 << 24) + 11, 5)?;
    let device = reducer().gpu().stream().clone_htod(&a)?;
    for determinism in Determinism::ALL {
        let opts = Options { determinism, ..Default::default() };
        let first = reducer().reduce::<Sum, f32, _>(&[&device], &opts)?;
        for run in 1..100 {
            let got = reducer().reduce::<Sum, f32, _>(&[&device], &opts)?;
            ensure(got.to_bits() == first.to_bits(), || {
                format!("{}: run {run} gave {got}, run 0 {first}", determinism.name())
            })?;
        }
    }
    Ok(())
}

/// Adversarial f32 data: exponents over the whole range, massive
/// cancellation, subnormals, NaN/inf, overflow.
fn adversarial_f32(n: usize, seed: u64) -> Vec<(&'static str, Vec<f32>)> {
    let wide: Vec<f32> = (0..n)
        .map(|i| {
            let r = splitmix64(seed ^ i as u64);
            f32::from_bits((r as u32 & 0x7f7f_ffff) | ((r >> 32) as u32 & 0x8000_0000))
        })
        .collect();
    let mut cancel = wide.clone();
    cancel.extend(wide.iter().rev().map(|x| -x));
    cancel.push(f32::from_bits(1));
    cancel.push(1.0);
    let mut overflow = vec![f32::MAX; 3];
    overflow.push(-f32::MAX);
    let mut specials = wide.clone();
    specials[n / 2] = f32::INFINITY;
    let mut nan = wide.clone();
    nan[n / 3] = f32::NAN;
    let mut both = wide.clone();
    (both[1], both[n - 1]) = (f32::INFINITY, f32::NEG_INFINITY);
    let random: Vec<f32> = generate(Pattern::Random, n, seed).unwrap_or_default();
    let tiny: Vec<f32> = (0..n).map(|i| f32::from_bits(1 + (i as u32 % 7))).collect();
    vec![
        ("wide", wide),
        ("cancel", cancel),
        ("overflow", overflow),
        ("inf", specials),
        ("nan", nan),
        ("inf-inf", both),
        ("random", random),
        ("subnormal", tiny),
    ]
}

/// The block sizes of [`BLOCKS`] the mode kernel `opts` pick for `op` on
/// `ty` can launch (its registers may not allow 1024 threads; a larger
/// block is a typed error).
fn mode_blocks(op: &str, ty: DType, opts: &Options) -> Result<Vec<u32>, Failed> {
    let entry = reduction::dispatch::mode_entry(op, ty, opts)?.ok_or_else(|| format!("no mode kernel for {op}"))?;
    let most = reducer().gpu().max_threads_per_block(&entry)?;
    Ok(BLOCKS.into_iter().filter(|&b| b <= most).collect())
}

/// [`mode_blocks`] of the accurate sum of `ty`, and a block beyond them refused.
fn accurate_blocks(ty: DType) -> Result<Vec<u32>, Failed> {
    let accurate = Options { accurate: true, ..Default::default() };
    let entry = reduction::dispatch::mode_entry("sum", ty, &accurate)?.ok_or("no accurate kernel for the sum")?;
    let too_big = Options { block: Some(2048), ..accurate };
    let refused = match ty {
        DType::F32 => reducer().reduce::<Sum, f32, [f32]>(&[&[1.0f32][..]], &too_big).is_err(),
        _ => reducer().reduce::<Sum, f64, [f64]>(&[&[1.0f64][..]], &too_big).is_err(),
    };
    ensure(refused, || format!("{entry}: block 2048 accepted"))?;
    mode_blocks("sum", ty, &accurate)
}

/// The accurate f32 sum is the exact sum rounded once, at every block and grid.
fn accurate_f32() -> Result<(), Failed> {
    for (k, n) in [7usize, 1000, (1 << 20) + 3, (1 << 24) + 1].into_iter().enumerate() {
        for (name, xs) in adversarial_f32(n, k as u64) {
            let expected = ExactSum::of(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>()).rounded_f32();
            for block in accurate_blocks(DType::F32)? {
                for max_grid in GRIDS {
                    let opts = Options { accurate: true, block: Some(block), max_grid, ..Default::default() };
                    let got = reducer().reduce::<Sum, f32, [f32]>(&[&xs], &opts)?;
                    ensure(same(got, expected), || {
                        format!(
                            "{name} n={} block {block} grid {max_grid:?}: GPU {got:e}, exact {expected:e}",
                            xs.len()
                        )
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// f64 data with condition number Σ|x|/|Σx| about `2^kappa`: random
/// values, their negatives, and a remainder `Σ|x| · 2^-kappa`.
fn conditioned(n: usize, kappa: i32, seed: u64) -> Vec<f64> {
    let half: Vec<f64> = (0..n / 2).map(|i| ((splitmix64(seed ^ i as u64) >> 11) as f64) * 2f64.powi(-40)).collect();
    let abs: f64 = 2.0 * half.iter().sum::<f64>();
    let mut xs: Vec<f64> = half.iter().copied().chain(half.iter().map(|x| -x)).collect();
    // interleave so that the pairs meet late in the tree
    let m = xs.len();
    xs = (0..m).map(|i| xs[(i * 7919) % m]).collect();
    xs.push(abs * 2f64.powi(-kappa) * 1.2345);
    xs
}

/// The twin of the accurate f64 sum, against the exact reference, at
/// condition numbers up to 2^32: within 1 ulp.
fn dd_within_one_ulp() -> Result<(), Failed> {
    for n in [1000usize, 100_000] {
        for kappa in [0, 8, 16, 24, 32] {
            let xs = conditioned(n, kappa, kappa as u64);
            let got = fixed_order::<DdSum, f64>(&xs, &xs);
            let ulps = ExactSum::of(&xs).ulps(got);
            ensure(ulps <= 1.0, || format!("n={n} kappa=2^{kappa}: {ulps} ulps"))?;
        }
    }
    Ok(())
}

/// Beyond 2^32: the bound |res - s| ≤ ½ulp(res) + C·u²·Σ|x| holds, and
/// 1 ulp may not: 2^120 + 1 + 2^-60 - 2^120 - 1 = 2^-60, added in this
/// order by one lane, where the lane's error sum `lo` loses the 2^-60
/// (κ ≈ 2^181).
fn dd_beyond() -> Result<(), Failed> {
    // all in lane 0's order: elements 0, 1 (vector 0), 64, 65 (vector 1), 128 (vector 2)
    let mut xs = vec![0.0f64; 129];
    (xs[0], xs[1], xs[64], xs[65], xs[128]) = (2f64.powi(120), 1.0, 2f64.powi(-60), -(2f64.powi(120)), -1.0);
    let got = fixed_order::<DdSum, f64>(&xs, &xs);
    let exact = ExactSum::of(&xs);
    ensure(exact.to_f64() == 2f64.powi(-60), || "the exact sum".into())?;
    let abs: f64 = xs.iter().map(|x| x.abs()).sum();
    let bound = 0.5 * testkit::exact::ulp(got) + dd_coefficient(xs.len()) * 2f64.powi(-106) * abs;
    ensure(exact.distance(got) <= bound, || format!("outside the bound: {got:e}"))?;
    ensure(exact.ulps(got) > 1.0, || format!("expected more than 1 ulp here, got {got:e}"))
}

/// C in the bound |res - s| ≤ ½ulp(res) + C·u²·Σ|x| for `n` elements
/// (docs/src/guide/determinism.md): a lane's `m` elements by `Sum2`, (m-1)²
/// (γ_{m-1}·γ_{m-2}, rounded up), and 3 for each double-double addition on
/// the way to the root: 5 in the warp tree, 5 per tree level.
fn dd_coefficient(n: usize) -> f64 {
    let g = Geometry::new(n, 8);
    let mut adds = 5;
    let mut m = g.segments;
    while m > 1 {
        m = m.div_ceil(32);
        adds += 5;
    }
    let lane = (g.rounds * 4 * 2) as f64;
    (lane - 1.0).powi(2) * (1.0 + 2f64.powi(-40)) + 3.0001 * adds as f64
}

/// The coefficient stays below 2^16 for every n below 2^40, so the accurate
/// f64 sum is within 1 ulp for κ up to 2^36 (docs/src/guide/determinism.md).
fn dd_coefficient_below_2_16() -> Result<(), Failed> {
    for shift in 0..40 {
        for n in [1usize << shift, (1usize << shift) + 1, (3usize << shift) / 2] {
            let c = dd_coefficient(n);
            ensure(c < 65536.0, || format!("n = {n}: C = {c}"))?;
        }
    }
    Ok(())
}

/// The accurate f64 sum as it was before the lanes' pairs were
/// renormalized once (`FixedOrder::lane_result`): every combine
/// renormalized both its inputs.
struct RenormalizeEveryCombine;

impl reduction::op::Reduction<f64> for RenormalizeEveryCombine {
    type Acc = DoubleDouble;
    type Out = f64;
    const NAME: &'static str = "sum";
    const IDENTITY: DoubleDouble = DoubleDouble { hi: 0.0, lo: 0.0 };
    fn map(x: f64, _: f64, _: u64) -> DoubleDouble {
        DoubleDouble::from(x)
    }
    fn combine(a: DoubleDouble, b: DoubleDouble) -> DoubleDouble {
        a.normalized().add_dd(b.normalized())
    }
    fn finish(acc: DoubleDouble, _: u64) -> f64 {
        acc.hi + acc.lo
    }
}

impl FixedOrder<f64> for RenormalizeEveryCombine {
    fn accumulate(acc: DoubleDouble, x: f64, _: f64, _: u64) -> DoubleDouble {
        acc.add_f64_lazy(x)
    }
}

/// Renormalizing each lane's pair once gives the bits of renormalizing
/// both inputs of every combine: `add_dd`'s results are normalized pairs,
/// which `normalized` returns unchanged (and never with a `lo` of `-0.0`).
/// So the bound, derived for the latter, holds unchanged.
fn dd_renormalize_once() -> Result<(), Failed> {
    for (k, n) in [1usize, 33, 4097, (1 << 20) + 7].into_iter().enumerate() {
        let mut sets = datasets::<f64>(n, 70 + k as u64)?;
        sets.extend([0, 16, 32, 48].map(|kappa| ("conditioned", conditioned(n, kappa, kappa as u64))));
        for (name, xs) in sets {
            let (once, every) =
                (fixed_order::<DdSum, f64>(&xs, &xs), fixed_order::<RenormalizeEveryCombine, f64>(&xs, &xs));
            ensure(same(once, every), || format!("{name} n={n}: {once:e} vs {every:e}"))?;
        }
    }
    Ok(())
}

fn accurate_f64() -> Result<(), Failed> {
    for n in [1000usize, (1 << 20) + 1, (1 << 23) + 3] {
        for kappa in [0, 16, 32] {
            let xs = conditioned(n, kappa, n as u64);
            let twin = fixed_order::<DdSum, f64>(&xs, &xs);
            let exact = ExactSum::of(&xs);
            for block in accurate_blocks(DType::F64)? {
                for max_grid in GRIDS {
                    let opts = Options { accurate: true, block: Some(block), max_grid, ..Default::default() };
                    let got = reducer().reduce::<Sum, f64, [f64]>(&[&xs], &opts)?;
                    let ulps = exact.ulps(got);
                    ensure(ulps <= 1.0 && got.to_bits() == twin.to_bits(), || {
                        format!(
                            "n={n} kappa 2^{kappa} block {block} grid {max_grid:?}: GPU {got:e} ({ulps} ulps), twin {twin:e}"
                        )
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// A planted error: the GPU's sum of all but one element, checked against
/// the exact sum of all, must fail (f32: not equal; f64: beyond 1 ulp).
fn accurate_planted() -> Result<(), Failed> {
    let xs: Vec<f32> = adversarial_f32((1 << 20) + 3, 9).remove(1).1; // the cancelling set
    let expected = ExactSum::of(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>()).rounded_f32();
    let opts = Options { accurate: true, ..Default::default() };
    let dropped = reducer().reduce::<Sum, f32, [f32]>(&[&xs[..xs.len() - 1]], &opts)?;
    ensure(dropped.to_bits() != expected.to_bits(), || "a dropped element passed the f32 check".into())?;
    let ys = conditioned((1 << 20) + 1, 32, 1);
    let exact = ExactSum::of(&ys);
    let got = reducer().reduce::<Sum, f64, [f64]>(&[&ys[..ys.len() - 1]], &opts)?;
    ensure(exact.ulps(got) > 1.0, || "a dropped element passed the f64 check".into())
}

fn typed_errors() -> Result<(), Failed> {
    let r = reducer();
    let repro = Options { determinism: Determinism::GpuToGpu, ..Default::default() };
    let accurate = Options { accurate: true, ..Default::default() };
    let teaching = Options { kernel: Some(Kernel::find("reduce4")?), ..repro };
    let errors = [
        r.reduce::<Min, i32, [i32]>(&[&[1, 2][..]], &repro).err(),
        r.reduce::<Sum, i32, [i32]>(&[&[1, 2][..]], &accurate).err(),
        r.reduce::<Dot, f32, [f32]>(&[&[1.0][..], &[1.0][..]], &accurate).err(),
        r.reduce::<Sum, f32, [f32]>(&[&[1.0][..]], &teaching).err(),
    ];
    for e in errors {
        ensure(matches!(e, Some(Error::Unsupported { .. })), || format!("{e:?}"))?;
        ensure(!e.map(|e| e.to_string()).unwrap_or_default().contains('\n'), || "not one line".into())?;
    }
    ensure(r.sum(&vec![2.0f32; 10])? == 20.0, || "the reducer broke".into())
}

/// The twin equals a plain serial sum on data that sums exactly.
fn twin_exact() -> Result<(), Failed> {
    for n in [1usize, 31, 512, 513, 100_000, (1 << 20) + 7] {
        let xs: Vec<f32> = generate(Pattern::Large, n, 2)?;
        let plain: f32 = xs.iter().sum();
        ensure(fixed_order::<Sum, f32>(&xs, &xs) == plain, || format!("f32 n={n}"))?;
        let ys: Vec<f64> = generate(Pattern::Large, n, 2)?;
        ensure(fixed_order::<Sum, f64>(&ys, &ys) == ys.iter().sum::<f64>(), || format!("f64 n={n}"))?;
        ensure(fixed_order::<DdSum, f64>(&ys, &ys) == ys.iter().sum::<f64>(), || format!("dd n={n}"))?;
    }
    Ok(())
}

/// A planted error: the twin with two segments exchanged (the same
/// numbers, and within each segment the same order, but two partials meet
/// other partials in the tree) gives other bits on cancelling data, so GPU
/// == twin checks the combining order, not only the set of numbers.
fn twin_planted_swap() -> Result<(), Failed> {
    let n = 1 << 16;
    let xs: Vec<f32> = datasets::<f32>(n, 1)?.remove(3).1;
    let g = Geometry::new(n, 4);
    let twin = fixed_order::<Sum, f32>(&xs, &xs);
    let mut differ = 0;
    for s in 1..8 {
        // segment 0 and segment s, round by round (a segment's rounds are
        // `segments` rounds apart: `Geometry::round_start`)
        let mut swapped = xs.clone();
        for r in 0..g.rounds {
            let (first, rest) = swapped.split_at_mut(g.round_start(s, r));
            let zero = g.round_start(0, r);
            first[zero..zero + g.round].swap_with_slice(&mut rest[..g.round]);
        }
        differ += (fixed_order::<Sum, f32>(&swapped, &swapped).to_bits() != twin.to_bits()) as u32;
    }
    ensure(differ > 0, || "exchanging segments never changed the bits".into())
}

/// The shapes the shaped `gpu_to_gpu` trials reduce, over `n` elements:
/// rows with a pitch, rows across many warp tiles, rows of 16, columns in
/// one chunk and in many, segments from empty to 2^20 long, and short
/// segments with a long one now and then.
fn shaped_cases(r: &Reducer) -> Result<(usize, Vec<(String, ShapeCase)>), Failed> {
    let n = 1 << 22;
    let lengths: Vec<u64> = (0..3000u64).map(|k| if k % 7 == 0 { 0 } else { 1 << (splitmix64(k) % 21) }).collect();
    let total: u64 = lengths.iter().sum();
    let fit: Vec<u64> = lengths
        .iter()
        .scan(0u64, |used, &l| {
            let l = l.min(n as u64 - *used);
            *used += l;
            Some(l)
        })
        .collect();
    ensure(total > 0, || "no segments".into())?;
    let offsets = r.offsets(&offsets_of(&fit, 0))?;
    // short segments with a long one every 100 (a heavy tail: `segments_tailed`, whose warps read long pieces)
    let tailed: Vec<u64> = (0..20_000u64).map(|k| if k % 100 == 0 { 20_000 } else { 1 + splitmix64(k) % 8 }).collect();
    let tailed = r.offsets(&offsets_of(&tailed, 0))?;
    // the same with a heavier tail, long on average: on aligned input, for accumulators wider than an
    // element (the variance and logsumexp), `segments_scheduled`, its tiles in the offsets' schedule, those with
    // the most segments first; for the others `segments_staged`
    let scheduled: Vec<u64> =
        (0..2000u64).map(|k| if k % 200 == 0 { 300_000 } else { 1 + splitmix64(k) % 8 }).collect();
    let scheduled = r.offsets(&offsets_of(&scheduled, 0))?;
    let wide = size_of::<reduction::op::Welford>(); // the variance of f32
    ensure(reduction::dispatch::staged_scheduled(&scheduled, 4, wide), || "not in the schedule's order".into())?;
    // short segments, every 50th 33 to 432 long, every 500th 600 to 999 and 3000 (`segments_staged`: rounds in
    // shared memory, a lane each or the warp in the stage, pieces longer than a stage by the warp a stage at a time;
    // 600 to 999 fit a stage of one input's f32, not of f64 or of a dot product's)
    let short: Vec<u64> = (0..40_001u64)
        .map(|k| match (k % 500, k % 50) {
            (7, _) => 3000,
            (257, _) => 600 + splitmix64(k) % 400,
            (_, 3) => 33 + splitmix64(k) % 400,
            _ => splitmix64(k) % 17,
        })
        .collect();
    let short = r.offsets(&offsets_of(&short, 1))?;
    // very short segments, every 500th 3000 long (`segments_paired` where the operation allows it: rounds of up
    // to 64 segments, two a lane, 56 bytes a segment on average for f32)
    let paired: Vec<u64> = (0..40_001u64).map(|k| if k % 500 == 7 { 3000 } else { splitmix64(k) % 17 }).collect();
    let paired = r.offsets(&offsets_of(&paired, 1))?;
    // long segments, 16384 to 131072, among short and empty ones (`segments_long`: a block a tile, several
    // segments in some tiles, most over several tiles); long for 2-byte elements too
    let long: Vec<u64> = (0..64u64)
        .map(|k| match (k % 9, k % 5) {
            (4, _) => 0,
            (_, 2) => 1 + splitmix64(k) % 100,
            _ => 1 << (14 + splitmix64(k) % 4),
        })
        .collect();
    let long = r.offsets(&offsets_of(&long, 3))?;
    ensure(reduction::dispatch::long_segments(&long, 2), || "the long segments are not long".into())?;
    // 300 segments of 0..8 in one tile between segments of 2^17 (`segments_long` for 8-byte elements: the
    // block folds the tile's pieces one after another, 300 of them short)
    let crowded: Vec<u64> =
        (0..330u64).map(|k| if (10..310).contains(&k) { splitmix64(k) % 9 } else { 1 << 17 }).collect();
    let crowded = r.offsets(&offsets_of(&crowded, 0))?;
    ensure(reduction::dispatch::long_segments(&crowded, 8), || "the crowded segments are not long".into())?;
    let m = |rows, cols, pitch| Matrix::new(rows, cols).pitch(pitch);
    Ok((
        n,
        vec![
            ("rows 4000x1000 pitch 1003".into(), ShapeCase::Rows(m(4000, 1000, 1003), Strategy::Auto)),
            ("rows 3x(2^20+5)".into(), ShapeCase::Rows(m(3, (1 << 20) + 5, (1 << 20) + 9), Strategy::Auto)),
            (
                "rows 3x(2^20+5) tile 16K lanes 4".into(),
                ShapeCase::Rows(
                    m(3, (1 << 20) + 5, (1 << 20) + 9),
                    Strategy::Segments { tile_bytes: 16 << 10, lanes: 4 },
                ),
            ),
            ("rows 2^18x16 (rows_short)".into(), ShapeCase::Rows(m(1 << 18, 16, 16), Strategy::Auto)),
            (
                "rows 16x2^18 (rows_long, 64 tiles a row)".into(),
                ShapeCase::Rows(m(16, 1 << 18, 1 << 18), Strategy::Auto),
            ),
            ("rows 1024x4096 (rows_long, a tile a row)".into(), ShapeCase::Rows(m(1024, 4096, 4096), Strategy::Auto)),
            ("columns 4000x1000 pitch 1003".into(), ShapeCase::Columns(m(4000, 1000, 1003), Strategy::Auto)),
            ("columns 2^18x16".into(), ShapeCase::Columns(m(1 << 18, 16, 16), Strategy::Auto)),
            (
                "columns 2^16x64 wide 2 chunks 7".into(),
                ShapeCase::Columns(m(1 << 16, 64, 64), Strategy::Columns { wide: 2, chunks: 7 }),
            ),
            (
                "columns 600x5000 pitch 5004 wide 16 chunks 3 (two columns a thread)".into(),
                ShapeCase::Columns(m(600, 5000, 5004), Strategy::Columns { wide: 16, chunks: 3 }),
            ),
            ("segments 0..2^20".into(), ShapeCase::Segments(offsets, Strategy::Auto)),
            ("segments 1..8, every 100th 20000 (tailed)".into(), ShapeCase::Segments(tailed, Strategy::Auto)),
            (
                "segments 1..8, every 200th 300000 (staged, the schedule's order)".into(),
                ShapeCase::Segments(scheduled, Strategy::Auto),
            ),
            (
                "segments 0..16, every 50th 33..432, every 500th 600..999 and 3000 (staged)".into(),
                ShapeCase::Segments(short, Strategy::Auto),
            ),
            ("segments 0..16, every 500th 3000 (paired)".into(), ShapeCase::Segments(paired, Strategy::Auto)),
            ("segments 16384..131072 among short ones (long)".into(), ShapeCase::Segments(long, Strategy::Auto)),
            ("segments 2^17, 300 of 0..8 in one tile (long)".into(), ShapeCase::Segments(crowded, Strategy::Auto)),
        ],
    ))
}

/// A shaped trial: the shape and the strategy it runs with.
enum ShapeCase {
    Rows(Matrix, Strategy),
    Columns(Matrix, Strategy),
    Segments(reduction::shape::Offsets, Strategy),
}

impl ShapeCase {
    fn get(&self) -> (Shape<'_>, Strategy) {
        match self {
            ShapeCase::Rows(m, s) => (Shape::Rows(*m), *s),
            ShapeCase::Columns(m, s) => (Shape::Columns(*m), *s),
            ShapeCase::Segments(o, s) => (Shape::Segments(o), *s),
        }
    }
}

const REPRO: Options = Options {
    determinism: Determinism::GpuToGpu,
    kernel: None,
    block: None,
    finish: reduction::Finish::Gpu,
    max_grid: None,
    accurate: false,
    strategy: Strategy::Auto,
    p: None,
};

/// Shaped `gpu_to_gpu`: the GPU's bits == the CPU twin's
/// (`shaped_fixed_order`) for every shape, on random, special (NaN, ±inf,
/// -0.0) and cancelling data, twice.
fn shaped_all<R: reduction::op::Reduction<T>, T: Float>() -> Result<(), Failed>
where
    R::Out: Bitwise,
{
    let r = reducer();
    let (n, cases) = shaped_cases(r)?;
    let b: Vec<T> = generate(Pattern::Random, n, 77)?;
    for (name, a) in datasets::<T>(n, 11)? {
        let inputs: Vec<&[T]> = if R::INPUTS == 2 { vec![&a, &b] } else { vec![&a] };
        for (label, case) in &cases {
            let (shape, strategy) = case.get();
            let want = shaped_fixed_order::<R, T>(&inputs, shape, strategy)?;
            for run in 0..2 {
                let got = r.reduce_shaped::<R, T, [T]>(&inputs, shape, &Options { strategy, ..REPRO })?;
                let bad = want.iter().zip(&got).position(|(w, g)| !w.same_bits(*g));
                ensure(got.len() == want.len() && bad.is_none(), || {
                    let k = bad.unwrap_or(0);
                    let count = want.iter().zip(&got).filter(|(w, g)| !w.same_bits(**g)).count();
                    format!(
                        "{} {} {name} {label} run {run}: {count} of {} differ, first {k}: GPU {:?}, twin {:?}",
                        R::NAME,
                        T::NAME,
                        want.len(),
                        got.get(k),
                        want.get(k)
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// Views at offsets 1..3 (and two inputs offset differently): the bits of
/// the twin on the same elements, which are those of an aligned view.
fn shaped_unaligned() -> Result<(), Failed> {
    let r = reducer();
    let (n, cases) = shaped_cases(r)?;
    let a: Vec<f32> = generate(Pattern::Random, n + 4, 3)?;
    let b: Vec<f32> = generate(Pattern::Random, n + 4, 4)?;
    let stream = r.gpu().stream();
    let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    for (oa, ob) in [(0, 0), (1, 1), (3, 3), (0, 2), (2, 1)] {
        let (va, vb) = (da.slice(oa..oa + n), db.slice(ob..ob + n));
        for (label, case) in &cases {
            let (shape, strategy) = case.get();
            let sum = r.reduce_shaped::<Sum, f32, _>(&[&va], shape, &Options { strategy, ..REPRO })?;
            let want = shaped_fixed_order::<Sum, f32>(&[&a[oa..oa + n]], shape, strategy)?;
            ensure(sum == want, || format!("sum {label} at offset {oa}: not the twin's bits"))?;
            let dot = r.reduce_shaped::<Dot, f32, _>(&[&va, &vb], shape, &Options { strategy, ..REPRO })?;
            let want = shaped_fixed_order::<Dot, f32>(&[&a[oa..oa + n], &b[ob..ob + n]], shape, strategy)?;
            ensure(dot == want, || format!("dot {label} at offsets {oa},{ob}: not the twin's bits"))?;
        }
    }
    Ok(())
}

/// A planted error: the twin of another order (teams of one lane instead
/// of the automatic ones, columns in 3 chunks instead of 1) must disagree
/// with the GPU on cancelling data, so the checks above see the order, not
/// only the set of numbers.
fn shaped_planted() -> Result<(), Failed> {
    let r = reducer();
    let x: Vec<f32> = datasets::<f32>(1 << 22, 5)?.remove(3).1;
    let m = Matrix::new(1 << 12, 1 << 10);
    for (shape, other) in [
        (Shape::Rows(m), Strategy::Segments { tile_bytes: 0, lanes: 1 }),
        (Shape::Columns(m), Strategy::Columns { wide: 0, chunks: 3 }),
    ] {
        let got = r.reduce_shaped::<Sum, f32, [f32]>(&[&x], shape, &REPRO)?;
        ensure(got == shaped_fixed_order::<Sum, f32>(&[&x], shape, Strategy::Auto)?, || format!("{shape:?}: auto"))?;
        let planted = shaped_fixed_order::<Sum, f32>(&[&x], shape, other)?;
        ensure(got != planted, || format!("{shape:?}: the twin of {other:?} passed"))?;
    }
    Ok(())
}

/// Shaped options the kernels do not have: typed errors, one line, before any launch.
fn shaped_errors() -> Result<(), Failed> {
    let r = reducer();
    let x = vec![1.0f32; 12];
    let shape = Shape::Rows(Matrix::new(3, 4));
    let errors = [
        r.reduce_shaped::<ArgMax, f32, [f32]>(&[&x], shape, &REPRO).err(),
        r.reduce_shaped::<Sum, i32, [i32]>(&[&[1; 12][..]], shape, &REPRO).err(),
        r.reduce_shaped::<Sum, f32, [f32]>(&[&x], shape, &Options { accurate: true, ..REPRO }).err(),
        r.reduce_shaped::<Sum, f32, [f32]>(&[&x], shape, &Options { block: Some(128), ..REPRO }).err(),
        r.reduce_shaped::<LogSumExp, f16, [f16]>(&[&[f16::from_f32(1.0); 12][..]], shape, &REPRO).err(),
    ];
    for e in errors {
        ensure(matches!(e, Some(Error::Unsupported { .. })), || format!("{e:?}"))?;
        ensure(!e.map(|e| e.to_string()).unwrap_or_default().contains('\n'), || "not one line".into())?;
    }
    ensure(r.reduce_shaped::<Sum, f32, [f32]>(&[&x], shape, &REPRO)? == [4.0; 3], || "rows of ones".into())
}

/// The reproducible `f32` exponential against `f64`'s over `[-104, 0]`,
/// every 2^-10 and at the ends: within 2 units in the last place of `f32`
/// (relative to the value: a subnormal result within 2 of its own units).
fn exact_exp_f32() -> Result<(), Failed> {
    let mut worst = 0.0f64;
    for k in 0..=(104 << 10) {
        let x = -(k as f32) / 1024.0;
        let (got, want) = (exp_neg_exact(x) as f64, (x as f64).exp());
        let unit = (want.abs() * f32::EPSILON as f64).max(f32::from_bits(1) as f64);
        worst = worst.max((got - want).abs() / unit);
    }
    ensure(worst <= 2.0, || format!("{worst} units in the last place"))?;
    ensure(exp_neg_exact(0.0) == 1.0 && exp_neg_exact(-1e-30) == 1.0, || "e^0".into())?;
    ensure(exp_neg_exact(-105.0) == 0.0 && exp_neg_exact(f32::NEG_INFINITY) == 0.0, || "underflow".into())
}

/// The twins of the reproducible variance and logsumexp (the GPU's bits)
/// near the exact values of random data: the order changes nothing beyond
/// rounding.
fn reproducible_near_exact() -> Result<(), Failed> {
    for n in [1usize, 1000, 1 << 20] {
        let x: Vec<f32> = generate(Pattern::Random, n, 5)?;
        let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let (mean, m2) = moments_reference(&wide);
        let got = fixed_order::<Moments, f32>(&x, &x);
        ensure((got.mean - mean).abs() <= 1e-12 * (1.0 + mean.abs()), || format!("n={n}: mean {got:?} vs {mean}"))?;
        ensure((got.m2 - m2).abs() <= 1e-9 * (1.0 + m2), || format!("n={n}: M2 {got:?} vs {m2}"))?;
        let (lse, _) = logsumexp_reference(&x, 0, 0.0);
        let got = fixed_order::<LogSumExp, f32>(&x, &x) as f64;
        ensure((got - lse).abs() <= 1e-5 * (1.0 + lse.abs()), || format!("n={n}: logsumexp {got} vs {lse}"))?;
    }
    // along a shape: the portable form's twin, every row and column
    let x: Vec<f32> = generate(Pattern::Random, 1 << 20, 6)?;
    let (rows, cols) = (256, 4096);
    let m = Matrix::new(rows, cols);
    let column = |c: usize| (0..rows).map(|r| x[r * cols + c]).collect::<Vec<f32>>();
    for (shape, results) in [(Shape::Rows(m), rows), (Shape::Columns(m), cols)] {
        let got = shaped_fixed_order::<LogSumExp, f32>(&[&x], shape, Strategy::Auto)?;
        ensure(got.len() == results, || format!("{shape:?}: {} results", got.len()))?;
        for (k, &g) in got.iter().enumerate() {
            let part = if results == rows { x[k * cols..(k + 1) * cols].to_vec() } else { column(k) };
            let (lse, _) = logsumexp_reference(&part, 0, 0.0);
            ensure((g as f64 - lse).abs() <= 1e-5 * (1.0 + lse.abs()), || format!("{shape:?} {k}: {g} vs {lse}"))?;
        }
    }
    Ok(())
}
