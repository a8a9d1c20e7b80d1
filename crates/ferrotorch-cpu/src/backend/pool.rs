//! The CPU's pooling kernels ([`crate::pool`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::pool as k;
use crate::{Dst, Src};
use ferrotorch_core::backend::PoolKernels;
use ferrotorch_core::op::pool::PoolSpec;
use ferrotorch_core::{DType, Element, Error, Result};

const WHAT: &str = "pooling";

/// Runs `$body` with `$T` the element type of `$dt` (every dtype with a
/// pooling kernel: all but bool).
macro_rules! pool_dispatch {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::UInt8 => {
                type $T = u8;
                $body
            }
            DType::Int8 => {
                type $T = i8;
                $body
            }
            DType::Int16 => {
                type $T = i16;
                $body
            }
            DType::Int32 => {
                type $T = i32;
                $body
            }
            DType::Int64 => {
                type $T = i64;
                $body
            }
            DType::Float16 => {
                type $T = half::f16;
                $body
            }
            DType::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            DType::Bool => return Err(Error::not_implemented("pooling: no kernel for 'Bool'")),
            d @ (DType::Complex64 | DType::Complex128) => return Err(crate::complex::not_impl("pooling", d)),
        }
    };
}

fn missing_indices() -> Error {
    Error::runtime("pooling: indices missing for a max pooling")
}

impl PoolKernels for Cpu {
    fn pool_forward(&self, spec: &PoolSpec, dtype: DType, x: Src, out: Dst, indices: Option<Dst>) -> Result<()> {
        if x.layout.numel() == 0 || out.layout.numel() == 0 {
            return Ok(());
        }
        pool_dispatch!(dtype, T => {
            // SAFETY: the op layer passes live contiguous operands of `dtype`
            // (indices int64) of the spec's shapes; the outputs are fresh and
            // alias neither each other nor `x`.
            let (xd, od) = unsafe { (elems::<T>(WHAT, x)?, elems_mut::<T>(WHAT, out)?) };
            let idx = indices.map(|i| unsafe { elems_mut::<i64>(WHAT, i) }).transpose()?;
            match (spec, idx) {
                (PoolSpec::Max(g), i) => k::max_pool_forward::<T>(xd, g, od, i),
                (PoolSpec::AdaptiveMax { input, output }, Some(i)) => k::adaptive_max_forward::<T>(xd, *input, *output, od, i),
                (PoolSpec::Avg { geom, count_include_pad, divisor_override }, _) => {
                    k::avg_pool_forward::<T>(xd, geom, *count_include_pad, *divisor_override, od)
                }
                (PoolSpec::AdaptiveAvg { input, output, round_each }, _) => k::adaptive_avg_forward::<T>(xd, *input, *output, *round_each, od),
                (PoolSpec::AdaptiveMax { .. }, None) => return Err(missing_indices()),
            }
        });
        Ok(())
    }

    fn pool_backward(&self, spec: &PoolSpec, dtype: DType, g: Src, indices: Option<Src>, gx: Dst) -> Result<()> {
        if gx.layout.numel() == 0 {
            return Ok(());
        }
        let (input, output) = spec.dims();
        let (ip, op): (usize, usize) = (input.iter().product(), output.iter().product());
        pool_dispatch!(dtype, T => {
            // SAFETY: as in `pool_forward`; `gx` is fresh.
            let (gd, gxd) = unsafe { (elems::<T>(WHAT, g)?, elems_mut::<T>(WHAT, gx)?) };
            if gd.is_empty() {
                gxd.fill(T::zero());
                return Ok(());
            }
            let idx = indices.map(|i| unsafe { elems::<i64>(WHAT, i) }).transpose()?;
            match (spec, idx) {
                (PoolSpec::Max(_) | PoolSpec::AdaptiveMax { .. }, Some(i)) => k::max_pool_backward::<T>(gd, i, ip, op, gxd),
                (PoolSpec::Avg { geom, count_include_pad, divisor_override }, _) => {
                    k::avg_pool_backward::<T>(gd, geom, *count_include_pad, *divisor_override, gxd)
                }
                (PoolSpec::AdaptiveAvg { input, output, round_each }, _) => k::adaptive_avg_backward::<T>(gd, *input, *output, *round_each, gxd),
                (PoolSpec::Max(_) | PoolSpec::AdaptiveMax { .. }, None) => return Err(missing_indices()),
            }
        });
        Ok(())
    }
}
