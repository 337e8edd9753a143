//! Every argument checked before the GPU is touched: [`validate`] turns the
//! command line into a [`Job`] whose values all make sense together, or into
//! a one-line usage error (exit code 2, nothing run).

use std::fs::File;
use std::path::PathBuf;

use crate::args::{Cli, Command, parse_count};
use reduce::bench::BenchConfig;
use reduce::ops_bench::ResultTo;
use reduce::timing::Timing;
use reduction::{
    DType, Determinism, Error, Finish, Op, Options, Ptx, Reducer, Result,
    registry::{BLOCK_SIZES, DEFAULT_BLOCK, DEFAULT_KERNEL, KERNELS, Kernel},
};

/// The tile sizes rows and segments take, in KiB: the library's powers of
/// two from `MIN_TILE_BYTES` to `MAX_TILE_BYTES` (16 to 256).
fn tile_kib() -> impl Iterator<Item = u32> {
    use reduction::shape::{MAX_TILE_BYTES, MIN_TILE_BYTES};
    std::iter::successors(Some(MIN_TILE_BYTES), |t| Some(t * 2))
        .take_while(|&t| t <= MAX_TILE_BYTES)
        .map(|t| (t >> 10) as u32)
}

/// Each timing once, in the order first given.
fn distinct<T: PartialEq>(choices: Vec<T>) -> Vec<T> {
    let mut out = Vec::new();
    for t in choices {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// What to do, every argument checked.
pub(crate) enum Job {
    List,
    Info(Gpu),
    Run(Gpu, RunArgs),
    Multi(reduce::multi_gpu::MultiRun),
    Nccl,
    Check(Gpu, CheckArgs),
    ByKey(Gpu, usize, u32, usize),
    Latency(Gpu, Vec<usize>, DType, usize, u64, Option<u32>, Vec<Timing>),
    Report(Vec<PathBuf>, Option<PathBuf>),
    Cards(Vec<PathBuf>, Option<PathBuf>),
    Explain(usize, DType, u32, Option<(PathBuf, File)>),
    ExplainFromRaw(PathBuf, usize),
    Bench(Gpu, BenchArgs),
    Ops(Gpu, OpsArgs),
    Modes(Gpu, usize, Vec<DType>, usize, u64, Option<(PathBuf, File)>),
    Shapes(Gpu, ShapesArgs),
}

pub(crate) struct ShapesArgs {
    /// The operations, each in turn over every case.
    pub(crate) ops: Vec<Op>,
    pub(crate) ty: DType,
    /// The exponent of `power_sum`.
    pub(crate) p: Option<f64>,
    pub(crate) cases: Vec<(reduce::shapes_bench::Case, reduction::shape::Strategy)>,
    pub(crate) determinism: Determinism,
    pub(crate) runs: usize,
    pub(crate) json: Option<(PathBuf, File)>,
}

pub(crate) struct OpsArgs {
    pub(crate) pairs: Vec<(Op, DType)>,
    /// The exponent of `power_sum`.
    pub(crate) p: Option<f64>,
    pub(crate) sizes: Vec<usize>,
    pub(crate) block: Option<u32>,
    pub(crate) max_grid: Option<u32>,
    pub(crate) runs: usize,
    pub(crate) seed: u64,
    pub(crate) timings: Vec<Timing>,
    pub(crate) results: Vec<ResultTo>,
    pub(crate) json: Option<(PathBuf, File)>,
}

/// Which GPU and PTX: opened only after the arguments are known to be good.
pub(crate) struct Gpu {
    pub(crate) device: usize,
    pub(crate) ptx: Option<String>,
}

impl Gpu {
    pub(crate) fn open(&self) -> Result<Reducer> {
        let ptx = match &self.ptx {
            Some(path) => Ptx::from_file(path)?,
            None => Ptx::embedded(),
        };
        Reducer::with_ptx(self.device, ptx)
    }
}

pub(crate) struct RunArgs {
    /// Each kernel and its block; `None`: the library's choice for the GPU.
    pub(crate) kernels: Vec<(&'static Kernel, Option<u32>)>,
    pub(crate) n: usize,
    pub(crate) dtype: DType,
    pub(crate) op: Op,
    pub(crate) finish: Finish,
    /// `--determinism`, `--accurate` and `--block` as given (the rest unset).
    pub(crate) mode: Options,
    pub(crate) runs: usize,
    pub(crate) seed: u64,
}

pub(crate) struct CheckArgs {
    pub(crate) kernels: Vec<(&'static Kernel, u32)>,
    pub(crate) by_key: bool,
    /// Also the shaped kernels (`shapes_bench::check_cases`).
    pub(crate) shapes: bool,
    pub(crate) sizes: Vec<usize>,
    pub(crate) types: Vec<DType>,
    pub(crate) ops: Vec<Op>,
    pub(crate) seed: u64,
}

pub(crate) struct BenchArgs {
    pub(crate) config: BenchConfig,
    pub(crate) dtype: DType,
    pub(crate) op: Op,
    /// How the CUDA C++ column is measured.
    pub(crate) cuda: CudaColumn,
    pub(crate) json: Option<(PathBuf, File)>,
    pub(crate) svg: Option<(PathBuf, File)>,
}

/// The CUDA C++ column of `reduce bench`.
pub(crate) enum CudaColumn {
    /// Left out (`--no-cuda`).
    Off,
    /// Measured by the twins' process, started with these arguments
    /// (`reduce::twins::run_column`).
    Process(Vec<String>),
    /// This is the twins' process: measure from this cell on, with the
    /// source given (else the built-in one).
    From(usize, Option<String>),
}

pub(crate) fn dtype(name: &str) -> std::result::Result<DType, String> {
    let valid: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
    DType::from_name(name).ok_or_else(|| format!("unknown type {name:?} (valid: {})", valid.join(", ")))
}

/// `--determinism`: run_to_run or gpu_to_gpu.
fn determinism_of(name: &str) -> std::result::Result<Determinism, String> {
    Determinism::from_name(name).ok_or_else(|| format!("--determinism {name:?}: expected run_to_run or gpu_to_gpu"))
}

/// torch's names for what one operation computes: its variance, standard
/// deviation and their pairs with the mean are the one pass `moments`
/// (the mean and `M2`), finished on the host.
const SAME_PASS: [(&str, Op); 4] =
    [("var", Op::Moments), ("std", Op::Moments), ("var_mean", Op::Moments), ("std_mean", Op::Moments)];

pub(crate) fn op(name: &str) -> std::result::Result<Op, String> {
    let valid: Vec<&str> = Op::ALL.iter().map(|o| o.name()).chain(SAME_PASS.iter().map(|(n, _)| *n)).collect();
    Op::from_name(name)
        .or_else(|| SAME_PASS.iter().find(|(n, _)| *n == name).map(|&(_, op)| op))
        .ok_or_else(|| format!("unknown operation {name:?} (valid: {})", valid.join(", ")))
}

/// Whether every kernel takes `op` on `t` (a plain operator on a primitive
/// type), else only the default kernel, if the type has the operation at all.
pub(crate) fn every_kernel(op: Op, t: DType) -> std::result::Result<bool, String> {
    if !op.types().contains(&t) {
        return Err(reduce::ops_bench::unsupported(op, t).to_string());
    }
    Ok(op.is_plain() && !t.is_half())
}

/// `--p`: only beside `power_sum`, finite and not 0.
fn exponent_of(p: Option<f64>, ops: &[Op]) -> std::result::Result<(), String> {
    let Some(p) = p else { return Ok(()) };
    if !ops.contains(&Op::PowerSum) {
        return Err(format!("--p {p}: the exponent of power_sum, which --op does not name"));
    }
    let power = reduction::Options { p: Some(p), ..reduction::Options::default() };
    reduction::dispatch::exponent(Op::PowerSum.name(), &power).map(drop).map_err(|e| format!("--p: {e}"))
}

pub(crate) fn at_least_one(what: &str, value: usize) -> std::result::Result<(), String> {
    if value == 0 { Err(format!("{what} must be at least 1")) } else { Ok(()) }
}

/// `n` elements of the widest type fit in memory's address space.
pub(crate) fn size_fits(n: usize, types: &[DType]) -> std::result::Result<(), String> {
    for t in types {
        if n.checked_mul(t.size()).is_none_or(|b| b > isize::MAX as usize) {
            let most = isize::MAX as usize / t.size();
            return Err(format!("--n {n}: {n} elements of {} do not fit in memory (at most {most})", t.name()));
        }
    }
    Ok(())
}

/// `--kernel NAME|all|default` and `--block`: each kernel with the block it
/// runs at. A named kernel must accept the block; with `all`, the kernels
/// that accept it (at least one must), or each at `fallback(kernel)`.
pub(crate) fn select_kernels(
    name: &str,
    block: Option<u32>,
    fallback: impl Fn(&Kernel) -> u32,
) -> std::result::Result<Vec<(&'static Kernel, u32)>, String> {
    let kernels: Vec<&'static Kernel> = match name {
        "all" => KERNELS.iter().collect(),
        "default" => vec![DEFAULT_KERNEL],
        id => vec![Kernel::find(id).map_err(|_| {
            let ids: Vec<&str> = KERNELS.iter().map(|k| k.id).collect();
            Error::UnknownKernel { name: id.to_string(), valid: format!("{}, all, default", ids.join(", ")) }
                .to_string()
        })?],
    };
    let Some(b) = block else {
        return Ok(kernels.into_iter().map(|k| (k, fallback(k))).collect());
    };
    if let [k] = kernels.as_slice() {
        k.check_block(b).map_err(|e| e.to_string())?;
    }
    let chosen: Vec<_> = kernels.into_iter().filter(|k| k.check_block(b).is_ok()).map(|k| (k, b)).collect();
    if chosen.is_empty() {
        let valid: Vec<String> = BLOCK_SIZES.iter().map(u32::to_string).collect();
        return Err(format!("no kernel accepts block size {b} (valid: {})", valid.join(", ")));
    }
    Ok(chosen)
}

/// An output file, created (or opened, keeping what it holds) now, so that
/// a path that cannot be written fails before a long benchmark.
pub(crate) fn output(path: Option<PathBuf>, flag: &str) -> std::result::Result<Option<(PathBuf, File)>, String> {
    path.map(|p| match File::options().append(true).create(true).open(&p) {
        Ok(f) => Ok((p, f)),
        Err(e) => Err(format!("{flag} {}: {e}", p.display())),
    })
    .transpose()
}

pub(crate) fn validate(cli: Cli) -> std::result::Result<Job, String> {
    let gpu = Gpu { device: cli.device, ptx: cli.ptx };
    Ok(match cli.command {
        Command::List => Job::List,
        Command::Info => Job::Info(gpu),
        Command::Run { staged: true, segments: None, .. } => return Err("--staged: for --segments".into()),
        Command::Run { shape, axis, segments, ty, op: o, runs, gpus, determinism, accurate, tile, staged, .. }
            if shape.is_some() || segments.is_some() =>
        {
            if ty.as_deref().is_some_and(|t| t != "f32") || o != "sum" || gpus.is_some() {
                return Err("--shape and --segments time f32 sums on one GPU (the library's API takes every operation and type)".into());
            }
            if accurate {
                return Err(
                    "--shape and --segments: no --accurate (the accurate sums are flat; --determinism gpu_to_gpu is)"
                        .into(),
                );
            }
            let strategy = match tile {
                None if staged => reduction::shape::Strategy::Staged { tile_bytes: 0 },
                None => reduction::shape::Strategy::Auto,
                Some(k) if tile_kib().any(|t| t == k) && staged => {
                    reduction::shape::Strategy::Staged { tile_bytes: k << 10 }
                }
                Some(k) if tile_kib().any(|t| t == k) && !(shape.is_some() && axis == 0) => {
                    reduction::shape::Strategy::Segments { tile_bytes: k << 10, lanes: 0 }
                }
                Some(k) => {
                    let sizes: Vec<String> = tile_kib().map(|t| t.to_string()).collect();
                    let (last, rest) = sizes.split_last().ok_or("no tile sizes")?;
                    return Err(format!("--tile {k}: {} or {last} (KiB), for rows and segments", rest.join(", ")));
                }
            };
            let determinism = determinism_of(&determinism)?;
            let case = match (shape, segments) {
                (Some(s), None) => {
                    let (rows, cols) = s
                        .split_once('x')
                        .and_then(|(r, c)| Some((parse_count(r).ok()?, parse_count(c).ok()?)))
                        .ok_or_else(|| format!("--shape {s:?}: expected ROWSxCOLS, e.g. 16384x16384"))?;
                    if rows.checked_mul(cols).is_none_or(|e| e > reduce::shapes_bench::ELEMENTS) {
                        return Err(format!("--shape {s}: at most 2^28 elements"));
                    }
                    let m = reduction::shape::Matrix::new(rows, cols);
                    reduction::shape::Shape::axis(m, axis).map_err(|e| e.to_string())?;
                    reduce::shapes_bench::Case::Axis(m, axis)
                }
                (None, Some(kind)) => {
                    use reduce::shapes_bench::{SEGMENT_CASES, segment_case};
                    segment_case(&kind)
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| format!("--segments {kind:?}: expected one of {}", SEGMENT_CASES.join(", ")))?
                }
                _ => return Err("--shape and --segments: one or the other".into()),
            };
            let cases = vec![(case, strategy)];
            let (ops, ty, p, json) = (vec![Op::Sum], DType::F32, None, None);
            Job::Shapes(gpu, ShapesArgs { ops, ty, p, cases, determinism, runs, json })
        }
        Command::Shapes { runs, sweep, op: names, ty, p, determinism, case, json } => {
            let ops = names.iter().map(|o| op(o)).collect::<std::result::Result<Vec<_>, _>>()?;
            let ty = dtype(&ty)?;
            let determinism = determinism_of(&determinism)?;
            exponent_of(p, &ops)?;
            for &o in &ops {
                if o == Op::Dot {
                    return Err("--op dot: shapes reduce one input (the matrix or the segments)".into());
                }
                every_kernel(o, ty)?;
                // the shaped kernels' levels of determinism, refused before any GPU work
                let level = reduction::Options { determinism, ..reduction::Options::default() };
                reduction::dispatch::mode_entry(o.name(), ty, &level).map_err(|e| e.to_string())?;
            }
            use reduce::shapes_bench::{Case, matrices, segment_cases, sweep_cases};
            use reduction::shape::Strategy;
            let mut cases: Vec<_> = matrices().into_iter().map(|c| (c, Strategy::Auto)).collect();
            cases.extend(segment_cases().map_err(|e| e.to_string())?.into_iter().map(|c| (c, Strategy::Auto)));
            if sweep {
                for c in sweep_cases() {
                    let teams = [1, 2, 4, 8, 16, 32].map(|lanes| Strategy::Segments { tile_bytes: 0, lanes });
                    cases.extend(teams.map(|s| (c.clone(), s)));
                }
                let rows_or_segments = |c: &Case| !matches!(c, Case::Axis(_, 0));
                for c in matrices().into_iter().chain(segment_cases().map_err(|e| e.to_string())?) {
                    if rows_or_segments(&c) {
                        let tiles = tile_kib().map(|k| Strategy::Segments { tile_bytes: k << 10, lanes: 0 });
                        cases.extend(tiles.map(|s| (c.clone(), s)));
                        if matches!(c, Case::Segments(..)) {
                            let staged = tile_kib().map(|k| Strategy::Staged { tile_bytes: k << 10 });
                            cases.extend(staged.map(|s| (c.clone(), s)));
                        }
                    } else {
                        for wide in [1, 2, 4, 8, 16] {
                            let chunks = [1, 4, 16, 64, 256, 1024].map(|chunks| Strategy::Columns { wide, chunks });
                            cases.extend(chunks.map(|s| (c.clone(), s)));
                        }
                    }
                }
            }
            if let Some(wanted) = case {
                let wanted: Vec<&str> = wanted.split(',').map(str::trim).filter(|w| !w.is_empty()).collect();
                cases.retain(|(c, _)| wanted.iter().any(|w| c.name().contains(w)));
                if cases.is_empty() {
                    return Err(format!("--case {}: no case's name holds it", wanted.join(",")));
                }
            }
            Job::Shapes(gpu, ShapesArgs { ops, ty, p, cases, determinism, runs, json: output(json, "--json")? })
        }
        Command::Run { tile: Some(k), .. } => return Err(format!("--tile {k}: for --shape and --segments")),
        Command::Run {
            n, ty, op: o, runs, seed, gpus: Some(g), kernel, block, finish, determinism, accurate, ..
        } => {
            let ty = ty.unwrap_or_else(|| "i32".into());
            at_least_one("--n", n)?;
            let (dtype, op) = (dtype(&ty)?, op(&o)?);
            size_fits(n.saturating_mul(2), &[dtype])?;
            every_kernel(op, dtype)?;
            if !["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str()) || block.is_some() || finish != "gpu" {
                return Err(format!(
                    "--gpus runs the default kernel ({}) at its own block size, finishing on the GPU",
                    DEFAULT_KERNEL.id
                ));
            }
            if determinism != "run_to_run" || accurate {
                return Err("--gpus runs the default mode (run_to_run, not --accurate)".into());
            }
            let gpus = match g.as_str() {
                "all" => None,
                k => match k.parse::<usize>() {
                    Ok(0) | Err(_) => return Err(format!("--gpus {k:?}: all, or a number of GPUs from 1")),
                    Ok(k) => Some(k),
                },
            };
            Job::Multi(reduce::multi_gpu::MultiRun { gpus, op, dtype, n, runs, seed })
        }
        Command::Nccl => Job::Nccl,
        Command::Run { kernel, n, block, ty, op: o, finish, determinism, accurate, runs, seed, gpus: None, .. } => {
            let ty = ty.unwrap_or_else(|| "i32".into());
            at_least_one("--n", n)?;
            let dtype = dtype(&ty)?;
            size_fits(n, &[dtype])?;
            let finish = match finish.as_str() {
                "gpu" => Finish::Gpu,
                "cpu" => Finish::Cpu,
                other => return Err(format!("--finish {other:?}: expected gpu or cpu")),
            };
            let op = op(&o)?;
            let fallback = |k: &Kernel| DEFAULT_BLOCK.max(k.min_block);
            // the default kernel asked for by `default` runs at the library's block for the GPU
            let library_block = |(k, b): (&'static Kernel, u32)| {
                let auto = block.is_none() && k.id == DEFAULT_KERNEL.id && kernel == "default";
                (k, if auto { None } else { Some(b) })
            };
            let determinism = determinism_of(&determinism)?;
            let mode = Options { determinism, accurate, finish, block, ..Options::default() };
            let named = ["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str());
            let explicit = Options { kernel: if named { None } else { Kernel::find(&kernel).ok() }, ..mode };
            if reduction::dispatch::mode_entry(op.name(), dtype, &explicit).map_err(|e| e.to_string())?.is_some() {
                if let Some(b) = block {
                    DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
                }
                let kernels = vec![(DEFAULT_KERNEL, block)];
                return Ok(Job::Run(gpu, RunArgs { kernels, n, dtype, op, finish, mode, runs, seed }));
            }
            let kernels = if every_kernel(op, dtype)? {
                select_kernels(&kernel, block, fallback)?.into_iter().map(library_block).collect()
            } else if ["all", "default", DEFAULT_KERNEL.id].contains(&kernel.as_str()) && finish == Finish::Gpu {
                vec![(DEFAULT_KERNEL, block)]
            } else {
                return Err(format!(
                    "--op {} --type {}: only the default kernel ({}) takes it, finishing on the GPU",
                    op.name(),
                    dtype.name(),
                    DEFAULT_KERNEL.id
                ));
            };
            if let Some(b) = block {
                DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
            }
            Job::Run(gpu, RunArgs { kernels, n, dtype, op, finish, mode, runs, seed })
        }
        Command::Check { kernel, n, ty, op: ops, block, seed } => {
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            let ops = ops.iter().map(|o| op(o)).collect::<std::result::Result<Vec<_>, _>>()?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size.saturating_mul(2), &types)?;
            }
            for &o in &ops {
                for &t in &types {
                    every_kernel(o, t)?;
                }
            }
            // every block size of each kernel: one entry per (kernel, block)
            let kernels = match (kernel.as_str(), block) {
                ("shaped", Some(b)) => {
                    return Err(format!(
                        "--block {b}: the shaped kernels run blocks of 256 (--kernel shaped takes none)"
                    ));
                }
                ("shaped", None) => Vec::new(),
                (_, Some(_)) => select_kernels(&kernel, block, |_| 0)?,
                (_, None) => select_kernels(&kernel, None, |_| 0)?
                    .into_iter()
                    .flat_map(|(k, _)| k.block_sizes().map(move |b| (k, b)))
                    .collect(),
            };
            let (by_key, shapes) = (kernel == "all", kernel == "all" || kernel == "shaped");
            Job::Check(gpu, CheckArgs { kernels, by_key, shapes, sizes: n, types, ops, seed })
        }
        Command::ByKey { n, keys, runs } => {
            at_least_one("--n", n)?;
            at_least_one("--keys", keys as usize)?;
            size_fits(n, &[DType::F64])?;
            Job::ByKey(gpu, n, keys, runs)
        }
        Command::Report { json, page } => {
            for path in json.iter().chain(&page) {
                if !path.is_file() {
                    return Err(format!("{}: no such file", path.display()));
                }
            }
            Job::Report(json, page)
        }
        Command::Cards { dirs, page } => {
            for dir in &dirs {
                if !dir.is_dir() {
                    return Err(format!("{}: no such folder", dir.display()));
                }
                for path in reduce::cards::FILES.iter().map(|f| dir.join(f)) {
                    if !path.is_file() {
                        return Err(format!("{}: no such file", path.display()));
                    }
                }
            }
            if let Some(p) = page.as_ref().filter(|p| !p.is_file()) {
                return Err(format!("{}: no such file", p.display()));
            }
            Job::Cards(dirs, page)
        }
        Command::Explain { n, from_raw: Some(path), .. } => Job::ExplainFromRaw(path, n),
        Command::Explain { n, ty, block, raw, from_raw: None } => {
            at_least_one("--n", n)?;
            let dtype = dtype(&ty)?;
            if dtype.is_half() {
                return Err(format!("--type {}: the teaching kernels take the primitive types", dtype.name()));
            }
            size_fits(n, &[dtype])?;
            select_kernels("all", Some(block), |_| block)?;
            Job::Explain(n, dtype, block, output(raw, "--raw")?)
        }
        Command::Latency { n, ty, runs, seed, max_grid, timing } => {
            let dtype = dtype(&ty)?;
            if dtype.is_half() {
                return Err(format!("--type {}: latency measures the primitive types", dtype.name()));
            }
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size, &[dtype])?;
            }
            if max_grid == Some(0) {
                return Err("--max-grid must be at least 1".into());
            }
            Job::Latency(gpu, n, dtype, runs, seed, max_grid, distinct(timing))
        }
        Command::Ops { n, op: ops, ty, p, block, max_grid, runs, seed, timing, result, json } => {
            if max_grid == Some(0) {
                return Err("--max-grid must be at least 1".into());
            }
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            let ops = ops.iter().map(|o| op(o)).collect::<std::result::Result<Vec<_>, _>>()?;
            exponent_of(p, &ops)?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size.saturating_mul(2), &types)?; // two inputs for a dot product
            }
            if let Some(b) = block {
                DEFAULT_KERNEL.check_block(b).map_err(|e| e.to_string())?;
            }
            let pairs: Vec<(Op, DType)> = ops
                .iter()
                .flat_map(|&o| types.iter().map(move |&t| (o, t)))
                .filter(|(o, t)| o.types().contains(t))
                .collect();
            if pairs.is_empty() {
                return Err("no type given has any of the operations given".into());
            }
            let (timings, results) = (distinct(timing), distinct(result));
            Job::Ops(
                gpu,
                OpsArgs {
                    pairs,
                    p,
                    sizes: n,
                    block,
                    max_grid,
                    runs,
                    seed,
                    timings,
                    results,
                    json: output(json, "--json")?,
                },
            )
        }
        Command::Modes { n, ty, runs, seed, json } => {
            at_least_one("--n", n)?;
            let types = ty.iter().map(|t| dtype(t)).collect::<std::result::Result<Vec<_>, _>>()?;
            for &t in &types {
                if !reduction::registry::ACCURATE.supports(reduction::Op::Sum, t) {
                    return Err(format!("--type {}: the modes are f32 and f64 sums", t.name()));
                }
            }
            size_fits(n, &types)?;
            Job::Modes(gpu, n, types, runs, seed, output(json, "--json")?)
        }
        Command::Bench { n, ty, op: o, kernel, block, runs, seed, no_cuda, cuda_source, json, svg, cuda_from } => {
            at_least_one("the number of sizes", n.len())?;
            let dtype = dtype(&ty)?;
            for &size in &n {
                at_least_one("every --n", size)?;
                size_fits(size, &[dtype])?;
            }
            if !block.is_power_of_two() || !(32..=1024).contains(&block) {
                let valid: Vec<String> = BLOCK_SIZES.iter().map(u32::to_string).collect();
                return Err(format!("--block {block}: not a block size (valid: {})", valid.join(", ")));
            }
            let mut kernels: Vec<&'static Kernel> = Vec::new();
            for name in &kernel {
                for (k, _) in select_kernels(name, None, |k| block.max(k.min_block))? {
                    if !kernels.iter().any(|&have| std::ptr::eq(have, k)) {
                        kernels.push(k);
                    }
                }
            }
            let op = op(&o)?;
            if !every_kernel(op, dtype)? {
                return Err(format!(
                    "--op {} --type {}: bench compares every kernel, which only sum, min and max of i32, u32, i64, u64, f32, f64 have; use `reduce ops`",
                    op.name(),
                    dtype.name()
                ));
            }
            let source = match &cuda_source {
                Some(path) => {
                    Some(std::fs::read_to_string(path).map_err(|e| format!("--cuda-source {}: {e}", path.display()))?)
                }
                None => None,
            };
            let cuda = match (cuda_from, no_cuda) {
                (Some(from), _) => CudaColumn::From(from, source),
                (None, true) => CudaColumn::Off,
                (None, false) => {
                    let list = |v: Vec<String>| v.join(",");
                    let ids = list(kernels.iter().map(|k| k.id.to_string()).collect());
                    let sizes = list(n.iter().map(usize::to_string).collect());
                    let mut args: Vec<String> = vec!["bench".into(), "--n".into(), sizes, "--kernel".into(), ids];
                    for (flag, value) in [("--type", ty), ("--op", o), ("--block", block.to_string())] {
                        args.extend([flag.to_string(), value]);
                    }
                    args.extend(["--runs".into(), runs.to_string(), "--seed".into(), seed.to_string()]);
                    if let Some(path) = cuda_source {
                        args.extend(["--cuda-source".into(), path.display().to_string()]);
                    }
                    CudaColumn::Process(args)
                }
            };
            let config = BenchConfig { sizes: n, kernels, block, runs, seed };
            let (json, svg) = (output(json, "--json")?, output(svg, "--svg")?);
            Job::Bench(gpu, BenchArgs { config, dtype, op, cuda, json, svg })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_no_kernel_takes_is_an_error() {
        for bad in [0, 3, 4096] {
            assert!(select_kernels("all", Some(bad), |_| 0).unwrap_err().contains("no kernel accepts"), "{bad}");
        }
        // with `all`, kernels that cannot take the block are left out
        let at_32 = select_kernels("all", Some(32), |_| 0).unwrap();
        assert!(!at_32.is_empty() && at_32.iter().all(|(k, b)| *b == 32 && k.id != "reduce5"));
        assert!(select_kernels("reduce0", None, |_| 0).unwrap_err().ends_with("single_pass, all, default)"));
    }

    #[test]
    fn tiles_are_the_librarys() {
        assert_eq!(tile_kib().collect::<Vec<_>>(), [16, 32, 64, 128, 256]);
    }

    #[test]
    fn sizes_that_cannot_exist_are_refused() {
        assert!(size_fits(1 << 62, &[DType::F32]).is_err());
        assert!(size_fits(1 << 30, &[DType::F64]).is_ok());
    }
}
