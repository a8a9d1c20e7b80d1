//! `Linear`, `Embedding` and `Flatten`.

use ferrotorch_core::{DType, Error, Result};

use super::init;
use super::module::{Entry, Module};
use crate::Tensor;

/// `nn.Linear(in_features, out_features, bias)`: `y = x @ weight.T + bias`,
/// `weight` of shape `(out_features, in_features)`.
pub struct Linear {
    /// `(out_features, in_features)`.
    pub weight: Tensor,
    /// `(out_features,)`, when the layer has one.
    pub bias: Option<Tensor>,
}

impl Linear {
    /// A layer initialised as PyTorch initialises it (uniform on ±1/sqrt(in_features)).
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Result<Linear> {
        let bound = init::fan_in_bound(in_features);
        Ok(Linear {
            weight: init::uniform(&[out_features, in_features], bound)?,
            bias: if bias { Some(init::uniform(&[out_features], bound)?) } else { None },
        })
    }
}

impl Module for Linear {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        super::functional::linear(input, &self.weight, self.bias.as_ref())
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        f(Entry::Parameter("weight", &self.weight));
        if let Some(b) = &self.bias {
            f(Entry::Parameter("bias", b));
        }
    }
}

/// `nn.Embedding(num_embeddings, embedding_dim)`: rows of `weight` picked
/// by integer indices of any shape.
pub struct Embedding {
    /// `(num_embeddings, embedding_dim)`.
    pub weight: Tensor,
}

impl Embedding {
    /// A table drawn from the standard normal, as PyTorch's.
    pub fn new(num_embeddings: usize, embedding_dim: usize) -> Result<Embedding> {
        Ok(Embedding { weight: init::normal(&[num_embeddings, embedding_dim])? })
    }
}

impl Module for Embedding {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        if !matches!(input.dtype(), DType::Int64 | DType::Int32) {
            return Err(Error::runtime(format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {} instead (while checking arguments for embedding)",
                input.dtype()
            )));
        }
        let rows = self.weight.index_select(0, &input.reshape(&[-1])?)?;
        let mut shape: Vec<i64> = input.shape().iter().map(|&d| d as i64).collect();
        shape.push(self.weight.shape()[1] as i64);
        rows.view(&shape)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        f(Entry::Parameter("weight", &self.weight));
    }
}

/// `nn.Flatten(start_dim, end_dim)` (PyTorch's defaults are 1 and -1).
pub struct Flatten {
    /// First dim flattened.
    pub start_dim: i64,
    /// Last dim flattened.
    pub end_dim: i64,
}

impl Default for Flatten {
    fn default() -> Self {
        Flatten { start_dim: 1, end_dim: -1 }
    }
}

impl Module for Flatten {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.flatten(self.start_dim, self.end_dim)
    }
}
