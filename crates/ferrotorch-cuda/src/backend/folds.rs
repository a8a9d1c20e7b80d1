//! Reductions that keep more than one value per output (variance with the
//! mean, arg-extremes with their values) and running folds along a dim,
//! on the `reduce.cu` and `scan.cu` kernels.

use super::{device_at, drv, function, no_kernel, per_row, ptr, Cuda};
use crate::geometry::{grid_for, reduction, KLayout, BLOCK};
use crate::kernels::{dtype_code, Family};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use ferrotorch_core::op::{ArgKind, CumKind};
use ferrotorch_core::{DType, Dst, Layout, Result, Src};

/// The lanes of `l` along `dim` (every other dim, `dim` removed) and the
/// element step along `dim`: how a kernel walks one row per thread or block.
pub(super) fn lanes(l: &Layout, dim: usize) -> Result<(KLayout, i64)> {
    if l.ndim() == 0 {
        return Ok((KLayout::new(&[], &[], l.offset)?, 0));
    }
    let (s, st): (Vec<usize>, Vec<isize>) = (0..l.ndim()).filter(|&d| d != dim).map(|d| (l.shape[d], l.strides[d])).unzip();
    Ok((KLayout::new(&s, &st, l.offset)?, l.strides[dim] as i64))
}

/// A 0-d tensor scans as one element.
fn scan_len(l: &Layout, dim: usize) -> usize {
    if l.ndim() == 0 {
        1
    } else {
        l.shape[dim]
    }
}

impl Cuda {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn var_mean_impl(&self, x: Src, dtype: DType, dims: &[bool], correction: f64, sqrt: bool, var: Dst, mean: Option<Dst>) -> Result<()> {
        if !dtype.is_floating_point() {
            return Err(no_kernel(if sqrt { "std" } else { "var" }));
        }
        let g = reduction(x.layout, var.layout, dims)?;
        if g.n_out == 0 {
            return Ok(());
        }
        let om = match mean {
            Some(m) => reduction(x.layout, m.layout, dims)?.outer_out,
            None => g.outer_out,
        };
        let dev = device_at(var.base)?;
        let f = function(dev, Family::Reduce, dtype, "reduce_var_mean")?;
        let (xp, vp, mp) = (ptr(x.base), ptr(var.base), mean.map_or(0, |m| ptr(m.base)));
        let (n_out, n_in, take_sqrt) = (g.n_out as i64, g.n_in as i64, sqrt as i32);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&g.outer_x).arg(&g.outer_out).arg(&om).arg(&g.inner_x).arg(&xp).arg(&vp).arg(&mp);
        b.arg(&n_out).arg(&n_in).arg(&correction).arg(&take_sqrt);
        // SAFETY: `reduce_var_mean(FtLayout x4, const T*, T*, T* (null when
        // no mean), i64, i64, double, int)`, as pushed; the geometries
        // address elements inside x, var and mean.
        unsafe { b.launch(per_row(g.n_out, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    pub(super) fn reduce_arg_impl(&self, kind: ArgKind, x: Src, dtype: DType, dims: &[bool], values: Option<Dst>, indices: Dst) -> Result<()> {
        let name = match kind {
            ArgKind::Max => "reduce_argmax",
            ArgKind::Min => "reduce_argmin",
        };
        let g = reduction(x.layout, indices.layout, dims)?;
        if g.n_out == 0 {
            return Ok(());
        }
        let ov = match values {
            Some(v) => reduction(x.layout, v.layout, dims)?.outer_out,
            None => g.outer_out,
        };
        let dev = device_at(indices.base)?;
        let f = function(dev, Family::Reduce, dtype, name)?;
        let (xp, vp, ip) = (ptr(x.base), values.map_or(0, |v| ptr(v.base)), ptr(indices.base));
        let (n_out, n_in) = (g.n_out as i64, g.n_in as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&g.outer_x).arg(&ov).arg(&g.outer_out).arg(&g.inner_x).arg(&xp).arg(&vp).arg(&ip).arg(&n_out).arg(&n_in);
        // SAFETY: `reduce_arg{max,min}(FtLayout x4, const T*, T* (null when
        // no values), i64*, i64, i64)`, as pushed; the geometries address
        // elements inside x, values and indices (int64).
        unsafe { b.launch(per_row(g.n_out, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    pub(super) fn cumulative_impl(&self, kind: CumKind, x: Src, x_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()> {
        let name = match kind {
            CumKind::Sum => "scan_cumsum",
            CumKind::Prod => "scan_cumprod",
        };
        let n = x.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let len = scan_len(x.layout, dim);
        let lane_count = n / len;
        let ((lx, sx), (lo, so)) = (lanes(x.layout, dim)?, lanes(out.layout, dim)?);
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Scan, x_dtype, name)?;
        let (xp, op, code, lanes64, len64) = (ptr(x.base), ptr(out.base), dtype_code(out_dtype), lane_count as i64, len as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&lx).arg(&lo).arg(&xp).arg(&op).arg(&code).arg(&lanes64).arg(&len64).arg(&sx).arg(&so);
        // SAFETY: `scan_cum{sum,prod}(FtLayout, FtLayout, const T*, void*,
        // int, i64, i64, i64, i64)`, as pushed; lanes times the dim's steps
        // stay inside x and out, which is written in `out_dtype`.
        unsafe { b.launch(lane_grid(lane_count)) }.map_err(drv)?;
        Ok(())
    }

    pub(super) fn cumulative_arg_impl(&self, kind: ArgKind, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        let name = match kind {
            ArgKind::Max => "scan_cummax",
            ArgKind::Min => "scan_cummin",
        };
        let n = x.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let len = scan_len(x.layout, dim);
        let lane_count = n / len;
        let ((lx, sx), (lv, sv), (li, si)) = (lanes(x.layout, dim)?, lanes(values.layout, dim)?, lanes(indices.layout, dim)?);
        let dev = device_at(values.base)?;
        let f = function(dev, Family::Scan, dtype, name)?;
        let (xp, vp, ip, lanes64, len64) = (ptr(x.base), ptr(values.base), ptr(indices.base), lane_count as i64, len as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&lx).arg(&lv).arg(&li).arg(&xp).arg(&vp).arg(&ip).arg(&lanes64).arg(&len64).arg(&sx).arg(&sv).arg(&si);
        // SAFETY: `scan_cum{max,min}(FtLayout x3, const T*, T*, i64*, i64
        // x5)`, as pushed; lanes times the dim's steps stay inside the three.
        unsafe { b.launch(lane_grid(lane_count)) }.map_err(drv)?;
        Ok(())
    }
}

/// One thread per lane, in a grid-stride loop.
fn lane_grid(lanes: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid_for(lanes), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}
