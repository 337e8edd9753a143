//! Reduce with operations and a type of your own (`my_kernels`), compiled
//! to PTX by `build.rs` and loaded beside the library's kernels. Checks each
//! result against a serial loop on the CPU; exits 3 on a mismatch, 1 on an
//! error (no GPU: the error says why).
use my_kernels::{AMinMax, AbsMax, Complex32, ComplexSum, CountAbove, MinMax, OWN_BLOCK};
use reduction::cudarc::driver::{LaunchConfig, PushKernelArg};
use reduction::{Error, Options, Ptx, Reducer};

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
    let opts = Options::default();
    let mut all_right = true;
    // odd sizes: the unaligned tail and a grid of one block are covered too
    for n in [1usize, 1000, (1 << 24) + 3] {
        let data: Vec<f32> = (0..n).map(|i| ((i as u64 * 2654435761) % 20001) as f32 / 10000.0 - 1.0).collect();
        let abs_max = r.reduce::<AbsMax, f32, _>(&[&data], &opts)?;
        let count = r.reduce::<CountAbove, f32, _>(&[&data], &opts)?;
        let range = r.reduce::<AMinMax, f32, _>(&[&data], &opts)?;
        let want_max = data.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let want_count = data.iter().filter(|&&x| x > CountAbove::THRESHOLD).count() as u64;
        let want_range = data.iter().fold(MinMax { min: f32::INFINITY, max: f32::NEG_INFINITY }, |m, &x| MinMax {
            min: m.min.min(x),
            max: m.max.max(x),
        });
        // complex numbers: the parts are the data and its reverse
        let complex: Vec<Complex32> =
            data.iter().zip(data.iter().rev()).map(|(&re, &im)| Complex32 { re, im }).collect();
        let sum = r.reduce::<ComplexSum, Complex32, _>(&[&complex], &opts)?;
        let want = complex.iter().fold((0.0f64, 0.0f64), |(re, im), c| (re + c.re as f64, im + c.im as f64));
        // a tree of f32 additions: within n·ε of the sum of magnitudes
        let bound = n as f64 * f32::EPSILON as f64 * complex.iter().map(|c| c.re.abs() as f64).sum::<f64>().max(1.0);
        let sum_right = (sum.re as f64 - want.0).abs() <= bound && (sum.im as f64 - want.1).abs() <= bound;
        println!(
            "n = {n}: max |x| = {abs_max} (CPU {want_max}); {count} above {} (CPU {want_count}); \
             min, max = {}, {} (CPU {}, {}); complex sum = {sum} (CPU {:.4}{:+.4}i)",
            CountAbove::THRESHOLD,
            range.min,
            range.max,
            want_range.min,
            want_range.max,
            want.0,
            want.1
        );
        all_right &= abs_max == want_max && count == want_count && range == want_range && sum_right;
    }
    // the operation's identity for no elements
    let empty = r.reduce::<AMinMax, f32, _>(&[&[][..]], &opts)?;
    all_right &= empty == MinMax { min: f32::INFINITY, max: f32::NEG_INFINITY };
    for valid in [OWN_BLOCK, 100, 1] {
        all_right &= own_kernel(&r, valid)?;
    }
    Ok(all_right)
}

/// `first_of_each_block_sum`, a kernel of our own on the device library,
/// launched with cudarc on the reducer's stream: small integers, so every
/// order of the additions gives the CPU's sum exactly.
fn own_kernel(r: &Reducer, valid: u32) -> reduction::Result<bool> {
    let n: u32 = 1_000_003;
    let data: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let grid = n.div_ceil(OWN_BLOCK);
    let want: f32 = data.chunks(OWN_BLOCK as usize).map(|b| b.iter().take(valid as usize).sum::<f32>()).sum();
    let stream = r.gpu().stream();
    let ptx = reduction::cudarc::nvrtc::Ptx::from_src(MINE);
    let module = stream.context().load_module(ptx).map_err(Error::from_driver("cuModuleLoadData"))?;
    let f = module.load_function("first_of_each_block_sum").map_err(Error::from_driver("cuModuleGetFunction"))?;
    let x = stream.clone_htod(&data).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    let mut partials = stream.alloc_zeros::<f32>(grid as usize).map_err(Error::from_driver("cuMemAlloc"))?;
    let mut ticket = stream.alloc_zeros::<u32>(1).map_err(Error::from_driver("cuMemAlloc"))?;
    let mut out = stream.clone_htod(&[f32::NAN]).map_err(Error::from_driver("cuMemcpyHtoD"))?; // poisoned
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (OWN_BLOCK, 1, 1), shared_mem_bytes: 32 * 4 + 4 };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&x).arg(&n).arg(&valid).arg(&mut partials).arg(&mut ticket).arg(&mut out);
    // SAFETY: the arguments are the kernel's, in its order; `partials` holds one value a block
    unsafe { launch.launch(cfg) }.map_err(Error::from_driver("cuLaunchKernel"))?;
    let got = stream.clone_dtoh(&out).map_err(Error::from_driver("cuMemcpyDtoH"))?[0];
    println!("our own kernel, the first {valid} of each block of {OWN_BLOCK}: {got} (CPU {want})");
    Ok(got == want)
}
