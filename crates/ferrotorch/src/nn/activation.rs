//! The activation layers and `Dropout`.

use std::sync::atomic::{AtomicBool, Ordering};

use ferrotorch_core::{Error, Result};

use super::functional as F;
use super::module::Module;
use crate::Tensor;

/// `nn.ReLU()`.
#[derive(Default)]
pub struct ReLU;

impl Module for ReLU {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::relu(input)
    }
}

/// `nn.GELU(approximate)`: `"none"` (exact, PyTorch's default) or `"tanh"`.
pub struct GELU {
    tanh: bool,
}

impl GELU {
    /// `approximate` is `"none"` or `"tanh"`.
    pub fn new(approximate: &str) -> Result<GELU> {
        match approximate {
            "none" => Ok(GELU { tanh: false }),
            "tanh" => Ok(GELU { tanh: true }),
            other => Err(Error::runtime(format!("approximate argument must be either none or tanh., got {other}"))),
        }
    }
}

impl Default for GELU {
    fn default() -> Self {
        GELU { tanh: false }
    }
}

impl Module for GELU {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::gelu(input, if self.tanh { "tanh" } else { "none" })
    }
}

/// `nn.SiLU()`.
#[derive(Default)]
pub struct SiLU;

impl Module for SiLU {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::silu(input)
    }
}

/// `nn.Tanh()`.
#[derive(Default)]
pub struct Tanh;

impl Module for Tanh {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::tanh(input)
    }
}

/// `nn.Sigmoid()`.
#[derive(Default)]
pub struct Sigmoid;

impl Module for Sigmoid {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::sigmoid(input)
    }
}

/// `nn.Softmax(dim)`.
pub struct Softmax {
    /// The dim that sums to one.
    pub dim: i64,
}

impl Module for Softmax {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::softmax(input, self.dim)
    }
}

/// `nn.Dropout(p)`: the identity in evaluation; in training, zeroes each
/// element with probability `p` and scales the rest by `1/(1-p)`.
pub struct Dropout {
    /// Probability of an element being zeroed.
    pub p: f64,
    training: AtomicBool,
}

impl Dropout {
    /// A dropout layer in training mode, as PyTorch makes it.
    pub fn new(p: f64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::value(format!("dropout probability has to be between 0 and 1, but got {p}")));
        }
        Ok(Dropout { p, training: AtomicBool::new(true) })
    }
}

impl Module for Dropout {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::dropout(input, self.p, self.training.load(Ordering::Relaxed))
    }
    fn set_training(&self, on: bool) {
        self.training.store(on, Ordering::Relaxed);
    }
}
