//! The one list of what the kernels are instantiated for: element types,
//! operations and block sizes. `entries.rs` expands these lists into PTX
//! entries; the host library reads the same constants and enums (this module,
//! like `op` and `layout`, also builds for the host), so the two cannot
//! disagree. Adding a type here adds its entries and its [`DType`] variant;
//! every `match` on `DType` in the host then fails to compile until it is
//! handled.

/// Calls `$m!(args; 32 64 128 256 512 1024)`: the block sizes the const-`BLOCK`
/// kernels are compiled for, powers of two from one warp to the limit.
macro_rules! with_block_sizes {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; 32 64 128 256 512 1024 }
    };
}

/// Calls `$m!(args; I32 i32, U32 u32, ...)`: the primitive element types,
/// which every kernel is instantiated for, as the [`DType`] variant and the
/// Rust type.
macro_rules! with_types {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64 }
    };
}

/// Calls `$m!(args; I32 i32, ..., F16 f16, BF16 bf16)`: every element type,
/// the primitive ones and the half types of [`crate::half`] (which only the
/// default kernel reads).
macro_rules! with_all_types {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16 }
    };
}

/// Calls `$m!(args; Sum sum, Min min, Max max)`: the plain operators
/// ([`crate::op::ReduceOp`]) every kernel is instantiated with, as the
/// operator type in `op` (and the [`Op`] variant) and its name in entries.
macro_rules! with_ops {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; Sum sum, Min min, Max max }
    };
}

/// Calls `$m!(args; Sum sum [i32 ...], ...)`: every operation of the default
/// kernel (`kernels/single_pass.rs`), with the element types it is compiled
/// for. Sum, min, max, arg-min/max, the product, the tests against zero and
/// min-and-max take every type; the float transforms and the NaN-skipping
/// operations take the float types. Each pair costs about 170 KB of PTX
/// text (six block sizes of the default kernel, the shaped kernels), and
/// about 7 KB of the compressed PTX a user's binary carries.
macro_rules! with_operations {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ;
            Sum sum [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            Min min [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            Max max [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            ArgMin argmin [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            ArgMax argmax [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            Dot dot [F32 f32, F64 f64, F16 f16, BF16 bf16],
            SumSquares sum_squares [F32 f32, F64 f64, F16 f16, BF16 bf16],
            Norm norm [F32 f32, F64 f64, F16 f16, BF16 bf16],
            Mean mean [F32 f32, F64 f64, F16 f16, BF16 bf16],
            Prod prod [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            All all [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            Any any [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            CountNonzero count_nonzero [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            AMinMax aminmax [I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64, F16 f16, BF16 bf16],
            NanSum nansum [F32 f32, F64 f64, F16 f16, BF16 bf16],
            NanMean nanmean [F32 f32, F64 f64, F16 f16, BF16 bf16],
            Norm1 norm1 [F32 f32, F64 f64, F16 f16, BF16 bf16],
            NormInf norm_inf [F32 f32, F64 f64, F16 f16, BF16 bf16],
            NormNegInf norm_neg_inf [F32 f32, F64 f64, F16 f16, BF16 bf16],
            Moments moments [F32 f32, F64 f64, F16 f16, BF16 bf16],
            LogSumExp logsumexp [F32 f32, F64 f64, F16 f16, BF16 bf16],
            NanMin nanmin [F32 f32, F64 f64, F16 f16, BF16 bf16],
            NanMax nanmax [F32 f32, F64 f64, F16 f16, BF16 bf16],
            PowerSum power_sum [F32 f32, F64 f64, F16 f16, BF16 bf16]
        }
    };
}

/// Calls `$m!(args; NanMeanParts nanmean_parts [F32 f32, ...])`: what each
/// GPU computes of an operation whose result alone cannot be combined
/// across GPUs (a NaN-skipping mean: its sum and count), for the host's
/// multi-GPU path. The default kernel's entries only; not operations of
/// their own.
macro_rules! with_shard_parts {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ;
            NanMeanParts nanmean_parts [F32 f32, F64 f64, F16 f16, BF16 bf16]
        }
    };
}

/// Calls `$m!(args; LogSumExp: PortableLogSumExp logsumexp_portable [F32 f32])`: the
/// shaped kernels' forms of an operation whose own entries take the GPU's
/// approximate instructions, with IEEE arithmetic alone in their place (the
/// same bits on every GPU and the CPU), for `gpu_to_gpu`. Entries of the
/// shaped kernels only, which the host's dispatch picks; not operations of
/// their own.
macro_rules! with_portable_shapes {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ;
            LogSumExp: PortableLogSumExp logsumexp_portable [F32 f32]
        }
    };
}

/// Calls `$m!(args; Sum sum, Dot dot, ...; f32 f64)`: the operations the
/// reproducible (`gpu_to_gpu`) kernel is compiled for, and its types: the
/// float sums, the operations built on them, the variance's moments and
/// logsumexp. The accurate sums are `f32` and `f64` sums only.
macro_rules! with_reproducible {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; Sum sum, Dot dot, SumSquares sum_squares, Norm norm, Mean mean, Moments moments, LogSumExp logsumexp ; f32 f64 }
    };
}

/// Calls `$m!(args; f32 f64)`: the value types of reduction by key.
macro_rules! with_by_key_types {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; f32 f64 }
    };
}

#[allow(unused_imports)] // named by `with_all_types!` expansions
use crate::half::{bf16, f16};

macro_rules! block_array {
    (; $($b:literal)*) => {
        [$($b),*]
    };
}

/// The block sizes every kernel may be launched with (each kernel's own
/// minimum applies), and the ones the const-`BLOCK` kernels are compiled for.
///
/// ```
/// assert!(gpu::names::BLOCK_SIZES.iter().all(|b| b.is_power_of_two() && (32..=1024).contains(b)));
/// ```
pub const BLOCK_SIZES: [u32; 6] = with_block_sizes!(block_array!());

macro_rules! dtype_enum {
    (; $($V:ident $t:ident),*) => {
        /// An element type the kernels are instantiated for, as a run-time value.
        ///
        /// ```
        /// use gpu::names::DType;
        /// assert_eq!(DType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>(), ["i32", "u32", "i64", "u64", "f32", "f64", "f16", "bf16"]);
        /// assert_eq!(DType::from_name("bf16").map(DType::size), Some(2));
        /// assert!(DType::F16.is_half() && !DType::F32.is_half());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DType {
            $(#[doc = concat!("`", stringify!($t), "`")] $V,)*
        }

        impl DType {
            /// Every element type, in the order of the list.
            pub const ALL: &'static [DType] = &[$(DType::$V),*];

            /// Whether the type is one of the half types (only the default kernel reads them).
            pub const fn is_half(self) -> bool {
                matches!(self, DType::F16 | DType::BF16)
            }

            /// Whether the type is a floating-point type.
            pub const fn is_float(self) -> bool {
                matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
            }

            /// The name in entry names: `i32` ... `bf16`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(DType::$V => stringify!($t),)*
                }
            }

            /// Bytes per element.
            pub const fn size(self) -> usize {
                match self {
                    $(DType::$V => core::mem::size_of::<$t>(),)*
                }
            }

            /// The type named `name`, if the kernels have it (host only:
            /// string comparison has no place in a kernel).
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn from_name(name: &str) -> Option<DType> {
                DType::ALL.iter().copied().find(|t| t.name() == name)
            }

            /// The element type `T` as a run-time value, if it is one of the
            /// list (host only); a user's own element type is not.
            ///
            /// ```
            /// use gpu::names::DType;
            /// assert_eq!(DType::of::<f32>(), Some(DType::F32));
            /// ```
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn of<T: crate::op::Element>() -> Option<DType> {
                DType::from_name(T::NAME)
            }
        }

        $(impl Listed for $t {
            const DTYPE: DType = DType::$V;
        })*
    };
}
with_all_types!(dtype_enum!());

/// A type of the list as a run-time value, for the lists below.
trait Listed {
    const DTYPE: DType;
}

macro_rules! primitive_types {
    (; $($V:ident $t:ident),*) => {
        impl DType {
            /// The primitive types, which every kernel takes (the teaching ones too).
            ///
            /// ```
            /// assert_eq!(gpu::names::DType::PRIMITIVE.len(), 6);
            /// ```
            pub const PRIMITIVE: &'static [DType] = &[$(DType::$V),*];
        }
    };
}
with_types!(primitive_types!());

macro_rules! op_enum {
    (; $($V:ident $name:ident [$($T:ident $t:ident),*]),*) => {
        /// An operation of the library, as a run-time value.
        ///
        /// ```
        /// use gpu::names::{DType, Op};
        /// assert_eq!(Op::ALL.iter().map(|o| o.name()).collect::<Vec<_>>(), [
        ///     "sum", "min", "max", "argmin", "argmax", "dot", "sum_squares", "norm", "mean", "prod", "all", "any",
        ///     "count_nonzero", "aminmax", "nansum", "nanmean", "norm1", "norm_inf", "norm_neg_inf",
        ///     "moments", "logsumexp", "nanmin", "nanmax", "power_sum",
        /// ]);
        /// assert_eq!(Op::from_name("max"), Some(Op::Max));
        /// assert!(Op::Max.is_plain() && !Op::ArgMax.is_plain());
        /// assert!(Op::ArgMax.types().contains(&DType::BF16) && !Op::Dot.types().contains(&DType::I32));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op {
            $(#[doc = concat!("[`crate::op::", stringify!($V), "`]")] $V,)*
        }

        impl Op {
            /// Every operation, in the order of the list.
            pub const ALL: &'static [Op] = &[$(Op::$V),*];

            /// The name in entry names: `sum`, `argmax`, `sum_squares`, ...
            pub const fn name(self) -> &'static str {
                match self {
                    $(Op::$V => stringify!($name),)*
                }
            }

            /// The element types the default kernel takes it for.
            pub const fn types(self) -> &'static [DType] {
                match self {
                    $(Op::$V => &[$(DType::$T),*],)*
                }
            }

            /// The operation named `name`, if the kernels have it (host only).
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn from_name(name: &str) -> Option<Op> {
                Op::ALL.iter().copied().find(|o| o.name() == name)
            }
        }
    };
}
with_operations!(op_enum!());

macro_rules! paired_forms {
    (; $($V:ident $name:ident [$($T:ident $t:ident),*]),*) => {
        /// Whether the entry `segments_paired_{op}_{type}` has the form of
        /// two segments a lane ([`crate::shape::staged_pairs`] of the
        /// operation's inputs and accumulator, as the entry itself decides);
        /// the others hold only a `trap`, and the host never chooses them
        /// (host only).
        ///
        /// ```
        /// use gpu::names::{DType, Op, paired_form};
        /// assert!(paired_form(Op::Sum, DType::BF16) && paired_form(Op::Max, DType::U32));
        /// assert!(!paired_form(Op::Moments, DType::F32) && !paired_form(Op::Dot, DType::F32));
        /// assert!(!paired_form(Op::Sum, DType::F64));
        /// ```
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn paired_form(op: Op, ty: DType) -> bool {
            use crate::op::Reduction;
            match op {
                $(Op::$V => match ty {
                    $(DType::$T => crate::shape::staged_pairs(
                        <crate::op::$V as Reduction<$t>>::INPUTS,
                        size_of::<<crate::op::$V as Reduction<$t>>::Acc>(),
                    ),)*
                    #[allow(unreachable_patterns)]
                    _ => false,
                },)*
            }
        }
    };
}
with_operations!(paired_forms!());

/// What the reproducible kernel of an operation moves: its inputs, and the
/// bytes of its accumulator and of its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Inputs read (2 for a dot product).
    pub inputs: u32,
    /// Bytes of an accumulator (a partial).
    pub acc_bytes: usize,
    /// Bytes of the result.
    pub out_bytes: usize,
}

macro_rules! layouts {
    (; $($Op:ident $op:ident),* ; $($t:ident)*) => {
        layouts!(@types [$($Op),*] $($t)*);
    };
    (@types $ops:tt $($t:ident)*) => {
        /// The [`Layout`] of the reproducible kernel of operation `op` on
        /// `ty` (host only); `None` where there is no such kernel.
        ///
        /// ```
        /// use gpu::names::{DType, Layout, Op, layout};
        /// assert_eq!(layout(Op::Moments, DType::F32), Some(Layout { inputs: 1, acc_bytes: 24, out_bytes: 16 }));
        /// assert_eq!(layout(Op::Dot, DType::F64), Some(Layout { inputs: 2, acc_bytes: 8, out_bytes: 8 }));
        /// assert_eq!(layout(Op::Min, DType::F32), None);
        /// ```
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn layout(op: Op, ty: DType) -> Option<Layout> {
            $(if ty.name() == stringify!($t) {
                return layouts!(@ops op, $t, $ops);
            })*
            None
        }
    };
    (@ops $op:ident, $t:ident, [$($Op:ident),*]) => {
        match $op {
            $(Op::$Op => Some(Layout {
                inputs: <crate::op::$Op as crate::op::Reduction<$t>>::INPUTS,
                acc_bytes: size_of::<<crate::op::$Op as crate::op::Reduction<$t>>::Acc>(),
                out_bytes: size_of::<<crate::op::$Op as crate::op::Reduction<$t>>::Out>(),
            }),)*
            _ => None,
        }
    };
}
with_reproducible!(layouts!());

/// Whether `entry` is a `segments_paired_{op}_{type}` entry that holds only
/// a `trap`: one whose operation and type lack the form of two segments a
/// lane ([`paired_form`]), or whose operation is not one of [`Op`] (the
/// portable forms, whose accumulators are wider than 4 bytes). The host
/// never chooses them (host only).
///
/// ```
/// use gpu::names::paired_trap;
/// assert!(paired_trap("segments_paired_moments_f32") && paired_trap("segments_paired_sum_f64"));
/// assert!(paired_trap("segments_paired_logsumexp_portable_f32"));
/// assert!(!paired_trap("segments_paired_sum_bf16") && !paired_trap("segments_paired_power_sum_f32"));
/// assert!(!paired_trap("segments_staged_moments_f32"));
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn paired_trap(entry: &str) -> bool {
    let Some(rest) = entry.strip_prefix("segments_paired_") else {
        return false;
    };
    let form = rest.rsplit_once('_').and_then(|(op, ty)| Some(paired_form(Op::from_name(op)?, DType::from_name(ty)?)));
    form != Some(true)
}

macro_rules! is_plain {
    (; $($V:ident $name:ident),*) => {
        impl Op {
            /// The plain operators, which every kernel takes.
            ///
            /// ```
            /// assert_eq!(gpu::names::Op::PLAIN.len(), 3);
            /// ```
            pub const PLAIN: &'static [Op] = &[$(Op::$V),*];

            /// Whether it is a plain operator ([`crate::op::ReduceOp`]: sum,
            /// min, max), which every kernel takes, the teaching ones too.
            pub const fn is_plain(self) -> bool {
                matches!(self, $(Op::$V)|*)
            }
        }
    };
}
with_ops!(is_plain!());

macro_rules! by_key_types {
    (; $($t:ident)*) => {
        [$(<$t as Listed>::DTYPE),*]
    };
}

/// The value types the reduction-by-key kernels are compiled for.
///
/// ```
/// assert_eq!(gpu::names::by_key_types().map(|t| t.name()), ["f32", "f64"]);
/// ```
pub fn by_key_types() -> [DType; 2] {
    with_by_key_types!(by_key_types!())
}

macro_rules! reproducible_lists {
    (; $($V:ident $name:ident),* ; $($t:ident)*) => {
        /// The operations of the reproducible (`gpu_to_gpu`) kernel.
        ///
        /// ```
        /// assert_eq!(gpu::names::REPRODUCIBLE_OPS.map(|o| o.name()), ["sum", "dot", "sum_squares", "norm", "mean", "moments", "logsumexp"]);
        /// ```
        pub const REPRODUCIBLE_OPS: [Op; 7] = [$(Op::$V),*];

        /// The element types of the reproducible and accurate kernels.
        ///
        /// ```
        /// assert_eq!(gpu::names::MODE_TYPES.map(|t| t.name()), ["f32", "f64"]);
        /// ```
        pub const MODE_TYPES: [DType; 2] = [$(<$t as Listed>::DTYPE),*];
    };
}
with_reproducible!(reproducible_lists!());

macro_rules! shard_parts_list {
    (; $($Op:ident $name:ident [$($T:ident $t:ident),*]),*) => {
        /// The default kernel's entries for the multi-GPU path's parts
        /// (`with_shard_parts!`): each name with its element types.
        ///
        /// ```
        /// assert_eq!(gpu::names::SHARD_PARTS[0].0, "nanmean_parts");
        /// ```
        pub const SHARD_PARTS: &[(&str, &[DType])] = &[$((stringify!($name), &[$(DType::$T),*])),*];
    };
}
with_shard_parts!(shard_parts_list!());

macro_rules! portable_shapes_list {
    (; $($V:ident: $Op:ident $name:ident [$($T:ident $t:ident),*]),*) => {
        /// The shaped kernels' portable forms (`with_portable_shapes!`):
        /// each name, the operation it stands for under `gpu_to_gpu`, and
        /// its element types.
        ///
        /// ```
        /// use gpu::names::{DType, Op, PORTABLE_SHAPES};
        /// assert_eq!(PORTABLE_SHAPES, [("logsumexp_portable", Op::LogSumExp, &[DType::F32][..])]);
        /// ```
        pub const PORTABLE_SHAPES: &[(&str, Op, &[DType])] = &[$((stringify!($name), Op::$V, &[$(DType::$T),*])),*];
    };
}
with_portable_shapes!(portable_shapes_list!());

/// The entry of the hold kernel (`kernels/hold.rs`): `hold(flag: *const
/// u32, outcome: *mut u32, timeout_ns: u64)`, which spins until the host
/// sets `*flag` and then writes [`HOLD_RELEASED`] to `*outcome`, or writes
/// [`HOLD_TIMED_OUT`] after `timeout_ns` nanoseconds.
pub const HOLD_ENTRY: &str = "hold";

/// The hold kernel's outcome when the host set the flag in time.
pub const HOLD_RELEASED: u32 = 1;

/// The hold kernel's outcome when it gave up waiting for the flag.
pub const HOLD_TIMED_OUT: u32 = 2;

/// The launch bounds the host declares for an entry before the JIT compiles
/// it, as `(threads a block, blocks an SM)` (CUDA's
/// `__launch_bounds__`): `segments_staged`'s, `segments_paired`'s and
/// `segments_scheduled`'s
/// ([`STAGED_BLOCKS_PER_SM`](crate::shape::STAGED_BLOCKS_PER_SM)), the
/// accurate `f32` sum's ([`ACCURATE_F32_BOUNDS`](crate::layout::ACCURATE_F32_BOUNDS))
/// and the reproducible `f64` logsumexp's
/// ([`REPRODUCIBLE_LOGSUMEXP_F64_BOUNDS`](crate::layout::REPRODUCIBLE_LOGSUMEXP_F64_BOUNDS));
/// `None` for every other entry.
///
/// ```
/// use gpu::names::launch_bounds;
/// assert_eq!(launch_bounds("segments_staged_sum_f32"), Some((256, 4)));
/// assert_eq!(launch_bounds("segments_paired_sum_bf16"), Some((256, 4)));
/// assert_eq!(launch_bounds("segments_scheduled_moments_f32"), Some((256, 4)));
/// assert_eq!(launch_bounds("accurate_sum_f32"), Some((1024, 1)));
/// assert_eq!(launch_bounds("reproducible_logsumexp_f64"), Some((1024, 1)));
/// assert_eq!(launch_bounds("segments_sum_f32"), None);
/// assert_eq!(launch_bounds("accurate_sum_f64"), None);
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn launch_bounds(entry: &str) -> Option<(u32, u32)> {
    DECLARED_BOUNDS.iter().find(|(name, _)| declares(name, entry)).map(|&(_, bounds)| bounds)
}

/// The declarations [`launch_bounds`] gives: an entry's name, or a prefix
/// of names (ending in `_`), with its bounds. The host's tests check that
/// each one names an entry of the PTX (a renamed entry would lose its
/// declaration silently: the same results, slower).
#[cfg(not(target_arch = "nvptx64"))]
pub const DECLARED_BOUNDS: [(&str, (u32, u32)); 5] = [
    ("accurate_sum_f32", crate::layout::ACCURATE_F32_BOUNDS),
    ("segments_staged_", (crate::shape::SHAPE_BLOCK, crate::shape::STAGED_BLOCKS_PER_SM)),
    ("segments_paired_", (crate::shape::SHAPE_BLOCK, crate::shape::STAGED_BLOCKS_PER_SM)),
    ("segments_scheduled_", (crate::shape::SHAPE_BLOCK, crate::shape::STAGED_BLOCKS_PER_SM)),
    ("reproducible_logsumexp_f64", crate::layout::REPRODUCIBLE_LOGSUMEXP_F64_BOUNDS),
];

/// Whether the [`DECLARED_BOUNDS`] name `name` covers `entry`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn declares(name: &str, entry: &str) -> bool {
    if name.ends_with('_') { entry.starts_with(name) } else { entry == name }
}

/// The block size compiled into an entry named `{kernel}_b{block}_{op}_{type}`
/// (`entries.rs`), which it is only ever launched with; `None` for
/// `{kernel}_{op}_{type}`, whose block is chosen at launch. For the host
/// (its string handling has panic paths no kernel may carry).
///
/// ```
/// use gpu::names::compiled_block;
/// assert_eq!(compiled_block("single_pass_b1024_moments_bf16"), Some(1024));
/// assert_eq!(compiled_block("reduce7_b32_max_f64"), Some(32));
/// assert_eq!((compiled_block("reduce3_sum_i32"), compiled_block("segments_sum_bf16")), (None, None));
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn compiled_block(entry: &str) -> Option<u32> {
    entry.split('_').find_map(|part| part.strip_prefix('b')?.parse().ok())
}
