//! Macros that turn run-time choices (`--type f32 --op max`) into calls of
//! generic functions. [`DType`](crate::DType) and [`Op`](crate::Op) come from
//! the kernels' one list (`gpu/src/names.rs`); the `match`es below are
//! exhaustive, so a type added there fails to compile here until it is
//! handled.

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
