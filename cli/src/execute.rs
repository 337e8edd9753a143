//! Running a checked [`Job`]: open the GPU, reduce, time, print; `Ok(false)`
//! when a result differs from the CPU reference.

use std::fs::File;
use std::path::PathBuf;

use crate::validate::{BenchArgs, CudaColumn, Gpu, Job, RunArgs, every_kernel};
use indicatif::{ProgressBar, ProgressStyle};
use reduce::bench::{Rotated, measure, run_bench};
use reduce::by_key_bench;
use reduce::nvrtc;
use reduce::timing::Timing;
use reduce::twins::{self, Line};
use reduction::cudarc::driver::CudaSlice;
use reduction::{
    DType, Determinism, Element, Error, Finish, Op, Options, Reducer, Result,
    op::{ReduceOp, Reduction},
    registry::{KERNELS, Kernel},
};
use testkit::by_key::{KeyDist, generate_keys, reference};
use testkit::data::{Pattern, Sample, generate};
use testkit::reference::Reference;
use testkit::{CheckInput, verify};
use testkit::{with_dtype, with_op, with_operation, with_plain_dtype};

/// Ok(false) when a result did not match the reference.
pub(crate) fn execute(job: Job) -> Result<bool> {
    match job {
        Job::List => {
            let width = KERNELS.iter().map(|k| k.id.len()).max().unwrap_or(6).max("kernel".len());
            let title = KERNELS.iter().map(|k| k.title.len()).max().unwrap_or(4);
            let source = KERNELS.iter().map(|k| k.source.len()).max().unwrap_or(6);
            println!("{:<width$} {:>4}  {:<title$}  {:<source$}  block sizes", "kernel", "step", "what", "source");
            for k in KERNELS {
                let blocks: Vec<String> = k.block_sizes().map(|b| b.to_string()).collect();
                println!(
                    "{:<width$} {:>4}  {:<title$}  {:<source$}  {}",
                    k.id,
                    k.step,
                    k.title,
                    k.source,
                    blocks.join(" ")
                );
            }
            Ok(true)
        }
        Job::Info(gpu) => {
            let r = gpu.open()?;
            let i = r.gpu().info();
            println!(
                "{} ({}), {} SMs, {} MiB L2, {} MiB memory, {}-bit bus at {} MHz: {:.0} GB/s theoretical, driver {}.{}",
                i.name,
                i.arch(),
                i.sm_count,
                i.l2_bytes >> 20,
                i.total_mem >> 20,
                i.bus_width_bits,
                i.mem_clock_khz / 1000,
                i.peak_bandwidth() / 1e9,
                i.driver_version / 1000,
                i.driver_version % 1000 / 10
            );
            Ok(true)
        }
        Job::Run(gpu, a) => {
            let r = gpu.open()?;
            println!(
                "{}, n = {} {}, {}, finish on the {:?}, median of {} runs",
                r.gpu().info().name,
                a.n,
                a.dtype.name(),
                a.op.name(),
                a.finish,
                a.runs
            );
            let default_mode = a.mode.determinism == Determinism::RunToRun && !a.mode.accurate;
            if default_mode && every_kernel(a.op, a.dtype).unwrap_or(false) {
                with_plain_dtype!(a.dtype, |T| with_op!(a.op, |O| run_kernels::<O, T>(&r, &a), else Ok(false)), else Ok(false))
            } else {
                // the modes' kernels pick their own block unless one was asked for
                let block = if default_mode { a.kernels.first().and_then(|&(_, b)| b) } else { a.mode.block };
                let row = reduce::ops_bench::measure(
                    &r,
                    a.op,
                    a.dtype,
                    a.n,
                    block,
                    a.runs,
                    a.seed,
                    a.mode,
                    Timing::HostLoop,
                    reduce::ops_bench::ResultTo::Host,
                )?;
                print!("{}", reduce::ops_bench::table(std::slice::from_ref(&row)));
                Ok(row.ok)
            }
        }
        Job::Multi(a) => reduce::multi_gpu::run(&a),
        Job::Nccl => {
            println!("{}", reduction::multi::link_dir()?.display());
            Ok(true)
        }
        Job::Check(gpu, a) => {
            let r = gpu.open()?;
            let mut all_ok = true;
            for &dtype in a.types.iter().filter(|_| !a.kernels.is_empty()) {
                for &op in &a.ops {
                    for &n in &a.sizes {
                        all_ok &= match every_kernel(op, dtype) {
                            Ok(true) => {
                                with_plain_dtype!(dtype, |T| with_op!(op, |O| check_kernels::<O, T>(&r, &a.kernels, n, a.seed), else Ok(false)), else Ok(false))?
                            }
                            _ => check_operation(&r, op, dtype, n, a.seed)?,
                        };
                    }
                }
            }
            if a.by_key {
                for &n in &a.sizes {
                    all_ok &= check_by_key(&r, n, a.seed)?;
                }
            }
            if a.shapes {
                for &dtype in &a.types {
                    for &op in &a.ops {
                        all_ok &= check_shapes(&r, op, dtype)?;
                    }
                }
            }
            println!("{}", if all_ok { "check: every result matches the CPU" } else { "check: MISMATCH" });
            Ok(all_ok)
        }
        Job::ByKey(gpu, n, keys, runs) => {
            let r = gpu.open()?;
            println!("{}, n = {n}, {keys} keys, median of {runs} runs", r.gpu().info().name);
            let rows = by_key_bench::bench(&r, n, keys, runs)?;
            by_key_bench::print_table(&rows);
            Ok(rows.iter().all(|row| row.ok))
        }
        Job::Latency(gpu, sizes, dtype, runs, seed, max_grid, timings) => {
            let r = gpu.open()?;
            println!(
                "{}, {} sum, default kernel, medians of {runs} calls, inputs rotated past the L2",
                r.gpu().info().name,
                dtype.name()
            );
            let mut all_ok = true;
            for timing in timings {
                println!("{}", timing.describe());
                let rows = with_plain_dtype!(dtype, |T| reduce::latency::latency::<reduction::Sum, T>(
                    &r, &sizes, runs, seed, max_grid, timing
                ), else Err(Error::Invalid("latency: the primitive types only".into())))?;
                print!("{}", reduce::latency::table(&rows));
                all_ok &= rows.iter().all(|row| row.ok);
            }
            Ok(all_ok)
        }
        Job::Bench(gpu, a) => bench(&gpu, a),
        Job::Ops(gpu, mut a) => {
            let r = gpu.open()?;
            println!("{}, default kernel, medians of {} runs, inputs rotated past the L2", r.gpu().info().name, a.runs);
            for timing in &a.timings {
                println!("{}", timing.describe());
            }
            // each row printed (and the JSON rewritten) as it is measured: a
            // row that fails, or a run cut short, leaves the others
            print!("{}", reduce::ops_bench::table(&[]));
            let (mut rows, mut all_ok) = (Vec::new(), true);
            for &n in &a.sizes {
                for &(op, t) in &a.pairs {
                    for &timing in &a.timings {
                        for &result in &a.results {
                            let p = if op == Op::PowerSum { a.p } else { None };
                            let mode = Options { max_grid: a.max_grid, p, ..Options::default() };
                            match reduce::ops_bench::measure(
                                &r, op, t, n, a.block, a.runs, a.seed, mode, timing, result,
                            ) {
                                Ok(row) => {
                                    print!("{}", reduce::ops_bench::table_rows(std::slice::from_ref(&row)));
                                    all_ok &= row.ok;
                                    rows.push(row);
                                }
                                Err(e) => {
                                    println!("{:<12} {:<5} {:>11}  not measured: {e}", op.name(), t.name(), n);
                                    all_ok = false;
                                }
                            }
                            std::io::Write::flush(&mut std::io::stdout()).ok();
                            if let Some(out) = a.json.as_mut() {
                                let text =
                                    serde_json::to_string_pretty(&rows).map_err(|e| Error::Invalid(e.to_string()))?;
                                write_output(out, text)?;
                            }
                        }
                    }
                }
            }
            Ok(all_ok)
        }
        Job::Modes(gpu, n, types, runs, seed, json) => {
            let r = gpu.open()?;
            println!(
                "{}, n = {n}, sum: default (run_to_run), gpu_to_gpu, accurate; medians of {runs} runs, inputs rotated past the L2",
                r.gpu().info().name
            );
            let rows = reduce::ops_bench::modes(&r, &types, n, runs, seed)?;
            print!("{}", reduce::ops_bench::modes_table(&rows));
            if let Some(mut out) = json {
                let plain: Vec<_> = rows.iter().map(|(row, _)| row.clone()).collect();
                write_output(
                    &mut out,
                    serde_json::to_string_pretty(&plain).map_err(|e| Error::Invalid(e.to_string()))?,
                )?;
            }
            Ok(rows.iter().all(|(row, _)| row.ok))
        }
        Job::Shapes(gpu, a) => {
            let r = gpu.open()?;
            // the input, made once for every operation: `(Vec<T>, CudaSlice<T>)` of the type
            let input: Box<dyn std::any::Any> =
                with_dtype!(a.ty, |T| Box::new(reduce::shapes_bench::input::<T>(&r)?) as Box<dyn std::any::Any>);
            let mut rows = Vec::new();
            for &op in &a.ops {
                // the exponent is power_sum's alone
                let p = a.p.filter(|_| op == Op::PowerSum);
                let opts = Options { determinism: a.determinism, p, ..Options::default() };
                println!(
                    "{}, {} {} ({}), medians of {} event-timed launches, checked against the CPU",
                    r.gpu().info().name,
                    a.ty.name(),
                    reduce::shapes_bench::what(op),
                    a.determinism.name(),
                    a.runs
                );
                println!("{}", reduce::shapes_bench::header());
                with_operation!(op, a.ty, |R, T| {
                    let (host, device) = input
                        .downcast_ref::<(Vec<T>, CudaSlice<T>)>()
                        .ok_or_else(|| Error::Invalid(format!("no {} input", a.ty.name())))?;
                    for (case, strategy) in &a.cases {
                        let row = reduce::shapes_bench::measure::<R, T>(
                            &r, op, case, *strategy, &opts, host, device, a.runs,
                        )?;
                        println!("{}", reduce::shapes_bench::line(&row));
                        std::io::Write::flush(&mut std::io::stdout()).ok();
                        rows.push(row);
                    }
                }, else return Err(reduce::ops_bench::unsupported(op, a.ty)));
            }
            if let Some(mut out) = a.json {
                write_output(
                    &mut out,
                    serde_json::to_string_pretty(&rows).map_err(|e| Error::Invalid(e.to_string()))?,
                )?;
            }
            Ok(rows.iter().all(|row| row.ok))
        }
        Job::Explain(n, dtype, block, raw) => {
            let ncu = reduce::explain::find_ncu()?;
            let kernels: Vec<&'static Kernel> = KERNELS.iter().filter(|k| k.check_block(block).is_ok()).collect();
            let mut text = String::new();
            let args = ["--type".to_string(), dtype.name().to_string()];
            let rows = reduce::explain::profile(&ncu, &kernels, n, block, &args, &mut text)?;
            println!("ncu --clock-control none --set full, n = {n} {}, block {block}, one launch each", dtype.name());
            print!("{}", reduce::explain::table(&rows, n));
            if let Some(mut out) = raw {
                write_output(&mut out, text)?;
            }
            let missing: Vec<&str> = rows.iter().filter(|(_, m)| m.is_none()).map(|(k, _)| k.id).collect();
            if !missing.is_empty() {
                return Err(Error::Invalid(format!("ncu profiled no launch of {}", missing.join(", "))));
            }
            Ok(true)
        }
        Job::ExplainFromRaw(path, n) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::Invalid(format!("--from-raw {}: {e}", path.display())))?;
            print!("{}", reduce::explain::table(&reduce::explain::from_raw(&text)?, n));
            Ok(true)
        }
        Job::Report(json, page) => {
            reduce::report::regenerate(&json, page.as_deref())?;
            Ok(true)
        }
        Job::Cards(dirs, page) => {
            let text = reduce::cards::page(&dirs)?;
            let Some(path) = page else {
                print!("{text}");
                return Ok(true);
            };
            let io = |e: std::io::Error| Error::Invalid(format!("{}: {e}", path.display()));
            let old = std::fs::read_to_string(&path).map_err(io)?;
            let new =
                reduce::report::section(&old, "<!-- cards -->\n", "<!-- /cards -->", &text)?.ok_or_else(|| {
                    Error::Invalid(format!("{}: no `<!-- cards -->` ... `<!-- /cards -->` section", path.display()))
                })?;
            std::fs::write(&path, new).map_err(io)?;
            Ok(true)
        }
    }
}

fn bench(gpu: &Gpu, a: BenchArgs) -> Result<bool> {
    let unsupported = || Error::Invalid("bench: sum, min and max of the primitive types only".into());
    if let CudaColumn::From(from, source) = &a.cuda {
        return with_plain_dtype!(a.dtype, |T| with_op!(a.op, |O| cuda_cells::<O, T>(gpu, &a.config, *from, source.as_deref()), else Err(unsupported())), else Err(unsupported()));
    }
    let rust = gpu.open()?;
    let cells: Vec<(usize, String)> = reduce::bench::cells(&a.config).map(|(n, k)| (n, k.id.to_string())).collect();
    let per_kernel = if matches!(a.cuda, CudaColumn::Off) { 1 } else { 2 };
    let progress = ProgressBar::new((cells.len() * per_kernel) as u64);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        progress.set_style(style);
    }
    let tick = |what: &str| {
        progress.set_message(what.to_string());
        progress.inc(1);
    };
    let mut report = with_plain_dtype!(a.dtype, |T| with_op!(a.op, |O| run_bench::<O, T>(&rust, &a.config, tick), else Err(unsupported())), else Err(unsupported()))?;
    let column = match &a.cuda {
        CudaColumn::Process(args) => std::env::current_exe()
            .map_err(|e| format!("cannot find this program to run the CUDA C++ column: {e}"))
            .and_then(|exe| {
                twins::run_column(&exe, args, &cells, |c| tick(&format!("n={} {} (CUDA C++)", c.n, c.kernel)))
            }),
        _ => Err("left out with --no-cuda".to_string()),
    };
    report.add_cuda(column);
    progress.finish_and_clear();
    print!("{}", report.text());
    if let Some(mut out) = a.json {
        write_output(&mut out, serde_json::to_string_pretty(&report).map_err(|e| Error::Invalid(e.to_string()))?)?;
    }
    if let Some(mut out) = a.svg {
        write_output(&mut out, reduce::svg::chart(&report))?;
    }
    Ok(report.rust_ok())
}

/// The twins' process of `reduce bench` (`--cuda-from`): compile the CUDA
/// C++ source, measure the cells from `from` on, one JSON line each on
/// stdout; a reason for the whole column if nothing can run.
fn cuda_cells<O: ReduceOp<T>, T: Element + Reference + Sample>(
    gpu: &Gpu,
    config: &reduce::bench::BenchConfig,
    from: usize,
    source: Option<&str>,
) -> Result<bool> {
    use std::io::Write;
    let print = |line: Line| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", line.text()).and_then(|()| out.flush());
    };
    let info = gpu.open()?.gpu().info().clone();
    let source = source.unwrap_or(nvrtc::CUDA_REFERENCE_SOURCE);
    let cuda = match nvrtc::compile_source(source, &info)
        .and_then(|ptx| Reducer::with_ptx(gpu.device, ptx).map_err(|e| e.to_string()))
    {
        Ok(cuda) => cuda,
        Err(why) => {
            print(Line::Column(why));
            return Ok(true);
        }
    };
    reduce::bench::measure_cuda::<O, T>(&cuda, config, from, |cell| print(Line::Cell(cell.clone())))?;
    Ok(true)
}

/// Replace what an output file opened by [`output`] holds with `text`.
fn write_output((path, file): &mut (PathBuf, File), text: String) -> Result<()> {
    use std::io::Write;
    file.set_len(0)
        .and_then(|()| file.write_all(text.as_bytes()))
        .map_err(|e| Error::Invalid(format!("cannot write {}: {e}", path.display())))
}

/// Check operation `op` on `n` random elements of `dtype` once with the
/// default kernel; print a line if it differs from the CPU.
fn check_operation(r: &Reducer, op: Op, dtype: DType, n: usize, seed: u64) -> Result<bool> {
    if matches!(op, Op::ArgMin | Op::ArgMax) && n == 0 {
        return Ok(true);
    }
    let row = reduce::ops_bench::check(r, op, dtype, n, seed)?;
    if !row.ok {
        println!("MISMATCH {} {} n={n}: GPU {}, CPU {}", op.name(), dtype.name(), row.got, row.expected);
    }
    Ok(row.ok)
}

/// Reduce `n` random elements with every (kernel, block) given; print one
/// line per mismatch and a summary line.
fn check_kernels<O: ReduceOp<T>, T: Element + Reference + Sample>(
    r: &Reducer,
    kernels: &[(&'static Kernel, u32)],
    n: usize,
    seed: u64,
) -> Result<bool> {
    let input = CheckInput::<T>::new(r, Pattern::Random, n, seed)?;
    let mut bad = 0;
    for &(kernel, block) in kernels {
        let c = verify::<O, T>(r, kernel, block, Finish::Gpu, &input)?;
        if let Some(e) = c.mismatch() {
            bad += 1;
            println!("MISMATCH {e}");
        }
    }
    println!("{} {} n={n}: {} configurations, {bad} mismatches", T::NAME, O::NAME, kernels.len());
    Ok(bad == 0)
}

/// Every reduce-by-key kernel on `n` f32 and f64 values with sorted and
/// random keys (about 10 per key), against the CPU group-by sum.
fn check_by_key(r: &Reducer, n: usize, seed: u64) -> Result<bool> {
    let num_keys = (n / 10).clamp(1, u32::MAX as usize) as u32;
    let mut bad = 0;
    for dist in [KeyDist::Sorted, KeyDist::Random] {
        let keys = generate_keys(dist, n, num_keys, seed)?;
        let f32s: Vec<f32> = generate(Pattern::Random, n, seed)?;
        let f64s: Vec<f64> = generate(Pattern::Random, n, seed)?;
        let (ref32, ref64) = (reference(&keys, &f32s, num_keys as usize)?, reference(&keys, &f64s, num_keys as usize)?);
        for kernel in reduction::by_key::kernels() {
            let case = format!("by-key {} {} n={n}", kernel.id, dist.name());
            let opts = Options { kernel: Some(kernel), ..Options::default() };
            let checks = [
                ref32.check(&r.reduce_by_key(&keys, &f32s, num_keys as usize, &opts)?, &format!("{case} f32"), false),
                ref64.check(&r.reduce_by_key(&keys, &f64s, num_keys as usize, &opts)?, &format!("{case} f64"), false),
            ];
            for e in checks.into_iter().filter_map(|c| c.err()) {
                println!("MISMATCH {e}");
                bad += 1;
            }
        }
    }
    println!("by-key n={n}: {} configurations, {bad} mismatches", 2 * 2 * reduction::by_key::kernels().count());
    Ok(bad == 0)
}

/// Rows, columns and segments of operation `op` on `dtype` (of one input:
/// shapes reduce one), one small case for each shaped kernel
/// (`shapes_bench::check_cases`), against the CPU; one line per mismatch
/// and a summary line.
fn check_shapes(r: &Reducer, op: Op, dtype: DType) -> Result<bool> {
    use reduce::shapes_bench::{CHECK_ELEMENTS, check_cases, input_of, line, measure};
    let cases = check_cases();
    let mut bad = 0;
    with_operation!(op, dtype, |R, T| {
        if <R as Reduction<T>>::INPUTS != 1 {
            return Ok(true);
        }
        let (host, device) = input_of::<T>(r, CHECK_ELEMENTS)?;
        for (case, strategy) in &cases {
            let row = measure::<R, T>(r, op, case, *strategy, &Options::default(), &host, &device, 0)?;
            if !row.ok {
                bad += 1;
                println!("MISMATCH {}", line(&row));
            }
        }
    }, else return Err(reduce::ops_bench::unsupported(op, dtype)));
    println!("{} {} shaped: {} cases, {bad} mismatches", dtype.name(), op.name(), cases.len());
    Ok(bad == 0)
}

fn run_kernels<O: ReduceOp<T>, T: Element + Reference + Sample>(r: &Reducer, a: &RunArgs) -> Result<bool> {
    let input = Rotated::<T>::new(r, Pattern::Random, a.n, a.seed)?;
    let width = a.kernels.iter().map(|(k, _)| k.id.len()).max().unwrap_or(6).max("kernel".len());
    println!(
        "{:<width$} {:>5}  {:>22} {:>22}  {:<8} {:>10} {:>10} {:>10} {:>9}",
        "kernel", "block", "GPU", "CPU", "check", "median ms", "min ms", "max ms", "GB/s"
    );
    let mut all_ok = true;
    for &(kernel, block) in &a.kernels {
        let block = match block {
            Some(b) => b,
            None => r.plan::<O, T>(a.n, &Options::default())?.block, // the library's choice
        };
        let (_, m) = measure::<O, T>(r, kernel, block, a.finish, &input, a.runs)?;
        all_ok &= m.ok;
        println!(
            "{:<width$} {:>5}  {:>22} {:>22}  {:<8} {:>10.4} {:>10.4} {:>10.4} {:>9.1}",
            m.kernel,
            m.block,
            m.got,
            m.expected,
            if m.ok { "OK" } else { "MISMATCH" },
            m.stats.median_ms,
            m.stats.min_ms,
            m.stats.max_ms,
            m.bandwidth / 1e9
        );
    }
    Ok(all_ok)
}
