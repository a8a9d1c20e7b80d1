//! Layer norm on `norm.cu`. Operands are contiguous (the seam's contract);
//! statistics and parameters are in the input's `norm_compute_dtype`.

use super::{device_at, drv, function, grid, no_kernel, per_row, ptr, Cuda};
use crate::geometry::BLOCK;
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::backend::NormGrads;
use ferrotorch_core::op::norm::{norm_compute_dtype, LayerNormSpec};
use ferrotorch_core::{DType, Layout, Result};

/// The device address of a contiguous operand's first element.
fn addr(base: *const u8, layout: &Layout, dtype: DType) -> u64 {
    ptr(base) + (layout.offset * dtype.itemsize()) as u64
}

fn floats_only(dtype: DType, op: &str) -> Result<()> {
    if dtype.is_floating_point() {
        Ok(())
    } else {
        Err(no_kernel(&format!("{op} ({dtype})")))
    }
}

impl Cuda {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn layer_norm_impl(
        &self,
        spec: &LayerNormSpec,
        dtype: DType,
        x: ferrotorch_core::Src,
        weight: Option<ferrotorch_core::Src>,
        bias: Option<ferrotorch_core::Src>,
        out: ferrotorch_core::Dst,
        mean: ferrotorch_core::Dst,
        rstd: ferrotorch_core::Dst,
    ) -> Result<()> {
        floats_only(dtype, "layer_norm")?;
        if spec.rows == 0 {
            return Ok(());
        }
        let cd = norm_compute_dtype(dtype);
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Norm, dtype, "layer_norm_fwd")?;
        let (xp, op) = (addr(x.base, x.layout, dtype), addr(out.base, out.layout, dtype));
        let (wp, bp) = (weight.map_or(0, |w| addr(w.base, w.layout, cd)), bias.map_or(0, |b| addr(b.base, b.layout, cd)));
        let (mp, rp) = (addr(mean.base, mean.layout, cd), addr(rstd.base, rstd.layout, cd));
        let (rows, n) = (spec.rows as i64, spec.n as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&wp).arg(&bp).arg(&op).arg(&mp).arg(&rp).arg(&rows).arg(&n).arg(&spec.eps);
        // SAFETY: `layer_norm_fwd(const T*, const A*, const A* (null: none),
        // T*, A*, A*, i64, i64, double)`, as pushed; rows x n contiguous
        // elements in x and out, n parameters, rows statistics.
        unsafe { b.launch(per_row(spec.rows, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn layer_norm_backward_impl(
        &self,
        spec: &LayerNormSpec,
        dtype: DType,
        grad: ferrotorch_core::Src,
        x: ferrotorch_core::Src,
        mean: ferrotorch_core::Src,
        rstd: ferrotorch_core::Src,
        weight: Option<ferrotorch_core::Src>,
        grads: NormGrads,
    ) -> Result<()> {
        floats_only(dtype, "layer_norm_backward")?;
        let cd = norm_compute_dtype(dtype);
        let dev = device_at(grad.base)?;
        let (gp, xp) = (addr(grad.base, grad.layout, dtype), addr(x.base, x.layout, dtype));
        let (mp, rp) = (addr(mean.base, mean.layout, cd), addr(rstd.base, rstd.layout, cd));
        let (rows, n) = (spec.rows as i64, spec.n as i64);
        if let Some(gx) = grads.input {
            if spec.rows > 0 {
                let f = function(dev, Family::Norm, dtype, "layer_norm_bwd_input")?;
                let (wp, gxp) = (weight.map_or(0, |w| addr(w.base, w.layout, cd)), addr(gx.base, gx.layout, dtype));
                let mut b = dev.stream.launch_builder(&f);
                b.arg(&gp).arg(&xp).arg(&mp).arg(&rp).arg(&wp).arg(&gxp).arg(&rows).arg(&n);
                // SAFETY: `layer_norm_bwd_input(const T*, const T*, const A*,
                // const A*, const A* (null: no weight), T*, i64, i64)`, as
                // pushed; shapes as in the forward.
                unsafe { b.launch(per_row(spec.rows, BLOCK)) }.map_err(drv)?;
            }
        }
        if (grads.weight.is_some() || grads.bias.is_some()) && spec.n > 0 {
            let f = function(dev, Family::Norm, dtype, "layer_norm_bwd_params")?;
            let dw = grads.weight.map_or(0, |d| addr(d.base, d.layout, cd));
            let db = grads.bias.map_or(0, |d| addr(d.base, d.layout, cd));
            let mut b = dev.stream.launch_builder(&f);
            b.arg(&gp).arg(&xp).arg(&mp).arg(&rp).arg(&dw).arg(&db).arg(&rows).arg(&n);
            // SAFETY: `layer_norm_bwd_params(const T*, const T*, const A*,
            // const A*, A*, A* (null: not wanted), i64, i64)`, as pushed;
            // each gradient holds n values (zeros when there are no rows).
            unsafe { b.launch(grid(spec.n)) }.map_err(drv)?;
        }
        Ok(())
    }
}
