//! The CPU's linear-algebra kernels ([`crate::linalg`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::{Dst, Src};
use ferrotorch_core::backend::LinalgKernels;
use ferrotorch_core::op::linalg::{svd_non_finite, SvdSpec};
use ferrotorch_core::{DType, Error, Result};

impl LinalgKernels for Cpu {
    fn svd(&self, spec: &SvdSpec, dtype: DType, batched: bool, a: Src, s: Dst, uv: Option<(Dst, Dst)>) -> Result<()> {
        const WHAT: &str = "linalg.svd";
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: the op layer passes live, contiguous operands of
                // `dtype`; the outputs are fresh and alias neither the input
                // nor each other.
                let (ad, sd) = unsafe { (elems::<$T>(WHAT, a)?, elems_mut::<$T>(WHAT, s)?) };
                let uv = match uv {
                    // SAFETY: as above.
                    Some((u, v)) => Some(unsafe { (elems_mut::<$T>(WHAT, u)?, elems_mut::<$T>(WHAT, v)?) }),
                    None => None,
                };
                check_lens(spec, ad.len(), sd.len(), uv.as_ref().map(|(u, v)| (u.len(), v.len())))?;
                crate::linalg::svd::<$T>(spec, ad, sd, uv, |x| x as f64, |x| x as $T, |x| x as $T as f64)
            }};
        }
        let r = match dtype {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            other => return Err(Error::not_implemented(format!("linalg.svd: no CPU kernel for {other:?}"))),
        };
        r.map_err(|b| svd_non_finite(batched.then_some(b)))
    }
}

/// The operands' element counts must be the ones `spec` describes: the
/// kernel slices them by it.
fn check_lens(spec: &SvdSpec, a: usize, s: usize, uv: Option<(usize, usize)>) -> Result<()> {
    let ok = a == spec.batch * spec.m * spec.n
        && s == spec.batch * spec.k()
        && uv.is_none_or(|(u, v)| u == spec.batch * spec.u_cols() * spec.m && v == spec.batch * spec.vh_rows() * spec.n);
    if ok {
        Ok(())
    } else {
        Err(Error::runtime(format!("linalg.svd: operands do not match {spec:?}")))
    }
}
