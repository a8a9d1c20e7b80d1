//! `AccumulateGrad`: adds the incoming gradient into a leaf's `.grad`.

use super::node::{Backward, Node};
use crate::Tensor;
use ferrotorch_core::Result;
use std::sync::Arc;

/// The rule of a leaf's `AccumulateGrad` node.
pub struct AccumulateGrad;

impl Backward for AccumulateGrad {
    fn apply(&mut self, node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let (Some(var), Some(Some(g))) = (node.variable(), grads.into_iter().next()) else {
            return Ok(Vec::new());
        };
        // Leaf gradients never carry history unless create_graph is on.
        let g = if super::grad_mode::is_grad_enabled() { g } else { g.detach() };
        let g = if g.dtype() != var.dtype() { g.to_dtype(var.dtype())? } else { g };
        let prev = var.grad();
        let new = match prev {
            None => {
                if super::grad_mode::is_grad_enabled() {
                    g
                } else {
                    // Own the buffer so later in-place accumulation cannot alias the
                    // caller's tensor, laid out by PyTorch's gradient layout contract:
                    // a non-overlapping, dense leaf (a transposed or channels-last
                    // weight) gets a gradient with its own strides, any other leaf a
                    // contiguous one.
                    let own = if var.layout().is_non_overlapping_and_dense() {
                        var.empty_like(var.dtype())?
                    } else {
                        Tensor::empty(var.shape(), var.dtype(), var.device())?
                    };
                    own.copy_(&g)?;
                    own
                }
            }
            Some(p) => {
                if super::grad_mode::is_grad_enabled() {
                    p.add(&g)?
                } else {
                    crate::ops::arith::binary_(&p, crate::ops::arith::Operand::T(&g), crate::ops::arith::BinaryOp::Add)?;
                    p
                }
            }
        };
        var.set_grad(Some(new));
        let hooks: Vec<_> = var.autograd().post_accumulate_hooks.iter().map(|(_, h)| h.clone()).collect();
        for h in hooks {
            h(var)?;
        }
        Ok(Vec::new())
    }
}
