//! Fused optimizer steps on `optim.cu`: Adam/AdamW (with AMSGrad) and SGD,
//! one launch per parameter. The other optimizers have no CUDA kernel yet.

use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::backend::ParamOperands;
use ferrotorch_core::op::optim::OptimStep;
use ferrotorch_core::{DType, Error, Result};

impl Cuda {
    pub(super) fn optimizer_step_impl(&self, dtype: DType, steps: &[OptimStep], params: &[ParamOperands]) -> Result<()> {
        if !matches!(dtype, DType::Float32 | DType::Float64) {
            return Err(no_kernel(&format!("optimizer_step ({dtype})")));
        }
        if steps.len() != params.len() {
            return Err(Error::runtime("internal error: one optimizer step per parameter"));
        }
        for (step, op) in steps.iter().zip(params) {
            let n = op.param.layout.numel();
            if n == 0 {
                continue;
            }
            let dev = device_at(op.param.base)?;
            let item = dtype.itemsize() as u64;
            // Operands are contiguous (the seam's contract); their offsets count.
            let at = |base: *const u8, offset: usize| ptr(base) + offset as u64 * item;
            let (p, g) = (at(op.param.base, op.param.layout.offset), at(op.grad.base, op.grad.layout.offset));
            let slot = |k: usize| op.state[k].map_or(0, |d| at(d.base, d.layout.offset));
            let (s0, s1, s2, n64) = (slot(0), slot(1), slot(2), n as i64);
            match step {
                OptimStep::Adam(s) => {
                    let f = function(dev, Family::Optim, dtype, "optim_adam")?;
                    let (maximize, decoupled) = (s.maximize as i32, s.decoupled as i32);
                    let mut b = dev.stream.launch_builder(&f);
                    b.arg(&p).arg(&g).arg(&s0).arg(&s1).arg(&s2).arg(&n64);
                    b.arg(&s.decay_factor).arg(&s.l2).arg(&s.one_minus_beta1).arg(&s.beta2).arg(&s.one_minus_beta2);
                    b.arg(&s.bias_correction2_sqrt).arg(&s.eps).arg(&s.neg_step_size).arg(&maximize).arg(&decoupled);
                    // SAFETY: `optim_adam(T*, const T*, T* x3 (null: no slot),
                    // i64, double x8, int, int)`, as pushed; every operand
                    // holds n contiguous elements of `dtype`.
                    unsafe { b.launch(grid(n)) }.map_err(drv)?;
                }
                OptimStep::Sgd(s) => {
                    let f = function(dev, Family::Optim, dtype, "optim_sgd")?;
                    let (nesterov, maximize, fresh) = (s.nesterov as i32, s.maximize as i32, s.fresh as i32);
                    let mut b = dev.stream.launch_builder(&f);
                    b.arg(&p).arg(&g).arg(&s0).arg(&n64);
                    b.arg(&s.weight_decay).arg(&s.momentum).arg(&s.one_minus_dampening).arg(&s.neg_lr);
                    b.arg(&nesterov).arg(&maximize).arg(&fresh);
                    // SAFETY: `optim_sgd(T*, const T*, T* (null: no buffer),
                    // i64, double x4, int x3)`, as pushed; operands hold n
                    // contiguous elements of `dtype`.
                    unsafe { b.launch(grid(n)) }.map_err(drv)?;
                }
                other => return Err(no_kernel(&format!("optimizer_step ({})", step_name(other)))),
            }
        }
        Ok(())
    }
}

fn step_name(s: &OptimStep) -> &'static str {
    match s {
        OptimStep::Adam(_) => "Adam",
        OptimStep::Sgd(_) => "SGD",
        OptimStep::Adagrad(_) => "Adagrad",
        OptimStep::Adadelta(_) => "Adadelta",
        OptimStep::Adamax(_) => "Adamax",
        OptimStep::Nadam(_) => "NAdam",
        OptimStep::Radam(_) => "RAdam",
        OptimStep::Rmsprop(_) => "RMSprop",
        OptimStep::Rprop(_) => "Rprop",
        OptimStep::Asgd(_) => "ASGD",
    }
}
