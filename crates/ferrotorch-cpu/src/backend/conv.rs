//! The CPU's convolution kernels ([`crate::nn`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::nn::{conv_forward, conv_input_grad, conv_weight_grad};
use crate::{Dst, Src};
use ferrotorch_core::backend::ConvKernels;
use ferrotorch_core::op::conv::{ConvRole, ConvSpec};
use ferrotorch_core::{DType, Error, Result};

impl ConvKernels for Cpu {
    fn convolution(&self, role: ConvRole, spec: &ConvSpec, dtype: DType, out: Dst, a: Src, b: Src, bias: Option<Src>) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("convolution", dtype));
        }
        const WHAT: &str = "convolution";
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: the op layer passes live, contiguous operands of
                // `dtype`; `out` is fresh and aliases none of the inputs.
                let (ad, bd, od) = unsafe { (elems::<$T>(WHAT, a)?, elems::<$T>(WHAT, b)?, elems_mut::<$T>(WHAT, out)?) };
                let bias = bias.map(|s| unsafe { elems::<$T>(WHAT, s) }).transpose()?;
                match role {
                    ConvRole::Forward => conv_forward::<$T>(spec, ad, bd, bias, od),
                    ConvRole::InputGrad => conv_input_grad::<$T>(spec, ad, bd, bias, od),
                    ConvRole::WeightGrad => conv_weight_grad::<$T>(spec, ad, bd, od),
                }
            }};
        }
        match dtype {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            other => Err(Error::not_implemented(format!("convolution: no CPU kernel for {other:?}"))),
        }
    }
}
