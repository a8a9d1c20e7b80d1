//! Fresh parameters, initialised as PyTorch's layer constructors initialise
//! theirs (the distributions, not the draws: the generator differs).
//!
//! ```
//! use ferrotorch::nn::init;
//! let w = init::uniform(&[4, 3], 0.5).unwrap();
//! assert!(w.requires_grad());
//! assert!(w.to_vec::<f32>().unwrap().iter().all(|v| v.abs() <= 0.5));
//! ```

use ferrotorch_core::{Device, Result, Scalar};

use super::functional::{scale, shift};
use crate::defaults::default_dtype;
use crate::Tensor;

/// A leaf that requires grad, as `nn.Parameter(t)`.
pub fn parameter(t: Tensor) -> Result<Tensor> {
    t.set_requires_grad(true)?;
    Ok(t)
}

/// Uniform on `[-bound, bound)` in the default dtype.
pub fn uniform(shape: &[usize], bound: f64) -> Result<Tensor> {
    let t = Tensor::rand(shape, default_dtype(), None)?;
    let scaled = scale(&t, 2.0 * bound)?;
    parameter(shift(&scaled, -bound)?)
}

/// Standard normal in the default dtype (`nn.Embedding`'s weights).
pub fn normal(shape: &[usize]) -> Result<Tensor> {
    parameter(Tensor::randn(shape, default_dtype(), None)?)
}

/// A constant in the default dtype (norm weights and biases).
pub fn constant(shape: &[usize], value: f64) -> Result<Tensor> {
    parameter(Tensor::full(shape, Scalar::Float(value), default_dtype(), Device::CPU)?)
}

/// The bound of `kaiming_uniform_(a=sqrt(5))` and of the matching bias
/// init, `1/sqrt(fan_in)`, that Linear and the convolutions use.
pub fn fan_in_bound(fan_in: usize) -> f64 {
    if fan_in == 0 {
        0.0
    } else {
        1.0 / (fan_in as f64).sqrt()
    }
}
