//! `LayerNorm`, `RMSNorm`, `BatchNorm1d`/`BatchNorm2d` and `GroupNorm`.

use std::sync::atomic::{AtomicBool, Ordering};

use ferrotorch_core::{DType, Device, Error, Result, Scalar};

use super::init;
use super::module::{Entry, Module};
use crate::defaults::default_dtype;
use crate::Tensor;

/// `nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)`.
pub struct LayerNorm {
    /// The trailing shape normalised over.
    pub normalized_shape: Vec<usize>,
    /// Added to the variance.
    pub eps: f64,
    /// Scale, when affine.
    pub weight: Option<Tensor>,
    /// Shift, when affine with a bias.
    pub bias: Option<Tensor>,
}

impl LayerNorm {
    /// PyTorch's default: affine with a bias, weight 1 and bias 0.
    pub fn new(normalized_shape: &[usize], eps: f64, elementwise_affine: bool, bias: bool) -> Result<LayerNorm> {
        Ok(LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps,
            weight: if elementwise_affine { Some(init::constant(normalized_shape, 1.0)?) } else { None },
            bias: if elementwise_affine && bias { Some(init::constant(normalized_shape, 0.0)?) } else { None },
        })
    }
}

impl Module for LayerNorm {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let shape: Vec<i64> = self.normalized_shape.iter().map(|&d| d as i64).collect();
        input.layer_norm(&shape, self.weight.as_ref(), self.bias.as_ref(), self.eps)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        if let Some(w) = &self.weight {
            f(Entry::Parameter("weight", w));
        }
        if let Some(b) = &self.bias {
            f(Entry::Parameter("bias", b));
        }
    }
}

/// `nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)`.
pub struct RMSNorm {
    /// The trailing shape normalised over.
    pub normalized_shape: Vec<usize>,
    /// Added to the mean square; `None` is the input dtype's epsilon.
    pub eps: Option<f64>,
    /// Scale, when affine.
    pub weight: Option<Tensor>,
}

impl RMSNorm {
    /// Weight 1 when affine, as PyTorch's.
    pub fn new(normalized_shape: &[usize], eps: Option<f64>, elementwise_affine: bool) -> Result<RMSNorm> {
        Ok(RMSNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps,
            weight: if elementwise_affine { Some(init::constant(normalized_shape, 1.0)?) } else { None },
        })
    }
}

impl Module for RMSNorm {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        super::functional::rms_norm(input, &self.normalized_shape, self.weight.as_ref(), self.eps)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        if let Some(w) = &self.weight {
            f(Entry::Parameter("weight", w));
        }
    }
}

/// `nn.BatchNorm1d` / `nn.BatchNorm2d(num_features, eps=1e-5, momentum=0.1,
/// affine=True, track_running_stats=True)`: normalises over dim 1 with the
/// running statistics in evaluation, with the batch's (moving the running
/// ones) in training.
pub struct BatchNorm {
    /// Scale, when affine.
    pub weight: Option<Tensor>,
    /// Shift, when affine.
    pub bias: Option<Tensor>,
    /// Running mean (a buffer).
    pub running_mean: Tensor,
    /// Running variance (a buffer).
    pub running_var: Tensor,
    /// Batches seen in training (an int64 0-d buffer).
    pub num_batches_tracked: Tensor,
    /// Added to the variance.
    pub eps: f64,
    /// Weight of the newest batch in the running statistics.
    pub momentum: f64,
    training: AtomicBool,
    dims: (usize, usize),
    name: &'static str,
}

/// `nn.BatchNorm1d`.
pub type BatchNorm1d = BatchNorm;
/// `nn.BatchNorm2d`.
pub type BatchNorm2d = BatchNorm;

impl BatchNorm {
    fn build(num_features: usize, eps: f64, momentum: f64, affine: bool, dims: (usize, usize), name: &'static str) -> Result<BatchNorm> {
        let dt = default_dtype();
        Ok(BatchNorm {
            weight: if affine { Some(init::constant(&[num_features], 1.0)?) } else { None },
            bias: if affine { Some(init::constant(&[num_features], 0.0)?) } else { None },
            running_mean: Tensor::zeros(&[num_features], dt, Device::CPU)?,
            running_var: Tensor::ones(&[num_features], dt, Device::CPU)?,
            num_batches_tracked: Tensor::zeros(&[], DType::Int64, Device::CPU)?,
            eps,
            momentum,
            training: AtomicBool::new(true),
            dims,
            name,
        })
    }
    /// `nn.BatchNorm1d(num_features, eps, momentum, affine)`: input `(N, C)` or `(N, C, L)`.
    pub fn batch_norm1d(num_features: usize, eps: f64, momentum: f64, affine: bool) -> Result<BatchNorm> {
        Self::build(num_features, eps, momentum, affine, (2, 3), "BatchNorm1d")
    }
    /// `nn.BatchNorm2d(num_features, eps, momentum, affine)`: input `(N, C, H, W)`.
    pub fn batch_norm2d(num_features: usize, eps: f64, momentum: f64, affine: bool) -> Result<BatchNorm> {
        Self::build(num_features, eps, momentum, affine, (4, 4), "BatchNorm2d")
    }
}

impl Module for BatchNorm {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let (lo, hi) = self.dims;
        if input.ndim() < lo || input.ndim() > hi {
            let want = if lo == hi { format!("{lo}D") } else { format!("{lo}D or {hi}D") };
            return Err(Error::value(format!("expected {want} input (got {}D input)", input.ndim())));
        }
        let training = self.training.load(Ordering::Relaxed);
        if training {
            let n = self.num_batches_tracked.item()?.to_f64() as i64;
            self.num_batches_tracked.fill_(Scalar::Int(n + 1))?;
        }
        input.batch_norm(
            Some(&self.running_mean),
            Some(&self.running_var),
            self.weight.as_ref(),
            self.bias.as_ref(),
            training,
            self.momentum,
            self.eps,
        )
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        if let Some(w) = &self.weight {
            f(Entry::Parameter("weight", w));
        }
        if let Some(b) = &self.bias {
            f(Entry::Parameter("bias", b));
        }
        f(Entry::Buffer("running_mean", &self.running_mean));
        f(Entry::Buffer("running_var", &self.running_var));
        f(Entry::Buffer("num_batches_tracked", &self.num_batches_tracked));
    }
    fn set_training(&self, on: bool) {
        self.training.store(on, Ordering::Relaxed);
    }
    fn type_name(&self) -> &'static str {
        self.name
    }
}

/// `nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True)`.
pub struct GroupNorm {
    /// Channel groups normalised separately.
    pub num_groups: usize,
    /// Added to the variance.
    pub eps: f64,
    /// Scale, when affine.
    pub weight: Option<Tensor>,
    /// Shift, when affine.
    pub bias: Option<Tensor>,
}

impl GroupNorm {
    /// Weight 1 and bias 0 when affine, as PyTorch's.
    pub fn new(num_groups: usize, num_channels: usize, eps: f64, affine: bool) -> Result<GroupNorm> {
        if num_groups == 0 || num_channels % num_groups != 0 {
            return Err(Error::value("num_channels must be divisible by num_groups"));
        }
        Ok(GroupNorm {
            num_groups,
            eps,
            weight: if affine { Some(init::constant(&[num_channels], 1.0)?) } else { None },
            bias: if affine { Some(init::constant(&[num_channels], 0.0)?) } else { None },
        })
    }
}

impl Module for GroupNorm {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.group_norm(self.num_groups as i64, self.weight.as_ref(), self.bias.as_ref(), self.eps)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        if let Some(w) = &self.weight {
            f(Entry::Parameter("weight", w));
        }
        if let Some(b) = &self.bias {
            f(Entry::Parameter("bias", b));
        }
    }
}
