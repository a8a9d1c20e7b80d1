//! `tensor[idx]` and `tensor[idx] = value`: parses Python index expressions
//! into [`TensorIndex`] items (ints, slices, `None`, `...`, bools, tensors,
//! lists, NumPy arrays) and hands them to the engine, which returns a view for
//! basic indices and a copy for advanced ones.

use crate::args::{number_of, type_name};
use crate::convert;
use crate::errors::IntoPyResult;
use crate::tensor::PyTensor;
use ferrotorch::ops::indexing::TensorIndex;
use ferrotorch::{DType, Tensor};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySequence, PySlice, PyString, PyTuple};

fn opt_i64(obj: &Bound<'_, PyAny>, default: i64) -> PyResult<i64> {
    if obj.is_none() {
        Ok(default)
    } else {
        crate::args::index_of(obj).map_err(|_| PyTypeError::new_err("slice indices must be integers or None or have an __index__ method"))
    }
}

/// A tensor index from a tensor, list or array; empty lists index as int64.
fn index_tensor(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<TensorIndex> {
    let t = match obj.cast::<PyTensor>() {
        Ok(t) => t.get().t.clone(),
        Err(_) => {
            // An empty list indexes as int64 (its inferred dtype would be float).
            let t = convert::tensor_from_data(py, obj, None, None)?;
            if t.numel() == 0 && t.dtype().is_floating_point() { t.to_dtype(DType::Int64).py()? } else { t }
        }
    };
    if t.dtype().is_floating_point() {
        return Err(PyIndexError::new_err("tensors used as indices must be long, int, byte or bool tensors"));
    }
    Ok(TensorIndex::Tensor(t))
}

fn is_sequence(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok()
}

fn is_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    crate::numpy::is_ndarray(obj.py(), obj).unwrap_or(false)
}

fn parse_item(obj: &Bound<'_, PyAny>) -> PyResult<TensorIndex> {
    if obj.is_none() {
        return Ok(TensorIndex::NewAxis);
    }
    if obj.is(obj.py().Ellipsis()) || obj.cast::<PyEllipsis>().is_ok() {
        return Ok(TensorIndex::Ellipsis);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(TensorIndex::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return Ok(TensorIndex::Int(i.extract()?));
    }
    if obj.cast::<PyString>().is_ok() {
        // PyTorch tries to make an index tensor of a string and fails so.
        return Err(PyTypeError::new_err(format!("new(): invalid data type '{}'", type_name(obj))));
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        // A 0-d integer tensor indexes like an int (a view), as in PyTorch.
        let t = &t.get().t;
        if t.ndim() == 0 && t.dtype().is_integral() {
            return Ok(TensorIndex::Int(t.item().py()?.to_i64()));
        }
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let step = opt_i64(&s.getattr("step")?, 1)?;
        if step == 0 {
            return Err(PyValueError::new_err("slice step cannot be zero"));
        }
        if step < 0 {
            return Err(PyValueError::new_err("step must be greater than zero"));
        }
        let start = opt_i64(&s.getattr("start")?, 0)?;
        let stop = opt_i64(&s.getattr("stop")?, i64::MAX)?;
        return Ok(TensorIndex::Slice { start, stop, step });
    }
    if obj.cast::<PyTensor>().is_ok() || is_sequence(obj) || is_ndarray(obj) {
        return index_tensor(obj.py(), obj);
    }
    if obj.cast::<PyString>().is_err() && number_of(obj).is_some() {
        if let Ok(i) = crate::args::index_of(obj) {
            return Ok(TensorIndex::Int(i));
        }
    }
    if obj.cast::<PyString>().is_ok() {
        // PyTorch reads a string as data for a tensor index, which fails this way.
        return Err(PyTypeError::new_err("new(): invalid data type 'str'"));
    }
    Err(PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})",
        type_name(obj)
    )))
}

/// PyTorch's legacy rule: a short non-tuple sequence holding slices, `...`,
/// `None`, tensors or sequences is read as a tuple of indices.
fn sequence_is_tuple(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(seq) = obj.cast::<PySequence>() else { return Ok(false) };
    let n = seq.len()?;
    if n >= 32 {
        return Ok(false);
    }
    for item in seq.try_iter()? {
        let item = item?;
        if item.is_none()
            || item.cast::<PySlice>().is_ok()
            || item.cast::<PyEllipsis>().is_ok()
            || item.cast::<PyTensor>().is_ok()
            || is_sequence(&item)
            || is_ndarray(&item)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

fn parse(idx: &Bound<'_, PyAny>) -> PyResult<Vec<TensorIndex>> {
    if let Ok(t) = idx.cast::<PyTuple>() {
        return t.iter().map(|i| parse_item(&i)).collect();
    }
    if idx.cast::<PyList>().is_ok() && sequence_is_tuple(idx)? {
        return idx.cast::<PySequence>()?.try_iter()?.map(|i| parse_item(&i?)).collect();
    }
    Ok(vec![parse_item(idx)?])
}

/// `t[idx]`: a view for basic indices, a copy (`IndexBackward0`) otherwise.
pub fn getitem(t: &Tensor, idx: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    // Fast path for the most common index, `x[i]` (bools are ints in Python).
    if let Ok(i) = idx.cast::<PyInt>() {
        if idx.cast::<PyBool>().is_err() && t.ndim() > 0 {
            return t.getitem(&[TensorIndex::Int(i.extract()?)]).py();
        }
    }
    let items = parse(idx)?;
    t.getitem(&items).py()
}

/// `t[idx] = value`: `value` (a number, tensor or nested data) is converted
/// to `t`'s dtype and broadcast into the indexed region.
pub fn setitem(t: &Tensor, idx: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let items = parse(idx)?;
    let src = match value.cast::<PyTensor>() {
        Ok(v) => v.get().t.clone(),
        Err(_) => match number_of(value) {
            Some(s) => Tensor::full(&[], s, t.dtype(), t.device()).py()?,
            None => convert::tensor_from_data(value.py(), value, Some(t.dtype()), None)?,
        },
    };
    t.setitem(&items, &src).py()
}
