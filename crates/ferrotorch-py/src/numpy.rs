//! Zero-copy exchange with NumPy through the `__array_interface__` protocol:
//! `.numpy()` exports a holder that keeps the tensor alive, `from_numpy`
//! imports an array whose reference keeps its buffer alive.

use crate::errors::IntoPyResult;
use ferrotorch::{DType, Device, Layout, Storage, Tensor};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use std::ptr::NonNull;
use std::sync::Arc;

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY.get_or_try_init(py, || py.import("numpy").map(|m| m.unbind()))?.bind(py))
}

/// Is `obj` a NumPy array? (without importing NumPy when nothing uses it)
pub fn is_ndarray(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = obj.get_type();
    let module: String = ty.getattr("__module__").and_then(|m| m.extract()).unwrap_or_default();
    if module != "numpy" {
        return Ok(false);
    }
    obj.is_instance(&numpy(py)?.getattr("ndarray")?)
}

fn typestr(d: DType) -> PyResult<&'static str> {
    Ok(match d {
        DType::Bool => "|b1",
        DType::UInt8 => "|u1",
        DType::Int8 => "|i1",
        DType::Int16 => "<i2",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Float16 => "<f2",
        DType::Float32 => "<f4",
        DType::Float64 => "<f8",
        DType::Complex64 => "<c8",
        DType::Complex128 => "<c16",
        DType::BFloat16 => return Err(PyTypeError::new_err("Got unsupported ScalarType BFloat16")),
    })
}

fn dtype_of_typestr(s: &str) -> Option<DType> {
    let body = s.trim_start_matches(['<', '|', '=']);
    Some(match body {
        "b1" => DType::Bool,
        "u1" => DType::UInt8,
        "i1" => DType::Int8,
        "i2" => DType::Int16,
        "i4" => DType::Int32,
        "i8" => DType::Int64,
        "f2" => DType::Float16,
        "f4" => DType::Float32,
        "f8" => DType::Float64,
        "c8" => DType::Complex64,
        "c16" => DType::Complex128,
        _ => return None,
    })
}

/// Keeps a tensor alive for as long as a NumPy array views its memory.
#[pyclass(module = "ferrotorch._C", frozen)]
pub struct ArrayHolder {
    t: Tensor,
}

#[pymethods]
impl ArrayHolder {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.t;
        let d = PyDict::new(py);
        let item = t.dtype().itemsize() as isize;
        d.set_item("shape", PyTuple::new(py, t.shape())?)?;
        // NumPy (and so PyTorch's `.numpy()`) gives arrays without elements zero strides.
        let empty = t.numel() == 0;
        d.set_item("strides", PyTuple::new(py, t.strides().iter().map(|s| if empty { 0 } else { s * item }))?)?;
        d.set_item("typestr", typestr(t.dtype())?)?;
        d.set_item("data", (t.data_ptr() as usize, false))?;
        d.set_item("version", 3)?;
        Ok(d)
    }
}

/// `tensor.numpy()`: an array over the same memory.
pub fn to_numpy<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    if t.is_conj() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.",
        ));
    }
    if !t.device().is_cpu() {
        return Err(PyTypeError::new_err(format!(
            "can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
            t.device()
        )));
    }
    typestr(t.dtype())?;
    let holder = Bound::new(py, ArrayHolder { t: t.clone() })?;
    numpy(py)?.call_method1("asarray", (holder,))
}

/// Owner of imported NumPy memory: the array itself.
struct NumpyOwner(#[allow(dead_code)] Py<PyAny>);

/// `torch.from_numpy(arr)`: a tensor over the array's memory.
pub fn from_numpy(py: Python<'_>, arr: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if !is_ndarray(py, arr)? {
        return Err(PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            crate::args::type_name(arr)
        )));
    }
    let iface = arr.getattr("__array_interface__")?;
    let ts: String = iface.get_item("typestr")?.extract()?;
    if ts.starts_with('>') && !ts.ends_with('1') {
        return Err(PyValueError::new_err("given numpy array has byte order different from the native byte order. Conversion between byte orders is currently not supported."));
    }
    let dtype = dtype_of_typestr(&ts).ok_or_else(|| {
        let name: String = arr
            .getattr("dtype")
            .and_then(|d| d.getattr("type"))
            .and_then(|t| t.getattr("__name__"))
            .and_then(|n| n.extract())
            .unwrap_or(ts.clone());
        PyTypeError::new_err(format!(
            "can't convert np.ndarray of type numpy.{name}. The only supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ))
    })?;
    let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
    let (ptr, readonly): (usize, bool) = iface.get_item("data")?.extract()?;
    if readonly {
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            c"The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means writing to this tensor will result in undefined behavior. You may want to copy the array to protect its data or make it writable before converting it to a tensor.",
            1,
        )?;
    }
    let item = dtype.itemsize() as isize;
    // The array's own strides (the interface reports None for C order, but
    // NumPy's actual strides can differ there, e.g. 0 for empty arrays, and
    // PyTorch keeps them).
    let byte_strides: Vec<isize> = arr.getattr("strides")?.extract()?;
    if byte_strides.iter().any(|&s| s < 0) {
        return Err(PyValueError::new_err(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) ",
        ));
    }
    if byte_strides.iter().any(|&s| s % item != 0) {
        return Err(PyValueError::new_err(
            "given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.",
        ));
    }
    let strides: smallvec::SmallVec<[isize; 6]> = byte_strides.iter().map(|s| s / item).collect();
    let layout = Layout { shape: shape.iter().copied().collect(), strides, offset: 0 };
    let nbytes = layout.storage_span().map(|(_, hi)| hi * item as usize).unwrap_or(0);
    let base = NonNull::new(ptr as *mut u8).unwrap_or(NonNull::dangling());
    // SAFETY: NumPy guarantees `ptr` addresses every element the shape and
    // (non-negative) strides describe, i.e. `nbytes` bytes from `ptr`, for as
    // long as the array lives; the owner keeps a reference to it.
    let storage = unsafe { Storage::from_foreign(base, nbytes, Device::CPU, Box::new(NumpyOwner(arr.clone().unbind()))) };
    Tensor::from_parts(Arc::new(storage), layout, dtype).py()
}
