//! Grad mode as seen from Python; the state lives in the engine (thread-local).

use pyo3::prelude::*;

/// Is grad mode on for this thread?
pub fn is_enabled() -> bool {
    ferrotorch::autograd::is_grad_enabled()
}

/// `torch.is_grad_enabled()`.
#[pyfunction]
pub fn is_grad_enabled() -> bool {
    is_enabled()
}

/// `torch._C._set_grad_enabled(mode)`.
#[pyfunction]
pub fn _set_grad_enabled(mode: bool) {
    ferrotorch::autograd::set_grad_enabled(mode);
}
