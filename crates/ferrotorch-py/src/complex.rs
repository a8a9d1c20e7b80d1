//! Bindings of the complex-tensor ops (`view_as_real`, `view_as_complex`,
//! `real`, `imag`, `conj`, `complex`, `polar`); the PyTorch-shaped surface is
//! `ferrotorch/_complex.py`.

use crate::errors::IntoPyResult;
use crate::tensor::{wrap, PyTensor};
use ferrotorch::Tensor;
use pyo3::prelude::*;

/// `torch.view_as_real(input)`.
#[pyfunction]
fn _view_as_real<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.view_as_real().py()?)
}

/// `torch.view_as_complex(input)`.
#[pyfunction]
fn _view_as_complex<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.view_as_complex().py()?)
}

/// `input.real`.
#[pyfunction]
fn _real<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.real().py()?)
}

/// `input.imag`.
#[pyfunction]
fn _imag<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.imag().py()?)
}

/// `input.conj()` (`physical`: `conj_physical()`).
#[pyfunction]
fn _conj<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>, physical: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.conj_with(physical).py()?)
}

/// `torch.is_conj(input)`.
#[pyfunction]
fn _is_conj(input: PyRef<'_, PyTensor>) -> bool {
    input.t.is_conj()
}

/// `torch.resolve_conj(input)`.
#[pyfunction]
fn _resolve_conj<'py>(py: Python<'py>, input: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, input.t.resolve_conj().py()?)
}

/// `torch.complex(real, imag)`.
#[pyfunction]
fn _complex<'py>(py: Python<'py>, real: PyRef<'py, PyTensor>, imag: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::complex(&real.t, &imag.t).py()?)
}

/// `torch.polar(abs, angle)`.
#[pyfunction]
fn _polar<'py>(py: Python<'py>, abs: PyRef<'py, PyTensor>, angle: PyRef<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::polar(&abs.t, &angle.t).py()?)
}

/// Adds the complex-op bindings to `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_view_as_real, m)?)?;
    m.add_function(wrap_pyfunction!(_view_as_complex, m)?)?;
    m.add_function(wrap_pyfunction!(_real, m)?)?;
    m.add_function(wrap_pyfunction!(_imag, m)?)?;
    m.add_function(wrap_pyfunction!(_conj, m)?)?;
    m.add_function(wrap_pyfunction!(_is_conj, m)?)?;
    m.add_function(wrap_pyfunction!(_resolve_conj, m)?)?;
    m.add_function(wrap_pyfunction!(_complex, m)?)?;
    m.add_function(wrap_pyfunction!(_polar, m)?)?;
    Ok(())
}
