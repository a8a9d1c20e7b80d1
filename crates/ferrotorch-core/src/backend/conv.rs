//! Convolution kernels: the three bilinear kernels every convolution and
//! its gradients are built from (see [`ConvRole`]).

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::conv::{ConvRole, ConvSpec};

/// The convolution kernels of a device.
pub trait ConvKernels {
    /// Runs kernel `role` of `spec`: `out = role(a, b) (+ bias per channel
    /// of the output)`. Every operand is contiguous, of `dtype` (float32 or
    /// float64: the op layer computes float16/bfloat16 in float32), with the
    /// shapes `spec` gives for `role`; `bias` is never passed to
    /// [`ConvRole::WeightGrad`].
    #[allow(clippy::too_many_arguments)]
    fn convolution(&self, role: ConvRole, spec: &ConvSpec, dtype: DType, out: Dst, a: Src, b: Src, bias: Option<Src>) -> Result<()>;
}

impl ConvKernels for Meta {
    fn convolution(&self, _role: ConvRole, _spec: &ConvSpec, _dtype: DType, _out: Dst, _a: Src, _b: Src, _bias: Option<Src>) -> Result<()> {
        Ok(())
    }
}
