//! `reduce`: run, check and time the reduction kernels on this machine's GPU.
//!
//! ```text
//! reduce list                                  the kernels of the registry
//! reduce info                                  the GPU
//! reduce run [--kernel NAME|all|default] [--n N] [--block B] [--type T] [--op OP] [--finish gpu|cpu] [--gpus all|N]
//! reduce nccl                                  a folder with libnccl.so, for LD_LIBRARY_PATH
//! reduce check [--kernel NAME|all] [--n LIST] [--type LIST] [--op LIST] [--block B]
//! reduce bench [--n LIST] [--type T] [--op OP] [--kernel K] [--json FILE] [--svg FILE]
//! reduce ops [--n LIST] [--op LIST] [--type LIST] [--timing host-loop,queued] [--json FILE]
//! reduce latency [--n LIST] [--type T] [--timing host-loop,queued]
//! reduce modes [--n N] [--type f32,f64] [--json FILE]   default vs gpu_to_gpu vs accurate sums
//! reduce run ... [--determinism run_to_run|gpu_to_gpu] [--accurate]
//! reduce by-key [--n N] [--keys K]
//! reduce shapes [--runs R] [--sweep] [--json FILE]    rows, columns, segments
//! reduce explain [--n N] [--type T]                   Nsight Compute's counters per teaching step
//! reduce report FILE.json... [--page FILE]            a results page from bench JSON
//! reduce cards DIR... [--page FILE]                   every card's measurements side by side
//! ```
//! Every argument is checked before the GPU is touched. Errors are one line
//! on stderr. Exit codes: 0 success, 1 runtime error (no driver, out of
//! memory, ...), 2 usage error (a bad argument), 3 a result that differs
//! from the CPU reference.
//!
//! Three steps, a module each: [`args`] (what clap reads), [`validate`]
//! (a `Job`, every value checked; nothing touches the GPU), [`execute`] (the
//! job run).

mod args;
mod execute;
mod validate;

use std::process::ExitCode;

use clap::Parser;
use reduction::Error;

use args::Cli;
use execute::execute;
use validate::validate;

/// How `reduce` ends; the exit codes the README documents.
enum Outcome {
    /// 0: done, every result matched.
    Success,
    /// 1: something failed at run time (no driver, out of memory, ...).
    Runtime(Error),
    /// 2: an argument is wrong; nothing was run.
    Usage(String),
    /// 3: a result differs from the CPU reference.
    Mismatch,
}

impl Outcome {
    fn exit(self) -> ExitCode {
        match self {
            Outcome::Success => ExitCode::SUCCESS,
            Outcome::Runtime(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
            Outcome::Usage(msg) => {
                eprintln!("error: {msg}");
                ExitCode::from(2)
            }
            Outcome::Mismatch => {
                eprintln!("error: at least one result differs from the CPU reference");
                ExitCode::from(3)
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            print!("{e}"); // --help, --version
            return ExitCode::SUCCESS;
        }
        // bare `reduce` (or a command group without its command): the usage, exit 2
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{e}");
            return ExitCode::from(2);
        }
        // clap's own message is several lines (usage, tips): keep the first
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            return Outcome::Usage(first.trim_start_matches("error: ").to_string()).exit();
        }
    };
    let outcome = match validate(cli) {
        Err(msg) => Outcome::Usage(msg),
        Ok(job) => match execute(job) {
            Ok(true) => Outcome::Success,
            Ok(false) => Outcome::Mismatch,
            Err(e) => Outcome::Runtime(e),
        },
    };
    outcome.exit()
}
