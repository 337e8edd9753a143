//! The one list of what the kernels are instantiated for: element types,
//! operators and block sizes. `entries.rs` expands these lists into PTX
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

/// Calls `$m!(args; I32 i32, U32 u32, ...)`: every element type, as the
/// [`DType`] variant and the Rust type.
macro_rules! with_types {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64 }
    };
}

/// Calls `$m!(args; Sum sum, Min min, Max max)`: every operator, as the
/// operator type in `op` (and the [`Op`] variant) and its name in entries.
macro_rules! with_ops {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; Sum sum, Min min, Max max }
    };
}

/// Calls `$m!(args; f32 f64)`: the value types of reduction by key.
macro_rules! with_by_key_types {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! { $($args)* ; f32 f64 }
    };
}

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
        /// assert_eq!(DType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>(), ["i32", "u32", "i64", "u64", "f32", "f64"]);
        /// assert_eq!(DType::from_name("f64").map(DType::size), Some(8));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DType {
            $(#[doc = concat!("`", stringify!($t), "`")] $V,)*
        }

        impl DType {
            /// Every element type, in the order of the list.
            pub const ALL: &'static [DType] = &[$(DType::$V),*];

            /// The name in entry names: `i32` ... `f64`.
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
        }

        $(impl crate::op::Element for $t {
            const NAME: &'static str = stringify!($t);
            const DTYPE: DType = DType::$V;
        })*
    };
}
with_types!(dtype_enum!());

macro_rules! op_enum {
    (; $($V:ident $name:ident),*) => {
        /// An operator the kernels are instantiated with, as a run-time value.
        ///
        /// ```
        /// use gpu::names::Op;
        /// assert_eq!(Op::ALL.iter().map(|o| o.name()).collect::<Vec<_>>(), ["sum", "min", "max"]);
        /// assert_eq!(Op::from_name("max"), Some(Op::Max));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op {
            $(#[doc = concat!("[`crate::op::", stringify!($V), "`]")] $V,)*
        }

        impl Op {
            /// Every operator, in the order of the list.
            pub const ALL: &'static [Op] = &[$(Op::$V),*];

            /// The name in entry names: `sum`, `min`, `max`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Op::$V => stringify!($name),)*
                }
            }

            /// The operator named `name`, if the kernels have it (host only).
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn from_name(name: &str) -> Option<Op> {
                Op::ALL.iter().copied().find(|o| o.name() == name)
            }
        }
    };
}
with_ops!(op_enum!());

macro_rules! by_key_types {
    (; $($t:ident)*) => {
        [$(<$t as crate::op::Element>::DTYPE),*]
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
