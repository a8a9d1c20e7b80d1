//! The CPU's normalisation kernels ([`crate::norm`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::norm::{
    batch_norm_apply, batch_norm_backward, batch_norm_eval_invstd, batch_norm_stats, group_norm_backward, group_norm_forward, layer_norm_backward,
    layer_norm_forward, round_through, rowwise_moments, MomentFloat, MomentStack,
};
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::backend::{NormGrads, NormKernels};
use ferrotorch_core::op::norm::{BatchNormSpec, GroupNormSpec, LayerNormSpec, MomentsSpec};
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result};

/// Runs `$run!(T, F)` for the input dtype `$dt` (T: the element type, F:
/// the compute type).
macro_rules! by_norm_dtype {
    ($what:expr, $dt:expr, $run:ident) => {
        match $dt {
            DType::Float32 => $run!(f32, f32),
            DType::Float16 => $run!(half::f16, f32),
            DType::BFloat16 => $run!(half::bf16, f32),
            DType::Float64 => $run!(f64, f64),
            other => Err(Error::not_implemented(format!("{}: no CPU kernel for {other:?}", $what))),
        }
    };
}

/// The values of a 1-d operand of `dtype` (any stride) in the compute type.
///
/// # Safety
/// `base` and `layout` address a live 1-d operand of `dtype`.
unsafe fn read_stat<F: Element>(base: *const u8, layout: &ferrotorch_core::Layout, dtype: DType) -> Vec<F> {
    let n = layout.shape.first().copied().unwrap_or(1);
    let st = layout.strides.first().copied().unwrap_or(1);
    dispatch_dtype!(dtype, P => (0..n)
        // SAFETY: each offset is an element of the operand (caller's contract).
        .map(|i| F::from_f64(unsafe { *at::<P>(base, layout.offset as isize + i as isize * st) }.to_f64()))
        .collect())
}

/// Writes `v` into a 1-d operand of `dtype` through its stride, as
/// PyTorch's accessors update running statistics.
///
/// # Safety
/// As for [`read_stat`], with `v.len()` elements, and nothing else
/// referencing them.
unsafe fn write_stat<F: Element>(dst: Dst, dtype: DType, v: &[F]) {
    let st = dst.layout.strides.first().copied().unwrap_or(1);
    dispatch_dtype!(dtype, P => {
        for (i, &x) in v.iter().enumerate() {
            // SAFETY: as for the reads.
            unsafe { *at_mut::<P>(dst.base, dst.layout.offset as isize + i as isize * st) = P::from_f64(x.to_f64()) };
        }
    })
}

/// A statistic rounded to the dtype it is stored in: through `T` when that
/// is not the compute type (PyTorch keeps float16/bfloat16 statistics).
fn rounder<T: Element, F: MomentFloat>(stats_dtype: DType) -> fn(F) -> F {
    if stats_dtype == F::DTYPE {
        |v| v
    } else {
        round_through::<T, F>
    }
}

/// A wanted parameter gradient as a slice.
///
/// # Safety
/// As for [`elems_mut`].
unsafe fn grad_slices<'a, F: MomentFloat>(what: &str, g: Option<Dst<'a>>) -> Result<Option<&'a mut [F]>> {
    g.map(|d| unsafe { elems_mut::<F>(what, d) }).transpose()
}

/// A layer or group norm forward's operands as slices.
struct Forward<'a, T, F> {
    x: &'a [T],
    w: Option<&'a [F]>,
    b: Option<&'a [F]>,
    out: &'a mut [T],
    mean: &'a mut [F],
    rstd: &'a mut [F],
}

/// The operands of [`Forward`].
///
/// # Safety
/// As for [`elems`] and [`elems_mut`]: live contiguous operands of the
/// element types, the outputs fresh and aliasing nothing.
#[allow(clippy::too_many_arguments)]
unsafe fn forward_operands<'a, T, F>(
    what: &str,
    x: Src<'a>,
    weight: Option<Src<'a>>,
    bias: Option<Src<'a>>,
    out: Dst<'a>,
    mean: Dst<'a>,
    rstd: Dst<'a>,
) -> Result<Forward<'a, T, F>> {
    // SAFETY: the caller's contract.
    unsafe {
        Ok(Forward {
            x: elems(what, x)?,
            w: weight.map(|s| elems(what, s)).transpose()?,
            b: bias.map(|s| elems(what, s)).transpose()?,
            out: elems_mut(what, out)?,
            mean: elems_mut(what, mean)?,
            rstd: elems_mut(what, rstd)?,
        })
    }
}

/// A layer or group norm backward's operands as slices (the parameter
/// gradients are unpacked by each kernel: they differ in who computes them).
struct Backward<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    mean: &'a [F],
    rstd: &'a [F],
    w: Option<&'a [F]>,
    gx: Option<&'a mut [T]>,
}

/// The operands of [`Backward`].
///
/// # Safety
/// As for [`forward_operands`].
#[allow(clippy::too_many_arguments)]
unsafe fn backward_operands<'a, T, F>(
    what: &str,
    grad: Src<'a>,
    x: Src<'a>,
    mean: Src<'a>,
    rstd: Src<'a>,
    weight: Option<Src<'a>>,
    grad_input: Option<Dst<'a>>,
) -> Result<Backward<'a, T, F>> {
    // SAFETY: the caller's contract.
    unsafe {
        Ok(Backward {
            g: elems(what, grad)?,
            x: elems(what, x)?,
            mean: elems(what, mean)?,
            rstd: elems(what, rstd)?,
            w: weight.map(|s| elems(what, s)).transpose()?,
            gx: grad_input.map(|d| elems_mut(what, d)).transpose()?,
        })
    }
}

impl NormKernels for Cpu {
    fn layer_norm(&self, spec: &LayerNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("layer_norm", dtype));
        }
        const WHAT: &str = "layer_norm";
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: the op layer passes live, contiguous operands of the
                // documented dtypes; the outputs are fresh and alias nothing.
                unsafe {
                    let Forward { x: xd, w: wd, b: bd, out: od, mean: md, rstd: rd } =
                        forward_operands::<$T, $F>(WHAT, x, weight, bias, out, mean, rstd)?;
                    layer_norm_forward::<$T, $F>(xd, spec.n, wd, bd, spec.eps, od, md, rd);
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn layer_norm_backward(&self, spec: &LayerNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("layer_norm_backward", dtype));
        }
        const WHAT: &str = "layer_norm_backward";
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: as in the forward; the gradients are fresh.
                unsafe {
                    let Backward { g: gd, x: xd, mean: md, rstd: rd, w: wd, gx } =
                        backward_operands::<$T, $F>(WHAT, grad, x, mean, rstd, weight, grads.input)?;
                    let want_wb = grads.weight.is_some() || grads.bias.is_some();
                    // The kernel writes both parameter gradients or neither.
                    let (mut sw, mut sb) = (Vec::new(), Vec::new());
                    if want_wb {
                        sw = vec![<$F as MomentFloat>::ZERO; spec.n];
                        sb = vec![<$F as MomentFloat>::ZERO; spec.n];
                    }
                    let dw = grad_slices::<$F>(WHAT, grads.weight)?.unwrap_or(&mut sw[..]);
                    let db = grad_slices::<$F>(WHAT, grads.bias)?.unwrap_or(&mut sb[..]);
                    layer_norm_backward::<$T, $F>(gd, xd, spec.n, md, rd, wd, gx, dw, db, want_wb);
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn batch_norm(
        &self,
        spec: &BatchNormSpec,
        dtype: DType,
        x: Src,
        weight: Option<Src>,
        bias: Option<Src>,
        running_mean: Option<Dst>,
        running_var: Option<Dst>,
        strided_mean: Option<Src>,
        out: Dst,
        save_mean: Dst,
        save_invstd: Dst,
    ) -> Result<()> {
        const WHAT: &str = "batch_norm";
        let shp = spec.shape;
        let sdt = spec.stats_dtype;
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: the op layer passes live operands of the documented
                // dtypes, contiguous but for the 1-d running statistics; `out`
                // and the saved statistics are fresh and alias nothing.
                unsafe {
                    let xd = elems::<$T>(WHAT, x)?;
                    let wd = weight.map(|s| elems::<$F>(WHAT, s)).transpose()?;
                    let bd = bias.map(|s| elems::<$F>(WHAT, s)).transpose()?;
                    let od = elems_mut::<$T>(WHAT, out)?;
                    let (sm, si) = (elems_mut::<$F>(WHAT, save_mean)?, elems_mut::<$F>(WHAT, save_invstd)?);
                    let mut rmv = running_mean.map(|d| read_stat::<$F>(d.base, d.layout, sdt));
                    let mut rvv = running_var.map(|d| read_stat::<$F>(d.base, d.layout, sdt));
                    if spec.training {
                        let smv = strided_mean.map(|s| elems::<$F>(WHAT, s)).transpose()?;
                        let round = rounder::<$T, $F>(sdt);
                        batch_norm_stats::<$T, $F>(xd, shp, smv, spec.eps, spec.momentum, rmv.as_deref_mut(), rvv.as_deref_mut(), round, sm, si);
                        if let (Some(d), Some(v)) = (running_mean, &rmv) {
                            write_stat(d, sdt, v);
                        }
                        if let (Some(d), Some(v)) = (running_var, &rvv) {
                            write_stat(d, sdt, v);
                        }
                        batch_norm_apply::<$T, $F>(xd, shp, sm, si, wd, bd, spec.strided, od);
                    } else {
                        let (Some(rmv), Some(rvv)) = (rmv, rvv) else {
                            return Err(Error::runtime("running_mean must be defined in evaluation mode"));
                        };
                        let invstd = batch_norm_eval_invstd(&rvv, spec.eps, false);
                        batch_norm_apply::<$T, $F>(xd, shp, &rmv, &invstd, wd, bd, spec.strided, od);
                        sm.copy_from_slice(&rmv);
                        si.copy_from_slice(&batch_norm_eval_invstd(&rvv, spec.eps, true));
                    }
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn batch_norm_backward(
        &self,
        spec: &BatchNormSpec,
        dtype: DType,
        grad: Src,
        x: Src,
        mean: Src,
        invstd: Src,
        weight: Option<Src>,
        grad_sum: Option<Src>,
        grads: NormGrads,
    ) -> Result<()> {
        const WHAT: &str = "batch_norm_backward";
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: as in the forward; the gradients are fresh.
                unsafe {
                    let (gd, xd) = (elems::<$T>(WHAT, grad)?, elems::<$T>(WHAT, x)?);
                    let (md, id) = (elems::<$F>(WHAT, mean)?, elems::<$F>(WHAT, invstd)?);
                    let wd = weight.map(|s| elems::<$F>(WHAT, s)).transpose()?;
                    let gs = grad_sum.map(|s| elems::<$F>(WHAT, s)).transpose()?;
                    let gx = grads.input.map(|d| elems_mut::<$T>(WHAT, d)).transpose()?;
                    let gw = grad_slices::<$F>(WHAT, grads.weight)?;
                    let gb = grad_slices::<$F>(WHAT, grads.bias)?;
                    batch_norm_backward::<$T, $F>(gd, xd, spec.shape, md, id, wd, spec.training, gs, gx, gw, gb);
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn group_norm(&self, spec: &GroupNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("group_norm", dtype));
        }
        const WHAT: &str = "group_norm";
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: as for layer_norm.
                unsafe {
                    let Forward { x: xd, w: wd, b: bd, out: od, mean: md, rstd: rd } =
                        forward_operands::<$T, $F>(WHAT, x, weight, bias, out, mean, rstd)?;
                    group_norm_forward::<$T, $F>(xd, spec.shape, spec.groups, wd, bd, spec.eps, od, md, rd);
                    // The statistics are stored (and read back by the
                    // backward) in the parameters' dtype.
                    let round = rounder::<$T, $F>(spec.stats_dtype);
                    md.iter_mut().for_each(|v| *v = round(*v));
                    rd.iter_mut().for_each(|v| *v = round(*v));
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn group_norm_backward(&self, spec: &GroupNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("group_norm_backward", dtype));
        }
        const WHAT: &str = "group_norm_backward";
        macro_rules! run {
            ($T:ty, $F:ty) => {{
                // SAFETY: as in the forward; the gradients are fresh.
                unsafe {
                    let Backward { g: gd, x: xd, mean: md, rstd: rd, w: wd, gx } =
                        backward_operands::<$T, $F>(WHAT, grad, x, mean, rstd, weight, grads.input)?;
                    let gw = grad_slices::<$F>(WHAT, grads.weight)?;
                    let gb = grad_slices::<$F>(WHAT, grads.bias)?;
                    group_norm_backward::<$T, $F>(gd, xd, spec.shape, spec.groups, md, rd, wd, gx, gw, gb);
                }
                Ok(())
            }};
        }
        by_norm_dtype!(WHAT, dtype, run)
    }

    fn row_moments(&self, spec: &MomentsSpec, dtype: DType, x: Src, mean: Dst, var: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("row_moments", dtype));
        }
        const WHAT: &str = "rowwise_moments";
        let n = spec.n;
        // The vector widths of the AVX2 kernels PyTorch dispatches these to.
        macro_rules! run {
            ($F:ty, $L:expr, $split:expr) => {{
                // SAFETY: contiguous operands of `dtype`; the outputs are fresh.
                let (xd, md, vd) = unsafe { (elems::<$F>(WHAT, x)?, elems_mut::<$F>(WHAT, mean)?, elems_mut::<$F>(WHAT, var)?) };
                for r in 0..spec.rows {
                    (md[r], vd[r]) = rowwise_moments::<$F, $L>(&xd[r * n..(r + 1) * n], $split, &mut MomentStack::default());
                }
                Ok(())
            }};
        }
        match dtype {
            DType::Float64 => run!(f64, 4, 1),
            DType::Float32 => run!(f32, 8, if spec.reduced { 2 } else { 1 }),
            other => Err(Error::not_implemented(format!("{WHAT}: no CPU kernel for {other:?}"))),
        }
    }
}
