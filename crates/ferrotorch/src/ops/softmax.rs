//! `softmax` and `log_softmax` along one dim, numerically stable (the row
//! maximum is subtracted first), with their derivative rules.

use super::arith::UnaryOp;
use super::arith_grad::{g0, mul, sub, un};
use super::reduction::scan_rows;
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use ferrotorch_core::{dispatch_dtype, DType, Element, Result};

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
            let (rows, finish) = scan_rows(&x, d)?;
            let n = rows.inner;
            let data: Vec<f64> = dispatch_dtype!(x.dtype(), T => rows.data::<T>().iter().map(|v| v.to_f64()).collect());
            let mut out = vec![0.0f64; data.len()];
            if n > 0 {
                for (r, o) in data.chunks(n).zip(out.chunks_mut(n)) {
                    let m = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    // A row of -inf has no finite max; PyTorch gives NaN there.
                    let m = if m.is_infinite() && m < 0.0 { 0.0 } else { m };
                    let s: f64 = r.iter().map(|v| (v - m).exp()).sum();
                    if log {
                        let ls = s.ln();
                        for (oi, v) in o.iter_mut().zip(r) {
                            *oi = v - m - ls;
                        }
                    } else {
                        for (oi, v) in o.iter_mut().zip(r) {
                            *oi = (v - m).exp() / s;
                        }
                    }
                }
            }
            finish(&Tensor::from_vec(out, rows.t.shape())?)?.to_dtype(x.dtype())?
        };
        let (so, dt) = (SavedTensor::output(&out, 0), x.dtype());
        let node = if log { "LogSoftmaxBackward0" } else { "SoftmaxBackward0" };
        record(node, &[Some(&x)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let y = so.unpack(node)?;
                let dims = [d as i64];
                let r = if x_is_scalar(&y) {
                    // softmax of a 0-d tensor is constant.
                    super::arith_grad::zeros_like(&g)?
                } else if log {
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

fn x_is_scalar(y: &Tensor) -> bool {
    y.ndim() == 0
}
