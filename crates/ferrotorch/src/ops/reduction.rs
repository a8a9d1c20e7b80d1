//! Reductions beyond `sum`/`mean`: prod, amax/amin, max/min with indices,
//! argmax/argmin, var/std, vector norms, logsumexp, all/any, count_nonzero,
//! and the scans (cumsum, cumprod, cummax, cummin).
//!
//! Every reduction and scan runs on the tensor's backend (`reduce_engine`:
//! the backend's `reduce` by [`ReduceKind`], `reduce_arg`, `cumulative`,
//! `cumulative_arg`, `var_mean`); this module validates the arguments,
//! shapes the results and records the derivative rules (PyTorch's
//! formulas, including their branches on zeros and NaN).

use super::arith::{binary, unary, BinaryOp, Operand, UnaryOp};
use super::arith_grad::{add, cond, div, g0, keep_where, mul, muls, sub, un, zeros_like};
use super::creation::pretty;
use super::reduce::{expand_reduced, reduced_dims, structured_reduced_dims};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use ferrotorch_core::op::norm::MomentsSpec;
use ferrotorch_core::op::{ArgKind, CumKind, ReduceKind};
use ferrotorch_core::{DType, Error, Layout, Result, Scalar, Shape};

/// A fresh result of a reduction of `x` over the dims in `mask` (without
/// them unless `keepdim`), in `dtype`, and the keepdim-shaped layout of its
/// storage that the backend's kernels write through: dropping size-1 dims of
/// a contiguous layout leaves its memory order, so the result needs no view
/// (it has no `_base`, as PyTorch's has none).
pub(crate) fn reduced_output(x: &Tensor, mask: &[bool], keepdim: bool, dtype: DType) -> Result<(Tensor, Layout)> {
    let keep: Shape = (0..x.ndim()).map(|d| if mask[d] { 1 } else { x.shape()[d] }).collect();
    let through = Layout::contiguous(&keep);
    let out = if keepdim {
        Tensor::empty(&keep, dtype, x.device())?
    } else {
        let kept: Shape = (0..x.ndim()).filter(|&d| !mask[d]).map(|d| x.shape()[d]).collect();
        Tensor::empty(&kept, dtype, x.device())?
    };
    Ok((out, through))
}

/// `kind` of `x` over the dims in `mask` by the backend's strided reduction
/// (no copy of the input), as a tensor of `out_dtype` with or without the
/// reduced dims.
pub(crate) fn reduce_engine(x: &Tensor, mask: &[bool], kind: ReduceKind, out_dtype: DType, keepdim: bool) -> Result<Tensor> {
    let (out, through) = reduced_output(x, mask, keepdim, out_dtype)?;
    out.backend()?.reduce(kind, x.operand()?.src(), x.dtype(), mask, out.operand_mut_as(&through)?.dst(), out_dtype)?;
    Ok(out)
}

/// Values (in `x`'s dtype) and int64 indices of the max/min of `x` along the
/// one dim in `mask`, by the engine's argmax/argmin.
fn arg_engine(x: &Tensor, mask: &[bool], max: bool, keepdim: bool, values: bool) -> Result<(Option<Tensor>, Tensor)> {
    let (idx, through) = reduced_output(x, mask, keepdim, DType::Int64)?;
    let vals = if values { Some(reduced_output(x, mask, keepdim, x.dtype())?.0) } else { None };
    let kind = if max { ArgKind::Max } else { ArgKind::Min };
    {
        let vd = vals.as_ref().map(|v| v.operand_mut_as(&through)).transpose()?;
        idx.backend()?.reduce_arg(kind, x.operand()?.src(), x.dtype(), mask, vd.as_ref().map(|w| w.dst()), idx.operand_mut_as(&through)?.dst())?;
    }
    Ok((vals, idx))
}

/// One dim as a mask.
fn dim_mask(dim: i64, ndim: usize) -> Result<(usize, Vec<bool>)> {
    let d = wrap_dim(dim, ndim)?;
    let mut m = vec![false; ndim];
    if ndim > 0 {
        m[d] = true;
    }
    Ok((d, m))
}

/// PyTorch's error for reducing an empty dim where no identity exists.
fn check_nonempty(name: &str, x: &Tensor, d: usize) -> Result<()> {
    if x.numel() == 0 && x.ndim() > 0 && x.shape()[d] == 0 {
        return Err(Error::index(format!("{name}(): Expected reduction dim {d} to have non-zero size.")));
    }
    Ok(())
}

/// PyTorch's `zero_numel_check_dims` for reductions over a dim list without
/// an identity (`amax`/`amin`): an empty input needs explicit dims, checked
/// one by one as given (so before duplicate dims are looked for).
fn check_nonempty_dims(name: &str, x: &Tensor, dims: Option<&[i64]>) -> Result<()> {
    if x.numel() != 0 {
        return Ok(());
    }
    let dims = dims.unwrap_or(&[]);
    if dims.is_empty() {
        return Err(Error::runtime(format!(
            "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )));
    }
    for &d in dims {
        if x.shape()[wrap_dim(d, x.ndim())?] == 0 {
            return Err(Error::index(format!("{name}(): Expected reduction dim {d} to have non-zero size.")));
        }
    }
    Ok(())
}


/// Casts a gradient back to the input's dtype.
fn cast_to(g: Tensor, dt: DType) -> Result<Tensor> {
    if g.dtype() != dt && dt.is_floating_point() {
        g.to_dtype(dt)
    } else {
        Ok(g)
    }
}

/// `grad * (x == result) / count`: the gradient of a reduction whose result
/// equals some inputs (max/min/amax/amin/median over all), split evenly.
fn evenly_distribute(g: &Tensor, x: &Tensor, result: &Tensor, mask_dims: &[bool], keepdim: bool, nan_hits: bool) -> Result<Tensor> {
    let shape = x.shape().to_vec();
    let r = expand_reduced(&result.detach(), &shape, mask_dims, keepdim)?;
    let dims: Vec<i64> = (0..shape.len()).filter(|&d| mask_dims[d]).map(|d| d as i64).collect();
    let ge = expand_reduced(g, &shape, mask_dims, keepdim)?;
    if !nan_hits {
        // amax/amin: `(g / mask.sum(dim, keepdim)) * mask` with `mask = x == result`.
        // A NaN result matches nothing: `g / 0 * 0` is NaN over the slice, as in PyTorch.
        let hits = {
            let _no_grad = GradModeGuard::new(false);
            binary(Operand::T(&x.detach()), Operand::T(&r), BinaryOp::Eq)?.to_dtype(g.dtype())?
        };
        let count = {
            let _no_grad = GradModeGuard::new(false);
            hits.sum_dims(Some(&dims), true, None)?
        };
        return mul(&div(&ge, &count)?, &hits);
    }
    let hits = {
        let _no_grad = GradModeGuard::new(false);
        let eq = binary(Operand::T(&x.detach()), Operand::T(&r), BinaryOp::Eq)?;
        // NaN results select the NaN inputs.
        let both_nan = binary(
            Operand::T(&unary(&x.detach(), UnaryOp::IsNan)?),
            Operand::T(&unary(&r, UnaryOp::IsNan)?),
            BinaryOp::LogicalAnd,
        )?;
        binary(Operand::T(&eq), Operand::T(&both_nan), BinaryOp::LogicalOr)?
    };
    let count = {
        let _no_grad = GradModeGuard::new(false);
        hits.to_dtype(g.dtype())?.sum_dims(Some(&dims), true, None)?
    };
    // PyTorch masked_fills `g / count` into zeros: an infinite g stays off the
    // inputs not selected.
    keep_where(&hits, &div(&ge, &count)?)
}

impl Tensor {
    /// `prod(dim=None, keepdim, dtype)`: integers multiply in `int64`.
    /// Records `ProdBackward0` (all) or `ProdBackward1` (one dim).
    pub fn prod_dim(&self, dim: Option<i64>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let x = match dtype {
            Some(d) => self.to_dtype(d)?,
            None => self.clone(),
        };
        let (rdim, mask) = match dim {
            Some(d) => {
                let (d, m) = dim_mask(d, x.ndim())?;
                (Some(d), m)
            }
            None => (None, vec![true; x.ndim()]),
        };
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let float = x.dtype().is_differentiable();
            if x.dtype().is_floating_point() && rdim.is_none() {
                // The full product's order depends on TensorIterator's dim
                // order and coalescing, which the engine's plans do not follow.
                reduce_engine(&x, &mask, ReduceKind::ProdAll, x.dtype(), false)?
            } else {
                let out_dtype = if float { x.dtype() } else { dtype.unwrap_or(DType::Int64) };
                reduce_engine(&x, &mask, ReduceKind::Prod, out_dtype, keepdim && dim.is_some())?
            }
        };
        crate::ops::reduce::check_differentiable_dtype(self, &out)?;
        if out.dtype().is_differentiable() {
            let name = if dim.is_none() { "ProdBackward0" } else { "ProdBackward1" };
            let (sx, so, dt) = (SavedTensor::input(&x), SavedTensor::output(&out, 0), x.dtype());
            let keep = keepdim && dim.is_some();
            record(name, &[Some(&x)], &[&out], move || {
                rule(move |node, g| {
                    let Some(g) = g0(g) else { return Ok(vec![None]) };
                    let (x, r) = (sx.unpack(node)?, so.unpack(node)?);
                    Ok(vec![Some(cast_to(prod_grad(&g, &x, &r, rdim, keep)?, dt)?)])
                })
            });
        }
        Ok(out)
    }

    /// `amax(dim, keepdim)` / `amin` (NaN propagates). Records `AmaxBackward0`.
    pub fn amax_dims(&self, dims: Option<&[i64]>, keepdim: bool, max: bool) -> Result<Tensor> {
        let name = if max { "amax" } else { "amin" };
        check_nonempty_dims(name, self, dims)?;
        let mask = structured_reduced_dims(dims, self.ndim())?;
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let kind = if max { ReduceKind::Max } else { ReduceKind::Min };
            reduce_engine(self, &mask, kind, self.dtype(), keepdim)?
        };
        let node = if max { "AmaxBackward0" } else { "AminBackward0" };
        self.record_even(node, &out, mask, keepdim, false);
        Ok(out)
    }

    /// Records a node whose gradient is split evenly over the inputs equal to
    /// the result (max/min/amax/amin over dims).
    /// `nan_hits`: a NaN result selects the NaN inputs (max()/min(), PyTorch's
    /// evenly_distribute_backward); else only inputs equal to the result
    /// count (amax/amin's scale_grad_by_count, NaN for a NaN result).
    fn record_even(&self, name: &'static str, out: &Tensor, mask: Vec<bool>, keepdim: bool, nan_hits: bool) {
        if !out.dtype().is_floating_point() {
            return;
        }
        let (sx, so, dt) = (SavedTensor::input(self), SavedTensor::output(out, 0), self.dtype());
        record(name, &[Some(self)], &[out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let r = evenly_distribute(&g, &sx.unpack(node)?, &so.unpack(node)?, &mask, keepdim, nan_hits)?;
                Ok(vec![Some(cast_to(r, dt)?)])
            })
        });
    }

    /// `max()` / `min()` over every element. Records `MaxBackward1`/`MinBackward1`.
    pub fn max_all(&self, max: bool) -> Result<Tensor> {
        let name = if max { "max" } else { "min" };
        if self.numel() == 0 {
            return Err(Error::runtime(format!(
                "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )));
        }
        let out = {
            let _no_grad = GradModeGuard::new(false);
            self.amax_dims(None, false, max)?
        };
        let node = if max { "MaxBackward1" } else { "MinBackward1" };
        self.record_even(node, &out, vec![true; self.ndim()], false, true);
        Ok(out)
    }

    /// `max(dim, keepdim)` / `min`: values and int64 indices (first NaN, else
    /// first extreme). Records `MaxBackward0`/`MinBackward0`.
    pub fn max_dim(&self, dim: i64, keepdim: bool, max: bool) -> Result<(Tensor, Tensor)> {
        let name = if max { "max" } else { "min" };
        let (d, mask) = dim_mask(dim, self.ndim())?;
        check_nonempty(name, self, d)?;
        let (vals, idx) = {
            let _no_grad = GradModeGuard::new(false);
            let (v, i) = arg_engine(self, &mask, max, keepdim, true)?;
            (v.ok_or_else(|| Error::runtime("max: values were not computed"))?, i)
        };
        let node = if max { "MaxBackward0" } else { "MinBackward0" };
        record_indexed(node, self, &vals, &idx, d, keepdim);
        Ok((vals, idx))
    }

    /// `argmax(dim=None, keepdim)` / `argmin`.
    pub fn argmax_dim(&self, dim: Option<i64>, keepdim: bool, max: bool) -> Result<Tensor> {
        let name = if max { "argmax" } else { "argmin" };
        if self.dtype() == DType::Bool {
            return Err(Error::runtime(format!("{name}(): does not support bool input")));
        }
        if self.dtype().is_complex() {
            return Err(Error::runtime(format!("{name}(): does not support complex input")));
        }
        let _no_grad = GradModeGuard::new(false);
        match dim {
            Some(d) => {
                let (dd, mask) = dim_mask(d, self.ndim())?;
                check_nonempty(name, self, dd)?;
                Ok(arg_engine(self, &mask, max, keepdim, false)?.1)
            }
            None => {
                if self.numel() == 0 {
                    return Err(Error::index(format!(
                        "{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    )));
                }
                let flat = self.reshape(&[-1])?;
                let r = flat.argmax_dim(Some(0), false, max)?;
                if keepdim {
                    r.reshape(&vec![1; self.ndim()])
                } else {
                    Ok(r)
                }
            }
        }
    }

    /// `var(dim, correction, keepdim)` (floats only). Records `VarBackward0`.
    pub fn var_dims(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        let v = self.var_std_raw(dims, correction, keepdim, false)?;
        let mask = reduced_dims(dims, self.ndim())?;
        let n = reduced_count(self, &mask);
        let dof = Dof::new(dims, self.ndim(), n, correction);
        let (sx, dt) = (SavedTensor::input(self), self.dtype());
        record("VarBackward0", &[Some(self)], &[&v], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let x = sx.unpack(node)?;
                Ok(vec![Some(cast_to(var_grad(&g, &x, &mask, keepdim, dof)?, dt)?)])
            })
        });
        Ok(v)
    }

    /// `std(dim, correction, keepdim)`. Records `StdBackward0`.
    pub fn std_dims(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        let s = self.var_std_raw(dims, correction, keepdim, true)?;
        let mask = reduced_dims(dims, self.ndim())?;
        let n = reduced_count(self, &mask);
        let dof = Dof::new(dims, self.ndim(), n, correction);
        let (sx, so, dt) = (SavedTensor::input(self), SavedTensor::output(&s, 0), self.dtype());
        record("StdBackward0", &[Some(self)], &[&s], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let (x, r) = (sx.unpack(node)?, so.unpack(node)?);
                Ok(vec![Some(cast_to(std_grad(&g, &x, &r, &mask, keepdim, dof)?, dt)?)])
            })
        });
        Ok(s)
    }

    /// `var_mean` / `std_mean`: both outputs from one node (`VarMeanBackward0`,
    /// `StdMeanBackward0`).
    pub fn var_mean(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool, std: bool) -> Result<(Tensor, Tensor)> {
        let (v, m) = self.var_mean_raw(dims, correction, keepdim, std)?;
        let mask = reduced_dims(dims, self.ndim())?;
        let n = reduced_count(self, &mask);
        let dof = Dof::new(dims, self.ndim(), n, correction);
        let (sx, so, dt) = (SavedTensor::input(self), SavedTensor::output(&v, 0), self.dtype());
        let name = if std { "StdMeanBackward0" } else { "VarMeanBackward0" };
        // Written in PyTorch's convention for complex inputs: the variance's
        // gradient `2 (x - mean) g / dof` already is, and the mean's `g / n`
        // is the same in both (so `rule`'s conjugation, which a complex mean
        // gradient would trigger, must not apply).
        record(name, &[Some(self)], &[&v, &m], move || {
            crate::autograd::rule_native(move |node, g| {
                let mut it = g.into_iter();
                let (gv, gm) = (it.next().flatten(), it.next().flatten());
                let x = sx.unpack(node)?;
                let mut total: Option<Tensor> = None;
                if let Some(gv) = gv {
                    let r = if std {
                        std_grad(&gv, &x, &so.unpack(node)?, &mask, keepdim, dof)?
                    } else {
                        var_grad(&gv, &x, &mask, keepdim, dof)?
                    };
                    total = Some(r);
                }
                if let Some(gm) = gm {
                    let e = muls(&expand_reduced(&gm, x.shape(), &mask, keepdim)?, 1.0 / n as f64)?;
                    total = Some(match total {
                        Some(t) => add(&t, &e)?,
                        None => e,
                    });
                }
                Ok(vec![total.map(|t| cast_to(t, dt)).transpose()?])
            })
        });
        Ok((v, m))
    }

    /// `var`/`std` without autograd, on the device's backend (whose kernel may
    /// differ from the one `var_mean` uses: PyTorch's CPU `var`/`std` of one
    /// output element is a two-pass kernel of its own).
    fn var_std_raw(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool, std: bool) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return self.complex_var_std_raw(dims, correction, keepdim, std);
        }
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime("std and var only support floating point and complex dtypes"));
        }
        let _no_grad = GradModeGuard::new(false);
        let mask = reduced_dims(dims, self.ndim())?;
        let (v, through) = reduced_output(self, &mask, keepdim, self.dtype())?;
        v.backend()?.var_mean(self.operand()?.src(), self.dtype(), &mask, correction, std, v.operand_mut_as(&through)?.dst(), None)?;
        Ok(v)
    }

    /// `var`/`std` of a complex tensor, as PyTorch's: real-valued (the
    /// parts' dtype), the variance being the sum of the parts' variances
    /// (`E|z - E z|^2`).
    fn complex_var_std_raw(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool, std: bool) -> Result<Tensor> {
        let _no_grad = GradModeGuard::new(false);
        let re = self.real()?.var_std_raw(dims, correction, keepdim, false)?;
        let im = self.imag()?.var_std_raw(dims, correction, keepdim, false)?;
        let v = add(&re, &im)?;
        if std {
            return unary(&v, UnaryOp::Sqrt);
        }
        Ok(v)
    }

    /// Variance and mean without autograd, by Welford's recurrence in `f64`.
    /// With `std`, the square root is taken in `f64` before rounding to the
    /// input dtype (as PyTorch's kernels take it at their wider accumulation
    /// type), so a float16 std whose variance overflows float16 stays finite.
    /// var/std/var_mean/std_mean all share this one path.
    fn var_mean_raw(&self, dims: Option<&[i64]>, correction: f64, keepdim: bool, std: bool) -> Result<(Tensor, Tensor)> {
        if self.dtype().is_complex() {
            let _no_grad = GradModeGuard::new(false);
            let v = self.complex_var_std_raw(dims, correction, keepdim, std)?;
            return Ok((v, self.mean_dims(dims, keepdim, None)?));
        }
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime("std and var only support floating point and complex dtypes"));
        }
        let _no_grad = GradModeGuard::new(false);
        let mask = reduced_dims(dims, self.ndim())?;
        let (v, through) = reduced_output(self, &mask, keepdim, self.dtype())?;
        let m = reduced_output(self, &mask, keepdim, self.dtype())?.0;
        v.backend()?.var_mean(self.operand()?.src(), self.dtype(), &mask, correction, std, v.operand_mut_as(&through)?.dst(), Some(m.operand_mut_as(&through)?.dst()))?;
        Ok((v, m))
    }

    /// `linalg.vector_norm(x, ord, dim, keepdim, dtype)`. Records `LinalgVectorNormBackward0`.
    pub fn vector_norm(&self, ord: f64, dims: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let x = match dtype {
            Some(d) => self.to_dtype(d)?,
            None => self.clone(),
        };
        if !x.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                pretty(x.dtype())
            )));
        }
        let mask = reduced_dims(dims, x.ndim())?;
        if ord < 0.0 || ord.is_infinite() {
            // PyTorch's checks for an empty input: a full reduction has no
            // identity; with dims, each reduced dim (as the caller wrote it)
            // must be non-empty. (Its message lacks the space before "because".)
            if x.numel() == 0 {
                match dims {
                    Some(ds) if !ds.is_empty() => {
                        for &d in ds {
                            if x.shape()[ferrotorch_core::error::wrap_dim(d, x.ndim())?] == 0 {
                                return Err(Error::runtime(format!(
                                    "linalg.vector_norm cannot compute the {ord} norm on the dimension {d}because this dimension is empty and the operation does not have an identity"
                                )));
                            }
                        }
                    }
                    _ => {
                        return Err(Error::runtime(format!(
                            "linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"
                        )))
                    }
                }
            }
        }
        // PyTorch accumulates float32/float16/bfloat16 norms in float (its
        // opmath type): a sum of powers past float's range is inf there, and
        // the root does not bring it back (the engine's `Norm` kind does this).
        let single = matches!(x.dtype(), DType::Float32 | DType::Float16 | DType::BFloat16);
        // Up to this many elements a row is one sequential float accumulator in
        // PyTorch's loops (no vector lanes to split it), so float32 rounding
        // is reproduced exactly: `|x|^p` rounded to float, added in order, and
        // the root taken with `1/p` rounded to float. Longer rows sum in f64
        // (closer to PyTorch's lane-split sums than one float accumulator).
        const SHORT_ROW: usize = 16;
        // PyTorch's single-element shortcut (below) is not taken for a 0-d
        // input with an explicit dim, which goes through the power and root.
        let shortcut = x.ndim() > 0 || dims.is_none_or(|d| d.is_empty());
        // PyTorch's 2-norm of float32/bfloat16 rows lying contiguously in
        // memory (its "reduce last dim" kernel) adds each square with a fused
        // multiply-add while fewer than 4 elements are left for its vector
        // loop; its strided kernel rounds each square first.
        let fused_short = ord == 2.0 && matches!(x.dtype(), DType::Float32 | DType::BFloat16) && {
            let mut red: Vec<(isize, usize)> =
                (0..x.ndim()).filter(|&d| mask[d] && x.shape()[d] > 1).map(|d| (x.strides()[d], x.shape()[d])).collect();
            red.sort_unstable();
            let mut next = 1isize;
            red.iter().all(|&(st, sz)| {
                let ok = st == next;
                next = st * sz as isize;
                ok
            })
        };
        // Every output folds the same number of elements, so the rule is one
        // kernel for the whole reduction.
        let count = reduced_count(&x, &mask);
        let kind = if shortcut && count == 1 && ord != 0.0 {
            // PyTorch reduces a single element to |x| itself (no power and
            // root, so no overflow: the 3-norm of -1e30 is 1e30).
            ReduceKind::Norm(f64::INFINITY)
        } else if fused_short && count < 4 {
            ReduceKind::Norm2FusedF32
        } else if single && count <= SHORT_ROW && ord.is_finite() && ord != 0.0 {
            ReduceKind::NormShortF32(ord)
        } else {
            ReduceKind::Norm(ord)
        };
        let out = {
            let _no_grad = GradModeGuard::new(false);
            reduce_engine(&x, &mask, kind, x.dtype(), keepdim)?
        };
        let (sx, so, dt) = (SavedTensor::input(&x), SavedTensor::output(&out, 0), x.dtype());
        record("LinalgVectorNormBackward0", &[Some(&x)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                if ord == 0.0 {
                    // PyTorch's norm_backward leaves the 0-norm's gradient undefined.
                    return Ok(vec![None]);
                }
                let (x, r) = (sx.unpack(node)?, so.unpack(node)?);
                Ok(vec![Some(cast_to(norm_grad(&g, &x, &r, ord, &mask, keepdim)?, dt)?)])
            })
        });
        Ok(out)
    }

    /// `logsumexp(dim, keepdim)`, stable (max subtracted). Records `LogsumexpBackward0`.
    pub fn logsumexp(&self, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
        let x = if self.dtype().is_floating_point() { self.clone() } else { self.to_dtype(crate::defaults::default_dtype())? };
        let mask = structured_reduced_dims(dims, x.ndim())?;
        if dims.is_some_and(|d| d.is_empty()) && !keepdim && x.ndim() > 0 && x.numel() > 0 {
            // PyTorch adds the row maxima (`amax` over `dim=()`, i.e. over
            // every dim, kept as 1s) in place into the result of `sum` over
            // `dim=()` without keepdim (0-d), which cannot broadcast (an
            // empty input takes its `log(sum(exp))` path instead).
            let ones = vec!["1"; x.ndim()].join(", ");
            return Err(Error::runtime(format!("output with shape [] doesn't match the broadcast shape [{ones}]")));
        }
        let out = {
            let _no_grad = GradModeGuard::new(false);
            // NaN anywhere gives NaN; else an +inf gives +inf, all -inf gives -inf.
            reduce_engine(&x, &mask, ReduceKind::LogSumExp, x.dtype(), keepdim)?
        };
        let (sx, so, dt) = (SavedTensor::input(&x), SavedTensor::output(&out, 0), x.dtype());
        record("LogsumexpBackward0", &[Some(&x)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let (x, r) = (sx.unpack(node)?, so.unpack(node)?);
                let shape = x.shape().to_vec();
                let e = un(&sub(&x, &expand_reduced(&r, &shape, &mask, keepdim)?)?, UnaryOp::Exp)?;
                Ok(vec![Some(cast_to(mul(&expand_reduced(&g, &shape, &mask, keepdim)?, &e)?, dt)?)])
            })
        });
        Ok(out)
    }

    /// `all(dim, keepdim)` / `any`: bool results (uint8 for uint8 inputs, as PyTorch).
    pub fn all_any(&self, dims: Option<&[i64]>, keepdim: bool, all: bool) -> Result<Tensor> {
        let _no_grad = GradModeGuard::new(false);
        let mask = structured_reduced_dims(dims, self.ndim())?;
        let out_dtype = if self.dtype() == DType::UInt8 { DType::UInt8 } else { DType::Bool };
        reduce_engine(self, &mask, if all { ReduceKind::All } else { ReduceKind::Any }, out_dtype, keepdim)
    }

    /// `count_nonzero(dim)` as int64.
    pub fn count_nonzero(&self, dims: Option<&[i64]>) -> Result<Tensor> {
        let _no_grad = GradModeGuard::new(false);
        let mask = structured_reduced_dims(dims, self.ndim())?;
        reduce_engine(self, &mask, ReduceKind::CountNonzero, DType::Int64, false)
    }

    /// `cumsum(dim, dtype)` / `cumprod`: integers accumulate in int64.
    /// Records `CumsumBackward0` / `CumprodBackward0`.
    pub fn cumulative(&self, dim: i64, dtype: Option<DType>, prod: bool) -> Result<Tensor> {
        // PyTorch casts the input inside the op: the gradient is formed in
        // the input's dtype (`grad.to(self.scalar_type())`), not the output's.
        let x = match dtype {
            Some(d) => {
                let _no_grad = GradModeGuard::new(false);
                self.to_dtype(d)?
            }
            None => self.clone(),
        };
        let (d, _) = dim_mask(dim, x.ndim())?;
        let out_dtype = if x.dtype().is_differentiable() { x.dtype() } else { dtype.unwrap_or(DType::Int64) };
        // PyTorch fills a 0-d or empty result without running its kernel,
        // whose dtype dispatch has no bool.
        if out_dtype == DType::Bool && x.ndim() > 0 && x.numel() > 0 {
            let name = if prod { "cumprod_out_cpu" } else { "cumsum_out_cpu" };
            return Err(Error::not_implemented(format!("\"{name}\" not implemented for 'Bool'")));
        }
        let out = Tensor::empty(x.shape(), out_dtype, x.device())?;
        let kind = if prod { CumKind::Prod } else { CumKind::Sum };
        // Reads `x` in place (any strides), parallel over rows.
        out.backend()?.cumulative(kind, x.operand()?.src(), x.dtype(), d, out.operand_mut()?.dst(), out_dtype)?;
        crate::ops::reduce::check_differentiable_dtype(self, &out)?;
        if out.dtype().is_differentiable() && self.dtype().is_differentiable() {
            let (sx, so, dt) = (SavedTensor::input(self), SavedTensor::output(&out, 0), self.dtype());
            let name = if prod { "CumprodBackward0" } else { "CumsumBackward0" };
            record(name, &[Some(self)], &[&out], move || {
                rule(move |node, g| {
                    let Some(g) = g0(g) else { return Ok(vec![None]) };
                    let g = cast_to(g, dt)?;
                    let r = if prod {
                        cumprod_grad(&g, &sx.unpack(node)?, &so.unpack(node)?, d)?
                    } else {
                        reverse_cumsum(&g, d)?
                    };
                    Ok(vec![Some(cast_to(r, dt)?)])
                })
            });
        }
        Ok(out)
    }

    /// `cummax(dim)` / `cummin`: running extreme and its index (later ties
    /// win; NaN sticks). Records `CummaxBackward0` / `CumminBackward0`.
    pub fn cum_extreme(&self, dim: i64, max: bool) -> Result<(Tensor, Tensor)> {
        // PyTorch returns early on an empty tensor, before checking `dim`.
        let d = if self.numel() == 0 { wrap_dim(dim, self.ndim()).unwrap_or(0) } else { dim_mask(dim, self.ndim())?.0 };
        let vals = Tensor::empty(self.shape(), self.dtype(), self.device())?;
        let idx = Tensor::empty(self.shape(), DType::Int64, self.device())?;
        let kind = if max { ArgKind::Max } else { ArgKind::Min };
        self.backend()?.cumulative_arg(kind, self.operand()?.src(), self.dtype(), d, vals.operand_mut()?.dst(), idx.operand_mut()?.dst())?;
        let name = if max { "CummaxBackward0" } else { "CumminBackward0" };
        record_indexed(name, self, &vals, &idx, d, true);
        Ok((vals, idx))
    }
}

/// Number of elements folded into each output.
fn reduced_count(x: &Tensor, mask: &[bool]) -> usize {
    x.shape().iter().zip(mask).filter(|(_, &m)| m).map(|(&s, _)| s).product()
}


/// Records a node whose gradient scatters into the positions of `idx` along `d`
/// (max/min over a dim, sort, topk, kthvalue, median, mode, cummax).
pub(crate) fn record_indexed(name: &'static str, x: &Tensor, vals: &Tensor, idx: &Tensor, d: usize, keepdim: bool) {
    if !vals.dtype().is_floating_point() {
        return;
    }
    let (shape, dt, idx) = (x.shape().to_vec(), x.dtype(), idx.clone());
    let scalar = x.ndim() == 0;
    record(name, &[Some(x)], &[vals], move || {
        rule(move |_, g| {
            let Some(g) = g0(g) else { return Ok(vec![None]) };
            if scalar {
                return Ok(vec![Some(cast_to(g.reshape(&[])?, dt)?)]);
            }
            let (g, i) = if keepdim { (g, idx.clone()) } else { (g.unsqueeze(d as i64)?, idx.unsqueeze(d as i64)?) };
            let r = super::sort::scatter_add_dim(&shape, d, &i, &g)?;
            Ok(vec![Some(cast_to(r, dt)?)])
        })
    });
}

/// `sum over d of g from i onwards` (the backward of cumsum), written with
/// differentiable ops: `total - cumsum(g) + g`.
fn reverse_cumsum(g: &Tensor, d: usize) -> Result<Tensor> {
    if g.ndim() == 0 || g.numel() <= 1 || g.shape()[d] == 1 {
        return Ok(g.clone());
    }
    // PyTorch's reversed_cumsum (flip, cumsum, flip): `total - cumsum + g`
    // would turn an infinite partial sum into inf - inf = NaN.
    let dims = [d as i64];
    g.flip(&dims)?.cumulative(d as i64, None, false)?.flip(&dims)
}

/// Number of zeros in `x` (PyTorch's backward formulas branch on it). A
/// `meta` tensor has no values: its gradients take the zero-free formula,
/// which has the same shapes.
fn zero_count(x: &Tensor) -> Result<usize> {
    if x.device().is_meta() {
        return Ok(0);
    }
    let _no_grad = GradModeGuard::new(false);
    let nonzero = reduce_engine(x, &vec![true; x.ndim()], ReduceKind::CountNonzero, DType::Int64, false)?;
    Ok(x.numel() - nonzero.item()?.to_i64() as usize)
}

/// PyTorch's cumprod_backward. Without zeros: `reversed_cumsum(out * g) / x`
/// (so an infinite or NaN factor spreads as in PyTorch). With zeros, outside
/// grad mode, its O(n) masked formula: before the first zero `z1` of a row
/// the same expression over `[0, z1)`; at `z1` the sum over `[z1, z2)` of
/// `g_j * prod(x(z1, j])`, times `out[z1 - 1]`; after it 0. Under grad mode
/// (a graph of the gradient requested) the exact products of the other
/// factors instead, as PyTorch's O(n^2) branch.
fn cumprod_grad(g: &Tensor, x: &Tensor, out: &Tensor, d: usize) -> Result<Tensor> {
    if x.ndim() == 0 || x.numel() <= 1 || x.shape()[d] == 1 {
        return Ok(g.clone());
    }
    if zero_count(x)? == 0 {
        return div(&reverse_cumsum(&mul(out, g)?, d)?, x);
    }
    let exact = crate::autograd::is_grad_enabled();
    let _no_grad = GradModeGuard::new(false);
    // `w = out * g` is stored in the promoted dtype; the masked products in x's.
    let w_dtype = DType::promote(out.dtype(), g.dtype());
    let f64s = |t: &Tensor| t.to_dtype(DType::Float64);
    let (xf, gf, of) = (f64s(x)?, f64s(g)?, f64s(out)?);
    let grad = Tensor::empty(x.shape(), DType::Float64, x.device())?;
    grad.backend()?.cumprod_backward(xf.operand()?.src(), gf.operand()?.src(), of.operand()?.src(), d, exact, w_dtype, x.dtype(), grad.operand_mut()?.dst())?;
    grad.to_dtype(g.dtype())
}

/// PyTorch's prod_backward: `g * (out / x)` without zeros; with zeros its
/// prod_safe_zeros_backward (exclusive cumprods from both ends), except over
/// all elements with two or more zeros outside grad mode, where it is 0.
/// `dim`: the reduced dim, or `None` for all of them.
fn prod_grad(g: &Tensor, x: &Tensor, out: &Tensor, dim: Option<usize>, keepdim: bool) -> Result<Tensor> {
    if x.ndim() == 0 {
        return Ok(g.clone());
    }
    let zeros = zero_count(x)?;
    match dim {
        Some(d) => {
            let (g, out) = if keepdim { (g.clone(), out.clone()) } else { (g.unsqueeze(d as i64)?, out.unsqueeze(d as i64)?) };
            if zeros == 0 {
                return mul(&g, &div(&out, x)?);
            }
            prod_safe_zeros(&g, x, d)
        }
        None => {
            if zeros == 0 {
                return mul(g, &div(out, x)?);
            }
            if zeros > 1 && !crate::autograd::is_grad_enabled() {
                return Tensor::zeros(x.shape(), g.dtype(), x.device());
            }
            let shape: Vec<i64> = x.shape().iter().map(|&s| s as i64).collect();
            prod_safe_zeros(g, &x.reshape(&[-1])?, 0)?.reshape(&shape)
        }
    }
}

/// PyTorch's prod_safe_zeros_backward along `d`: `g * (exclusive cumprod from
/// the front * exclusive cumprod from the back)`, exact with zeros.
fn prod_safe_zeros(g: &Tensor, x: &Tensor, d: usize) -> Result<Tensor> {
    let n = x.shape()[d];
    if x.numel() == 0 {
        return g.expand(&x.shape().iter().map(|&s| s as i64).collect::<Vec<_>>());
    }
    if n == 1 {
        return Ok(g.clone());
    }
    let mut ones_shape = x.shape().to_vec();
    ones_shape[d] = 1;
    let ones = Tensor::ones(&ones_shape, g.dtype(), x.device())?;
    let (di, dims) = (d as i64, [d as i64]);
    let front = Tensor::cat(&[ones.clone(), x.narrow(di, 0, n as i64 - 1)?], di)?.cumulative(di, None, true)?;
    let back = Tensor::cat(&[ones, x.narrow(di, 1, n as i64 - 1)?.flip(&dims)?], di)?
        .cumulative(di, None, true)?
        .flip(&dims)?;
    mul(g, &mul(&front, &back)?)
}

/// The degrees of freedom of a var/std and which of PyTorch's var_backward
/// paths applies.
#[derive(Clone, Copy)]
struct Dof {
    /// `N - correction`.
    dof: f64,
    /// No `dim` (or a 0-d input): PyTorch's path that, for `dof <= 0`, gives
    /// `g * inf` (NaN where `x == mean`) instead of `2 / dof`.
    full: bool,
}

impl Dof {
    fn new(dims: Option<&[i64]>, ndim: usize, n: usize, correction: f64) -> Dof {
        Dof { dof: n as f64 - correction, full: dims.is_none() || ndim == 0 }
    }
}

/// `g * 2 (x - mean) / (N - correction)`; PyTorch's var_backward.
fn var_grad(g: &Tensor, x: &Tensor, mask: &[bool], keepdim: bool, dof: Dof) -> Result<Tensor> {
    let dims: Vec<i64> = (0..x.ndim()).filter(|&d| mask[d]).map(|d| d as i64).collect();
    let mean = x.mean_dims(Some(&dims), true, None)?;
    let centered = sub(x, &mean)?;
    let ge = expand_reduced(g, x.shape(), mask, keepdim)?;
    if dof.full && dof.dof <= 0.0 {
        // Over all elements with no degrees of freedom left, PyTorch's
        // gradient is `g * where(x == mean, NaN, inf)`: a NaN `x` (never equal
        // to the mean) gets `g * inf`, not NaN.
        let factor = {
            let _no_grad = GradModeGuard::new(false);
            let eq = binary(Operand::T(&x.detach()), Operand::T(&mean.detach()), BinaryOp::Eq)?;
            let nan = Tensor::full(&[], Scalar::Float(f64::NAN), ge.dtype(), ge.device())?;
            let inf = Tensor::full(&[], Scalar::Float(f64::INFINITY), ge.dtype(), ge.device())?;
            crate::ops::indexing::where_(&eq, Operand::T(&nan), Operand::T(&inf))?
        };
        return mul(&ge, &factor);
    }
    // With explicit dims the factor is `2 / dof` as is: inf at 0, negative below.
    // `(2 / dof) * g` before `x - mean`, PyTorch's order: the other order
    // overflows where `x - mean` is near the dtype's max.
    mul(&muls(&ge, 2.0 / dof.dof)?, &centered)
}

/// PyTorch's std_backward: var_backward of `(g / (2 std))`, that masked to 0
/// where std is 0 (`0 / 0` must not reach the gradient).
fn std_grad(g: &Tensor, x: &Tensor, std: &Tensor, mask: &[bool], keepdim: bool, dof: Dof) -> Result<Tensor> {
    let gs = keep_where(&cond(std, BinaryOp::Ne, 0.0)?, &div(g, &muls(std, 2.0)?)?)?;
    var_grad(&gs, x, mask, keepdim, dof)
}

/// Gradient of the vector norm for any `ord`, PyTorch's `norm_backward`:
/// each singular point (a zero norm, a zero element under `|x|^(p-1)` with
/// `p < 1`) is masked to 0 rather than left as `0 * inf`.
fn norm_grad(g: &Tensor, x: &Tensor, r: &Tensor, ord: f64, mask_dims: &[bool], keepdim: bool) -> Result<Tensor> {
    let shape = x.shape().to_vec();
    if ord == 0.0 {
        return zeros_like(x);
    }
    let ge = expand_reduced(g, &shape, mask_dims, keepdim)?;
    let re = expand_reduced(r, &shape, mask_dims, keepdim)?;
    if ord == 1.0 {
        return mul(&ge, &un(x, UnaryOp::Sign)?);
    }
    if ord.is_infinite() {
        let ax = un(x, UnaryOp::Abs)?;
        let even = evenly_distribute(g, &ax, r, mask_dims, keepdim, true)?;
        return mul(&even, &un(x, UnaryOp::Sign)?);
    }
    let nz_norm = cond(&re, BinaryOp::Ne, 0.0)?;
    if ord == 2.0 {
        return mul(&ge, &keep_where(&nz_norm, &div(x, &re)?)?);
    }
    let ax = un(x, UnaryOp::Abs)?;
    let pow = |v: &Tensor, e: f64| binary(Operand::T(v), Operand::S(Scalar::Float(e)), BinaryOp::Pow);
    if ord < 1.0 {
        // sgn(x) |x|^(p-1) (0 where x == 0) * g * r^(1-p)
        let scaled = keep_where(&cond(x, BinaryOp::Ne, 0.0)?, &mul(&un(x, UnaryOp::Sign)?, &pow(&ax, ord - 1.0)?)?)?;
        return mul(&mul(&scaled, &ge)?, &pow(&re, 1.0 - ord)?);
    }
    // x |x|^(p-2) * (g / r^(p-1), 0 where r == 0); for p < 2 as sgn(x) |x|^(p-1).
    let scaled = if ord < 2.0 { mul(&un(x, UnaryOp::Sign)?, &pow(&ax, ord - 1.0)?)? } else { mul(x, &pow(&ax, ord - 2.0)?)? };
    let scale = keep_where(&nz_norm, &div(&ge, &pow(&re, ord - 1.0)?)?)?;
    mul(&scaled, &scale)
}

/// Records `name` with the evenly-split gradient of a full reduction.
pub(crate) fn record_even_pub(x: &Tensor, name: &'static str, out: &Tensor) {
    x.record_even(name, out, vec![true; x.ndim()], false, true)
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn cumsum_backward_is_a_reverse_cumsum() {
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
        x.set_requires_grad(true).unwrap();
        let y = x.cumulative(0, None, false).unwrap();
        assert_eq!(y.to_f64_vec().unwrap(), vec![1.0, 3.0, 6.0]);
        crate::autograd::backward(&[y.sum().unwrap()], vec![None], None, false, None).unwrap();
        assert_eq!(x.grad().unwrap().to_f64_vec().unwrap(), vec![3.0, 2.0, 1.0]);
    }

    #[test]
    fn var_std_and_max_with_indices() {
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 9.0, 0.0], &[2, 3]).unwrap();
        let v = x.var_dims(Some(&[1]), 1.0, false).unwrap().to_f64_vec().unwrap();
        assert!((v[0] - 1.0).abs() < 1e-12 && (v[1] - 61.0 / 3.0).abs() < 1e-12, "{v:?}");
        let (v, i) = x.max_dim(1, false, true).unwrap();
        assert_eq!((v.to_f64_vec().unwrap(), i.to_vec::<i64>().unwrap()), (vec![3.0, 9.0], vec![2, 1]));
        let p = x.prod_dim(None, false, None).unwrap();
        assert_eq!(p.to_f64_vec().unwrap(), vec![0.0]);
        assert_eq!(p.shape(), &[] as &[usize]);
    }
}

impl Tensor {
    /// Mean and biased variance of each row of a 2-D float tensor, computed as
    /// PyTorch's CPU group_norm/layer_norm kernels do (`RowwiseMoments`, with
    /// the AVX2 vector widths those kernels are dispatched with), in float32
    /// for float16/bfloat16/float32 and float64 for float64. `reduced`: the
    /// values were float16/bfloat16 (widened here), which changes the lane
    /// layout. No autograd.
    pub fn rowwise_moments(&self, reduced: bool) -> Result<(Tensor, Tensor)> {
        if self.ndim() != 2 || !self.dtype().is_floating_point() {
            return Err(Error::runtime("rowwise_moments: expected a 2-D floating point tensor"));
        }
        let _no_grad = GradModeGuard::new(false);
        let (rows, n) = (self.shape()[0], self.shape()[1]);
        let dt = ferrotorch_core::op::norm::norm_compute_dtype(self.dtype());
        let reduced = reduced || matches!(self.dtype(), DType::Float16 | DType::BFloat16);
        let x = self.to_dtype(dt)?.contiguous()?;
        let (mean, var) = (Tensor::empty(&[rows], dt, self.device())?, Tensor::empty(&[rows], dt, self.device())?);
        let spec = MomentsSpec { rows, n, reduced: reduced && dt == DType::Float32 };
        mean.backend()?.row_moments(&spec, dt, x.operand()?.src(), mean.operand_mut()?.dst(), var.operand_mut()?.dst())?;
        Ok((mean, var))
    }
}
