//! Bindings for the fused optimizer steps (`ferrotorch::ops::optim`). The
//! Python optimizers call them once per parameter group and fall back to
//! their op-by-op form when a step answers `False`.

use crate::errors::IntoPyResult;
use crate::tensor::tensor_of;
use ferrotorch::ops::optim::{adam_step_, sgd_step_, AdamConfig, SgdConfig};
use ferrotorch::Tensor;
use pyo3::prelude::*;

fn tensors(xs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Tensor>> {
    xs.iter().map(tensor_of).collect()
}

/// `_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
/// state_steps, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
/// decoupled)`: one Adam/AdamW step over a group; `False` when it cannot run fused.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _fused_adam_(
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    exp_avgs: Vec<Bound<'_, PyAny>>,
    exp_avg_sqs: Vec<Bound<'_, PyAny>>,
    max_exp_avg_sqs: Vec<Bound<'_, PyAny>>,
    state_steps: Vec<Bound<'_, PyAny>>,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    amsgrad: bool,
    maximize: bool,
    decoupled: bool,
) -> PyResult<bool> {
    let cfg = AdamConfig { lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled };
    adam_step_(
        &tensors(&params)?,
        &tensors(&grads)?,
        &tensors(&exp_avgs)?,
        &tensors(&exp_avg_sqs)?,
        &tensors(&max_exp_avg_sqs)?,
        &tensors(&state_steps)?,
        &cfg,
    )
    .py()
}

/// `_fused_sgd_(params, grads, momentum_buffers, fresh, lr, momentum,
/// dampening, weight_decay, nesterov, maximize)`: one SGD step over a group;
/// `False` when it cannot run fused.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _fused_sgd_(
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    momentum_buffers: Vec<Bound<'_, PyAny>>,
    fresh: Vec<bool>,
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
    maximize: bool,
) -> PyResult<bool> {
    let cfg = SgdConfig { lr, momentum, dampening, weight_decay, nesterov, maximize };
    sgd_step_(&tensors(&params)?, &tensors(&grads)?, &tensors(&momentum_buffers)?, &fresh, &cfg).py()
}

/// Registers the functions above on `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_fused_adam_, m)?)?;
    m.add_function(wrap_pyfunction!(_fused_sgd_, m)?)?;
    Ok(())
}
