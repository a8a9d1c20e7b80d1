//! The optimizers `SGD`, `Adam` and `AdamW`, over the op layer's fused
//! multi-tensor steps ([`crate::ops::optim`]).
//!
//! ```
//! use ferrotorch::nn::optim::Adam;
//! use ferrotorch::Tensor;
//! let w = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
//! w.set_requires_grad(true).unwrap();
//! w.set_grad(Some(Tensor::from_vec(vec![2.0f32], &[1]).unwrap()));
//! let mut opt = Adam::adam(vec![w.clone()], 0.1).unwrap();
//! opt.step().unwrap();
//! // Adam's first step moves by lr in the direction against the gradient.
//! assert!((w.to_vec::<f32>().unwrap()[0] - 0.9).abs() < 1e-6);
//! ```

use ferrotorch_core::{DType, Device, Error, Result};

use crate::autograd::GradModeGuard;
use crate::ops::optim::{adam_step_, sgd_step_, AdamConfig, SgdConfig};
use crate::Tensor;

fn not_fusable(name: &str) -> Error {
    Error::runtime(format!("{name}: parameters and gradients must be dense float32/float64 CPU tensors of matching sizes"))
}

/// The parameters that have a gradient, with their positions.
fn with_grads(params: &[Tensor]) -> Vec<(usize, Tensor, Tensor)> {
    params.iter().enumerate().filter_map(|(i, p)| p.grad().map(|g| (i, p.clone(), g))).collect()
}

/// `optim.SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False)`.
///
/// ```
/// use ferrotorch::nn::optim::Sgd;
/// use ferrotorch::Tensor;
/// let w = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
/// w.set_requires_grad(true).unwrap();
/// w.set_grad(Some(Tensor::from_vec(vec![0.5f32], &[1]).unwrap()));
/// let mut opt = Sgd::new(vec![w.clone()], 0.1).unwrap();
/// opt.step().unwrap();
/// assert!((w.to_vec::<f32>().unwrap()[0] - 0.95).abs() < 1e-6);
/// ```
pub struct Sgd {
    params: Vec<Tensor>,
    /// Hyper-parameters.
    pub config: SgdConfig,
    buffers: Vec<Option<Tensor>>,
}

impl Sgd {
    /// Plain SGD with learning rate `lr`; set the other fields of
    /// [`config`](Sgd::config) or use the builders for momentum and decay.
    pub fn new(params: Vec<Tensor>, lr: f64) -> Result<Sgd> {
        if lr < 0.0 {
            return Err(Error::value(format!("Invalid learning rate: {lr}")));
        }
        let n = params.len();
        Ok(Sgd {
            params,
            config: SgdConfig { lr, momentum: 0.0, dampening: 0.0, weight_decay: 0.0, nesterov: false, maximize: false },
            buffers: vec![None; n],
        })
    }
    /// Sets momentum, dampening and Nesterov momentum.
    pub fn momentum(mut self, momentum: f64, dampening: f64, nesterov: bool) -> Result<Sgd> {
        if momentum < 0.0 {
            return Err(Error::value(format!("Invalid momentum value: {momentum}")));
        }
        if nesterov && (momentum <= 0.0 || dampening != 0.0) {
            return Err(Error::value("Nesterov momentum requires a momentum and zero dampening"));
        }
        self.config.momentum = momentum;
        self.config.dampening = dampening;
        self.config.nesterov = nesterov;
        Ok(self)
    }
    /// Sets the L2 penalty.
    pub fn weight_decay(mut self, wd: f64) -> Result<Sgd> {
        if wd < 0.0 {
            return Err(Error::value(format!("Invalid weight_decay value: {wd}")));
        }
        self.config.weight_decay = wd;
        Ok(self)
    }

    /// `step()`: updates every parameter that has a gradient.
    pub fn step(&mut self) -> Result<()> {
        let _no_grad = GradModeGuard::new(false);
        let live = with_grads(&self.params);
        let (mut ps, mut gs, mut bufs, mut fresh) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, p, g) in live {
            if self.config.momentum != 0.0 {
                let is_new = self.buffers[i].is_none();
                if is_new {
                    self.buffers[i] = Some(Tensor::zeros(p.shape(), p.dtype(), p.device())?);
                }
                bufs.extend(self.buffers[i].clone());
                fresh.push(is_new);
            }
            ps.push(p);
            gs.push(g);
        }
        if !sgd_step_(&ps, &gs, &bufs, &fresh, &self.config)? {
            return Err(not_fusable("SGD"));
        }
        Ok(())
    }

    /// `zero_grad()`: drops the gradients (`set_to_none=True`).
    pub fn zero_grad(&self) {
        self.params.iter().for_each(|p| p.set_grad(None));
    }
}

/// Adam's per-parameter state.
struct AdamState {
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    max_exp_avg_sq: Option<Tensor>,
    step: Tensor,
}

/// `optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
/// amsgrad=False)` and `optim.AdamW` (decoupled weight decay, 0.01 by default).
pub struct Adam {
    params: Vec<Tensor>,
    /// Hyper-parameters.
    pub config: AdamConfig,
    state: Vec<Option<AdamState>>,
    name: &'static str,
}

/// `optim.AdamW`: [`Adam`] made by [`Adam::adamw`].
pub type AdamW = Adam;

impl Adam {
    fn build(params: Vec<Tensor>, lr: f64, weight_decay: f64, decoupled: bool, name: &'static str) -> Result<Adam> {
        if lr < 0.0 {
            return Err(Error::value(format!("Invalid learning rate: {lr}")));
        }
        let n = params.len();
        Ok(Adam {
            params,
            config: AdamConfig { lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay, amsgrad: false, maximize: false, decoupled },
            state: (0..n).map(|_| None).collect(),
            name,
        })
    }
    /// `Adam(params, lr)` with PyTorch's other defaults.
    pub fn adam(params: Vec<Tensor>, lr: f64) -> Result<Adam> {
        Self::build(params, lr, 0.0, false, "Adam")
    }
    /// `AdamW(params, lr)` with PyTorch's other defaults (weight decay 0.01).
    pub fn adamw(params: Vec<Tensor>, lr: f64) -> Result<Adam> {
        Self::build(params, lr, 0.01, true, "AdamW")
    }
    /// Sets `betas`.
    pub fn betas(mut self, beta1: f64, beta2: f64) -> Result<Adam> {
        for (i, b) in [beta1, beta2].into_iter().enumerate() {
            if !(0.0..1.0).contains(&b) {
                return Err(Error::value(format!("Invalid beta parameter at index {i}: {b}")));
            }
        }
        self.config.beta1 = beta1;
        self.config.beta2 = beta2;
        Ok(self)
    }
    /// Sets the weight decay (L2 for Adam, decoupled for AdamW).
    pub fn weight_decay(mut self, wd: f64) -> Result<Adam> {
        if wd < 0.0 {
            return Err(Error::value(format!("Invalid weight_decay value: {wd}")));
        }
        self.config.weight_decay = wd;
        Ok(self)
    }
    /// Keeps the running maximum of the second moment.
    pub fn amsgrad(mut self, on: bool) -> Adam {
        self.config.amsgrad = on;
        self
    }

    /// `step()`: updates every parameter that has a gradient.
    pub fn step(&mut self) -> Result<()> {
        let _no_grad = GradModeGuard::new(false);
        let live = with_grads(&self.params);
        let (mut ps, mut gs, mut m, mut v, mut vmax, mut steps) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, p, g) in live {
            if self.state[i].is_none() {
                let zeros = || Tensor::zeros(p.shape(), p.dtype(), p.device());
                self.state[i] = Some(AdamState {
                    exp_avg: zeros()?,
                    exp_avg_sq: zeros()?,
                    max_exp_avg_sq: if self.config.amsgrad { Some(zeros()?) } else { None },
                    step: Tensor::zeros(&[], DType::Float32, Device::CPU)?,
                });
            }
            if let Some(s) = &self.state[i] {
                m.push(s.exp_avg.clone());
                v.push(s.exp_avg_sq.clone());
                vmax.extend(s.max_exp_avg_sq.clone());
                steps.push(s.step.clone());
            }
            ps.push(p);
            gs.push(g);
        }
        if !adam_step_(&ps, &gs, &m, &v, &vmax, &steps, &self.config)? {
            return Err(not_fusable(self.name));
        }
        Ok(())
    }

    /// `zero_grad()`: drops the gradients (`set_to_none=True`).
    pub fn zero_grad(&self) {
        self.params.iter().for_each(|p| p.set_grad(None));
    }
}
