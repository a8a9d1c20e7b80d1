//! Bindings of the Fourier transforms (`_C._fft`, and PyTorch's primitives
//! `_C._fft_c2c`, `_C._fft_r2c`, `_C._fft_c2r`); `ferrotorch.fft` makes
//! PyTorch's functions of them.

use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap};
use ferrotorch::ops::fft::{FftFn, FftRank};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn parse_fn(name: &str) -> PyResult<(FftFn, FftRank)> {
    let (base, rank) = if let Some(b) = name.strip_suffix('2') {
        (b, FftRank::Two)
    } else if let Some(b) = name.strip_suffix('n') {
        (b, FftRank::N)
    } else {
        (name, FftRank::One)
    };
    let f = match base {
        "fft" => FftFn::Fft,
        "ifft" => FftFn::Ifft,
        "rfft" => FftFn::Rfft,
        "irfft" => FftFn::Irfft,
        "hfft" => FftFn::Hfft,
        "ihfft" => FftFn::Ihfft,
        _ => return Err(PyValueError::new_err(format!("unknown fft function {name}"))),
    };
    Ok((f, rank))
}

/// `torch.fft.<name>(input, s, dim, norm)` where `name` is one of the 18
/// transforms (`fft`, `rfft2`, `ihfftn`, ...); `s` is `[n]` for the 1-D
/// forms, `dim` one dim there.
#[pyfunction]
#[pyo3(signature = (name, input, s=None, dim=None, norm=None))]
pub fn _fft<'py>(py: Python<'py>, name: &str, input: &Bound<'py, PyAny>, s: Option<Vec<i64>>, dim: Option<Vec<i64>>, norm: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    let (f, rank) = parse_fn(name)?;
    let x = tensor_of(input)?;
    wrap(py, x.fft_fn(f, rank, s.as_deref(), dim.as_deref(), norm).py()?)
}

/// `torch._fft_c2c(input, dim, scale, forward)` (the scale in place of PyTorch's normalization code).
#[pyfunction]
pub fn _fft_c2c<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Vec<usize>, scale: f64, forward: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.fft_c2c(&dim, scale, forward).py()?)
}

/// `torch._fft_r2c(input, dim, scale, onesided)`.
#[pyfunction]
pub fn _fft_r2c<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Vec<usize>, scale: f64, onesided: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.fft_r2c(&dim, scale, onesided).py()?)
}

/// `torch._fft_c2r(input, dim, scale, last_dim_size)`.
#[pyfunction]
pub fn _fft_c2r<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Vec<usize>, scale: f64, last_dim_size: usize) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.fft_c2r(&dim, scale, last_dim_size).py()?)
}

/// Adds the bindings to `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_fft, m)?)?;
    m.add_function(wrap_pyfunction!(_fft_c2c, m)?)?;
    m.add_function(wrap_pyfunction!(_fft_r2c, m)?)?;
    m.add_function(wrap_pyfunction!(_fft_c2r, m)?)?;
    Ok(())
}
