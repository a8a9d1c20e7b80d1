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
        if self.is_conj() {
            return Err(Error::runtime(
                "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original.",
            ));
        }
        self.parts_view()
    }

    /// [`view_as_real`](Self::view_as_real) of the stored values, whatever
    /// the conjugate bit (the real parts are the same either way; under the
    /// bit the stored parts are those of the conjugate, so the gradient goes
    /// back conjugated).
    fn parts_view(&self) -> Result<Tensor> {
        let out = self.make_view_as(self.layout().as_real_parts(), self.dtype().to_real())?;
        let conj = self.is_conj();
        record("ViewAsRealBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = g.contiguous()?.view_as_complex()?;
                Ok(vec![Some(if conj { z.conj_physical()? } else { z })])
            })
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
    /// Conjugation leaves them as they are, so a conjugate-bit tensor gives
    /// the view of its stored real parts.
    pub fn real(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        self.parts_view()?.select(-1, 0)
    }

    /// `z.imag`: a view of the imaginary parts; real tensors have none.
    /// Under the conjugate bit they are the negated stored parts, which
    /// PyTorch gives as a negative-bit view; ferrotorch has no negative bit
    /// and returns them negated into a new tensor (`NegBackward0`).
    pub fn imag(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Err(Error::runtime("imag is not implemented for tensors with non-complex dtypes."));
        }
        let stored = self.parts_view()?.select(-1, 1)?;
        if self.is_conj() {
            return unary(&stored, UnaryOp::Neg);
        }
        Ok(stored)
    }

    /// `conj()` (`physical`: `conj_physical()`): real tensors are returned
    /// as they are. `conj()` of a complex tensor is a view with the
    /// conjugate bit flipped (`ConjBackward0`); `conj_physical()` computes
    /// the conjugates into a new tensor (`ConjPhysicalBackward0`).
    pub fn conj_with(&self, physical: bool) -> Result<Tensor> {
        if physical {
            self.conj_physical()
        } else {
            self.conj()
        }
    }

    /// `conj()`: the tensor itself when real, else a view sharing storage and
    /// version counter with the conjugate bit flipped. Records `ConjBackward0`.
    pub fn conj(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        let out = self.conj_view()?;
        record("ConjBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g).map(|g| g.conj()).transpose()?])));
        Ok(out)
    }

    /// `conj_physical()`: the tensor itself when real, else the conjugates
    /// in a new tensor without the conjugate bit. Records `ConjPhysicalBackward0`.
    pub fn conj_physical(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return Ok(self.clone());
        }
        let out = self.conj_raw()?;
        record("ConjPhysicalBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g).map(|g| g.conj_physical()).transpose()?])));
        Ok(out)
    }

    /// `resolve_conj()`: itself without the conjugate bit, else a new tensor
    /// holding the conjugated values (a clone: `CloneBackward0`, as PyTorch).
    pub fn resolve_conj(&self) -> Result<Tensor> {
        if !self.is_conj() {
            return Ok(self.clone());
        }
        self.clone_data()
    }

    /// The conjugate without autograd: the parts multiplied by (1, -1), one
    /// real kernel over the interleaved view. Under the conjugate bit the
    /// conjugates are the stored values, copied.
    pub(crate) fn conj_raw(&self) -> Result<Tensor> {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        if self.is_conj() {
            return self.conj_view()?.clone_data();
        }
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

#[cfg(test)]
mod tests {
    use crate::Tensor;
    use ferrotorch_core::{BinaryOp, DType};

    /// `[re0, im0, re1, im1, ...]` as a complex128 tensor of `n` elements.
    fn c(parts: Vec<f64>) -> Tensor {
        let n = parts.len() / 2;
        Tensor::from_vec(parts, &[n, 2]).unwrap().view_as_complex().unwrap()
    }

    fn parts(t: &Tensor) -> Vec<f64> {
        t.view_as_real().unwrap().contiguous().unwrap().to_vec::<f64>().unwrap()
    }

    /// The parts are views at doubled strides; conjugation flips the
    /// imaginary parts.
    #[test]
    fn parts_and_conjugate() {
        let z = c(vec![1.0, 2.0, -3.0, 0.5]);
        assert_eq!(z.dtype(), DType::Complex128);
        let im = z.imag().unwrap();
        assert_eq!((im.strides(), im.storage_offset()), (&[2isize][..], 1));
        assert_eq!(im.to_vec::<f64>().unwrap(), vec![2.0, 0.5]);
        // conj() is a view with the bit: resolved, the parts are conjugated;
        // its real view is refused as PyTorch's.
        let zc = z.conj().unwrap();
        assert!(zc.is_conj() && zc.view_as_real().is_err());
        assert_eq!(parts(&zc.resolve_conj().unwrap()), vec![1.0, -2.0, -3.0, -0.5]);
        assert_eq!(parts(&z.conj_physical().unwrap()), vec![1.0, -2.0, -3.0, -0.5]);
        let back = Tensor::complex(&z.real().unwrap(), &im).unwrap();
        assert_eq!(parts(&back), parts(&z));
    }

    /// Gradients in PyTorch's convention, against closed forms: for
    /// `L = Re(z w)` the gradient `∂L/∂x + i ∂L/∂y` is `conj(w)`, and for
    /// `L = |z|^2` it is `2 z`.
    #[test]
    fn wirtinger_gradients() {
        let z = c(vec![1.0, 2.0, -3.0, 0.5]);
        let w = c(vec![0.5, -1.0, 2.0, 4.0]);
        z.set_requires_grad(true).unwrap();
        let prod = crate::ops::arith::binary(super::Operand::T(&z), super::Operand::T(&w), BinaryOp::Mul).unwrap();
        crate::autograd::backward(&[prod.real().unwrap().sum().unwrap()], vec![None], None, false, None).unwrap();
        assert_eq!(parts(&z.grad().unwrap()), vec![0.5, 1.0, 2.0, -4.0]);
        z.set_grad(None);
        let a = crate::ops::arith::unary(&z, ferrotorch_core::UnaryOp::Abs).unwrap();
        let sq = crate::ops::arith::binary(super::Operand::T(&a), super::Operand::T(&a), BinaryOp::Mul).unwrap();
        crate::autograd::backward(&[sq.sum().unwrap()], vec![None], None, false, None).unwrap();
        let g = parts(&z.grad().unwrap());
        for (got, want) in g.iter().zip([2.0, 4.0, -6.0, 1.0]) {
            assert!((got - want).abs() < 1e-12, "{g:?}");
        }
    }
}
