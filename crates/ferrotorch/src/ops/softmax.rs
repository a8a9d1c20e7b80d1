//! `softmax` and `log_softmax` along one dim, numerically stable (the row
//! maximum is subtracted first), with their derivative rules.

use super::arith::UnaryOp;
use super::arith_grad::{g0, mul, sub, un};
use super::reduction::scan_rows;
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use super::math::{real_dispatch, Compute, Real};
use ferrotorch_core::{DType, Result};
use num_traits::Float as _;

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
            let out = Tensor::empty(rows.t.shape(), x.dtype(), x.device())?;
            real_dispatch!(x.dtype(), name, T => {
                // SAFETY: `out` is a fresh contiguous buffer of the same length as the rows.
                let dst = unsafe { std::slice::from_raw_parts_mut(out.data_ptr_mut() as *mut T, out.numel()) };
                softmax_rows::<T>(rows.data::<T>(), dst, rows.inner, log);
            });
            finish(&out)?
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

/// Softmax (or log-softmax) of each row of `n` elements, in the compute type,
/// with the sum accumulated in `f64`. Rows run in parallel for big inputs.
fn softmax_rows<T: Compute>(src: &[T], dst: &mut [T], n: usize, log: bool) {
    use rayon::prelude::*;
    if n == 0 {
        return;
    }
    let row = |(r, o): (&[T], &mut [T])| {
        let mut m = <T::C as num_traits::Float>::neg_infinity();
        for v in r {
            let v = v.up();
            // NaN-propagating max: a NaN row yields NaN everywhere.
            if v > m || v != v {
                m = v;
            }
        }
        // A row of -inf has no finite max; PyTorch gives NaN there (0/0).
        if m == <T::C as num_traits::Float>::neg_infinity() {
            m = <T::C as Real>::c(0.0);
        }
        let mut s = 0.0f64;
        for (oi, v) in o.iter_mut().zip(r) {
            let e = (v.up() - m).exp();
            s += e.f();
            if !log {
                *oi = T::down(e);
            }
        }
        if log {
            let ls = <T::C as Real>::c(s.ln());
            for (oi, v) in o.iter_mut().zip(r) {
                *oi = T::down(v.up() - m - ls);
            }
        } else {
            let inv = <T::C as Real>::c(1.0 / s);
            if std::mem::size_of::<T>() == std::mem::size_of::<T::C>() {
                for oi in o.iter_mut() {
                    *oi = T::down(oi.up() * inv);
                }
            } else {
                // Halves: recompute rather than round the exponentials twice.
                for (oi, v) in o.iter_mut().zip(r) {
                    *oi = T::down((v.up() - m).exp() * inv);
                }
            }
        }
    };
    if src.len() >= ferrotorch_cpu::iter::GRAIN && src.len() > n {
        src.par_chunks(n).zip(dst.par_chunks_mut(n)).for_each(row);
    } else {
        src.chunks(n).zip(dst.chunks_mut(n)).for_each(row);
    }
}

fn x_is_scalar(y: &Tensor) -> bool {
    y.ndim() == 0
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
