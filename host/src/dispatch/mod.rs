//! The one place a launch is decided. [`plan`] takes what was asked (a
//! [`Request`]: the operation, its element type, the length and the
//! caller's [`Options`]) and what the card allows (its [`Limits`]) and
//! returns a complete [`Plan`]: the registry's kernel, its entry, the block,
//! the levels of launches with their grids, the shared memory and the
//! partials the launches need. Nothing else in the library, its tools or
//! its tests works out a block, a grid or a tile: `Reducer` asks here, and
//! `launch/` carries the plan out.
//!
//! The card enters only through [`Limits`], so every choice is pure
//! arithmetic the tests run on the CPU for cards the build machine does not
//! have (a 132-SM H100 or H200, a 108-SM A100, a 24-SM card).
//!
//! ```
//! use reduction::dispatch::{Request, Tuning, plan};
//! use reduction::{Options, Sum};
//! // a card of 132 SMs that holds 2048 threads an SM, every block size allowed
//! let card = (Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 36e9 }, 1024, 16);
//! let p = plan(&Request::of::<Sum, f32>(1 << 28, &Options::default()), &card)?;
//! assert_eq!((p.kernel.id, p.block, p.entry.as_str()), ("single_pass", 1024, "single_pass_b1024_sum_f32"));
//! assert_eq!(p.levels.len(), 1); // one launch
//! # Ok::<(), reduction::Error>(())
//! ```

mod by_key;
mod levels;
mod modes;
mod shape;
mod tuning;

pub(crate) use by_key::ByKeyKernel;
pub use by_key::{BY_KEY_BLOCK, HASH_SLOTS, by_key_plan};
pub use levels::{
    Launch, Level, MAX_CHUNK, depth, grid_for, grid_for_heavy_merges, grid_for_logsumexp, grid_in_whole_rounds, levels,
    scratch_sizes,
};
pub use modes::mode_entry;
pub(crate) use modes::{mode_kernel, portable_form, shaped_mode};
pub use shape::{
    EVEN, EVEN_STAGED_WARPS, EVEN_WARPS, HALF_COLUMN_BLOCKS_PER_SM, LONG, LONG_ACC_BYTES, LONG_MIN_TILE_BYTES,
    LONG_WARPS, PAIRED, SHORT, ShapeKernel, ShapePlan, TAIL, TAILED_MIN_TILE_BYTES, column_blocks_per_sm,
    column_wide_most, even_lengths, even_lengths_of, heavy_tail, heavy_tail_of, long_segments, long_segments_of,
    paired_segments, paired_segments_of, rows_min_tile_bytes, rows_short_takes, scheduled_at, second_wave, shape_plan,
    short_segments, short_segments_of, single_stretch, staged_scheduled, staged_scheduled_of, team_vectors,
};
pub use tuning::Tuning;

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::input::Element;
use crate::options::Options;
use crate::registry::{DEFAULT_BLOCK, DEFAULT_KERNEL, Family, KERNELS, Kernel, Scheme};
use crate::shape::{Shape, Strategy};
use gpu::names::{DType, Op};
use gpu::op::Reduction;
use gpu::shape::{Fit, SHAPE_BLOCK};
use modes::mode_plan;

/// What a card allows, as the planner needs it: its [`Tuning`] (SMs,
/// threads an SM holds, bandwidth), and for a PTX entry the most threads a
/// block of it may have and how many of its blocks fit on the card at once.
/// [`Gpu`] asks the driver; a test answers for a card it describes.
pub trait Limits {
    /// The card's SMs, threads an SM and bandwidth an SM.
    fn tuning(&self) -> Tuning;
    /// The most threads a block of `entry` may have (its registers decide).
    fn max_threads_per_block(&self, entry: &str) -> Result<u32>;
    /// Blocks of `entry` resident on the whole card at once, with `block`
    /// threads and `smem` bytes of dynamic shared memory each.
    fn resident_blocks(&self, entry: &str, block: u32, smem: u32) -> Result<u32>;
    /// [`Limits::resident_blocks`] of `entry` declared to the JIT for at
    /// least `per_sm` blocks an SM where given
    /// ([`ShapePlan::blocks_per_sm`]). By default the entry's own, or the
    /// declared blocks on every SM where more.
    fn resident_declared(&self, entry: &str, block: u32, smem: u32, per_sm: Option<u32>) -> Result<u32> {
        let own = self.resident_blocks(entry, block, smem)?;
        Ok(per_sm.map_or(own, |k| own.max(k.saturating_mul(self.tuning().sm_count))))
    }
    /// The card's memory in bytes: no input larger is planned. By default
    /// no bound.
    fn memory(&self) -> usize {
        usize::MAX
    }
}

impl Limits for Gpu {
    fn tuning(&self) -> Tuning {
        Gpu::tuning(self)
    }
    fn max_threads_per_block(&self, entry: &str) -> Result<u32> {
        Gpu::max_threads_per_block(self, entry)
    }
    fn resident_blocks(&self, entry: &str, block: u32, smem: u32) -> Result<u32> {
        Gpu::resident_blocks(self, entry, block, smem)
    }
    fn resident_declared(&self, entry: &str, block: u32, smem: u32, per_sm: Option<u32>) -> Result<u32> {
        Gpu::resident_declared(self, entry, block, smem, per_sm)
    }
    fn memory(&self) -> usize {
        self.info().total_mem
    }
}

/// A card described by its tuning, the most threads a block of any entry
/// may have, and the blocks of any entry an SM holds: for examples and
/// tests.
impl Limits for (Tuning, u32, u32) {
    fn tuning(&self) -> Tuning {
        self.0
    }
    fn max_threads_per_block(&self, _: &str) -> Result<u32> {
        Ok(self.1)
    }
    fn resident_blocks(&self, _: &str, block: u32, _: u32) -> Result<u32> {
        let per_sm = (self.0.threads_per_sm / block.max(1)).clamp(1, self.2.max(1));
        Ok(self.0.sm_count.saturating_mul(per_sm))
    }
}

/// What is asked: operation `op` (its name, inputs and accumulator) on `n`
/// elements of type `ty`, with `options`. Equal requests get equal plans on
/// one card, so a request is also the key under which a planned reduction
/// is kept for the next call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// The operation's name (`Reduction::NAME`).
    pub op: &'static str,
    /// The element type's name (`Element::NAME`): one of the library's
    /// ([`Request::dtype`]) or a user's own.
    pub ty: &'static str,
    /// Bytes of one element.
    pub elem_bytes: usize,
    /// The operation's inputs: 1, or 2 for a dot product.
    pub inputs: u32,
    /// Bytes of one accumulator.
    pub acc_bytes: usize,
    /// Bytes of the result.
    pub out_bytes: usize,
    /// Elements.
    pub n: usize,
    /// The caller's options.
    pub options: Options,
}

impl Request {
    /// The request for operation `R` on `n` elements of `T` with `options`.
    ///
    /// ```
    /// use reduction::{Options, dispatch::Request, op::Dot};
    /// let r = Request::of::<Dot, f32>(1000, &Options::default());
    /// assert_eq!((r.op, r.inputs, r.acc_bytes), ("dot", 2, 4));
    /// ```
    pub fn of<R: Reduction<T>, T: Element>(n: usize, options: &Options) -> Request {
        Request {
            op: R::NAME,
            ty: T::NAME,
            elem_bytes: size_of::<T>(),
            inputs: R::INPUTS,
            acc_bytes: size_of::<R::Acc>(),
            out_bytes: size_of::<R::Out>(),
            n,
            options: *options,
        }
    }

    /// The element type, if it is one of the library's.
    ///
    /// ```
    /// use reduction::{DType, Options, dispatch::Request, op::Sum};
    /// assert_eq!(Request::of::<Sum, f32>(10, &Options::default()).dtype(), Some(DType::F32));
    /// ```
    pub fn dtype(&self) -> Option<DType> {
        DType::from_name(self.ty)
    }
}

/// The element type named `name` as one of the library's, or
/// [`Error::Unsupported`] from the kernels `what` (those built for the
/// library's types only: shaped, reproducible, accurate).
pub(crate) fn library_type(name: &str, what: &str) -> Result<DType> {
    DType::from_name(name).ok_or_else(|| Error::Unsupported {
        kernel: what.into(),
        what: format!("the element type {name} (not one of the library's)"),
        valid: DType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "),
    })
}

/// A reduction, planned: everything the host works out before its first
/// launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The registry's kernel: its [`Scheme`] says how it is launched. The
    /// reproducible and accurate kernels are launched as the default one.
    pub kernel: &'static Kernel,
    /// The PTX entry.
    pub entry: String,
    /// Threads per block.
    pub block: u32,
    /// The launches, level by level (one launch for a single-pass kernel).
    pub levels: Vec<Level>,
    /// Dynamic shared memory of each launch, bytes.
    pub smem: u32,
    /// Accumulator slots a single-pass launch writes before its last block
    /// combines them (one per block, or the fixed tree of a reproducible
    /// kernel); 0 for multi-pass kernels, whose partials are their levels'
    /// outputs.
    pub partials: usize,
    /// The operation's inputs.
    pub inputs: u32,
    /// Bytes of one accumulator.
    pub acc_bytes: usize,
    /// The exponent the launch sets for [`PowerSum`](gpu::op::PowerSum)
    /// ([`exponent`]); `None` for every other operation.
    pub exponent: Option<f64>,
}

/// The exponent a launch of the operation named `op` sets with `options`:
/// [`PowerSum`](gpu::op::PowerSum)'s `p` (2 when none is given, torch's
/// default order), `None` for the other operations. An exponent that is not
/// finite or is 0 (the norms of order 0 and ±∞ are `count_nonzero`,
/// `norm_inf` and `norm_neg_inf`), or one given to another operation, is
/// [`Error::Invalid`].
///
/// ```
/// use reduction::{Options, dispatch::exponent};
/// let cube = Options { p: Some(3.0), ..Options::default() };
/// assert_eq!(exponent("power_sum", &cube)?, Some(3.0));
/// assert_eq!(exponent("power_sum", &Options::default())?, Some(2.0));
/// assert_eq!(exponent("sum", &Options::default())?, None);
/// assert!(exponent("sum", &cube).is_err());
/// assert!(exponent("power_sum", &Options { p: Some(f64::INFINITY), ..cube }).is_err());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn exponent(op: &str, options: &Options) -> Result<Option<f64>> {
    let power = op == Op::PowerSum.name();
    match options.p {
        None => Ok(power.then_some(gpu::op::power::DEFAULT_EXPONENT)),
        Some(p) if power && p.is_finite() && p != 0.0 => Ok(Some(p)),
        Some(p) if power => Err(Error::Invalid(format!(
            "p = {p}: power_sum takes a finite exponent other than 0 (the norms of order 0 and ±inf are count_nonzero, norm_inf and norm_neg_inf)"
        ))),
        Some(p) => Err(Error::Invalid(format!("p = {p}: {op} takes no exponent (only power_sum does)"))),
    }
}

/// The operation whose entries compute the operation named `op` with the
/// exponent `exponent` (from [`exponent`]), and the exponent their launch
/// sets: `power_sum` of order 1 is `norm1`'s `Σ |x|` and of order 2
/// `sum_squares`' `Σ x²`, the same terms (`|x|¹` is `|x|`, `|x|²` is `x·x`)
/// in entries without `power_sum`'s second form, whose registers cost
/// every order a block an SM (H200, 2^28 bf16, order 2: 154.1 → 124.4 µs,
/// as fast as the sum; `docs/src/performance/tuning-operations.md`, orders 1 and 2).
/// These are the operations `norm_p` takes for those orders too
/// ([`Order`](gpu::op::power::Order)). Any other operation or order is
/// itself.
///
/// ```
/// use reduction::dispatch::entry_operation;
/// assert_eq!(entry_operation("power_sum", Some(2.0)), ("sum_squares", None));
/// assert_eq!(entry_operation("power_sum", Some(1.0)), ("norm1", None));
/// assert_eq!(entry_operation("power_sum", Some(3.0)), ("power_sum", Some(3.0)));
/// assert_eq!(entry_operation("sum", None), ("sum", None));
/// ```
pub fn entry_operation(op: &'static str, exponent: Option<f64>) -> (&'static str, Option<f64>) {
    use gpu::op::power::Order;
    match exponent.and_then(Order::of) {
        Some(Order::One) => (Op::Norm1.name(), None),
        Some(Order::Two) => (Op::SumSquares.name(), None),
        _ => (op, exponent),
    }
}

/// How `norm_p` computes the norm of order `p` ([`Order`](gpu::op::power::Order):
/// a count, one of the library's norms, or `PowerSum` and a root) of an
/// input known to be empty or not (`empty`; `None` where other processes
/// hold parts of it). NaN is [`Error::Invalid`]; a negative order of no
/// elements is [`Error::Empty`], as torch's infinite result would be
/// meaningless; both before any GPU work.
///
/// ```
/// use gpu::op::power::Order;
/// use reduction::dispatch::norm_order;
/// assert!(matches!(norm_order(3.0, Some(false)), Ok(Order::Power(3.0))));
/// assert!(matches!(norm_order(f64::NEG_INFINITY, Some(true)), Ok(Order::NegInf)));
/// assert!(matches!(norm_order(-0.5, Some(true)), Err(reduction::Error::Empty { .. })));
/// assert!(matches!(norm_order(-0.5, None), Ok(Order::Power(-0.5))));
/// assert!(norm_order(f64::NAN, Some(false)).is_err());
/// ```
pub fn norm_order(p: f64, empty: Option<bool>) -> Result<gpu::op::power::Order> {
    use gpu::op::power::Order;
    let order = Order::of(p).ok_or_else(|| Error::Invalid(format!("norm_p: p = {p} (a number, or ±inf)")))?;
    match order {
        Order::Power(p) if p < 0.0 && empty == Some(true) => Err(Error::Empty { op: "norm_p (p < 0)" }),
        order => Ok(order),
    }
}

/// The plan for `request` on `card`: the reproducible or accurate kernel
/// where the options ask for one, else the kernel asked for (or the
/// default) at the block asked for (or the card's default, stepped down
/// where the entry's registers do not allow it), and its levels. Every
/// refusal is a one-line error before any GPU work; `n` elements of more
/// bytes than the card's [memory](Limits::memory) are one.
///
/// ```
/// use reduction::dispatch::{Request, Tuning, plan};
/// use reduction::{ArgMax, Options, registry::Kernel};
/// let h100 = (Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 25e9 }, 1024, 16);
/// assert_eq!(plan(&Request::of::<ArgMax, f32>(1 << 22, &Options::default()), &h100)?.block, 512);
/// let teaching = Options { kernel: Some(Kernel::find("reduce3")?), ..Options::default() };
/// let p = plan(&Request::of::<reduction::Sum, i32>(1 << 20, &teaching), &h100)?;
/// assert_eq!((p.block, p.levels.len()), (128, 3)); // Harris's 128 threads, three launches
/// assert!(plan(&Request::of::<reduction::Sum, i32>(usize::MAX, &teaching), &h100).is_err()); // past any memory
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn plan(request: &Request, card: &impl Limits) -> Result<Plan> {
    // no input larger than the card's memory exists to reduce (and the
    // teaching kernels' levels, a launch each 2^31 elements, grow with `n`)
    if request.n.checked_mul(request.elem_bytes).is_none_or(|bytes| bytes > card.memory()) {
        return Err(Error::Invalid(format!(
            "{} elements of {}: more than the GPU's {} bytes of memory",
            request.n,
            request.ty,
            card.memory()
        )));
    }
    let (op, exponent) = entry_operation(request.op, exponent(request.op, &request.options)?);
    if let Some(mode) = mode_kernel(request.op, request.ty, &request.options)? {
        return mode_plan(request, mode, card);
    }
    let request = &Request { op, ..*request };
    let opts = &request.options;
    let (kernel, block) = choose(request.op, request.n, opts, &card.tuning())?;
    check_operation(request, kernel)?;
    let entry_of = |b| kernel.entry_named(b, request.op, request.ty);
    let (block, entry) = fit_block(opts.block, block, entry_of, |e| card.max_threads_per_block(e))?;
    let (block, entry) = match opts.block {
        None if kernel.scheme == Scheme::SinglePass => fuller_block(block, entry, entry_of, |e, b| {
            card.resident_blocks(e, b, kernel.scheme.smem(b, request.elem_bytes))
        })?,
        _ => (block, entry),
    };
    let levels = flat_levels(request, kernel, &entry, block, card)?;
    let partials = if kernel.scheme == Scheme::SinglePass { levels[0].launches[0].grid as usize } else { 0 };
    let smem = kernel.scheme.smem(block, request.elem_bytes);
    let (inputs, acc_bytes) = (request.inputs, request.acc_bytes);
    Ok(Plan { kernel, entry, block, levels, smem, partials, inputs, acc_bytes, exponent })
}

/// The kernel and block for `n` elements of the operation named `op`: the
/// caller's, checked, or the default: [`DEFAULT_KERNEL`] at the card's
/// default block ([`Tuning::default_block`]; a teaching kernel asked for
/// without a block runs at Harris's [`DEFAULT_BLOCK`]).
///
/// ```
/// use reduction::dispatch::{Tuning, choose};
/// use reduction::{Options, registry::Kernel};
/// let h200 = Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 36e9 };
/// let (k, block) = choose("sum", 1 << 20, &Options::default(), &h200)?;
/// assert_eq!((k.id, block), ("single_pass", 256));
/// let bad = Options { kernel: Some(Kernel::find("reduce5")?), block: Some(32), ..Options::default() };
/// assert!(choose("sum", 1 << 20, &bad, &h200).is_err());
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn choose(op: &str, n: usize, opts: &Options, tuning: &Tuning) -> Result<(&'static Kernel, u32)> {
    let (kernel, default_block) = match opts.kernel {
        Some(k) => (k, DEFAULT_BLOCK),
        None => (DEFAULT_KERNEL, tuning.default_block(op, n)),
    };
    let block = opts.block.unwrap_or(default_block);
    kernel.check_block(block)?;
    Ok((kernel, block))
}

/// [`Error::Unsupported`] unless `kernel` has entries for the request's
/// operation and type: the default kernel takes every operation of the
/// library and the user's own (any name: its entries are the user's PTX);
/// a teaching kernel the plain operators (one input, result and
/// accumulator the element) it was built for.
fn check_operation(request: &Request, kernel: &Kernel) -> Result<()> {
    let op = Op::from_name(request.op);
    let fits = match kernel.family {
        // the library's operations for its types, or an operation or type
        // of the user's (its entries are the user's PTX)
        Family::Default => match (op, request.dtype()) {
            (Some(op), Some(ty)) => kernel.supports(op, ty),
            _ => true,
        },
        Family::Step => {
            let size = request.elem_bytes;
            let plain = request.inputs == 1 && request.acc_bytes == size && request.out_bytes == size;
            plain && op.zip(request.dtype()).is_some_and(|(op, ty)| kernel.supports(op, ty))
        }
        _ => false,
    };
    if fits {
        return Ok(());
    }
    Err(Error::Unsupported {
        kernel: kernel.id.to_string(),
        what: format!("{} of {}", request.op, request.ty),
        valid: match kernel.family {
            Family::Default | Family::Step => {
                format!(
                    "{} for every operation; the teaching kernels: sum, min, max of 32- and 64-bit types",
                    DEFAULT_KERNEL.id
                )
            }
            _ => format!(
                "for a flat reduction {} (the {:?} kernels are chosen by the options and the shape)",
                KERNELS.iter().map(|k| k.id).collect::<Vec<_>>().join(", "),
                kernel.family
            ),
        },
    })
}

/// The launch of a shaped reduction on `card`: [`shape_plan`] (its
/// arguments but the fit) with the card's fit (its tiles, column blocks
/// and teams), or under `gpu_to_gpu` (`portable`) the portable one, the
/// same on every card so that the order and the bits do not depend on it,
/// and the entries of the operation's portable `form`
/// (`dispatch::shaped_mode`). Where the columns kernel's
/// automatic grid would run a second wave of blocks and no third
/// ([`second_wave`]: the blocks of the entry the card holds at once,
/// as it is declared), it is planned for half as many blocks, where the
/// SMs still get one and a half or more each.
#[allow(clippy::too_many_arguments)]
pub(crate) fn shape_launch(
    card: &impl Limits,
    (op, ty, acc_bytes): (Op, DType, usize),
    n: usize,
    shape: Shape<'_>,
    strategy: Strategy,
    aligned: bool,
    portable: bool,
    form: Option<&str>,
) -> Result<ShapePlan> {
    let tuning = card.tuning();
    let fit = if portable { Fit::PORTABLE } else { tuning.fit() };
    let plan = |fit| shape_plan(op, ty, acc_bytes, n, shape, strategy, aligned, fit).map(|p| p.in_form(form, ty));
    let first = plan(fit)?;
    if first.kernel != ShapeKernel::Columns || strategy != Strategy::Auto || portable {
        return Ok(first);
    }
    let resident = card.resident_declared(&first.entry, SHAPE_BLOCK, first.smem, first.blocks_per_sm)?;
    if !second_wave(first.grid as u64, resident as u64) {
        return Ok(first);
    }
    // half as many, where the SMs still get one and a half or more each:
    // on the H100's 132 SMs 256 blocks took 378.0 µs, 128 534.5
    let fewer = plan(Fit { column_blocks: (fit.column_blocks / 2).max(1), ..fit })?;
    Ok(if 2 * fewer.grid as u64 >= 3 * tuning.sm_count as u64 { fewer } else { first })
}

/// The block size to launch and its entry (`entry(block)`): the one
/// `asked` for, else `default` stepped down to the largest power of two the
/// entry's registers allow. `most(entry)` is the most threads a block of it
/// may have on this card (the driver compiles the PTX for the GPU at hand,
/// and an entry that then needs more than 64 registers a thread for its
/// 1024 is compiled again within them, `Gpu::loaded`; other kernels' block
/// sizes are limited by their registers alone). Asking for more is a typed
/// error, before any launch.
pub(super) fn fit_block(
    asked: Option<u32>,
    default: u32,
    entry: impl Fn(u32) -> String,
    most: impl Fn(&str) -> Result<u32>,
) -> Result<(u32, String)> {
    let mut block = asked.unwrap_or(default);
    loop {
        let name = entry(block);
        let limit = most(&name)?;
        if block <= limit {
            return Ok((block, name));
        }
        if asked.is_some() || limit < 32 {
            return Err(Error::Unsupported {
                kernel: name,
                what: format!("block size {block} (its registers allow at most {limit} threads a block here)"),
                valid: "powers of two from 32 up to that".into(),
            });
        }
        block = 1 << limit.ilog2(); // smaller: the loop ends
    }
}

/// The block to launch instead of `block` (entry `entry`) when the card
/// holds a quarter more warps of a smaller one at once: a kernel whose
/// registers fit one block of 1024 threads an SM (and no second) fits three
/// of 512 with up to 42 registers a thread; one of 512 with 70 (the
/// variance's) fits three of 256, 24 warps an SM instead of 16: 94% of an
/// H200's read ceiling instead of 84%. Down to 128 threads; `resident(entry, block)`
/// is the blocks of `entry` the whole card holds (the occupancy API). More
/// warps in flight is more loads in flight, which a read-bound kernel
/// needs; a smaller gain is not worth more blocks.
pub(super) fn fuller_block(
    block: u32,
    entry: String,
    entry_of: impl Fn(u32) -> String,
    resident: impl Fn(&str, u32) -> Result<u32>,
) -> Result<(u32, String)> {
    let warps = |e: &str, b: u32| resident(e, b).map(|blocks| blocks as u64 * b as u64 / 32);
    let mut best = (warps(&entry, block)?, block, entry);
    let mut b = block / 2;
    while b >= 128 {
        let e = entry_of(b);
        let w = warps(&e, b)?;
        if 4 * w >= 5 * best.0 {
            best = (w, b, e);
        }
        b /= 2;
    }
    Ok((best.1, best.2))
}

/// The levels of `entry` for `request`: grid-stride kernels get the blocks
/// the card holds at once, at most `max_grid`; a single-pass launch of a
/// one-input operation with an accumulator of at most 8 bytes (a sum, min,
/// max, norm, mean: per element a conversion and an add or compare), on a
/// short input, the fewest of them with which every thread loads whole
/// rounds ([`grid_in_whole_rounds`]). Arg-min/max and dot products do more
/// per element and keep every block: halving their threads cost them up to
/// 1 µs at 2^16-2^20. An accumulator of more than 16 bytes (the variance's
/// three `f64`) has a heavy merge, and a short input fewer blocks
/// ([`grid_for_heavy_merges`]); so does logsumexp, an exponential an
/// element, where its rounds are not whole ([`grid_for_logsumexp`]).
fn flat_levels(request: &Request, kernel: &Kernel, entry: &str, block: u32, card: &impl Limits) -> Result<Vec<Level>> {
    let elem = request.elem_bytes;
    let resident = if kernel.scheme.grid_stride() {
        let resident = card.resident_blocks(entry, block, kernel.scheme.smem(block, elem))?;
        let resident = request.options.max_grid.map_or(resident, |g| resident.min(g.max(1)));
        let sms = card.tuning().sm_count;
        match (kernel.scheme, request.inputs, request.acc_bytes) {
            (Scheme::SinglePass, 1, ..=8) if request.op == Op::LogSumExp.name() => {
                grid_for_logsumexp(request.n, elem, block, resident, sms)
            }
            (Scheme::SinglePass, 1, ..=8) => grid_in_whole_rounds(request.n, elem, block, resident),
            (Scheme::SinglePass, _, 17..) => grid_for_heavy_merges(request.n, elem, block, resident, sms),
            _ => resident,
        }
    } else {
        0
    };
    Ok(levels(kernel, request.n, block, resident))
}

#[cfg(test)]
mod tests;
