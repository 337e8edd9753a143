//! What the GPU test files share: one `Reducer` per process, and trials that
//! are reported as ignored, after one `SKIPPED: <reason>` line, where no GPU
//! can be used.

#![allow(dead_code)] // each test file uses a part

use std::sync::{OnceLock, RwLock};

use libtest_mimic::{Arguments, Failed, Trial};
use reduction::{Reducer, no_gpu_reason};

/// Why GPU trials cannot run here, or `None`.
pub fn skip_reason() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(no_gpu_reason)
}

/// The process's reducer on device 0.
pub fn reducer() -> &'static Reducer {
    static R: OnceLock<Reducer> = OnceLock::new();
    R.get_or_init(|| Reducer::new().unwrap_or_else(|e| panic!("no_gpu_reason() said a GPU is here, but: {e}")))
}

/// Trials share the GPU; the ones that fill its memory run alone.
static GPU_MEMORY: RwLock<()> = RwLock::new(());

/// A trial that needs the GPU: ignored (and never run) without one.
pub fn gpu_trial(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    let shared = move || {
        let _guard = GPU_MEMORY.read().unwrap_or_else(|p| p.into_inner());
        f()
    };
    Trial::test(name, shared).with_ignored_flag(skip_reason().is_some())
}

/// A GPU trial that needs most of the device memory: no other trial of this
/// process runs meanwhile.
pub fn gpu_trial_alone(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    let alone = move || {
        let _guard = GPU_MEMORY.write().unwrap_or_else(|p| p.into_inner());
        f()
    };
    Trial::test(name, alone).with_ignored_flag(skip_reason().is_some())
}

/// A trial that runs everywhere.
pub fn cpu_trial(name: impl Into<String>, f: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    Trial::test(name, f)
}

/// Print the skip reason (once) and run the trials.
pub fn run(trials: Vec<Trial>) -> ! {
    if let Some(reason) = skip_reason() {
        println!("SKIPPED: {reason}");
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// `Err` with a message unless `cond`.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond { Ok(()) } else { Err(msg().into()) }
}
