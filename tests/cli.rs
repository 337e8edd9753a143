//! The `reduce` command line, end to end: bad input is one `error:` line on
//! stderr and exit code 2, before any GPU is touched (so these run on any
//! machine); a run-time failure is exit code 1; on a GPU, `run` checks every
//! kernel and exits 0, and the reduce-by-key benchmark checks every row.
//!
//! The binary is cargo's `CARGO_BIN_EXE_reduce`, or `$REDUCE_BIN` where the
//! tests were built on another machine (`cargo xtask bundle`).

mod common;
#[path = "common/reduce_bin.rs"]
mod reduce_bin;

use std::process::Command;

use common::{cpu_trial, ensure, gpu_trial};
use libtest_mimic::Failed;
use reduce_bin::{bin, reduce, root};
use testkit::by_key::KeyDist;

/// Exit codes (README): a usage error, a run-time error.
const USAGE: i32 = 2;
const RUNTIME: i32 = 1;

/// Exactly one line on stderr, starting with `error:` and containing `what`,
/// and exit code `code`.
fn fails_in_one_line(args: &[&str], code: i32, what: &str) -> Result<(), Failed> {
    let out = reduce(args)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(out.status.code() == Some(code), || format!("{args:?}: exit {:?}, stderr {stderr}", out.status.code()))?;
    ensure(stderr.lines().count() == 1 && stderr.starts_with("error: ") && stderr.contains(what), || {
        format!("{args:?}: stderr {stderr:?}")
    })
}

/// The two example projects (the README's `cargo run` in each), built
/// beside `reduce` by `cargo xtask bundle` or in their own folders by
/// `cargo build --release`: each checks its results against the CPU and
/// exits 0 only when all agree.
fn examples_run() -> Result<(), Failed> {
    let beside = std::path::Path::new(&bin()).with_file_name("x");
    for (name, expect) in [("downstream", "sum and max of 1..=1000"), ("custom-op", "complex sum")] {
        let built = root()?.join("examples").join(name).join("target/release").join(name);
        let exe = [beside.with_file_name(name), built].into_iter().find(|p| p.is_file()).ok_or_else(|| {
            format!("examples/{name} is not built: cargo xtask bundle, or cargo build --release in examples/{name}")
        })?;
        let out = Command::new(&exe).output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        ensure(out.status.success() && text.contains(expect), || {
            format!("{}: exit {:?}\n{text}{}", exe.display(), out.status.code(), String::from_utf8_lossy(&out.stderr))
        })?;
        println!("{name}: {}", text.lines().last().unwrap_or(""));
    }
    Ok(())
}

fn main() {
    let trials = vec![
        cpu_trial("cli::unknown_kernel", || {
            fails_in_one_line(&["run", "--kernel", "reduce0"], USAGE, "single_pass, all, default)")
        }),
        cpu_trial("cli::bad_block", || {
            fails_in_one_line(&["run", "--kernel", "reduce5", "--block", "32"], USAGE, "too small")
        }),
        cpu_trial("cli::no_kernel_takes_the_block", || {
            for block in ["0", "3", "4096"] {
                fails_in_one_line(&["run", "--block", block], USAGE, "no kernel accepts")?;
                fails_in_one_line(&["check", "--block", block], USAGE, "no kernel accepts")?;
            }
            fails_in_one_line(&["bench", "--block", "3"], USAGE, "--block 3")
        }),
        cpu_trial("cli::bad_counts", || {
            fails_in_one_line(&["run", "--n", "0"], USAGE, "--n must be at least 1")?;
            fails_in_one_line(
                &["run", "--runs", "0"],
                USAGE,
                "'0' for '--runs <RUNS>': 0 timed runs: from 1 to 100000",
            )?;
            for command in ["run", "ops", "shapes", "modes", "bench", "by-key", "latency"] {
                fails_in_one_line(&[command, "--runs", "1000000000000"], USAGE, "from 1 to 100000")?;
            }
            fails_in_one_line(&["run", "--n", "2^62"], USAGE, "do not fit in memory")?;
            fails_in_one_line(&["check", "--n", "1000,0"], USAGE, "every --n must be at least 1")?;
            fails_in_one_line(&["by-key", "--keys", "0"], USAGE, "--keys must be at least 1")?;
            fails_in_one_line(&["bench", "--n", "0"], USAGE, "every --n must be at least 1")
        }),
        cpu_trial("cli::shaped_modes", || {
            fails_in_one_line(&["run", "--shape", "64x64", "--accurate"], USAGE, "no --accurate")?;
            fails_in_one_line(&["run", "--shape", "64x64", "--determinism", "any"], USAGE, "--determinism \"any\"")?;
            fails_in_one_line(&["run", "--shape", "64x64", "--tile", "48"], USAGE, "--tile 48")?;
            fails_in_one_line(&["run", "--shape", "64x64", "--axis", "0", "--tile", "64"], USAGE, "--tile 64")?;
            fails_in_one_line(&["run", "--tile", "64"], USAGE, "for --shape and --segments")?;
            fails_in_one_line(&["run", "--shape", "64x64", "--staged"], USAGE, "--staged: for --segments")?;
            fails_in_one_line(&["run", "--staged"], USAGE, "--staged: for --segments")?;
            fails_in_one_line(&["check", "--kernel", "shaped", "--block", "128"], USAGE, "--kernel shaped takes none")?;
            fails_in_one_line(&["shapes", "--determinism", "any"], USAGE, "--determinism \"any\"")?;
            fails_in_one_line(&["shapes", "--case", "7x7"], USAGE, "--case 7x7: no case")?;
            fails_in_one_line(&["shapes", "--op", "sum,dot"], USAGE, "--op dot: shapes reduce one input")?;
            fails_in_one_line(&["shapes", "--op", "argmax,nanmean", "--type", "i32"], USAGE, "nanmean of i32")?;
            fails_in_one_line(&["shapes", "--op", "argmax", "--determinism", "gpu_to_gpu"], USAGE, "argmax")?;
            fails_in_one_line(
                &["shapes", "--op", "moments", "--type", "f16", "--determinism", "gpu_to_gpu"],
                USAGE,
                "f16",
            )
        }),
        cpu_trial("cli::unwritable_outputs_fail_first", || {
            fails_in_one_line(
                &["bench", "--json", "/nonexistent/dir/x.json"],
                USAGE,
                "--json /nonexistent/dir/x.json",
            )?;
            fails_in_one_line(&["bench", "--svg", "/nonexistent/dir/x.svg"], USAGE, "--svg")
        }),
        cpu_trial("cli::parse_errors_are_one_line", || {
            fails_in_one_line(&["run", "--frobnicate"], USAGE, "--frobnicate")?;
            fails_in_one_line(&["run", "--n", "lots"], USAGE, "not a count")?;
            fails_in_one_line(&["nonsense"], USAGE, "nonsense")
        }),
        cpu_trial("cli::bare_reduce_prints_the_usage", || {
            let out = reduce(&[])?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            ensure(
                out.status.code() == Some(USAGE) && stderr.contains("Usage: reduce") && stderr.contains("bench"),
                || format!("exit {:?}: {stderr}", out.status.code()),
            )
        }),
        cpu_trial("cli::sizes_too_large_name_the_largest", || {
            fails_in_one_line(&["run", "--n", "2^70"], USAGE, "too large: the largest count is 18446744073709551615")?;
            fails_in_one_line(&["run", "--n", "2^62"], USAGE, "at most 2305843009213693951")
        }),
        cpu_trial("cli::report_of_a_missing_file_is_a_usage_error", || {
            fails_in_one_line(&["report", "/no/such/bench.json"], USAGE, "/no/such/bench.json: no such file")
        }),
        cpu_trial("cli::bad_timing", || {
            fails_in_one_line(
                &["ops", "--timing", "batched"],
                USAGE,
                "unknown timing \"batched\" (valid: host-loop, queued)",
            )?;
            fails_in_one_line(&["latency", "--timing", "queued,x"], USAGE, "unknown timing \"x\"")
        }),
        cpu_trial("cli::bad_exponent", || {
            fails_in_one_line(&["ops", "--op", "power_sum", "--p", "0"], USAGE, "--p: p = 0")?;
            fails_in_one_line(&["ops", "--op", "power_sum", "--p", "inf"], USAGE, "--p: p = inf")?;
            fails_in_one_line(&["ops", "--op", "sum", "--p", "3"], USAGE, "which --op does not name")?;
            fails_in_one_line(&["shapes", "--op", "power_sum", "--p", "nan"], USAGE, "--p: p = NaN")?;
            fails_in_one_line(&["shapes", "--op", "argmax", "--p", "3"], USAGE, "which --op does not name")
        }),
        gpu_trial("cli::ops_power_sum_with_an_exponent", || {
            let args = ["ops", "--op", "power_sum", "--p", "-2.5", "--type", "f32,bf16", "--n", "2^20", "--runs", "3"];
            let out = reduce(&args)?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || format!("exit {:?}: {text}", out.status.code()))?;
            let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("power_sum(-2.5) ")).collect();
            ensure(rows.len() == 2 && rows.iter().all(|l| l.contains(" OK ")), || format!("not two OK rows:\n{text}"))
        }),
        cpu_trial("cli::bad_type", || fails_in_one_line(&["run", "--type", "f8"], USAGE, "unknown type")),
        cpu_trial("cli::bad_op", || fails_in_one_line(&["run", "--op", "median"], USAGE, "unknown operation")),
        cpu_trial("cli::op_the_type_lacks", || {
            fails_in_one_line(&["run", "--op", "dot", "--type", "i32"], USAGE, "not an operation of that type")
        }),
        cpu_trial("cli::op_only_on_the_default_kernel", || {
            fails_in_one_line(&["run", "--op", "argmax", "--kernel", "reduce3"], USAGE, "only the default kernel")
        }),
        cpu_trial("cli::bench_is_for_every_kernel", || {
            fails_in_one_line(&["bench", "--op", "norm", "--type", "f32"], USAGE, "use `reduce ops`")
        }),
        cpu_trial("cli::bad_gpus", || {
            fails_in_one_line(&["run", "--gpus", "0"], USAGE, "--gpus")?;
            fails_in_one_line(&["run", "--gpus", "two"], USAGE, "--gpus")?;
            fails_in_one_line(&["run", "--gpus", "2", "--kernel", "reduce4"], USAGE, "default kernel")
        }),
        cpu_trial("cli::nccl_links_pytorchs_libnccl_so_2", nccl_link),
        cpu_trial("cli::bad_finish", || fails_in_one_line(&["run", "--finish", "gpu-ish"], USAGE, "--finish")),
        cpu_trial("cli::missing_ptx_file", || {
            fails_in_one_line(&["--ptx", "/no/such.ptx", "info"], RUNTIME, "cannot read PTX")
        }),
        cpu_trial("cli::list_is_aligned", || {
            let out = reduce(&["list"])?;
            let text = String::from_utf8_lossy(&out.stdout);
            // the columns "what" and "source" start at the same place on every line
            let header = text.lines().next().unwrap_or_default();
            for k in reduction::registry::KERNELS {
                let line = text.lines().find(|l| l.starts_with(&format!("{} ", k.id))).unwrap_or_default();
                ensure(line.find(k.title) == header.find("what"), || format!("{k:?}:\n{text}"))?;
                ensure(line.find(k.source) == header.find("source"), || format!("{k:?}:\n{text}"))?;
            }
            Ok(())
        }),
        cpu_trial("cli::list_names_every_kernel", || {
            let out = reduce(&["list"])?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || "reduce list failed".into())?;
            for k in reduction::registry::KERNELS {
                ensure(text.contains(k.id), || format!("{} missing from reduce list", k.id))?;
            }
            Ok(())
        }),
        cpu_trial("cli::no_gpu_is_one_line", || match reduction::device::no_gpu_reason() {
            Some(reason) => fails_in_one_line(&["run"], RUNTIME, &reason),
            None => Ok(()), // covered by cli::run_checks_every_kernel
        }),
        gpu_trial("cli::run_checks_every_kernel", || {
            let out = reduce(&["run", "--n", "100003", "--type", "f32", "--runs", "3"])?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || format!("exit {:?}: {text}", out.status.code()))?;
            for k in reduction::registry::KERNELS {
                let line = text.lines().find(|l| l.starts_with(k.id)).ok_or(format!("no line for {}", k.id))?;
                ensure(line.contains(" OK "), || format!("not OK: {line}"))?;
            }
            Ok(())
        }),
        gpu_trial("cli::check_reaches_the_shaped_kernels", || {
            let args = ["check", "--kernel", "shaped", "--type", "f32,bf16", "--op", "sum,argmax,moments,dot"];
            let out = reduce(&args)?;
            let text = String::from_utf8_lossy(&out.stdout);
            ensure(out.status.success(), || format!("exit {:?}: {text}", out.status.code()))?;
            // dot reduces two inputs, which shapes do not take
            let lines: Vec<&str> = text.lines().filter(|l| l.contains(" shaped: ")).collect();
            ensure(lines.len() == 6 && lines.iter().all(|l| l.ends_with("9 cases, 0 mismatches")), || {
                text.to_string()
            })?;
            ensure(text.contains("check: every result matches the CPU"), || text.to_string())
        }),
        cpu_trial("cli::cards_of_a_missing_folder_or_file_is_a_usage_error", || {
            fails_in_one_line(&["cards", "/no/such/card"], USAGE, "/no/such/card: no such folder")?;
            let docs = root()?.join("docs").display().to_string();
            fails_in_one_line(&["cards", &docs], USAGE, "info.txt: no such file")
        }),
        cpu_trial("cli::explain_without_ncu_says_so", || {
            let out = Command::new(bin()).args(["explain"]).env("NCU", "/no/such/ncu").output()?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            ensure(out.status.code() == Some(RUNTIME) && stderr.contains("ncu (Nsight Compute) not found"), || {
                format!("exit {:?}: {stderr}", out.status.code())
            })
        }),
        gpu_trial("examples::downstream_and_custom_op_run", examples_run),
        gpu_trial("bench::by_key_small", by_key_bench_small),
        gpu_trial("bench::every_cell_filled_i32", || bench_every_cell_filled("i32")),
        gpu_trial("bench::every_cell_filled_f32", || bench_every_cell_filled("f32")),
        gpu_trial("bench::a_faulting_twin_costs_its_own_cell", a_faulting_twin_costs_its_own_cell),
    ];
    common::run(trials)
}

/// The reduce-by-key benchmark on a small input: every row checked.
fn by_key_bench_small() -> Result<(), Failed> {
    use reduce::by_key_bench::{bench, format_table};
    let rows = bench(common::reducer(), 100_000, 10_000, 3)?;
    let text = format_table(&rows);
    let expected = KeyDist::ALL.len() * reduction::by_key::value_types().len() * reduction::by_key::kernels().count();
    ensure(rows.len() == expected, || text.clone())?;
    let bad: Vec<_> = rows.iter().filter(|r| !r.ok).map(|r| &r.error).collect();
    ensure(bad.is_empty(), || format!("{text}\n{bad:?}"))?;
    ensure(rows.iter().all(|r| r.elements_per_s > 0.0 && r.speedup > 0.0), || text.clone())
}

/// `reduce nccl` links a `libnccl.so.2` (here a stand-in named by
/// `REDUCTION_NCCL`, as PyTorch's wheel would hold it) as `libnccl.so` in a
/// folder of the cache, and prints that folder; without any, one line.
fn nccl_link() -> Result<(), Failed> {
    let tmp = std::env::temp_dir().join(format!("reduce-nccl-test-{}", std::process::id()));
    let lib = tmp.join("site-packages/nvidia/nccl/lib");
    std::fs::create_dir_all(&lib)?;
    std::fs::write(lib.join("libnccl.so.2"), b"not really NCCL")?;
    let run = |nccl: &std::path::Path| {
        Command::new(bin()).arg("nccl").env("REDUCTION_NCCL", nccl).env("XDG_CACHE_HOME", tmp.join("cache")).output()
    };
    let out = run(&lib)?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let target = std::fs::read_link(std::path::Path::new(&dir).join("libnccl.so"));
    let linked = out.status.success() && target.as_ref().is_ok_and(|t| *t == lib.join("libnccl.so.2"));
    ensure(linked, || format!("reduce nccl: exit {:?}, printed {dir:?}, link {target:?}", out.status.code()))?;
    let missing = run(&tmp.join("nowhere"))?;
    let stderr = String::from_utf8_lossy(&missing.stderr);
    let _ = std::fs::remove_dir_all(&tmp);
    ensure(
        missing.status.code() == Some(RUNTIME) && stderr.lines().count() == 1 && stderr.contains("NCCL not found"),
        || format!("reduce nccl without NCCL: exit {:?}, stderr {stderr:?}", missing.status.code()),
    )
}

/// `reduce bench` (the README's teaching command) at small sizes, with its
/// JSON: exit 0, every Rust kernel and every CUDA C++ twin measured and
/// equal to the CPU's result, no `n/a` cell.
fn bench_every_cell_filled(ty: &str) -> Result<(), Failed> {
    let json = std::env::temp_dir().join(format!("reduce-bench-{ty}-{}.json", std::process::id()));
    let path = json.display().to_string();
    let out = reduce(&["bench", "--type", ty, "--n", "2^16+3,2^20", "--runs", "3", "--json", &path])?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    ensure(out.status.success(), || format!("exit {:?}:\n{text}", out.status.code()))?;
    ensure(!text.contains("n/a") && !text.contains("MISMATCH"), || text.clone())?;
    let report: reduce::bench::Report = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let _ = std::fs::remove_file(&json);
    ensure(report.cuda_note.is_none() && report.tables.len() == 2, || text.clone())?;
    for t in &report.tables {
        ensure(t.rows.len() == reduction::registry::KERNELS.len(), || text.clone())?;
        for r in &t.rows {
            let twin_ok = r.cuda.as_ref().is_some_and(|c| c.ok && c.stats.median_ms > 0.0);
            ensure(r.rust.ok && twin_ok && r.cuda_note.is_none(), || format!("n={} {}: {r:?}", t.n, r.kernel))?;
        }
    }
    Ok(())
}

/// A twin that stores out of bounds (`nvrtc::planted_fault`: single_pass's
/// partials 2^28 elements too far) ends its own process's context; the
/// Rust table, the other twins and the JSON still complete, the faulting
/// cell says why, and the command exits 0 (every Rust kernel matched).
fn a_faulting_twin_costs_its_own_cell() -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("reduce-planted-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let source = dir.join("planted.cu");
    std::fs::write(&source, reduce::nvrtc::planted_fault())?;
    let json = dir.join("bench.json");
    let (src, path) = (source.display().to_string(), json.display().to_string());
    let kernels = "reduce3,single_pass,vectorized";
    let out = reduce(&[
        "bench",
        "--n",
        "2^16,2^18",
        "--kernel",
        kernels,
        "--runs",
        "2",
        "--cuda-source",
        &src,
        "--json",
        &path,
    ])?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    ensure(out.status.success(), || format!("exit {:?}:\n{text}", out.status.code()))?;
    let report: reduce::bench::Report = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let _ = std::fs::remove_dir_all(&dir);
    ensure(report.tables.len() == 2, || text.clone())?;
    for t in &report.tables {
        ensure(t.rows.len() == 3, || text.clone())?;
        for r in &t.rows {
            ensure(r.rust.ok && r.rust.stats.median_ms > 0.0, || format!("Rust {}: {r:?}", r.kernel))?;
            if r.kernel == "single_pass" {
                let note = r.cuda_note.as_deref().unwrap_or_default();
                ensure(r.cuda.is_none() && note.contains("CUDA_ERROR"), || format!("planted twin: {r:?}\n{text}"))?;
            } else {
                ensure(r.cuda.as_ref().is_some_and(|c| c.ok), || format!("twin {}: {r:?}\n{text}", r.kernel))?;
            }
        }
    }
    ensure(text.contains("CUDA C++ n/a: single_pass: "), || text)
}
