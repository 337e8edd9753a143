//! Every operation of the default kernel × every element type it has
//! (`Op::types`), on the GPU against the CPU references of
//! `testkit::ops`: sizes 0, 1, 31..33, 2^k±1 up to 2^25+3; arg-min/max
//! with ties and NaN at the first and last element and on both sides of
//! block, vector and grid-stride boundaries; half sums past f16's
//! saturation; dot products that cancel; the typed errors; and planted
//! errors the checks must reject.

mod common;

use common::{ensure, gpu_trial, reducer};
use libtest_mimic::{Failed, Trial};
use reduction::cudarc::driver::CudaView;
use reduction::half::{bf16, f16};
use reduction::{
    ArgMax, DType, Element, Error, Op, Options, Ptx, Reducer, Sum,
    op::{AMinMax, All, Arg, CountNonzero, Dot, MinMax, NanMean, PowerSum, Prod, Reduction},
    registry::Kernel,
    shape::{Matrix, Shape, offsets_of},
};
use testkit::data::{Pattern, Sample, generate};
use testkit::ops::{Number, Outcome, epsilon, judge, power_sum_reference, verify_op};
use testkit::poisoned::Poisoned;
use testkit::with_operation;

/// The element types under test.
trait TestElement: Element + Sample + Number + Outcome + Default {}
impl<T: Element + Sample + Number + Outcome + Default> TestElement for T {}

const SIZES: &[usize] =
    &[0, 1, 31, 32, 33, 1023, 1025, (1 << 16) - 1, (1 << 16) + 1, (1 << 20) + 1, (1 << 24) - 1, (1 << 25) + 3];

fn main() {
    let mut trials: Vec<Trial> = Vec::new();
    for &op in Op::ALL {
        for &t in op.types() {
            trials.push(gpu_trial(format!("ops::{}_{}", op.name(), t.name()), move || {
                with_operation!(op, t, |R, T| sizes::<R, T>(op, t), else Err("not an operation of the type".into()))
            }));
        }
    }
    // torch's other reductions on the values that decide them
    let decided_by_special_values = [
        Op::Prod,
        Op::All,
        Op::Any,
        Op::CountNonzero,
        Op::AMinMax,
        Op::NanSum,
        Op::NanMean,
        Op::Norm1,
        Op::NormInf,
        Op::NormNegInf,
        Op::Moments,
        Op::LogSumExp,
        Op::NanMin,
        Op::NanMax,
        Op::Min,
        Op::Max,
        Op::PowerSum,
    ];
    for op in decided_by_special_values {
        for &t in op.types() {
            trials.push(gpu_trial(
                format!("special::{}_{}", op.name(), t.name()),
                move || with_operation!(op, t, |R, T| special_values::<R, T>(reducer(), op), else Err("unsupported".into())),
            ));
        }
    }
    for t in [DType::I32, DType::U64, DType::F32, DType::F64, DType::F16, DType::BF16] {
        for op in [Op::ArgMin, Op::ArgMax] {
            trials.push(gpu_trial(
                format!("arg::ties_and_nan_{}_{}", op.name(), t.name()),
                move || with_operation!(op, t, |R, T| planted_extremes::<R, T>(op), else Err("unsupported".into())),
            ));
        }
    }
    for t in [DType::I32, DType::U32, DType::F32, DType::F64, DType::F16, DType::BF16] {
        for op in [Op::ArgMin, Op::ArgMax] {
            trials.push(gpu_trial(
                format!("arg::monotone_{}_{}", op.name(), t.name()),
                move || with_operation!(op, t, |R, T| monotone::<R, T>(op), else Err("unsupported".into())),
            ));
        }
    }
    for &t in Op::PowerSum.types() {
        trials.push(gpu_trial(
            format!("power::exponents_{}", t.name()),
            move || with_operation!(Op::PowerSum, t, |R, T| exponents::<R, T>(), else Err("unsupported".into())),
        ));
    }
    trials.extend([
        gpu_trial("power::norm_p_orders_and_errors", norm_p_orders),
        gpu_trial("planted::wrong_exponent_or_dropped_element_fails_the_power_check", planted_power),
        gpu_trial("half::sums_do_not_saturate", sums_do_not_saturate),
        gpu_trial("half::packed_forms_as_before_sm80", half_packed_forms_before_sm80),
        gpu_trial("dot::cancelling_sums", cancelling_dot),
        gpu_trial("dot::unaligned_and_differently_aligned_inputs", unaligned_dot),
        gpu_trial("errors::typed_before_any_launch", typed_errors),
        gpu_trial("planted::dropped_element_fails_the_dot_check", planted_dot),
        gpu_trial("planted::wrong_index_fails_the_arg_check", planted_arg),
        gpu_trial("planted::wrong_results_fail_the_new_checks", planted_new),
    ]);
    common::run(trials)
}

/// `Err` unless `got` is `op`'s result on `a` (and `b`, for `Dot`): the
/// library's `verify_op`, at the default block size.
fn verify<R: Reduction<T>, T: TestElement>(op: Op, a: &[T], b: &[T], got: R::Out) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let c = verify_op::<R, T>(reducer(), op, a, b, &Options::default(), got)?;
    ensure(c.ok, || format!("{} {} n={}: GPU {}, CPU {}", op.name(), T::NAME, c.n, c.got, c.expected))
}

/// Run operation `R` on host `a` (and `b`).
fn run<R: Reduction<T>, T: TestElement>(a: &[T], b: &[T]) -> reduction::Result<R::Out> {
    run_on::<R, T>(reducer(), a, b)
}

/// [`run`] with the kernels of `r`.
fn run_on<R: Reduction<T>, T: TestElement>(r: &Reducer, a: &[T], b: &[T]) -> reduction::Result<R::Out> {
    let inputs: Vec<&[T]> = if R::INPUTS == 2 { vec![a, b] } else { vec![a] };
    r.reduce::<R, T, [T]>(&inputs, &Options::default())
}

/// Run operation `R` on device views through `prepare` and
/// `enqueue`, the result left in a device buffer poisoned first,
/// then read back.
fn into_device<R: Reduction<T>, T: TestElement>(inputs: &[&CudaView<'_, T>]) -> Result<R::Out, Failed> {
    let r = reducer();
    let mut out = Poisoned::<R::Out>::new(r.gpu())?;
    let p = r.prepare::<R, T>(inputs[0].len(), &Options::default())?;
    r.enqueue(&p, inputs, &mut out.view()?)?;
    Ok(out.read(r.gpu())?)
}

fn sizes<R: Reduction<T>, T: TestElement>(op: Op, _: DType) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    for (k, &n) in SIZES.iter().enumerate() {
        let a: Vec<T> = generate(Pattern::Random, n, 11 + k as u64)?;
        let b: Vec<T> = generate(Pattern::Random, n, 1000 + k as u64)?;
        match run::<R, T>(&a, &b) {
            Ok(got) => verify::<R, T>(op, &a, &b, got)?,
            Err(Error::Empty { .. }) if n == 0 && R::NEEDS_AN_ELEMENT => {}
            Err(e) => return Err(format!("{} {} n={n}: {e}", op.name(), T::NAME).into()),
        }
        // the same on the device, at an offset of one element (any alignment)
        if n > 1 {
            let stream = reducer().gpu().stream();
            let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
            let (va, vb) = (da.slice(1..), db.slice(1..));
            let inputs = if R::INPUTS == 2 { vec![&va, &vb] } else { vec![&va] };
            let got = reducer().reduce::<R, T, _>(&inputs, &Options::default())?;
            verify::<R, T>(op, &a[1..], &b[1..], got)?;
            // and left in a device buffer (`enqueue`)
            verify::<R, T>(op, &a[1..], &b[1..], into_device::<R, T>(&inputs)?)?;
        }
    }
    Ok(())
}

/// Positions where an extreme is planted: the ends, and both sides of a
/// 16-byte vector, a warp's and a block's vectors, and a grid-stride step.
fn boundaries(n: usize) -> Vec<(usize, usize)> {
    let mut p = vec![(0, 1), (0, n - 1), (n - 2, n - 1)];
    for step in [8, 32 * 8, 256 * 8, 1024 * 4, 132 * 1024 * 4, 132 * 2048 * 8] {
        if step < n {
            p.push((step - 1, step));
            p.push((step, 2 * step.min(n / 2)));
        }
    }
    p
}

fn planted_extremes<R: Reduction<T>, T: TestElement>(op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let n = (1 << 23) + 5;
    let base: Vec<T> = generate(Pattern::Random, n, 5)?;
    // the planted extreme: beyond the random values (|x| < 1) for floats,
    // and NaN; the type's extreme for integers
    let big = if op == Op::ArgMax { 4.0 } else { -4.0 };
    let values: Vec<T> = if testkit::dtype::<T>().is_float() {
        vec![from_f64::<T>(big), from_f64::<T>(f64::NAN)]
    } else {
        vec![if op == Op::ArgMax { max_of::<T>() } else { min_of::<T>() }]
    };
    for v in values {
        for (p, q) in boundaries(n) {
            let mut a = base.clone();
            for x in a.iter_mut().filter(|x| x.bits() == v.bits()) {
                *x = T::sample(Pattern::Ones, 0); // no random element ties with the planted one
            }
            a[p] = v;
            a[q] = v; // a tie (or a second NaN): the first index wins
            let got = run::<R, T>(&a, &a)?;
            verify::<R, T>(op, &a, &a, got)?;
            ensure(got.index() == Some(p as u64), || {
                format!("{} {}: planted at {p} and {q}, got {got:?}", op.name(), T::NAME)
            })?;
        }
    }
    Ok(())
}

/// Rising and falling inputs, where the best so far changes at every
/// vector (what the arg-min/max shortcut of a vector that cannot win does
/// not skip), with runs of equal values across vector boundaries (the
/// types' rounding): the first index of the best run wins. And, for
/// floats, every element the worst value (`-inf` for arg-max): the first.
fn monotone<R: Reduction<T>, T: TestElement>(op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    for n in [1027, (1 << 20) + 3, (1 << 24) + 1] {
        let rising: Vec<T> = (0..n).map(|i| from_f64::<T>(2000.0 * i as f64 / n as f64 - 1000.0)).collect();
        let falling: Vec<T> = rising.iter().rev().copied().collect();
        let mut inputs = vec![rising, falling];
        if testkit::dtype::<T>().is_float() {
            let worst = if op == Op::ArgMax { f64::NEG_INFINITY } else { f64::INFINITY };
            inputs.push(vec![from_f64::<T>(worst); n]);
        }
        for a in &inputs {
            let got = run::<R, T>(a, a)?;
            verify::<R, T>(op, a, a, got)?;
        }
    }
    Ok(())
}

/// Inputs built to decide each operation: zeros (`±0`) and, for floats,
/// NaN and `±inf` at the first, a middle and the last element; all of
/// them zero, all NaN; at 1, 2, 1000 and 2^20+3 elements, from the host
/// and from a device view at an offset of one element, with the kernels of
/// `r`. The sums see no infinities (their bound would be infinite).
fn special_values<R: Reduction<T>, T: TestElement>(r: &Reducer, op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let float = testkit::dtype::<T>().is_float();
    let sums = matches!(op, Op::Prod | Op::NanSum | Op::NanMean | Op::Norm1);
    let mut specials = vec![0.0, -0.0];
    if float {
        specials.push(f64::NAN);
        if !sums {
            specials.extend([f64::INFINITY, f64::NEG_INFINITY]);
        }
    }
    for (k, n) in [1usize, 2, 1000, (1 << 20) + 3].into_iter().enumerate() {
        let base: Vec<T> = generate(Pattern::Random, n, 40 + k as u64)?;
        let mut inputs: Vec<Vec<T>> = Vec::new();
        for &v in &specials {
            let mut a = base.clone();
            for at in [0, n / 2, n - 1] {
                a[at] = from_f64::<T>(v);
            }
            inputs.push(a);
            if v.is_nan() || v == 0.0 {
                inputs.push(vec![from_f64::<T>(v); n]); // all of them
            }
        }
        for a in &inputs {
            match run_on::<R, T>(r, a, a) {
                Ok(got) => verify::<R, T>(op, a, a, got)?,
                Err(e) => return Err(format!("{} {} n={n}: {e}", op.name(), T::NAME).into()),
            }
            if n > 1 {
                let d = r.gpu().stream().clone_htod(a)?;
                let view = d.slice(1..);
                let got = r.reduce::<R, T, _>(&[&view], &Options::default())?;
                verify::<R, T>(op, &a[1..], &a[1..], got)?;
            }
        }
    }
    Ok(())
}

/// The half types' extremes and logsumexp as a card before sm_80 runs
/// them (each lane widened and compared in `f32`; later cards load the
/// forms that compare two lanes an instruction, `min.NaN.bf16x2` ...), on
/// whatever card this is: the sm_75 entries of the embedded PTX ahead of
/// the rest, on the values that decide them, against the CPU.
fn half_packed_forms_before_sm80() -> Result<(), Failed> {
    let ops = [Op::Min, Op::Max, Op::AMinMax, Op::NanMin, Op::NanMax, Op::NormInf, Op::NormNegInf, Op::LogSumExp];
    let embedded = Ptx::embedded();
    let mut before = Vec::new();
    for entry in embedded.entries().filter(|e| {
        let half = e.ends_with("_bf16") || e.ends_with("_f16");
        half && e.starts_with("single_pass_") && ops.iter().any(|op| e.contains(&format!("_{}_", op.name())))
    }) {
        let module = embedded.module_for(entry)?; // the sm_75 form
        ensure(!module.contains(".NaN."), || format!("{entry}: the sm_80 form"))?;
        before.push(Ptx::from_text(module, entry));
    }
    ensure(before.len() == 2 * ops.len() * 6, || format!("{} entries", before.len()))?;
    let before = before.into_iter().reduce(Ptx::with).ok_or("no entries")?;
    let r = Reducer::with_ptx(0, before.with(embedded))?;
    for op in ops {
        for t in [DType::F16, DType::BF16] {
            with_operation!(op, t, |R, T| special_values::<R, T>(&r, op), else Err("unsupported".into()))?;
        }
    }
    Ok(())
}

/// Results that are wrong in the way a kernel would be wrong must fail the
/// checks: a count off by one, an `all` that missed the zero, a NaN that
/// was not skipped, a min-and-max whose max is another element's, a
/// product with an element dropped.
fn planted_new() -> Result<(), Failed> {
    let mut a: Vec<f32> = generate(Pattern::Random, 100_003, 6)?;
    a[500] = 0.0;
    a[70_000] = f32::NAN;
    let r = reducer();
    let opts = Options::default();
    let count = r.reduce::<CountNonzero, f32, _>(&[&a], &opts)?;
    verify::<CountNonzero, f32>(Op::CountNonzero, &a, &a, count)?;
    ensure(verify::<CountNonzero, f32>(Op::CountNonzero, &a, &a, count - 1).is_err(), || {
        "a count off by one passed".into()
    })?;
    let all = r.reduce::<All, f32, _>(&[&a], &opts)?;
    verify::<All, f32>(Op::All, &a, &a, all)?;
    ensure(verify::<All, f32>(Op::All, &a, &a, 1).is_err(), || "an all that missed the zero passed".into())?;
    let mean = r.reduce::<NanMean, f32, _>(&[&a], &opts)?;
    verify::<NanMean, f32>(Op::NanMean, &a, &a, mean)?;
    ensure(verify::<NanMean, f32>(Op::NanMean, &a, &a, f32::NAN).is_err(), || "an unskipped NaN passed".into())?;
    let range = r.reduce::<AMinMax, f32, _>(&[&a[..60_000]], &opts)?;
    verify::<AMinMax, f32>(Op::AMinMax, &a[..60_000], &a[..60_000], range)?;
    let wrong = MinMax { max: a[1], ..range };
    ensure(verify::<AMinMax, f32>(Op::AMinMax, &a[..60_000], &a[..60_000], wrong).is_err(), || {
        "a wrong max passed".into()
    })?;
    let near_one: Vec<f32> = (0..31).map(|i| 1.0 + (i as f32 - 15.0) / 64.0).collect();
    let prod = r.reduce::<Prod, f32, _>(&[&near_one], &opts)?;
    verify::<Prod, f32>(Op::Prod, &near_one, &near_one, prod)?;
    let dropped = r.reduce::<Prod, f32, _>(&[&near_one[..30]], &opts)?;
    ensure(verify::<Prod, f32>(Op::Prod, &near_one, &near_one, dropped).is_err(), || "a dropped factor passed".into())
}

fn from_f64<T: TestElement>(x: f64) -> T {
    // through the f32 sample path's types: every float type has from_f64 via half/f32/f64
    let f = x as f32;
    match testkit::dtype::<T>() {
        DType::F16 => cast(f16::from_f32(f)),
        DType::BF16 => cast(bf16::from_f32(f)),
        DType::F32 => cast(f),
        DType::F64 => cast(x),
        DType::I32 => cast(x as i32),
        DType::U32 => cast(x as u32),
        DType::I64 => cast(x as i64),
        DType::U64 => cast(x as u64),
    }
}

/// `x` as `T`, when they are the same type.
fn cast<T: 'static + Copy, U: 'static + Copy>(x: U) -> T {
    *(&x as &dyn std::any::Any).downcast_ref::<T>().expect("the caller matched the type")
}

fn max_of<T: TestElement>() -> T {
    match testkit::dtype::<T>() {
        DType::I32 => cast(i32::MAX),
        DType::U32 => cast(u32::MAX),
        DType::I64 => cast(i64::MAX),
        _ => cast(u64::MAX),
    }
}

fn min_of<T: TestElement>() -> T {
    match testkit::dtype::<T>() {
        DType::I32 => cast(i32::MIN),
        DType::U32 => cast(0u32),
        DType::I64 => cast(i64::MIN),
        _ => cast(0u64),
    }
}

fn sums_do_not_saturate() -> Result<(), Failed> {
    let r = reducer();
    let got = r.sum(&vec![f16::ONE; 4096])?;
    ensure(got == 4096.0, || format!("4096 f16 ones summed to {got}"))?;
    let got = r.sum(&vec![bf16::ONE; 1 << 20])?;
    ensure(got == (1 << 20) as f32, || format!("2^20 bf16 ones summed to {got}"))?;
    let got = r.mean(&vec![f16::from_f32(0.5); 100_001])?;
    ensure(got == 0.5, || format!("mean of f16 halves: {got}"))
}

fn cancelling_dot() -> Result<(), Failed> {
    for n in [1024usize, (1 << 22) + 2] {
        let half: Vec<f32> = generate(Pattern::Random, n / 2, 3)?;
        let a: Vec<f32> = half.iter().chain(&half).copied().collect();
        let b: Vec<f32> = (0..n).map(|i| if i < n / 2 { 1.0 } else { -1.0 }).collect();
        let got = reducer().dot(&a, &b)?;
        verify::<Dot, f32>(Op::Dot, &a, &b, got)?; // the exact answer is 0
        let got = reducer()
            .dot(&a.iter().map(|&x| x as f64).collect::<Vec<_>>(), &b.iter().map(|&x| x as f64).collect::<Vec<_>>())?;
        ensure(got.abs() < 1e-9, || format!("f64 dot that cancels: {got}"))?;
    }
    Ok(())
}

fn unaligned_dot() -> Result<(), Failed> {
    let n = (1 << 20) + 7;
    let a: Vec<f32> = generate(Pattern::Random, n, 1)?;
    let b: Vec<f32> = generate(Pattern::Random, n, 2)?;
    let stream = reducer().gpu().stream();
    let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    for (oa, ob) in [(0, 0), (1, 1), (3, 3), (0, 1), (1, 2), (2, 0)] {
        let m = n - 3;
        let (va, vb) = (da.slice(oa..oa + m), db.slice(ob..ob + m));
        let got = reducer().reduce::<Dot, f32, _>(&[&va, &vb], &Options::default())?;
        verify::<Dot, f32>(Op::Dot, &a[oa..oa + m], &b[ob..ob + m], got)?;
    }
    Ok(())
}

fn typed_errors() -> Result<(), Failed> {
    let r = reducer();
    let e = r.dot(&vec![1.0f32; 3], &vec![1.0; 4]).unwrap_err();
    ensure(matches!(e, Error::InputsDiffer { op: "dot", a: 3, b: 4 }), || format!("{e:?}"))?;
    let e = r.argmax::<bf16, _>(&vec![]).unwrap_err();
    ensure(matches!(e, Error::Empty { op: "argmax" }), || format!("{e:?}"))?;
    let e = r.reduce::<Dot, f32, [f32]>(&[&[1.0][..]], &Options::default()).unwrap_err();
    ensure(e.to_string().contains("takes 2 input"), || format!("{e}"))?;
    let teaching = Options { kernel: Some(Kernel::find("reduce3")?), ..Options::default() };
    let e = r.reduce::<ArgMax, f32, [f32]>(&[&[1.0][..]], &teaching).unwrap_err();
    ensure(matches!(e, Error::Unsupported { .. }), || format!("{e:?}"))?;
    ensure(!e.to_string().contains('\n'), || format!("not one line: {e}"))?;
    // into a device buffer: a missing second input, a length other than
    // prepared, no room, an output not aligned for it
    let s = r.gpu().stream();
    let x = s.clone_htod(&vec![1.0f32; 64])?;
    let mut bytes = s.alloc_zeros::<u8>(64)?;
    let dot = r.prepare::<Dot, f32>(64, &Options::default())?;
    // SAFETY: every bit pattern is an `f32`; the views are in `bytes`.
    let mut out = unsafe { bytes.transmute_mut::<f32>(16) }.ok_or("room")?;
    let e = r.enqueue(&dot, &[&x.as_view()], &mut out).unwrap_err();
    ensure(e.to_string().contains("takes 2 input"), || format!("{e}"))?;
    let e = r.enqueue(&dot, &[&x.slice(1..), &x.slice(1..)], &mut out).unwrap_err();
    ensure(e.to_string().contains("hold 63 and 63 elements; the reduction was prepared for 64"), || format!("{e}"))?;
    let e = r.enqueue(&dot, &[&x.as_view(), &x.as_view()], &mut out.slice_mut(..0)).unwrap_err();
    ensure(matches!(e, Error::SliceTooShort { len: 0, n: 1 }), || format!("{e:?}"))?;
    let mut shifted = bytes.slice_mut(2..);
    // SAFETY: as above (the view is misaligned on purpose: the library must refuse it).
    let mut odd = unsafe { shifted.transmute_mut::<f32>(1) }.ok_or("room")?;
    let e = r.enqueue(&dot, &[&x.as_view(), &x.as_view()], &mut odd).unwrap_err();
    ensure(e.to_string().contains("not aligned for f32 (4 bytes)"), || format!("{e}"))?;
    ensure(!e.to_string().contains('\n'), || format!("not one line: {e}"))?;
    // and the reducer still works afterwards
    ensure(r.sum(&vec![2.0f32; 10])? == 20.0, || "the reducer broke".into())
}

/// A dropped element (the GPU reads n-1 of them) must fail the dot and sum
/// checks at 2^25+3. The bound there is about 60 (Σ|terms| ≈ 8·10^6 times
/// the chain length times ε), so an element of ordinary size is below what
/// any tolerance can see (the plain sums prove drops on data that sums
/// exactly); the dropped one here is 1000 (a product of 10^6).
fn planted_dot() -> Result<(), Failed> {
    let n = (1 << 25) + 3;
    let mut a: Vec<f32> = generate(Pattern::Random, n, 8)?;
    let mut b: Vec<f32> = generate(Pattern::Random, n, 9)?;
    (a[n - 1], b[n - 1]) = (1000.0, 1000.0);
    verify::<Dot, f32>(Op::Dot, &a, &b, reducer().dot(&a, &b)?)?; // all of it passes
    let got = reducer().dot(&a[..n - 1], &b[..n - 1])?;
    ensure(verify::<Dot, f32>(Op::Dot, &a, &b, got).is_err(), || "a dropped element passed the dot check".into())?;
    let sum = reducer().sum(&a[..n - 1])?;
    ensure(verify::<Sum, f32>(Op::Sum, &a, &a, sum).is_err(), || "a dropped element passed the sum check".into())
}

/// A result whose index is off by one must fail the arg check.
fn planted_arg() -> Result<(), Failed> {
    let a: Vec<f32> = generate(Pattern::Random, 100_000, 4)?;
    let got = reducer().argmax(&a)?;
    verify::<ArgMax, f32>(Op::ArgMax, &a, &a, got)?;
    let wrong = Arg { value: got.value, index: got.index + 1 };
    ensure(verify::<ArgMax, f32>(Op::ArgMax, &a, &a, wrong).is_err(), || "a wrong index passed".into())
}

/// The exponents the p-norm's tests take: 1 and 2 (which run `norm1`'s and
/// `sum_squares`' entries), whole, fractional, large and negative.
const EXPONENTS: [f64; 8] = [0.5, 1.0, 1.5, 2.0, 3.0, 7.25, -0.5, -2.5];

/// `Options` with the exponent `p`.
fn with_p(p: f64) -> Options {
    Options { p: Some(p), ..Options::default() }
}

/// `PowerSum` (`Σ |x|ᵖ`) with each exponent against the CPU: flat from the
/// host and from a device view at an offset of one element, sizes 0 to
/// 2^24-1; launches with other exponents queued back to back without
/// waiting, each read back (the exponent is written on the stream before
/// each; orders 1 and 2 among them, which run other entries and write
/// none); and per row, column and segment (empty ones among them).
fn exponents<R: Reduction<T>, T: TestElement>() -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let r = reducer();
    let check = |a: &[T], p: f64, got: R::Out| -> Result<(), Failed> {
        let c = verify_op::<R, T>(r, Op::PowerSum, a, a, &with_p(p), got)?;
        ensure(c.ok, || format!("power_sum {} p={p} n={}: GPU {}, CPU {}", T::NAME, c.n, c.got, c.expected))
    };
    for (k, n) in [0usize, 1, 33, 1025, (1 << 20) + 3, (1 << 24) - 1].into_iter().enumerate() {
        let a: Vec<T> = generate(Pattern::Random, n, 60 + k as u64)?;
        for p in EXPONENTS {
            check(&a, p, r.reduce::<R, T, [T]>(&[&a], &with_p(p))?)?;
        }
        if n > 1 {
            let d = r.gpu().stream().clone_htod(&a)?;
            let view = d.slice(1..);
            check(&a[1..], -0.5, r.reduce::<R, T, _>(&[&view], &with_p(-0.5))?)?;
        }
    }
    // three launches of the same entry queued back to back, the exponent changing
    let n = (1 << 20) + 3;
    let a: Vec<T> = generate(Pattern::Random, n, 70)?;
    let d = r.gpu().stream().clone_htod(&a)?;
    let order = [3.0, 2.0, -0.5, 3.0, 1.0, 1.5];
    let prepared: Vec<_> = order.iter().map(|&p| r.prepare::<R, T>(n, &with_p(p))).collect::<Result<_, _>>()?;
    let mut outs: Vec<Poisoned<R::Out>> = order.iter().map(|_| Poisoned::new(r.gpu())).collect::<Result<_, _>>()?;
    for (p, out) in prepared.iter().zip(&mut outs) {
        r.enqueue(p, &[&d.as_view()], &mut out.view()?)?;
    }
    for (&p, out) in order.iter().zip(&outs) {
        check(&a, p, out.read(r.gpu())?)?;
    }
    // rows, columns and segments
    let m = Matrix::new(64, 1000);
    let x: Vec<T> = generate(Pattern::Random, m.rows * m.cols, 71)?;
    let bounds = offsets_of(&[0, 1, 1000, 0, 33, 20_000, 7], 0);
    let offsets = r.offsets(&bounds)?;
    for p in [1.0, 1.5, 2.0, -2.5] {
        let rows = r.reduce_shaped::<R, T, _>(&[&x], Shape::Rows(m), &with_p(p))?;
        let columns = r.reduce_shaped::<R, T, _>(&[&x], Shape::Columns(m), &with_p(p))?;
        let segments = r.reduce_shaped::<R, T, _>(&[&x], Shape::Segments(&offsets), &with_p(p))?;
        let row = |i: usize| x[i * m.cols..(i + 1) * m.cols].to_vec();
        let column = |j: usize| (0..m.rows).map(|i| x[i * m.cols + j]).collect::<Vec<T>>();
        let segment = |s: usize| x[bounds[s] as usize..bounds[s + 1] as usize].to_vec();
        let groups = [(rows, &row as &dyn Fn(usize) -> Vec<T>), (columns, &column), (segments, &segment)];
        for (results, group) in groups {
            for (i, &g) in results.iter().enumerate() {
                let part = group(i);
                let (ok, want) = judge::<R, T>(Op::PowerSum, &part, &part, g, Some(part.len() + 300), Some(p));
                ensure(ok, || {
                    format!("power_sum {} p={p}, result {i} of {}: GPU {g:?}, CPU {want}", T::NAME, results.len())
                })?;
            }
        }
    }
    Ok(())
}

/// `norm_p` for each order against the CPU (0, 1, 2, ±inf through the
/// library's own operations; any other through `PowerSum` and one root),
/// and its typed errors, each before any GPU work: NaN for `p`, no elements
/// for `p < 0` or ±inf; an exponent for an operation that takes none, or
/// one `power_sum` cannot take (0, ±inf, NaN), flat and shaped, with no
/// elements too; the reducer working afterwards.
fn norm_p_orders() -> Result<(), Failed> {
    let r = reducer();
    let mut a: Vec<f32> = generate(Pattern::Random, 100_003, 12)?;
    a[17] = 0.0;
    let wide: Vec<f64> = a.iter().map(|&x| x.abs() as f64).collect();
    let exact = [
        (0.0, wide.iter().filter(|&&x| x != 0.0).count() as f64),
        (f64::INFINITY, wide.iter().copied().fold(0.0, f64::max)),
        (f64::NEG_INFINITY, 0.0),
    ];
    for (p, want) in exact {
        let got = r.norm_p(&a, p)?;
        ensure(got == want, || format!("norm_p {p}: {got}, expected {want}"))?;
    }
    // a zero: the norms of negative order are 0 (its term is +inf)
    ensure(r.norm_p(&a, -1.5)? == 0.0, || "norm_p -1.5 with a zero".into())?;
    let b = &a[18..]; // no zero
    for p in [1.0, 2.0, 3.0, -1.5, 0.25] {
        let (s, tol) = if p == 2.0 {
            let s: f64 = b.iter().map(|&x| x as f64 * x as f64).sum();
            (s, 1e-5 * s)
        } else {
            power_sum_reference(b, p, 64, epsilon::<f32>())
        };
        let (got, want) = (r.norm_p(b, p)?, s.powf(1.0 / p));
        // the root divides the relative error by |p|; one more rounding
        let bound = (tol / s / p.abs() + 1e-6) * want.abs() + f64::MIN_POSITIVE;
        ensure((got - want).abs() <= bound, || format!("norm_p {p}: {got}, expected {want} ± {bound:.3e}"))?;
    }
    let none: Vec<f32> = Vec::new();
    ensure(r.norm_p(&none, 3.0)? == 0.0, || "norm_p of none, p = 3".into())?;
    for p in [-1.0, f64::INFINITY, f64::NEG_INFINITY] {
        let e = r.norm_p(&none, p).unwrap_err();
        ensure(matches!(e, Error::Empty { .. }), || format!("norm_p of none, p = {p}: {e:?}"))?;
    }
    let e = r.norm_p(&a, f64::NAN).unwrap_err();
    ensure(matches!(e, Error::Invalid(_)), || format!("{e:?}"))?;
    for p in [0.0, f64::INFINITY, f64::NAN] {
        for input in [&a[..], &none[..]] {
            let e = r.reduce::<PowerSum, f32, [f32]>(&[input], &with_p(p)).unwrap_err();
            ensure(matches!(e, Error::Invalid(_)) && !e.to_string().contains('\n'), || format!("p = {p}: {e:?}"))?;
        }
    }
    let e = r.reduce::<Sum, f32, [f32]>(&[&a[..]], &with_p(3.0)).unwrap_err();
    ensure(e.to_string().contains("takes no exponent"), || format!("{e}"))?;
    let e = r.reduce::<Sum, f32, [f32]>(&[&none[..]], &with_p(3.0)).unwrap_err();
    ensure(e.to_string().contains("takes no exponent"), || format!("{e}"))?;
    let rows = Shape::Rows(Matrix::new(3, 5));
    let e = r.reduce_shaped::<Sum, f32, [f32]>(&[&a[..15]], rows, &with_p(3.0)).unwrap_err();
    ensure(e.to_string().contains("takes no exponent"), || format!("{e}"))?;
    let e = r.reduce_shaped::<PowerSum, f32, [f32]>(&[&a[..15]], rows, &with_p(0.0)).unwrap_err();
    ensure(matches!(e, Error::Invalid(_)), || format!("{e:?}"))?;
    ensure(r.sum(&vec![2.0f32; 10])? == 20.0, || "the reducer broke".into())
}

/// A result with the wrong exponent (3 where 3.1 was asked: an exponent
/// never written), or with an element dropped (the first, made 0.9: its
/// cube is about 1/300 of the sum), must fail the check.
fn planted_power() -> Result<(), Failed> {
    let mut a: Vec<f32> = generate(Pattern::Random, 1025, 13)?;
    a[0] = 0.9;
    let r = reducer();
    let check = |p: f64, got: f32| verify_op::<PowerSum, f32>(r, Op::PowerSum, &a, &a, &with_p(p), got);
    let cube = r.reduce::<PowerSum, f32, [f32]>(&[&a], &with_p(3.0))?;
    ensure(check(3.0, cube)?.ok, || "p = 3 failed".into())?;
    ensure(!check(3.1, cube)?.ok, || "a sum with another exponent passed".into())?;
    let dropped = r.reduce::<PowerSum, f32, [f32]>(&[&a[1..]], &with_p(3.0))?;
    ensure(!check(3.0, dropped)?.ok, || "a dropped element passed".into())
}
