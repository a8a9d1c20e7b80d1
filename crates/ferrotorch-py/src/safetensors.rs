//! Bindings of `ferrotorch::io::safetensors` for `ferrotorch.utils.safetensors`.

use std::collections::HashMap;

use ferrotorch::io::safetensors as st;
use ferrotorch::Tensor;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap};

fn named(items: &Bound<'_, PyList>) -> PyResult<Vec<(String, Tensor)>> {
    items
        .iter()
        .map(|pair| {
            let (name, t): (String, Bound<'_, PyAny>) = pair.extract()?;
            Ok((name, tensor_of(&t)?))
        })
        .collect()
}

fn to_list<'py>(py: Python<'py>, tensors: st::NamedTensors) -> PyResult<Bound<'py, PyList>> {
    let items = tensors
        .into_iter()
        .map(|(n, t)| Ok(PyTuple::new(py, [n.into_pyobject(py)?.into_any(), wrap(py, t)?])?))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `(name, tensor)` pairs and optional string metadata to safetensors bytes.
#[pyfunction]
#[pyo3(signature = (items, metadata=None))]
fn _safetensors_serialize<'py>(py: Python<'py>, items: &Bound<'py, PyList>, metadata: Option<HashMap<String, String>>) -> PyResult<Bound<'py, PyBytes>> {
    let tensors = named(items)?;
    let bytes = py.detach(|| st::serialize(&tensors, metadata)).py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// Writes `(name, tensor)` pairs to a safetensors file.
#[pyfunction]
#[pyo3(signature = (items, path, metadata=None))]
fn _safetensors_save_file(py: Python<'_>, items: &Bound<'_, PyList>, path: std::path::PathBuf, metadata: Option<HashMap<String, String>>) -> PyResult<()> {
    let tensors = named(items)?;
    py.detach(|| st::save_file(&tensors, metadata, &path)).py()
}

/// The `(name, tensor)` pairs of safetensors bytes.
#[pyfunction]
fn _safetensors_deserialize<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
    let tensors = py.detach(|| st::deserialize(data)).py()?;
    to_list(py, tensors)
}

/// The `(name, tensor)` pairs of a safetensors file (memory-mapped while read).
#[pyfunction]
fn _safetensors_load_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bound<'_, PyList>> {
    let tensors = py.detach(|| st::load_file(&path)).py()?;
    to_list(py, tensors)
}

/// The `__metadata__` strings of a safetensors file.
#[pyfunction]
fn _safetensors_file_metadata(path: std::path::PathBuf) -> PyResult<HashMap<String, String>> {
    st::load_file_metadata(&path).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_safetensors_serialize, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_save_file, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_deserialize, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_load_file, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_file_metadata, m)?)?;
    Ok(())
}
