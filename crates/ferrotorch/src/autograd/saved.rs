//! Saved tensors: what a backward rule keeps from the forward pass, with the
//! version it had, so in-place changes are caught instead of silently giving
//! wrong gradients.

use super::node::{released_error, Node};
use crate::Tensor;
use ferrotorch_core::{Error, Result};
use std::sync::Arc;

/// A tensor saved for backward.
pub struct SavedTensor {
    data: Option<Tensor>,
    version: u64,
    /// Saved outputs of the node itself are stored without their `grad_fn`
    /// (which would be a reference cycle) and re-attached on unpack.
    is_output: bool,
    output_nr: usize,
    requires_grad: bool,
}

impl SavedTensor {
    /// Saves an input of the op (kept with its history).
    pub fn input(t: &Tensor) -> SavedTensor {
        SavedTensor { data: Some(t.clone()), version: t.version(), is_output: false, output_nr: 0, requires_grad: false }
    }

    /// Saves an output of the op (kept as data only).
    pub fn output(t: &Tensor, output_nr: usize) -> SavedTensor {
        SavedTensor { data: Some(t.detach()), version: t.version(), is_output: true, output_nr, requires_grad: true }
    }

    /// The saved tensor, checking that no in-place op changed it since.
    pub fn unpack(&self, node: &Arc<Node>) -> Result<Tensor> {
        let t = self.data.as_ref().ok_or_else(released_error)?;
        if t.version() != self.version {
            return Err(Error::runtime(format!(
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {}], which is output {} of {}, is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
                legacy_name(t),
                ferrotorch_core::layout::fmt_shape(t.shape()),
                self.output_nr,
                node.name(),
                t.version(),
                self.version
            )));
        }
        if self.is_output && self.requires_grad && super::grad_mode::is_grad_enabled() {
            // Re-attach the history so double backward flows through this node.
            let r = t.detach();
            super::set_history(&r, node.clone(), self.output_nr);
            return Ok(r);
        }
        Ok(t.clone())
    }

    /// Frees the saved data.
    pub fn release(&mut self) {
        self.data = None;
    }
}

fn legacy_name(t: &Tensor) -> &'static str {
    use ferrotorch_core::DType::*;
    match t.dtype() {
        Bool => "torch.BoolTensor",
        UInt8 => "torch.ByteTensor",
        Int8 => "torch.CharTensor",
        Int16 => "torch.ShortTensor",
        Int32 => "torch.IntTensor",
        Int64 => "torch.LongTensor",
        Float16 => "torch.HalfTensor",
        BFloat16 => "torch.BFloat16Tensor",
        Float32 => "torch.FloatTensor",
        Float64 => "torch.DoubleTensor",
    }
}
