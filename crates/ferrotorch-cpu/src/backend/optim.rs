//! The CPU's fused optimizer steps ([`crate::optim::multi_tensor_apply`])
//! behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::optim::{self as k, Job, OptimFloat, Update};
use ferrotorch_core::backend::{OptimKernels, ParamOperands};
use ferrotorch_core::op::optim::OptimStep;
use ferrotorch_core::{DType, Error, Result};

const WHAT: &str = "fused optimizer step";

/// One parameter's hyper-parameters in double precision, turned into the
/// element kernel for either float type.
trait Hyper<const S: usize>: Copy {
    type At<T: OptimFloat>: Update<T, S>;
    fn at<T: OptimFloat>(&self) -> Self::At<T>;
}

macro_rules! hyper {
    ($step:ty, $kernel:ident, $($s:literal),+) => {
        $(impl Hyper<$s> for $step {
            type At<T: OptimFloat> = k::$kernel<T>;
            fn at<T: OptimFloat>(&self) -> k::$kernel<T> {
                k::$kernel::new(self)
            }
        })+
    };
}
hyper!(k::AdamStep, Adam, 2, 3);
hyper!(k::SgdStep, Sgd, 1);
hyper!(k::AdagradStep, Adagrad, 1);
hyper!(k::AdadeltaStep, Adadelta, 2);
hyper!(k::AdamaxStep, Adamax, 2);
hyper!(k::NadamStep, Nadam, 2);
hyper!(k::RadamStep, Radam, 2);
hyper!(k::RmspropStep, Rmsprop, 3);
hyper!(k::RpropStep, Rprop, 2);
hyper!(k::AsgdStep, Asgd, 1);

/// The group's jobs in the element type `T`, run as one multi-tensor call.
fn apply<T: OptimFloat, H: Hyper<S>, const S: usize>(hypers: &[H], params: &[ParamOperands]) -> Result<()> {
    let mut jobs = Vec::with_capacity(params.len());
    for (h, p) in hypers.iter().zip(params) {
        let n = p.param.layout.numel();
        let mut state: [Option<&mut [T]>; S] = std::array::from_fn(|_| None);
        for (slot, d) in state.iter_mut().zip(&p.state) {
            if let Some(d) = d {
                // SAFETY: the op layer passes live contiguous operands of `T`'s
                // dtype, no written one sharing memory with another.
                *slot = Some(unsafe { elems_mut::<T>(WHAT, *d)? });
            }
        }
        // SAFETY: as above.
        let (param, grad) = unsafe { (elems_mut::<T>(WHAT, p.param)?, elems::<T>(WHAT, p.grad)?) };
        if grad.len() != n || state.iter().flatten().any(|s| s.len() != n) {
            return Err(Error::runtime(format!("{WHAT}: every operand must have the parameter's {n} elements")));
        }
        jobs.push(Job { kernel: h.at::<T>(), param, grad, state });
    }
    k::multi_tensor_apply(jobs);
    Ok(())
}

fn run<H: Hyper<S>, const S: usize>(dtype: DType, hypers: &[H], params: &[ParamOperands]) -> Result<()> {
    match dtype {
        DType::Float32 => apply::<f32, H, S>(hypers, params),
        DType::Float64 => apply::<f64, H, S>(hypers, params),
        other => Err(Error::runtime(format!("{WHAT}: no CPU kernel for {other:?}"))),
    }
}

impl OptimKernels for Cpu {
    fn optimizer_step(&self, dtype: DType, slots: usize, steps: &[OptimStep], params: &[ParamOperands]) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("optimizer_step", dtype));
        }
        if steps.len() != params.len() {
            return Err(Error::runtime(format!("{WHAT}: {} steps for {} parameters", steps.len(), params.len())));
        }
        macro_rules! each {
            ($v:ident, $s:literal) => {{
                let hypers = steps
                    .iter()
                    .map(|s| match s {
                        OptimStep::$v(h) => Ok(*h),
                        _ => Err(Error::runtime(format!("{WHAT}: one group mixes optimizers"))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                run::<_, $s>(dtype, &hypers, params)
            }};
        }
        match (steps.first(), slots) {
            (None, _) => Ok(()),
            (Some(OptimStep::Adam(_)), 2) => each!(Adam, 2),
            (Some(OptimStep::Adam(_)), 3) => each!(Adam, 3),
            (Some(OptimStep::Sgd(_)), 1) => each!(Sgd, 1),
            (Some(OptimStep::Adagrad(_)), 1) => each!(Adagrad, 1),
            (Some(OptimStep::Adadelta(_)), 2) => each!(Adadelta, 2),
            (Some(OptimStep::Adamax(_)), 2) => each!(Adamax, 2),
            (Some(OptimStep::Nadam(_)), 2) => each!(Nadam, 2),
            (Some(OptimStep::Radam(_)), 2) => each!(Radam, 2),
            (Some(OptimStep::Rmsprop(_)), 3) => each!(Rmsprop, 3),
            (Some(OptimStep::Rprop(_)), 2) => each!(Rprop, 2),
            (Some(OptimStep::Asgd(_)), 1) => each!(Asgd, 1),
            (Some(s), n) => Err(Error::runtime(format!("{WHAT}: {s:?} does not run with {n} state slots"))),
        }
    }
}
