//! Discrete Fourier transforms: complex-to-complex, real-to-complex and
//! complex-to-real, batched and over several dims.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::fft::FftSpec;

/// The FFT kernels of a device.
pub trait FftKernels {
    /// `out = spec(x)`. `dtype` is the real precision (float32 or float64);
    /// a complex operand's layout counts complex elements (interleaved
    /// `(re, im)` pairs of `dtype`), a real one's counts `dtype` elements.
    /// `x` may have any strides; `out` is fresh and aliases nothing. The
    /// operands' shapes fit the spec ([`FftSpec::check`]).
    fn fft(&self, spec: &FftSpec, dtype: DType, x: Src, out: Dst) -> Result<()>;
}

impl FftKernels for Meta {
    fn fft(&self, _spec: &FftSpec, _dtype: DType, _x: Src, _out: Dst) -> Result<()> {
        Ok(())
    }
}
