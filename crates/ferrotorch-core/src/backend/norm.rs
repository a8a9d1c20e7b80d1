//! Normalisation kernels: layer, batch and group norm forward and backward,
//! and the row-wise moments behind layer and group norm.
//!
//! Operands are contiguous unless said otherwise. `dtype` is the input's
//! dtype (float32, float64, float16 or bfloat16); statistics, parameters and
//! parameter gradients are in its
//! [`norm_compute_dtype`](crate::op::norm::norm_compute_dtype).

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::norm::{BatchNormSpec, GroupNormSpec, LayerNormSpec, MomentsSpec};

/// The gradients a normalisation backward writes, each `None` when not
/// wanted: the input's (input dtype, input shape) and the weight's and
/// bias's (compute dtype, one value per parameter element).
#[derive(Clone, Copy)]
pub struct NormGrads<'a> {
    /// Gradient of the input.
    pub input: Option<Dst<'a>>,
    /// Gradient of the weight.
    pub weight: Option<Dst<'a>>,
    /// Gradient of the bias.
    pub bias: Option<Dst<'a>>,
}

/// The normalisation kernels of a device, in the evaluation order and
/// rounding of PyTorch's kernels for that device.
pub trait NormKernels {
    /// Layer norm forward: `out = (x - mean) * rstd * weight + bias` per row,
    /// with `mean` and `rstd = 1/sqrt(var + eps)` written per row.
    #[allow(clippy::too_many_arguments)]
    fn layer_norm(&self, spec: &LayerNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()>;

    /// Layer norm backward from the forward's `mean` and `rstd`. The weight
    /// and bias gradients sum over rows (zeros when there are none).
    #[allow(clippy::too_many_arguments)]
    fn layer_norm_backward(&self, spec: &LayerNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()>;

    /// Batch norm forward. In training, the batch mean and `1/sqrt(var +
    /// eps)` go to `save_mean`/`save_invstd` and normalise, and the running
    /// statistics (when given) move towards the batch mean and unbiased
    /// variance by `momentum`; `strided_mean` is the mean PyTorch's strided
    /// path takes with `at::mean` (only then). In evaluation the running
    /// statistics (both given) normalise, and `save_mean`/`save_invstd` get
    /// the running mean and the `1/sqrt(var + eps)` of PyTorch's backward.
    /// The running statistics are 1-d operands of `spec.stats_dtype`, any
    /// stride, read and (in training) written in place.
    #[allow(clippy::too_many_arguments)]
    fn batch_norm(
        &self,
        spec: &BatchNormSpec,
        dtype: DType,
        x: Src,
        weight: Option<Src>,
        bias: Option<Src>,
        running_mean: Option<Dst>,
        running_var: Option<Dst>,
        strided_mean: Option<Src>,
        out: Dst,
        save_mean: Dst,
        save_invstd: Dst,
    ) -> Result<()>;

    /// Batch norm backward from the forward's `save_mean`/`save_invstd`;
    /// `grad_sum` is the per-channel `Σ grad` PyTorch's strided path takes
    /// with `at::sum` (only for inputs or gradients that were not contiguous).
    #[allow(clippy::too_many_arguments)]
    fn batch_norm_backward(
        &self,
        spec: &BatchNormSpec,
        dtype: DType,
        grad: Src,
        x: Src,
        mean: Src,
        invstd: Src,
        weight: Option<Src>,
        grad_sum: Option<Src>,
        grads: NormGrads,
    ) -> Result<()>;

    /// Group norm forward: the output and per-(sample, group) `mean` and
    /// `rstd`, rounded to `spec.stats_dtype`.
    #[allow(clippy::too_many_arguments)]
    fn group_norm(&self, spec: &GroupNormSpec, dtype: DType, x: Src, weight: Option<Src>, bias: Option<Src>, out: Dst, mean: Dst, rstd: Dst) -> Result<()>;

    /// Group norm backward from the forward's `mean` and `rstd`.
    #[allow(clippy::too_many_arguments)]
    fn group_norm_backward(&self, spec: &GroupNormSpec, dtype: DType, grad: Src, x: Src, mean: Src, rstd: Src, weight: Option<Src>, grads: NormGrads) -> Result<()>;

    /// Mean and biased variance of each row of `x` (float32 or float64, as
    /// `dtype`) into `mean` and `var` (one per row, same dtype).
    fn row_moments(&self, spec: &MomentsSpec, dtype: DType, x: Src, mean: Dst, var: Dst) -> Result<()>;
}

impl NormKernels for Meta {
    fn layer_norm(&self, _spec: &LayerNormSpec, _dtype: DType, _x: Src, _weight: Option<Src>, _bias: Option<Src>, _out: Dst, _mean: Dst, _rstd: Dst) -> Result<()> {
        Ok(())
    }
    fn layer_norm_backward(&self, _spec: &LayerNormSpec, _dtype: DType, _grad: Src, _x: Src, _mean: Src, _rstd: Src, _weight: Option<Src>, _grads: NormGrads) -> Result<()> {
        Ok(())
    }
    fn batch_norm(
        &self,
        _spec: &BatchNormSpec,
        _dtype: DType,
        _x: Src,
        _weight: Option<Src>,
        _bias: Option<Src>,
        _running_mean: Option<Dst>,
        _running_var: Option<Dst>,
        _strided_mean: Option<Src>,
        _out: Dst,
        _save_mean: Dst,
        _save_invstd: Dst,
    ) -> Result<()> {
        Ok(())
    }
    fn batch_norm_backward(
        &self,
        _spec: &BatchNormSpec,
        _dtype: DType,
        _grad: Src,
        _x: Src,
        _mean: Src,
        _invstd: Src,
        _weight: Option<Src>,
        _grad_sum: Option<Src>,
        _grads: NormGrads,
    ) -> Result<()> {
        Ok(())
    }
    fn group_norm(&self, _spec: &GroupNormSpec, _dtype: DType, _x: Src, _weight: Option<Src>, _bias: Option<Src>, _out: Dst, _mean: Dst, _rstd: Dst) -> Result<()> {
        Ok(())
    }
    fn group_norm_backward(&self, _spec: &GroupNormSpec, _dtype: DType, _grad: Src, _x: Src, _mean: Src, _rstd: Src, _weight: Option<Src>, _grads: NormGrads) -> Result<()> {
        Ok(())
    }
    fn row_moments(&self, _spec: &MomentsSpec, _dtype: DType, _x: Src, _mean: Dst, _var: Dst) -> Result<()> {
        Ok(())
    }
}
