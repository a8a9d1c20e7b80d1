//! The CPU's fused recurrent cells ([`crate::rnn`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::rnn as k;
use crate::{Dst, Src};
use ferrotorch_core::backend::RnnKernels;
use ferrotorch_core::{DType, Error, Result};

const WHAT: &str = "recurrent cell";

/// `(batch, hidden)` of a state operand.
fn dims(state: &ferrotorch_core::Layout) -> Result<(usize, usize)> {
    match state.shape[..] {
        [b, h] => Ok((b, h)),
        _ => Err(Error::runtime("recurrent cell: the state must be (batch, hidden)")),
    }
}

/// Runs `$body` with `$T` the float type of `$dtype` (the cells' kernels
/// exist for float32 and float64).
macro_rules! float_kernel {
    ($dtype:expr, $T:ident => $body:expr) => {{
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            other => return Err(Error::runtime(format!("recurrent cell: no CPU kernel for {other:?}"))),
        }
        Ok(())
    }};
}

// SAFETY (every `unsafe` below): the op layer passes live contiguous
// operands of `dtype` with the shapes of the module docs of
// `ferrotorch_core::backend::RnnKernels`; the outputs are fresh and alias
// no input.
impl RnnKernels for Cpu {
    fn lstm_cell(&self, dtype: DType, igates: Src, hgates: Src, cx: Src, hy: Dst, cy: Dst, workspace: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("lstm_cell", dtype));
        }
        let (batch, hidden) = dims(hy.layout)?;
        float_kernel!(dtype, T => unsafe {
            k::lstm_forward::<T>(
                elems(WHAT, igates)?,
                elems(WHAT, hgates)?,
                elems(WHAT, cx)?,
                elems_mut(WHAT, hy)?,
                elems_mut(WHAT, cy)?,
                elems_mut(WHAT, workspace)?,
                batch,
                hidden,
            )
        })
    }

    fn lstm_cell_backward(&self, dtype: DType, workspace: Src, cx: Src, cy: Src, dhy: Option<Src>, dcy: Option<Src>, dgates: Dst, dcx: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("lstm_cell_backward", dtype));
        }
        let (batch, hidden) = dims(dcx.layout)?;
        float_kernel!(dtype, T => unsafe {
            k::lstm_backward::<T>(
                elems(WHAT, workspace)?,
                elems(WHAT, cx)?,
                elems(WHAT, cy)?,
                dhy.map(|s| elems(WHAT, s)).transpose()?,
                dcy.map(|s| elems(WHAT, s)).transpose()?,
                elems_mut(WHAT, dgates)?,
                elems_mut(WHAT, dcx)?,
                batch,
                hidden,
            )
        })
    }

    fn gru_cell(&self, dtype: DType, igates: Src, hgates: Src, hx: Src, hy: Dst, workspace: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("gru_cell", dtype));
        }
        let (batch, hidden) = dims(hy.layout)?;
        float_kernel!(dtype, T => unsafe {
            k::gru_forward::<T>(
                elems(WHAT, igates)?,
                elems(WHAT, hgates)?,
                elems(WHAT, hx)?,
                elems_mut(WHAT, hy)?,
                elems_mut(WHAT, workspace)?,
                batch,
                hidden,
            )
        })
    }

    fn gru_cell_backward(&self, dtype: DType, workspace: Src, hx: Src, dhy: Src, digates: Dst, dhgates: Dst, dhx: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("gru_cell_backward", dtype));
        }
        let (batch, hidden) = dims(dhx.layout)?;
        float_kernel!(dtype, T => unsafe {
            k::gru_backward::<T>(
                elems(WHAT, workspace)?,
                elems(WHAT, hx)?,
                elems(WHAT, dhy)?,
                elems_mut(WHAT, digates)?,
                elems_mut(WHAT, dhgates)?,
                elems_mut(WHAT, dhx)?,
                batch,
                hidden,
            )
        })
    }
}
