//! The hyper-parameters of one fused optimizer step, per parameter, in
//! double precision: what the op layer works out from an optimizer's
//! options and state (as PyTorch's `_single_tensor_<name>` does in Python)
//! and a backend's multi-tensor kernel applies to every element.

/// Hyper-parameters of one Adam/AdamW step.
#[derive(Clone, Copy, Debug)]
pub struct AdamStep {
    /// `1 - lr * weight_decay` for decoupled decay (AdamW), else unused.
    pub decay_factor: f64,
    /// L2 penalty added to the gradient (Adam), 0 for none or decoupled.
    pub l2: f64,
    /// `1 - beta1`: the lerp weight of the first moment.
    pub one_minus_beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `1 - beta2`.
    pub one_minus_beta2: f64,
    /// `sqrt(1 - beta2^step)`.
    pub bias_correction2_sqrt: f64,
    /// `eps`.
    pub eps: f64,
    /// `-lr / (1 - beta1^step)`.
    pub neg_step_size: f64,
    /// Negate the gradient (`maximize=True`).
    pub maximize: bool,
    /// Apply `decay_factor` to the parameter (AdamW).
    pub decoupled: bool,
}

/// Hyper-parameters of one SGD step.
#[derive(Clone, Copy, Debug)]
pub struct SgdStep {
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// Momentum factor (0: plain SGD, no buffer).
    pub momentum: f64,
    /// `1 - dampening`.
    pub one_minus_dampening: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// `-lr`.
    pub neg_lr: f64,
    /// Negate the gradient (`maximize=True`).
    pub maximize: bool,
    /// The momentum buffer was just created: it takes the gradient.
    pub fresh: bool,
}

/// Hyper-parameters of one Adagrad step.
#[derive(Clone, Copy, Debug)]
pub struct AdagradStep {
    /// L2 penalty.
    pub weight_decay: f64,
    /// `-lr / (1 + (step - 1) * lr_decay)`.
    pub neg_clr: f64,
    /// `eps`.
    pub eps: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one Adadelta step.
#[derive(Clone, Copy, Debug)]
pub struct AdadeltaStep {
    /// L2 penalty.
    pub weight_decay: f64,
    /// `rho`.
    pub rho: f64,
    /// `1 - rho`.
    pub one_minus_rho: f64,
    /// `eps`.
    pub eps: f64,
    /// `-lr`.
    pub neg_lr: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one Adamax step.
#[derive(Clone, Copy, Debug)]
pub struct AdamaxStep {
    /// L2 penalty.
    pub weight_decay: f64,
    /// `1 - beta1`.
    pub one_minus_beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `eps`.
    pub eps: f64,
    /// `-lr / (1 - beta1^step)`.
    pub neg_clr: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one NAdam step.
#[derive(Clone, Copy, Debug)]
pub struct NadamStep {
    /// `1 - lr * weight_decay` for decoupled decay, else unused.
    pub decay_factor: f64,
    /// Weight decay (L2 unless decoupled).
    pub weight_decay: f64,
    /// Decoupled weight decay (NAdamW).
    pub decoupled: bool,
    /// `1 - beta1`.
    pub one_minus_beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `1 - beta2`.
    pub one_minus_beta2: f64,
    /// `1 - beta2^step`.
    pub bias_correction2: f64,
    /// `eps`.
    pub eps: f64,
    /// `-lr * (1 - mu) / (1 - mu_product)`: the gradient's weight.
    pub grad_coeff: f64,
    /// `-lr * mu_next / (1 - mu_product * mu_next)`: the first moment's weight.
    pub avg_coeff: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one RAdam step.
#[derive(Clone, Copy, Debug)]
pub struct RadamStep {
    /// `1 - lr * weight_decay` for decoupled decay, else unused.
    pub decay_factor: f64,
    /// Weight decay (L2 unless decoupled).
    pub weight_decay: f64,
    /// Decoupled weight decay (RAdamW).
    pub decoupled: bool,
    /// `1 - beta1`.
    pub one_minus_beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `1 - beta2`.
    pub one_minus_beta2: f64,
    /// `1 - beta1^step`.
    pub bias_correction1: f64,
    /// `sqrt(1 - beta2^step)`.
    pub bias_correction2_sqrt: f64,
    /// `lr`.
    pub lr: f64,
    /// `eps`.
    pub eps: f64,
    /// The rectification term when the variance is tractable (`rho_t > 5`),
    /// else `None` (an SGD-with-momentum step).
    pub rect: Option<f64>,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one RMSprop step.
#[derive(Clone, Copy, Debug)]
pub struct RmspropStep {
    /// L2 penalty.
    pub weight_decay: f64,
    /// `alpha`.
    pub alpha: f64,
    /// `1 - alpha`.
    pub one_minus_alpha: f64,
    /// `eps`.
    pub eps: f64,
    /// Momentum factor (0: no buffer).
    pub momentum: f64,
    /// Centered variant (keeps `grad_avg`).
    pub centered: bool,
    /// `-lr`.
    pub neg_lr: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one Rprop step.
#[derive(Clone, Copy, Debug)]
pub struct RpropStep {
    /// Step-size factor after a sign change.
    pub etaminus: f64,
    /// Step-size factor while the sign holds.
    pub etaplus: f64,
    /// Smallest step size.
    pub step_size_min: f64,
    /// Largest step size.
    pub step_size_max: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// Hyper-parameters of one ASGD step.
#[derive(Clone, Copy, Debug)]
pub struct AsgdStep {
    /// L2 penalty.
    pub weight_decay: f64,
    /// `1 - lambd * eta`.
    pub decay_factor: f64,
    /// `eta` (the current step size).
    pub eta: f64,
    /// `mu` (the averaging weight); 1 copies the parameter into `ax`.
    pub mu: f64,
    /// Negate the gradient.
    pub maximize: bool,
}

/// One parameter's step of one of the fused optimizers.
#[derive(Clone, Copy, Debug)]
pub enum OptimStep {
    /// `optim.Adam` / `optim.AdamW`.
    Adam(AdamStep),
    /// `optim.SGD`.
    Sgd(SgdStep),
    /// `optim.Adagrad`.
    Adagrad(AdagradStep),
    /// `optim.Adadelta`.
    Adadelta(AdadeltaStep),
    /// `optim.Adamax`.
    Adamax(AdamaxStep),
    /// `optim.NAdam`.
    Nadam(NadamStep),
    /// `optim.RAdam`.
    Radam(RadamStep),
    /// `optim.RMSprop`.
    Rmsprop(RmspropStep),
    /// `optim.Rprop`.
    Rprop(RpropStep),
    /// `optim.ASGD`.
    Asgd(AsgdStep),
}
