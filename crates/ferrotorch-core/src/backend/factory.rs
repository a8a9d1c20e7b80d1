//! Filling factories: ranges and random draws written straight into a
//! fresh tensor on the device.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::factory::{Distribution, Sequence};
use crate::random::Generator;

/// The factory kernels of a device.
pub trait FactoryKernels {
    /// `out[i] = seq(i)` over the fresh 1-d contiguous `out` of `dtype`.
    fn sequence(&self, seq: Sequence, dtype: DType, out: Dst) -> Result<()>;

    /// Fills the fresh contiguous `out` of `dtype` with draws of `dist` from
    /// `gen`, in row-major order. The per-element parameters come in
    /// `params` (each of `out`'s shape and dtype): [`Distribution::Poisson`]
    /// reads its rates from `params[0]` and raises PyTorch's error for a
    /// negative or NaN rate before drawing anything;
    /// [`Distribution::Binomial`] its counts from `params[0]` and
    /// probabilities from `params[1]`. The other distributions take none.
    fn random(&self, dist: Distribution, gen: &mut Generator, dtype: DType, out: Dst, params: &[Src]) -> Result<()>;
}

impl FactoryKernels for Meta {
    fn sequence(&self, _seq: Sequence, _dtype: DType, _out: Dst) -> Result<()> {
        Ok(())
    }
    fn random(&self, _dist: Distribution, _gen: &mut Generator, _dtype: DType, _out: Dst, _params: &[Src]) -> Result<()> {
        Ok(())
    }
}
