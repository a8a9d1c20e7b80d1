//! Thread-local grad mode as seen from Python (`no_grad`, `set_grad_enabled`).

use pyo3::prelude::*;
use std::cell::Cell;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Is grad mode on for this thread?
pub fn is_enabled() -> bool {
    ENABLED.with(|e| e.get())
}

/// `torch.is_grad_enabled()`.
#[pyfunction]
pub fn is_grad_enabled() -> bool {
    is_enabled()
}

/// `torch._C._set_grad_enabled(mode)`.
#[pyfunction]
pub fn _set_grad_enabled(mode: bool) {
    ENABLED.with(|e| e.set(mode));
}
