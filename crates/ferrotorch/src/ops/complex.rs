//! The ops of complex tensors themselves: views of their parts
//! (`view_as_real`, `view_as_complex`, `real`, `imag`), building one from parts
//! (`complex`, `polar`) and conjugation, with PyTorch's node names.
//!
//! Gradients follow PyTorch's convention for complex numbers: the gradient of
//! a real loss `L` with respect to `z = x + iy` is `∂L/∂x + i ∂L/∂y` (the
//! conjugate Wirtinger derivative, doubled), so a holomorphic `f` passes
//! `g * conj(f'(z))` back, and a real input of a complex result takes the
//! real part of its gradient. The rules here are written in that convention
//! ([`rule_native`](crate::autograd::rule_native)).

use super::arith::{binary_raw, unary, unary_raw, Operand};
use super::arith_grad::{g0, reduce_grad};
use crate::autograd::{record, rule_native as rule};
use crate::Tensor;
use ferrotorch_core::layout::broadcast_shapes;
use ferrotorch_core::{BinaryOp, DType, Error, Layout, Result, UnaryOp};

use super::creation::pretty;

impl Tensor {
    /// `torch.view_as_real(z)`: the complex tensor's storage as its real
    /// dtype, with a last dim of size 2 holding the real and imaginary parts.
    pub fn view_as_real(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Err(Error::runtime("view_as_real is only supported for complex tensors"));
        }
        let out = self.make_view_as(self.layout().as_real_parts(), self.dtype().to_real())?;
        record("ViewAsRealBackward0", &[Some(self)], &[&out], || {
            rule(|_, g| Ok(vec![g0(g).map(|g| g.contiguous()?.view_as_complex()).transpose()?]))
        });
        Ok(out)
    }

    /// `torch.view_as_complex(x)`: a float32/float64 tensor whose last dim
    /// has size 2 and stride 1 seen as complex numbers (pairs of reals).
    pub fn view_as_complex(&self) -> Result<Tensor> {
        let dt = self.dtype();
        let Some(cdt) = dt.to_complex().filter(|_| matches!(dt, DType::Float32 | DType::Float64)) else {
            return Err(Error::runtime(format!(
                "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
                pretty(dt)
            )));
        };
        let l = self.layout();
        let n = l.ndim();
        if n == 0 {
            return Err(Error::runtime("Input tensor must have one or more dimensions"));
        }
        if l.shape[n - 1] != 2 {
            return Err(Error::runtime("Tensor must have a last dimension of size 2"));
        }
        if l.strides[n - 1] != 1 {
            return Err(Error::runtime("Tensor must have a last dimension with stride 1"));
        }
        if l.strides[..n - 1].iter().any(|s| s % 2 != 0) {
            return Err(Error::runtime("Tensor must have a stride divisible by 2 for all but last dimension"));
        }
        if l.offset % 2 != 0 {
            return Err(Error::runtime("Tensor must have a storage_offset divisible by 2"));
        }
        let layout = Layout {
            shape: l.shape[..n - 1].into(),
            strides: l.strides[..n - 1].iter().map(|s| s / 2).collect(),
            offset: l.offset / 2,
        };
        let out = self.make_view_as(layout, cdt)?;
        record("ViewAsComplexBackward0", &[Some(self)], &[&out], || {
            rule(|_, g| Ok(vec![g0(g).map(|g| g.view_as_real()).transpose()?]))
        });
        Ok(out)
    }

    /// `z.real`: a view of the real parts (the tensor itself when real).
    pub fn real(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        self.view_as_real()?.select(-1, 0)
    }

    /// `z.imag`: a view of the imaginary parts; real tensors have none.
    pub fn imag(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Err(Error::runtime("imag is not implemented for tensors with non-complex dtypes."));
        }
        self.view_as_real()?.select(-1, 1)
    }

    /// The complex conjugate, computed now (`conj()` and `conj_physical()`;
    /// ferrotorch keeps no lazy conjugate bit). Real tensors are returned as
    /// they are. Records `ConjBackward0` (or `ConjPhysicalBackward0` when
    /// `physical`).
    pub fn conj_with(&self, physical: bool) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        let out = self.conj_raw()?;
        let name = if physical { "ConjPhysicalBackward0" } else { "ConjBackward0" };
        record(name, &[Some(self)], &[&out], move || rule(move |_, g| Ok(vec![g0(g).map(|g| g.conj_with(physical)).transpose()?])));
        Ok(out)
    }

    /// `conj()`.
    pub fn conj(&self) -> Result<Tensor> {
        self.conj_with(false)
    }

    /// The conjugate without autograd: the parts multiplied by (1, -1), one
    /// real kernel over the interleaved view.
    pub(crate) fn conj_raw(&self) -> Result<Tensor> {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let rdt = self.dtype().to_real();
        let parts = self.make_view_as(self.layout().as_real_parts(), rdt)?;
        let sign = Tensor::from_vec(vec![1.0f64, -1.0], &[2])?.to_dtype(rdt)?.to_device(self.device(), rdt, false)?;
        let r = binary_raw(Operand::T(&parts), Operand::T(&sign), BinaryOp::Mul)?;
        Tensor::from_parts(r.storage().clone(), Layout::contiguous(self.shape()), self.dtype())
    }

    /// `torch.complex(real, imag)`: a complex tensor from float16/32/64
    /// parts of one dtype (broadcast together). Records `ComplexBackward0`.
    pub fn complex(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
        let out = complex_raw(real, imag)?;
        let (rs, is, rd, id) = (real.shape().to_vec(), imag.shape().to_vec(), real.dtype(), imag.dtype());
        record("ComplexBackward0", &[Some(real), Some(imag)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                Ok(vec![Some(reduce_grad(&g.real()?, &rs, rd)?), Some(reduce_grad(&g.imag()?, &is, id)?)])
            })
        });
        Ok(out)
    }

    /// `torch.polar(abs, angle)`: `abs * (cos(angle) + i sin(angle))`.
    /// Records `PolarBackward0`.
    pub fn polar(abs: &Tensor, angle: &Tensor) -> Result<Tensor> {
        check_parts(abs, angle)?;
        let out = {
            let _no_grad = crate::autograd::GradModeGuard::new(false);
            let re = binary_raw(Operand::T(abs), Operand::T(&unary_raw(angle, UnaryOp::Cos)?), BinaryOp::Mul)?;
            let im = binary_raw(Operand::T(abs), Operand::T(&unary_raw(angle, UnaryOp::Sin)?), BinaryOp::Mul)?;
            complex_raw(&re, &im)?
        };
        let (r, th) = (abs.detach(), angle.detach());
        let (rs, ts, rd, td) = (abs.shape().to_vec(), angle.shape().to_vec(), abs.dtype(), angle.dtype());
        record("PolarBackward0", &[Some(abs), Some(angle)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                // With g = gx + i gy: ∂/∂r = gx cos θ + gy sin θ and
                // ∂/∂θ = r (gy cos θ - gx sin θ).
                let (gx, gy) = (g.real()?, g.imag()?);
                let (c, s) = (unary(&th, UnaryOp::Cos)?, unary(&th, UnaryOp::Sin)?);
                let mul = |a: &Tensor, b: &Tensor| super::arith::binary(Operand::T(a), Operand::T(b), BinaryOp::Mul);
                let add = |a: &Tensor, b: &Tensor| super::arith::binary(Operand::T(a), Operand::T(b), BinaryOp::Add);
                let sub = |a: &Tensor, b: &Tensor| super::arith::binary(Operand::T(a), Operand::T(b), BinaryOp::Sub);
                let gr = add(&mul(&gx, &c)?, &mul(&gy, &s)?)?;
                let gt = mul(&r, &sub(&mul(&gy, &c)?, &mul(&gx, &s)?)?)?;
                Ok(vec![Some(reduce_grad(&gr, &rs, rd)?), Some(reduce_grad(&gt, &ts, td)?)])
            })
        });
        Ok(out)
    }
}

/// PyTorch's checks of `complex`/`polar` parts: float16/32/64 of one dtype.
fn check_parts(real: &Tensor, imag: &Tensor) -> Result<()> {
    let (a, b) = (real.dtype(), imag.dtype());
    let ok = |d: DType| matches!(d, DType::Float16 | DType::Float32 | DType::Float64);
    if !ok(a) || !ok(b) {
        return Err(Error::runtime(format!(
            "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
            pretty(a),
            pretty(b)
        )));
    }
    if a != b {
        return Err(Error::runtime(format!(
            "Expected object of scalar type {} but got scalar type {} for second argument",
            pretty(a),
            pretty(b)
        )));
    }
    if a == DType::Float16 {
        return Err(Error::runtime("complex32 (ComplexHalf) is not supported by ferrotorch"));
    }
    Ok(())
}

/// `complex(real, imag)` without autograd: both parts copied into the
/// interleaved view of a fresh complex tensor of their broadcast shape.
fn complex_raw(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
    check_parts(real, imag)?;
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    let device = super::common_device(&[real, imag])?;
    let shape = broadcast_shapes(real.shape(), imag.shape())?;
    let cdt = real.dtype().to_complex().ok_or_else(|| Error::runtime("complex: no complex dtype for the parts"))?;
    let out = Tensor::empty(&shape, cdt, device)?;
    let parts = out.make_view_as(out.layout().as_real_parts(), real.dtype())?;
    parts.select(-1, 0)?.init_from(real)?;
    parts.select(-1, 1)?.init_from(imag)?;
    Ok(out)
}
