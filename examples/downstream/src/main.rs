use reduction::cudarc::driver::CudaSlice;
use reduction::{Error, Reducer};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}"); // one line, e.g. "no CUDA driver: libcuda.so could not be loaded ..."
        std::process::exit(1);
    }
}

fn run() -> Result<(), Error> {
    // No driver or no GPU: Err(Error::NoDriver / NoDevice), never a panic.
    let r = Reducer::new()?;

    // A host slice: copied to a device buffer the reducer keeps for reuse.
    let host: Vec<f32> = (0..100_000).map(|i| (i % 100) as f32).collect();
    let sum = r.sum(&host)?;
    println!("sum of {} floats on {}: {sum}", host.len(), r.gpu().info().name);
    assert_eq!(sum, 4_950_000.0);

    // A device buffer of your own (cudarc, re-exported by the library).
    let stream = r.gpu().stream();
    let values: Vec<u32> = (1..=1000).collect();
    let device: CudaSlice<u32> = stream.clone_htod(&values).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    let (total, max) = (r.sum(&device)?, r.max(&device)?);
    println!("sum and max of 1..=1000 on the device: {total}, {max}");
    assert_eq!((total, max), (500_500, 1000));
    Ok(())
}
