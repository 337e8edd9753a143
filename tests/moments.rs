//! The variance family on the GPU (`Moments`: the mean and `M2` in one
//! pass; `Reducer::var`, `std`, `var_mean`, `std_mean` finish it with
//! torch's `correction`): data whose mean dwarfs its spread, all equal, the
//! torch results for no elements and for one, every shape against the CPU
//! (`tests/shapes.rs` runs `Moments` with the other operations), and
//! planted errors the check must reject: a dropped element and a merge that
//! forgets the term between the parts' means.

mod common;

use common::{ensure, gpu_trial, reducer};
use libtest_mimic::Failed;
use reduction::half::{bf16, f16};
use reduction::op::{MeanM2, Moments};
use reduction::{Op, Options};
use testkit::data::{Pattern, generate};
use testkit::ops::{moments_reference, verify_op};

fn main() {
    common::run(vec![
        gpu_trial("moments::large_mean_small_spread", large_mean),
        gpu_trial("moments::torch_results_for_few_elements", few_elements),
        gpu_trial("moments::var_std_and_means", finished),
        gpu_trial("moments::blocks_of_1024_threads", blocks_of_1024),
        gpu_trial("planted::wrong_moments_fail_the_check", planted),
    ])
}

/// `n` values `mean + spread · u`, `u` uniform in [-1, 1), rounded to `f32`.
fn around(mean: f64, spread: f64, n: usize, seed: u64) -> Result<Vec<f32>, Failed> {
    let u: Vec<f64> = generate(Pattern::Random, n, seed)?;
    Ok(u.iter().map(|&u| (mean + spread * u) as f32).collect())
}

/// Means that dwarf the spread, where a sum-of-squares formula loses every
/// digit: `f32` data of mean 10⁶ and spread 1 (f32's grid there is 1/16)
/// and of mean 10⁴ and spread 10⁻² (grid 2⁻¹⁰) within 10⁻⁵ of the exact
/// variance, relatively; `f32` data of mean 10⁶ and spread 10⁻² are all
/// 10⁶ on that grid, and their variance exactly 0; `f64` data of mean 10⁶
/// and spread 10⁻² within 10⁻⁸ (each part's mean is held to half an `f64`
/// unit at 10⁶, 6·10⁻¹¹, a 10⁻⁸ of the spread, and Chan's merge squares
/// the difference of two means).
fn large_mean() -> Result<(), Failed> {
    let r = reducer();
    for (k, n) in [1000usize, (1 << 22) + 3, 1 << 25].into_iter().enumerate() {
        let seed = 70 + k as u64;
        let u: Vec<f64> = generate(Pattern::Random, n, seed)?;
        for (mean, spread) in [(1e6, 1.0), (1e4, 1e-2)] {
            let x: Vec<f32> = u.iter().map(|&u| (mean + spread * u) as f32).collect();
            let exact = exact_var(&x.iter().map(|&v| v as f64).collect::<Vec<_>>());
            within(&format!("f32 mean {mean} spread {spread} n={n}"), r.var(&x, 1.0)?, exact, 1e-5)?;
        }
        let flat: Vec<f32> = u.iter().map(|&u| (1e6 + 1e-2 * u) as f32).collect();
        ensure(r.var(&flat, 1.0)? == 0.0, || format!("f32 mean 1e6 spread 1e-2 n={n}: not 0"))?;
        let wide: Vec<f64> = u.iter().map(|&u| 1e6 + 1e-2 * u).collect();
        within(&format!("f64 mean 1e6 spread 1e-2 n={n}"), r.var(&wide, 1.0)?, exact_var(&wide), 1e-8)?;
    }
    Ok(())
}

/// The sample variance of `x` from [`moments_reference`].
fn exact_var(x: &[f64]) -> f64 {
    moments_reference(x).1 / (x.len() as f64 - 1.0)
}

/// `Err` unless `got` is within `bound` of `exact > 0`, relatively.
fn within(what: &str, got: f64, exact: f64, bound: f64) -> Result<(), Failed> {
    ensure(exact > 0.0, || format!("{what}: the data have no spread"))?;
    let rel = (got - exact).abs() / exact;
    ensure(rel <= bound, || format!("{what}: var {got}, exact {exact}: relative error {rel:.2e} > {bound:e}"))
}

/// torch's results: no elements have a NaN mean and variance; one element
/// a NaN sample variance (`correction=1`: 0/0) and a zero population one;
/// all equal a variance of exactly 0.
fn few_elements() -> Result<(), Failed> {
    let r = reducer();
    let none: Vec<f32> = Vec::new();
    let (v, m) = r.var_mean(&none, 1.0)?;
    ensure(v.is_nan() && m.is_nan(), || format!("no elements: var {v}, mean {m}"))?;
    let one = [2.5f64];
    ensure(r.var(&one, 1.0)?.is_nan() && r.var(&one, 0.0)? == 0.0, || "one element".into())?;
    let same = vec![bf16::from_f32(3.25); (1 << 20) + 7];
    ensure(r.var_mean(&same, 1.0)? == (0.0, 3.25), || format!("all equal: {:?}", r.var_mean(&same, 1.0)))
}

/// `var`, `std`, `var_mean` and `std_mean` from one `Moments` result, with
/// both corrections, against the CPU's two passes.
fn finished() -> Result<(), Failed> {
    let r = reducer();
    let x: Vec<f64> = generate(Pattern::Random, 3_000_017, 9)?;
    let (mean, m2) = moments_reference(&x);
    let n = x.len() as f64;
    for c in [0.0, 1.0] {
        let var = m2 / (n - c);
        let close = |got: f64, want: f64| (got - want).abs() <= 1e-12 * want.abs();
        let (v, m) = r.var_mean(&x, c)?;
        let (s, m_again) = r.std_mean(&x, c)?;
        ensure(close(v, var) && close(r.var(&x, c)?, var), || format!("correction {c}: var {v}, want {var}"))?;
        ensure(close(s, var.sqrt()) && close(r.std(&x, c)?, var.sqrt()), || format!("correction {c}: std {s}"))?;
        ensure((m - mean).abs() <= 1e-15 && m == m_again, || format!("correction {c}: mean {m}, want {mean}"))?;
    }
    Ok(())
}

/// The variance's entries for blocks of 1024 threads need more registers
/// than such a block allows (70-72 a thread) until they are compiled told
/// their block: every type runs at 1024 threads and is right.
fn blocks_of_1024() -> Result<(), Failed> {
    let r = reducer();
    let opts = Options { block: Some(1024), ..Options::default() };
    let n = (1 << 21) + 5;
    macro_rules! one {
        ($($t:ty)*) => {$({
            let entry = format!("single_pass_b1024_moments_{}", stringify!($t));
            let most = r.gpu().max_threads_per_block(&entry)?;
            ensure(most >= 1024, || format!("{entry}: at most {most} threads a block"))?;
            let x: Vec<$t> = generate(Pattern::Random, n, 31)?;
            let got = r.reduce::<Moments, $t, _>(&[&x], &opts)?;
            let c = verify_op::<Moments, $t>(r, Op::Moments, &x, &x, &opts, got)?;
            ensure(c.ok, || format!("{entry}: {} against {}", c.got, c.expected))?;
        })*};
    }
    one!(f32 f64 bf16 f16);
    Ok(())
}

/// A result missing one element, and one whose two halves were merged
/// without `δ²·n_a·n_b/n`, both fail the check the tests use.
fn planted() -> Result<(), Failed> {
    let r = reducer();
    let x = around(5.0, 1.0, 200_003, 12)?;
    let opts = Options::default();
    let check = |got: MeanM2| verify_op::<Moments, f32>(r, Op::Moments, &x, &x, &opts, got);
    let good = r.reduce::<Moments, f32, _>(&[&x], &opts)?;
    ensure(check(good)?.ok, || "the right result failed".into())?;
    let dropped = r.reduce::<Moments, f32, _>(&[&x[1..]], &opts)?;
    ensure(!check(dropped)?.ok, || "a dropped element passed".into())?;
    // halves whose means differ: the merge's cross term matters
    let mut y = x.clone();
    y[100_000..].iter_mut().for_each(|v| *v += 0.5);
    let (a, b) =
        (r.reduce::<Moments, f32, _>(&[&y[..100_000]], &opts)?, r.reduce::<Moments, f32, _>(&[&y[100_000..]], &opts)?);
    let w = (x.len() - 100_000) as f64 / x.len() as f64;
    let forgot = MeanM2 { mean: a.mean + (b.mean - a.mean) * w, m2: a.m2 + b.m2 };
    let c = verify_op::<Moments, f32>(r, Op::Moments, &y, &y, &opts, forgot)?;
    ensure(!c.ok, || "a merge without the cross term passed".into())
}
