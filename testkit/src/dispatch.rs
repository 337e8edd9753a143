//! Macros that turn run-time choices (`--type bf16 --op argmax`) into calls
//! of generic functions, for the tests and the command line (a library user
//! names the types). [`DType`](reduction::DType) and [`Op`](reduction::Op) come
//! from the kernels' one list (`gpu/src/names.rs`); the `match`es below are
//! exhaustive, so a type or operation added there fails to compile here
//! until it is handled, and a test checks that [`with_operation!`](crate::with_operation) reaches
//! exactly the pairs of `Op::types`.

/// Evaluate `$body` with the type alias `$T` set to the Rust type of `$dtype`
/// (any element type).
///
/// ```
/// use reduction::DType;
/// use testkit::with_dtype;
/// assert_eq!(with_dtype!(DType::F64, |T| std::mem::size_of::<T>()), 8);
/// assert_eq!(with_dtype!(DType::BF16, |T| std::mem::size_of::<T>()), 2);
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, |$T:ident| $body:expr) => {
        match $dtype {
            $crate::reduction::DType::F16 => {
                type $T = $crate::reduction::half::f16;
                $body
            }
            $crate::reduction::DType::BF16 => {
                type $T = $crate::reduction::half::bf16;
                $body
            }
            other => $crate::with_plain_dtype!(other, |$T| $body, else unreachable!()),
        }
    };
}

/// Evaluate `$body` with `$T` set to the primitive type of `$dtype` (the
/// types every kernel takes), or `$half` for a half type.
///
/// ```
/// use reduction::DType;
/// use testkit::with_plain_dtype;
/// assert_eq!(with_plain_dtype!(DType::U32, |T| Some(std::mem::size_of::<T>()), else None), Some(4));
/// assert_eq!(with_plain_dtype!(DType::F16, |T| Some(std::mem::size_of::<T>()), else None), None);
/// ```
#[macro_export]
macro_rules! with_plain_dtype {
    ($dtype:expr, |$T:ident| $body:expr, else $half:expr) => {
        match $dtype {
            $crate::reduction::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::reduction::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::reduction::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::reduction::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::reduction::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::reduction::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::reduction::DType::F16 | $crate::reduction::DType::BF16 => $half,
        }
    };
}

/// Evaluate `$body` with `$O` set to the plain operator of `$op` (sum, min,
/// max: the ones every kernel takes), or `$other` for another operation.
///
/// ```
/// use reduction::{Op, op::Reduction};
/// use testkit::with_op;
/// assert_eq!(with_op!(Op::Max, |O| Some(<O as Reduction<i32>>::IDENTITY), else None), Some(i32::MIN));
/// assert_eq!(with_op!(Op::Dot, |O| Some(<O as Reduction<i32>>::IDENTITY), else None), None);
/// ```
#[macro_export]
macro_rules! with_op {
    ($op:expr, |$O:ident| $body:expr, else $other:expr) => {
        match $op {
            $crate::reduction::Op::Sum => {
                type $O = $crate::reduction::Sum;
                $body
            }
            $crate::reduction::Op::Min => {
                type $O = $crate::reduction::Min;
                $body
            }
            $crate::reduction::Op::Max => {
                type $O = $crate::reduction::Max;
                $body
            }
            _ => $other,
        }
    };
}

/// Evaluate `$body` with `$R` set to the operation of `$op` and `$T` to the
/// type of `$dtype`, where the default kernel has that pair (`Op::types`),
/// else `$unsupported`.
///
/// ```
/// use reduction::{DType, Op, op::Reduction};
/// use testkit::with_operation;
/// let name = |op, t| with_operation!(op, t, |R, T| Some(<R as Reduction<T>>::NAME), else None);
/// assert_eq!(name(Op::ArgMax, DType::BF16), Some("argmax"));
/// assert_eq!(name(Op::Dot, DType::I32), None); // no dot product of integers
/// ```
#[macro_export]
macro_rules! with_operation {
    ($op:expr, $dtype:expr, |$R:ident, $T:ident| $body:expr, else $unsupported:expr) => {
        match $op {
            $crate::reduction::Op::Sum => $crate::with_operation!(@any $crate::reduction::Sum, $dtype, |$R, $T| $body),
            $crate::reduction::Op::Min => $crate::with_operation!(@any $crate::reduction::Min, $dtype, |$R, $T| $body),
            $crate::reduction::Op::Max => $crate::with_operation!(@any $crate::reduction::Max, $dtype, |$R, $T| $body),
            $crate::reduction::Op::ArgMin => $crate::with_operation!(@any $crate::reduction::ArgMin, $dtype, |$R, $T| $body),
            $crate::reduction::Op::ArgMax => $crate::with_operation!(@any $crate::reduction::ArgMax, $dtype, |$R, $T| $body),
            $crate::reduction::Op::Dot => $crate::with_operation!(@float $crate::reduction::op::Dot, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::SumSquares => {
                $crate::with_operation!(@float $crate::reduction::op::SumSquares, $dtype, |$R, $T| $body, $unsupported)
            }
            $crate::reduction::Op::Norm => $crate::with_operation!(@float $crate::reduction::op::Norm, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::Mean => $crate::with_operation!(@float $crate::reduction::op::Mean, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::Prod => $crate::with_operation!(@any $crate::reduction::op::Prod, $dtype, |$R, $T| $body),
            $crate::reduction::Op::All => $crate::with_operation!(@any $crate::reduction::op::All, $dtype, |$R, $T| $body),
            $crate::reduction::Op::Any => $crate::with_operation!(@any $crate::reduction::op::Any, $dtype, |$R, $T| $body),
            $crate::reduction::Op::CountNonzero => {
                $crate::with_operation!(@any $crate::reduction::op::CountNonzero, $dtype, |$R, $T| $body)
            }
            $crate::reduction::Op::AMinMax => $crate::with_operation!(@any $crate::reduction::op::AMinMax, $dtype, |$R, $T| $body),
            $crate::reduction::Op::NanSum => $crate::with_operation!(@float $crate::reduction::op::NanSum, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::NanMean => $crate::with_operation!(@float $crate::reduction::op::NanMean, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::Moments => $crate::with_operation!(@float $crate::reduction::op::Moments, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::LogSumExp => $crate::with_operation!(@float $crate::reduction::op::LogSumExp, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::NanMin => $crate::with_operation!(@float $crate::reduction::op::NanMin, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::NanMax => $crate::with_operation!(@float $crate::reduction::op::NanMax, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::Norm1 => $crate::with_operation!(@float $crate::reduction::op::Norm1, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::NormInf => $crate::with_operation!(@float $crate::reduction::op::NormInf, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::NormNegInf => $crate::with_operation!(@float $crate::reduction::op::NormNegInf, $dtype, |$R, $T| $body, $unsupported),
            $crate::reduction::Op::PowerSum => $crate::with_operation!(@float $crate::reduction::op::PowerSum, $dtype, |$R, $T| $body, $unsupported),
        }
    };
    (@any $op:ty, $dtype:expr, |$R:ident, $T:ident| $body:expr) => {{
        type $R = $op;
        $crate::with_dtype!($dtype, |$T| $body)
    }};
    (@float $op:ty, $dtype:expr, |$R:ident, $T:ident| $body:expr, $unsupported:expr) => {{
        type $R = $op;
        match $dtype {
            $crate::reduction::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::reduction::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::reduction::DType::F16 => {
                type $T = $crate::reduction::half::f16;
                $body
            }
            $crate::reduction::DType::BF16 => {
                type $T = $crate::reduction::half::bf16;
                $body
            }
            _ => $unsupported,
        }
    }};
}

#[cfg(test)]
mod tests {
    use reduction::{DType, Op};

    #[test]
    fn with_operation_reaches_exactly_the_listed_pairs() {
        for &op in Op::ALL {
            for &t in DType::ALL {
                let reached = with_operation!(op, t, |R, T| size_of::<R>() + size_of::<T>() < usize::MAX, else false);
                assert_eq!(reached, op.types().contains(&t), "{op:?} {t:?}");
            }
        }
    }
}
