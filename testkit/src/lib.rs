//! The reduction library's test kit: what its tests, the `reduce` command's
//! `check` and the benchmarks share to trust a reduction. Not needed to
//! reduce, so apart from the library (`reduction`), whose users' dependency
//! graphs hold none of it.
//!
//! * [`reference`](mod@reference): the serial CPU reference, written independently of the
//!   kernels' operators;
//! * [`data`]: seeded inputs, the same on every machine, never all zeros;
//! * [`verify`]: one kernel at one block size on one input, against the
//!   reference, exactly where the data sums exactly and within the plan's
//!   error bound ([`tolerance`]) otherwise;
//! * [`ops`]: references for arg-min/max, the transforms and the half types,
//!   and [`op_depth`], the chain length in their error bound;
//! * [`by_key`]: the same for reduction by key;
//! * [`exact`]: the exact sum (big fixed-point) the accurate sums are checked against;
//! * [`poisoned`]: a device result poisoned before the kernel writes it, read back;
//! * [`hold`]: the hold kernel's host side, which keeps the stream waiting
//!   while a benchmark queues its timed runs;
//! * [`dispatch`]: macros from a run-time type and operation
//!   (`--type bf16 --op argmax`) to a generic call ([`with_operation!`]).
//!
//! Float results are compared with the [`approx`] crate, within an error
//! bound derived from the launch plan (its chain of roundings), never a
//! fixed relative tolerance.
//!
//! ```no_run
//! use reduction::{Finish, Reducer, Sum, registry::Kernel};
//! use testkit::{CheckInput, data::Pattern, verify};
//! let r = Reducer::new()?;
//! let input = CheckInput::<f32>::new(&r, Pattern::Large, (1 << 25) + 3, 1)?;
//! let c = verify::<Sum, f32>(&r, Kernel::find("reduce7")?, 256, Finish::Gpu, &input)?;
//! assert!(c.ok, "GPU {}, CPU {}", c.got, c.expected); // compared exactly: Large sums exactly
//! # Ok::<(), reduction::Error>(())
//! ```

#![warn(missing_docs)]

/// The library this kit tests (the dispatch macros name its types through
/// this path, so a crate that calls them needs no `reduction` of its own).
pub use reduction;

pub mod by_key;
pub mod data;
pub mod dispatch;
pub mod exact;
pub mod hold;
pub mod ops;
pub mod poisoned;
pub mod reference;

use std::sync::Mutex;

use data::{Pattern, Sample, generate};
use reduction::cudarc::driver::CudaSlice;
use reduction::dispatch::depth;
use reduction::op::{ReduceOp, Reduction};
use reduction::{Element, Error, Finish, Op, Options, Reducer, Result, registry::Kernel};
use reference::Reference;

/// An input under test: its elements on the host, one copy on the device,
/// whether its float sums are exact, and the CPU references computed so far.
///
/// ```no_run
/// use reduction::{Op, Reducer};
/// use testkit::{CheckInput, data::Pattern};
/// let r = Reducer::new()?;
/// let input = CheckInput::<u32>::new(&r, Pattern::Ones, 1000, 0)?;
/// assert_eq!(input.reference(Op::Sum), (1000, 0.0)); // Σ|x| is 0 for integers
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct CheckInput<T> {
    /// The elements.
    pub host: Vec<T>,
    /// The elements on the device.
    pub device: CudaSlice<T>,
    /// Whether every sum of these elements, in any order a kernel takes, is
    /// exact, so that float sums are compared bit for bit.
    pub exact: bool,
    /// CPU references computed so far: operator, result, Σ|x|.
    references: Mutex<Vec<(Op, T, f64)>>,
}

impl<T: Element + Reference + Sample> CheckInput<T> {
    /// `n` elements of `pattern` for `seed`, uploaded once.
    ///
    /// ```no_run
    /// use reduction::Reducer;
    /// use testkit::{CheckInput, data::Pattern};
    /// let r = Reducer::new()?;
    /// let input = CheckInput::<i64>::new(&r, Pattern::Large, 1000, 3)?;
    /// assert_eq!(input.host.len(), 1000);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn new(reducer: &Reducer, pattern: Pattern, n: usize, seed: u64) -> Result<Self> {
        let host: Vec<T> = generate(pattern, n, seed)?;
        let gpu = reducer.gpu();
        let mut device = gpu.alloc::<T>(n, "the input")?;
        gpu.stream().memcpy_htod(&host, &mut device).map_err(Error::from_driver("cuMemcpyHtoD"))?;
        Ok(CheckInput::from_parts(host, device, pattern.sums_exactly()))
    }
}

impl<T: Element + Reference> CheckInput<T> {
    /// An input already on the device (`device` holds `host`).
    ///
    /// ```no_run
    /// use reduction::{Op, Reducer};
    /// use testkit::CheckInput;
    /// let r = Reducer::new()?;
    /// let host = vec![1i32, 2, 3];
    /// let device = r.gpu().stream().clone_htod(&host).unwrap();
    /// assert_eq!(CheckInput::from_parts(host, device, true).reference(Op::Sum), (6, 0.0));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn from_parts(host: Vec<T>, device: CudaSlice<T>, exact: bool) -> Self {
        CheckInput { host, device, exact, references: Mutex::default() }
    }

    /// The CPU reference for `op` and Σ|x|, computed once per input.
    ///
    /// ```no_run
    /// use reduction::{Op, Reducer};
    /// use testkit::{CheckInput, data::Pattern};
    /// let r = Reducer::new()?;
    /// let input = CheckInput::<u32>::new(&r, Pattern::Ones, 10, 0)?;
    /// assert_eq!(input.reference(Op::Max).0, 1);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reference(&self, op: Op) -> (T, f64) {
        let mut cache = self.references.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, r, abs)) = cache.iter().find(|(o, _, _)| *o == op) {
            return (r, abs);
        }
        let (r, abs) = (T::reference(op, &self.host), T::abs_sum(&self.host));
        cache.push((op, r, abs));
        (r, abs)
    }
}

/// One kernel's result on one input, against the CPU.
///
/// ```
/// use reduction::Op;
/// use testkit::Checked;
/// let c = Checked { kernel: "reduce1", block: 128, op: Op::Sum, ty: "i32", n: 3, got: "5".into(), expected: "6".into(), ok: false };
/// assert_eq!(c.mismatch().unwrap().to_string(), "reduce1 block 128 sum i32 n=3: GPU 5, CPU 6");
/// assert!(Checked { ok: true, ..c }.mismatch().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Checked {
    /// The kernel's registry id ([`Kernel::id`]), e.g. `reduce4`.
    pub kernel: &'static str,
    /// Threads per block.
    pub block: u32,
    /// The operator.
    pub op: Op,
    /// The element type's name.
    pub ty: &'static str,
    /// Elements reduced.
    pub n: usize,
    /// The GPU result, printed.
    pub got: String,
    /// The CPU reference result, printed.
    pub expected: String,
    /// Whether `got` matched `expected` (exactly for integers, min/max and
    /// inputs that sum exactly; within [`tolerance`] for other float sums).
    pub ok: bool,
}

impl Checked {
    /// The error to report when the check failed.
    pub fn mismatch(&self) -> Option<Error> {
        (!self.ok).then(|| Error::Mismatch {
            case: format!("{} block {} {} {} n={}", self.kernel, self.block, self.op.name(), self.ty, self.n),
            got: self.got.clone(),
            expected: self.expected.clone(),
        })
    }
}

/// The float tolerance for a result: `(depth + 1) · ε · Σ|x|` (see
/// [`depth`]); zero for integers.
///
/// ```
/// use testkit::tolerance;
/// // depth 2, Σ|x| = 3: (2 + 1) · ε · 3
/// assert_eq!(tolerance::<f32>(2, 3.0), 3.0 * f32::EPSILON as f64 * 3.0);
/// assert_eq!(tolerance::<i32>(2, 3.0), 0.0);
/// ```
pub fn tolerance<T: Reference>(depth: usize, abs_sum: f64) -> f64 {
    (depth + 1) as f64 * T::EPSILON * abs_sum
}

/// The longest chain of `combine`s in reducing `n` elements with `kernel`
/// at `block` threads on this device ([`depth`] of its launch plan), plus the
/// serial fold of the first level's partials when they finish on the CPU;
/// 0 for no elements. The `depth` in [`tolerance`].
///
/// ```no_run
/// use reduction::{Finish, Reducer, Sum, registry::Kernel};
/// use testkit::chain_depth;
/// let r = Reducer::new()?;
/// let k = Kernel::find("reduce3")?;
/// assert_eq!(chain_depth::<Sum, f32>(&r, k, 128, Finish::Gpu, 1 << 20)?, 3 * 7);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn chain_depth<O: ReduceOp<T>, T: Element>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    n: usize,
) -> Result<usize> {
    if n == 0 {
        return Ok(0);
    }
    let asked = Options { kernel: Some(kernel), block: Some(block), ..Options::default() };
    let levels = reducer.plan::<O, T>(n, &asked)?.levels;
    Ok(match finish {
        Finish::Gpu => depth(kernel, &levels, block),
        Finish::Cpu => {
            depth(kernel, &levels[..1], block) + levels[0].launches.iter().map(|l| l.grid as usize).sum::<usize>()
        }
    })
}

/// The longest chain of `combine`s when the default kernel runs operation
/// `R` on `n` elements with `opts` (the block and grid this device gives
/// it), for the error bound of [`tolerance`]; 0 for no elements.
///
/// ```no_run
/// use reduction::{Options, Reducer, op::Dot};
/// use testkit::op_depth;
/// let r = Reducer::new()?;
/// assert!(op_depth::<Dot, f32>(&r, 1 << 20, &Options::default())? > 8);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn op_depth<R: Reduction<T>, T: Element>(reducer: &Reducer, n: usize, opts: &Options) -> Result<usize> {
    if n == 0 {
        return Ok(0);
    }
    let plan = reducer.plan::<R, T>(n, opts)?;
    Ok(depth(plan.kernel, &plan.levels, plan.block))
}

/// `T` as one of the library's element types (the tests' types all are).
pub fn dtype<T: Element>() -> reduction::DType {
    match reduction::DType::of::<T>() {
        Some(t) => t,
        None => panic!("{} is not one of the library's element types", T::NAME),
    }
}

/// The library operation `R` is ([`Op::from_name`] of its name), or
/// [`Error::Invalid`] for an operation of the user's own.
///
/// ```
/// assert_eq!(testkit::op_of::<reduction::Max, u32>().unwrap(), reduction::Op::Max);
/// ```
pub fn op_of<R: Reduction<T>, T>() -> Result<Op> {
    Op::from_name(R::NAME).ok_or_else(|| Error::Invalid(format!("{} is not an operation of the library", R::NAME)))
}

/// Check `kernel` once against the CPU reference, finishing as `finish`
/// says. Float sums of an [exact](CheckInput::exact) input must match bit
/// for bit; other float sums within [`tolerance`] of the plan's depth.
///
/// ```no_run
/// use reduction::{Finish, Max, Reducer, registry::Kernel};
/// use testkit::{CheckInput, data::Pattern, verify};
/// let r = Reducer::new()?;
/// let input = CheckInput::<f64>::new(&r, Pattern::Random, 1 << 20, 1)?;
/// let c = verify::<Max, f64>(&r, Kernel::find("reduce4")?, 256, Finish::Cpu, &input)?;
/// assert!(c.ok, "GPU {}, CPU {}", c.got, c.expected);
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn verify<O: ReduceOp<T>, T: Element + Reference>(
    reducer: &Reducer,
    kernel: &'static Kernel,
    block: u32,
    finish: Finish,
    input: &CheckInput<T>,
) -> Result<Checked> {
    let n = input.host.len();
    let opts = Options { kernel: Some(kernel), block: Some(block), finish, ..Options::default() };
    let op = op_of::<O, T>()?;
    let (expected, abs_sum) = input.reference(op);
    let got = reducer.reduce::<O, T, _>(&[&input.device.slice(..n)], &opts)?;
    let tol = if input.exact {
        0.0
    } else {
        tolerance::<T>(chain_depth::<O, T>(reducer, kernel, block, finish, n)?, abs_sum)
    };
    Ok(Checked {
        kernel: kernel.id,
        block,
        op,
        ty: T::NAME,
        n,
        got: got.to_string(),
        expected: expected.to_string(),
        ok: T::matches(op, got, expected, tol),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU-like order: 1024 strided partial sums (a grid-stride loop),
    /// then a pairwise tree over them, all in f32.
    fn strided_tree(xs: &[f32]) -> f32 {
        let mut partial = vec![0.0f32; 1024];
        for (i, &x) in xs.iter().enumerate() {
            partial[i % 1024] += x;
        }
        while partial.len() > 1 {
            partial = partial.chunks(2).map(|p| p.iter().sum()).collect();
        }
        partial[0]
    }

    /// The check compares exact data exactly, so one element dropped from
    /// 2^25 + 3 f32 values (an off-by-one launch) fails it, where the
    /// worst-case tolerance of random data would let it pass.
    #[test]
    fn a_dropped_element_fails_the_check() {
        let n = (1 << 25) + 3;
        let xs: Vec<f32> = generate(Pattern::Large, n, 3).unwrap();
        let expected = f32::reference(Op::Sum, &xs);
        assert!(Pattern::Large.sums_exactly());
        assert!(f32::matches(Op::Sum, strided_tree(&xs), expected, 0.0), "exact data summed exactly");
        let last = xs.iter().rposition(|&x| x != 0.0).unwrap();
        let mut dropped = xs.clone();
        dropped.remove(last);
        let got = strided_tree(&dropped);
        assert!(!f32::matches(Op::Sum, got, expected, 0.0), "a dropped element must fail");
        // what a tolerance for random data (depth ~ 40) would have allowed
        let loose = tolerance::<f32>(40, f32::abs_sum(&xs));
        assert!(loose > 8.0 && f32::matches(Op::Sum, got, expected, loose));
    }
}
