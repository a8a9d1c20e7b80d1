//! Bindings for shape, indexing and einsum ops. Thin: argument normalisation
//! (aliases, defaults, keyword forms) lives in `ferrotorch/_shape_ops.py`;
//! these functions take tensors, ints and Python numbers only.

use crate::args::{number_of, type_name};
use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap, wrap_tuple, PyTensor};
use ferrotorch::ops::arith::Operand;
use ferrotorch::ops::indexing::{where_, ScatterReduce};
use ferrotorch::{Scalar, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// A tensor or Python number argument.
enum Arg {
    T(Tensor),
    S(Scalar),
}

impl Arg {
    fn op(&self) -> Operand<'_> {
        match self {
            Arg::T(t) => Operand::T(t),
            Arg::S(s) => Operand::S(*s),
        }
    }
}

fn arg_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Arg> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Arg::T(t.get().t.clone()));
    }
    number_of(obj).map(Arg::S).ok_or_else(|| PyTypeError::new_err(format!("{what} must be a Tensor or a Number, not {}", type_name(obj))))
}

fn scalar_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Scalar> {
    number_of(obj).ok_or_else(|| PyTypeError::new_err(format!("{what} must be a Number, not {}", type_name(obj))))
}

fn tensors(seq: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    let mut out = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        let item = item?;
        out.push(tensor_of(&item).map_err(|_| {
            PyTypeError::new_err(format!("expected Tensor as element {i} in argument 0, but got {}", type_name(&item)))
        })?);
    }
    Ok(out)
}

/// `torch.cat(tensors, dim)`.
#[pyfunction]
pub fn _cat<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>, dim: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::cat(&tensors(tensors_)?, dim).py()?)
}

/// `torch.stack(tensors, dim)`.
#[pyfunction]
pub fn _stack<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>, dim: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::stack(&tensors(tensors_)?, dim).py()?)
}

/// `torch.hstack(tensors)`.
#[pyfunction]
pub fn _hstack<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::hstack(&tensors(tensors_)?).py()?)
}

/// `torch.vstack(tensors)`.
#[pyfunction]
pub fn _vstack<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, Tensor::vstack(&tensors(tensors_)?).py()?)
}

/// `flip(dims)`.
#[pyfunction]
pub fn _flip<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dims: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.flip(&dims).py()?)
}

/// `roll(shifts, dims)`.
#[pyfunction]
pub fn _roll<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, shifts: Vec<i64>, dims: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.roll(&shifts, &dims).py()?)
}

/// `rot90(k, dims)`.
#[pyfunction]
pub fn _rot90<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, k: i64, dims: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.rot90(k, &dims).py()?)
}

/// `repeat(*sizes)`.
#[pyfunction]
pub fn _repeat<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, sizes: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.repeat(&sizes).py()?)
}

/// `tile(dims)`.
#[pyfunction]
pub fn _tile<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dims: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.tile(&dims).py()?)
}

/// `repeat_interleave(repeats, dim, output_size)` with a tensor of repeats.
#[pyfunction]
#[pyo3(signature = (t, repeats, dim=None, output_size=None))]
pub fn _repeat_interleave<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, repeats: &Bound<'py, PyAny>, dim: Option<i64>, output_size: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.repeat_interleave(&tensor_of(repeats)?, dim, output_size).py()?)
}

/// `torch.repeat_interleave(repeats)`: indices repeated by count.
#[pyfunction]
#[pyo3(signature = (repeats, output_size=None))]
pub fn _repeat_interleave_index<'py>(py: Python<'py>, repeats: &Bound<'py, PyAny>, output_size: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
    let r = tensor_of(repeats)?;
    if r.ndim() > 1 {
        return Err(pyo3::exceptions::PyRuntimeError::new_err("repeat_interleave only accept 1D vector as repeat"));
    }
    let reps = r.to_dtype(ferrotorch::DType::Int64).py()?.to_vec::<i64>().py()?;
    wrap(py, Tensor::repeat_interleave_index(&reps, output_size).py()?)
}

/// `tril(diagonal)`.
#[pyfunction]
pub fn _tril<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, diagonal: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.tril(diagonal).py()?)
}

/// `triu(diagonal)`.
#[pyfunction]
pub fn _triu<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, diagonal: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.triu(diagonal).py()?)
}

/// `torch.meshgrid(tensors, indexing)`.
#[pyfunction]
pub fn _meshgrid<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>, xy: bool) -> PyResult<Bound<'py, PyTuple>> {
    wrap_tuple(py, Tensor::meshgrid(&tensors(tensors_)?, xy).py()?)
}

/// `torch.broadcast_tensors(*tensors)`.
#[pyfunction]
pub fn _broadcast_tensors<'py>(py: Python<'py>, tensors_: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    wrap_tuple(py, Tensor::broadcast_tensors(&tensors(tensors_)?).py()?)
}

/// `torch.broadcast_shapes(*shapes)` on lists of sizes.
#[pyfunction]
pub fn _broadcast_shapes(shapes: Vec<Vec<i64>>) -> PyResult<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for (i, s) in shapes.iter().enumerate() {
        let s = ferrotorch_core::layout::check_sizes(s).py()?;
        out = ferrotorch_core::layout::broadcast_shapes(&out, &s)
            .map_err(|_| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg {} and arg {i}.",
                    i.saturating_sub(1)
                ))
            })?
            .to_vec();
    }
    Ok(out)
}

/// `movedim(source, destination)`.
#[pyfunction]
pub fn _movedim<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, source: Vec<i64>, destination: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.movedim(&source, &destination).py()?)
}

/// `narrow_copy(dim, start, length)`.
#[pyfunction]
pub fn _narrow_copy<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, start: i64, length: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.narrow_copy(dim, start, length).py()?)
}

/// `take(index)`.
#[pyfunction]
pub fn _take<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.take(&tensor_of(index)?).py()?)
}

/// `take_along_dim(indices, dim)`.
#[pyfunction]
#[pyo3(signature = (t, indices, dim=None))]
pub fn _take_along_dim<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, indices: &Bound<'py, PyAny>, dim: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.take_along_dim(&tensor_of(indices)?, dim).py()?)
}

/// `gather(dim, index)`.
#[pyfunction]
pub fn _gather<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.gather(dim, &tensor_of(index)?).py()?)
}

/// `scatter(dim, index, src|value, reduce=None)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, src, reduce=None, inplace=false))]
pub fn _scatter<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, src: &Bound<'py, PyAny>, reduce: Option<String>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, s) = (tensor_of(t)?, tensor_of(index)?, arg_of(src, "scatter(): src")?);
    if inplace {
        x.scatter_(dim, &ix, s.op(), reduce.as_deref()).py()?;
        return Ok(t.clone());
    }
    let r = match reduce {
        Some(r) => x.scatter_with_reduce(dim, &ix, s.op(), &r),
        None => x.scatter(dim, &ix, s.op()),
    };
    wrap(py, r.py()?)
}

/// `scatter_add(dim, index, src)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, src, inplace=false))]
pub fn _scatter_add<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, src: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, s) = (tensor_of(t)?, tensor_of(index)?, tensor_of(src)?);
    if inplace {
        x.scatter_add_(dim, &ix, &s).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.scatter_add(dim, &ix, &s).py()?)
}

/// `scatter_reduce(dim, index, src, reduce, include_self)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, src, reduce, include_self=true, inplace=false))]
#[allow(clippy::too_many_arguments)]
pub fn _scatter_reduce<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, src: &Bound<'py, PyAny>, reduce: &str, include_self: bool, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, s) = (tensor_of(t)?, tensor_of(index)?, tensor_of(src)?);
    let r = ScatterReduce::parse(reduce).py()?;
    if inplace {
        x.scatter_reduce_(dim, &ix, &s, r, include_self).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.scatter_reduce(dim, &ix, &s, r, include_self).py()?)
}

/// `index_select(dim, index)`.
#[pyfunction]
pub fn _index_select<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.index_select(dim, &tensor_of(index)?).py()?)
}

/// `index_add(dim, index, source, alpha)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, source, alpha, inplace=false))]
pub fn _index_add<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, source: &Bound<'py, PyAny>, alpha: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, s, a) = (tensor_of(t)?, tensor_of(index)?, tensor_of(source)?, scalar_of(alpha, "alpha")?);
    if inplace {
        x.index_add_(dim, &ix, &s, a).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.index_add(dim, &ix, &s, a).py()?)
}

/// `index_copy(dim, index, source)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, source, inplace=false))]
pub fn _index_copy<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, source: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, s) = (tensor_of(t)?, tensor_of(index)?, tensor_of(source)?);
    if inplace {
        x.index_copy_(dim, &ix, &s).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.index_copy(dim, &ix, &s).py()?)
}

/// `index_fill(dim, index, value)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, dim, index, value, inplace=false))]
pub fn _index_fill<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, dim: i64, index: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, ix, v) = (tensor_of(t)?, tensor_of(index)?, arg_of(value, "index_fill(): value")?);
    if inplace {
        x.index_fill_(dim, &ix, v.op()).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.index_fill(dim, &ix, v.op()).py()?)
}

/// `masked_fill(mask, value)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, mask, value, inplace=false))]
pub fn _masked_fill<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, mask: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, m, v) = (tensor_of(t)?, tensor_of(mask)?, arg_of(value, "masked_fill(): value")?);
    if inplace {
        x.masked_fill_(&m, v.op()).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.masked_fill(&m, v.op()).py()?)
}

/// `masked_select(mask)`.
#[pyfunction]
pub fn _masked_select<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, mask: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.masked_select(&tensor_of(mask)?).py()?)
}

/// `masked_scatter(mask, source)`, in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, mask, source, inplace=false))]
pub fn _masked_scatter<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, mask: &Bound<'py, PyAny>, source: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (x, m, s) = (tensor_of(t)?, tensor_of(mask)?, tensor_of(source)?);
    if inplace {
        x.masked_scatter_(&m, &s).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.masked_scatter(&m, &s).py()?)
}

/// `nonzero()`.
#[pyfunction]
pub fn _nonzero<'py>(py: Python<'py>, t: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(t)?.nonzero().py()?)
}

/// `torch.where(condition, input, other)`; numbers allowed for either side.
#[pyfunction]
pub fn _where<'py>(py: Python<'py>, cond: &Bound<'py, PyAny>, x: &Bound<'py, PyAny>, y: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let c = tensor_of(cond)?;
    let (a, b) = (arg_of(x, "where(): input")?, arg_of(y, "where(): other")?);
    wrap(py, where_(&c, a.op(), b.op()).py()?)
}

/// `torch.einsum(equation, operands)`.
#[pyfunction]
pub fn _einsum<'py>(py: Python<'py>, equation: &str, operands: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let ops = if operands.cast::<PyList>().is_ok() || operands.cast::<PyTuple>().is_ok() { tensors(operands)? } else { vec![tensor_of(operands)?] };
    wrap(py, Tensor::einsum(equation, &ops).py()?)
}

/// `torch.tensordot(a, b, dims=(dims_a, dims_b))`.
#[pyfunction]
pub fn _tensordot<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>, dims_a: Vec<i64>, dims_b: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(a)?.tensordot(&tensor_of(b)?, &dims_a, &dims_b).py()?)
}

/// `torch.outer(a, b)`.
#[pyfunction]
pub fn _outer<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(a)?.outer(&tensor_of(b)?).py()?)
}

/// `torch.dot(a, b)` (the Python side checks the arguments as PyTorch).
#[pyfunction]
pub fn _dot<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(a)?.dot(&tensor_of(b)?).py()?)
}

/// `torch.vdot(a, b)`: the first vector conjugated.
#[pyfunction]
pub fn _vdot<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(a)?.vdot(&tensor_of(b)?).py()?)
}

/// `addmv` / `addmm` / `addbmm` / `baddbmm` (`kind` picks which).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _addprod<'py>(py: Python<'py>, kind: &str, input: &Bound<'py, PyAny>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>, beta: &Bound<'py, PyAny>, alpha: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let (x, a, b) = (tensor_of(input)?, tensor_of(a)?, tensor_of(b)?);
    let (be, al) = (scalar_of(beta, "beta")?, scalar_of(alpha, "alpha")?);
    let r = match kind {
        "addmv" => x.addmv(&a, &b, be, al),
        "addmm" => x.addmm_scaled(&a, &b, be, al),
        "addbmm" => x.addbmm(&a, &b, be, al),
        _ => x.baddbmm(&a, &b, be, al),
    };
    wrap(py, r.py()?)
}

/// `index_put(indices, values, accumulate)` with `indices` a tuple of tensors or None,
/// in place when `inplace`.
#[pyfunction]
#[pyo3(signature = (t, indices, values, accumulate=false, inplace=false))]
pub fn _index_put<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, indices: &Bound<'py, PyAny>, values: &Bound<'py, PyAny>, accumulate: bool, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(t)?;
    let mut idx = Vec::new();
    for item in indices.try_iter()? {
        let item = item?;
        idx.push(if item.is_none() { None } else { Some(tensor_of(&item)?) });
    }
    let v = tensor_of(values)?;
    if inplace {
        x.index_put_(&idx, &v, accumulate).py()?;
        return Ok(t.clone());
    }
    wrap(py, x.index_put(&idx, &v, accumulate).py()?)
}

/// Registers every function of this file on the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_cat, m)?)?;
    m.add_function(wrap_pyfunction!(_stack, m)?)?;
    m.add_function(wrap_pyfunction!(_hstack, m)?)?;
    m.add_function(wrap_pyfunction!(_vstack, m)?)?;
    m.add_function(wrap_pyfunction!(_flip, m)?)?;
    m.add_function(wrap_pyfunction!(_roll, m)?)?;
    m.add_function(wrap_pyfunction!(_rot90, m)?)?;
    m.add_function(wrap_pyfunction!(_repeat, m)?)?;
    m.add_function(wrap_pyfunction!(_tile, m)?)?;
    m.add_function(wrap_pyfunction!(_repeat_interleave, m)?)?;
    m.add_function(wrap_pyfunction!(_repeat_interleave_index, m)?)?;
    m.add_function(wrap_pyfunction!(_tril, m)?)?;
    m.add_function(wrap_pyfunction!(_triu, m)?)?;
    m.add_function(wrap_pyfunction!(_meshgrid, m)?)?;
    m.add_function(wrap_pyfunction!(_broadcast_tensors, m)?)?;
    m.add_function(wrap_pyfunction!(_broadcast_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(_movedim, m)?)?;
    m.add_function(wrap_pyfunction!(_narrow_copy, m)?)?;
    m.add_function(wrap_pyfunction!(_take, m)?)?;
    m.add_function(wrap_pyfunction!(_take_along_dim, m)?)?;
    m.add_function(wrap_pyfunction!(_gather, m)?)?;
    m.add_function(wrap_pyfunction!(_scatter, m)?)?;
    m.add_function(wrap_pyfunction!(_scatter_add, m)?)?;
    m.add_function(wrap_pyfunction!(_scatter_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(_index_select, m)?)?;
    m.add_function(wrap_pyfunction!(_index_add, m)?)?;
    m.add_function(wrap_pyfunction!(_index_copy, m)?)?;
    m.add_function(wrap_pyfunction!(_index_fill, m)?)?;
    m.add_function(wrap_pyfunction!(_masked_fill, m)?)?;
    m.add_function(wrap_pyfunction!(_masked_select, m)?)?;
    m.add_function(wrap_pyfunction!(_masked_scatter, m)?)?;
    m.add_function(wrap_pyfunction!(_nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(_where, m)?)?;
    m.add_function(wrap_pyfunction!(_einsum, m)?)?;
    m.add_function(wrap_pyfunction!(_tensordot, m)?)?;
    m.add_function(wrap_pyfunction!(_outer, m)?)?;
    m.add_function(wrap_pyfunction!(_dot, m)?)?;
    m.add_function(wrap_pyfunction!(_vdot, m)?)?;
    m.add_function(wrap_pyfunction!(_addprod, m)?)?;
    m.add_function(wrap_pyfunction!(_index_put, m)?)?;
    Ok(())
}
