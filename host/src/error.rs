//! The one error type of the library: every failure a user can cause or meet
//! is a variant that says what was wrong, with the values involved.

use cudarc::driver::DriverError;

/// Everything that can go wrong, each with the context the CUDA driver's own
/// error codes leave out.
///
/// ```
/// use reduction::Error;
/// let e = Error::Unsupported { kernel: "reduce5".into(), what: "block size 32".into(), valid: "64, 128, 256, 512, 1024".into() };
/// assert_eq!(e.to_string(), "reduce5 does not support block size 32 (valid: 64, 128, 256, 512, 1024)");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda` (the NVIDIA driver) could not be loaded.
    #[error("no CUDA driver: libcuda.so could not be loaded (is the NVIDIA driver installed?)")]
    NoDriver,

    /// The driver is there but sees no GPU, or not the one asked for.
    #[error("no CUDA device {ordinal}: the driver sees {count} device(s)")]
    NoDevice {
        /// The device ordinal asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },

    /// A driver call failed; `call` says which.
    #[error("{call}: {source}")]
    Driver {
        /// The driver call that failed, e.g. `cuMemcpyHtoD`.
        call: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// A kernel launch failed.
    #[error("launching {entry} (grid {grid}, block {block}, shared memory {smem} B): {source}")]
    Launch {
        /// The PTX entry launched, e.g. `reduce7_b256_sum_f32`.
        entry: String,
        /// Blocks in the grid.
        grid: u32,
        /// Threads per block.
        block: u32,
        /// Dynamic shared memory of the launch, in bytes.
        smem: u32,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// No kernel of that name in the registry.
    #[error("no kernel named {name:?} (valid: {valid})")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },

    /// The kernel exists but not with this configuration.
    #[error("{kernel} does not support {what} (valid: {valid})")]
    Unsupported {
        /// The kernel (or operation, e.g. `reduce_by_key`) asked for.
        kernel: String,
        /// What it does not support, e.g. `block size 32`.
        what: String,
        /// What it does support.
        valid: String,
    },

    /// The PTX has no entry of this name.
    #[error("the PTX ({ptx}) has no entry {entry:?}")]
    MissingEntry {
        /// The entry looked for.
        entry: String,
        /// Where the PTX came from ([`Ptx::origin`](crate::Ptx::origin)).
        ptx: String,
    },

    /// An entry's parameters in the PTX are not the ones its launch passes
    /// (a kernel built from other source than the registry describes, such
    /// as a CUDA C++ twin that fell behind its Rust kernel): refused before
    /// the launch, which would read its arguments wrongly.
    #[error("{entry} in the PTX ({ptx}) takes ({found}), but its launch passes ({expected})")]
    Signature {
        /// The entry.
        entry: String,
        /// Where the PTX came from ([`Ptx::origin`](crate::Ptx::origin)).
        ptx: String,
        /// The PTX types the launch passes, e.g. `.u64, .u64, .u32`.
        expected: String,
        /// The PTX types the entry declares.
        found: String,
    },

    /// A PTX file given by path could not be read.
    #[error("cannot read PTX file {path}: {source}")]
    PtxMissing {
        /// The path given.
        path: String,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },

    /// The driver could not JIT-compile or load a PTX module.
    #[error("loading {entry} from the PTX ({ptx}): {source}")]
    ModuleLoad {
        /// The entry being loaded.
        entry: String,
        /// Where the PTX came from ([`Ptx::origin`](crate::Ptx::origin)).
        ptx: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// Device memory ran out.
    #[error("out of device memory allocating {bytes} B for {what} ({free} B free of {total} B)")]
    OutOfMemory {
        /// What the memory was for, e.g. `the input copied from the host`.
        what: &'static str,
        /// Bytes asked for.
        bytes: usize,
        /// Free device memory in bytes when the allocation failed (0 if it
        /// could not be read).
        free: usize,
        /// Total device memory in bytes.
        total: usize,
    },

    /// Host memory ran out (or the size does not fit in the address space).
    #[error("cannot allocate {bytes} B of host memory for {what}")]
    HostMemory {
        /// What the memory was for.
        what: &'static str,
        /// Bytes asked for.
        bytes: usize,
    },

    /// A device slice holds fewer elements than asked to reduce.
    #[error("the device slice holds {len} elements, fewer than the {n} to reduce")]
    SliceTooShort {
        /// Elements the slice holds.
        len: usize,
        /// Elements asked to reduce.
        n: usize,
    },

    /// The input's address does not have the alignment a kernel needs.
    #[error("{kernel} needs {align}-byte aligned input; the address {addr:#x} is not")]
    Misaligned {
        /// The kernel's registry id.
        kernel: String,
        /// The alignment it needs, in bytes.
        align: usize,
        /// The input's device address.
        addr: u64,
    },

    /// The GPU result differs from the CPU reference (CLI and benchmark
    /// checks); `case` names kernel, block, operator, type and size.
    #[error("{case}: GPU {got}, CPU {expected}")]
    Mismatch {
        /// What was checked, e.g. `reduce4 block 128 sum i32 n=1000`.
        case: String,
        /// The GPU result, printed.
        got: String,
        /// The CPU reference result, printed.
        expected: String,
    },

    /// A two-input operation (a dot product) given inputs of different lengths.
    #[error("{op}: the inputs hold {a} and {b} elements (they must have the same length)")]
    InputsDiffer {
        /// The operation.
        op: &'static str,
        /// Length of the first input.
        a: usize,
        /// Length of the second input.
        b: usize,
    },

    /// An operation that has no result for no elements: arg-min/max (no
    /// index to return), the ∞-norms, a p-norm of negative order (no
    /// identity, as in torch).
    #[error("{op}: no elements, and no result for none (no identity or index to return)")]
    Empty {
        /// The operation.
        op: &'static str,
    },

    /// NCCL (for more than one GPU) could not be loaded.
    #[error(
        "NCCL not found: cudarc loads libnccl.so{}",
        match found {
            Some(path) => format!(
                "; {path} is NCCL under its real name: `export LD_LIBRARY_PATH=$(reduce nccl):$LD_LIBRARY_PATH` links it"
            ),
            None => " (install NCCL, e.g. PyTorch's wheel or NVIDIA's libnccl2, and link libnccl.so.2 as libnccl.so: see the README)".into(),
        }
    )]
    NcclMissing {
        /// A `libnccl.so.2` found on this machine ([`find_libnccl`](crate::multi::find_libnccl)), if any.
        found: Option<String>,
    },

    /// An NCCL call failed.
    #[error("{call}: {code} ({text})")]
    Nccl {
        /// The call, e.g. `ncclAllGather`.
        call: &'static str,
        /// NCCL's result code, e.g. `ncclSystemError`.
        code: String,
        /// NCCL's description of it.
        text: String,
    },

    /// A multi-GPU reduction given a number of shards other than its GPUs'.
    #[error("{given} shard(s) given for {gpus} GPU(s): one per GPU of this process, in rank order")]
    Shards {
        /// Shards given.
        given: usize,
        /// GPUs of the reducer in this process.
        gpus: usize,
    },

    /// A buffer in the memory of another GPU than the reducer's (a kernel
    /// given another GPU's address faults and ends the context).
    #[error("{what} is in the memory of GPU {on}, but this reducer runs on GPU {expected}")]
    OtherGpu {
        /// The buffer: an input, the output, the keys, the offsets.
        what: &'static str,
        /// The GPU its memory is on.
        on: usize,
        /// The reducer's GPU.
        expected: usize,
    },

    /// A shard in the memory of another GPU than the one that reduces it.
    #[error("shard {shard} is in the memory of GPU {on}, but GPU {expected} reduces it")]
    ShardDevice {
        /// The shard's position.
        shard: usize,
        /// The GPU its memory is on.
        on: usize,
        /// The GPU of its rank.
        expected: usize,
    },

    /// Reduction by key: keys and values must pair up one to one.
    #[error("reduce_by_key: {keys} keys but {values} values (they must have the same length)")]
    LengthMismatch {
        /// Number of keys.
        keys: usize,
        /// Number of values.
        values: usize,
    },

    /// Reduction by key, host keys: a key is not below the number of keys.
    #[error("reduce_by_key: keys[{index}] = {key} is out of range (num_keys = {num_keys}: keys must be below it)")]
    KeyOutOfRange {
        /// Position of the first key out of range.
        index: usize,
        /// That key.
        key: u32,
        /// The number of keys: every key must be below it.
        num_keys: usize,
    },

    /// Reduction by key, device keys: the kernel found `count` keys that are
    /// not below `num_keys`, skipped those elements and summed the rest.
    #[error(
        "reduce_by_key: {count} of {n} keys are out of range (num_keys = {num_keys}); \
         those elements were skipped, the sums hold the others"
    )]
    KeysOutOfRange {
        /// Elements whose key was out of range (skipped).
        count: u64,
        /// Elements in all.
        n: usize,
        /// The number of keys: every key must be below it.
        num_keys: usize,
    },

    /// Reduction by key: the output has fewer slots than there are keys.
    #[error("reduce_by_key: the output holds {len} sums, fewer than num_keys = {num_keys}")]
    OutputTooShort {
        /// Sums the output holds.
        len: usize,
        /// The number of keys: the sums needed.
        num_keys: usize,
    },

    /// A matrix shape, axis, CSR offsets, strategy or output that cannot
    /// describe the input of a shaped reduction ([`Shape`](crate::shape::Shape)):
    /// the message names what is wrong.
    #[error("{0}")]
    Shape(String),

    /// The hold kernel (`gpu/src/kernels/hold.rs`, launched by the test kit's
    /// `testkit::hold::Hold`) gave up waiting before the host released it:
    /// the work queued behind it started while the host was still queueing
    /// (the launch queue filled, or the host blocked), so times taken behind
    /// it are not queued times.
    #[error(
        "the hold kernel timed out after {timeout_ms} ms before the host released it: the work behind it started \
         while the host was still queueing, so its times are not queued times (queue fewer runs per hold, or time \
         with the host loop)"
    )]
    HoldTimedOut {
        /// The timeout the kernel was launched with, in milliseconds.
        timeout_ms: f64,
    },

    /// Bad command-line or configuration input.
    #[error("{0}")]
    Invalid(String),
}

/// `Result` with this crate's [`Error`].
///
/// ```
/// fn block(s: &str) -> reduction::Result<u32> {
///     s.parse().map_err(|_| reduction::Error::Invalid(format!("not a block size: {s:?}")))
/// }
/// assert_eq!(block("256").unwrap(), 256);
/// assert_eq!(block("many").unwrap_err().to_string(), "not a block size: \"many\"");
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `items` (`count` of them) collected into a vector reserved for them
/// first: [`Error::HostMemory`] for `what` where the host cannot hold them,
/// where a plain `collect` would abort the process.
pub(crate) fn host_vec<X>(count: usize, what: &'static str, items: impl IntoIterator<Item = X>) -> Result<Vec<X>> {
    let mut out = Vec::new();
    let bytes = count.saturating_mul(size_of::<X>());
    out.try_reserve_exact(count).map_err(|_| Error::HostMemory { what, bytes })?;
    out.extend(items);
    Ok(out)
}

/// Wrap a driver error with the name of the call that failed.
pub(crate) fn driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
    Error::from_driver(call)
}

impl Error {
    /// [`Error::Driver`] for a failed call of cudarc's, for `map_err`.
    ///
    /// ```no_run
    /// use reduction::{Error, Reducer};
    /// let r = Reducer::new()?;
    /// let buf = r.gpu().stream().clone_htod(&[1u8, 2]).map_err(Error::from_driver("cuMemcpyHtoD"))?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn from_driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver { call, source }
    }
}
