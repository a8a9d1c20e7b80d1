//! Conversions between Python data and tensors: nested lists, scalars, NumPy
//! arrays and other tensors in; Python lists and scalars out; `to()`.

use crate::args::{number_of, type_name};
use crate::errors::IntoPyResult;
use crate::tensor::{wrap, PyTensor};
use ferrotorch::{defaults::default_dtype, dispatch_dtype, DType, Device, Element, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyList, PySequence, PyString, PyTuple};

static SIZE_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A `ferrotorch.Size` (tuple subclass defined in Python) for `shape`.
pub fn size_obj<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let cls = SIZE_TYPE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("ferrotorch._size")?.getattr("Size")?.unbind())
    })?;
    cls.bind(py).call1((PyTuple::new(py, shape)?,))
}

/// A Python scalar for an engine scalar.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Bound<'_, PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => PyFloat::new(py, f).into_any(),
    })
}

/// `tensor.tolist()`: nested lists of Python scalars (a scalar for 0-d).
pub fn tolist<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let c = t.contiguous().py()?;
    let dtype = c.dtype();
    let leaf = |i: usize| -> PyResult<Bound<'py, PyAny>> {
        dispatch_dtype!(dtype, T => {
            // SAFETY: c is contiguous and i < numel.
            let v: T = unsafe { *(c.data_ptr() as *const T).add(i) };
            if dtype.is_floating_point() {
                Ok(PyFloat::new(py, v.to_f64()).into_any())
            } else if dtype == DType::Bool {
                Ok(PyBool::new(py, v.to_i64() != 0).to_owned().into_any())
            } else {
                Ok(v.to_i64().into_pyobject(py)?.into_any())
            }
        })
    };
    fn build<'py>(py: Python<'py>, shape: &[usize], start: usize, leaf: &dyn Fn(usize) -> PyResult<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        if shape.is_empty() {
            return leaf(start);
        }
        let inner: usize = shape[1..].iter().product();
        let items = (0..shape[0]).map(|i| build(py, &shape[1..], start + i * inner, leaf)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any())
    }
    build(py, c.shape(), 0, &leaf)
}

/// Walks nested sequences, recording the shape and flattening the leaves.
/// `leaf_dtype` accumulates PyTorch's inference over the leaves: the
/// promotion of each leaf's type (Python bool → bool, int → int64, float →
/// the default dtype; NumPy scalars and one-element tensors → their dtype).
fn flatten_data(obj: &Bound<'_, PyAny>, depth: usize, shape: &mut Vec<usize>, out: &mut Vec<Scalar>, leaf_dtype: &mut Option<DType>) -> PyResult<()> {
    if let Some(s) = number_of(obj) {
        let d = numpy_scalar_dtype(obj).unwrap_or_else(|| s.inferred_dtype(default_dtype()));
        *leaf_dtype = Some(leaf_dtype.map_or(d, |cur| DType::promote(cur, d)));
        if depth < shape.len() {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {} (got {})",
                shape[depth],
                depth,
                type_name(obj)
            )));
        }
        if depth > shape.len() {
            return Err(PyValueError::new_err("ragged nested sequence"));
        }
        out.push(s);
        return Ok(());
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().t;
        if t.numel() != 1 || t.ndim() != 0 {
            if t.numel() != 1 {
                return Err(PyValueError::new_err("only one element tensors can be converted to Python scalars"));
            }
        }
        *leaf_dtype = Some(leaf_dtype.map_or(t.dtype(), |cur| DType::promote(cur, t.dtype())));
        out.push(t.item().py()?);
        return Ok(());
    }
    if obj.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(format!("new(): invalid data type '{}'", type_name(obj))));
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!("new(): invalid data type '{}'", type_name(obj)))
    })?;
    let n = seq.len()?;
    if depth == shape.len() {
        if !out.is_empty() {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {} (got {})",
                0, depth.saturating_sub(1), n
            )));
        }
        shape.push(n);
    } else if shape[depth] != n {
        return Err(PyValueError::new_err(format!(
            "expected sequence of length {} at dim {} (got {})",
            shape[depth], depth, n
        )));
    }
    for item in seq.try_iter()? {
        flatten_data(&item?, depth + 1, shape, out, leaf_dtype)?;
    }
    if n == 0 && depth + 1 < shape.len() {
        return Err(PyValueError::new_err("ragged nested sequence"));
    }
    Ok(())
}

/// `torch.tensor(data, dtype=..., device=...)`: always copies.
pub fn tensor_from_data(py: Python<'_>, data: &Bound<'_, PyAny>, dtype: Option<DType>, device: Option<Device>) -> PyResult<Tensor> {
    if let Some(dev) = device {
        crate::functions::check_device(dev)?;
    }
    if let Ok(t) = data.cast::<PyTensor>() {
        let t = &t.get().t;
        return t.clone_as(dtype.unwrap_or(t.dtype())).py();
    }
    if crate::numpy::is_ndarray(py, data)? {
        let t = crate::numpy::from_numpy(py, data)?;
        return t.clone_as(dtype.unwrap_or(t.dtype())).py();
    }
    let mut shape = Vec::new();
    let mut flat = Vec::new();
    let mut tdt = None;
    flatten_data(data, 0, &mut shape, &mut flat, &mut tdt)?;
    let inferred = infer_dtype(&flat, tdt);
    let target = dtype.unwrap_or(inferred);
    let t = Tensor::empty(&shape, target, Device::CPU).py()?;
    dispatch_dtype!(target, T => {
        let p = t.data_ptr_mut() as *mut T;
        for (i, s) in flat.iter().enumerate() {
            // SAFETY: t has exactly flat.len() contiguous elements.
            unsafe { *p.add(i) = ferrotorch_cpu::copy::scalar_to::<T>(*s) };
        }
    });
    Ok(t)
}

/// The dtype of a NumPy scalar (`np.float64(1.5)`), which PyTorch keeps.
fn numpy_scalar_dtype(obj: &Bound<'_, PyAny>) -> Option<DType> {
    if crate::args::scalar_of(obj).is_some() && !obj.hasattr("dtype").unwrap_or(false) {
        return None;
    }
    let module: String = obj.get_type().getattr("__module__").and_then(|m| m.extract()).ok()?;
    if module != "numpy" {
        return None;
    }
    let name: String = obj.getattr("dtype").ok()?.str().ok()?.extract().ok()?;
    DType::from_name(&name).ok()
}

/// PyTorch's inference: the promotion of the leaves' types; empty data is of
/// the default dtype.
fn infer_dtype(flat: &[Scalar], leaf_dtype: Option<DType>) -> DType {
    let _ = flat;
    leaf_dtype.unwrap_or_else(default_dtype)
}

/// Shared body of `to`, `type`, `float()`...: returns `self` when nothing changes.
pub fn to_impl<'py>(slf: &Bound<'py, PyTensor>, dtype: Option<DType>, device: Option<Device>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
    let t = &slf.get().t;
    if let Some(dev) = device {
        if dev.kind != t.device().kind {
            crate::functions::check_device(dev)?;
        }
    }
    let dt = dtype.unwrap_or(t.dtype());
    if dt == t.dtype() && !copy {
        return Ok(slf.clone().into_any());
    }
    let r = t.clone_as(dt).py()?;
    wrap(slf.py(), r)
}

/// `view(dtype)`: reinterpret the bytes (same element size only, for now).
pub fn view_dtype(t: &Tensor, d: DType) -> PyResult<Tensor> {
    if d == t.dtype() {
        return Ok(t.detach());
    }
    if d.itemsize() != t.dtype().itemsize() {
        return Err(PyRuntimeError::new_err(format!(
            "view(dtype): viewing a tensor as a dtype with a different element size ({} -> {}) is not supported yet",
            t.dtype(), d
        )));
    }
    Tensor::from_parts(t.storage().clone(), t.layout().clone(), d).py()
}

/// The legacy type string, e.g. `torch.FloatTensor`.
pub fn legacy_type_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "torch.BoolTensor",
        DType::UInt8 => "torch.ByteTensor",
        DType::Int8 => "torch.CharTensor",
        DType::Int16 => "torch.ShortTensor",
        DType::Int32 => "torch.IntTensor",
        DType::Int64 => "torch.LongTensor",
        DType::Float16 => "torch.HalfTensor",
        DType::BFloat16 => "torch.BFloat16Tensor",
        DType::Float32 => "torch.FloatTensor",
        DType::Float64 => "torch.DoubleTensor",
    }
}

/// Parses `'torch.FloatTensor'` (or a dtype name) for `Tensor.type(...)`.
pub fn dtype_from_legacy_name(s: &str) -> PyResult<DType> {
    DType::ALL
        .into_iter()
        .find(|&d| legacy_type_name(d) == s || legacy_type_name(d).trim_start_matches("torch.") == s)
        .map(Ok)
        .unwrap_or_else(|| DType::from_name(s).map_err(|_| PyValueError::new_err(format!("invalid type: '{s}'"))))
}

