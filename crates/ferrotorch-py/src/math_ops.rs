//! Bindings of the elementwise and reduction op set (`ferrotorch._C._math_*`).
//! The Python module `ferrotorch._math_ops` gives them PyTorch's signatures
//! and attaches them as functions and `Tensor` methods; these functions take
//! already-normalised arguments.

use crate::args::{dims_of, number_of, type_name};
use crate::dtype::opt_dtype;
use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap, wrap_tuple, PyTensor};
use ferrotorch::ops::arith::{binary, binary_, unary, update_with, BinaryOp, Operand, UnaryOp};
use ferrotorch::ops::ternary::Arg;
use ferrotorch::Tensor;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A tensor or a Python number.
fn arg_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Arg> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Arg::T(t.get().t.clone()));
    }
    number_of(obj)
        .map(Arg::S)
        .ok_or_else(|| PyTypeError::new_err(format!("{what}: expected Tensor or Number, but got {}", type_name(obj))))
}

fn opt_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Arg>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(arg_of(o, what)?)),
    }
}

fn f(p: Option<f64>, default: f64) -> f64 {
    p.unwrap_or(default)
}

/// The unary op called `name` with up to three numeric parameters: a
/// parameterless op by its registry name ([`UnaryOp::from_name`]), else an
/// alias or an op with arguments.
fn unary_op(name: &str, p0: Option<f64>, p1: Option<f64>, p2: Option<f64>) -> PyResult<UnaryOp> {
    use UnaryOp::*;
    if let (true, Some(d)) = (name == "round", p0.filter(|&d| d != 0.0)) {
        return Ok(RoundDecimals(d as i64));
    }
    if let Some(op) = UnaryOp::from_name(name) {
        return Ok(op);
    }
    Ok(match name {
        "negative" => Neg,
        "absolute" => Abs,
        "fix" => Trunc,
        "logsigmoid" => LogSigmoid,
        "logit" => Logit(p0.unwrap_or(-1.0)),
        "hardtanh" => Hardtanh(f(p0, -1.0), f(p1, 1.0)),
        "relu6" => Hardtanh(0.0, 6.0),
        "softshrink" => Shrink(f(p0, 0.5), true),
        "hardshrink" => Shrink(f(p0, 0.5), false),
        "leaky_relu" => LeakyRelu(f(p0, 0.01)),
        "elu" => Elu(f(p0, 1.0), f(p1, 1.0), f(p2, 1.0)),
        "selu" => Elu(1.673_263_242_354_377_3, 1.050_700_987_355_480_5, 1.0),
        "celu" => Celu(f(p0, 1.0)),
        "gelu" => Gelu(p0.is_some_and(|v| v != 0.0)),
        "softplus" => Softplus(f(p0, 1.0), f(p1, 20.0)),
        "nan_to_num" => NanToNum(f(p0, 0.0), p1, p2),
        "polygamma" => Polygamma(f(p0, 0.0) as i64),
        "mvlgamma" => Mvlgamma(f(p0, 1.0) as i64),
        _ => return Err(PyValueError::new_err(format!("unknown unary op {name}"))),
    })
}

/// The registry of parameterless unary ops for the Python layer: (name,
/// function, method, in-place method, in-place function) per op, in
/// declaration order, so `ferrotorch` binds exactly the registered ones.
#[pyfunction]
pub fn _unary_registry() -> Vec<(&'static str, bool, bool, bool, bool)> {
    UnaryOp::REGISTRY
        .iter()
        .map(|e| (e.name, e.surface.function, e.surface.method, e.surface.inplace_method, e.surface.inplace_function))
        .collect()
}

/// The binary op with the registry name `name` ([`BinaryOp::from_name`]).
fn binary_op(name: &str) -> PyResult<BinaryOp> {
    BinaryOp::from_name(name).ok_or_else(|| PyValueError::new_err(format!("unknown binary op {name}")))
}

/// The registry of binary ops for the Python layer: (name, function, method,
/// in-place method, tensor-only `other`, in-place function) per op, in
/// declaration order.
#[pyfunction]
pub fn _binary_registry() -> Vec<(&'static str, bool, bool, bool, bool, bool)> {
    BinaryOp::REGISTRY
        .iter()
        .map(|e| (e.name, e.surface.function, e.surface.method, e.surface.inplace_method, e.tensor_only, e.surface.inplace_function))
        .collect()
}

/// Runs `f` out of place, or in place on `input` (the `op_` forms).
fn run<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    inplace: bool,
    others_rg: bool,
    f: impl FnOnce(&Tensor) -> ferrotorch::Result<Tensor>,
) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    if inplace {
        crate::tensor::check_inplace_leaf(&x)?;
        // PyTorch's iterator refuses an overlapping output before any dtype
        // dispatch ("not implemented for" errors come later).
        x.layout().check_no_internal_overlap().py()?;
        update_with(&x, others_rg, f).py()?;
        return Ok(input.clone());
    }
    wrap(py, f(&x).py()?)
}

fn requires_grad(a: &Arg) -> bool {
    matches!(a, Arg::T(t) if t.requires_grad())
}

/// `op(input)` for a named unary op with numeric parameters.
#[pyfunction]
#[pyo3(signature = (name, input, p0=None, p1=None, p2=None, inplace=false))]
pub fn _math_unary<'py>(py: Python<'py>, name: &str, input: &Bound<'py, PyAny>, p0: Option<f64>, p1: Option<f64>, p2: Option<f64>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let op = unary_op(name, p0, p1, p2)?;
    if inplace {
        if matches!(op, UnaryOp::Elu(..) | UnaryOp::Celu(_)) {
            // Their backward reads the written tensor with its own strides.
            let x = tensor_of(input)?;
            crate::tensor::check_inplace_leaf(&x)?;
            x.layout().check_no_internal_overlap().py()?;
            ferrotorch::ops::arith::update_with_strided(&x, false, |x| ferrotorch::ops::arith::unary_for_inplace(x, op)).py()?;
            return Ok(input.clone());
        }
        return run(py, input, inplace, false, |x| ferrotorch::ops::arith::unary_for_inplace(x, op));
    }
    run(py, input, inplace, false, |x| unary(x, op))
}

/// `input <op> other`; either side may be a Python number (not both).
#[pyfunction]
#[pyo3(signature = (name, input, other, inplace=false))]
pub fn _math_binary<'py>(py: Python<'py>, name: &str, input: &Bound<'py, PyAny>, other: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    // floor_divide computes div(rounding_mode='floor') but, unlike it, has no
    // derivative in PyTorch (its output records `NotImplemented`).
    let no_derivative = name == "floor_divide";
    let op = if no_derivative { BinaryOp::DivFloor } else { binary_op(name)? };
    let b = arg_of(other, name)?;
    let tb = if let Arg::T(t) = &b { Some(t) } else { None };
    let out_of_place = |a: Operand, xa: Option<&Tensor>| {
        if no_derivative {
            ferrotorch::autograd::without_derivative("floor_divide", &[xa, tb], || binary(a, b.op(), op))
        } else {
            binary(a, b.op(), op)
        }
    };
    if input.cast::<PyTensor>().is_err() {
        // A number on the left: torch.atan2(2.0, x) style calls.
        let a = arg_of(input, name)?;
        if let Arg::S(_) = b {
            return Err(PyTypeError::new_err(format!("{name}(): at least one argument must be a Tensor")));
        }
        return wrap(py, out_of_place(a.op(), None).py()?);
    }
    if inplace {
        // All in-place binary ops share `binary_`: its checks come in
        // PyTorch's order (shape, result type) before any kernel runs.
        let x = tensor_of(input)?;
        crate::tensor::check_inplace_leaf(&x)?;
        if no_derivative {
            ferrotorch::autograd::inplace_without_derivative("floor_divide_", &x, &[tb], || binary_(&x, b.op(), op)).py()?;
        } else {
            binary_(&x, b.op(), op).py()?;
        }
        return Ok(input.clone());
    }
    run(py, input, false, false, |x| out_of_place(Operand::T(x), Some(x)))
}

/// `input <op> other` written into `out` when it can be, without a
/// temporary; `False` (nothing written) tells the caller to compute out of
/// place and copy, which also makes PyTorch's `out=` checks.
#[pyfunction]
pub fn _math_binary_out(name: &str, input: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>, out: &Bound<'_, PyAny>) -> PyResult<bool> {
    let (Ok(a), Ok(b), Ok(o)) = (tensor_of(input), tensor_of(other), tensor_of(out)) else {
        return Ok(false);
    };
    ferrotorch::ops::arith::binary_into(&a, &b, binary_op(name)?, &o).py()
}

/// `clamp(input, min, max)` with scalar or tensor bounds.
#[pyfunction]
#[pyo3(signature = (input, min=None, max=None, inplace=false))]
pub fn _math_clamp<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, min: Option<&Bound<'py, PyAny>>, max: Option<&Bound<'py, PyAny>>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (lo, hi) = (opt_arg(min, "clamp")?, opt_arg(max, "clamp")?);
    let rg = lo.as_ref().is_some_and(requires_grad) || hi.as_ref().is_some_and(requires_grad);
    run(py, input, inplace, rg, |x| x.clamp(lo, hi))
}

/// `lerp(input, end, weight)`.
#[pyfunction]
#[pyo3(signature = (input, end, weight, inplace=false))]
pub fn _math_lerp<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, end: &Bound<'py, PyAny>, weight: &Bound<'py, PyAny>, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let e = tensor_of(end)?;
    let w = arg_of(weight, "lerp")?;
    let rg = e.requires_grad() || requires_grad(&w);
    run(py, input, inplace, rg, |x| x.lerp(&e, w))
}

/// `addcmul` / `addcdiv`.
#[pyfunction]
#[pyo3(signature = (input, tensor1, tensor2, value, div, inplace=false))]
pub fn _math_addc<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, tensor1: &Bound<'py, PyAny>, tensor2: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>, div: bool, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let (a, b) = (tensor_of(tensor1)?, tensor_of(tensor2)?);
    let v = number_of(value).ok_or_else(|| PyTypeError::new_err("addcmul(): argument 'value' must be Number"))?;
    let rg = a.requires_grad() || b.requires_grad();
    run(py, input, inplace, rg, |x| x.addc(&a, &b, v, div))
}

/// `value` as an op's kernel of `dtype` takes it (PyTorch's `Scalar::to<T>()`,
/// see `ferrotorch::ops::arith::scalar_arg`), for the Python-level ops
/// (`threshold`, `addmm`) taking number arguments; `opmath` converts to
/// float32 for float16/bfloat16 kernels that compute in it.
#[pyfunction]
#[pyo3(signature = (value, dtype, opmath=false))]
pub fn _scalar_arg<'py>(py: Python<'py>, value: &Bound<'py, PyAny>, dtype: &Bound<'py, PyAny>, opmath: bool) -> PyResult<Bound<'py, PyAny>> {
    let v = number_of(value).ok_or_else(|| PyTypeError::new_err(format!("expected a Number, but got {}", type_name(value))))?;
    let mut dt = crate::dtype::extract_dtype(dtype)?;
    if opmath {
        dt = ferrotorch::ops::arith::opmath(dt);
    }
    Ok(match ferrotorch::ops::arith::scalar_arg(v, dt).py()? {
        ferrotorch::Scalar::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        ferrotorch::Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        ferrotorch::Scalar::Float(f) => f.into_pyobject(py)?.into_any(),
        ferrotorch::Scalar::Complex(re, im) => pyo3::types::PyComplex::from_doubles(py, re, im).into_any(),
    })
}

/// `input ± alpha * other` for `add`/`sub`/`rsub` whose first operand may be a number.
#[pyfunction]
#[pyo3(signature = (input, other, alpha, sub))]
pub fn _math_add_scaled<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, other: &Bound<'py, PyAny>, alpha: &Bound<'py, PyAny>, sub: bool) -> PyResult<Bound<'py, PyAny>> {
    let op = if sub { BinaryOp::Sub } else { BinaryOp::Add };
    let al = crate::tensor::alpha_of(alpha, op.name())?;
    let (a, b) = (arg_of(input, op.name())?, arg_of(other, op.name())?);
    wrap(py, ferrotorch::ops::arith::add_scaled(a.op(), b.op(), al, op).py()?)
}

/// `Tensor.resize_(shape)` (see `ferrotorch::Tensor::resize_`); `out=` of the
/// wrong shape goes through it.
#[pyfunction]
pub fn _resize_<'py>(t: &Bound<'py, PyAny>, shape: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(t)?;
    let s = ferrotorch_core::layout::check_sizes(&crate::args::int_list(shape, "resize_")?).py()?.to_vec();
    x.resize_(&s).py()?;
    Ok(t.clone())
}

/// `Tensor.set_(source, offset, size, stride)` (see `ferrotorch::Tensor::set_`);
/// with `source` = `t` the in-place view ops (`t_`, `as_strided_`, ...).
#[pyfunction]
pub fn _set_<'py>(t: &Bound<'py, PyAny>, source: &Bound<'py, PyAny>, size: &Bound<'py, PyAny>, stride: &Bound<'py, PyAny>, offset: i64) -> PyResult<Bound<'py, PyAny>> {
    let (x, src) = (tensor_of(t)?, tensor_of(source)?);
    let layout = ferrotorch_core::Layout::as_strided(&crate::args::int_list(size, "set_")?, &crate::args::int_list(stride, "set_")?, offset).py()?;
    x.set_(&src, layout).py()?;
    Ok(t.clone())
}

fn one_dim(dim: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    match dims_of(dim)? {
        None => Ok(None),
        Some(v) if v.len() == 1 => Ok(Some(v[0])),
        Some(_) => Err(PyTypeError::new_err("expected a single dim (int)")),
    }
}

/// `prod(input, dim=None, keepdim, dtype)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false, dtype=None))]
pub fn _math_prod<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>, keepdim: bool, dtype: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    wrap(py, x.prod_dim(one_dim(dim)?, keepdim, opt_dtype(dtype)?).py()?)
}

/// `amax`/`amin(input, dim=(), keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false, max=true))]
pub fn _math_amax<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>, keepdim: bool, max: bool) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let d = dims_of(dim)?;
    wrap(py, x.amax_dims(d.as_deref(), keepdim, max).py()?)
}

/// `max()`/`min()` of everything, or `(values, indices)` along `dim`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false, max=true))]
pub fn _math_max<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<i64>, keepdim: bool, max: bool) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    match dim {
        None => wrap(py, x.max_all(max).py()?),
        Some(d) => {
            let (v, i) = x.max_dim(d, keepdim, max).py()?;
            Ok(wrap_tuple(py, vec![v, i])?.into_any())
        }
    }
}

/// `argmax`/`argmin(input, dim=None, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false, max=true))]
pub fn _math_argmax<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<i64>, keepdim: bool, max: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.argmax_dim(dim, keepdim, max).py()?)
}

/// `var`/`std` (and `var_mean`/`std_mean` with `with_mean`).
#[pyfunction]
#[pyo3(signature = (input, dim=None, correction=1.0, keepdim=false, std=false, with_mean=false))]
pub fn _math_var<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>, correction: f64, keepdim: bool, std: bool, with_mean: bool) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let d = dims_of(dim)?;
    if with_mean {
        let (v, m) = x.var_mean(d.as_deref(), correction, keepdim, std).py()?;
        return Ok(wrap_tuple(py, vec![v, m])?.into_any());
    }
    let r = if std { x.std_dims(d.as_deref(), correction, keepdim) } else { x.var_dims(d.as_deref(), correction, keepdim) };
    wrap(py, r.py()?)
}

/// `linalg.vector_norm(input, ord, dim, keepdim, dtype)`.
#[pyfunction]
#[pyo3(signature = (input, ord=2.0, dim=None, keepdim=false, dtype=None))]
pub fn _math_vector_norm<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, ord: f64, dim: Option<&Bound<'py, PyAny>>, keepdim: bool, dtype: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let d = dims_of(dim)?;
    wrap(py, x.vector_norm(ord, d.as_deref(), keepdim, opt_dtype(dtype)?).py()?)
}
/// Per-row mean and biased variance of a 2-D tensor, as PyTorch's CPU
/// group_norm/layer_norm kernels compute them (no autograd).
#[pyfunction]
#[pyo3(signature = (input, reduced=false))]
pub fn _rowwise_moments<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, reduced: bool) -> PyResult<Bound<'py, PyAny>> {
    let (m, v) = tensor_of(input)?.rowwise_moments(reduced).py()?;
    Ok(wrap_tuple(py, vec![m, v])?.into_any())
}

/// `logsumexp(input, dim, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false))]
pub fn _math_logsumexp<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>, keepdim: bool) -> PyResult<Bound<'py, PyAny>> {
    let d = dims_of(dim)?;
    wrap(py, tensor_of(input)?.logsumexp(d.as_deref(), keepdim).py()?)
}

/// `all`/`any(input, dim=None, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false, all=true))]
pub fn _math_all<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>, keepdim: bool, all: bool) -> PyResult<Bound<'py, PyAny>> {
    let d = dims_of(dim)?;
    wrap(py, tensor_of(input)?.all_any(d.as_deref(), keepdim, all).py()?)
}

/// `count_nonzero(input, dim=None)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None))]
pub fn _math_count_nonzero<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let d = dims_of(dim)?;
    wrap(py, tensor_of(input)?.count_nonzero(d.as_deref()).py()?)
}

/// `cumsum`/`cumprod(input, dim, dtype)`.
#[pyfunction]
#[pyo3(signature = (input, dim, dtype=None, prod=false, inplace=false))]
pub fn _math_cumulative<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64, dtype: Option<&Bound<'py, PyAny>>, prod: bool, inplace: bool) -> PyResult<Bound<'py, PyAny>> {
    let dt = opt_dtype(dtype)?;
    run(py, input, inplace, false, |x| x.cumulative(dim, dt, prod))
}

/// `cummax`/`cummin(input, dim)`.
#[pyfunction]
#[pyo3(signature = (input, dim, max=true))]
pub fn _math_cum_extreme<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64, max: bool) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i) = tensor_of(input)?.cum_extreme(dim, max).py()?;
    wrap_tuple(py, vec![v, i])
}

/// `sort(input, dim, descending)`.
#[pyfunction]
#[pyo3(signature = (input, dim=-1, descending=false))]
pub fn _math_sort<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64, descending: bool) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i) = tensor_of(input)?.sort_dim(dim, descending).py()?;
    wrap_tuple(py, vec![v, i])
}

/// `topk(input, k, dim, largest)` (always sorted).
#[pyfunction]
#[pyo3(signature = (input, k, dim=-1, largest=true))]
pub fn _math_topk<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, k: i64, dim: i64, largest: bool) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i) = tensor_of(input)?.topk(k, dim, largest).py()?;
    wrap_tuple(py, vec![v, i])
}

/// `kthvalue(input, k, dim, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, k, dim=-1, keepdim=false))]
pub fn _math_kthvalue<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, k: i64, dim: i64, keepdim: bool) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i) = tensor_of(input)?.kthvalue(k, dim, keepdim).py()?;
    wrap_tuple(py, vec![v, i])
}

/// `median(input)` or `median(input, dim, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=None, keepdim=false))]
pub fn _math_median<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: Option<i64>, keepdim: bool) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    match dim {
        None => wrap(py, x.median_all().py()?),
        Some(d) => {
            let (v, i) = x.median_dim(d, keepdim).py()?;
            Ok(wrap_tuple(py, vec![v, i])?.into_any())
        }
    }
}

/// `mode(input, dim, keepdim)`.
#[pyfunction]
#[pyo3(signature = (input, dim=-1, keepdim=false))]
pub fn _math_mode<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64, keepdim: bool) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i) = tensor_of(input)?.mode(dim, keepdim).py()?;
    wrap_tuple(py, vec![v, i])
}

/// `unique(input)` over the flattened tensor: (values, inverse, counts).
#[pyfunction]
pub fn _math_unique<'py>(py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let (v, i, c) = tensor_of(input)?.unique().py()?;
    wrap_tuple(py, vec![v, i, c])
}

/// `softmax`/`log_softmax(input, dim, dtype)`.
#[pyfunction]
#[pyo3(signature = (input, dim, dtype=None, log=false))]
pub fn _math_softmax<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64, dtype: Option<&Bound<'py, PyAny>>, log: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.softmax(dim, opt_dtype(dtype)?, log).py()?)
}

/// Registers every function of this file on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_math_unary, m)?)?;
    m.add_function(wrap_pyfunction!(_unary_registry, m)?)?;
    m.add_function(wrap_pyfunction!(_binary_registry, m)?)?;
    m.add_function(wrap_pyfunction!(_math_binary, m)?)?;
    m.add_function(wrap_pyfunction!(_math_binary_out, m)?)?;
    m.add_function(wrap_pyfunction!(_math_clamp, m)?)?;
    m.add_function(wrap_pyfunction!(_math_lerp, m)?)?;
    m.add_function(wrap_pyfunction!(_math_addc, m)?)?;
    m.add_function(wrap_pyfunction!(_scalar_arg, m)?)?;
    m.add_function(wrap_pyfunction!(_resize_, m)?)?;
    m.add_function(wrap_pyfunction!(_set_, m)?)?;
    m.add_function(wrap_pyfunction!(_math_add_scaled, m)?)?;
    m.add_function(wrap_pyfunction!(_math_prod, m)?)?;
    m.add_function(wrap_pyfunction!(_math_amax, m)?)?;
    m.add_function(wrap_pyfunction!(_math_max, m)?)?;
    m.add_function(wrap_pyfunction!(_math_argmax, m)?)?;
    m.add_function(wrap_pyfunction!(_math_var, m)?)?;
    m.add_function(wrap_pyfunction!(_math_vector_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_math_logsumexp, m)?)?;
    m.add_function(wrap_pyfunction!(_rowwise_moments, m)?)?;
    m.add_function(wrap_pyfunction!(_math_all, m)?)?;
    m.add_function(wrap_pyfunction!(_math_count_nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(_math_cumulative, m)?)?;
    m.add_function(wrap_pyfunction!(_math_cum_extreme, m)?)?;
    m.add_function(wrap_pyfunction!(_math_sort, m)?)?;
    m.add_function(wrap_pyfunction!(_math_topk, m)?)?;
    m.add_function(wrap_pyfunction!(_math_kthvalue, m)?)?;
    m.add_function(wrap_pyfunction!(_math_median, m)?)?;
    m.add_function(wrap_pyfunction!(_math_mode, m)?)?;
    m.add_function(wrap_pyfunction!(_math_unique, m)?)?;
    m.add_function(wrap_pyfunction!(_math_softmax, m)?)?;
    Ok(())
}
