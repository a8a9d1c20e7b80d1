//! Fused optimizer steps on `optim.cu`, one launch per parameter: Adam/AdamW
//! (with AMSGrad) and SGD have entries of their own, the other eight
//! optimizers share `optim_other` (their kind and hyper-parameters passed by
//! value, [`OtherStep`]).

use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::{DeviceRepr, PushKernelArg};
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
                other => {
                    let Some(k) = OtherStep::of(other) else {
                        return Err(no_kernel(&format!("optimizer_step ({})", step_name(other))));
                    };
                    let f = function(dev, Family::Optim, dtype, "optim_other")?;
                    let mut b = dev.stream.launch_builder(&f);
                    b.arg(&k.kind).arg(&k.flags).arg(&p).arg(&g).arg(&s0).arg(&s1).arg(&s2).arg(&n64).arg(&k.args);
                    // SAFETY: `optim_other(int, int, T*, const T*, T* x3
                    // (null: no slot), i64, FtOptimArgs)`, as pushed; every
                    // operand holds n contiguous elements of `dtype`.
                    unsafe { b.launch(grid(n)) }.map_err(drv)?;
                }
            }
        }
        Ok(())
    }
}

/// `FtOptimArgs` of `optim.cu`: the hyper-parameters of one step, by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct OptimArgs {
    h: [f64; 10],
}

// SAFETY: `repr(C)` plain data laid out as `FtOptimArgs` (ten doubles).
unsafe impl DeviceRepr for OptimArgs {}

/// One step of an optimizer `optim_other` runs: its `FT_OPT_*` kind, flag
/// bits and hyper-parameters in the order the kernel reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OtherStep {
    kind: i32,
    flags: i32,
    args: OptimArgs,
}

const MAXIMIZE: i32 = 1;
const L2: i32 = 2;
const DECAY: i32 = 4;
const CENTERED: i32 = 8;
const MOMENTUM: i32 = 16;
const RECT: i32 = 32;
const MU: i32 = 64;

impl OtherStep {
    fn new(kind: i32, flags: i32, h: &[f64]) -> OtherStep {
        let mut args = OptimArgs::default();
        args.h[..h.len()].copy_from_slice(h);
        OtherStep { kind, flags, args }
    }

    /// The packed step, `None` for Adam and SGD (their own entries).
    fn of(step: &OptimStep) -> Option<OtherStep> {
        let bit = |on: bool, b: i32| if on { b } else { 0 };
        Some(match *step {
            OptimStep::Adam(_) | OptimStep::Sgd(_) => return None,
            OptimStep::Adagrad(s) => {
                OtherStep::new(0, bit(s.maximize, MAXIMIZE) | bit(s.weight_decay != 0.0, L2), &[s.weight_decay, s.neg_clr, s.eps])
            }
            OptimStep::Adadelta(s) => OtherStep::new(
                1,
                bit(s.maximize, MAXIMIZE) | bit(s.weight_decay != 0.0, L2),
                &[s.weight_decay, s.rho, s.one_minus_rho, s.eps, s.neg_lr],
            ),
            OptimStep::Adamax(s) => OtherStep::new(
                2,
                bit(s.maximize, MAXIMIZE) | bit(s.weight_decay != 0.0, L2),
                &[s.weight_decay, s.one_minus_beta1, s.beta2, s.eps, s.neg_clr],
            ),
            OptimStep::Nadam(s) => OtherStep::new(
                3,
                bit(s.maximize, MAXIMIZE)
                    | bit(!s.decoupled && s.weight_decay != 0.0, L2)
                    | bit(s.decoupled && s.weight_decay != 0.0, DECAY),
                &[
                    s.weight_decay,
                    s.decay_factor,
                    s.one_minus_beta1,
                    s.beta2,
                    s.one_minus_beta2,
                    s.bias_correction2,
                    s.eps,
                    s.grad_coeff,
                    s.avg_coeff,
                ],
            ),
            OptimStep::Radam(s) => OtherStep::new(
                4,
                bit(s.maximize, MAXIMIZE)
                    | bit(!s.decoupled && s.weight_decay != 0.0, L2)
                    | bit(s.decoupled && s.weight_decay != 0.0, DECAY)
                    | bit(s.rect.is_some(), RECT),
                &[
                    s.weight_decay,
                    s.decay_factor,
                    s.one_minus_beta1,
                    s.beta2,
                    s.one_minus_beta2,
                    s.bias_correction1,
                    s.bias_correction2_sqrt,
                    s.lr,
                    s.eps,
                    s.rect.unwrap_or(0.0),
                ],
            ),
            OptimStep::Rmsprop(s) => OtherStep::new(
                5,
                bit(s.maximize, MAXIMIZE) | bit(s.weight_decay != 0.0, L2) | bit(s.centered, CENTERED) | bit(s.momentum > 0.0, MOMENTUM),
                &[s.weight_decay, s.alpha, s.one_minus_alpha, s.eps, s.momentum, s.neg_lr],
            ),
            OptimStep::Rprop(s) => {
                OtherStep::new(6, bit(s.maximize, MAXIMIZE), &[s.etaminus, s.etaplus, s.step_size_min, s.step_size_max])
            }
            OptimStep::Asgd(s) => OtherStep::new(
                7,
                bit(s.maximize, MAXIMIZE) | bit(s.weight_decay != 0.0, L2) | bit(s.mu != 1.0, MU),
                &[s.weight_decay, s.decay_factor, -s.eta, s.mu],
            ),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Family;
    use ferrotorch_core::op::optim::{AsgdStep, RmspropStep, RpropStep};

    /// The flag bits and kinds are written out twice (here and in
    /// `optim.cu`'s `#define`s): check that they agree.
    #[test]
    fn kinds_and_flags_match_the_kernel_source() {
        let src = Family::Optim.source();
        let define = |name: &str| -> i32 {
            let line = src.lines().find(|l| l.starts_with(&format!("#define {name} "))).unwrap_or_else(|| panic!("no {name}"));
            line.split_whitespace().nth(2).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad {line}"))
        };
        for (name, v) in [("MAXIMIZE", MAXIMIZE), ("L2", L2), ("DECAY", DECAY), ("CENTERED", CENTERED), ("MOMENTUM", MOMENTUM), ("RECT", RECT), ("MU", MU)] {
            assert_eq!(define(&format!("FT_OPT_{name}")), v, "{name}");
        }
        let rms = OptimStep::Rmsprop(RmspropStep {
            weight_decay: 0.1,
            alpha: 0.99,
            one_minus_alpha: 0.01,
            eps: 1e-8,
            momentum: 0.9,
            centered: true,
            neg_lr: -0.01,
            maximize: false,
        });
        let rprop = OptimStep::Rprop(RpropStep { etaminus: 0.5, etaplus: 1.2, step_size_min: 1e-6, step_size_max: 50.0, maximize: true });
        let asgd = OptimStep::Asgd(AsgdStep { weight_decay: 0.0, decay_factor: 1.0, eta: 0.01, mu: 1.0, maximize: false });
        for (step, name, flags) in [(rms, "RMSPROP", L2 | CENTERED | MOMENTUM), (rprop, "RPROP", MAXIMIZE), (asgd, "ASGD", 0)] {
            let k = OtherStep::of(&step).expect("packed");
            assert_eq!(k.kind, define(&format!("FT_OPT_{name}")));
            assert_eq!(k.flags, flags);
        }
        assert_eq!(OtherStep::of(&rprop).map(|k| k.args.h[..4].to_vec()), Some(vec![0.5, 1.2, 1e-6, 50.0]));
        assert_eq!(OtherStep::of(&asgd).map(|k| k.args.h[2]), Some(-0.01));
        assert_eq!(std::mem::size_of::<OptimArgs>(), 80);
    }
}
