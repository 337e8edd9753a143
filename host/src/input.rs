//! What the library reduces: the element types ([`Element`]) and where the
//! elements are ([`Input`]: a host slice or a cudarc device buffer).

use cudarc::driver::{CudaSlice, CudaView, DeviceRepr, ValidAsZeroBits};

use crate::error::{Error, Result};
use gpu::op::Reduction;

use gpu::half::{bf16, f16};

/// An element type the library reduces: `i32, u32, i64, u64, f32, f64` and
/// the half types `f16`, `bf16` (the `half` crate's), or a type of your
/// own that your kernels read (a complex number: it implements the device
/// library's `Element`, cudarc's `DeviceRepr` and `ValidAsZeroBits`,
/// `Default` and `Display`, then this; see `examples/custom-op`).
///
/// Integer sums wrap on overflow (like CUDA's `int`); float results follow
/// the rules in [`gpu::op`] (NaN propagates, `-0.0 < +0.0` for min/max);
/// half-precision sums accumulate in `f32` and return `f32`.
///
/// ```no_run
/// use reduction::{Element, Reducer, Result, Sum, op::ReduceOp};
/// fn mean<T: Element + Into<f64>>(r: &Reducer, xs: &[T]) -> Result<f64>
/// where
///     Sum: ReduceOp<T>,
/// {
///     Ok(r.sum(xs)?.into() / xs.len() as f64)
/// }
/// let r = Reducer::new()?;
/// assert_eq!(mean(&r, &[1.0f32, 2.0])?, 1.5);
/// assert_eq!(mean(&r, &[1u32, 2, 3, 4])?, 2.5);
/// # Ok::<(), reduction::Error>(())
/// ```
pub trait Element: gpu::op::Element + DeviceRepr + ValidAsZeroBits + Default + std::fmt::Display {}
impl Element for i32 {}
impl Element for u32 {}
impl Element for i64 {}
impl Element for u64 {}
impl Element for f32 {}
impl Element for f64 {}
impl Element for f16 {}
impl Element for bf16 {}

/// Where the elements to reduce are.
///
/// ```
/// use reduction::{Input, Source};
/// let data = [1.0f32, 2.0];
/// match data[..].source() {
///     Source::Host(s) => assert_eq!(s, [1.0, 2.0]),
///     Source::Device(_) => unreachable!("a host slice"),
/// }
/// ```
#[derive(Debug)]
pub enum Source<'a, T> {
    /// In host memory: copied to a device staging buffer first.
    Host(&'a [T]),
    /// Already on the device.
    Device(CudaView<'a, T>),
}

/// Something to reduce: a host slice or a cudarc device buffer.
///
/// ```
/// use reduction::{Input, Source};
/// assert!(matches!(vec![1i32, 2].source(), Source::Host(s) if s.len() == 2));
/// ```
pub trait Input<T> {
    /// Where the elements are.
    ///
    /// ```
    /// use reduction::{Input, Source};
    /// let v = vec![3u64, 4];
    /// assert!(matches!(v.source(), Source::Host([3, 4])));
    /// ```
    fn source(&self) -> Source<'_, T>;
}

impl<T> Input<T> for [T] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T, const N: usize> Input<T> for [T; N] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for Vec<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for CudaSlice<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self.as_view())
    }
}

impl<T> Input<T> for CudaView<'_, T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self.slice(..))
    }
}

/// The elements of `inputs` for operation `R`, once checked: the number of
/// inputs and their lengths.
pub(crate) fn check_inputs<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(inputs: &[&D]) -> Result<usize> {
    if !(1..=2).contains(&R::INPUTS) {
        return Err(Error::Invalid(format!("{}: INPUTS is {}, where the kernels take 1 or 2", R::NAME, R::INPUTS)));
    }
    if inputs.len() != R::INPUTS as usize {
        return Err(Error::Invalid(format!("{} takes {} input(s), given {}", R::NAME, R::INPUTS, inputs.len())));
    }
    let n = len(&inputs[0].source());
    if let Some(other) = inputs.get(1).map(|d| len(&d.source())).filter(|&m| m != n) {
        return Err(Error::InputsDiffer { op: R::NAME, a: n, b: other });
    }
    Ok(n)
}

/// The result of no elements: `finish(IDENTITY, 0)`, or [`Error::Empty`]
/// for an operation without one (arg-min/max).
pub(crate) fn empty<R: Reduction<T>, T>() -> Result<R::Out> {
    if R::NEEDS_AN_ELEMENT {
        return Err(Error::Empty { op: R::NAME });
    }
    Ok(R::finish(R::IDENTITY, 0))
}

/// The elements a source holds.
pub(crate) fn len<T>(s: &Source<'_, T>) -> usize {
    match s {
        Source::Host(h) => h.len(),
        Source::Device(v) => v.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user's operation that names no input: refused, not indexed.
    struct NoInput;
    impl Reduction<f32> for NoInput {
        type Acc = f32;
        type Out = f32;
        const NAME: &'static str = "no_input";
        const INPUTS: u32 = 0;
        const IDENTITY: f32 = 0.0;
        fn map(x: f32, _: f32, _: u64) -> f32 {
            x
        }
        fn combine(a: f32, b: f32) -> f32 {
            a + b
        }
        fn finish(acc: f32, _: u64) -> f32 {
            acc
        }
    }

    #[test]
    fn an_operation_of_no_inputs_is_an_error() {
        let none: [&[f32]; 0] = [];
        let e = check_inputs::<NoInput, f32, [f32]>(&none).unwrap_err().to_string();
        assert!(e.contains("INPUTS is 0, where the kernels take 1 or 2"), "{e}");
        assert_eq!(check_inputs::<crate::Sum, f32, [f32]>(&[&[1.0, 2.0][..]]).unwrap(), 2);
    }
}
