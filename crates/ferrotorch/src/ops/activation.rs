//! Activations whose backward PyTorch computes with its own kernel rather than
//! through the composition of their forward ops (whose rounding and overflow
//! differ from it).

use super::arith::{binary, opmath, unary, BinaryOp, Operand, UnaryOp};
use super::arith_grad::g0;
use super::creation::pretty;
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{Error, Result, Scalar};

impl Tensor {
    /// `F.glu(self, dim)`: `a * sigmoid(b)` for the two halves `a`, `b` of
    /// `dim`, recording `GluBackward0`. PyTorch's backward is
    /// `grad_a = sigmoid(b) * g` and `grad_b = (1 - s) * s * a * g` with
    /// `s = sigmoid(b)` stored in the dtype, evaluated left to right (in
    /// float32 for float16/bfloat16, rounded once): `(1 - s) * s` shrinks
    /// before `a` and `g` scale it, so it stays finite where the chain rule
    /// through `a * sigmoid(b)` (`(g * a) * (1 - s) * s`) overflows.
    pub fn glu(&self, dim: i64) -> Result<Tensor> {
        let dt = self.dtype();
        if self.ndim() == 0 {
            return Err(Error::runtime("glu does not support scalars because halving size must be even"));
        }
        let d = ferrotorch_core::error::wrap_dim(dim, self.ndim())?;
        let n = self.shape()[d];
        if n % 2 != 0 {
            return Err(Error::runtime(format!("Halving dimension must be even, but dimension {d} is size {n}")));
        }
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"glu_cpu\" not implemented for '{}'", pretty(dt))));
        }
        let h = (n / 2) as i64;
        let work = opmath(dt);
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let (a, b) = (self.narrow(d as i64, 0, h)?.to_dtype(work)?, self.narrow(d as i64, h, h)?.to_dtype(work)?);
            binary(Operand::T(&a), Operand::T(&sigmoid_by_exp(&b)?), BinaryOp::Mul)?.to_dtype(dt)?
        };
        let sx = SavedTensor::input(self);
        record("GluBackward0", &[Some(self)], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None]) };
                let x = sx.unpack(node)?;
                let (a, b) = (x.narrow(d as i64, 0, h)?, x.narrow(d as i64, h, h)?);
                let s = sigmoid_by_exp(&b.to_dtype(work)?)?.to_dtype(x.dtype())?;
                let ga = binary(Operand::T(&s), Operand::T(&g), BinaryOp::Mul)?;
                let mul = |p: &Tensor, q: &Tensor| binary(Operand::T(p), Operand::T(q), BinaryOp::Mul);
                let (sw, aw, gw) = (s.to_dtype(work)?, a.to_dtype(work)?, g.to_dtype(work)?);
                let one_minus = binary(Operand::S(Scalar::Int(1)), Operand::T(&sw), BinaryOp::Sub)?;
                let gb = mul(&mul(&mul(&one_minus, &sw)?, &aw)?, &gw)?.to_dtype(x.dtype())?;
                Ok(vec![Some(Tensor::cat(&[ga, gb], d as i64)?)])
            })
        });
        Ok(out)
    }
}

impl Tensor {
    /// `F.prelu(self, weight)`: `x > 0 ? x : w * x` with one weight per
    /// channel (dim 1) or one shared weight, recording `PreluKernelBackward0`.
    /// The caller has checked the dtypes and the weight count. PyTorch's
    /// backward selects rather than multiplies by a mask, so an infinite
    /// weight does not turn the gradient of positive inputs into NaN:
    /// `grad_x = x > 0 ? g : w * g`, `grad_w = x > 0 ? 0 : x * g` summed over
    /// everything but the channel.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, -2.0], &[2])?;
    /// let w = Tensor::from_vec(vec![0.25f32], &[1])?;
    /// assert_eq!(x.prelu(&w)?.to_vec::<f32>()?, vec![1.0, -0.5]);
    /// # Ok::<(), ferrotorch_core::Error>(())
    /// ```
    pub fn prelu(&self, weight: &Tensor) -> Result<Tensor> {
        let nd = self.ndim();
        // The weight broadcast against the input: per channel along dim 1.
        let w = if weight.numel() == 1 {
            weight.reshape(&[])?
        } else if nd >= 2 {
            let mut shape = vec![weight.numel() as i64];
            shape.extend(std::iter::repeat_n(1, nd - 2));
            weight.reshape(&shape)?
        } else {
            weight.clone()
        };
        let out = {
            let _no_grad = GradModeGuard::new(false);
            prelu_select(self, self, &w, self)?
        };
        let (sx, sw) = (SavedTensor::input(self), SavedTensor::input(weight));
        let (wshape, wb) = (weight.shape().to_vec(), w.shape().to_vec());
        record("PreluKernelBackward0", &[Some(self), Some(weight)], &[&out], move || {
            rule(move |node, grads| {
                let Some(g) = g0(grads) else { return Ok(vec![None, None]) };
                let (x, weight) = (sx.unpack(node)?, sw.unpack(node)?);
                let w = weight.reshape(&wb.iter().map(|&d| d as i64).collect::<Vec<_>>())?;
                let gx = prelu_select(&x, &g, &w, &g)?;
                let zero = Tensor::zeros(&[], g.dtype(), g.device())?;
                let gw = prelu_select(&x, &zero, &x, &g)?.sum_to(&wb)?;
                Ok(vec![Some(gx), Some(gw.reshape(&wshape.iter().map(|&d| d as i64).collect::<Vec<_>>())?)])
            })
        });
        Ok(out)
    }
}

/// `x > 0 ? pos : a * b`, broadcast, as one select (no `0 * inf`).
fn prelu_select(x: &Tensor, pos: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let cond = binary(Operand::T(x), Operand::S(Scalar::Int(0)), BinaryOp::Gt)?;
    let neg = binary(Operand::T(a), Operand::T(b), BinaryOp::Mul)?;
    super::indexing::where_(&cond, Operand::T(pos), Operand::T(&neg))
}

/// `1 / (1 + exp(-x))` as PyTorch's float kernels evaluate it (glu's, and its
/// sigmoid's): `exp(-x)` overflows for x below about -88.7 in float32, so the
/// result is 0 there rather than the exact denormal, and `inf * sigmoid(-100)`
/// is NaN as in PyTorch.
fn sigmoid_by_exp(x: &Tensor) -> Result<Tensor> {
    let e = unary(&unary(x, UnaryOp::Neg)?, UnaryOp::Exp)?;
    let d = binary(Operand::S(Scalar::Int(1)), Operand::T(&e), BinaryOp::Add)?;
    binary(Operand::S(Scalar::Int(1)), Operand::T(&d), BinaryOp::Div)
}
