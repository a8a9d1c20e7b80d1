//! Bindings for the fused optimizer steps (`ferrotorch::ops::optim`). The
//! Python optimizers call them once per parameter group and fall back to
//! their op-by-op form when a step answers `False`.

use crate::errors::IntoPyResult;
use crate::tensor::tensor_of;
use ferrotorch::ops::optim::{adam_step_, fused_step_, sgd_step_, AdamConfig, Fused, SgdConfig};
use pyo3::exceptions::PyValueError;
use pyo3::types::PyDict;
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

/// `_fused_step_(name, params, grads, states, hyper)`: one step of the
/// optimizer `name` ("adagrad", "adadelta", "adamax", "nadam", "radam",
/// "rmsprop", "rprop", "asgd") over a group. `states` are its per-parameter
/// state lists in the order `ferrotorch::ops::optim::fused_step_` documents;
/// `hyper` maps the group's hyper-parameter names to Python numbers. `False`
/// when the group cannot run fused (nothing written).
#[pyfunction]
pub fn _fused_step_(
    name: &str,
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    states: Vec<Vec<Bound<'_, PyAny>>>,
    hyper: &Bound<'_, PyDict>,
) -> PyResult<bool> {
    let f = |key: &str| -> PyResult<f64> {
        match hyper.get_item(key)? {
            Some(v) => v.extract::<f64>(),
            None => Err(PyValueError::new_err(format!("_fused_step_: {name} needs hyper-parameter '{key}'"))),
        }
    };
    let b = |key: &str| -> PyResult<bool> {
        match hyper.get_item(key)? {
            Some(v) => v.is_truthy(),
            None => Ok(false),
        }
    };
    let opt = match name {
        "adagrad" => Fused::Adagrad {
            lr: f("lr")?,
            lr_decay: f("lr_decay")?,
            weight_decay: f("weight_decay")?,
            eps: f("eps")?,
            maximize: b("maximize")?,
        },
        "adadelta" => Fused::Adadelta {
            lr: f("lr")?,
            rho: f("rho")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            maximize: b("maximize")?,
        },
        "adamax" => Fused::Adamax {
            lr: f("lr")?,
            beta1: f("beta1")?,
            beta2: f("beta2")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            maximize: b("maximize")?,
        },
        "nadam" => Fused::Nadam {
            lr: f("lr")?,
            beta1: f("beta1")?,
            beta2: f("beta2")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            momentum_decay: f("momentum_decay")?,
            decoupled: b("decoupled_weight_decay")?,
            maximize: b("maximize")?,
        },
        "radam" => Fused::Radam {
            lr: f("lr")?,
            beta1: f("beta1")?,
            beta2: f("beta2")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            decoupled: b("decoupled_weight_decay")?,
            maximize: b("maximize")?,
        },
        "rmsprop" => Fused::Rmsprop {
            lr: f("lr")?,
            alpha: f("alpha")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            momentum: f("momentum")?,
            centered: b("centered")?,
            maximize: b("maximize")?,
        },
        "rprop" => Fused::Rprop {
            etaminus: f("etaminus")?,
            etaplus: f("etaplus")?,
            step_size_min: f("step_size_min")?,
            step_size_max: f("step_size_max")?,
            maximize: b("maximize")?,
        },
        "asgd" => Fused::Asgd {
            lr: f("lr")?,
            lambd: f("lambd")?,
            alpha: f("alpha")?,
            t0: f("t0")?,
            weight_decay: f("weight_decay")?,
            maximize: b("maximize")?,
            default_f32: b("default_f32")?,
        },
        other => return Err(PyValueError::new_err(format!("_fused_step_: unknown optimizer '{other}'"))),
    };
    let states = states.iter().map(|s| tensors(s)).collect::<PyResult<Vec<_>>>()?;
    fused_step_(&opt, &tensors(&params)?, &tensors(&grads)?, &states).py()
}

/// Registers the functions above on `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_fused_adam_, m)?)?;
    m.add_function(wrap_pyfunction!(_fused_sgd_, m)?)?;
    m.add_function(wrap_pyfunction!(_fused_step_, m)?)?;
    Ok(())
}
