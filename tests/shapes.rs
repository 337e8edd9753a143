//! Rows, columns and segments (`Reducer::reduce_shaped`) on the GPU against
//! the CPU: every operation × type on shapes 1×n, n×1, row lengths 1, 31,
//! 32, 33, 1000, 2^16+3, a pitch other than cols, empty rows and segments,
//! segment lengths over six orders of magnitude in one call, heavy-tailed
//! (Pareto) lengths, the staged kernel's form for cards before sm_80,
//! 2^24 rows of
//! 16 and rows of 2^20; every strategy; arg-min/max ties and NaN per row;
//! the same bits from run to run; results into a device buffer; the
//! blocks the card holds of a launch past 48 KiB of shared memory, which
//! the columns' grid is planned from; the typed errors; and a planted
//! error the check must reject.

mod common;

use common::{ensure, gpu_trial, gpu_trial_alone, reducer};
use libtest_mimic::{Failed, Trial};
use reduction::{
    ArgMax, DType, Element, Error, Op, Sum,
    op::{Arg, Reduction},
    shape::{Matrix, Shape, Strategy, offsets_of},
};
use reduction::{Options, Ptx, Reducer};
use testkit::data::{Pattern, Sample, generate, unit};
use testkit::ops::{Number, Outcome, judge, shaped_depth};
use testkit::with_operation;

trait TestElement: Element + Sample + Number + Outcome + Default {}
impl<T: Element + Sample + Number + Outcome + Default> TestElement for T {}

/// A shape to test, with the offsets of a segmented one.
#[derive(Clone, Debug)]
enum Case {
    Axis(Matrix, usize),
    Segments(Vec<u64>),
}

/// Matrices (each along both axes) and segments that every operation runs on.
fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for m in [
        Matrix::new(1, 1000),
        Matrix::new(1000, 1),
        Matrix::new(7, 31),
        Matrix::new(5, 32),
        Matrix::new(3, 33).pitch(40),
        Matrix::new(64, 1000),
        Matrix::new(2, (1 << 16) + 3),
        Matrix::new(300, 17).pitch(19),
        Matrix::new(4096, 16),
        Matrix::new(9, 4100).pitch(4104),
        Matrix::new(0, 5),
        Matrix::new(5, 0),
    ] {
        v.push(Case::Axis(m, 1));
        v.push(Case::Axis(m, 0));
    }
    let lengths = [0u64, 1, 0, 31, 32, 33, 1000, 0, 5000, 4095, 4097, 3, 0, 12_000, 1];
    v.push(Case::Segments(offsets_of(&lengths, 0)));
    v.push(Case::Segments(offsets_of(&lengths, 5))); // starting past the input's first element
    // short segments (`segments_paired` where the operation has that form, else `segments_staged`)
    // with one of 3000 every 500, past the input's first element
    let short: Vec<u64> = (0..4001u64).map(|k| if k % 500 == 250 { 3000 } else { (k * 7919) % 17 }).collect();
    v.push(Case::Segments(offsets_of(&short, 3)));
    // long segments (`segments_long`, for every type: 64 KiB on average of 2-byte elements), empty and short
    // ones among them, past the input's first element
    v.push(Case::Segments(offsets_of(&[0, 70_001, 3, 0, 61_072, 1, 31_067, 100_000], 2)));
    v.push(Case::Segments(vec![0]));
    v.push(Case::Segments(vec![7, 7, 7]));
    v.push(Case::Segments(vec![3, 20_003])); // one segment, not 16-byte aligned: the flat kernel
    v
}

/// The elements of each result's row, column or segment, as (begin, step, length).
fn groups(case: &Case) -> Vec<(usize, usize, usize)> {
    match case {
        Case::Axis(m, 1) => (0..m.rows).map(|r| (r * m.pitch, 1, m.cols)).collect(),
        Case::Axis(m, _) => (0..m.cols).map(|c| (c, m.pitch, m.rows)).collect(),
        Case::Segments(o) => o.windows(2).map(|w| (w[0] as usize, 1, (w[1] - w[0]) as usize)).collect(),
    }
}

/// Elements an input of `case` needs.
fn input_len(case: &Case) -> usize {
    match case {
        Case::Axis(m, _) => m.elements_spanned().unwrap(),
        Case::Segments(o) => *o.last().unwrap() as usize,
    }
}

/// Run `R` on `case` with `strategy` (host inputs, host results).
fn run_case<R: Reduction<T>, T: TestElement>(
    case: &Case,
    a: &[T],
    b: &[T],
    strategy: Strategy,
) -> reduction::Result<Vec<R::Out>> {
    run_case_on::<R, T>(reducer(), case, a, b, strategy)
}

/// [`run_case`] with reducer `r`.
fn run_case_on<R: Reduction<T>, T: TestElement>(
    r: &Reducer,
    case: &Case,
    a: &[T],
    b: &[T],
    strategy: Strategy,
) -> reduction::Result<Vec<R::Out>> {
    let inputs: Vec<&[T]> = if R::INPUTS == 2 { vec![a, b] } else { vec![a] };
    match case {
        Case::Axis(m, axis) => {
            r.reduce_shaped::<R, T, [T]>(&inputs, Shape::axis(*m, *axis)?, &Options { strategy, ..Options::default() })
        }
        Case::Segments(o) => {
            let offsets = r.offsets(o)?;
            r.reduce_shaped::<R, T, [T]>(
                &inputs,
                Shape::Segments(&offsets),
                &Options { strategy, ..Options::default() },
            )
        }
    }
}

/// `Err` unless `got[i]` is operation `op`'s result on group `i` of
/// `case` (`testkit::ops::judge`): float sums of the `Large` pattern
/// exactly (they are exact in any order); other float results within
/// `(depth + 2)·ε·Σ|term|`, where `testkit::ops::shaped_depth` bounds the
/// additions on one path of the kernels.
fn check<R: Reduction<T>, T: TestElement>(op: Op, case: &Case, a: &[T], b: &[T], got: &[R::Out]) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    let groups = groups(case);
    ensure(got.len() == groups.len(), || format!("{case:?}: {} results for {} groups", got.len(), groups.len()))?;
    for (i, (&(begin, step, len), &g)) in groups.iter().zip(got).enumerate() {
        let x: Vec<T> = (0..len).map(|k| a[begin + k * step]).collect();
        let y: Vec<T> = (0..len).map(|k| b[begin + k * step]).collect();
        // the float sums of the `Large` pattern are exact in any order
        let (ok, want) = judge::<R, T>(op, &x, &y, g, shaped_depth::<T>(op, len), None);
        ensure(ok, || format!("{} {} {case:?} group {i} (len {len}): GPU {g:?}, CPU {want}", op.name(), T::NAME))?;
    }
    Ok(())
}

fn main() {
    let mut trials: Vec<Trial> = Vec::new();
    for &op in Op::ALL {
        for &t in op.types() {
            trials.push(gpu_trial(format!("ops::{}_{}", op.name(), t.name()), move || {
                with_operation!(op, t, |R, T| every_case::<R, T>(op), else Err("not an operation of the type".into()))
            }));
        }
    }
    for t in [DType::I32, DType::F32, DType::F64, DType::BF16] {
        for op in [Op::ArgMin, Op::ArgMax] {
            trials.push(gpu_trial(
                format!("arg::ties_and_nan_per_row_{}_{}", op.name(), t.name()),
                move || with_operation!(op, t, |R, T| ties_and_nan::<R, T>(op), else Err("unsupported".into())),
            ));
        }
    }
    trials.extend([
        gpu_trial("strategies::every_split_gives_the_same_results", every_strategy),
        gpu_trial("segments::lengths_over_six_orders_of_magnitude", six_orders),
        gpu_trial("segments::heavy_tail", heavy_tail),
        gpu_trial("segments::staged_as_before_sm80", staged_before_sm80),
        gpu_trial("run_to_run::same_bits_20_runs", run_to_run),
        gpu_trial("device::results_into_a_device_buffer", into_device),
        gpu_trial("device::blocks_held_past_48_kib_of_shared_memory", past_48_kib),
        gpu_trial_alone("errors::typed_before_any_launch", typed_errors), // counts the allocations: alone
        gpu_trial("planted::a_dropped_element_fails_the_check", planted),
        gpu_trial_alone("big::rows_of_2^20", rows_of_2_20),
        gpu_trial_alone("big::2^24_rows_of_16", rows_of_16),
    ]);
    common::run(trials)
}

fn every_case<R: Reduction<T>, T: TestElement>(op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    for (k, case) in cases().into_iter().enumerate() {
        let n = input_len(&case);
        let a: Vec<T> = generate(Pattern::Large, n, 31 + k as u64)?;
        let b: Vec<T> = generate(Pattern::Large, n, 77 + k as u64)?;
        let got = run_case::<R, T>(&case, &a, &b, Strategy::Auto)?;
        check::<R, T>(op, &case, &a, &b, &got)?;
    }
    Ok(())
}

/// Arg-min/max with ties and NaN at the first, middle and last element of
/// rows of 1, 33 and 5000 (across tiles), and along columns.
fn ties_and_nan<R: Reduction<T>, T: TestElement>(op: Op) -> Result<(), Failed>
where
    R::Out: Outcome,
{
    for cols in [1usize, 33, 5000] {
        let m = Matrix::new(6, cols);
        let mut a: Vec<T> = generate(Pattern::Ones, m.rows * cols, 1)?;
        let special: Vec<T> = generate(Pattern::Large, 8, 5)?;
        for r in 0..m.rows {
            let at = [0, cols / 2, cols - 1][r % 3];
            a[r * cols + at] = special[r];
            if r >= 3 && testkit::dtype::<T>().is_float() {
                a[r * cols + (at + 1) % cols] = nan_of::<T>();
            }
        }
        for case in [Case::Axis(m, 1), Case::Axis(m, 0)] {
            let got = run_case::<R, T>(&case, &a, &a, Strategy::Auto)?;
            check::<R, T>(op, &case, &a, &a, &got)?;
        }
    }
    Ok(())
}

/// The type's NaN (floats only).
fn nan_of<T: TestElement>() -> T {
    let v: Vec<T> = (0..64).map(|r| T::sample(Pattern::Random, r)).collect();
    let nan = v.iter().copied().find(|x| x.num().is_nan());
    nan.unwrap_or_else(|| {
        // Random never draws NaN: make one from a float's bits
        let bits: Vec<u8> = match size_of::<T>() {
            2 => 0x7e00u16.to_ne_bytes().to_vec(),
            4 => f32::NAN.to_bits().to_ne_bytes().to_vec(),
            _ => f64::NAN.to_bits().to_ne_bytes().to_vec(),
        };
        // SAFETY: a float type of that size; every bit pattern is a value.
        unsafe { bits.as_ptr().cast::<T>().read_unaligned() }
    })
}

fn every_strategy() -> Result<(), Failed> {
    let cases = [Case::Axis(Matrix::new(100, 1000), 1), Case::Segments(offsets_of(&[5, 0, 9000, 1, 300, 17], 3))];
    for case in &cases {
        let a: Vec<f32> = generate(Pattern::Large, input_len(case), 3)?;
        let teams = [1, 2, 4, 8, 16, 32].map(|lanes| Strategy::Segments { tile_bytes: 0, lanes });
        let tiles = [16, 32, 128, 256].map(|k| Strategy::Segments { tile_bytes: k << 10, lanes: 0 });
        let staged = [0, 16, 256].map(|k| Strategy::Staged { tile_bytes: k << 10 });
        let odd = Strategy::Segments { tile_bytes: 1 << 15, lanes: 2 };
        for strategy in teams.into_iter().chain(tiles).chain(staged).chain([odd]) {
            check::<Sum, f32>(Op::Sum, case, &a, &a, &run_case::<Sum, f32>(case, &a, &a, strategy)?)?;
            let got = run_case::<ArgMax, f32>(case, &a, &a, strategy)?;
            check::<ArgMax, f32>(Op::ArgMax, case, &a, &a, &got)?;
        }
    }
    for m in [Matrix::new(1000, 100), Matrix::new(5000, 16), Matrix::new(333, 7).pitch(9)] {
        let case = Case::Axis(m, 0);
        let a: Vec<f64> = generate(Pattern::Large, input_len(&case), 4)?;
        for (wide, chunks) in [
            (1, 1),
            (1, 2),
            (1, 3),
            (1, 64),
            (1, 1000),
            (2, 1),
            (2, 3),
            (4, 1),
            (4, 64),
            (8, 3),
            (16, 1),
            (16, 7),
            (0, 5),
        ] {
            let got = run_case::<Sum, f64>(&case, &a, &a, Strategy::Columns { wide, chunks })?;
            check::<Sum, f64>(Op::Sum, &case, &a, &a, &got)?;
        }
    }
    Ok(())
}

/// Power-law segment lengths from 1 to 10^6 (and empty ones) in one call.
fn six_orders() -> Result<(), Failed> {
    // log-uniform from 1 to 10^6, one of 10^6 and one of 1 for sure
    let mut lengths = lengths_by(2000, 7, |u| 10f64.powf(6.0 * u))?;
    (lengths[1000], lengths[666]) = (1_000_000, 1);
    ensure(lengths.iter().any(|&l| l >= 500_000) && lengths.contains(&1), || "not six orders".into())?;
    sum_argmax_mean(reducer(), &lengths, 8)
}

/// Pareto lengths (`⌊u^-2⌋`, capped at 10^5, every tenth empty): the
/// planner's heavy tail (`segments_staged` on aligned input, which reads
/// long pieces with the whole warp; `segments_scheduled`, its tiles in the
/// offsets' schedule, for the arg-max; `segments_tailed` on a view that is
/// not), against the CPU.
fn heavy_tail() -> Result<(), Failed> {
    let lengths = lengths_by(30_000, 11, |u| u.powf(-2.0).min(1e5))?;
    let (total, longest) = (lengths.iter().sum::<u64>(), lengths.iter().copied().max().unwrap_or(0));
    let tailed = reduction::dispatch::heavy_tail_of(longest, total, lengths.len() as u64);
    ensure(tailed, || format!("not a heavy tail: longest {longest} of {total} in {}", lengths.len()))?;
    // long on average: the tiles in the offsets' schedule for the f32 arg-max (an accumulator wider than an
    // element), not for the f32 sum
    let scheduled = |acc| reduction::dispatch::staged_scheduled_of(longest, total, lengths.len() as u64, 4, acc);
    let arg = size_of::<<ArgMax as reduction::op::Reduction<f32>>::Acc>();
    ensure(scheduled(arg) && !scheduled(4), || format!("not as planned: {total} elements in {}", lengths.len()))?;
    sum_argmax_mean(reducer(), &lengths, 12)?;
    // a view one element in, not 16-byte aligned: `segments_tailed` (aligned input goes to `segments_staged`)
    let case = Case::Segments(offsets_of(&lengths, 0));
    let a: Vec<f32> = generate(Pattern::Large, input_len(&case) + 1, 13)?;
    let r = reducer();
    let (offsets, dev) = (r.offsets(&offsets_of(&lengths, 0))?, r.gpu().stream().clone_htod(&a)?);
    let view = dev.slice(1..);
    let got = r.reduce_shaped::<Sum, f32, _>(&[&view], Shape::Segments(&offsets), &Options::default())?;
    check::<Sum, f32>(Op::Sum, &case, &a[1..], &a[1..], &got)
}

/// Segments of these lengths, back to back, against the CPU, by reducer
/// `r`: the f32 sum and arg-max of the `Large` pattern (input `seed`), the
/// f64 mean of random values (`seed + 1`).
fn sum_argmax_mean(r: &Reducer, lengths: &[u64], seed: u64) -> Result<(), Failed> {
    let case = Case::Segments(offsets_of(lengths, 0));
    let a: Vec<f32> = generate(Pattern::Large, input_len(&case), seed)?;
    let auto = Strategy::Auto;
    check::<Sum, f32>(Op::Sum, &case, &a, &a, &run_case_on::<Sum, f32>(r, &case, &a, &a, auto)?)?;
    check::<ArgMax, f32>(Op::ArgMax, &case, &a, &a, &run_case_on::<ArgMax, f32>(r, &case, &a, &a, auto)?)?;
    let d: Vec<f64> = generate(Pattern::Random, input_len(&case), seed + 1)?;
    let got = run_case_on::<reduction::op::Mean, f64>(r, &case, &d, &d, auto)?;
    check::<reduction::op::Mean, f64>(Op::Mean, &case, &d, &d, &got)
}

/// The staged kernels as a card before sm_80 runs them (their stage loaded
/// through registers; later cards load the form that copies with
/// `cp.async`), on whatever card this is: the sm_75 entries of the
/// embedded PTX ahead of the rest, Pareto and uniform 0..32 lengths
/// (the busiest tiles first; staged, and two a lane for the sum) against
/// the CPU.
fn staged_before_sm80() -> Result<(), Failed> {
    let embedded = Ptx::embedded();
    let mut staged = Vec::new();
    let staged_kernels = reduction::dispatch::ShapeKernel::ALL.into_iter().filter(|k| k.staged());
    let forms: Vec<String> = staged_kernels.map(|k| format!("{}_", k.row().id)).collect();
    for entry in embedded.entries().filter(|e| forms.iter().any(|f| e.starts_with(f.as_str()))) {
        let module = embedded.module_for(entry)?; // the sm_75 form
        ensure(!module.contains("cp.async"), || format!("{entry}: the sm_80 form"))?;
        staged.push(Ptx::from_text(module, entry));
    }
    let staged = staged.into_iter().reduce(Ptx::with).ok_or("no staged entries")?;
    let r = Reducer::with_ptx(0, staged.with(embedded))?;
    sum_argmax_mean(&r, &lengths_by(30_000, 11, |u| u.powf(-2.0).min(1e5))?, 12)?;
    sum_argmax_mean(&r, &lengths_by(20_000, 21, |u| 32.0 * u)?, 22)
}

/// `count` segment lengths `⌊law(u)⌋` for uniform draws `u` in (0, 1]
/// (input `seed`), every tenth empty.
fn lengths_by(count: usize, seed: u64, law: impl Fn(f64) -> f64) -> Result<Vec<u64>, Failed> {
    let u: Vec<u64> = generate(Pattern::Random, count, seed)?;
    Ok(u.iter().enumerate().map(|(i, &r)| if i % 10 == 9 { 0 } else { law(unit(r)) as u64 }).collect())
}

fn run_to_run() -> Result<(), Failed> {
    let m = Matrix::new(37, 100_003);
    let a: Vec<f32> = generate(Pattern::Random, m.rows * m.cols, 12)?;
    for axis in [0, 1] {
        let first = reducer().reduce_shaped::<Sum, f32, _>(&[&a], Shape::axis(m, axis)?, &Options::default())?;
        for _ in 0..20 {
            let again = reducer().reduce_shaped::<Sum, f32, _>(&[&a], Shape::axis(m, axis)?, &Options::default())?;
            ensure(again.iter().zip(&first).all(|(x, y)| x.to_bits() == y.to_bits()), || {
                format!("axis {axis} changed")
            })?;
        }
    }
    Ok(())
}

/// A column block of the half types' variance holds 48 KiB of
/// accumulators and 16 bytes more, past what a launch gets without asking:
/// the card holds about as many of such blocks as of 48 KiB ones (the
/// shared memory decides), not one an SM, or the planner, which counts the
/// blocks a wave holds, plans its grid for too few.
fn past_48_kib() -> Result<(), Failed> {
    let r = reducer();
    let gpu = r.gpu();
    let entry = "columns_sum_f32";
    let (unasked, past) =
        (gpu.resident_blocks(entry, 256, 48 << 10)?, gpu.resident_blocks(entry, 256, (48 << 10) + 16)?);
    ensure(2 * past > unasked, || format!("{entry}: {past} blocks at once of 48 KiB + 16 bytes, {unasked} of 48 KiB"))
}

fn into_device() -> Result<(), Failed> {
    let r = reducer();
    let s = r.gpu().stream();
    let m = Matrix::new(50, 999);
    let host: Vec<f32> = generate(Pattern::Large, m.rows * m.cols, 13)?;
    let x = s.clone_htod(&host).map_err(|e| e.to_string())?;
    let mut bytes = s.alloc_zeros::<u8>(m.rows * 16).map_err(|e| e.to_string())?;
    {
        // SAFETY: 50 results of 16 bytes fit the 800 bytes; every bit pattern is an Arg.
        let mut out = unsafe { bytes.transmute_mut::<Arg<f32>>(m.rows) }.ok_or("transmute")?;
        r.reduce_shaped_into::<ArgMax, f32, _>(&[&x.as_view()], Shape::Rows(m), &mut out, &Options::default())?;
    }
    let back = s.clone_dtoh(&bytes).map_err(|e| e.to_string())?;
    let got: Vec<Arg<f32>> =
        back.as_chunks::<16>().0.iter().map(|c| unsafe { c.as_ptr().cast::<Arg<f32>>().read_unaligned() }).collect();
    check::<ArgMax, f32>(Op::ArgMax, &Case::Axis(m, 1), &host, &host, &got)?;
    let mut short = s.alloc_zeros::<f32>(m.rows - 1).map_err(|e| e.to_string())?;
    let e = r.reduce_shaped_into::<Sum, f32, _>(
        &[&x.as_view()],
        Shape::Rows(m),
        &mut short.as_view_mut(),
        &Options::default(),
    );
    ensure(matches!(e, Err(Error::Shape(_))), || format!("a short output: {e:?}"))
}

fn typed_errors() -> Result<(), Failed> {
    let r = reducer();
    let x = vec![1.0f32; 100];
    let before = r.gpu().allocations();
    let shaped = |shape: Shape<'_>, strategy| {
        r.reduce_shaped::<Sum, f32, _>(&[&x], shape, &Options { strategy, ..Options::default() }).map(|_| ())
    };
    let cases: Vec<(&str, reduction::Result<()>)> = vec![
        ("pitch < cols", shaped(Shape::Rows(Matrix::new(2, 10).pitch(9)), Strategy::Auto)),
        ("past the input", shaped(Shape::Columns(Matrix::new(11, 10)), Strategy::Auto)),
        ("rows × cols overflows", shaped(Shape::Rows(Matrix::new(usize::MAX / 2, 4)), Strategy::Auto)),
        // results past the address space: refused, not a results buffer of the wrapped size
        ("2^62 + 1 empty rows", shaped(Shape::Rows(Matrix::new((1 << 62) + 1, 0)), Strategy::Auto)),
        ("axis 2", Shape::axis(Matrix::new(1, 1), 2).map(|_| ())),
        ("lanes 3", shaped(Shape::Rows(Matrix::new(10, 10)), Strategy::Segments { tile_bytes: 0, lanes: 3 })),
        (
            "tile of 1000 bytes",
            shaped(Shape::Rows(Matrix::new(10, 10)), Strategy::Segments { tile_bytes: 1000, lanes: 0 }),
        ),
        ("chunks on rows", shaped(Shape::Rows(Matrix::new(10, 10)), Strategy::Columns { wide: 0, chunks: 2 })),
        ("wide 3", shaped(Shape::Columns(Matrix::new(10, 10)), Strategy::Columns { wide: 3, chunks: 0 })),
        (
            "dot of one input",
            r.reduce_shaped::<reduction::op::Dot, f32, _>(&[&x], Shape::Rows(Matrix::new(1, 1)), &Options::default())
                .map(|_| ()),
        ),
    ];
    for (what, e) in cases {
        let e = e.err().ok_or_else(|| format!("{what}: no error"))?;
        ensure(!e.to_string().contains('\n'), || format!("{what}: {e}"))?;
    }
    ensure(r.offsets(&[0, 5, 4]).is_err() && r.offsets(&[]).is_err(), || "bad offsets accepted".into())?;
    // an index of 2^40 entries for two offsets: refused before it is built
    let e = r.offsets(&[0, 1 << 50]).map(|_| ());
    ensure(matches!(e, Err(Error::Shape(_))), || format!("offsets past any input: {e:?}"))?;
    let past = r.offsets(&[0, 50, 101])?;
    let e = r.reduce_shaped::<Sum, f32, _>(&[&x], Shape::Segments(&past), &Options::default());
    ensure(matches!(e, Err(Error::Shape(_))), || format!("offsets past n: {e:?}"))?;
    // offsets allocate; nothing else did
    ensure(r.gpu().allocations() <= before + 3, || "errors allocated".into())
}

/// The check rejects a result computed without one element.
fn planted() -> Result<(), Failed> {
    let m = Matrix::new(64, 1000);
    let a: Vec<f32> = generate(Pattern::Large, m.rows * m.cols, 21)?;
    let got = reducer().reduce_shaped::<Sum, f32, _>(&[&a], Shape::Rows(m), &Options::default())?;
    let case = Case::Axis(m, 1);
    check::<Sum, f32>(Op::Sum, &case, &a, &a, &got)?;
    let mut dropped = a.clone();
    dropped[17 * 1000 + 999] = 0.0;
    ensure(check::<Sum, f32>(Op::Sum, &case, &dropped, &dropped, &got).is_err(), || {
        "the check passed a sum missing one element".into()
    })
}

fn rows_of_2_20() -> Result<(), Failed> {
    let m = Matrix::new(5, 1 << 20).pitch((1 << 20) + 1);
    let a: Vec<f32> = generate(Pattern::Large, m.elements_spanned()?, 22)?;
    for case in [Case::Axis(m, 1), Case::Axis(m, 0)] {
        check::<Sum, f32>(Op::Sum, &case, &a, &a, &run_case::<Sum, f32>(&case, &a, &a, Strategy::Auto)?)?;
        check::<ArgMax, f32>(Op::ArgMax, &case, &a, &a, &run_case::<ArgMax, f32>(&case, &a, &a, Strategy::Auto)?)?;
    }
    Ok(())
}

fn rows_of_16() -> Result<(), Failed> {
    let m = Matrix::new(1 << 24, 16);
    let a: Vec<f32> = generate(Pattern::Large, m.rows * m.cols, 23)?;
    for case in [Case::Axis(m, 1), Case::Axis(m, 0)] {
        check::<Sum, f32>(Op::Sum, &case, &a, &a, &run_case::<Sum, f32>(&case, &a, &a, Strategy::Auto)?)?;
    }
    Ok(())
}
