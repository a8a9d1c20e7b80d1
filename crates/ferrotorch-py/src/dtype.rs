//! `ferrotorch.dtype` objects: one singleton per dtype, so `x.dtype is torch.float32`.

use ferrotorch::DType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyType};

/// A tensor element type, as `torch.dtype`.
#[pyclass(name = "dtype", module = "ferrotorch", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
pub struct PyDType {
    /// The engine dtype.
    pub dt: DType,
}

#[pymethods]
impl PyDType {
    #[getter]
    fn is_floating_point(&self) -> bool {
        self.dt.is_floating_point()
    }
    #[getter]
    fn is_complex(&self) -> bool {
        self.dt.is_complex()
    }
    #[getter]
    fn is_signed(&self) -> bool {
        self.dt.is_signed()
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.dt.itemsize()
    }
    /// The real counterpart of a complex dtype (`complex64` → `float32`); a real dtype itself.
    fn to_real(&self, py: Python<'_>) -> Py<Self> {
        dtype_obj(py, self.dt.to_real())
    }
    /// The complex counterpart of a floating dtype (`float64` → `complex128`).
    fn to_complex(&self, py: Python<'_>) -> PyResult<Py<Self>> {
        match self.dt.to_complex() {
            Some(d) => Ok(dtype_obj(py, d)),
            None if self.dt == DType::Float16 => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "to_complex: complex32 (ComplexHalf) is not supported by ferrotorch",
            )),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "Unknown Complex ScalarType for {}",
                ferrotorch_core::dtype::pretty(self.dt)
            ))),
        }
    }
    fn __repr__(&self) -> String {
        self.dt.to_string()
    }
    fn __str__(&self) -> String {
        self.dt.to_string()
    }
    fn __reduce__(&self) -> String {
        self.dt.name().to_string()
    }
}

static SINGLETONS: PyOnceLock<Vec<Py<PyDType>>> = PyOnceLock::new();

/// The singleton object for `dt`.
pub fn dtype_obj(py: Python<'_>, dt: DType) -> Py<PyDType> {
    let all = SINGLETONS.get_or_init(py, || {
        DType::ALL.iter().map(|&d| Py::new(py, PyDType { dt: d }).expect("allocating dtype singletons")).collect()
    });
    let i = DType::ALL.iter().position(|&d| d == dt).unwrap_or(0);
    all[i].clone_ref(py)
}

/// Accepts a `ferrotorch.dtype` or, as PyTorch does, the Python types
/// `float` (float64), `int` (int64) and `bool`. Anything else, dtype names
/// included, is PyTorch's `TypeError`.
pub fn extract_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().dt);
    }
    if let Ok(t) = obj.cast::<PyType>() {
        let py = obj.py();
        if t.is(py.get_type::<PyFloat>()) {
            return Ok(DType::Float64);
        }
        if t.is(py.get_type::<PyBool>()) {
            return Ok(DType::Bool);
        }
        if t.is(py.get_type::<PyInt>()) {
            return Ok(DType::Int64);
        }
    }
    Err(PyTypeError::new_err(format!(
        "argument 'dtype' must be torch.dtype, not {}",
        obj.get_type().name()?
    )))
}

/// Optional dtype argument.
pub fn opt_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => extract_dtype(o).map(Some),
    }
}

