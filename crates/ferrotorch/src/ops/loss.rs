//! Pointwise losses with PyTorch's own backward kernels (rather than the
//! composition of their forward ops, whose rounding and overflow differ).

use super::arith::{binary, BinaryOp, Operand};
use super::arith_grad::{g0, reduce_grad};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result, Scalar};

/// `reduction` of PyTorch's loss functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
}

impl Tensor {
    /// `mse_loss(self, target, reduction)`, recording `MseLossBackward0`.
    /// PyTorch's backward kernel is `norm * (x - y) * g` with `norm` 2 (2/n for
    /// a mean) in the input dtype, so `2 * (x - y)` overflows on its own where
    /// the gradient of `d * d` (`g*d + d*g`) would not, and the reverse.
    pub fn mse_loss(&self, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
        let dt = DType::promote(self.dtype(), target.dtype());
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"mse_cpu\" not implemented for '{}'", super::creation::pretty(dt))));
        }
        let (x, y) = (self.detach().to_dtype(dt)?, target.detach().to_dtype(dt)?);
        let (out, n) = {
            let _no_grad = GradModeGuard::new(false);
            let d = binary(Operand::T(&x), Operand::T(&y), BinaryOp::Sub)?;
            let l = binary(Operand::T(&d), Operand::T(&d), BinaryOp::Mul)?;
            let n = l.numel();
            let out = match reduction {
                Reduction::None => l,
                Reduction::Sum => l.sum()?,
                Reduction::Mean => l.mean_dims(None, false, None)?,
            };
            (out, n)
        };
        let norm = if reduction == Reduction::Mean { 2.0 / n as f64 } else { 2.0 };
        let (sx, sy) = (SavedTensor::input(self), SavedTensor::input(target));
        let (xs, ys) = (self.shape().to_vec(), target.shape().to_vec());
        let (xd, yd) = (self.dtype(), target.dtype());
        let (wx, wy) = (self.requires_grad(), target.requires_grad());
        record("MseLossBackward0", &[Some(self), Some(target)], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None, None]) };
                let (x, y) = (sx.unpack(node)?.to_dtype(dt)?, sy.unpack(node)?.to_dtype(dt)?);
                // The scalar is cast to the dtype first, as the kernel's `scalar_t`.
                let normt = Tensor::full(&[], Scalar::Float(norm), dt, x.device())?;
                let side = |a: &Tensor, b: &Tensor, shape: &[usize], dtype: DType| -> Result<Tensor> {
                    let d = binary(Operand::T(a), Operand::T(b), BinaryOp::Sub)?;
                    let r = binary(Operand::T(&normt), Operand::T(&d), BinaryOp::Mul)?;
                    let r = binary(Operand::T(&r), Operand::T(&g), BinaryOp::Mul)?;
                    reduce_grad(&r, shape, dtype)
                };
                let gx = if wx { Some(side(&x, &y, &xs, xd)?) } else { None };
                let gy = if wy { Some(side(&y, &x, &ys, yd)?) } else { None };
                Ok(vec![gx, gy])
            })
        });
        Ok(out)
    }
}
