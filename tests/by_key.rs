//! Reduction by key (the voting-and-shuffling article), against the CPU group-by sum.
//!
//! GPU trials: every kernel × f32/f64 × key distribution at sizes around a
//! warp, a block and a tile, up to 10^6 (and the seed's 10^7 elements with
//! 10^6 keys); hand-made key patterns that stress the peer logic (one key
//! per warp, alternating keys, all keys distinct, one key for everything);
//! out-of-range device keys (skipped, counted, reported); the API's errors;
//! views at odd offsets; launching twice. (The benchmark's own test is in
//! `tests/cli.rs`, with the tools.)
//! Random values in [-1, 1) must be within `(count_k + 1) · ε · Σ|x|` of the
//! compensated f64 sum of key `k`; values that are multiples of 1/8 sum
//! exactly in any order, so those must match exactly.
//!
//! CPU trials (run everywhere): the host-side checks and their messages, the
//! entry list against the PTX, the key generators and the reference.
//!
//! Without a GPU the GPU trials are reported as ignored, after one line
//! `SKIPPED: <reason>`.

mod common;

use common::{cpu_trial, ensure, gpu_trial, reducer, run};
use libtest_mimic::{Failed, Trial};
use reduction::by_key::{self, value_types};
use reduction::registry::Kernel;
use reduction::{Error, Options, Ptx, by_key::check_host_input};
use testkit::by_key::{KeyDist, TestValue, generate_keys, groups_per_warp, reference};
use testkit::data::{Pattern, generate};

/// Sizes: tiny, around one warp, a block (256) and a hash tile (1024), and
/// large; `n / 10` keys (at least one), as the seed's 10 elements per key.
const SIZES: [usize; 14] = [1, 2, 31, 32, 33, 255, 256, 257, 1000, 1023, 1025, 4097, 65537, 1_000_003];

fn main() {
    let mut trials = cpu_trials();
    for kernel in by_key::kernels() {
        for ty in value_types().map(|t| t.name()) {
            let k = kernel.id;
            trials.push(typed(format!("by_key::patterns::{k}_{ty}"), ty, move |t| match t {
                Ty::F32 => patterns::<f32>(kernel),
                Ty::F64 => patterns::<f64>(kernel),
            }));
            trials.push(typed(format!("by_key::bad_device_keys::{k}_{ty}"), ty, move |t| match t {
                Ty::F32 => bad_device_keys::<f32>(kernel),
                Ty::F64 => bad_device_keys::<f64>(kernel),
            }));
            for dist in KeyDist::ALL {
                let name = format!("by_key::sums::{k}_{ty}_{}", dist.name());
                trials.push(typed(name, ty, move |t| match t {
                    Ty::F32 => sums::<f32>(kernel, dist),
                    Ty::F64 => sums::<f64>(kernel, dist),
                }));
            }
        }
    }
    for ty in value_types().map(|t| t.name()) {
        for dist in KeyDist::ALL {
            trials.push(typed(format!("by_key::seed_size::{ty}_{}", dist.name()), ty, move |t| match t {
                Ty::F32 => seed_size::<f32>(dist),
                Ty::F64 => seed_size::<f64>(dist),
            }));
        }
        trials.push(typed(format!("by_key::api::{ty}"), ty, |t| match t {
            Ty::F32 => api::<f32>(),
            Ty::F64 => api::<f64>(),
        }));
    }
    run(trials)
}

/// A value type, as a run-time value for the trial table.
#[derive(Clone, Copy)]
enum Ty {
    F32,
    F64,
}

/// A GPU trial for the value type named `ty`.
fn typed(name: String, ty: &str, f: impl FnOnce(Ty) -> Result<(), Failed> + Send + 'static) -> Trial {
    let t = if ty == "f32" { Ty::F32 } else { Ty::F64 };
    gpu_trial(name, move || f(t))
}

/// Sum `keys`/`values` on the GPU with `kernel` and compare with the
/// reference (`exact`: bit for bit, for values whose sums are exact).
fn check<T: TestValue>(
    kernel: &'static Kernel,
    keys: &[u32],
    values: &[T],
    num_keys: usize,
    case: &str,
    exact: bool,
) -> Result<(), Failed> {
    let got =
        reducer().reduce_by_key(keys, values, num_keys, &Options { kernel: Some(kernel), ..Options::default() })?;
    let case = format!("{} {} {case} n={} keys={num_keys}", kernel.id, T::NAME, keys.len());
    reference(keys, values, num_keys)?.check(&got, &case, exact)?;
    Ok(())
}

/// Every size, random values within tolerance and multiples of 1/8 exactly.
fn sums<T: TestValue>(kernel: &'static Kernel, dist: KeyDist) -> Result<(), Failed> {
    for (i, &n) in SIZES.iter().enumerate() {
        let num_keys = (n / 10).max(1);
        let seed = 100 * i as u64 + 7;
        let keys = generate_keys(dist, n, num_keys as u32, seed)?;
        let random: Vec<T> = generate(Pattern::Random, n, seed)?;
        check(kernel, &keys, &random, num_keys, &dist.name(), false)?;
        let quarters: Vec<T> = generate(Pattern::Large, n, seed + 1)?;
        check(kernel, &keys, &quarters, num_keys, &format!("{} exact", dist.name()), true)?;
    }
    // few elements among many keys: most keys stay 0
    let keys = generate_keys(dist, 1000, 1_000_000, 5)?;
    check(
        kernel,
        &keys,
        &generate::<T>(Pattern::Random, 1000, 5)?,
        1_000_000,
        &format!("{} sparse", dist.name()),
        false,
    )
}

/// Key patterns that stress the peer logic, with exact values.
fn patterns<T: TestValue>(kernel: &'static Kernel) -> Result<(), Failed> {
    let n = 10_007;
    type Case = (&'static str, fn(usize) -> u32);
    let cases: [Case; 9] = [
        ("one key", |_| 3),
        ("one key per warp", |i| (i / 32) as u32),
        ("two keys per warp", |i| (i / 16) as u32),
        ("alternating", |i| (i % 2) as u32),
        ("every third", |i| (i % 3) as u32),
        ("all distinct", |i| i as u32),
        ("descending", |i| (10_006 - i) as u32 / 5),
        ("lane groups", |i| ((i % 32) / 4) as u32 + 8 * (i / 1024) as u32),
        ("highest key", |i| if i % 7 == 0 { 10_006 } else { (i / 10) as u32 }),
    ];
    let values: Vec<T> = generate(Pattern::Large, n, 11)?;
    for (name, key) in cases {
        let keys: Vec<u32> = (0..n).map(key).collect();
        check(kernel, &keys, &values, n, name, true)?;
    }
    // a warp's worth of each of 4 keys, interleaved lane by lane
    let keys: Vec<u32> = (0..n).map(|i| (i % 4) as u32 + 4 * (i / 128) as u32).collect();
    check(kernel, &keys, &values, n, "interleaved", true)
}

/// Device keys `>= num_keys` are skipped and counted; the others are summed.
fn bad_device_keys<T: TestValue>(kernel: &'static Kernel) -> Result<(), Failed> {
    let r = reducer();
    let stream = r.gpu().stream();
    let (n, num_keys) = (100_003usize, 10_000usize);
    let mut keys = generate_keys(KeyDist::Window(32), n, num_keys as u32, 21)?;
    for (j, bad) in [num_keys as u32, num_keys as u32 + 1, u32::MAX, u32::MAX - 1].into_iter().enumerate() {
        for i in (j * 7..n).step_by(997 + j) {
            keys[i] = bad;
        }
    }
    // a whole warp of bad keys too
    keys[64..96].fill(u32::MAX);
    let values: Vec<T> = generate(Pattern::Large, n, 21)?;
    let expected = reference(&keys, &values, num_keys)?;
    let d_keys = stream.clone_htod(&keys)?;
    let d_values = stream.clone_htod(&values)?;
    let mut d_sums = stream.alloc_zeros::<T>(num_keys + 5)?;
    let sentinel: Vec<T> = generate(Pattern::Large, 5, 99)?;
    stream.memcpy_htod(&sentinel, &mut d_sums.slice_mut(num_keys..))?;
    let opts = Options { kernel: Some(kernel), ..Options::default() };
    // queued: the bad keys are skipped, the others summed
    r.reduce_by_key_into(&d_keys, &d_values, &mut d_sums.as_view_mut(), num_keys, &opts)?;
    // to the host: the same sums, and the bad keys counted and reported
    let got = r.reduce_by_key(&d_keys, &d_values, num_keys, &opts);
    let count = expected.out_of_range;
    ensure(
        matches!(got, Err(Error::KeysOutOfRange { count: c, n: nn, num_keys: k }) if c == count && nn == n && k == num_keys),
        || format!("{}: expected KeysOutOfRange {{ count: {count} }}, got {got:?}", kernel.id),
    )?;
    let sums = stream.clone_dtoh(&d_sums)?;
    expected.check(&sums[..num_keys], &format!("{} {} valid keys of bad input", kernel.id, T::NAME), true)?;
    ensure(sums[num_keys..] == sentinel[..], || format!("{}: sums past num_keys were written", kernel.id))
}

/// The seed's size: 10^7 elements, 10^6 keys, every kernel.
fn seed_size<T: TestValue>(dist: KeyDist) -> Result<(), Failed> {
    let (n, num_keys) = (10_000_000, 1_000_000);
    let keys = generate_keys(dist, n, num_keys as u32, 3)?;
    let values: Vec<T> = generate(Pattern::Random, n, 3)?;
    let expected = reference(&keys, &values, num_keys)?;
    for kernel in by_key::kernels() {
        let got = reducer().reduce_by_key(
            &keys,
            &values,
            num_keys,
            &Options { kernel: Some(kernel), ..Options::default() },
        )?;
        expected.check(&got, &format!("{} {} {} n={n}", kernel.id, T::NAME, dist.name()), false)?;
    }
    Ok(())
}

/// The API's edges and errors on the GPU.
fn api<T: TestValue>() -> Result<(), Failed> {
    let r = reducer();
    let stream = r.gpu().stream();
    let zero = T::default();

    // no elements: zeros; no keys either: empty
    ensure(r.reduce_by_key::<T, _, _>(&[], &[], 3, &Options::default())? == [zero; 3], || "n = 0 gives zeros".into())?;
    ensure(r.reduce_by_key::<T, _, _>(&[], &[], 0, &Options::default())?.is_empty(), || {
        "no keys gives no sums".into()
    })?;

    // host keys are checked before anything runs
    let values: Vec<T> = generate(Pattern::Large, 4, 1)?;
    let got = r.reduce_by_key(&[0, 1, 5, 9], &values, 5, &Options::default());
    ensure(matches!(got, Err(Error::KeyOutOfRange { index: 2, key: 5, num_keys: 5 })), || format!("{got:?}"))?;
    let got = r.reduce_by_key(&[0, 1, 2], &values, 5, &Options::default());
    ensure(matches!(got, Err(Error::LengthMismatch { keys: 3, values: 4 })), || format!("{got:?}"))?;
    let got = r.reduce_by_key(&[0, 0, 0, 0], &values, 0, &Options::default());
    ensure(matches!(got, Err(Error::KeyOutOfRange { index: 0, key: 0, num_keys: 0 })), || format!("{got:?}"))?;

    // device input: lengths, output size, and num_keys = 0
    let (n, num_keys) = (5000usize, 700usize);
    let keys = generate_keys(KeyDist::Sorted, n, num_keys as u32, 2)?;
    let values: Vec<T> = generate(Pattern::Random, n, 2)?;
    let d_keys = stream.clone_htod(&keys)?;
    let d_values = stream.clone_htod(&values)?;
    let mut d_sums = stream.alloc_zeros::<T>(num_keys)?;
    for kernel in by_key::kernels() {
        let got = r.reduce_by_key_into(
            &d_keys.slice(..n - 1),
            &d_values.as_view(),
            &mut d_sums.as_view_mut(),
            num_keys,
            &Options { kernel: Some(kernel), ..Options::default() },
        );
        ensure(matches!(got, Err(Error::LengthMismatch { .. })), || format!("{got:?}"))?;
        let got = r.reduce_by_key_into(
            &d_keys.as_view(),
            &d_values.as_view(),
            &mut d_sums.as_view_mut(),
            num_keys + 1,
            &Options { kernel: Some(kernel), ..Options::default() },
        );
        ensure(matches!(got, Err(Error::OutputTooShort { len: 700, num_keys: 701 })), || format!("{got:?}"))?;
        let none = Options { kernel: Some(kernel), ..Options::default() };
        r.reduce_by_key_into(&d_keys, &d_values, &mut d_sums.slice_mut(..0), 0, &none)?; // every key skipped
        let got = r.reduce_by_key(&d_keys, &d_values, 0, &none);
        ensure(matches!(got, Err(Error::KeysOutOfRange { count: 5000, n: 5000, num_keys: 0 })), || format!("{got:?}"))?;

        // views at odd offsets, launched twice into the same (dirty) output
        for offset in [1, 3] {
            let expected = reference(&keys[offset..], &values[offset..], num_keys)?;
            for run in 0..2 {
                r.reduce_by_key_into(
                    &d_keys.slice(offset..),
                    &d_values.slice(offset..),
                    &mut d_sums.as_view_mut(),
                    num_keys,
                    &Options { kernel: Some(kernel), ..Options::default() },
                )?;
                let got = stream.clone_dtoh(&d_sums)?;
                expected.check(&got, &format!("{} {} offset {offset} run {run}", kernel.id, T::NAME), false)?;
            }
        }
    }
    Ok(())
}

fn cpu_trials() -> Vec<Trial> {
    vec![
        cpu_trial("by_key::host_checks::lengths_and_keys", || {
            ensure(check_host_input(&[], 0, 0).is_ok(), || "empty input is fine".into())?;
            let e = check_host_input(&[1, 2, 3], 2, 10);
            ensure(matches!(e, Err(Error::LengthMismatch { keys: 3, values: 2 })), || format!("{e:?}"))?;
            let e = check_host_input(&[1, 2, 10, 11], 4, 10);
            ensure(matches!(e, Err(Error::KeyOutOfRange { index: 2, key: 10, num_keys: 10 })), || format!("{e:?}"))?;
            let e = check_host_input(&[u32::MAX], 1, 5);
            ensure(matches!(e, Err(Error::KeyOutOfRange { index: 0, key: u32::MAX, .. })), || format!("{e:?}"))?;
            let e = check_host_input(&[0], 1, u32::MAX as usize + 1);
            ensure(matches!(e, Err(Error::Unsupported { .. })), || format!("{e:?}"))?;
            ensure(check_host_input(&[u32::MAX - 1], 1, u32::MAX as usize).is_ok(), || "largest key".into())
        }),
        cpu_trial("by_key::host_checks::messages_name_the_values", || {
            let e = check_host_input(&[0, 7], 2, 7).unwrap_err().to_string();
            ensure(e.contains("keys[1] = 7") && e.contains("num_keys = 7"), || e.clone())?;
            let e = check_host_input(&[0, 7], 3, 7).unwrap_err().to_string();
            ensure(e.contains("2 keys but 3 values"), || e.clone())?;
            let e = Error::KeysOutOfRange { count: 4, n: 100, num_keys: 9 }.to_string();
            ensure(e.contains("4 of 100 keys") && e.contains("num_keys = 9"), || e.clone())?;
            let e = Error::OutputTooShort { len: 3, num_keys: 9 }.to_string();
            ensure(e.contains("3 sums") && e.contains("num_keys = 9"), || e.clone())
        }),
        cpu_trial("by_key::entries_are_in_the_ptx", || {
            let ptx = Ptx::embedded();
            let in_ptx: Vec<&str> = ptx.entries().filter(|e| e.starts_with("by_key_")).collect();
            let listed: Vec<String> = by_key::kernels().flat_map(|k| k.entries()).collect();
            ensure(listed.len() == in_ptx.len() && listed.iter().all(|e| in_ptx.contains(&e.as_str())), || {
                format!("listed {listed:?}, in the PTX {in_ptx:?}")
            })
        }),
        gpu_trial("by_key::kernel_choice", || {
            let r = reducer();
            let (keys, values) = ([0u32, 1, 1], [1.0f32, 2.0, 3.0]);
            for kernel in by_key::kernels() {
                let got =
                    r.reduce_by_key(&keys, &values, 2, &Options { kernel: Some(kernel), ..Options::default() })?;
                ensure(got == [1.0, 5.0], || format!("{}: {got:?}", kernel.id))?;
            }
            let flat = Options { kernel: Some(Kernel::find("reduce3")?), ..Options::default() };
            let e = r.reduce_by_key(&keys, &values, 2, &flat);
            ensure(matches!(e, Err(Error::Unsupported { .. })), || format!("{e:?}"))?;
            let more = Options { block: Some(128), ..Options::default() };
            let e = r.reduce_by_key(&keys, &values, 2, &more);
            ensure(matches!(e, Err(Error::Unsupported { .. })), || format!("{e:?}"))?;
            let by_default = r.reduce_by_key(&keys, &values, 2, &Options::default())?;
            ensure(by_default == [1.0, 5.0], || format!("{by_default:?}"))
        }),
        cpu_trial("by_key::key_distributions", || {
            let (n, keys) = (1_000_000, 100_000);
            let mut groups = Vec::new();
            for dist in KeyDist::ALL {
                let k = generate_keys(dist, n, keys, 1)?;
                ensure(k.len() == n && k.iter().all(|&x| x < keys), || dist.name())?;
                ensure(k == generate_keys(dist, n, keys, 1)?, || format!("{} is not reproducible", dist.name()))?;
                ensure(KeyDist::parse(&dist.name())? == dist, || dist.name())?;
                groups.push(groups_per_warp(&k));
            }
            // sorted with 10 per key: 4 keys in every warp (32 = 3 × 10 + 2); random: almost 32
            ensure(groups[0] == 4.0, || format!("sorted: {groups:?}"))?;
            ensure(groups.windows(2).all(|w| w[0] < w[1]), || format!("more disorder, more groups: {groups:?}"))?;
            ensure(groups[3] > 31.0, || format!("random: {groups:?}"))
        }),
        cpu_trial("by_key::reference_is_a_group_by_sum", || {
            let n = 100_000;
            let keys = generate_keys(KeyDist::Random, n, 1000, 4)?;
            let values: Vec<f64> = generate(Pattern::Large, n, 4)?;
            let r = reference(&keys, &values, 1000)?;
            let mut naive = vec![0.0f64; 1000];
            for (&k, &v) in keys.iter().zip(&values) {
                naive[k as usize] += v; // multiples of 1/8: exact in any order
            }
            ensure(r.sums == naive, || "sums".into())?;
            ensure(r.counts.iter().sum::<u64>() == n as u64 && r.out_of_range == 0, || "counts".into())?;
            // the tolerance lets every key pass with its own sum and fails a wrong one
            let got: Vec<f64> = r.sums.clone();
            r.check(&got, "self", true)?;
            let mut wrong = got;
            wrong[17] += 0.125;
            ensure(r.check(&wrong, "wrong", false).is_err(), || "a wrong sum passed".into())
        }),
    ]
}
