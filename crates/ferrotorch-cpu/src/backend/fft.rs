//! The CPU's Fourier transforms ([`crate::fft`]) behind the seam.

use super::Cpu;
use crate::{Dst, Src};
use ferrotorch_core::backend::FftKernels;
use ferrotorch_core::op::fft::FftSpec;
use ferrotorch_core::{DType, Result};

impl FftKernels for Cpu {
    fn fft(&self, spec: &FftSpec, dtype: DType, x: Src, out: Dst) -> Result<()> {
        crate::fft::fft(spec, dtype, x, out)
    }
}
