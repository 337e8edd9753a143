//! Soak: 10 000 reductions of mixed sizes, element types, operators,
//! kernels and input kinds (host slices, device slices, device views at odd
//! offsets) in one process. Every result must match the CPU, and device
//! memory in use (and the number of device allocations) must be the same
//! after as before: a reducer that has seen its largest input allocates
//! nothing more and frees nothing it should keep.

mod common;

use common::{ensure, gpu_trial_alone};
use libtest_mimic::Failed;
use reduction::{DType, Element, Finish, Op, Options, Reducer, op::ReduceOp, registry::KERNELS};
use testkit::data::{Pattern, Sample, generate, splitmix64};
use testkit::reference::Reference;
use testkit::{chain_depth, tolerance};
use testkit::{with_op, with_plain_dtype};

const REDUCTIONS: usize = 10_000;
const LARGEST: usize = 1 << 20;

/// A size from the soak's mix: mostly small, some medium, a few large.
fn size(r: u64) -> usize {
    match r % 20 {
        0 => (r as usize >> 8) % LARGEST + 1,
        1..=5 => (r as usize >> 8) % (1 << 16) + 1,
        _ => (r as usize >> 8) % 4096,
    }
}

/// Per element type: an input of the largest size, on the host and device.
struct Pool<T> {
    host: Vec<T>,
    device: cudarc::driver::CudaSlice<T>,
}

fn pool<T: Element + Sample>(r: &Reducer) -> Result<Pool<T>, Failed> {
    let host: Vec<T> = generate(Pattern::Random, LARGEST + 8, 5)?;
    let device = r.gpu().stream().clone_htod(&host)?;
    Ok(Pool { host, device })
}

/// One reduction, drawn from `rnd`: operator `O` over `pool[offset..offset + n]`.
fn one<O: ReduceOp<T>, T: Element + Reference>(r: &Reducer, pool: &Pool<T>, rnd: u64) -> Result<(), Failed> {
    let n = size(rnd);
    let choice = (rnd >> 44) as usize % (KERNELS.len() + 1); // KERNELS.len(): the default kernel
    let opts = match KERNELS.get(choice) {
        None => Options::default(),
        Some(k) => {
            let block = k.block_sizes().nth((rnd >> 48) as usize % k.block_sizes().count()).unwrap_or(k.min_block);
            Options { kernel: Some(k), block: Some(block), ..Options::default() }
        }
    };
    // `vectorized` needs 16-byte aligned input: give it offset 0.
    let offset = if opts.kernel.is_some_and(|k| k.align > 0) { 0 } else { (rnd >> 40) as usize % 8 };
    let host = &pool.host[offset..offset + n];
    let op = testkit::op_of::<O, T>()?;
    let expected = T::reference(op, host);
    let plan = r.plan::<O, T>(n, &opts)?;
    let (kernel, block) = (plan.kernel, plan.block);
    let chain = chain_depth::<O, T>(r, kernel, block, Finish::Gpu, n)?;
    let got = if (rnd >> 52).is_multiple_of(2) {
        r.reduce::<O, T, _>(&[host], &opts)?
    } else {
        r.reduce::<O, T, _>(&[&pool.device.slice(offset..offset + n)], &opts)?
    };
    ensure(T::matches(op, got, expected, tolerance::<T>(chain, T::abs_sum(host))), || {
        format!(
            "{} block {block} {} {} n={n} offset={offset}: GPU {got:?}, CPU {expected:?}",
            kernel.id,
            O::NAME,
            T::NAME
        )
    })
}

fn soak() -> Result<(), Failed> {
    let r = Reducer::new()?;
    let pools =
        (pool::<i32>(&r)?, pool::<u32>(&r)?, pool::<i64>(&r)?, pool::<u64>(&r)?, pool::<f32>(&r)?, pool::<f64>(&r)?);
    let run = |i: usize| -> Result<(), Failed> {
        let rnd = splitmix64(i as u64);
        let dtype = DType::PRIMITIVE[(rnd >> 4) as usize % 6];
        let op = Op::PLAIN[(rnd >> 12) as usize % 3];
        with_plain_dtype!(dtype, |T| with_op!(op, |O| {
            let pool = match dtype {
                DType::I32 => (&pools.0 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::U32 => (&pools.1 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::I64 => (&pools.2 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::U64 => (&pools.3 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::F32 => (&pools.4 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::F64 => (&pools.5 as &dyn std::any::Any).downcast_ref::<Pool<T>>(),
                DType::F16 | DType::BF16 => None,
            };
            one::<O, T>(&r, pool.ok_or("pool of the wrong type")?, rnd)
        }, else Err("plain".into())), else Err("plain".into()))
    };
    // Warm up: every type's scratch grown to the largest input (host path
    // too), and every kernel entry loaded once (a loaded module holds device
    // memory for its code).
    for &dtype in DType::PRIMITIVE {
        for &op in Op::PLAIN {
            with_plain_dtype!(dtype, |T| with_op!(op, |O| {
                let big = vec![T::default(); LARGEST + 8];
                r.reduce::<O, T, _>(&[&big], &Options::default())?;
                for k in KERNELS {
                    for block in k.block_sizes() {
                        let opts = Options { kernel: Some(k), block: Some(block), ..Options::default() };
                        r.reduce::<O, T, _>(&[&big], &opts)?;
                    }
                }
            }, else {}), else {});
        }
    }
    r.gpu().synchronize()?;
    let (free_before, _) = r.gpu().mem_info()?;
    let allocations_before = r.gpu().allocations();
    for i in 0..REDUCTIONS {
        run(i).map_err(|e| format!("reduction {i}: {}", e.message().unwrap_or("failed")))?;
    }
    r.gpu().synchronize()?;
    let (free_after, _) = r.gpu().mem_info()?;
    let allocations = r.gpu().allocations() - allocations_before;
    ensure(allocations == 0, || format!("{allocations} device allocations during the soak"))?;
    ensure(free_after == free_before, || format!("free device memory {free_before} B before, {free_after} B after"))
}

fn main() {
    common::run(vec![gpu_trial_alone("soak::ten_thousand_reductions", soak)])
}
