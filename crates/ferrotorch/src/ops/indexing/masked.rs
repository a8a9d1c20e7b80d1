//! Condition-driven ops: `where`, `masked_fill(_)`, `masked_select`,
//! `masked_scatter(_)`, `nonzero`. `where` has its own ternary loop; the rest
//! are built from it and from advanced indexing, so their gradients follow.

use super::kernels::nonzero_raw;
use crate::autograd::{apply_inplace, apply_inplace_kernel, needs_grad, record, rule, GradModeGuard, OldValue};
use crate::defaults::default_dtype;
use crate::ops::arith::Operand;
use crate::ops::arith_grad::{g0, reduce_grad};
use crate::ops::{broadcast_layout, common_device, on_device};
use crate::ops::creation::pretty;
use crate::Tensor;
use ferrotorch_core::dtype::{result_type, OperandKind};
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{DType, Error, Result, Scalar};

/// `out = cond ? x : y` over the broadcast shape, computed in `dtype`.
pub(crate) fn where_raw(cond: &Tensor, x: &Tensor, y: &Tensor, dtype: DType) -> Result<Tensor> {
    let _g = GradModeGuard::new(false);
    let device = common_device(&[cond, x, y])?;
    let shape = broadcast_shapes(&broadcast_shapes(cond.shape(), x.shape())?, y.shape())?;
    let c = cond.to_dtype(DType::Bool)?;
    let (x, y) = (x.to_dtype(dtype)?, y.to_dtype(dtype)?);
    let (c, x, y) = (on_device(&c, device)?.into_owned(), on_device(&x, device)?.into_owned(), on_device(&y, device)?.into_owned());
    let out = Tensor::empty(&shape, dtype, device)?;
    let (lc, lx, ly) = (broadcast_layout(&c, &shape)?, broadcast_layout(&x, &shape)?, broadcast_layout(&y, &shape)?);
    let (rc, rx, ry) = (c.operand_as(&lc)?, x.operand_as(&lx)?, y.operand_as(&ly)?);
    out.backend()?.select(dtype, out.operand_mut()?.dst(), rc.src(), rx.src(), ry.src())?;
    Ok(out)
}

fn scalar_t(s: Scalar) -> Result<Tensor> {
    match s {
        Scalar::Bool(b) => Tensor::scalar(b),
        Scalar::Int(i) => Tensor::scalar(i),
        Scalar::Float(f) => Tensor::scalar(f),
        Scalar::Complex(re, im) => Tensor::scalar_complex(re, im),
    }
}

fn info(o: &Operand) -> (DType, OperandKind) {
    match o {
        Operand::T(t) => (t.dtype(), if t.ndim() == 0 { OperandKind::ZeroDim } else { OperandKind::Dim }),
        Operand::S(s) => (s.inferred_dtype(default_dtype()), OperandKind::Scalar),
    }
}

fn check_bool(op: &str, t: &Tensor) -> Result<()> {
    if !matches!(t.dtype(), DType::Bool | DType::UInt8) {
        return Err(Error::runtime(format!("{op} expected condition to be a boolean tensor, but got a tensor with dtype {}", pretty(t.dtype()))));
    }
    Ok(())
}

fn zero_like_scalar(g: &Tensor) -> Result<Tensor> {
    Tensor::zeros(&[], g.dtype(), g.device())
}

/// `torch.where(condition, input, other)` with PyTorch's type promotion
/// (Python numbers and 0-d tensors promote only across categories).
pub fn where_(cond: &Tensor, x: Operand, y: Operand) -> Result<Tensor> {
    check_bool("where", cond)?;
    let dtype = result_type(&[info(&x), info(&y)])?;
    let tx = match x {
        Operand::T(t) => t.clone(),
        Operand::S(s) => scalar_t(s)?,
    };
    let ty = match y {
        Operand::T(t) => t.clone(),
        Operand::S(s) => scalar_t(s)?,
    };
    let out = where_raw(cond, &tx, &ty, dtype)?;
    if dtype.is_floating_point() {
        let xi = if let Operand::T(t) = x { Some(t) } else { None };
        let yi = if let Operand::T(t) = y { Some(t) } else { None };
        let c = cond.clone();
        let (sx, dx, wx) = (tx.shape().to_vec(), tx.dtype(), xi.is_some_and(|t| t.requires_grad()));
        let (sy, dy, wy) = (ty.shape().to_vec(), ty.dtype(), yi.is_some_and(|t| t.requires_grad()));
        record("WhereBackward0", &[xi, yi], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let z = zero_like_scalar(&g)?;
                let gx = if wx { Some(reduce_grad(&where_(&c, Operand::T(&g), Operand::T(&z))?, &sx, dx)?) } else { None };
                let gy = if wy { Some(reduce_grad(&where_(&c, Operand::T(&z), Operand::T(&g))?, &sy, dy)?) } else { None };
                Ok(vec![gx, gy])
            })
        });
    }
    Ok(out)
}

impl Tensor {
    /// `masked_fill(mask, value)`: `value` where `mask`, else `self`, in
    /// `self`'s dtype over the broadcast shape (records `MaskedFillBackward0/1`).
    pub fn masked_fill(&self, mask: &Tensor, value: Operand) -> Result<Tensor> {
        check_masked_fill_args(mask, value, self.dtype())?;
        let vt = if let Operand::T(t) = value { Some(t) } else { None };
        let v = match value {
            Operand::T(t) => t.clone(),
            // PyTorch converts the number to self's dtype first (overflow checked).
            Operand::S(s) => scalar_t(crate::ops::arith::scalar_arg(s, self.dtype())?)?,
        };
        let out = where_raw(mask, &v, self, self.dtype())?;
        let name = if vt.is_some() { "MaskedFillBackward1" } else { "MaskedFillBackward0" };
        let (m, shape, dt) = (mask.clone(), self.shape().to_vec(), self.dtype());
        let (wa, wv, vdt) = (self.requires_grad(), vt.is_some_and(|t| t.requires_grad()), v.dtype());
        record(name, &[Some(self), vt], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let z = zero_like_scalar(&g)?;
                let ga = if wa { Some(reduce_grad(&where_(&m, Operand::T(&z), Operand::T(&g))?, &shape, dt)?) } else { None };
                let gv = if wv { Some(reduce_grad(&where_(&m, Operand::T(&g), Operand::T(&z))?, &[], vdt)?) } else { None };
                Ok(vec![ga, gv])
            })
        });
        Ok(out)
    }

    /// In-place `masked_fill_`: `mask` must broadcast to `self`'s shape.
    pub fn masked_fill_(&self, mask: &Tensor, value: Operand) -> Result<()> {
        check_broadcasts_to(mask, self)?;
        let others: Vec<&Tensor> = if let Operand::T(v) = value { vec![self, v] } else { vec![self] };
        if needs_grad(&others) {
            // The out-of-place op validates mask and value before anything is written.
            return apply_inplace_kernel(self, OldValue::Alias, |old| old.masked_fill(mask, value), || self.masked_fill_raw_(mask, value));
        }
        check_masked_fill_args(mask, value, self.dtype())?;
        self.masked_fill_raw_(mask, value)
    }

    /// Writes `value` at the masked positions only: PyTorch runs `masked_fill_`
    /// on targets whose elements share memory, where copying a whole result
    /// back would also rewrite the unmasked aliases.
    fn masked_fill_raw_(&self, mask: &Tensor, value: Operand) -> Result<()> {
        let v = match value {
            Operand::T(t) => t.to_dtype(self.dtype())?,
            Operand::S(s) => Tensor::full(&[], s, self.dtype(), self.device())?,
        };
        common_device(&[self, mask, &v])?;
        let ml = broadcast_layout(mask, self.shape())?;
        let m = ferrotorch_core::Src { base: mask.storage().raw_ptr(), layout: &ml };
        self.backend()?.masked_fill(self.dtype(), self.operand_mut()?.dst(), m, v.operand()?.src())?;
        self.bump_version();
        Ok(())
    }

    /// `masked_select(mask)`: the elements where the (broadcast) mask is true, as 1-d.
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(format!("masked_select: expected BoolTensor for mask, but got {}", pretty(mask.dtype()))));
        }
        let mut shape: Vec<i64> = broadcast_shapes(self.shape(), mask.shape())?.iter().map(|&s| s as i64).collect();
        // The result is 1-d even for 0-d operands (PyTorch's kernel, not `index`).
        if shape.is_empty() {
            shape.push(1);
        }
        let out = {
            let _g = GradModeGuard::new(false);
            self.expand(&shape)?.index(&[Some(mask.expand(&shape)?)])?
        };
        let (m, xshape, dt) = (mask.expand(&shape)?, self.shape().to_vec(), self.dtype());
        record("MaskedSelectBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = Tensor::zeros(m.shape(), g.dtype(), g.device())?;
                Ok(vec![Some(reduce_grad(&z.masked_scatter(&m, &g)?, &xshape, dt)?)])
            })
        });
        Ok(out)
    }

    /// `masked_scatter(mask, source)`: where the mask is true, the next
    /// elements of `source` in row-major order.
    pub fn masked_scatter(&self, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(format!("masked_scatter_ only supports boolean masks, but got mask with dtype {}", pretty(mask.dtype()).to_lowercase())));
        }
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "masked_scatter_: expected self and source to have same dtypes but got {} and {}",
                pretty(self.dtype()),
                pretty(source.dtype())
            )));
        }
        let shape: Vec<i64> = broadcast_shapes(self.shape(), mask.shape())?.iter().map(|&s| s as i64).collect();
        let device = common_device(&[self, mask, source])?;
        let mb = mask.expand(&shape)?;
        let out = {
            let _g = GradModeGuard::new(false);
            let ushape: Vec<usize> = shape.iter().map(|&s| s as usize).collect();
            let out = Tensor::empty(&ushape, self.dtype(), device)?;
            out.copy_raw_(&self.expand(&shape)?)?;
            // The kernel counts the mask's ones and refuses a short source.
            out.backend()?.masked_scatter(self.dtype(), out.operand_mut()?.dst(), mb.operand()?.src(), source.operand()?.src())?;
            out
        };
        let (xshape, dt, sshape, sdt, n) = (self.shape().to_vec(), self.dtype(), source.shape().to_vec(), source.dtype(), source.numel());
        let (wa, wb) = (self.requires_grad(), source.requires_grad());
        record("MaskedScatterBackward0", &[Some(self), Some(source)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(reduce_grad(&g.masked_fill(&mb, Operand::S(Scalar::Int(0)))?, &xshape, dt)?) } else { None };
                let gb = if wb {
                    // The used prefix of `source` gets the masked gradient; the rest zero.
                    let sel = g.masked_select(&mb)?;
                    let pad = Tensor::zeros(&[n - sel.numel()], g.dtype(), g.device())?;
                    let full = Tensor::cat(&[sel, pad], 0)?;
                    let shp: Vec<i64> = sshape.iter().map(|&s| s as i64).collect();
                    Some(reduce_grad(&full.reshape(&shp)?, &sshape, sdt)?)
                } else {
                    None
                };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// In-place `masked_scatter_`.
    pub fn masked_scatter_(&self, mask: &Tensor, source: &Tensor) -> Result<()> {
        check_broadcasts_to(mask, self)?;
        if needs_grad(&[self, source]) {
            return apply_inplace(self, OldValue::Alias, |old| old.masked_scatter(mask, source));
        }
        let r = {
            let _g = GradModeGuard::new(false);
            self.masked_scatter(mask, source)?
        };
        self.copy_(&r)
    }

    /// `nonzero()`: `[n, ndim]` int64 coordinates of the non-zero elements.
    pub fn nonzero(&self) -> Result<Tensor> {
        nonzero_raw(self)
    }
}

/// `masked_fill`'s argument checks, shared by its in-place form (which
/// writes without computing the out-of-place result).
/// PyTorch's `masked_fill_` checks: a bool mask, a 0-d value, and the value
/// converted to `dtype` with its overflow check (a tensor value through
/// `item()`), whatever the mask holds.
fn check_masked_fill_args(mask: &Tensor, value: Operand, dtype: DType) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            pretty(mask.dtype()).to_lowercase()
        )));
    }
    if let Operand::T(t) = value {
        if t.ndim() != 0 {
            return Err(Error::runtime(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                t.ndim()
            )));
        }
    }
    let sv = match value {
        // A meta value has no number to check, and PyTorch's meta kernel
        // does not ask for one.
        Operand::T(t) if t.device().is_meta() => return Ok(()),
        Operand::T(t) => t.item()?,
        Operand::S(s) => s,
    };
    ferrotorch_core::dtype::check_scalar_fits(sv, dtype, 2)
}

fn check_broadcasts_to(mask: &Tensor, t: &Tensor) -> Result<()> {
    let b = broadcast_shapes(t.shape(), mask.shape())?;
    if b.as_slice() != t.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_shape(t.shape()),
            fmt_shape(&b)
        )));
    }
    Ok(())
}
