//! Fused optimizer steps: one multi-tensor kernel call per parameter group
//! (and dtype) instead of a handful of elementwise ops per parameter.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::optim::OptimStep;

/// One parameter's operands of a fused step: every one contiguous, of the
/// step's dtype and the parameter's element count, no written one sharing
/// memory with another operand of the group.
pub struct ParamOperands<'a> {
    /// The parameter, updated in place.
    pub param: Dst<'a>,
    /// Its gradient.
    pub grad: Src<'a>,
    /// Its state tensors in the optimizer's slot order, updated in place;
    /// `None` for a slot the group does not keep (it reads as 0).
    pub state: [Option<Dst<'a>>; 3],
}

/// The fused optimizer kernels of a device.
pub trait OptimKernels {
    /// Applies `steps[i]` (all of one optimizer) to `params[i]` for every
    /// parameter, all of `dtype` (float32 or float64). `slots` is the number
    /// of state slots the optimizer's kernel runs with (Adam: 2, or 3 with
    /// AMSGrad's running maximum; RMSprop: 3; ...).
    fn optimizer_step(&self, dtype: DType, slots: usize, steps: &[OptimStep], params: &[ParamOperands]) -> Result<()>;
}

impl OptimKernels for Meta {
    fn optimizer_step(&self, _dtype: DType, _slots: usize, _steps: &[OptimStep], _params: &[ParamOperands]) -> Result<()> {
        Ok(())
    }
}
