//! Reduce with operations of your own: `my_kernels::AbsMax` and
//! `CountAbove`, compiled to PTX by `build.rs` and loaded beside the
//! library's kernels. Checks each result against a serial loop; exits 1 on
//! a mismatch or an error (no GPU: the error says why).
use my_kernels::{AbsMax, CountAbove};
use reduction::{Options, Ptx, Reducer};

const MINE: &str = include_str!(concat!(env!("OUT_DIR"), "/my_kernels.ptx"));

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(3),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

fn run() -> reduction::Result<bool> {
    let r = Reducer::with_ptx(0, Ptx::embedded().with(Ptx::from_text(MINE, "my_kernels.ptx")))?;
    let n = (1 << 24) + 3;
    let data: Vec<f32> = (0..n).map(|i| ((i as u64 * 2654435761) % 20001) as f32 / 10000.0 - 1.0).collect();
    let opts = Options::default();
    let abs_max = r.reduce::<AbsMax, f32, _>(&[&data], &opts)?;
    let count = r.reduce::<CountAbove, f32, _>(&[&data], &opts)?;
    let want_max = data.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let want_count = data.iter().filter(|&&x| x > CountAbove::THRESHOLD).count() as u64;
    println!("max |x| = {abs_max} (CPU {want_max}); {count} elements above {} (CPU {want_count})", CountAbove::THRESHOLD);
    Ok(abs_max == want_max && count == want_count)
}
