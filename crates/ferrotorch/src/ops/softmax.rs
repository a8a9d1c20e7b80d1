//! `softmax` and `log_softmax` along one dim, numerically stable (the row
//! maximum is subtracted first), with their derivative rules.

use super::arith::UnaryOp;
use super::arith_grad::{g0, mul, sub, un};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use ferrotorch_core::{DType, Result};

impl Tensor {
    /// `softmax(dim, dtype)` (`log = false`) or `log_softmax(dim, dtype)`.
    /// Records `SoftmaxBackward0` / `LogSoftmaxBackward0`.
    pub fn softmax(&self, dim: i64, dtype: Option<DType>, log: bool) -> Result<Tensor> {
        let x = match dtype {
            Some(d) => self.to_dtype(d)?,
            None => self.clone(),
        };
        let name = if log { "log_softmax_lastdim_kernel_impl" } else { "softmax_lastdim_kernel_impl" };
        if !x.dtype().is_floating_point() {
            return Err(ferrotorch_core::Error::not_implemented(format!(
                "\"{name}\" not implemented for '{}'",
                super::creation::pretty(x.dtype())
            )));
        }
        let d = wrap_dim(dim, x.ndim())?;
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let out = Tensor::empty(x.shape(), x.dtype(), x.device())?;
            // Vectorised rows (max, exp, sum in the compute type), parallel
            // over rows; any strides.
            out.backend()?.softmax(x.operand()?.src(), out.operand_mut()?.dst(), x.dtype(), d, log)?;
            out
        };
        let (so, dt) = (SavedTensor::output(&out, 0), x.dtype());
        let node = if log { "LogSoftmaxBackward0" } else { "SoftmaxBackward0" };
        record(node, &[Some(&x)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let y = so.unpack(node)?;
                let dims = [d as i64];
                // PyTorch's _softmax_backward_data / _log_softmax_backward_data
                // also for a 0-d input (a one-element row): constant 1 (or 0)
                // away from NaN, but a NaN or infinite input gives NaN.
                let r = if log {
                    let s = g.sum_dims(Some(&dims), true, None)?;
                    sub(&g, &mul(&un(&y, UnaryOp::Exp)?, &s)?)?
                } else {
                    let s = mul(&g, &y)?.sum_dims(Some(&dims), true, None)?;
                    mul(&y, &sub(&g, &s)?)?
                };
                Ok(vec![Some(if r.dtype() != dt { r.to_dtype(dt)? } else { r })])
            })
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn softmax_is_stable_and_rows_sum_to_one() {
        let x = Tensor::from_vec(vec![1000.0f32, 1001.0, 1002.0, -5.0, 0.0, 5.0], &[2, 3]).unwrap();
        let s = x.softmax(1, None, false).unwrap().to_f64_vec().unwrap();
        assert!(s.iter().all(|v| v.is_finite()));
        assert!((s[..3].iter().sum::<f64>() - 1.0).abs() < 1e-6);
        let l = x.softmax(0, None, true).unwrap().to_f64_vec().unwrap();
        assert!((l[0] - 0.0).abs() < 1e-6 && l[3] < -1000.0);
    }
}
