//! Ops of three operands: `clamp` (scalar or tensor bounds), `lerp`,
//! `addcmul`, `addcdiv`. The forward composes the binary kernels under
//! no-grad (promotion and broadcasting come with them); each op records one
//! node with PyTorch's name.

use super::arith::{binary, BinaryOp, Operand};
use super::arith_grad::{g0, keep_where, mul, muls, reduce_grad, rsubs, sub};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::op::TernaryOp;
use ferrotorch_core::{DType, Error, Result, Scalar};

/// An owned operand: a tensor or a Python number.
#[derive(Clone)]
pub enum Arg {
    /// A tensor.
    T(Tensor),
    /// A Python number.
    S(Scalar),
}

impl Arg {
    /// As a binary operand.
    pub fn op(&self) -> Operand<'_> {
        match self {
            Arg::T(t) => Operand::T(t),
            Arg::S(s) => Operand::S(*s),
        }
    }
    fn tensor(&self) -> Option<&Tensor> {
        match self {
            Arg::T(t) => Some(t),
            Arg::S(_) => None,
        }
    }
}

/// The constant boolean mask `x <op> bound`.
fn bool_mask(x: &Tensor, op: BinaryOp, bound: &Arg) -> Result<Tensor> {
    let _no_grad = GradModeGuard::new(false);
    match bound {
        Arg::S(s) => binary(Operand::T(&x.detach()), Operand::S(*s), op),
        Arg::T(b) => binary(Operand::T(&x.detach()), Operand::T(&b.detach()), op),
    }
}

/// `a.logical_and_(b)` / `logical_or_`: PyTorch's clamp_backward_min_max
/// combines its masks in place, so a `b` that broadcasts `a` to a larger
/// shape is an error there (raised when the gradient is computed).
fn inplace_logic(a: &Tensor, b: &Tensor, op: BinaryOp) -> Result<Tensor> {
    let shape = ferrotorch_core::layout::broadcast_shapes(a.shape(), b.shape())?;
    if shape.as_slice() != a.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            ferrotorch_core::layout::fmt_shape(a.shape()),
            ferrotorch_core::layout::fmt_shape(&shape)
        )));
    }
    let _no_grad = GradModeGuard::new(false);
    binary(Operand::T(a), Operand::T(b), op)
}

/// The constant boolean mask `lo <op> hi` of two bounds.
fn bounds_mask(lo: &Arg, op: BinaryOp, hi: &Arg) -> Result<Tensor> {
    let _no_grad = GradModeGuard::new(false);
    let detached = |a: &Arg| match a {
        Arg::T(t) => Arg::T(t.detach()),
        Arg::S(s) => Arg::S(*s),
    };
    let (lo, hi) = (detached(lo), detached(hi));
    binary(lo.op(), hi.op(), op)
}

impl Tensor {
    /// `clamp(min, max)`: NaN passes through; with `min > max` every element is
    /// `max`. Records `ClampBackward1` (scalar bounds) or `ClampBackward0`.
    pub fn clamp(&self, min: Option<Arg>, max: Option<Arg>) -> Result<Tensor> {
        if min.is_none() && max.is_none() {
            return Err(Error::runtime("torch.clamp: At least one of 'min' or 'max' must not be None"));
        }
        if self.dtype() == DType::Bool && (min.as_ref().is_some_and(|m| matches!(m, Arg::S(_))) || max.as_ref().is_some_and(|m| matches!(m, Arg::S(_)))) {
            // PyTorch names the scalar kernel that was picked.
            let kernel = match (&min, &max) {
                (Some(_), Some(_)) => "clamp_scalar",
                (Some(_), None) => "clamp_min_scalar",
                _ => "clamp_max_scalar",
            };
            return Err(ferrotorch_core::dtype::not_impl(kernel, DType::Bool));
        }
        let out = {
            let _no_grad = GradModeGuard::new(false);
            // One common dtype over input and both bounds, as PyTorch's
            // iterator: clamp(uint8, min=-5, max=3.2) compares in float32,
            // not -5 wrapped to uint8 first.
            let mut ops = vec![Operand::T(self)];
            ops.extend(min.iter().chain(max.iter()).map(|a| a.op()));
            let common = crate::ops::arith::common_dtype(&ops)?;
            let mut r = if common != self.dtype() { self.to_dtype(common)? } else { self.clone() };
            if let Some(lo) = &min {
                r = binary(Operand::T(&r), lo.op(), BinaryOp::Maximum)?;
            }
            if let Some(hi) = &max {
                r = binary(Operand::T(&r), hi.op(), BinaryOp::Minimum)?;
            }
            if r.same(self) {
                r = r.clone_data()?;
            }
            r
        };
        if !out.dtype().is_floating_point() {
            return Ok(out);
        }
        let tensor_bounds = min.as_ref().and_then(Arg::tensor).is_some() || max.as_ref().and_then(Arg::tensor).is_some();
        let name = if tensor_bounds { "ClampBackward0" } else { "ClampBackward1" };
        let (tmin, tmax) = (min.as_ref().and_then(Arg::tensor).cloned(), max.as_ref().and_then(Arg::tensor).cloned());
        let sx = SavedTensor::input(self);
        let (shape, dt) = (self.shape().to_vec(), self.dtype());
        let bshapes = (tmin.as_ref().map(|t| (t.shape().to_vec(), t.dtype())), tmax.as_ref().map(|t| (t.shape().to_vec(), t.dtype())));
        let (wmin, wmax) = (tmin.as_ref().is_some_and(|t| t.requires_grad()), tmax.as_ref().is_some_and(|t| t.requires_grad()));
        record(name, &[Some(self), tmin.as_ref(), tmax.as_ref()], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None, None, None]) };
                let x = sx.unpack(node)?;
                // PyTorch's clamp_backward / clamp_backward_min_max: each
                // gradient is `where(pred, g, 0)` (picked, so an infinite g
                // leaves no NaN where it is masked). With both bounds, min only
                // gets a gradient where `min < max`, and max also gets it
                // wherever `max < min` (the result is max there).
                let and = |a: Option<Tensor>, b: Tensor| -> Result<Tensor> {
                    match a {
                        Some(a) => inplace_logic(&a, &b, BinaryOp::LogicalAnd),
                        None => Ok(b),
                    }
                };
                // Only the gradients that are needed are computed (and can
                // raise the in-place broadcast error), as in PyTorch.
                let gx = if node.next_edges()[0].is_some() {
                    let mut inside: Option<Tensor> = None;
                    if let Some(lo) = &min {
                        inside = Some(and(inside, bool_mask(&x, BinaryOp::Ge, lo)?)?);
                    }
                    if let Some(hi) = &max {
                        inside = Some(and(inside, bool_mask(&x, BinaryOp::Le, hi)?)?);
                    }
                    Some(match &inside {
                        Some(m) => reduce_grad(&keep_where(m, &g)?, &shape, dt)?,
                        None => reduce_grad(&g, &shape, dt)?,
                    })
                } else {
                    None
                };
                let gmin = match (&min, &bshapes.0) {
                    (Some(lo), Some((s, d))) if wmin => {
                        let mut pred = bool_mask(&x, BinaryOp::Lt, lo)?;
                        if let Some(hi) = &max {
                            pred = and(Some(pred), bounds_mask(lo, BinaryOp::Lt, hi)?)?;
                        }
                        Some(reduce_grad(&keep_where(&pred, &g)?, s, *d)?)
                    }
                    _ => None,
                };
                let gmax = match (&max, &bshapes.1) {
                    (Some(hi), Some((s, d))) if wmax => {
                        let mut pred = bool_mask(&x, BinaryOp::Gt, hi)?;
                        if let Some(lo) = &min {
                            pred = inplace_logic(&pred, &bounds_mask(hi, BinaryOp::Lt, lo)?, BinaryOp::LogicalOr)?;
                        }
                        Some(reduce_grad(&keep_where(&pred, &g)?, s, *d)?)
                    }
                    _ => None,
                };
                Ok(vec![gx, gmin, gmax])
            })
        });
        Ok(out)
    }

    /// `lerp(end, weight)`: `self + weight * (end - self)`, computed from the
    /// nearer end as PyTorch does. Records `LerpBackward0` (scalar weight) or
    /// `LerpBackward1`.
    pub fn lerp(&self, end: &Tensor, weight: Arg) -> Result<Tensor> {
        if self.dtype() != end.dtype() {
            return Err(Error::runtime(format!(
                "expected dtype {} for `end` but got dtype {}",
                super::creation::pretty(self.dtype()),
                super::creation::pretty(end.dtype())
            )));
        }
        // A tensor weight must match too, unless it is 0-d (a Python number is
        // cast): PyTorch's iterator then takes it like a number, and a result
        // of 0-d operands only is promoted over all three (bfloat16 start and
        // end with a float64 weight give float64).
        if let Some(w) = weight.tensor().filter(|w| w.dtype() != self.dtype() && w.ndim() > 0) {
            return Err(Error::runtime(format!(
                "expected dtype {} for `weight` but got dtype {}",
                super::creation::pretty(self.dtype()),
                super::creation::pretty(w.dtype())
            )));
        }
        if !self.dtype().is_floating_point() {
            return Err(ferrotorch_core::dtype::not_impl("lerp_kernel_scalar", self.dtype()));
        }
        let out_dt = match weight.tensor() {
            Some(w) if self.ndim() == 0 && end.ndim() == 0 => {
                super::arith::common_dtype(&[Operand::T(self), Operand::T(end), Operand::T(w)])?
            }
            _ => self.dtype(),
        };
        let out = {
            let _no_grad = GradModeGuard::new(false);
            // PyTorch's lerp_vec, in the opmath dtype (float16/bfloat16 in
            // float32, rounded once) with the operands cast to the result's
            // dtype first: `fma(coeff, end - start, base)`, where a small
            // weight (|w| < 0.5) gives coeff w and base start, any other
            // (NaN included) w - 1 and end. The fused multiply-add keeps
            // `end - (end - start) * (1 - w)` finite where the product alone
            // would overflow (lerp(3, 3e38, -0.951) is -2.853e38, not -inf).
            let work = super::arith::opmath(out_dt);
            let start = super::arith::to_opmath(&Operand::T(self), out_dt)?;
            let end_w = super::arith::to_opmath(&Operand::T(end), out_dt)?;
            let w = match &weight {
                Arg::T(w) => super::arith::to_opmath(&Operand::T(w), out_dt)?,
                // A number weight is converted to the kernel's type.
                Arg::S(s) => Tensor::scalar(super::arith::scalar_arg(*s, work)?.to_f64())?.to_dtype(work)?,
            };
            let abs_w = super::arith::unary(&w, super::arith::UnaryOp::Abs)?;
            let small = binary(Operand::T(&abs_w), Operand::S(Scalar::Float(0.5)), BinaryOp::Lt)?;
            let w1 = binary(Operand::T(&w), Operand::S(Scalar::Float(1.0)), BinaryOp::Sub)?;
            let coeff = super::indexing::masked::where_raw(&small, &w, &w1, work)?;
            let base = super::indexing::masked::where_raw(&small, &start, &end_w, work)?;
            let diff = binary(Operand::T(&end_w), Operand::T(&start), BinaryOp::Sub)?;
            let r = fma_raw(&coeff, &diff, &base, work)?;
            if r.dtype() != out_dt { r.to_dtype(out_dt)? } else { r }
        };
        let tw = weight.tensor().cloned();
        let name = if tw.is_some() { "LerpBackward1" } else { "LerpBackward0" };
        let (ss, se) = (SavedTensor::input(self), SavedTensor::input(end));
        let sw = tw.as_ref().map(SavedTensor::input);
        let shapes = (self.shape().to_vec(), end.shape().to_vec(), tw.as_ref().map(|t| t.shape().to_vec()));
        let dt = self.dtype();
        let ws = match &weight {
            Arg::S(s) => s.to_f64(),
            Arg::T(_) => 0.0,
        };
        record(name, &[Some(self), Some(end), tw.as_ref()], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None, None, None]) };
                let w = match &sw {
                    Some(s) => Some(s.unpack(node)?),
                    None => None,
                };
                let (gs, ge) = match &w {
                    Some(w) => (mul(&g, &rsubs(1.0, w)?)?, mul(&g, w)?),
                    None => (muls(&g, 1.0 - ws)?, muls(&g, ws)?),
                };
                let gw = match (&w, &shapes.2) {
                    (Some(w), Some(s)) => {
                        let d = sub(&se.unpack(node)?, &ss.unpack(node)?)?;
                        Some(reduce_grad(&mul(&g, &d)?, s, w.dtype())?)
                    }
                    _ => None,
                };
                Ok(vec![Some(reduce_grad(&gs, &shapes.0, dt)?), Some(reduce_grad(&ge, &shapes.1, dt)?), gw])
            })
        });
        Ok(out)
    }

    /// `addcmul(t1, t2, value)` (`div = false`) or `addcdiv`: `self + value * t1 op t2`.
    /// Records `AddcmulBackward0` / `AddcdivBackward0`.
    pub fn addc(&self, t1: &Tensor, t2: &Tensor, value: Scalar, div: bool) -> Result<Tensor> {
        if div && !t1.dtype().is_floating_point() && !t2.dtype().is_floating_point() {
            return Err(Error::runtime(
                "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
            ));
        }
        let op = if div { BinaryOp::Div } else { BinaryOp::Mul };
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let common = ferrotorch_core::dtype::result_type(&[
                (self.dtype(), kind(self)),
                (t1.dtype(), kind(t1)),
                (t2.dtype(), kind(t2)),
            ])?;
            // PyTorch's kernel: `self + value * t1 op t2` in the opmath dtype
            // (one rounding for float16/bfloat16), `value` converted to it first
            // (truncated for integer tensors).
            // The tensors are cast to the common dtype before widening (an
            // int32 2^31-1 is inf in a float16 addcdiv, as in PyTorch's iterator).
            let work = super::arith::opmath(common);
            let v = super::arith::scalar_arg(value, work)?;
            let wide = |x: &Tensor| super::arith::to_opmath(&Operand::T(x), common);
            let (w1, w2) = (wide(t1)?, wide(t2)?);
            // PyTorch's iterator checks the shapes before its kernel's dtype.
            let shape = ferrotorch_core::layout::broadcast_shapes(self.shape(), t1.shape())?;
            ferrotorch_core::layout::broadcast_shapes(&shape, t2.shape())?;
            if common == DType::Bool {
                let k = if div { "addcdiv_cpu_out" } else { "addcmul_cpu_out" };
                return Err(Error::not_implemented(format!("\"{k}\" not implemented for 'Bool'")));
            }
            let q = binary(Operand::T(&w1), Operand::S(v), BinaryOp::Mul)?;
            let r = if !div && matches!(work, DType::Float32 | DType::Float64) {
                // PyTorch's float kernels compile `self + value * t1 * t2` to a
                // fused multiply-add of `(value * t1) * t2` onto `self`: a
                // product beyond the dtype's range does not become inf first
                // (-inf + 2 * 8 * 3e38 is -inf, not NaN; -3e38 + 2 * 3e38 is 3e38).
                fma_raw(&q, &w2, &wide(self)?, work)?
            } else {
                let q = binary(Operand::T(&q), Operand::T(&w2), op)?;
                binary(Operand::T(&wide(self)?), Operand::T(&q), BinaryOp::Add)?
            };
            if r.dtype() != common { r.to_dtype(common)? } else { r }
        };
        if !out.dtype().is_floating_point() {
            return Ok(out);
        }
        let name = if div { "AddcdivBackward0" } else { "AddcmulBackward0" };
        let (s1, s2) = (SavedTensor::input(t1), SavedTensor::input(t2));
        let shapes = [(self.shape().to_vec(), self.dtype()), (t1.shape().to_vec(), t1.dtype()), (t2.shape().to_vec(), t2.dtype())];
        let want1 = t1.requires_grad();
        record(name, &[Some(self), Some(t1), Some(t2)], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None, None, None]) };
                let (a, b) = (s1.unpack(node)?, s2.unpack(node)?);
                let val = Operand::S(value);
                // PyTorch's derivatives.yaml formulas, with `value` applied to
                // the other tensor in its own dtype: an integer tensor times an
                // integer value wraps (uint8 3 * -1 is 253), as there.
                let (g1, g2) = if div {
                    // tensor1: g * (value / tensor2). PyTorch computes the quotient
                    // in place in tensor2's dtype and refuses an integer one.
                    if want1 && !b.dtype().is_floating_point() {
                        return Err(Error::runtime(format!(
                            "result type Float can't be cast to the desired output type {}",
                            super::creation::pretty(b.dtype())
                        )));
                    }
                    let g1 = mul(&g, &binary(val, Operand::T(&b), BinaryOp::Div)?)?;
                    // tensor2: -g * (value * tensor1 / (tensor2 * tensor2))
                    let num = binary(val, Operand::T(&a), BinaryOp::Mul)?;
                    let g2 = mul(&g, &super::arith_grad::div(&num, &mul(&b, &b)?)?)?;
                    (g1, super::arith::unary(&g2, super::arith::UnaryOp::Neg)?)
                } else {
                    let g1 = mul(&g, &binary(Operand::T(&b), val, BinaryOp::Mul)?)?;
                    let g2 = mul(&g, &binary(Operand::T(&a), val, BinaryOp::Mul)?)?;
                    (g1, g2)
                };
                Ok(vec![
                    Some(reduce_grad(&g, &shapes[0].0, shapes[0].1)?),
                    Some(reduce_grad(&g1, &shapes[1].0, shapes[1].1)?),
                    Some(reduce_grad(&g2, &shapes[2].0, shapes[2].1)?),
                ])
            })
        });
        Ok(out)
    }
}

fn kind(t: &Tensor) -> ferrotorch_core::dtype::OperandKind {
    if t.ndim() == 0 {
        ferrotorch_core::dtype::OperandKind::ZeroDim
    } else {
        ferrotorch_core::dtype::OperandKind::Dim
    }
}


/// `a * b + c` elementwise with one rounding (`mul_add`), over the broadcast
/// shape, in `dtype` (float32 or float64): the `vec::fmadd` of PyTorch's
/// vectorised kernels.
fn fma_raw(a: &Tensor, b: &Tensor, c: &Tensor, dtype: DType) -> Result<Tensor> {
    use super::{broadcast_layout, common_device};
    use ferrotorch_core::layout::broadcast_shapes;
    let device = common_device(&[a, b, c])?;
    let shape = broadcast_shapes(&broadcast_shapes(a.shape(), b.shape())?, c.shape())?;
    let (a, b, c) = (a.to_dtype(dtype)?, b.to_dtype(dtype)?, c.to_dtype(dtype)?);
    let (a, b, c) = (super::on_device(&a, device)?.into_owned(), super::on_device(&b, device)?.into_owned(), super::on_device(&c, device)?.into_owned());
    let out = Tensor::empty(&shape, dtype, device)?;
    let (la, lb, lc) = (broadcast_layout(&a, &shape)?, broadcast_layout(&b, &shape)?, broadcast_layout(&c, &shape)?);
    out.backend()?.ternary(TernaryOp::MulAdd, dtype, out.operand_mut()?.dst(), a.operand_as(&la)?.src(), b.operand_as(&lb)?.src(), c.operand_as(&lc)?.src())?;
    Ok(out)
}
