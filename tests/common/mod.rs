//! What the GPU test files share: one `Reducer` per process, and trials that
//! are reported as ignored, after one `SKIPPED: <reason>` line, where no GPU
//! can be used. With `REDUCTION_REQUIRE_GPU=1` (the GPU bundle's
//! `run-tests.sh` sets it) a GPU trial that cannot run fails instead, so a
//! GPU machine with a broken driver or container setup is not reported green.

#![allow(dead_code)] // each test file uses a part

use std::sync::{OnceLock, RwLock};

use libtest_mimic::{Arguments, Failed, Trial};
use reduction::{Ptx, Reducer, device::no_gpu_reason};

/// Why GPU trials cannot run here, or `None`.
pub fn skip_reason() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(no_gpu_reason)
}

/// The process's reducer on device 0: the embedded kernels, or those of
/// the PTX file `REDUCTION_TEST_PTX` names (a kernel variant tried with the
/// same test executables, without rebuilding them).
pub fn reducer() -> &'static Reducer {
    static R: OnceLock<Reducer> = OnceLock::new();
    R.get_or_init(|| {
        let made = match std::env::var_os("REDUCTION_TEST_PTX") {
            Some(path) => Ptx::from_file(path).and_then(|ptx| Reducer::with_ptx(0, ptx)),
            None => Reducer::new(),
        };
        made.unwrap_or_else(|e| panic!("no_gpu_reason() said a GPU is here, but: {e}"))
    })
}

/// Trials share the GPU; the ones that fill its memory run alone.
static GPU_MEMORY: RwLock<()> = RwLock::new(());

/// Whether a skipped GPU trial is a failure (`REDUCTION_REQUIRE_GPU=1`).
pub fn gpu_required() -> bool {
    std::env::var("REDUCTION_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A trial that needs the GPU: ignored (and never run) without one, or
/// failed when a GPU is required.
fn needs_gpu(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    match skip_reason() {
        Some(reason) if gpu_required() => {
            let reason = reason.clone();
            Trial::test(name, move || Err(format!("REDUCTION_REQUIRE_GPU=1, but no GPU can be used: {reason}").into()))
        }
        Some(_) => Trial::test(name, f).with_ignored_flag(true),
        None => Trial::test(name, f),
    }
}

/// A trial that needs the GPU.
pub fn gpu_trial(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    needs_gpu(name, move || {
        let _guard = GPU_MEMORY.read().unwrap_or_else(|p| p.into_inner());
        f()
    })
}

/// A GPU trial that needs most of the device memory: no other trial of this
/// process runs meanwhile.
pub fn gpu_trial_alone(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    needs_gpu(name, move || {
        let _guard = GPU_MEMORY.write().unwrap_or_else(|p| p.into_inner());
        f()
    })
}

/// The GPUs the driver sees (0 without a driver).
pub fn gpu_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        if skip_reason().is_some() {
            0
        } else {
            reduction::cudarc::driver::CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
        }
    })
}

/// A trial that needs `gpus` GPUs and, for more than one or when `nccl`,
/// NCCL: ignored after a `SKIPPED` line naming what is missing, or failed
/// where `REDUCTION_REQUIRE_GPUS` (a count) asks for at least `gpus` GPUs,
/// or `REDUCTION_REQUIRE_GPU=1` for one.
pub fn multi_gpu_trial(
    name: impl Into<String>,
    gpus: usize,
    nccl: bool,
    f: impl FnOnce() -> Result<(), Failed> + Send + 'static,
) -> Trial {
    let name = name.into();
    let required = std::env::var("REDUCTION_REQUIRE_GPUS").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
    let required = required >= gpus || (gpus == 1 && gpu_required());
    let missing = if let Some(reason) = skip_reason() {
        Some(reason.clone())
    } else if gpu_count() < gpus {
        Some(format!("needs {gpus} GPUs, the driver sees {}", gpu_count()))
    } else if nccl || gpus > 1 {
        reduction::multi::no_nccl_reason()
    } else {
        None
    };
    match missing {
        Some(reason) if required => Trial::test(name, move || Err(format!("required, but: {reason}").into())),
        Some(reason) => {
            // each reason once (the missing driver: once, by `run`)
            static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
            let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
            if skip_reason().is_none() && !said.contains(&reason) {
                println!("SKIPPED: {reason} (the trials that need it are ignored)");
                said.push(reason);
            }
            Trial::test(name, || Ok(())).with_ignored_flag(true)
        }
        None => Trial::test(name, move || {
            let _guard = GPU_MEMORY.read().unwrap_or_else(|p| p.into_inner());
            f()
        }),
    }
}

/// A trial that runs everywhere.
pub fn cpu_trial(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::test(name, f)
}

/// Print the skip reason (once) and run the trials.
pub fn run(trials: Vec<Trial>) -> ! {
    if let Some(reason) = skip_reason() {
        let required = if gpu_required() { " (REDUCTION_REQUIRE_GPU=1: the GPU trials fail)" } else { "" };
        println!("SKIPPED: {reason}{required}");
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// `Err` with a message unless `cond`.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(msg().into()) }
}
