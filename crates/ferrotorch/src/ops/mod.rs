//! The op layer: every op enters here once, checks its arguments, decides the
//! result dtype and shape, and dispatches to a backend kernel by (device, dtype).

/// Runs `$body` with `$T` bound to the Rust type of a floating `$dtype`; for
/// other dtypes returns PyTorch's "not implemented for 'Long'" error.
macro_rules! float_dispatch {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {
        match $dtype {
            ferrotorch_core::DType::Float16 => {
                type $T = half::f16;
                $body
            }
            ferrotorch_core::DType::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            ferrotorch_core::DType::Float32 => {
                type $T = f32;
                $body
            }
            ferrotorch_core::DType::Float64 => {
                type $T = f64;
                $body
            }
            other => {
                return Err(ferrotorch_core::Error::runtime(format!(
                    "\"{}\" not implemented for '{}'",
                    $op,
                    crate::ops::creation::pretty(other)
                )))
            }
        }
    };
}

pub mod activation;
pub mod arith;
mod arith_grad;
mod binary_ext;
pub mod math;
mod unary_ext;
pub mod conv;
pub mod copy;
pub mod creation;
pub mod einsum;
pub mod indexing;
pub mod linalg;
pub mod loss;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod rnn;
pub mod reduce;
pub mod shape;
pub mod reduction;
pub mod softmax;
pub mod sort;
mod stl_sort;
pub mod ternary;
pub mod view;
pub mod view_grad;

use crate::Tensor;
use ferrotorch_core::{Error, Layout, Result};
use ferrotorch_cpu::{Dst, Src};

impl Tensor {
    /// This tensor as a kernel input.
    pub(crate) fn src(&self) -> Src<'_> {
        Src { base: self.storage().as_ptr(), layout: self.layout() }
    }
    /// This tensor as a kernel output.
    pub(crate) fn dst(&self) -> Dst<'_> {
        Dst { base: self.storage().as_mut_ptr(), layout: self.layout() }
    }
}

/// A borrowed layout broadcast to `shape` (stride 0 on new or size-1 dims).
pub(crate) fn broadcast_layout(t: &Tensor, shape: &[usize]) -> Result<Layout> {
    // Same shape (the common case): no broadcasting, no size list to build.
    if t.shape() == shape {
        return Ok(t.layout().clone());
    }
    let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    t.layout().expand(&sizes)
}

/// Every tensor of an op must live on the CPU until the CUDA backend lands.
pub(crate) fn check_cpu(op: &str, ts: &[&Tensor]) -> Result<()> {
    if let Some(t) = ts.iter().find(|t| !t.device().is_cpu()) {
        return Err(Error::runtime(format!("{op}: no kernel for device {}", t.device())));
    }
    Ok(())
}
