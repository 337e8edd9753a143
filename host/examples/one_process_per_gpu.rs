//! One process per GPU, as jobs that span nodes run: this program starts
//! itself once per GPU, hands every process the NCCL unique id through a
//! pipe (its stdin), and each process reduces its own shard of the same
//! input and prints the global results. The parent checks that every rank
//! printed the same bits and that they match the CPU.
//!
//! ```text
//! cargo run --release -p host --example one_process_per_gpu -- [--gpus N] [--n ELEMENTS]
//! ```
//!
//! Across nodes the same code runs unchanged: the job launcher (`srun`,
//! `torchrun`, `mpirun`) starts one process per GPU and passes the rank and
//! the world size; rank 0 makes the id and the launcher's channel (a shared
//! file, an environment variable, MPI's broadcast) carries it to the others;
//! NCCL then connects the nodes over the network (docs/src/guide/multi-gpu.md).

use std::io::{BufRead, Write};
use std::process::{Command, ExitCode, Stdio};

use reduction::multi::{MultiReducer, UniqueId, split};
use reduction::{Error, Result};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let outcome = match flag("--rank") {
        Some(rank) => rank_main(&rank, flag("--world"), flag("--n")),
        None => parent_main(flag("--gpus"), flag("--n")),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The input every process makes alike: `n` values in [-1, 1).
fn input(n: usize) -> Vec<f32> {
    (0..n as u64).map(|i| ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f32 / (1u64 << 23) as f32) - 1.0).collect()
}

fn number(text: Option<String>, name: &str, default: usize) -> Result<usize> {
    text.map_or(Ok(default), |t| t.parse().map_err(|_| Error::Invalid(format!("{name} {t:?}: not a number"))))
}

/// Start one process per GPU, give each the id, compare what they print.
fn parent_main(gpus: Option<String>, n: Option<String>) -> Result<ExitCode> {
    if let Some(reason) = reduction::device::no_gpu_reason() {
        return Err(Error::Invalid(reason));
    }
    let count =
        reduction::cudarc::driver::CudaContext::device_count().map_err(Error::from_driver("cuDeviceGetCount"))?;
    let world = number(gpus, "--gpus", count.max(0) as usize)?;
    let n = number(n, "--n", 1 << 26)?;
    if world == 0 || world > count as usize {
        return Err(Error::Invalid(format!("--gpus {world}: the driver sees {count} GPU(s)")));
    }
    let id = UniqueId::new()?;
    let me = std::env::current_exe().map_err(|e| Error::Invalid(format!("cannot find this program: {e}")))?;
    let mut children = Vec::new();
    for rank in 0..world {
        let mut child = Command::new(&me)
            .args(["--rank", &rank.to_string(), "--world", &world.to_string(), "--n", &n.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Invalid(format!("cannot start rank {rank}: {e}")))?;
        if let Some(mut pipe) = child.stdin.take() {
            writeln!(pipe, "{id}").map_err(|e| Error::Invalid(format!("cannot hand rank {rank} the id: {e}")))?;
        }
        children.push(child);
    }
    let mut lines = Vec::new();
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().map_err(|e| Error::Invalid(format!("rank {rank}: {e}")))?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        print!("{}", String::from_utf8_lossy(&out.stderr));
        println!("rank {rank}: {text}");
        if !out.status.success() {
            return Err(Error::Invalid(format!("rank {rank} failed ({})", out.status)));
        }
        lines.push(text);
    }
    // the CPU: f64 sum, first index of the largest value
    let data = input(n);
    let sum: f64 = data.iter().map(|&x| x as f64).sum();
    let abs: f64 = data.iter().map(|&x| x.abs() as f64).sum();
    let (mut best, mut at) = (f32::NEG_INFINITY, 0);
    for (i, &x) in data.iter().enumerate() {
        if x > best {
            (best, at) = (x, i);
        }
    }
    let same = lines.windows(2).all(|w| w[0] == w[1]);
    let fields: Vec<&str> = lines[0].split_whitespace().collect();
    let got_sum: f32 =
        fields.iter().find_map(|f| f.strip_prefix("sum=")).and_then(|v| v.parse().ok()).unwrap_or(f32::NAN);
    let got_at: usize =
        fields.iter().find_map(|f| f.strip_prefix("argmax=")).and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    let tolerance = 64.0 * f32::EPSILON as f64 * abs.max(1.0);
    let ok = same && (got_sum as f64 - sum).abs() <= tolerance && got_at == at;
    println!(
        "{world} process(es), n = {n}: every rank the same bits: {same}; sum {got_sum} (CPU {sum:.3} ± {tolerance:.1e}), argmax {got_at} (CPU {at}): {}",
        if ok { "OK" } else { "MISMATCH" }
    );
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

/// One rank: read the id from stdin, reduce this rank's shard, print the
/// global results (with the sum's bits, to compare ranks exactly).
fn rank_main(rank: &str, world: Option<String>, n: Option<String>) -> Result<ExitCode> {
    let rank = number(Some(rank.to_string()), "--rank", 0)?;
    let world = number(world, "--world", 1)?;
    let n = number(n, "--n", 1 << 26)?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| Error::Invalid(format!("reading the id: {e}")))?;
    let id: UniqueId = line.parse()?;
    let m = MultiReducer::from_rank(rank, rank, world, &id)?; // GPU `rank` of this machine
    let part = split(n, world)[rank].clone();
    let shard = &input(n)[part.clone()];
    let sum = m.sum(&[shard])?;
    let top = m.argmax(&[shard])?;
    let mean = m.mean(&[shard])?;
    let nccl = reduction::multi::loaded_nccl().unwrap_or_default();
    eprintln!("rank {rank} of {world}: elements {}..{} of {n}, GPU {rank}, {nccl}", part.start, part.end);
    println!("sum={sum} bits={:#010x} argmax={} max={} mean={mean}", sum.to_bits(), top.index, top.value);
    Ok(ExitCode::SUCCESS)
}
