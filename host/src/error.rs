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
    NoDevice { ordinal: usize, count: usize },

    /// A driver call failed; `call` says which.
    #[error("{call}: {source}")]
    Driver {
        call: &'static str,
        #[source]
        source: DriverError,
    },

    /// A kernel launch failed.
    #[error("launching {entry} (grid {grid}, block {block}, shared memory {smem} B): {source}")]
    Launch {
        entry: String,
        grid: u32,
        block: u32,
        smem: u32,
        #[source]
        source: DriverError,
    },

    /// No kernel of that name in the registry.
    #[error("no kernel named {name:?} (valid: {valid})")]
    UnknownKernel { name: String, valid: String },

    /// The kernel exists but not with this configuration.
    #[error("{kernel} does not support {what} (valid: {valid})")]
    Unsupported { kernel: String, what: String, valid: String },

    /// The PTX has no entry of this name.
    #[error("the PTX ({ptx}) has no entry {entry:?}")]
    MissingEntry { entry: String, ptx: String },

    /// A PTX file given by path could not be read.
    #[error("cannot read PTX file {path}: {source}")]
    PtxMissing {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// The driver could not JIT-compile or load a PTX module.
    #[error("loading {entry} from the PTX ({ptx}): {source}")]
    ModuleLoad {
        entry: String,
        ptx: String,
        #[source]
        source: DriverError,
    },

    /// Device memory ran out.
    #[error("out of device memory allocating {bytes} B for {what} ({free} B free of {total} B)")]
    OutOfMemory { what: &'static str, bytes: usize, free: usize, total: usize },

    /// A device slice holds fewer elements than asked to reduce.
    #[error("the device slice holds {len} elements, fewer than the {n} to reduce")]
    SliceTooShort { len: usize, n: usize },

    /// The input's address does not have the alignment a kernel needs.
    #[error("{kernel} needs {align}-byte aligned input; the address {addr:#x} is not")]
    Misaligned { kernel: String, align: usize, addr: u64 },

    /// The GPU result differs from the CPU reference (CLI and benchmark
    /// checks); `case` names kernel, block, operator, type and size.
    #[error("{case}: GPU {got}, CPU {expected}")]
    Mismatch { case: String, got: String, expected: String },

    /// Reduction by key: keys and values must pair up one to one.
    #[error("reduce_by_key: {keys} keys but {values} values (they must have the same length)")]
    LengthMismatch { keys: usize, values: usize },

    /// Reduction by key, host keys: a key is not below the number of keys.
    #[error("reduce_by_key: keys[{index}] = {key} is out of range (num_keys = {num_keys}: keys must be below it)")]
    KeyOutOfRange { index: usize, key: u32, num_keys: usize },

    /// Reduction by key, device keys: the kernel found `count` keys that are
    /// not below `num_keys`, skipped those elements and summed the rest.
    #[error(
        "reduce_by_key: {count} of {n} keys are out of range (num_keys = {num_keys}); \
         those elements were skipped, the sums hold the others"
    )]
    KeysOutOfRange { count: u64, n: usize, num_keys: usize },

    /// Reduction by key: the output has fewer slots than there are keys.
    #[error("reduce_by_key: the output holds {len} sums, fewer than num_keys = {num_keys}")]
    OutputTooShort { len: usize, num_keys: usize },

    /// Bad command-line or configuration input.
    #[error("{0}")]
    Invalid(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wrap a driver error with the name of the call that failed.
pub(crate) fn driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
    move |source| Error::Driver { call, source }
}
