//! Fused optimizer steps over a parameter group: the update math of
//! `optim.Adam`/`AdamW` and `optim.SGD` in one pass per parameter, instead of
//! a handful of elementwise ops each.
//!
//! A step returns `Ok(false)` without writing anything when some tensor is
//! not a dense CPU float32/float64 tensor of its parameter's dtype and size,
//! when two operands of a parameter share storage, or when autograd would
//! have to see the update (grad mode on and a parameter requiring grad); the
//! caller then runs the op-by-op form, which handles (or rejects) those cases
//! exactly as PyTorch does.

use crate::autograd::is_grad_enabled;
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result, Scalar};
use ferrotorch_cpu::optim as k;
use std::sync::Arc;

/// Adam/AdamW hyper-parameters of a parameter group.
#[derive(Clone, Copy, Debug)]
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f64,
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Denominator term.
    pub eps: f64,
    /// Weight decay (L2 for Adam, decoupled for AdamW).
    pub weight_decay: f64,
    /// Keep the running maximum of the second moment.
    pub amsgrad: bool,
    /// Ascend instead of descend.
    pub maximize: bool,
    /// AdamW's decoupled weight decay.
    pub decoupled: bool,
}

/// SGD hyper-parameters of a parameter group.
#[derive(Clone, Copy, Debug)]
pub struct SgdConfig {
    /// Learning rate.
    pub lr: f64,
    /// Momentum factor.
    pub momentum: f64,
    /// Dampening of the momentum.
    pub dampening: f64,
    /// L2 penalty.
    pub weight_decay: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// Ascend instead of descend.
    pub maximize: bool,
}

fn check_lengths(what: &[(&str, usize)]) -> Result<()> {
    let n = what[0].1;
    if let Some((name, len)) = what.iter().find(|(_, l)| *l != n) {
        return Err(Error::value(format!(
            "fused optimizer step: expected {n} {name} (one per parameter), got {len}"
        )));
    }
    Ok(())
}

/// Can the kernels write `p` and its per-parameter operands `others` directly?
fn fusable(p: &Tensor, others: &[&Tensor]) -> bool {
    let dense = |t: &Tensor| t.device().is_cpu() && t.is_contiguous() && t.dtype() == p.dtype() && t.numel() == p.numel();
    if !matches!(p.dtype(), DType::Float32 | DType::Float64) || !dense(p) || !others.iter().all(|t| dense(t)) {
        return false;
    }
    let all: Vec<&Tensor> = std::iter::once(p).chain(others.iter().copied()).collect();
    all.iter()
        .enumerate()
        .all(|(i, a)| all[i + 1..].iter().all(|b| !Arc::ptr_eq(a.storage(), b.storage())))
}

/// The value of a 0-d step counter, bumped by one (PyTorch's `state_steps[i] += 1`).
fn bump_step(step: &Tensor) -> Result<f64> {
    let next = step.item()?.to_f64() + 1.0;
    step.fill_raw_(Scalar::Float(next))?;
    Ok(next)
}

/// A dense tensor's elements.
///
/// # Safety
/// `t` is contiguous with dtype `T`, and no other live slice covers its storage.
#[allow(clippy::mut_from_ref)]
unsafe fn elems<T>(t: &Tensor) -> &mut [T] {
    std::slice::from_raw_parts_mut(t.data_ptr_mut() as *mut T, t.numel())
}

/// One Adam/AdamW step over a parameter group (`max_exp_avg_sqs` empty unless
/// `amsgrad`); `steps` are the 0-d step counters, incremented here. Returns
/// `Ok(false)`, having written nothing, when the group cannot run fused.
pub fn adam_step_(
    params: &[Tensor],
    grads: &[Tensor],
    exp_avgs: &[Tensor],
    exp_avg_sqs: &[Tensor],
    max_exp_avg_sqs: &[Tensor],
    steps: &[Tensor],
    cfg: &AdamConfig,
) -> Result<bool> {
    let n = params.len();
    check_lengths(&[
        ("params", n),
        ("grads", grads.len()),
        ("exp_avgs", exp_avgs.len()),
        ("exp_avg_sqs", exp_avg_sqs.len()),
        ("state_steps", steps.len()),
        ("max_exp_avg_sqs", if cfg.amsgrad { max_exp_avg_sqs.len() } else { n }),
    ])?;
    if is_grad_enabled() && params.iter().any(|p| p.requires_grad()) {
        return Ok(false);
    }
    for i in 0..n {
        let mut others = vec![&grads[i], &exp_avgs[i], &exp_avg_sqs[i]];
        if cfg.amsgrad {
            others.push(&max_exp_avg_sqs[i]);
        }
        if !fusable(&params[i], &others) || steps[i].numel() != 1 || !steps[i].device().is_cpu() {
            return Ok(false);
        }
    }
    for i in 0..n {
        let t = bump_step(&steps[i])?;
        let bc1 = 1.0 - cfg.beta1.powf(t);
        let h = k::AdamStep {
            decay_factor: 1.0 - cfg.lr * cfg.weight_decay,
            l2: cfg.weight_decay,
            one_minus_beta1: 1.0 - cfg.beta1,
            beta2: cfg.beta2,
            one_minus_beta2: 1.0 - cfg.beta2,
            bias_correction2_sqrt: (1.0 - cfg.beta2.powf(t)).sqrt(),
            eps: cfg.eps,
            neg_step_size: -(cfg.lr / bc1),
            maximize: cfg.maximize,
            decoupled: cfg.decoupled && cfg.weight_decay != 0.0,
        };
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: `fusable` checked every operand is a contiguous tensor of
                // this dtype and size, and that no two of them share storage.
                unsafe {
                    let vmax = if cfg.amsgrad { Some(elems::<$T>(&max_exp_avg_sqs[i])) } else { None };
                    k::adam(
                        elems::<$T>(&params[i]),
                        elems::<$T>(&grads[i]),
                        elems::<$T>(&exp_avgs[i]),
                        elems::<$T>(&exp_avg_sqs[i]),
                        vmax,
                        &k::AdamScalars::new(&h),
                    )
                }
            }};
        }
        if params[i].dtype() == DType::Float32 {
            run!(f32)
        } else {
            run!(f64)
        }
        params[i].bump_version();
        exp_avgs[i].bump_version();
        exp_avg_sqs[i].bump_version();
        if cfg.amsgrad {
            max_exp_avg_sqs[i].bump_version();
        }
    }
    Ok(true)
}

/// One SGD step over a parameter group. With momentum, `momentum_buffers`
/// holds one buffer per parameter and `fresh[i]` says buffer `i` was just
/// allocated (PyTorch's first step clones the gradient into it). Returns
/// `Ok(false)`, having written nothing, when the group cannot run fused.
pub fn sgd_step_(params: &[Tensor], grads: &[Tensor], momentum_buffers: &[Tensor], fresh: &[bool], cfg: &SgdConfig) -> Result<bool> {
    let n = params.len();
    let with_buf = cfg.momentum != 0.0;
    let nb = if with_buf { n } else { 0 };
    check_lengths(&[
        ("params", n),
        ("grads", grads.len()),
        ("momentum_buffers", momentum_buffers.len() + n - nb),
        ("fresh flags", fresh.len() + n - nb),
    ])?;
    if is_grad_enabled() && params.iter().any(|p| p.requires_grad()) {
        return Ok(false);
    }
    for i in 0..n {
        let mut others = vec![&grads[i]];
        if with_buf {
            others.push(&momentum_buffers[i]);
        }
        if !fusable(&params[i], &others) {
            return Ok(false);
        }
    }
    let h = k::SgdStep {
        weight_decay: cfg.weight_decay,
        momentum: cfg.momentum,
        one_minus_dampening: 1.0 - cfg.dampening,
        nesterov: cfg.nesterov,
        neg_lr: -cfg.lr,
        maximize: cfg.maximize,
    };
    for i in 0..n {
        let is_fresh = with_buf && fresh[i];
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: as in `adam_step_`: dense, same dtype and size, no shared storage.
                unsafe {
                    let buf = if with_buf { Some(elems::<$T>(&momentum_buffers[i])) } else { None };
                    k::sgd(elems::<$T>(&params[i]), elems::<$T>(&grads[i]), buf, is_fresh, &k::SgdScalars::new(&h))
                }
            }};
        }
        if params[i].dtype() == DType::Float32 {
            run!(f32)
        } else {
            run!(f64)
        }
        params[i].bump_version();
        if with_buf {
            momentum_buffers[i].bump_version();
        }
    }
    Ok(true)
}
