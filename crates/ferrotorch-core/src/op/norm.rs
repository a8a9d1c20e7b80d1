//! What a normalisation kernel needs to know besides its operands: the
//! shapes the op layer has validated and PyTorch's scalar arguments.
//!
//! Every normalisation computes in an *opmath* dtype of its input dtype
//! ([`norm_compute_dtype`]): statistics, parameters and parameter gradients
//! cross the seam in it, the input, output and input gradient in the input's
//! dtype.

use crate::dtype::DType;

/// The dtype a normalisation of a `dtype` input computes in, and in which
/// its statistics and parameters reach the kernels: float64 for float64,
/// float32 for the other floating dtypes (PyTorch's opmath type).
pub fn norm_compute_dtype(dtype: DType) -> DType {
    if dtype == DType::Float64 {
        DType::Float64
    } else {
        DType::Float32
    }
}

/// The `(N, C, S)` view of a contiguous batch-norm or group-norm input:
/// batch size, channels and the product of the spatial sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ncs {
    /// Batch size (dim 0).
    pub n: usize,
    /// Channels (dim 1).
    pub c: usize,
    /// Product of the remaining dims.
    pub s: usize,
}

impl Ncs {
    /// The view of a shape of at least 2 dims.
    pub fn of(shape: &[usize]) -> Ncs {
        Ncs { n: shape.first().copied().unwrap_or(1), c: shape.get(1).copied().unwrap_or(1), s: shape.iter().skip(2).product() }
    }

    /// Elements per channel.
    pub fn per_channel(&self) -> usize {
        self.n * self.s
    }
}

/// A layer norm: `rows` contiguous rows of `n` elements, each normalised on
/// its own. Parameters (weight, bias, and their gradients) hold `n` values;
/// `mean` and `rstd` one per row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerNormSpec {
    /// Number of rows (product of the leading dims).
    pub rows: usize,
    /// Row length (product of `normalized_shape`).
    pub n: usize,
    /// Added to the variance before the square root.
    pub eps: f64,
}

/// A batch norm over the channels of an `(N, C, S)` input. Per-channel
/// operands (weight, bias, statistics, gradients of the parameters) hold
/// `C` values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchNormSpec {
    /// The input's shape.
    pub shape: Ncs,
    /// Batch statistics normalise (and update the running statistics) when
    /// set; the running statistics normalise otherwise.
    pub training: bool,
    /// Weight of the batch statistics in the running-statistics update.
    pub momentum: f64,
    /// Added to the variance before the square root.
    pub eps: f64,
    /// The caller's input was not contiguous: PyTorch then takes another
    /// path (the mean from `at::mean`, the output by `TensorIterator`), whose
    /// roundings the kernels reproduce; the operands themselves are always
    /// contiguous.
    pub strided: bool,
    /// The dtype the statistics are stored in (the parameters' dtype, which
    /// is the input's or float32), and so rounded to before they are used.
    pub stats_dtype: DType,
}

/// A group norm: each of the `N` samples of an `(N, C, S)` input splits its
/// channels into `groups` groups of `C / groups` consecutive channels, each
/// normalised over its channels and spatial positions. Weight, bias and
/// their gradients hold `C` values; `mean` and `rstd` `N * groups`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupNormSpec {
    /// The input's shape.
    pub shape: Ncs,
    /// Number of groups (divides `C`).
    pub groups: usize,
    /// Added to the variance before the square root.
    pub eps: f64,
    /// The dtype the statistics are stored in (the parameters' dtype, which
    /// is the input's or float32), and so rounded to before they are used.
    pub stats_dtype: DType,
}

/// Row-wise mean and biased variance of `rows` contiguous rows of `n`
/// float32 or float64 values, in the evaluation order of PyTorch's CPU
/// `RowwiseMoments`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MomentsSpec {
    /// Number of rows.
    pub rows: usize,
    /// Row length.
    pub n: usize,
    /// The float32 values were float16/bfloat16 (widened by the caller),
    /// which changes the kernel's lane layout.
    pub reduced: bool,
}
