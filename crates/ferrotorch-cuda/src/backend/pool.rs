//! Poolings on `pool.cu`: max, average, adaptive average and adaptive max
//! in 1 to 3 spatial dims (seen as 3-d) and their backwards, float dtypes.
//! Operands are contiguous `(planes, *spatial)` (the seam's contract).

use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::{DeviceRepr, PushKernelArg};
use ferrotorch_core::backend::PoolKernels;
use ferrotorch_core::op::pool::{PoolGeom, PoolSpec};
use ferrotorch_core::{Backend, DType, Dst, Error, Layout, Result, Scalar, Src};

/// `FtPoolGeom` of `pool.cu`, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct KPoolGeom {
    input: [i64; 3],
    output: [i64; 3],
    kernel: [i64; 3],
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
}

// SAFETY: `repr(C)` plain data laid out as `FtPoolGeom` (six arrays of three
// i64, no padding), so its bytes are a valid kernel parameter of that type.
unsafe impl DeviceRepr for KPoolGeom {}

fn wide(a: [usize; 3]) -> [i64; 3] {
    a.map(|v| v as i64)
}

impl KPoolGeom {
    fn of(g: &PoolGeom) -> KPoolGeom {
        KPoolGeom {
            input: wide(g.input),
            output: wide(g.output),
            kernel: wide(g.kernel),
            stride: wide(g.stride),
            padding: wide(g.padding),
            dilation: wide(g.dilation),
        }
    }

    /// An adaptive pooling's extents (the window fields are unused).
    fn extents(input: [usize; 3], output: [usize; 3]) -> KPoolGeom {
        KPoolGeom { input: wide(input), output: wide(output), kernel: [1; 3], stride: [1; 3], padding: [0; 3], dilation: [1; 3] }
    }
}

/// The device address of a contiguous operand's first element.
fn addr(base: *const u8, layout: &Layout, itemsize: usize) -> u64 {
    ptr(base) + (layout.offset * itemsize) as u64
}

/// An average pooling's trailing kernel arguments: `count_include_pad` and
/// the divisor override (0: none; the op layer rejects a zero override).
fn avg_args(spec: &PoolSpec) -> Option<(i32, i64)> {
    match spec {
        PoolSpec::Avg { count_include_pad, divisor_override, .. } => Some((*count_include_pad as i32, divisor_override.unwrap_or(0))),
        _ => None,
    }
}

fn missing_indices() -> Error {
    Error::runtime("pooling: indices missing for a max pooling")
}

impl PoolKernels for Cuda {
    fn pool_forward(&self, spec: &PoolSpec, dtype: DType, x: Src, out: Dst, indices: Option<Dst>) -> Result<()> {
        if !dtype.is_floating_point() {
            // PyTorch's CUDA poolings are float-only too.
            return Err(no_kernel(&format!("pool_forward ({dtype})")));
        }
        let n = out.layout.numel();
        if x.layout.numel() == 0 || n == 0 {
            return Ok(());
        }
        let (_, output) = spec.dims();
        let planes = (n / output.iter().product::<usize>().max(1)) as i64;
        let dev = device_at(out.base)?;
        let size = dtype.itemsize();
        let (xp, yp) = (addr(x.base, x.layout, size), addr(out.base, out.layout, size));
        let ip = indices.map_or(0, |i| addr(i.base, i.layout, 8));
        let (name, geom) = match spec {
            PoolSpec::Max(g) => ("max_pool_fwd", KPoolGeom::of(g)),
            PoolSpec::Avg { geom, .. } => ("avg_pool_fwd", KPoolGeom::of(geom)),
            PoolSpec::AdaptiveAvg { input, output, .. } => ("adaptive_avg_fwd", KPoolGeom::extents(*input, *output)),
            PoolSpec::AdaptiveMax { input, output } => {
                if indices.is_none() {
                    return Err(missing_indices());
                }
                ("adaptive_max_fwd", KPoolGeom::extents(*input, *output))
            }
        };
        let f = function(dev, Family::Pool, dtype, name)?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&yp);
        if matches!(spec, PoolSpec::Max(_) | PoolSpec::AdaptiveMax { .. }) {
            b.arg(&ip);
        }
        b.arg(&planes).arg(&geom);
        let avg = avg_args(spec);
        if let Some((cip, div)) = &avg {
            b.arg(cip).arg(div);
        }
        // SAFETY: the entry points take (const T* x, T* y, [i64* indices
        // (null: none) for the max poolings], i64 planes, FtPoolGeom, [int,
        // i64 for the average pooling]), as pushed; x holds planes × the
        // input extents and y (and indices) planes × the output extents, all
        // contiguous on this device.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }

    fn pool_backward(&self, spec: &PoolSpec, dtype: DType, g: Src, indices: Option<Src>, gx: Dst) -> Result<()> {
        if !dtype.is_floating_point() {
            return Err(no_kernel(&format!("pool_backward ({dtype})")));
        }
        let n = gx.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let (input, output) = spec.dims();
        if g.layout.numel() == 0 || output.iter().product::<usize>() == 0 {
            return self.fill(gx, dtype, Scalar::Float(0.0));
        }
        let planes = (n / input.iter().product::<usize>().max(1)) as i64;
        let dev = device_at(gx.base)?;
        let size = dtype.itemsize();
        let (gp, gxp) = (addr(g.base, g.layout, size), addr(gx.base, gx.layout, size));
        let (name, geom) = match spec {
            PoolSpec::Max(geom) => ("max_pool_bwd", KPoolGeom::of(geom)),
            PoolSpec::Avg { geom, .. } => ("avg_pool_bwd", KPoolGeom::of(geom)),
            PoolSpec::AdaptiveAvg { input, output, .. } => ("adaptive_avg_bwd", KPoolGeom::extents(*input, *output)),
            PoolSpec::AdaptiveMax { input, output } => ("adaptive_max_bwd", KPoolGeom::extents(*input, *output)),
        };
        let with_indices = matches!(spec, PoolSpec::Max(_) | PoolSpec::AdaptiveMax { .. });
        let ip = match (with_indices, indices) {
            (true, Some(i)) => addr(i.base, i.layout, 8),
            (true, None) => return Err(missing_indices()),
            (false, _) => 0,
        };
        let f = function(dev, Family::Pool, dtype, name)?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&gp);
        if with_indices {
            b.arg(&ip);
        }
        b.arg(&gxp).arg(&planes).arg(&geom);
        let avg = avg_args(spec);
        if let Some((cip, div)) = &avg {
            b.arg(cip).arg(div);
        }
        // SAFETY: the backward entry points take (const T* g, [const i64*
        // indices for the max poolings], T* gx, i64 planes, FtPoolGeom, [int,
        // i64 for the average pooling]), as pushed; g (and indices) hold
        // planes × the output extents, gx planes × the input extents, all
        // contiguous on this device. Every gx element is written.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_the_kernel_struct() {
        // Six arrays of three i64, as `FtPoolGeom`.
        assert_eq!(std::mem::size_of::<KPoolGeom>(), 6 * 3 * 8);
        let g = PoolGeom::new(&[5, 6], &[2, 3], &[2, 2], &[2, 2], &[0, 1], &[1, 1]);
        let k = KPoolGeom::of(&g);
        assert_eq!((k.input, k.output, k.padding), ([1, 5, 6], [1, 2, 3], [0, 0, 1]));
    }
}
