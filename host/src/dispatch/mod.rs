//! The one place a launch is decided. [`plan`] takes what was asked (a
//! [`Request`]: the operation, its element type, the length and the
//! caller's [`Options`]) and what the card allows (its [`Limits`]) and
//! returns a complete [`Plan`]: the registry's kernel, its entry, the block,
//! the levels of launches with their grids, the shared memory and the
//! partials the launches need. Nothing else in the library, its tools or
//! its tests works out a block, a grid or a tile: `Reducer` asks here, and
//! `launch.rs` carries the plan out.
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

mod levels;
mod tuning;

pub use levels::{Launch, Level, MAX_CHUNK, depth, grid_for, grid_in_whole_rounds, levels, scratch_sizes};
pub use tuning::Tuning;

use crate::by_key::{BY_KEY_BLOCK, ByKeyKernel};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::input::Element;
use crate::modes::{ModeJob, mode_kernel};
use crate::options::Options;
use crate::registry::{DEFAULT_BLOCK, DEFAULT_KERNEL, Kernel, Scheme};
use gpu::layout::MODES_SMEM;
use gpu::names::{DType, Op};
use gpu::op::Reduction;
use gpu::shape::Fit;

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
        let per_sm = (self.0.threads_per_sm / block.max(1)).clamp(1, self.2);
        Ok(self.0.sm_count * per_sm)
    }
}

/// What is asked: operation `op` (its name, inputs and accumulator) on `n`
/// elements of `dtype`, with `options`. Equal requests get equal plans on
/// one card, so a request is also the key under which a planned reduction
/// is kept for the next call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// The operation's name (`Reduction::NAME`).
    pub op: &'static str,
    /// The element type.
    pub dtype: DType,
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
            dtype: T::DTYPE,
            inputs: R::INPUTS,
            acc_bytes: size_of::<R::Acc>(),
            out_bytes: size_of::<R::Out>(),
            n,
            options: *options,
        }
    }
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
}

/// The plan for `request` on `card`: the reproducible or accurate kernel
/// where the options ask for one, else the kernel asked for (or the
/// default) at the block asked for (or the card's default, stepped down
/// where the entry's registers do not allow it), and its levels. Every
/// refusal is a one-line error before any GPU work.
///
/// ```
/// use reduction::dispatch::{Request, Tuning, plan};
/// use reduction::{ArgMax, Options, registry::Kernel};
/// let h100 = (Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 25e9 }, 1024, 16);
/// assert_eq!(plan(&Request::of::<ArgMax, f32>(1 << 22, &Options::default()), &h100)?.block, 512);
/// let teaching = Options { kernel: Some(Kernel::find("reduce3")?), ..Options::default() };
/// let p = plan(&Request::of::<reduction::Sum, i32>(1 << 20, &teaching), &h100)?;
/// assert_eq!((p.block, p.levels.len()), (128, 3)); // Harris's 128 threads, three launches
/// # Ok::<(), reduction::Error>(())
/// ```
pub fn plan(request: &Request, card: &impl Limits) -> Result<Plan> {
    if let Some(mode) = mode_kernel(request.op, request.dtype, &request.options)? {
        return mode_plan(request, mode, card);
    }
    let opts = &request.options;
    let (kernel, block) = choose(request.op, request.n, opts, &card.tuning())?;
    let (block, entry) = fit_block(
        opts.block,
        block,
        |b| kernel.entry_named(b, request.op, request.dtype.name()),
        |e| card.max_threads_per_block(e),
    )?;
    let levels = flat_levels(request, kernel, &entry, block, card)?;
    let partials = match kernel.scheme {
        Scheme::SinglePass => levels[0].launches[0].grid as usize,
        Scheme::MultiPass(_) => 0,
    };
    let smem = kernel.scheme.smem(block, request.dtype.size());
    Ok(Plan { kernel, entry, block, levels, smem, partials, inputs: request.inputs, acc_bytes: request.acc_bytes })
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

/// Entry, grid and shared memory of the by-key `kernel` on `n` elements of
/// `dtype` (blocks of [`BY_KEY_BLOCK`](crate::by_key::BY_KEY_BLOCK)): the
/// blocks that fit on the card at once, or fewer for small inputs.
pub(crate) fn by_key(kernel: ByKeyKernel, dtype: DType, n: usize, card: &impl Limits) -> Result<(String, u32, u32)> {
    let entry = kernel.entry(dtype);
    let smem = kernel.smem(dtype.size());
    let resident = card.resident_blocks(&entry, BY_KEY_BLOCK, smem)?;
    let needed = n.div_ceil(kernel.elements_per_block()).max(1);
    let grid = resident.min(u32::try_from(needed).unwrap_or(u32::MAX));
    Ok((entry, grid, smem))
}

/// How the rows', columns' and segments' kernels size their teams, tiles
/// and grids: from the card, or the same on every card where the results
/// must not depend on it (`gpu_to_gpu`).
pub(crate) fn shape_fit(card: &impl Limits, portable: bool) -> Fit {
    if portable { Fit::PORTABLE } else { card.tuning().fit() }
}

/// The block size to launch and its entry (`entry(block)`): the one
/// `asked` for, else `default` stepped down to the largest power of two the
/// entry's registers allow. `most(entry)` is the most threads a block of it
/// may have on this card (the driver compiles the PTX for the GPU at hand:
/// an arg-max of bf16 built for 1024 threads needs 67 registers a thread on
/// an A100, more than 64). Asking for more is a typed error, before any
/// launch.
fn fit_block(
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

/// The levels of `entry` for `request`: grid-stride kernels get the blocks
/// the card holds at once, at most `max_grid`; a single-pass launch of a
/// one-input operation with an accumulator of at most 8 bytes (a sum, min,
/// max, norm, mean: per element a conversion and an add or compare), on a
/// short input, the fewest of them with which every thread loads whole
/// rounds ([`grid_in_whole_rounds`]). Arg-min/max and dot products do more
/// per element and keep every block: halving their threads cost them up to
/// 1 µs at 2^16-2^20.
fn flat_levels(request: &Request, kernel: &Kernel, entry: &str, block: u32, card: &impl Limits) -> Result<Vec<Level>> {
    let elem = request.dtype.size();
    let resident = if kernel.scheme.grid_stride() {
        let resident = card.resident_blocks(entry, block, kernel.scheme.smem(block, elem))?;
        let resident = request.options.max_grid.map_or(resident, |g| resident.min(g.max(1)));
        let cheap = request.inputs == 1 && request.acc_bytes <= 8;
        if kernel.scheme == Scheme::SinglePass && cheap {
            grid_in_whole_rounds(request.n, elem, block, resident)
        } else {
            resident
        }
    } else {
        0
    };
    Ok(levels(kernel, request.n, block, resident))
}

/// A reproducible or accurate kernel ([`crate::modes`]) for the request:
/// launched as the default kernel is (one launch, the last block
/// finishes), at the block asked for or the card's default one (stepped
/// down where its registers do not allow it), on the grid it can use (at
/// most `max_grid`; its result does not depend on it).
fn mode_plan(request: &Request, mode: crate::modes::ModeKernel, card: &impl Limits) -> Result<Plan> {
    let opts = &request.options;
    // the library's operations of that name: a result of the element's size
    // and the inputs the operation of that name has
    let own_inputs = Op::from_name(request.op).map_or(1, |op| if op == Op::Dot { 2 } else { 1 });
    if request.out_bytes != request.dtype.size() || request.inputs != own_inputs {
        return Err(Error::Unsupported {
            kernel: if opts.accurate { "accurate" } else { "gpu_to_gpu" }.into(),
            what: format!("an operation of your own named {}", request.op),
            valid: "the library's sum, dot, sum_squares, norm, mean".into(),
        });
    }
    let (block, entry) = fit_block(
        opts.block,
        card.tuning().default_block(request.op, request.n),
        |_| crate::modes::entry(mode, request.op, request.dtype),
        |e| card.max_threads_per_block(e),
    )?;
    DEFAULT_KERNEL.check_block(block)?;
    let resident = card.resident_blocks(&entry, block, MODES_SMEM)?;
    let resident = opts.max_grid.map_or(resident, |g| resident.min(g.max(1)));
    let (job, grid) = ModeJob::plan(mode, request.dtype, request.n, block, resident);
    let levels = vec![Level { launches: vec![Launch { in_offset: 0, n: request.n, grid, out_offset: 0 }], outputs: 1 }];
    Ok(Plan {
        kernel: DEFAULT_KERNEL,
        entry,
        block,
        levels,
        smem: MODES_SMEM,
        partials: job.partials,
        inputs: request.inputs,
        acc_bytes: job.acc_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::Determinism;
    use gpu::op::{ArgMax, Dot, Sum};

    /// An H100 (132 SMs, 25 GB/s an SM), an A100 (108 SMs) and a small card
    /// of 24 SMs holding 1536 threads each; every entry allows `most`
    /// threads a block.
    fn cards(most: u32) -> [(Tuning, u32, u32); 3] {
        let card = |sm_count, threads_per_sm, gbps: f64| {
            (Tuning { sm_count, threads_per_sm, bandwidth_per_sm: gbps * 1e9 }, most, 16)
        };
        [card(132, 2048, 25.4), card(108, 2048, 14.4), card(24, 1536, 12.0)]
    }

    #[test]
    fn the_default_kernel_fills_each_card_in_one_launch() {
        for card in cards(1024) {
            let resident_threads = card.0.resident_threads();
            for n in [1usize, 1000, 1 << 20, 1 << 25, 1 << 28] {
                let p = plan(&Request::of::<Sum, f32>(n, &Options::default()), &card).unwrap();
                assert_eq!((p.kernel.id, p.levels.len(), p.smem), ("single_pass", 1, gpu::layout::SINGLE_PASS_SMEM));
                let grid = p.levels[0].launches[0].grid;
                assert_eq!(p.partials, grid as usize);
                assert!(grid as usize * p.block as usize <= resident_threads, "{n}: grid {grid} × {}", p.block);
                assert_eq!(p.block, card.0.default_block("sum", n));
                assert_eq!(p.entry, format!("single_pass_b{}_sum_f32", p.block));
            }
        }
    }

    #[test]
    fn a_block_the_registers_do_not_allow_steps_down_or_is_refused() {
        for card in cards(640) {
            let p = plan(&Request::of::<ArgMax, f32>(1 << 28, &Options::default()), &card).unwrap();
            assert_eq!(p.block, 512);
            let asked = Options { block: Some(1024), ..Options::default() };
            let e = plan(&Request::of::<ArgMax, f32>(1 << 28, &asked), &card).unwrap_err().to_string();
            assert!(e.contains("at most 640 threads"), "{e}");
        }
        let none = cards(16)[0];
        assert!(plan(&Request::of::<Sum, f32>(1 << 20, &Options::default()), &none).is_err());
    }

    #[test]
    fn the_grid_cap_and_teaching_kernels() {
        let card = cards(1024)[0];
        let capped = Options { max_grid: Some(7), ..Options::default() };
        let p = plan(&Request::of::<Dot, f32>(1 << 24, &capped), &card).unwrap();
        assert_eq!(p.levels[0].launches[0].grid, 7);
        for k in crate::registry::KERNELS {
            let opts = Options { kernel: Some(k), ..Options::default() };
            let p = plan(&Request::of::<Sum, i32>((1 << 22) + 3, &opts), &card).unwrap();
            assert_eq!((p.kernel.id, p.block), (k.id, DEFAULT_BLOCK), "{}", k.id);
            assert_eq!(p.levels.last().map(|l| l.outputs), Some(1));
        }
    }

    #[test]
    fn the_modes_get_their_own_entries_and_partials() {
        let card = cards(1024)[0];
        let repro = Options { determinism: Determinism::GpuToGpu, ..Options::default() };
        let p = plan(&Request::of::<Sum, f32>(1 << 28, &repro), &card).unwrap();
        assert_eq!((p.entry.as_str(), p.smem), ("reproducible_sum_f32", MODES_SMEM));
        assert!(p.partials >= 1 && p.levels[0].launches[0].grid >= 1);
        let accurate = Options { accurate: true, ..Options::default() };
        let p = plan(&Request::of::<Sum, f64>(1 << 20, &accurate), &card).unwrap();
        assert_eq!(p.entry, "accurate_sum_f64");
        // an operation of the user's own is refused, named by the mode asked for
        let mut own = Request::of::<Sum, f32>(100, &accurate);
        own.out_bytes = 8;
        let e = plan(&own, &card).unwrap_err().to_string();
        assert!(e.starts_with("accurate does not support an operation of your own"), "{e}");
        own.options = repro;
        assert!(plan(&own, &card).unwrap_err().to_string().starts_with("gpu_to_gpu"));
    }

    #[test]
    fn fit_block_steps_down_to_what_the_registers_allow() {
        let entry = |b: u32| format!("single_pass_b{b}_argmax_bf16");
        let most = |e: &str| Ok(if e.contains("b1024") { 896 } else { 1024 });
        assert_eq!(fit_block(None, 1024, entry, most).unwrap(), (512, entry(512)));
        assert_eq!(fit_block(None, 256, entry, most).unwrap(), (256, entry(256)));
        let err = fit_block(Some(1024), 1024, entry, most).unwrap_err().to_string();
        assert!(err.contains("at most 896 threads"), "{err}");
        // an entry whose one block size does not fit at all
        assert_eq!(fit_block(None, 1024, |_| "accurate_sum_f32".into(), |_| Ok(640)).unwrap().0, 512);
        assert!(fit_block(None, 256, entry, |_| Ok(0)).is_err());
    }

    /// No block, grid or tile is worked out outside this module: the words
    /// of its choices appear in no other source of the workspace.
    #[test]
    fn no_choice_is_made_outside_the_dispatch() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let here = root.join("host/src/dispatch");
        let words = [["default", "_block"].concat(), ["fit", "_block"].concat(), [".tun", "ing()"].concat()];
        let mut folders: Vec<_> =
            ["host/src", "host/examples", "cli/src", "tests", "testkit/src", "xtask/src"].map(|d| root.join(d)).into();
        let (mut files, mut found) = (0, Vec::new());
        while let Some(dir) = folders.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() && path != here {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files += 1;
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    for w in words.iter().filter(|w| text.contains(w.as_str())) {
                        found.push(format!("{}: {w}", path.display()));
                    }
                }
            }
        }
        assert!(files > 50, "{files} files");
        assert!(found.is_empty(), "choices made outside the dispatch: {found:?}");
    }
}
