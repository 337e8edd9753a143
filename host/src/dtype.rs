//! Element types as a run-time value, and macros that turn run-time choices
//! (`--type f32 --op max`) into calls of generic functions.

use serde::Serialize;

use crate::error::{Error, Result};

/// An element type, as a run-time value.
///
/// ```
/// use reduction::DType;
/// assert_eq!(DType::ALL.map(DType::size), [4, 4, 8, 8, 4, 8]);
/// assert_eq!(DType::parse("f32").unwrap(), DType::F32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum DType {
    /// `i32`: 32-bit signed integer.
    I32,
    /// `u32`: 32-bit unsigned integer.
    U32,
    /// `i64`: 64-bit signed integer.
    I64,
    /// `u64`: 64-bit unsigned integer.
    U64,
    /// `f32`: 32-bit float.
    F32,
    /// `f64`: 64-bit float.
    F64,
}

impl DType {
    /// All element types.
    ///
    /// ```
    /// let names: Vec<&str> = reduction::DType::ALL.iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["i32", "u32", "i64", "u64", "f32", "f64"]);
    /// ```
    pub const ALL: [DType; 6] = [DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64];

    /// The name in entry names: `i32` ... `f64`.
    ///
    /// ```
    /// assert_eq!(reduction::DType::F64.name(), "f64");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Bytes per element.
    ///
    /// ```
    /// assert_eq!(reduction::DType::U64.size(), 8);
    /// ```
    pub fn size(self) -> usize {
        match self {
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// Parse a type name.
    ///
    /// ```
    /// assert_eq!(reduction::DType::parse("u32").unwrap(), reduction::DType::U32);
    /// assert!(reduction::DType::parse("f16").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<DType> {
        DType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::Invalid(format!("unknown type {s:?} (valid: i32, u32, i64, u64, f32, f64)")))
    }
}

/// Evaluate `$body` with the type alias `$T` set to the Rust type of `$dtype`.
///
/// ```
/// use reduction::{with_dtype, DType};
/// let size = with_dtype!(DType::F64, |T| std::mem::size_of::<T>());
/// assert_eq!(size, 8);
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, |$T:ident| $body:expr) => {
        match $dtype {
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Evaluate `$body` with the type alias `$O` set to the operator type of `$op`.
///
/// ```
/// use reduction::{with_op, Op, ReduceOp};
/// assert_eq!(with_op!(Op::Max, |O| <O as ReduceOp<i32>>::IDENTITY), i32::MIN);
/// ```
#[macro_export]
macro_rules! with_op {
    ($op:expr, |$O:ident| $body:expr) => {
        match $op {
            $crate::Op::Sum => {
                type $O = $crate::Sum;
                $body
            }
            $crate::Op::Min => {
                type $O = $crate::Min;
                $body
            }
            $crate::Op::Max => {
                type $O = $crate::Max;
                $body
            }
        }
    };
}
