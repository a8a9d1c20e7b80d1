//! Fused recurrent cells: one LSTM or GRU time step's gate nonlinearities
//! and state update, forward and backward, as one kernel each.
//!
//! Shapes: gate pre-activations `(batch, gates * hidden)` (4 gates for the
//! LSTM in PyTorch's order input, forget, cell, output; 3 for the GRU:
//! reset, update, new), states `(batch, hidden)`, and a workspace of
//! `(batch, 4 * hidden)` the forward fills for the backward. Every operand
//! is contiguous, float32 or float64, all of one dtype; `batch` and
//! `hidden` are read from the state operands' layouts.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;

/// The fused recurrent-cell kernels of a device.
pub trait RnnKernels {
    /// LSTM step: `hy`, `cy` and the workspace from the input and hidden
    /// gates and the cell state `cx`.
    #[allow(clippy::too_many_arguments)]
    fn lstm_cell(&self, dtype: DType, igates: Src, hgates: Src, cx: Src, hy: Dst, cy: Dst, workspace: Dst) -> Result<()>;

    /// LSTM step backward: the gates' gradient (shared by both gate inputs)
    /// and `cx`'s, from the workspace, `cx`, `cy` and whichever of the two
    /// output gradients exist.
    #[allow(clippy::too_many_arguments)]
    fn lstm_cell_backward(&self, dtype: DType, workspace: Src, cx: Src, cy: Src, dhy: Option<Src>, dcy: Option<Src>, dgates: Dst, dcx: Dst) -> Result<()>;

    /// GRU step: `hy` and the workspace from the input and hidden gates and
    /// the hidden state `hx`.
    fn gru_cell(&self, dtype: DType, igates: Src, hgates: Src, hx: Src, hy: Dst, workspace: Dst) -> Result<()>;

    /// GRU step backward: the input gates', hidden gates' and `hx`'s
    /// gradients from the workspace, `hx` and `hy`'s gradient.
    #[allow(clippy::too_many_arguments)]
    fn gru_cell_backward(&self, dtype: DType, workspace: Src, hx: Src, dhy: Src, digates: Dst, dhgates: Dst, dhx: Dst) -> Result<()>;
}

impl RnnKernels for Meta {
    fn lstm_cell(&self, _dtype: DType, _igates: Src, _hgates: Src, _cx: Src, _hy: Dst, _cy: Dst, _workspace: Dst) -> Result<()> {
        Ok(())
    }
    fn lstm_cell_backward(&self, _dtype: DType, _workspace: Src, _cx: Src, _cy: Src, _dhy: Option<Src>, _dcy: Option<Src>, _dgates: Dst, _dcx: Dst) -> Result<()> {
        Ok(())
    }
    fn gru_cell(&self, _dtype: DType, _igates: Src, _hgates: Src, _hx: Src, _hy: Dst, _workspace: Dst) -> Result<()> {
        Ok(())
    }
    fn gru_cell_backward(&self, _dtype: DType, _workspace: Src, _hx: Src, _dhy: Src, _digates: Dst, _dhgates: Dst, _dhx: Dst) -> Result<()> {
        Ok(())
    }
}
