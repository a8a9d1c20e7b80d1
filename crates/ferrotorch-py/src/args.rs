//! Argument parsing shared by every binding: shapes given as `(2, 3)`, `2, 3`
//! or a `Size`; Python numbers as scalars; dims as int or tuple.

use ferrotorch::Scalar;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PySequence, PyTuple};

/// Sizes from `*args`: either several ints or one sequence of ints.
pub fn shape_from_args(args: &Bound<'_, PyTuple>, what: &str) -> PyResult<Vec<i64>> {
    if args.len() == 1 {
        let a = args.get_item(0)?;
        if a.cast::<PyTuple>().is_ok() || a.cast::<PyList>().is_ok() {
            return int_list(&a, what);
        }
    }
    int_list(args.as_any(), what)
}

/// A sequence of ints (also accepting 1-element integer tensors via `__index__`).
pub fn int_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    // Fast path for the common tuple of plain ints (no exception on the way).
    if let Ok(t) = obj.cast::<PyTuple>() {
        let mut out = Vec::with_capacity(t.len());
        for item in t.iter() {
            match item.cast::<PyInt>() {
                Ok(i) if item.cast::<PyBool>().is_err() => out.push(i.extract()?),
                _ => return int_list_slow(obj, what),
            }
        }
        return Ok(out);
    }
    int_list_slow(obj, what)
}

/// PyTorch converts a one-element tensor in a size list through a `Scalar`
/// and asserts it is integral: a bool tensor there is a `RuntimeError` (a
/// dim list takes it as an int).
fn refuse_bool_tensor(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if what == "dim" {
        return Ok(());
    }
    match crate::tensor::tensor_of(obj) {
        Ok(t) if t.dtype() == ferrotorch::DType::Bool && t.numel() == 1 => Err(pyo3::exceptions::PyRuntimeError::new_err(
            "Expected scalar.isIntegral( false) to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
        )),
        _ => Ok(()),
    }
}

fn int_list_slow(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    if obj.cast::<PyTuple>().is_err() && obj.cast::<PyList>().is_err() {
        refuse_bool_tensor(obj, what)?;
        if let Ok(i) = index_of(obj) {
            return Ok(vec![i]);
        }
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!("{what}(): argument 'size' must be tuple of ints, not {}", type_name(obj)))
    })?;
    let mut out = Vec::with_capacity(seq.len()?);
    for item in seq.try_iter()? {
        let item = item?;
        refuse_bool_tensor(&item, what)?;
        out.push(index_of(&item).map_err(|_| {
            PyTypeError::new_err(format!(
                "{what}(): argument 'size' must be tuple of ints, but found element of type {} at pos {}",
                type_name(&item),
                out.len()
            ))
        })?);
    }
    Ok(out)
}

/// An int (not a float), through `__index__`.
pub fn index_of(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if obj.cast::<PyFloat>().is_ok() {
        return Err(PyTypeError::new_err("expected an integer, got float"));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return i.extract();
    }
    let idx = obj.call_method0("__index__")?;
    idx.extract()
}

/// The Python type name of `obj`, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

/// A Python bool/int/float (or an object with `__float__`/`__index__`) as a scalar.
pub fn scalar_of(obj: &Bound<'_, PyAny>) -> Option<Scalar> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Some(Scalar::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return i.extract::<i64>().ok().map(Scalar::Int);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Some(Scalar::Float(f.value()));
    }
    if let Ok(c) = obj.cast::<pyo3::types::PyComplex>() {
        return Some(Scalar::Complex(c.real(), c.imag()));
    }
    None
}

/// Like [`scalar_of`] but also accepts NumPy scalars and other number-likes.
pub fn number_of(obj: &Bound<'_, PyAny>) -> Option<Scalar> {
    if let Some(s) = scalar_of(obj) {
        return Some(s);
    }
    if obj.hasattr("dtype").unwrap_or(false) && obj.hasattr("item").unwrap_or(false) && !obj.hasattr("__len__").unwrap_or(true) {
        if let Ok(v) = obj.call_method0("item") {
            return scalar_of(&v);
        }
    }
    None
}

/// `dim` given as an int, a sequence of ints, or None.
pub fn dims_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(int_list(o, "dim")?)),
    }
}

/// An `int` parameter by PyTorch's parser rule: a Python/NumPy integer (not
/// `bool`), or a 0-d integral (non-bool) tensor that does not require grad.
/// Anything else, one-element tensors of more dims included, is PyTorch's
/// `TypeError` "`fn(): argument 'name' (position N) must be int, not T`".
pub fn int_arg(obj: &Bound<'_, PyAny>, func: &str, name: &str, pos: usize) -> PyResult<i64> {
    let refuse = || PyTypeError::new_err(format!("{func}(): argument '{name}' (position {pos}) must be int, not {}", type_name(obj)));
    if obj.cast::<PyBool>().is_ok() {
        return Err(refuse());
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return i.extract();
    }
    if let Ok(t) = crate::tensor::tensor_of(obj) {
        let integral = !t.dtype().is_floating_point() && t.dtype() != ferrotorch::DType::Bool;
        if !(integral && t.ndim() == 0 && !t.requires_grad()) {
            return Err(refuse());
        }
    }
    index_of(obj).map_err(|_| refuse())
}

/// A `Scalar` parameter by PyTorch's parser rule: a Python/NumPy number, or a
/// 0-d tensor that does not require grad (`full_like(x, torch.tensor(2.))`).
/// Anything else, one-element tensors included, is PyTorch's `TypeError`
/// "`fn(): argument 'name' (position N) must be Number, not T`".
pub fn number_arg(obj: &Bound<'_, PyAny>, func: &str, name: &str, pos: usize) -> PyResult<Scalar> {
    if let Some(s) = number_of(obj) {
        return Ok(s);
    }
    if let Ok(t) = crate::tensor::tensor_of(obj) {
        if t.ndim() == 0 && !t.requires_grad() {
            return crate::errors::IntoPyResult::py(t.item());
        }
    }
    Err(PyTypeError::new_err(format!(
        "{func}(): argument '{name}' (position {pos}) must be Number, not {}",
        type_name(obj)
    )))
}

/// An optional argument that PyTorch's parser tells apart from an explicit
/// `None`: left out, or passed (`None` included). Reductions with a full and
/// a `dim` overload need it: `x.sum(keepdim=True)` matches neither overload
/// (a `TypeError`), while `x.sum(None, True)` is the `dim` overload.
pub enum Given<'py> {
    /// Not passed.
    Omitted,
    /// Passed, possibly as `None`.
    Value(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Given<'py> {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Given::Value(obj.to_owned()))
    }
}

/// `(dims, keepdim)` of a reduction with a full and a `dim` overload, by
/// PyTorch's parser rule: `keepdim` belongs to the `dim` overload only, so
/// passing it without `dim` is a `TypeError`.
pub fn reduce_dims(name: &str, dim: &Given<'_>, keepdim: &Given<'_>) -> PyResult<(Option<Vec<i64>>, bool)> {
    match (dim, keepdim) {
        (Given::Omitted, Given::Omitted) => Ok((None, false)),
        (Given::Omitted, Given::Value(_)) => Err(PyTypeError::new_err(format!("{name}() missing 1 required positional arguments: \"dim\""))),
        (Given::Value(d), k) => {
            let keep = match k {
                Given::Omitted => false,
                Given::Value(k) => k.extract::<bool>()?,
            };
            Ok((dims_of(Some(d))?, keep))
        }
    }
}
