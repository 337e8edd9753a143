//! The library API: float special values, huge inputs, scratch reuse, and
//! every error a user can cause, each a typed error and never a panic.
//!
//! Trials that need no GPU run everywhere (CI included); the others are
//! reported as ignored without a GPU.

mod common;

use common::{cpu_trial, ensure, gpu_trial, gpu_trial_alone, reducer};
use cudarc::driver::CudaSlice;
use libtest_mimic::Failed;
use reduction::{
    Element, Error, Finish, Max, Min, Op, Options, Ptx, Reducer, Sum,
    device::no_gpu_reason,
    op::ReduceOp,
    registry::{KERNELS, Kernel},
};
use testkit::data::{Pattern, generate};
use testkit::reference::Reference;

fn main() {
    let mut trials = vec![
        cpu_trial("errors::no_gpu_is_a_typed_error", no_gpu_is_a_typed_error),
        cpu_trial("errors::unknown_kernel", unknown_kernel),
        cpu_trial("errors::bad_block_sizes", bad_block_sizes),
        cpu_trial("errors::ptx_file_missing", ptx_file_missing),
        cpu_trial("errors::ptx_without_the_entry", ptx_without_the_entry),
        gpu_trial("errors::entry_missing_at_launch", entry_missing_at_launch),
        gpu_trial("errors::block_checked_before_launch", block_checked_before_launch),
        gpu_trial("api::a_prefix_of_a_device_buffer", a_prefix_of_a_device_buffer),
        gpu_trial("api::every_input_meets_every_output", every_input_meets_every_output),
        gpu_trial("errors::misaligned_input", misaligned_input),
        gpu_trial_alone("errors::out_of_device_memory", out_of_device_memory),
        gpu_trial("api::cpu_finish_with_the_default_kernel", cpu_finish_with_the_default_kernel),
        gpu_trial("faults::driver_error_leaves_reducer_usable", driver_error_leaves_reducer_usable),
        gpu_trial("api::host_and_device_inputs", host_and_device_inputs),
        gpu_trial("api::empty_inputs_give_the_identity", empty_inputs_give_the_identity),
        gpu_trial("api::scratch_is_reused", scratch_is_reused),
        gpu_trial("api::any_alignment_for_single_pass", any_alignment_for_single_pass),
        gpu_trial("api::max_grid_caps_the_grid", max_grid_caps_the_grid),
        gpu_trial("api::reduce_into_leaves_the_result_on_the_device", reduce_into_device),
        gpu_trial_alone("api::more_than_2_pow_31_elements", more_than_2_pow_31_elements),
    ];
    trials.push(gpu_trial("floats::special_values_f32", special_values::<f32>));
    trials.push(gpu_trial("floats::special_values_f64", special_values::<f64>));
    common::run(trials)
}

// ---- errors that need no GPU -------------------------------------------------

fn no_gpu_is_a_typed_error() -> Result<(), Failed> {
    match (no_gpu_reason(), Reducer::new()) {
        (Some(_), Err(Error::NoDriver | Error::NoDevice { .. })) => Ok(()),
        (None, Ok(_)) => Ok(()),
        (reason, result) => Err(format!("no_gpu_reason {reason:?} but Reducer::new() gave {result:?}").into()),
    }
}

fn unknown_kernel() -> Result<(), Failed> {
    let err = Kernel::find("reduce0").err().ok_or("reduce0 was found")?;
    ensure(matches!(&err, Error::UnknownKernel { name, .. } if name == "reduce0"), || format!("{err:?}"))?;
    ensure(err.to_string().contains("reduce1, reduce2"), || format!("the valid ids are not listed: {err}"))
}

fn bad_block_sizes() -> Result<(), Failed> {
    let cases = [
        ("reduce3", 100, "not a power of two"),
        ("reduce3", 2048, "more than 1024"),
        ("reduce3", 16, "too small"),
        ("reduce5", 32, "too small"),
        ("reduce7", 0, "not a power of two"),
    ];
    for (id, block, why) in cases {
        let err = Kernel::find(id)?.check_block(block).err().ok_or(format!("{id} accepted block {block}"))?;
        ensure(matches!(err, Error::Unsupported { .. }) && err.to_string().contains(why), || {
            format!("{id} block {block}: {err}")
        })?;
    }
    Ok(())
}

fn ptx_file_missing() -> Result<(), Failed> {
    let err = Ptx::from_file("/no/such/gpu.ptx").err().ok_or("a missing file was read")?;
    ensure(matches!(&err, Error::PtxMissing { path, .. } if path == "/no/such/gpu.ptx"), || format!("{err:?}"))
}

/// A PTX module with only `reduce3_sum_i32`.
fn ptx_with_only_reduce3() -> Result<Ptx, Failed> {
    Ok(Ptx::from_text(Ptx::embedded().module_for("reduce3_sum_i32")?, "reduce3 only"))
}

fn ptx_without_the_entry() -> Result<(), Failed> {
    let err = ptx_with_only_reduce3()?.module_for("reduce4_sum_i32").err().ok_or("found an entry that is not there")?;
    ensure(
        matches!(&err, Error::MissingEntry { entry, ptx } if entry == "reduce4_sum_i32" && ptx == "reduce3 only"),
        || format!("{err:?}"),
    )
}

// ---- errors on the GPU -------------------------------------------------------

fn entry_missing_at_launch() -> Result<(), Failed> {
    let r = Reducer::with_ptx(0, ptx_with_only_reduce3()?)?;
    let data = vec![1i32; 1000];
    let reduce3 =
        Options { kernel: Some(Kernel::find("reduce3")?), block: Some(128), finish: Finish::Gpu, ..Options::default() };
    ensure(r.reduce::<Sum, _, _>(&[&data], &reduce3)? == 1000, || "reduce3 from the small PTX".into())?;
    let err = r.sum(&data).err().ok_or("the default kernel ran from a PTX that lacks it")?;
    ensure(matches!(&err, Error::MissingEntry { entry, .. } if entry.starts_with("single_pass_b256_sum_i32")), || {
        format!("{err:?}")
    })
}

fn block_checked_before_launch() -> Result<(), Failed> {
    let r = reducer();
    let data = vec![1u32; 100];
    for (id, block) in [("reduce5", 32), ("reduce1", 96), ("reduce7", 4096)] {
        let opts =
            Options { kernel: Some(Kernel::find(id)?), block: Some(block), finish: Finish::Gpu, ..Options::default() };
        let err = r.reduce::<Sum, _, _>(&[&data], &opts).err().ok_or(format!("{id} ran with block {block}"))?;
        ensure(matches!(err, Error::Unsupported { .. }), || format!("{id} block {block}: {err:?}"))?;
    }
    Ok(())
}

/// A part of a device buffer is a view of it (cudarc's `try_slice` says
/// no to a range past its end: nothing is read there).
fn a_prefix_of_a_device_buffer() -> Result<(), Failed> {
    let r = reducer();
    let buf = r.gpu().stream().clone_htod(&[1i64, 2, 3, 4])?;
    ensure(r.reduce::<Sum, i64, _>(&[&buf.slice(..3)], &Options::default())? == 6, || "prefix of 3".into())?;
    ensure(r.sum(&buf.slice(1..))? == 9, || "suffix of 3".into())?;
    ensure(buf.try_slice(..5).is_none(), || "a view past the end".into())
}

/// Every input (host slice, array, `Vec`, device buffer or view) with every
/// destination (host, device), for flat, shaped and by-key reductions; a
/// CPU finish of operations that are not plain; nothing to reduce into a
/// device buffer; a teaching kernel refused an operation it lacks.
fn every_input_meets_every_output() -> Result<(), Failed> {
    use reduction::op::{Arg, ArgMax, Dot, Mean};
    use reduction::shape::{Matrix, Shape};
    let r = reducer();
    let stream = r.gpu().stream();
    let host: Vec<f32> = (0..10_000).map(|i| (i % 97) as f32 - 48.0).collect();
    let dev = stream.clone_htod(&host)?;
    let want = host.iter().map(|&x| x as f64).sum::<f64>() as f32;
    let auto = Options::default();
    // flat: host or device in, host out
    for got in [r.sum(&host)?, r.sum(&host[..])?, r.sum(&dev)?, r.sum(&dev.as_view())?] {
        ensure(got == want, || format!("sum {got}, CPU {want}"))?;
    }
    ensure(r.sum(&[1u32, 2, 3])? == 6, || "an array".into())?;
    // flat: host or device in, device out (poisoned first)
    let mut out = stream.clone_htod(&[f32::NAN])?;
    r.reduce_into::<Sum, f32, _>(&[&host], &mut out.as_view_mut(), &auto)?;
    ensure(stream.clone_dtoh(&out)?[0] == want, || "host in, device out".into())?;
    stream.memcpy_htod(&[f32::NAN], &mut out)?;
    r.reduce_into::<Sum, f32, _>(&[&dev], &mut out.as_view_mut(), &auto)?;
    ensure(stream.clone_dtoh(&out)?[0] == want, || "device in, device out".into())?;
    // nothing to reduce: the identity's result, or Empty for arg-max
    stream.memcpy_htod(&[f32::NAN], &mut out)?;
    r.reduce_into::<Sum, f32, _>(&[&[0f32; 0]], &mut out.as_view_mut(), &auto)?;
    ensure(stream.clone_dtoh(&out)?[0] == 0.0, || "an empty sum into a device buffer".into())?;
    let mut bytes = stream.alloc_zeros::<u8>(size_of::<Arg<f32>>())?;
    // SAFETY: every bit pattern is an Arg<f32>; the allocation is aligned
    let mut best = unsafe { bytes.transmute_mut::<Arg<f32>>(1) }.ok_or("view as Arg")?;
    let e = r.reduce_into::<ArgMax, f32, _>(&[&[0f32; 0]], &mut best, &auto);
    ensure(matches!(e, Err(Error::Empty { .. })), || format!("{e:?}"))?;
    // a CPU finish for any operation gives the GPU finish's result
    let cpu = Options { finish: Finish::Cpu, ..auto };
    let (gpu_best, cpu_best) =
        (r.reduce::<ArgMax, f32, _>(&[&dev], &auto)?, r.reduce::<ArgMax, f32, _>(&[&dev], &cpu)?);
    ensure(gpu_best.index == cpu_best.index && cpu_best.index == 96, || format!("{gpu_best:?} {cpu_best:?}"))?;
    let (gpu_mean, cpu_mean) = (r.reduce::<Mean, f32, _>(&[&host], &auto)?, r.reduce::<Mean, f32, _>(&[&host], &cpu)?);
    ensure((gpu_mean - cpu_mean).abs() < 1e-4, || format!("mean {gpu_mean} {cpu_mean}"))?;
    let dot = r.reduce::<Dot, f32, _>(&[&dev, &dev], &cpu)?;
    let want_dot = host.iter().map(|&x| (x * x) as f64).sum::<f64>() as f32;
    ensure(dot == want_dot, || format!("dot {dot}, CPU {want_dot}"))?;
    // a teaching kernel takes plain operators only: refused before any launch
    let teaching = Options { kernel: Some(Kernel::find("reduce4")?), ..auto };
    let e = r.reduce::<Dot, f32, _>(&[&dev, &dev], &teaching);
    ensure(matches!(e, Err(Error::Unsupported { .. })), || format!("{e:?}"))?;
    // shaped: host in, device out
    let rows = Shape::Rows(Matrix::new(100, 100));
    let mut sums = stream.clone_htod(&vec![f32::NAN; 100])?;
    r.reduce_shaped_into::<Sum, f32, _>(&[&host], rows, &mut sums.as_view_mut(), &auto)?;
    let on_host = r.reduce_shaped::<Sum, f32, _>(&[&dev], rows, &auto)?;
    ensure(stream.clone_dtoh(&sums)? == on_host, || "shaped: host in, device out".into())?;
    // by key: device keys with host values, sums on the device
    let keys: Vec<u32> = (0..host.len() as u32).map(|i| i % 7).collect();
    let d_keys = stream.clone_htod(&keys)?;
    let values: Vec<f64> = host.iter().map(|&x| x as f64).collect();
    let mut by_key = stream.clone_htod(&[f64::NAN; 7])?;
    r.reduce_by_key_into(&d_keys, &values, &mut by_key.as_view_mut(), 7, &auto)?;
    let on_host = r.reduce_by_key(&keys, &values, 7, &auto)?;
    ensure(stream.clone_dtoh(&by_key)? == on_host, || "by key: mixed inputs, device out".into())
}

fn misaligned_input() -> Result<(), Failed> {
    let r = reducer();
    let host: Vec<i32> = (1..=4096).collect();
    let buf = r.gpu().stream().clone_htod(&host)?;
    let vectorized = Options {
        kernel: Some(Kernel::find("vectorized")?),
        block: Some(256),
        finish: Finish::Gpu,
        ..Options::default()
    };
    ensure(r.reduce::<Sum, _, _>(&[&buf], &vectorized)? == 4096 * 4097 / 2, || "aligned input".into())?;
    let offset = buf.slice(1..);
    let err = r.reduce::<Sum, i32, _>(&[&offset], &vectorized).err().ok_or("vectorized read a misaligned view")?;
    ensure(matches!(&err, Error::Misaligned { kernel, align: 16, .. } if kernel == "vectorized"), || format!("{err:?}"))
}

fn out_of_device_memory() -> Result<(), Failed> {
    // A fresh reducer, so that its scratch buffers are allocated while the
    // card is full.
    let r = Reducer::new()?;
    let (free, _) = r.gpu().mem_info()?;
    // Leave 64 MiB: too little for the 256 MiB input copied from the host.
    let filler = r.gpu().alloc::<u8>(free.saturating_sub(64 << 20), "the filler")?;
    let data = vec![1i32; 64 << 20];
    let err = r.sum(&data).err().ok_or("a 256 MiB input fitted in 64 MiB")?;
    ensure(matches!(err, Error::OutOfMemory { bytes, .. } if bytes == 256 << 20), || format!("{err:?}"))?;
    drop(filler);
    ensure(r.sum(&data)? == 64 << 20, || "the reducer does not work after running out of memory".into())?;
    // a length whose bytes overflow: refused, not a buffer of the wrapped size
    let err = r.gpu().alloc::<u64>((1 << 61) + 1, "a length past usize").err().ok_or("2^64 + 8 bytes allocated")?;
    ensure(matches!(err, Error::OutOfMemory { bytes: usize::MAX, .. }), || format!("{err:?}"))
}

/// `Options { finish: Finish::Cpu, ..Default::default() }` works with the
/// default kernel: its per-block partials are folded on the host (exact
/// data, so exactly the CPU's sum), at every size class.
fn cpu_finish_with_the_default_kernel() -> Result<(), Failed> {
    let cpu = Options { finish: Finish::Cpu, ..Options::default() };
    for n in [1, 1000, 100_003, (1 << 25) + 3] {
        let data: Vec<f32> = generate(Pattern::Large, n, 17)?;
        let expected = f32::reference(Op::Sum, &data);
        let got = reducer().reduce::<Sum, _, _>(&[&data], &cpu)?;
        ensure(got == expected, || format!("n={n}: GPU {got}, CPU {expected}"))?;
        let explicit = Options {
            kernel: Some(Kernel::find("single_pass")?),
            block: Some(1024),
            finish: Finish::Cpu,
            ..Options::default()
        };
        let got = reducer().reduce::<Sum, _, _>(&[&data], &explicit)?;
        ensure(got == expected, || format!("single_pass b1024 n={n}: GPU {got}, CPU {expected}"))?;
    }
    Ok(())
}

/// A launch the driver refuses: reduce3 given 48768 bytes of static shared
/// memory, so that 128 threads' dynamic 512 bytes pass the 48 KiB a block
/// may have without opting in (64 threads' 256 bytes do not). The error is
/// typed, names the kernel and shape, and the same reducer works
/// afterwards. And a block its registers or `.maxntid` do not allow is
/// refused before any launch (`reduction::dispatch`).
fn driver_error_leaves_reducer_usable() -> Result<(), Failed> {
    let one = Ptx::embedded().module_for("reduce3_sum_i32")?;
    let (head, entry) = one.split_once(".visible .entry reduce3_sum_i32(").ok_or("no reduce3 entry")?;
    // the module with `module_scope` before the entry, `in_body` at its opening, `after_tid` after
    // its first `%tid.x` read
    let with = |module_scope: &str, in_body: &str, after_tid: &str| {
        let e = entry.replacen("\n{\n", &format!("\n{in_body}\n{{\n"), 1); // the entry's body opens
        let e = e.replacen("%tid.x;\n", &format!("%tid.x;\n{after_tid}"), 1);
        format!("{head}{module_scope}.visible .entry reduce3_sum_i32({e}")
    };
    // a store keeps the array
    let big = with(".shared .align 4 .b8 planted[48768];\n", "", "\tst.shared.b32 \t[planted], 0;\n");
    ensure(big.contains("[planted], 0"), || "could not plant the array".into())?;
    let r = Reducer::with_ptx(0, Ptx::from_text(big, "reduce3 with 48768 bytes of static shared memory"))?;
    let data = vec![2i32; 10_000];
    let opts = |block| Options {
        kernel: Some(Kernel::find("reduce3").unwrap()),
        block: Some(block),
        finish: Finish::Gpu,
        ..Options::default()
    };
    let err = r.reduce::<Sum, _, _>(&[&data], &opts(128)).err().ok_or("the driver launched 128 threads")?;
    ensure(matches!(&err, Error::Launch { entry, block: 128, .. } if entry == "reduce3_sum_i32"), || {
        format!("{err:?}")
    })?;
    let narrow = with("", ".maxntid 64, 1, 1", "");
    let r64 = Reducer::with_ptx(0, Ptx::from_text(narrow, "reduce3 with .maxntid 64"))?;
    let err = r64.reduce::<Sum, _, _>(&[&data], &opts(128)).err().ok_or("128 threads of a .maxntid 64 entry")?;
    ensure(matches!(&err, Error::Unsupported { .. }) && err.to_string().contains("at most 64 threads"), || {
        format!("{err:?}")
    })?;
    ensure(r.reduce::<Sum, _, _>(&[&data], &opts(64))? == 20_000, || "not usable after the error".into())?;
    ensure(reducer().sum(&data)? == 20_000, || "the shared reducer".into())
}

// ---- the API -----------------------------------------------------------------

fn host_and_device_inputs() -> Result<(), Failed> {
    let r = reducer();
    let host: Vec<f64> = (0..1000).map(f64::from).collect();
    ensure(r.sum(&host)? == 499_500.0, || "host Vec".into())?;
    ensure(r.sum(&host[10..20])? == 145.0, || "host slice".into())?;
    let dev: CudaSlice<f64> = r.gpu().stream().clone_htod(&host)?;
    ensure(r.reduce::<Max, _, _>(&[&dev], &Options::default())? == 999.0, || "device slice".into())?;
    ensure(r.reduce::<Min, _, _>(&[&dev.slice(5..)], &Options::default())? == 5.0, || "device view".into())?;
    ensure(r.min(&vec![3u64, 1, 2])? == 1 && r.max(&vec![-3i64, -1])? == -1, || "min/max".into())
}

fn empty_inputs_give_the_identity() -> Result<(), Failed> {
    let r = reducer();
    ensure(r.sum::<i32, _>(&Vec::new())? == 0, || "sum".into())?;
    ensure(r.min::<u32, _>(&Vec::new())? == u32::MAX, || "min".into())?;
    ensure(r.max::<f32, _>(&Vec::new())? == f32::NEG_INFINITY, || "max".into())?;
    let dev = r.gpu().stream().clone_htod(&[1.0f64])?;
    ensure(r.sum(&dev.slice(1..))? == 0.0, || "empty device view".into())
}

fn scratch_is_reused() -> Result<(), Failed> {
    let r = Reducer::new()?;
    let data: Vec<f32> = generate(Pattern::Random, 1 << 20, 3)?;
    let dev = r.gpu().stream().clone_htod(&data)?;
    let first = r.sum(&dev)?;
    let reduce4 = Options { kernel: Some(Kernel::find("reduce4")?), ..Options::default() };
    r.reduce::<Sum, _, _>(&[&dev], &reduce4)?;
    r.sum(&data)?; // the host path's staging buffer
    let before = r.gpu().allocations();
    for _ in 0..100 {
        ensure(r.sum(&dev)? == first, || "the result changed between calls".into())?;
        r.reduce::<Sum, _, _>(&[&dev.slice(..1000)], &reduce4)?;
        r.sum(&data[..5000])?;
    }
    let after = r.gpu().allocations();
    ensure(after == before, || format!("{} device allocations in 300 calls after the first", after - before))
}

/// `Options::max_grid` caps the blocks of grid-stride kernels (a smaller GPU
/// in effect) and the sums stay exact; other kernels ignore it.
fn max_grid_caps_the_grid() -> Result<(), Failed> {
    let r = reducer();
    let n = (1 << 22) + 5;
    let host: Vec<f32> = generate(Pattern::Large, n, 23)?;
    let expected = f32::reference(Op::Sum, &host);
    let dev = r.gpu().stream().clone_htod(&host)?;
    for id in ["reduce7", "single_pass", "reduce3"] {
        let k = Kernel::find(id)?;
        for cap in [1, 7, 66, 132, 264] {
            let capped = Options { kernel: Some(k), block: Some(256), max_grid: Some(cap), ..Options::default() };
            let levels = r.plan::<Sum, f32>(n, &capped)?.levels;
            let grid = levels[0].launches[0].grid;
            let want = if k.scheme.grid_stride() { cap } else { levels[0].outputs as u32 };
            ensure(grid == want, || format!("{id} cap {cap}: grid {grid}, want {want}"))?;
            let opts = Options { kernel: Some(k), block: Some(256), max_grid: Some(cap), ..Options::default() };
            let got = r.reduce::<Sum, _, _>(&[&dev], &opts)?;
            ensure(got == expected, || format!("{id} cap {cap}: GPU {got}, CPU {expected}"))?;
        }
    }
    Ok(())
}

fn any_alignment_for_single_pass() -> Result<(), Failed> {
    let r = reducer();
    let host: Vec<i32> = generate(Pattern::Random, 100_000, 11)?;
    let dev = r.gpu().stream().clone_htod(&host)?;
    for offset in 0..5 {
        for n in [0usize, 1, 2, 3, 4, 5, 7, 64, 1000, 99_990] {
            let expected = i32::reference(Op::Sum, &host[offset..offset + n]);
            let got = r.sum(&dev.slice(offset..offset + n))?;
            ensure(got == expected, || format!("offset {offset} n {n}: GPU {got}, CPU {expected}"))?;
        }
    }
    Ok(())
}

fn reduce_into_device() -> Result<(), Failed> {
    let r = reducer();
    let stream = r.gpu().stream();
    let data = stream.clone_htod(&vec![3u32; 12345])?;
    let mut out = stream.clone_htod(&[0xdead_beefu32, 7])?; // poisoned
    r.reduce_into::<Sum, u32, _>(&[&data.as_view()], &mut out.as_view_mut(), &Options::default())?;
    let host = stream.clone_dtoh(&out)?;
    ensure(host == [37035, 7], || format!("{host:?}"))
}

/// 2^31 + 17 `i32` (8 GiB): beyond `i32` indexing; single-pass indexes with
/// 64 bits, the multi-pass kernels split the input into 2^31-element launches.
fn more_than_2_pow_31_elements() -> Result<(), Failed> {
    let r = reducer();
    let n = (1usize << 31) + 17;
    let host: Vec<i32> = generate(Pattern::Random, n, 31)?;
    let expected = i32::reference(Op::Sum, &host);
    let dev = r.gpu().stream().clone_htod(&host)?;
    for id in ["single_pass", "reduce4", "reduce7", "vectorized"] {
        let opts =
            Options { kernel: Some(Kernel::find(id)?), block: Some(256), finish: Finish::Gpu, ..Options::default() };
        let got = r.reduce::<Sum, _, _>(&[&dev], &opts)?;
        ensure(got == expected, || format!("{id}: GPU {got}, CPU {expected}"))?;
    }
    let got = r.sum(&host)?; // through the host staging buffer
    ensure(got == expected, || format!("host input: GPU {got}, CPU {expected}"))
}

// ---- floats: NaN, infinities, signed zeros ----------------------------------

/// For every kernel: NaN anywhere gives NaN (sum, min, max); +inf with
/// finite values sums to +inf, +inf with -inf to NaN; min of zeros is -0.0
/// as soon as one is negative, max is +0.0 as soon as one is positive.
fn special_values<T: Element + Reference + num::Float>() -> Result<(), Failed>
where
    Sum: ReduceOp<T>,
    Min: ReduceOp<T>,
    Max: ReduceOp<T>,
{
    let r = reducer();
    let n = (1 << 16) + 3;
    for kernel in KERNELS {
        let opts = Options { kernel: Some(kernel), block: Some(256), finish: Finish::Gpu, ..Options::default() };
        let case = |what: &str| format!("{} {}: {what}", kernel.id, T::NAME);
        for pos in [0, 1, n / 2, n - 1] {
            let mut v = vec![T::one(); n];
            v[pos] = T::nan();
            ensure(r.reduce::<Sum, _, _>(&[&v], &opts)?.is_nan(), || case(&format!("sum with NaN at {pos}")))?;
            ensure(r.reduce::<Min, _, _>(&[&v], &opts)?.is_nan(), || case(&format!("min with NaN at {pos}")))?;
            ensure(r.reduce::<Max, _, _>(&[&v], &opts)?.is_nan(), || case(&format!("max with NaN at {pos}")))?;

            let mut v = vec![T::one(); n];
            v[pos] = T::infinity();
            ensure(r.reduce::<Sum, _, _>(&[&v], &opts)? == T::infinity(), || case("sum with +inf"))?;
            ensure(r.reduce::<Max, _, _>(&[&v], &opts)? == T::infinity(), || case("max with +inf"))?;
            v[(pos + 7) % n] = T::neg_infinity();
            ensure(r.reduce::<Sum, _, _>(&[&v], &opts)?.is_nan(), || case("sum of +inf and -inf"))?;
            ensure(r.reduce::<Min, _, _>(&[&v], &opts)? == T::neg_infinity(), || case("min with -inf"))?;

            let mut v = vec![T::zero(); n];
            v[pos] = T::neg_zero();
            let min = r.reduce::<Min, _, _>(&[&v], &opts)?;
            ensure(min == T::zero() && min.is_sign_negative(), || case("min(+0, ..., -0) is -0"))?;
            let max = r.reduce::<Max, _, _>(&[&v], &opts)?;
            ensure(max == T::zero() && max.is_sign_positive(), || case("max(+0, ..., -0) is +0"))?;
            let mut v = vec![T::neg_zero(); n];
            v[pos] = T::zero();
            let max = r.reduce::<Max, _, _>(&[&v], &opts)?;
            ensure(max.is_sign_positive(), || case("max(-0, ..., +0) is +0"))?;
            let min = r.reduce::<Min, _, _>(&[&v], &opts)?;
            ensure(min.is_sign_negative(), || case("min(-0, ..., +0) is -0"))?;
        }
    }
    Ok(())
}

/// The few float operations the special-value trial needs, for f32 and f64.
mod num {
    pub trait Float: Copy + PartialEq {
        fn one() -> Self;
        fn zero() -> Self;
        fn neg_zero() -> Self;
        fn nan() -> Self;
        fn infinity() -> Self;
        fn neg_infinity() -> Self;
        fn is_nan(self) -> bool;
        fn is_sign_negative(self) -> bool;
        fn is_sign_positive(self) -> bool;
    }
    macro_rules! float {
        ($($t:ident)*) => {$(
            impl Float for $t {
                fn one() -> Self { 1.0 }
                fn zero() -> Self { 0.0 }
                fn neg_zero() -> Self { -0.0 }
                fn nan() -> Self { $t::NAN }
                fn infinity() -> Self { $t::INFINITY }
                fn neg_infinity() -> Self { $t::NEG_INFINITY }
                fn is_nan(self) -> bool { $t::is_nan(self) }
                fn is_sign_negative(self) -> bool { $t::is_sign_negative(self) }
                fn is_sign_positive(self) -> bool { $t::is_sign_positive(self) }
            }
        )*};
    }
    float!(f32 f64);
}
