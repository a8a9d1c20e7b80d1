//! Pooling kernels: max, average and adaptive poolings in 1 to 3 spatial
//! dims and their backwards (see [`PoolSpec`]).

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::pool::PoolSpec;

/// The pooling kernels of a device.
pub trait PoolKernels {
    /// The pooling `spec` of `x` into `out` (both contiguous `(planes,
    /// *spatial)` of `dtype`, never bool) and, for max poolings when given,
    /// its int64 `indices` (`out`'s shape). A plain max pooling may be
    /// asked for no indices (a forward nothing will differentiate).
    fn pool_forward(&self, spec: &PoolSpec, dtype: DType, x: Src, out: Dst, indices: Option<Dst>) -> Result<()>;

    /// The input gradient `gx` of the pooling `spec` from the output
    /// gradient `g` (both contiguous, of `dtype`) and, for max poolings,
    /// the forward's `indices`.
    fn pool_backward(&self, spec: &PoolSpec, dtype: DType, g: Src, indices: Option<Src>, gx: Dst) -> Result<()>;
}

impl PoolKernels for Meta {
    fn pool_forward(&self, _spec: &PoolSpec, _dtype: DType, _x: Src, _out: Dst, _indices: Option<Dst>) -> Result<()> {
        Ok(())
    }
    fn pool_backward(&self, _spec: &PoolSpec, _dtype: DType, _g: Src, _indices: Option<Src>, _gx: Dst) -> Result<()> {
        Ok(())
    }
}
