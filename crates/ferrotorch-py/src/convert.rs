//! Conversions between Python data and tensors: nested lists, scalars, NumPy
//! arrays and other tensors in; Python lists and scalars out; `to()`.

use crate::args::{number_of, type_name};
use crate::errors::IntoPyResult;
use crate::tensor::{wrap, PyTensor};
use ferrotorch::{defaults::default_dtype, dispatch_dtype, DType, Device, Element, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple};

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
        Scalar::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any(),
    })
}

/// `tensor.tolist()`: nested lists of Python scalars (a scalar for 0-d).
pub fn tolist<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    t.check_has_data().py()?;
    let c = t.contiguous().py()?;
    let dtype = c.dtype();
    let leaf = |i: usize| -> PyResult<Bound<'py, PyAny>> {
        if dtype.is_complex() {
            return scalar_to_py(py, c.get_flat(i).py()?);
        }
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

/// Is `obj` a nested-data sequence (a list, tuple, range, ndarray...)? Strings,
/// bytes and tensors are not, as in PyTorch.
fn as_data_seq<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PySequence>> {
    if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() || obj.cast::<PyTensor>().is_ok() {
        return None;
    }
    obj.cast::<PySequence>().ok()
}

/// PyTorch's `infer_scalar_type`: Python bool → bool, int → int64, float →
/// the default dtype; tensors, arrays and NumPy scalars keep their dtype;
/// sequences promote over their items (an empty one counts as the default dtype).
fn infer_scalar_type(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    // Exact builtins first: the common case, and cheaper than the NumPy
    // scalar probe (whose float/int subclasses must not match here).
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(default_dtype());
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(DType::Bool);
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(DType::Int64);
    }
    if let Some(d) = numpy_scalar_dtype(obj) {
        return Ok(d);
    }
    if obj.cast::<PyBool>().is_ok() {
        return Ok(DType::Bool);
    }
    if obj.cast::<PyInt>().is_ok() {
        return Ok(DType::Int64);
    }
    if obj.cast::<PyFloat>().is_ok() {
        return Ok(default_dtype());
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(t.get().t.dtype());
    }
    if obj.cast::<PyComplex>().is_ok() {
        return Ok(default_dtype().to_complex().unwrap_or(DType::Complex64));
    }
    if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(format!("new(): invalid data type '{}'", type_name(obj))));
    }
    if crate::numpy::is_ndarray(py, obj)? {
        return Ok(crate::numpy::from_numpy(py, obj)?.dtype());
    }
    if let Some(seq) = as_data_seq(obj) {
        if seq.len()? == 0 {
            return Ok(default_dtype());
        }
        let mut acc: Option<DType> = None;
        for item in seq.try_iter()? {
            let d = infer_scalar_type(py, &item?)?;
            acc = Some(acc.map_or(d, |a| DType::promote(a, d)));
        }
        return Ok(acc.unwrap_or_else(default_dtype));
    }
    if number_of(obj).is_some() {
        return Ok(default_dtype());
    }
    Err(PyRuntimeError::new_err(format!("Could not infer dtype of {}", type_name(obj))))
}

/// PyTorch's `compute_sizes`: the shape follows the first element of each level.
fn compute_sizes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let mut sizes = Vec::new();
    let mut cur = obj.clone();
    while let Some(seq) = as_data_seq(&cur) {
        let n = seq.len()?;
        sizes.push(n);
        if sizes.len() > 64 {
            return Err(PyValueError::new_err(format!("too many dimensions '{}'", type_name(&cur))));
        }
        if n == 0 {
            break;
        }
        cur = seq.get_item(0)?;
    }
    Ok(sizes)
}

/// One leaf value, with PyTorch's errors for what is not a number.
fn leaf_scalar(obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Scalar> {
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Ok(Scalar::Float(f.value()));
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().t;
        if t.numel() != 1 {
            return Err(PyValueError::new_err("only one element tensors can be converted to Python scalars"));
        }
        return t.item().py();
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if obj.cast::<PyBool>().is_err() && i.extract::<i64>().is_err() {
            return Err(PyValueError::new_err("Overflow when unpacking long long"));
        }
    }
    if let Some(s) = number_of(obj) {
        return Ok(s);
    }
    if obj.hasattr("dtype").unwrap_or(false) && obj.getattr("ndim").and_then(|n| n.extract::<usize>()).ok() == Some(0) {
        if let Some(s) = obj.call_method0("item").ok().and_then(|v| number_of(&v)) {
            return Ok(s);
        }
    }
    Err(PyTypeError::new_err(if dtype.is_floating_point() {
        format!("must be real number, not {}", type_name(obj))
    } else {
        format!("'{}' object cannot be interpreted as an integer", type_name(obj))
    }))
}

/// PyTorch's `recursive_store`: walks `obj` along `sizes`, appending the leaves
/// in row-major order to `out`.
fn store(obj: &Bound<'_, PyAny>, dim: usize, sizes: &[usize], dtype: DType, out: &mut Vec<Scalar>) -> PyResult<()> {
    if dim == sizes.len() {
        let s = leaf_scalar(obj, dtype)?;
        if dtype.is_integral() {
            // Integers must fit (uint8 wraps from -255..=255, like PyTorch).
            ferrotorch_core::dtype::check_scalar_fits(s, dtype, 2).map_err(|_| {
                PyRuntimeError::new_err(format!("value cannot be converted to type {} without overflow", dtype.name()))
            })?;
        }
        out.push(s);
        return Ok(());
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        // A tensor inside nested data contributes its elements.
        let t = &t.get().t;
        if t.shape() != &sizes[dim..] {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {} (got {})",
                sizes[dim],
                dim,
                t.shape().first().copied().unwrap_or(0)
            )));
        }
        for i in 0..t.numel() {
            out.push(t.get_flat(i).py()?);
        }
        return Ok(());
    }
    let seq = as_data_seq(obj).ok_or_else(|| PyTypeError::new_err("not a sequence"))?;
    let n = seq.len()?;
    if n != sizes[dim] {
        return Err(PyValueError::new_err(format!(
            "expected sequence of length {} at dim {} (got {})",
            sizes[dim], dim, n
        )));
    }
    for item in seq.try_iter()? {
        store(&item?, dim + 1, sizes, dtype, out)?;
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
    let builtin_seq = data.is_exact_instance_of::<PyList>() || data.is_exact_instance_of::<PyTuple>();
    if !builtin_seq && crate::numpy::is_ndarray(py, data)? {
        let t = crate::numpy::from_numpy(py, data)?;
        return t.clone_as(dtype.unwrap_or(t.dtype())).py();
    }
    // As PyTorch: infer the dtype (unless given), take the shape from the
    // first elements, then store every leaf, checking the nesting.
    let target = match dtype {
        Some(d) => d,
        None => infer_scalar_type(py, data)?,
    };
    let shape = compute_sizes(data)?;
    let mut flat = Vec::new();
    if shape.iter().product::<usize>() > 0 {
        store(data, 0, &shape, target, &mut flat)?;
    }
    if target.is_complex() {
        // Interleaved (re, im) float64 pairs, seen as complex128, then converted.
        let parts: Vec<f64> = flat.iter().flat_map(|s| {
            let (re, im) = s.to_c64();
            [re, im]
        }).collect();
        let mut pshape = shape.clone();
        pshape.push(2);
        let pairs = Tensor::from_vec(parts, &pshape).py()?;
        let c = Tensor::from_parts(pairs.storage().clone(), ferrotorch::Layout::contiguous(&shape), DType::Complex128).py()?;
        return c.to_dtype(target).py();
    }
    let t = Tensor::empty(&shape, target, Device::CPU).py()?;
    dispatch_dtype!(target, T => {
        let p = t.data_ptr_mut() as *mut T;
        for (i, s) in flat.iter().enumerate() {
            // SAFETY: t has exactly flat.len() contiguous elements.
            unsafe { *p.add(i) = s.to_element::<T>() };
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

/// Shared body of `to`, `type`, `float()`...: returns `self` when nothing changes.
pub fn to_impl<'py>(slf: &Bound<'py, PyTensor>, dtype: Option<DType>, device: Option<Device>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
    let t = &slf.get().t;
    let dt = dtype.unwrap_or(t.dtype());
    warn_complex_to_real(slf.py(), t.dtype(), dt)?;
    if let Some(dev) = device {
        if dev.kind != t.device().kind {
            crate::functions::check_device(dev)?;
            return wrap(slf.py(), t.to_device(dev, dt, copy).py()?);
        }
    }
    if dt == t.dtype() && !copy {
        return Ok(slf.clone().into_any());
    }
    let r = t.clone_as(dt).py()?;
    wrap(slf.py(), r)
}

/// PyTorch's `UserWarning` for a copy from a complex into a real dtype.
pub fn warn_complex_to_real(py: Python<'_>, from: DType, to: DType) -> PyResult<()> {
    if from.is_complex() && !to.is_complex() {
        let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
        PyErr::warn(py, &cat, c"Casting complex values to real discards the imaginary part", 1)?;
    }
    Ok(())
}

/// `view(dtype)`: reinterpret the bytes (same element size only, for now).
pub fn view_dtype(t: &Tensor, d: DType) -> PyResult<Tensor> {
    t.view_dtype(d).py()
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
        DType::Complex64 => "torch.ComplexFloatTensor",
        DType::Complex128 => "torch.ComplexDoubleTensor",
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

