//! Fused optimizer steps over a parameter group: the update math of the
//! `optim` optimizers in one multi-tensor call per group
//! (the backend's [`OptimKernels`](ferrotorch_core::backend::OptimKernels)) instead of a handful of
//! elementwise ops per parameter.
//!
//! Every step here takes the group's parameters, gradients and per-parameter
//! state lists, works out each parameter's hyper-parameters in double
//! precision exactly as PyTorch's `_single_tensor_<name>` does in Python
//! (bumping the 0-d `step` counters and other scalar state on the way), and
//! hands the element math to the optimizer's kernel.
//!
//! A step returns `Ok(false)` without writing anything when some tensor is
//! not a dense float32/float64 tensor of its parameter's device, dtype and size,
//! when two written operands share storage, when a scalar state is not a
//! one-element CPU float tensor, or when autograd would have to see the
//! update (grad mode on and a parameter requiring grad); the caller then runs
//! the op-by-op form, which handles (or rejects) those cases as PyTorch does.

use crate::autograd::is_grad_enabled;
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result, Scalar};
use ferrotorch_core::backend::ParamOperands;
use ferrotorch_core::op::optim::{self as k, OptimStep};
use std::collections::HashSet;
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

/// The other optimizers' hyper-parameters of a parameter group, one variant
/// per optimizer; [`fused_step_`] documents the state lists each takes.
#[derive(Clone, Copy, Debug)]
pub enum Fused {
    /// `optim.Adagrad`.
    Adagrad { lr: f64, lr_decay: f64, weight_decay: f64, eps: f64, maximize: bool },
    /// `optim.Adadelta`.
    Adadelta { lr: f64, rho: f64, eps: f64, weight_decay: f64, maximize: bool },
    /// `optim.Adamax`.
    Adamax { lr: f64, beta1: f64, beta2: f64, eps: f64, weight_decay: f64, maximize: bool },
    /// `optim.NAdam`.
    Nadam {
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        momentum_decay: f64,
        decoupled: bool,
        maximize: bool,
    },
    /// `optim.RAdam`.
    Radam { lr: f64, beta1: f64, beta2: f64, eps: f64, weight_decay: f64, decoupled: bool, maximize: bool },
    /// `optim.RMSprop`.
    Rmsprop { lr: f64, alpha: f64, eps: f64, weight_decay: f64, momentum: f64, centered: bool, maximize: bool },
    /// `optim.Rprop`.
    Rprop { etaminus: f64, etaplus: f64, step_size_min: f64, step_size_max: f64, maximize: bool },
    /// `optim.ASGD`; `default_f32` says the default dtype is float32, through
    /// which PyTorch rounds the new `eta` and `mu` (`torch.as_tensor`).
    Asgd { lr: f64, lambd: f64, alpha: f64, t0: f64, weight_decay: f64, maximize: bool, default_f32: bool },
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

fn storage_id(t: &Tensor) -> usize {
    Arc::as_ptr(t.storage()) as *const u8 as usize
}

/// Can the kernels run over the group? `states[k]` is the k-th state list
/// (empty: the slot is absent), `scalars` the lists of 0-d state tensors.
fn fusable_group(params: &[Tensor], grads: &[Tensor], states: &[&[Tensor]], scalars: &[&[Tensor]]) -> bool {
    if is_grad_enabled() && params.iter().any(|p| p.requires_grad()) {
        return false;
    }
    let mut written = HashSet::new();
    for (i, p) in params.iter().enumerate() {
        if !matches!(p.dtype(), DType::Float32 | DType::Float64) {
            return false;
        }
        let dense =
            |t: &Tensor| t.device() == p.device() && t.is_contiguous() && t.dtype() == p.dtype() && t.numel() == p.numel();
        if !dense(p) || !dense(&grads[i]) {
            return false;
        }
        for s in states.iter().filter(|s| !s.is_empty()) {
            if !dense(&s[i]) || !written.insert(storage_id(&s[i])) {
                return false;
            }
        }
        if !written.insert(storage_id(p)) {
            return false;
        }
        let scalar_ok =
            |t: &Tensor| t.numel() == 1 && t.device().is_cpu() && matches!(t.dtype(), DType::Float32 | DType::Float64);
        if !scalars.iter().all(|s| scalar_ok(&s[i])) {
            return false;
        }
    }
    grads.iter().all(|g| !written.contains(&storage_id(g)))
}

/// The value of a 0-d counter, bumped by one (PyTorch's `state_steps[i] += 1`).
fn bump_step(step: &Tensor) -> Result<f64> {
    let next = step.item()?.to_f64() + 1.0;
    step.fill_raw_(Scalar::Float(next))?;
    Ok(step.item()?.to_f64())
}

/// `t *= by` for a 0-d float tensor, rounded in its dtype; returns the new value.
fn scale_scalar(t: &Tensor, by: f64) -> Result<f64> {
    let v = t.item()?.to_f64();
    let next = if t.dtype() == DType::Float32 { ((v as f32) * (by as f32)) as f64 } else { v * by };
    t.fill_raw_(Scalar::Float(next))?;
    Ok(next)
}

/// Runs the group's kernel once [`fusable_group`] accepted it: float32 and
/// float64 parameters as one multi-tensor call each, with `slots` state
/// slots (`states`, each empty or one tensor per parameter).
fn run_group<H: Copy, const S: usize>(params: &[Tensor], grads: &[Tensor], states: [&[Tensor]; S], hypers: &[H], wrap: fn(H) -> OptimStep) -> Result<()> {
    for dt in [DType::Float32, DType::Float64] {
        let idx: Vec<usize> = (0..params.len()).filter(|&i| params[i].dtype() == dt).collect();
        let Some(&first) = idx.first() else { continue };
        let mut held = Vec::with_capacity(idx.len());
        for &i in &idx {
            let mut st = Vec::with_capacity(S);
            for s in 0..S {
                st.push(super::conj_bit::write_opt(states.get(s).filter(|l| !l.is_empty()).map(|l| &l[i]))?);
            }
            held.push((params[i].operand_mut()?, grads[i].operand()?, st));
        }
        let operands: Vec<ParamOperands> = held
            .iter()
            .map(|(p, g, st)| ParamOperands { param: p.dst(), grad: g.src(), state: std::array::from_fn(|s| st.get(s).and_then(|w| w.as_ref()).map(|w| w.dst())) })
            .collect();
        let steps: Vec<OptimStep> = idx.iter().map(|&i| wrap(hypers[i])).collect();
        params[first].backend()?.optimizer_step(dt, S, &steps, &operands)?;
    }
    for (i, p) in params.iter().enumerate() {
        p.bump_version();
        for s in states.iter().filter(|s| !s.is_empty()) {
            s[i].bump_version();
        }
    }
    Ok(())
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
    let vmax: &[Tensor] = if cfg.amsgrad { max_exp_avg_sqs } else { &[] };
    if !fusable_group(params, grads, &[exp_avgs, exp_avg_sqs, vmax], &[steps]) {
        return Ok(false);
    }
    let mut hypers = Vec::with_capacity(n);
    for step in steps {
        let t = bump_step(step)?;
        hypers.push(k::AdamStep {
            decay_factor: 1.0 - cfg.lr * cfg.weight_decay,
            l2: cfg.weight_decay,
            one_minus_beta1: 1.0 - cfg.beta1,
            beta2: cfg.beta2,
            one_minus_beta2: 1.0 - cfg.beta2,
            bias_correction2_sqrt: (1.0 - cfg.beta2.powf(t)).powf(0.5),
            eps: cfg.eps,
            neg_step_size: -(cfg.lr / (1.0 - cfg.beta1.powf(t))),
            maximize: cfg.maximize,
            decoupled: cfg.decoupled && cfg.weight_decay != 0.0,
        });
    }
    if cfg.amsgrad {
        run_group::<_, 3>(params, grads, [exp_avgs, exp_avg_sqs, max_exp_avg_sqs], &hypers, OptimStep::Adam)?;
    } else {
        run_group::<_, 2>(params, grads, [exp_avgs, exp_avg_sqs], &hypers, OptimStep::Adam)?;
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
    let bufs: &[Tensor] = if with_buf { momentum_buffers } else { &[] };
    if !fusable_group(params, grads, &[bufs], &[]) {
        return Ok(false);
    }
    let hypers: Vec<k::SgdStep> = (0..n)
        .map(|i| k::SgdStep {
            weight_decay: cfg.weight_decay,
            momentum: cfg.momentum,
            one_minus_dampening: 1.0 - cfg.dampening,
            nesterov: cfg.nesterov,
            neg_lr: -cfg.lr,
            maximize: cfg.maximize,
            fresh: with_buf && fresh[i],
        })
        .collect();
    run_group::<_, 1>(params, grads, [bufs], &hypers, OptimStep::Sgd)?;
    Ok(true)
}

/// One step of the optimizer `opt` over a parameter group. `states` are the
/// per-parameter state lists, in this order (all one per parameter; a list
/// the group does not keep is empty):
///
/// | optimizer | `states` |
/// |---|---|
/// | Adagrad | `sum`, `step` |
/// | Adadelta | `square_avg`, `acc_delta`, `step` |
/// | Adamax | `exp_avg`, `exp_inf`, `step` |
/// | NAdam | `exp_avg`, `exp_avg_sq`, `mu_product`, `step` |
/// | RAdam | `exp_avg`, `exp_avg_sq`, `step` |
/// | RMSprop | `square_avg`, `grad_avg` (centered), `momentum_buffer` (momentum > 0), `step` |
/// | Rprop | `prev`, `step_size`, `step` |
/// | ASGD | `ax`, `eta`, `mu`, `step` |
///
/// The 0-d tensors (`step`, `mu_product`, `eta`, `mu`) are updated here as
/// PyTorch updates them. Returns `Ok(false)`, having written nothing, when
/// the group cannot run fused.
pub fn fused_step_(opt: &Fused, params: &[Tensor], grads: &[Tensor], states: &[Vec<Tensor>]) -> Result<bool> {
    let (names, optional): (&[&str], &[&str]) = match opt {
        Fused::Adagrad { .. } => (&["sum", "step"], &[]),
        Fused::Adadelta { .. } => (&["square_avg", "acc_delta", "step"], &[]),
        Fused::Adamax { .. } => (&["exp_avg", "exp_inf", "step"], &[]),
        Fused::Nadam { .. } => (&["exp_avg", "exp_avg_sq", "mu_product", "step"], &[]),
        Fused::Radam { .. } => (&["exp_avg", "exp_avg_sq", "step"], &[]),
        Fused::Rmsprop { .. } => (&["square_avg", "grad_avg", "momentum_buffer", "step"], &["grad_avg", "momentum_buffer"]),
        Fused::Rprop { .. } => (&["prev", "step_size", "step"], &[]),
        Fused::Asgd { .. } => (&["ax", "eta", "mu", "step"], &[]),
    };
    if states.len() != names.len() {
        return Err(Error::value(format!(
            "fused optimizer step: expected {} state lists ({}), got {}",
            names.len(),
            names.join(", "),
            states.len()
        )));
    }
    let n = params.len();
    let mut lens = vec![("params", n), ("grads", grads.len())];
    for (name, s) in names.iter().zip(states) {
        lens.push((*name, if s.is_empty() && optional.contains(name) { n } else { s.len() }));
    }
    check_lengths(&lens)?;
    let st = |i: usize| states[i].as_slice();
    match *opt {
        Fused::Adagrad { lr, lr_decay, weight_decay, eps, maximize } => {
            if !fusable_group(params, grads, &[st(0)], &[st(1)]) {
                return Ok(false);
            }
            let mut hypers = Vec::with_capacity(n);
            for step in st(1) {
                let t = bump_step(step)?;
                let clr = lr / (1.0 + (t - 1.0) * lr_decay);
                hypers.push(k::AdagradStep { weight_decay, neg_clr: -clr, eps, maximize });
            }
            run_group::<_, 1>(params, grads, [st(0)], &hypers, OptimStep::Adagrad)?;
        }
        Fused::Adadelta { lr, rho, eps, weight_decay, maximize } => {
            if !fusable_group(params, grads, &[st(0), st(1)], &[st(2)]) {
                return Ok(false);
            }
            for step in st(2) {
                bump_step(step)?;
            }
            let h = k::AdadeltaStep { weight_decay, rho, one_minus_rho: 1.0 - rho, eps, neg_lr: -lr, maximize };
            run_group::<_, 2>(params, grads, [st(0), st(1)], &vec![h; n], OptimStep::Adadelta)?;
        }
        Fused::Adamax { lr, beta1, beta2, eps, weight_decay, maximize } => {
            if !fusable_group(params, grads, &[st(0), st(1)], &[st(2)]) {
                return Ok(false);
            }
            let mut hypers = Vec::with_capacity(n);
            for step in st(2) {
                let t = bump_step(step)?;
                let clr = lr / (1.0 - beta1.powf(t));
                hypers.push(k::AdamaxStep { weight_decay, one_minus_beta1: 1.0 - beta1, beta2, eps, neg_clr: -clr, maximize });
            }
            run_group::<_, 2>(params, grads, [st(0), st(1)], &hypers, OptimStep::Adamax)?;
        }
        Fused::Nadam { lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled, maximize } => {
            if !fusable_group(params, grads, &[st(0), st(1)], &[st(2), st(3)]) {
                return Ok(false);
            }
            let mut hypers = Vec::with_capacity(n);
            for i in 0..n {
                let t = bump_step(&st(3)[i])?;
                // Dozat's momentum schedule; its running product lives in the state.
                let mu = beta1 * (1.0 - 0.5 * 0.96f64.powf(t * momentum_decay));
                let mu_next = beta1 * (1.0 - 0.5 * 0.96f64.powf((t + 1.0) * momentum_decay));
                let mu_product = scale_scalar(&st(2)[i], mu)?;
                let mu_product_next = mu_product * mu_next;
                hypers.push(k::NadamStep {
                    decay_factor: 1.0 - lr * weight_decay,
                    weight_decay,
                    decoupled,
                    one_minus_beta1: 1.0 - beta1,
                    beta2,
                    one_minus_beta2: 1.0 - beta2,
                    bias_correction2: 1.0 - beta2.powf(t),
                    eps,
                    grad_coeff: -lr * (1.0 - mu) / (1.0 - mu_product),
                    avg_coeff: (-lr * mu_next) / (1.0 - mu_product_next),
                    maximize,
                });
            }
            run_group::<_, 2>(params, grads, [st(0), st(1)], &hypers, OptimStep::Nadam)?;
        }
        Fused::Radam { lr, beta1, beta2, eps, weight_decay, decoupled, maximize } => {
            if !fusable_group(params, grads, &[st(0), st(1)], &[st(2)]) {
                return Ok(false);
            }
            let mut hypers = Vec::with_capacity(n);
            for step in st(2) {
                let t = bump_step(step)?;
                let bias_correction2 = 1.0 - beta2.powf(t);
                // The length of the approximated SMA; the variance is tractable above 5.
                let rho_inf = 2.0 / (1.0 - beta2) - 1.0;
                let rho_t = rho_inf - 2.0 * t * beta2.powf(t) / bias_correction2;
                let rect = (rho_t > 5.0).then(|| {
                    ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t)).powf(0.5)
                });
                hypers.push(k::RadamStep {
                    decay_factor: 1.0 - lr * weight_decay,
                    weight_decay,
                    decoupled,
                    one_minus_beta1: 1.0 - beta1,
                    beta2,
                    one_minus_beta2: 1.0 - beta2,
                    bias_correction1: 1.0 - beta1.powf(t),
                    bias_correction2_sqrt: bias_correction2.powf(0.5),
                    lr,
                    eps,
                    rect,
                    maximize,
                });
            }
            run_group::<_, 2>(params, grads, [st(0), st(1)], &hypers, OptimStep::Radam)?;
        }
        Fused::Rmsprop { lr, alpha, eps, weight_decay, momentum, centered, maximize } => {
            // The optional lists must be there exactly when the options ask for them.
            if st(1).is_empty() == centered && n > 0 || st(2).is_empty() == (momentum > 0.0) && n > 0 {
                return Err(Error::value(
                    "fused optimizer step: RMSprop needs grad_avgs exactly when centered and momentum_buffers exactly when momentum > 0",
                ));
            }
            if !fusable_group(params, grads, &[st(0), st(1), st(2)], &[st(3)]) {
                return Ok(false);
            }
            for step in st(3) {
                bump_step(step)?;
            }
            let h = k::RmspropStep {
                weight_decay,
                alpha,
                one_minus_alpha: 1.0 - alpha,
                eps,
                momentum,
                centered,
                neg_lr: -lr,
                maximize,
            };
            run_group::<_, 3>(params, grads, [st(0), st(1), st(2)], &vec![h; n], OptimStep::Rmsprop)?;
        }
        Fused::Rprop { etaminus, etaplus, step_size_min, step_size_max, maximize } => {
            if !fusable_group(params, grads, &[st(0), st(1)], &[st(2)]) {
                return Ok(false);
            }
            for step in st(2) {
                bump_step(step)?;
            }
            let h = k::RpropStep { etaminus, etaplus, step_size_min, step_size_max, maximize };
            run_group::<_, 2>(params, grads, [st(0), st(1)], &vec![h; n], OptimStep::Rprop)?;
        }
        Fused::Asgd { lr, lambd, alpha, t0, weight_decay, maximize, default_f32 } => {
            if !fusable_group(params, grads, &[st(0)], &[st(1), st(2), st(3)]) {
                return Ok(false);
            }
            // PyTorch makes the new eta and mu with `torch.as_tensor`, in the default dtype.
            let through_default = |x: f64| if default_f32 { x as f32 as f64 } else { x };
            let mut hypers = Vec::with_capacity(n);
            for i in 0..n {
                let (eta, mu) = (&st(1)[i], &st(2)[i]);
                let t = bump_step(&st(3)[i])?;
                let eta_value = eta.item()?.to_f64();
                hypers.push(k::AsgdStep {
                    weight_decay,
                    decay_factor: 1.0 - lambd * eta_value,
                    eta: eta_value,
                    mu: mu.item()?.to_f64(),
                    maximize,
                });
                eta.fill_raw_(Scalar::Float(through_default(lr / (1.0 + lambd * lr * t).powf(alpha))))?;
                // Python's max(1, x) keeps the 1 unless x is larger (NaN included).
                let d = if t - t0 > 1.0 { t - t0 } else { 1.0 };
                mu.fill_raw_(Scalar::Float(through_default(1.0 / d)))?;
            }
            run_group::<_, 1>(params, grads, [st(0)], &hypers, OptimStep::Asgd)?;
        }
    }
    Ok(true)
}
