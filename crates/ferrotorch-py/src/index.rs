//! `tensor[idx]` and `tensor[idx] = value` for basic indices: ints, slices
//! with steps, `None`, `...` and bools. Basic indexing always returns a view.

use crate::args::{number_of, type_name};
use crate::convert;
use crate::errors::IntoPyResult;
use crate::tensor::PyTensor;
use ferrotorch::Tensor;
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySlice, PyString, PyTuple};

enum Item {
    Int(i64),
    Slice(i64, i64, i64),
    NewAxis,
    Ellipsis,
    Bool(bool),
}

fn opt_i64(obj: &Bound<'_, PyAny>, default: i64) -> PyResult<i64> {
    if obj.is_none() {
        Ok(default)
    } else {
        crate::args::index_of(obj).map_err(|_| PyTypeError::new_err("slice indices must be integers or None or have an __index__ method"))
    }
}

fn parse_item(obj: &Bound<'_, PyAny>) -> PyResult<Item> {
    if obj.is_none() {
        return Ok(Item::NewAxis);
    }
    if obj.is(obj.py().Ellipsis()) || obj.cast::<PyEllipsis>().is_ok() {
        return Ok(Item::Ellipsis);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Item::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return Ok(Item::Int(i.extract()?));
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
        return Ok(Item::Slice(start, stop, step));
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().t;
        if t.ndim() == 0 && t.dtype().is_integral() {
            return Ok(Item::Int(t.item().py()?.to_i64()));
        }
    }
    if obj.cast::<PyString>().is_ok() {
        // PyTorch tries to turn a string into an index tensor and fails so.
        return Err(PyTypeError::new_err(format!("new(): invalid data type '{}'", type_name(obj))));
    }
    if obj.cast::<PyTensor>().is_ok() || obj.cast::<PyList>().is_ok() {
        return Err(PyNotImplementedError::new_err(
            "advanced indexing with tensors or lists is not implemented yet in ferrotorch",
        ));
    }
    if number_of(obj).is_some() {
        if let Ok(i) = crate::args::index_of(obj) {
            return Ok(Item::Int(i));
        }
    }
    Err(PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})",
        type_name(obj)
    )))
}

fn parse(idx: &Bound<'_, PyAny>) -> PyResult<Vec<Item>> {
    match idx.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|i| parse_item(&i)).collect(),
        Err(_) => Ok(vec![parse_item(idx)?]),
    }
}

/// `t[idx]`: a view for basic indices. A bool index is advanced indexing in
/// PyTorch (a mask of one element), so the result is then a copy.
pub fn getitem(t: &Tensor, idx: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let items = parse(idx)?;
    let v = view_of(t, &items)?;
    if items.iter().any(|i| matches!(i, Item::Bool(_))) {
        return v.clone_data().py();
    }
    Ok(v)
}

/// Applies basic indices, returning a view (bools add a dim of size 1 or 0).
fn view_of(t: &Tensor, items: &[Item]) -> PyResult<Tensor> {
    let consumed = items.iter().filter(|i| matches!(i, Item::Int(_) | Item::Slice(..))).count();
    if consumed > 0 && t.ndim() == 0 {
        return Err(PyIndexError::new_err(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
        ));
    }
    if consumed > t.ndim() {
        return Err(PyIndexError::new_err(format!(
            "too many indices for tensor of dimension {}",
            t.ndim()
        )));
    }
    if items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1 {
        return Err(PyIndexError::new_err("an index can only have a single ellipsis ('...')"));
    }
    let mut r = t.make_view(t.layout().clone()).py()?;
    let mut d: i64 = 0;
    // The dim of the original tensor an index refers to, for messages.
    let mut orig: usize = 0;
    for item in items {
        match *item {
            Item::NewAxis => {
                r = r.unsqueeze(d).py()?;
                d += 1;
            }
            Item::Bool(b) => {
                // x[True] adds a dim of size 1; x[False] one of size 0.
                r = r.unsqueeze(d).py()?;
                if !b {
                    r = r.slice(d, 0, 0, 1).py()?;
                }
                d += 1;
            }
            Item::Int(i) => {
                let size = r.shape()[d as usize] as i64;
                if i < -size || i >= size {
                    return Err(PyIndexError::new_err(format!(
                        "index {} is out of bounds for dimension {} with size {}",
                        i, orig, size
                    )));
                }
                r = r.select(d, i).py()?;
                orig += 1;
            }
            Item::Slice(start, stop, step) => {
                r = r.slice(d, start, stop, step).py()?;
                d += 1;
                orig += 1;
            }
            Item::Ellipsis => {
                d += (t.ndim() - consumed) as i64;
                orig += t.ndim() - consumed;
            }
        }
    }
    Ok(r)
}

/// `t[idx] = value`: a scalar fills the view, anything else is broadcast-copied.
pub fn setitem(t: &Tensor, idx: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let view = view_of(t, &parse(idx)?)?;
    view.layout().check_no_internal_overlap().py()?;
    if let Some(s) = number_of(value) {
        return view.fill_(s).py();
    }
    let src = match value.cast::<PyTensor>() {
        Ok(v) => v.get().t.clone(),
        Err(_) => convert::tensor_from_data(value.py(), value, Some(t.dtype()), None)?,
    };
    view.copy_(&src).py()
}
