//! Layer, batch and group norm and row moments on `norm.cu`. Operands are
//! contiguous (the seam's contract) but for batch norm's 1-d running
//! statistics; statistics and parameters are in the input's
//! `norm_compute_dtype`. Batch norm's `strided_mean`/`grad_sum` (the CPU's
//! reproduction of PyTorch's strided-path roundings) are not used: the CUDA
//! kernels have one path.

use super::{device_at, drv, function, grid, no_kernel, per_row, ptr, Cuda};
use crate::geometry::BLOCK;
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::backend::{NormGrads, NormKernels};
use ferrotorch_core::op::norm::{norm_compute_dtype, BatchNormSpec, GroupNormSpec, LayerNormSpec, MomentsSpec};
use ferrotorch_core::{DType, Dst, Error, Layout, Result, Src};

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

/// A 1-d running statistic: its first element's address and its stride.
fn stat(d: Option<Dst>, dtype: DType) -> (u64, i64) {
    d.map_or((0, 0), |d| (addr(d.base, d.layout, dtype), if d.layout.ndim() == 1 { d.layout.strides[0] as i64 } else { 1 }))
}

impl NormKernels for Cuda {
    fn layer_norm(&self, spec: &LayerNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()> {
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

    fn layer_norm_backward(&self, spec: &LayerNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()> {
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

    fn batch_norm(
        &self,
        spec: &BatchNormSpec,
        dtype: DType,
        x: Src,
        weight: Option<Src>,
        bias: Option<Src>,
        running_mean: Option<Dst>,
        running_var: Option<Dst>,
        _strided_mean: Option<Src>,
        out: Dst,
        save_mean: Dst,
        save_invstd: Dst,
    ) -> Result<()> {
        floats_only(dtype, "batch_norm")?;
        let (cd, sdt) = (norm_compute_dtype(dtype), spec.stats_dtype);
        let shp = spec.shape;
        if shp.c == 0 {
            return Ok(());
        }
        let dev = device_at(out.base)?;
        let stats_t = (sdt == dtype) as i32;
        let (rm, rm_stride) = stat(running_mean, sdt);
        let (rv, rv_stride) = stat(running_var, sdt);
        let (smp, sip) = (addr(save_mean.base, save_mean.layout, cd), addr(save_invstd.base, save_invstd.layout, cd));
        let (n, c, s) = (shp.n as i64, shp.c as i64, shp.s as i64);
        if spec.training {
            let f = function(dev, Family::Norm, dtype, "batch_norm_stats")?;
            let xp = addr(x.base, x.layout, dtype);
            let mut b = dev.stream.launch_builder(&f);
            b.arg(&xp).arg(&n).arg(&c).arg(&s).arg(&spec.eps).arg(&spec.momentum);
            b.arg(&rm).arg(&rm_stride).arg(&rv).arg(&rv_stride).arg(&stats_t).arg(&smp).arg(&sip);
            // SAFETY: `batch_norm_stats(const T*, i64, i64, i64, double,
            // double, void*, i64, void*, i64, int, A*, A*)`, as pushed; x
            // holds n·c·s contiguous elements, the running statistics (null:
            // none) c strided elements of T (stats_t) or float, the saved
            // statistics c contiguous values.
            unsafe { b.launch(per_row(shp.c, BLOCK)) }.map_err(drv)?;
        } else {
            if rm == 0 || rv == 0 {
                return Err(Error::runtime("running_mean must be defined in evaluation mode"));
            }
            let f = function(dev, Family::Norm, dtype, "batch_norm_eval_stats")?;
            let mut b = dev.stream.launch_builder(&f);
            b.arg(&rm).arg(&rm_stride).arg(&rv).arg(&rv_stride).arg(&stats_t).arg(&c).arg(&spec.eps).arg(&smp).arg(&sip);
            // SAFETY: `batch_norm_eval_stats(const void*, i64, const void*,
            // i64, int, i64, double, A*, A*)`, as pushed; sizes as above.
            unsafe { b.launch(grid(shp.c)) }.map_err(drv)?;
        }
        let total = out.layout.numel();
        if total == 0 {
            return Ok(());
        }
        let f = function(dev, Family::Norm, dtype, "batch_norm_apply")?;
        let (xp, op) = (addr(x.base, x.layout, dtype), addr(out.base, out.layout, dtype));
        let (wp, bp) = (weight.map_or(0, |w| addr(w.base, w.layout, cd)), bias.map_or(0, |b| addr(b.base, b.layout, cd)));
        let t64 = total as i64;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&smp).arg(&sip).arg(&wp).arg(&bp).arg(&op).arg(&t64).arg(&c).arg(&s);
        // SAFETY: `batch_norm_apply(const T*, const A*, const A*, const A*,
        // const A* (null: none), T*, i64, i64, i64)`, as pushed; x and out
        // hold `total` = n·c·s contiguous elements, the rest c values.
        unsafe { b.launch(grid(total)) }.map_err(drv)?;
        Ok(())
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
        _grad_sum: Option<Src>,
        grads: NormGrads,
    ) -> Result<()> {
        floats_only(dtype, "batch_norm_backward")?;
        let cd = norm_compute_dtype(dtype);
        let shp = spec.shape;
        if shp.c == 0 || (grads.input.is_none() && grads.weight.is_none() && grads.bias.is_none()) {
            return Ok(());
        }
        let dev = device_at(grad.base)?;
        let f = function(dev, Family::Norm, dtype, "batch_norm_bwd")?;
        let (gp, xp) = (addr(grad.base, grad.layout, dtype), addr(x.base, x.layout, dtype));
        let (mp, ip) = (addr(mean.base, mean.layout, cd), addr(invstd.base, invstd.layout, cd));
        let wp = weight.map_or(0, |w| addr(w.base, w.layout, cd));
        let gxp = grads.input.map_or(0, |d| addr(d.base, d.layout, dtype));
        let dw = grads.weight.map_or(0, |d| addr(d.base, d.layout, cd));
        let db = grads.bias.map_or(0, |d| addr(d.base, d.layout, cd));
        let (n, c, s, training) = (shp.n as i64, shp.c as i64, shp.s as i64, spec.training as i32);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&gp).arg(&xp).arg(&mp).arg(&ip).arg(&wp).arg(&gxp).arg(&dw).arg(&db).arg(&n).arg(&c).arg(&s).arg(&training);
        // SAFETY: `batch_norm_bwd(const T*, const T*, const A*, const A*,
        // const A*, T*, A*, A* (each of the last four null: none), i64, i64,
        // i64, int)`, as pushed; g, x and gx hold n·c·s contiguous elements,
        // the per-channel operands c values.
        unsafe { b.launch(per_row(shp.c, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    fn group_norm(&self, spec: &GroupNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()> {
        floats_only(dtype, "group_norm")?;
        let cd = norm_compute_dtype(dtype);
        let (shp, groups) = (spec.shape, spec.groups.max(1));
        let rows = shp.n * groups;
        if rows == 0 {
            return Ok(());
        }
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Norm, dtype, "group_norm_fwd")?;
        let (xp, op) = (addr(x.base, x.layout, dtype), addr(out.base, out.layout, dtype));
        let (wp, bp) = (weight.map_or(0, |w| addr(w.base, w.layout, cd)), bias.map_or(0, |b| addr(b.base, b.layout, cd)));
        let (mp, rp) = (addr(mean.base, mean.layout, cd), addr(rstd.base, rstd.layout, cd));
        let (r64, g64, cpg, s) = (rows as i64, groups as i64, (shp.c / groups) as i64, shp.s as i64);
        let round_t = (spec.stats_dtype == dtype) as i32;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&wp).arg(&bp).arg(&op).arg(&mp).arg(&rp).arg(&r64).arg(&g64).arg(&cpg).arg(&s).arg(&spec.eps).arg(&round_t);
        // SAFETY: `group_norm_fwd(const T*, const A*, const A* (null: none),
        // T*, A*, A*, i64, i64, i64, i64, double, int)`, as pushed; x and out
        // hold rows·cpg·s contiguous elements, the parameters c values, the
        // statistics one per row.
        unsafe { b.launch(per_row(rows, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    fn group_norm_backward(&self, spec: &GroupNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()> {
        floats_only(dtype, "group_norm_backward")?;
        let cd = norm_compute_dtype(dtype);
        let (shp, groups) = (spec.shape, spec.groups.max(1));
        let dev = device_at(grad.base)?;
        let (gp, xp) = (addr(grad.base, grad.layout, dtype), addr(x.base, x.layout, dtype));
        let (mp, rp) = (addr(mean.base, mean.layout, cd), addr(rstd.base, rstd.layout, cd));
        let rows = shp.n * groups;
        let (r64, g64, cpg, s) = (rows as i64, groups as i64, (shp.c / groups) as i64, shp.s as i64);
        if let Some(gx) = grads.input {
            if rows > 0 {
                let f = function(dev, Family::Norm, dtype, "group_norm_bwd_input")?;
                let (wp, gxp) = (weight.map_or(0, |w| addr(w.base, w.layout, cd)), addr(gx.base, gx.layout, dtype));
                let mut b = dev.stream.launch_builder(&f);
                b.arg(&gp).arg(&xp).arg(&mp).arg(&rp).arg(&wp).arg(&gxp).arg(&r64).arg(&g64).arg(&cpg).arg(&s);
                // SAFETY: `group_norm_bwd_input(const T*, const T*, const A*,
                // const A*, const A* (null: no weight), T*, i64, i64, i64,
                // i64)`, as pushed; shapes as in the forward.
                unsafe { b.launch(per_row(rows, BLOCK)) }.map_err(drv)?;
            }
        }
        if (grads.weight.is_some() || grads.bias.is_some()) && shp.c > 0 {
            let f = function(dev, Family::Norm, dtype, "group_norm_bwd_params")?;
            let dw = grads.weight.map_or(0, |d| addr(d.base, d.layout, cd));
            let db = grads.bias.map_or(0, |d| addr(d.base, d.layout, cd));
            let (n, c) = (shp.n as i64, shp.c as i64);
            let mut b = dev.stream.launch_builder(&f);
            b.arg(&gp).arg(&xp).arg(&mp).arg(&rp).arg(&dw).arg(&db).arg(&n).arg(&c).arg(&g64).arg(&s);
            // SAFETY: `group_norm_bwd_params(const T*, const T*, const A*,
            // const A*, A*, A* (null: not wanted), i64, i64, i64, i64)`, as
            // pushed; each gradient holds c values (zeros without samples).
            unsafe { b.launch(per_row(shp.c, BLOCK)) }.map_err(drv)?;
        }
        Ok(())
    }

    fn row_moments(&self, spec: &MomentsSpec, dtype: DType, x: Src, mean: Dst, var: Dst) -> Result<()> {
        if !matches!(dtype, DType::Float32 | DType::Float64) {
            return Err(no_kernel(&format!("row_moments ({dtype})")));
        }
        if spec.rows == 0 {
            return Ok(());
        }
        let dev = device_at(mean.base)?;
        let f = function(dev, Family::Norm, dtype, "row_moments")?;
        let (xp, mp, vp) = (addr(x.base, x.layout, dtype), addr(mean.base, mean.layout, dtype), addr(var.base, var.layout, dtype));
        let (rows, n) = (spec.rows as i64, spec.n as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&mp).arg(&vp).arg(&rows).arg(&n);
        // SAFETY: `row_moments(const T*, A*, A*, i64, i64)` with A = T for
        // float32/float64, as pushed; x holds rows·n contiguous elements,
        // mean and var one per row.
        unsafe { b.launch(per_row(spec.rows, BLOCK)) }.map_err(drv)?;
        Ok(())
    }
}
