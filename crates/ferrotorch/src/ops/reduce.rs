//! Reductions over one dim, several dims, or all of them.

use crate::Tensor;
use ferrotorch_core::error::wrap_dims;
use ferrotorch_core::{DType, Error, Result};
use ferrotorch_core::op::ReduceKind;
use super::arith::{binary, BinaryOp, Operand};
use super::arith_grad::g0;
use crate::autograd::{record, rule, GradModeGuard};
use ferrotorch_core::Scalar;

/// Which dims a reduction folds, normalised and deduplicated.
pub fn reduced_dims(dims: Option<&[i64]>, ndim: usize) -> Result<Vec<bool>> {
    let mut mask = vec![false; ndim];
    match dims {
        None => mask.iter_mut().for_each(|m| *m = true),
        Some([]) => mask.iter_mut().for_each(|m| *m = true),
        Some(ds) => {
            // A 0-d tensor's dims -1/0 wrap to its one virtual dim: no mask bit.
            for w in wrap_dims(ds, ndim)? {
                if ndim > 0 {
                    mask[w] = true;
                }
            }
        }
    }
    Ok(mask)
}

/// [`reduced_dims`] for PyTorch's structured reductions (`sum`, `mean`,
/// `amax`/`amin`, `logsumexp`, `all`/`any`, `count_nonzero`): their meta
/// functions wrap every dim before looking for repeats, so an out-of-range
/// dim is an `IndexError` even after a repeated one (`var`, `std`, `norm`,
/// `flip` check in order and keep [`reduced_dims`]).
pub fn structured_reduced_dims(dims: Option<&[i64]>, ndim: usize) -> Result<Vec<bool>> {
    if let Some(ds) = dims {
        for &d in ds {
            ferrotorch_core::error::wrap_dim(d, ndim)?;
        }
    }
    reduced_dims(dims, ndim)
}

/// PyTorch's `set_history` check: an op that would record autograd history
/// (an input requires grad) cannot produce an integer or bool result, as
/// `sum(dtype=torch.int8)` of a tensor requiring grad would.
pub(crate) fn check_differentiable_dtype(input: &Tensor, out: &Tensor) -> Result<()> {
    if !out.dtype().is_differentiable() && crate::autograd::needs_grad(&[input]) {
        return Err(ferrotorch_core::Error::runtime(format!(
            "Autograd not support dtype: {}",
            crate::ops::creation::pretty(out.dtype())
        )));
    }
    Ok(())
}

impl Tensor {
    /// `sum(dim, keepdim, dtype)`; `dims = None` sums everything. Records
    /// `SumBackward0` (all dims) or `SumBackward1`.
    pub fn sum_dims(&self, dims: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let out = self.sum_dims_raw(dims, keepdim, dtype)?;
        check_differentiable_dtype(self, &out)?;
        if out.dtype().is_differentiable() && crate::autograd::needs_grad(&[self]) {
            let mask = reduced_dims(dims, self.ndim())?;
            let name = if dims.is_none() { "SumBackward0" } else { "SumBackward1" };
            let (shape, dt) = (self.shape().to_vec(), self.dtype());
            record(name, &[Some(self)], &[&out], move || {
                rule(move |_, g| {
                    let Some(g) = g0(g) else { return Ok(vec![None]) };
                    let e = expand_reduced(&g, &shape, &mask, keepdim)?;
                    Ok(vec![Some(if e.dtype() != dt { e.to_dtype(dt)? } else { e })])
                })
            });
        }
        Ok(out)
    }

    /// Reduces a broadcast tensor back to `shape` by summing (the backward of expand).
    pub fn sum_to(&self, shape: &[usize]) -> Result<Tensor> {
        if self.shape() == shape {
            return Ok(self.clone());
        }
        let lead = self.ndim() - shape.len().min(self.ndim());
        let mut dims: Vec<i64> = (0..lead as i64).collect();
        for (i, &s) in shape.iter().enumerate() {
            if s == 1 && self.shape().get(lead + i).is_some_and(|&v| v != 1) {
                dims.push((lead + i) as i64);
            }
        }
        let r = if dims.is_empty() { self.clone() } else { self.sum_dims(Some(&dims), true, None)? };
        let target: Vec<i64> = shape.iter().map(|&v| v as i64).collect();
        r.reshape(&target)
    }

    /// `sum` without autograd.
    pub fn sum_dims_raw(&self, dims: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let _no_grad = GradModeGuard::new(false);
        // PyTorch converts with `self.to(dtype)`: preserve_format strides,
        // which decide the order the float sum below visits elements in.
        let x = match dtype {
            Some(d) => self.to_dtype_preserve(d)?,
            None => self.clone(),
        };
        let out_dtype = if x.dtype().is_differentiable() { x.dtype() } else { dtype.unwrap_or(DType::Int64) };
        let mask = structured_reduced_dims(dims, x.ndim())?;
        if x.dtype().is_differentiable() {
            return cascade_sum(&x, &mask, keepdim);
        }
        super::reduction::reduce_engine(&x, &mask, ReduceKind::Sum, out_dtype, keepdim)
    }

    /// `sum()` of every element.
    pub fn sum(&self) -> Result<Tensor> {
        self.sum_dims(None, false, None)
    }

    /// `mean(dim, keepdim, dtype)`: floating inputs only, as in PyTorch.
    pub fn mean_dims(&self, dims: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let d = dtype.unwrap_or(self.dtype());
        if !d.is_differentiable() {
            return Err(Error::runtime(format!(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                super::creation::pretty(d)
            )));
        }
        let mask = structured_reduced_dims(dims, self.ndim())?;
        let count: usize = self.shape().iter().zip(&mask).filter(|(_, &m)| m).map(|(&s, _)| s).product();
        let out = {
            let _no_grad = GradModeGuard::new(false);
            // PyTorch: sum (float32 for float16/bfloat16, so large inputs do not
            // overflow), divide by the count in that dtype, round once.
            let s = self.sum_dims_raw(dims, keepdim, Some(super::arith::opmath(d)))?;
            let m = super::arith::binary(Operand::T(&s), Operand::S(Scalar::Int(count as i64)), BinaryOp::Div)?;
            m.to_dtype(d)?
        };
        let name = if dims.is_none() { "MeanBackward0" } else { "MeanBackward1" };
        let (shape, dt) = (self.shape().to_vec(), self.dtype());
        record(name, &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let e = expand_reduced(&g, &shape, &mask, keepdim)?;
                let e = binary(Operand::T(&e), Operand::S(Scalar::Float(1.0 / count as f64)), BinaryOp::Mul)?;
                Ok(vec![Some(if e.dtype() != dt && dt.is_differentiable() { e.to_dtype(dt)? } else { e })])
            })
        });
        Ok(out)
    }

    /// Is every element non-zero? (used by `all()`/`equal`)
    pub fn all_true(&self) -> Result<bool> {
        Ok(self.all_any(None, false, true)?.item()?.to_bool())
    }
}

/// A float sum in the order and rounding of PyTorch's kernel for the
/// tensor's device ([`Backend::sum_float`](ferrotorch_core::Backend::sum_float)).
/// float16/bfloat16 inputs that the device sums in a float32 buffer are
/// converted (preserve_format) and the float32 sum rounded once.
fn cascade_sum(x: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    let half = matches!(x.dtype(), DType::Float16 | DType::BFloat16);
    if half && x.backend()?.sums_half_in_f32(x.layout(), mask, keepdim) {
        let s = cascade_sum(&x.to_dtype_preserve(DType::Float32)?, mask, keepdim)?;
        return s.to_dtype(x.dtype());
    }
    let (out, through) = super::reduction::reduced_output(x, mask, keepdim, x.dtype())?;
    out.backend()?.sum_float(x.operand()?.src(), x.dtype(), mask, keepdim, out.operand_mut_as(&through)?.dst())?;
    Ok(out)
}

/// Broadcasts a reduction's gradient back over the reduced dims.
pub(crate) fn expand_reduced(g: &Tensor, shape: &[usize], mask: &[bool], keepdim: bool) -> Result<Tensor> {
    let mut g = g.clone();
    if !keepdim {
        for (d, &m) in mask.iter().enumerate() {
            if m {
                g = g.unsqueeze(d as i64)?;
            }
        }
    }
    g.expand(&to_i64(shape))
}

fn to_i64(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&v| v as i64).collect()
}

