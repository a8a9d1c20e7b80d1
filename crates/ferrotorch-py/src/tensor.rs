//! The native `ferrotorch.Tensor` class: metadata, views, conversions and the
//! hot arithmetic operators, all without passing through Python code.

use crate::args::{dims_of, index_of, int_list, number_of, reduce_dims, shape_from_args, type_name, Given};
use crate::convert;
use crate::device::{extract_device, PyDevice};
use crate::dtype::{dtype_obj, extract_dtype, opt_dtype, PyDType};
use crate::errors::IntoPyResult;
use crate::index;
use crate::storage::PyUntypedStorage;
use ferrotorch::ops::arith::{binary, binary_, unary, BinaryOp, Operand, UnaryOp};
use ferrotorch::{DType, Device, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::sync::atomic::Ordering;

/// The native half of `ferrotorch.Tensor` (PyTorch's `torch._C.TensorBase`):
/// metadata, views, conversions and the hot operators. `ferrotorch.Tensor` is
/// its one Python subclass, built by `python/ferrotorch/_tensor_class.py` from the
/// methods that are clearer in Python; every tensor Rust hands to Python is an
/// instance of that subclass (see [`set_tensor_class`]).
#[pyclass(name = "TensorBase", module = "ferrotorch._C", subclass, weakref, frozen)]
pub struct PyTensor {
    /// The engine tensor.
    pub t: Tensor,
}

impl Drop for PyTensor {
    fn drop(&mut self) {
        // The slot points at this Python object (see `wrap`); the object is
        // going away, so later conversions must build a new one.
        self.t.pyobj_slot().store(std::ptr::null_mut(), Ordering::Relaxed);
    }
}

/// Returns the Python object for `t`, reusing the existing one when there is one
/// so that identity holds (`x.grad is x.grad`).
pub fn wrap(py: Python<'_>, t: Tensor) -> PyResult<Bound<'_, PyAny>> {
    let p = t.pyobj_slot().load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: the slot is only set to a live PyTensor object by this function
        // or `register`, and cleared in that object's Drop; we hold the GIL, so
        // the object cannot be freed concurrently.
        return Ok(unsafe { Bound::from_borrowed_ptr(py, p as *mut ffi::PyObject) });
    }
    let obj = new_object(py, PyTensor { t: t.clone() })?;
    t.pyobj_slot().store(obj.as_ptr() as *mut _, Ordering::Relaxed);
    Ok(obj)
}

/// `ferrotorch.Tensor`, once `_tensor_class.py` has built it.
static TENSOR_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Registers `ferrotorch.Tensor`, the Python subclass of `TensorBase` whose
/// instances `wrap` creates; called once by `_tensor_class.py` after building it.
#[pyfunction]
#[pyo3(name = "_set_tensor_class")]
pub fn set_tensor_class(cls: &Bound<'_, PyType>) -> PyResult<()> {
    if !cls.is_subclass_of::<PyTensor>()? {
        return Err(PyTypeError::new_err("_set_tensor_class: expected a subclass of TensorBase"));
    }
    TENSOR_CLASS
        .set(cls.py(), cls.clone().unbind())
        .map_err(|_| PyRuntimeError::new_err("_set_tensor_class: the Tensor class is already set"))
}

/// A new Python object of class `ferrotorch.Tensor` (of `TensorBase` before
/// that class exists, i.e. only while the package is being imported).
fn new_object<'py>(py: Python<'py>, value: PyTensor) -> PyResult<Bound<'py, PyAny>> {
    let Some(cls) = TENSOR_CLASS.get(py) else {
        return Ok(Bound::new(py, value)?.into_any());
    };
    // pyo3 has no public way to instantiate a Python subclass of a pyclass
    // without calling the class (a Python-level `__new__`/`__init__` round
    // trip per tensor). `tp_new_impl` is what pyo3's own generated `__new__`
    // uses for exactly this; the version is pinned in Cargo.lock.
    // SAFETY: `cls` is a subclass of `TensorBase` (checked in `set_tensor_class`),
    // which is what `tp_new_impl` requires of the type pointer.
    unsafe {
        let p = pyo3::impl_::pymethods::tp_new_impl(
            py,
            pyo3::PyClassInitializer::from(value),
            cls.as_ptr() as *mut ffi::PyTypeObject,
        )?;
        Ok(Bound::from_owned_ptr(py, p))
    }
}

/// Wraps a list of tensors as a Python tuple.
pub fn wrap_tuple<'py>(py: Python<'py>, ts: Vec<Tensor>) -> PyResult<Bound<'py, PyTuple>> {
    let items = ts.into_iter().map(|t| wrap(py, t)).collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)
}

/// Borrows the engine tensor of a Python tensor, or raises `TypeError`.
pub fn tensor_of(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match obj.cast::<PyTensor>() {
        Ok(t) => Ok(t.get().t.clone()),
        Err(_) => Err(PyTypeError::new_err(format!("expected Tensor as argument, but got {}", type_name(obj)))),
    }
}

/// A tensor or Python number operand.
fn operand(obj: &Bound<'_, PyAny>) -> Option<OperandOwned> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Some(OperandOwned::T(t.get().t.clone()));
    }
    number_of(obj).map(OperandOwned::S)
}

enum OperandOwned {
    T(Tensor),
    S(Scalar),
}

impl OperandOwned {
    fn as_op(&self) -> Operand<'_> {
        match self {
            OperandOwned::T(t) => Operand::T(t),
            OperandOwned::S(s) => Operand::S(*s),
        }
    }
}

fn binop<'py>(py: Python<'py>, a: &Tensor, other: &Bound<'py, PyAny>, op: BinaryOp, reflected: bool) -> PyResult<Bound<'py, PyAny>> {
    let Some(b) = operand(other) else {
        return Ok(py.NotImplemented().into_bound(py));
    };
    let r = if reflected { binary(b.as_op(), Operand::T(a), op) } else { binary(Operand::T(a), b.as_op(), op) };
    wrap(py, r.py()?)
}

fn inplace<'py>(slf: &Bound<'py, PyTensor>, other: &Bound<'py, PyAny>, op: BinaryOp) -> PyResult<Bound<'py, PyAny>> {
    let a = &slf.get().t;
    let b = operand(other).ok_or_else(|| {
        PyTypeError::new_err(format!("unsupported operand type for in-place {}: 'Tensor' and '{}'", op.name(), type_name(other)))
    })?;
    check_inplace_leaf(a)?;
    binary_(a, b.as_op(), op).py()?;
    Ok(slf.clone().into_any())
}

/// `int(t)` / `float(t)` need exactly one element (PyTorch's `ValueError`).
fn check_one_element(t: &Tensor) -> PyResult<()> {
    if t.numel() != 1 {
        return Err(pyo3::exceptions::PyValueError::new_err("only one element tensors can be converted to Python scalars"));
    }
    Ok(())
}

/// PyTorch refuses in-place changes of a leaf that requires grad.
pub fn check_inplace_leaf(t: &Tensor) -> PyResult<()> {
    if t.is_leaf() && t.requires_grad() && crate::grad_mode::is_enabled() {
        return Err(PyRuntimeError::new_err(
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ));
    }
    Ok(())
}

/// The `alpha` argument of `add`/`sub` as a number (PyTorch's `TypeError` otherwise).
pub fn alpha_of(alpha: &Bound<'_, PyAny>, op: &str) -> PyResult<Scalar> {
    number_of(alpha).ok_or_else(|| PyTypeError::new_err(format!("{op}(): argument 'alpha' must be Number, not {}", type_name(alpha))))
}

/// `a ± alpha * other` (`add`/`sub` with `alpha`; the op layer checks and
/// converts `alpha` as PyTorch does).
fn add_alpha<'py>(py: Python<'py>, a: &Tensor, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>, op: BinaryOp) -> PyResult<Bound<'py, PyAny>> {
    let Some(alpha) = alpha else { return binop(py, a, other, op, false) };
    let al = alpha_of(alpha, op.name())?;
    let b = operand(other).ok_or_else(|| PyTypeError::new_err(format!("{}(): argument 'other' must be Tensor or Number", op.name())))?;
    wrap(py, ferrotorch::ops::arith::add_scaled(Operand::T(a), b.as_op(), al, op).py()?)
}

/// In-place [`add_alpha`].
fn add_alpha_<'py>(slf: &Bound<'py, PyTensor>, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>, op: BinaryOp) -> PyResult<Bound<'py, PyAny>> {
    let Some(alpha) = alpha else { return inplace(slf, other, op) };
    let al = alpha_of(alpha, op.name())?;
    let a = &slf.get().t;
    let b = operand(other).ok_or_else(|| PyTypeError::new_err(format!("{}_(): argument 'other' must be Tensor or Number", op.name())))?;
    check_inplace_leaf(a)?;
    ferrotorch::ops::arith::add_scaled_(a, b.as_op(), al, op).py()?;
    Ok(slf.clone().into_any())
}

#[pymethods]
impl PyTensor {
    /// `Tensor(data)` / `Tensor(*sizes)`: the legacy constructor, float32 by default.
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn py_new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let _ = kwargs;
        let py = args.py();
        if args.is_empty() {
            return Ok(PyTensor { t: Tensor::empty(&[0], ferrotorch::defaults::default_dtype(), Device::CPU).py()? });
        }
        let first = args.get_item(0)?;
        if args.len() == 1 {
            if let Ok(t) = first.cast::<PyTensor>() {
                // Used by Parameter: a new tensor object over the same data.
                return Ok(PyTensor { t: t.get().t.detach() });
            }
            if index_of(&first).is_err() {
                let t = convert::tensor_from_data(py, &first, Some(ferrotorch::defaults::default_dtype()), None)?;
                return Ok(PyTensor { t });
            }
        }
        let shape = shape_from_args(args, "Tensor")?;
        let sizes = ferrotorch_core::layout::check_sizes(&shape).py()?;
        Ok(PyTensor { t: Tensor::empty(&sizes, ferrotorch::defaults::default_dtype(), Device::CPU).py()? })
    }

    /// Makes `wrap` return this very object for its tensor (used after `__new__`
    /// of a Python subclass such as `Parameter`).
    fn _register(slf: &Bound<'_, Self>) {
        slf.get().t.pyobj_slot().store(slf.as_ptr() as *mut _, Ordering::Relaxed);
    }

    // ----- metadata ---------------------------------------------------------

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::size_obj(py, self.t.shape())
    }
    #[pyo3(signature = (dim=None))]
    fn size<'py>(&self, py: Python<'py>, dim: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let dim = match dim {
            Some(d) if !d.is_none() => Some(crate::args::int_arg(d, "size", "dim", 1)?),
            _ => None,
        };
        match dim {
            None => convert::size_obj(py, self.t.shape()),
            Some(d) => {
                let d = ferrotorch_core::error::wrap_dim_no_scalar(d, self.t.ndim()).py()?;
                Ok(self.t.shape()[d].into_pyobject(py)?.into_any())
            }
        }
    }
    #[pyo3(signature = (dim=None))]
    fn stride<'py>(&self, py: Python<'py>, dim: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let dim = match dim {
            Some(d) if !d.is_none() => Some(crate::args::int_arg(d, "stride", "dim", 1)?),
            _ => None,
        };
        match dim {
            None => Ok(PyTuple::new(py, self.t.strides())?.into_any()),
            Some(d) => {
                let d = ferrotorch_core::error::wrap_dim_no_scalar(d, self.t.ndim()).py()?;
                Ok(self.t.strides()[d].into_pyobject(py)?.into_any())
            }
        }
    }
    fn dim(&self) -> usize {
        self.t.ndim()
    }
    fn ndimension(&self) -> usize {
        self.t.ndim()
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.t.ndim()
    }
    fn numel(&self) -> usize {
        self.t.numel()
    }
    fn nelement(&self) -> usize {
        self.t.numel()
    }
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<PyDType> {
        dtype_obj(py, self.t.dtype())
    }
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice { dev: self.t.device() }
    }
    #[getter]
    fn is_cuda(&self) -> bool {
        self.t.device().kind == ferrotorch::DeviceType::Cuda
    }
    #[getter]
    fn is_meta(&self) -> bool {
        self.t.device().is_meta()
    }
    #[getter]
    fn is_cpu(&self) -> bool {
        self.t.device().is_cpu()
    }
    #[getter]
    fn layout<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("ferrotorch")?.getattr("strided")
    }
    fn element_size(&self) -> usize {
        self.t.dtype().itemsize()
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.t.dtype().itemsize()
    }
    #[getter]
    fn nbytes(&self) -> usize {
        self.t.numel() * self.t.dtype().itemsize()
    }
    fn storage_offset(&self) -> usize {
        self.t.storage_offset()
    }
    #[pyo3(signature = (*, memory_format=None))]
    fn is_contiguous(&self, memory_format: Option<&Bound<'_, PyAny>>) -> bool {
        let _ = memory_format;
        self.t.is_contiguous()
    }
    fn data_ptr(&self) -> usize {
        // PyTorch reports 0 for tensors without elements and for meta tensors.
        if self.t.numel() == 0 || self.t.device().is_meta() {
            0
        } else if self.t.device().kind == ferrotorch::DeviceType::Cuda {
            // A device address: computed, never read on the host.
            self.t.storage().raw_ptr() as usize + self.t.storage_offset() * self.t.dtype().itemsize()
        } else {
            self.t.data_ptr() as usize
        }
    }
    fn is_floating_point(&self) -> bool {
        self.t.dtype().is_floating_point()
    }
    fn is_complex(&self) -> bool {
        self.t.dtype().is_complex()
    }
    fn is_signed(&self) -> bool {
        self.t.dtype().is_signed()
    }
    #[getter]
    fn _version(&self) -> u64 {
        self.t.version()
    }
    #[getter]
    fn _base<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.t.base().map(|b| wrap(py, b.clone())).transpose()
    }
    fn untyped_storage(&self) -> PyUntypedStorage {
        PyUntypedStorage { storage: self.t.storage().clone() }
    }
    fn _typed_storage_parts(&self, py: Python<'_>) -> (PyUntypedStorage, Py<PyDType>) {
        (PyUntypedStorage { storage: self.t.storage().clone() }, dtype_obj(py, self.t.dtype()))
    }
    fn is_shared(&self) -> bool {
        self.t.is_shared()
    }
    /// `share_memory_()`: moves the storage to shared memory; returns self.
    fn share_memory_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        #[cfg(unix)]
        slf.get().t.share_memory_().py()?;
        #[cfg(not(unix))]
        return Err(pyo3::exceptions::PyRuntimeError::new_err("share_memory_: shared memory is not supported on this platform"));
        #[allow(unreachable_code)]
        Ok(slf.clone())
    }
    /// `(fd, nbytes)` of a shared tensor's storage, else None (for multiprocessing's pickler).
    fn _shared_fd(&self) -> Option<(i64, usize)> {
        #[cfg(unix)]
        return self.t.shared_fd().map(|(fd, n)| (fd as i64, n));
        #[cfg(not(unix))]
        None
    }
    // ----- autograd flags (the engine lands with the autograd issue) --------

    #[getter]
    fn requires_grad(&self) -> bool {
        self.t.requires_grad()
    }
    #[setter]
    fn set_requires_grad(&self, v: bool) -> PyResult<()> {
        self.t.set_requires_grad(v).py()
    }
    #[pyo3(signature = (requires_grad=true))]
    fn requires_grad_<'py>(slf: &Bound<'py, Self>, requires_grad: bool) -> PyResult<Bound<'py, Self>> {
        slf.get().t.set_requires_grad(requires_grad).py()?;
        Ok(slf.clone())
    }
    #[getter]
    fn is_leaf(&self) -> bool {
        self.t.is_leaf()
    }
    #[getter]
    fn retains_grad(&self) -> bool {
        self.t.autograd().retains_grad
    }
    #[getter]
    fn output_nr(&self) -> usize {
        self.t.output_nr()
    }
    #[getter]
    fn grad<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.t.grad().map(|g| wrap(py, g)).transpose()
    }
    #[setter]
    fn set_grad(&self, g: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        match g {
            None => self.t.set_grad(None),
            Some(o) if o.is_none() => self.t.set_grad(None),
            Some(o) => {
                let g = tensor_of(o)?;
                if g.shape() != self.t.shape() {
                    return Err(PyRuntimeError::new_err(format!(
                        "assigned grad has data of a different size"
                    )));
                }
                self.t.set_grad(Some(g))
            }
        }
        Ok(())
    }
    #[getter]
    fn grad_fn<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.t.grad_fn().map(|n| crate::autograd::wrap_node(py, n)).transpose()
    }
    fn detach<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.detach())
    }
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.data_alias())
    }

    // ----- views --------------------------------------------------------------

    /// `view(*shape)`, `view(size=...)`, `view(dtype)`. The first size is a
    /// separate positional parameter so that the common one-size call builds
    /// no argument tuple and no size vector.
    #[pyo3(signature = (first=None, /, *rest, size=None, dtype=None))]
    fn view<'py>(
        &self,
        py: Python<'py>,
        first: Option<&Bound<'py, PyAny>>,
        rest: &Bound<'py, PyTuple>,
        size: Option<&Bound<'py, PyAny>>,
        dtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match (first, rest.is_empty(), size, dtype) {
            (Some(a), true, None, None) => {
                if let Ok(i) = a.cast_exact::<pyo3::types::PyInt>() {
                    return wrap(py, self.t.view(&[i.extract::<i64>()?]).py()?);
                }
                if let Ok(d) = a.cast::<PyDType>() {
                    return wrap(py, convert::view_dtype(&self.t, d.get().dt)?);
                }
                wrap(py, self.t.view(&shape_from_args(&PyTuple::new(py, [a])?, "view")?).py()?)
            }
            (Some(a), false, None, None) => {
                let all: Vec<Bound<'py, PyAny>> = std::iter::once(a.clone()).chain(rest.iter()).collect();
                let all = PyTuple::new(py, all)?;
                wrap(py, self.t.view(&shape_from_args(&all, "view")?).py()?)
            }
            (None, true, Some(s), None) => wrap(py, self.t.view(&int_list(s, "view")?).py()?),
            (None, true, None, Some(d)) => wrap(py, convert::view_dtype(&self.t, extract_dtype(d)?)?),
            _ => {
                let mut got: Vec<String> = first.map(type_name).into_iter().chain(rest.iter().map(|a| type_name(&a))).collect();
                got.extend(size.map(|s| format!("size={}", type_name(s))));
                got.extend(dtype.map(|d| format!("dtype={}", type_name(d))));
                Err(PyTypeError::new_err(format!(
                    "view() received an invalid combination of arguments - got ({}), but expected one of:\n \
                     * (torch.dtype dtype)\n * (tuple of ints size)\n",
                    got.join(", ")
                )))
            }
        }
    }
    fn view_as<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let o = tensor_of(other)?;
        let s: Vec<i64> = o.shape().iter().map(|&v| v as i64).collect();
        wrap(py, self.t.view(&s).py()?)
    }
    #[pyo3(signature = (*shape))]
    fn reshape<'py>(&self, py: Python<'py>, shape: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.reshape(&shape_from_args(shape, "reshape")?).py()?)
    }
    fn reshape_as<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let o = tensor_of(other)?;
        let s: Vec<i64> = o.shape().iter().map(|&v| v as i64).collect();
        wrap(py, self.t.reshape(&s).py()?)
    }
    #[pyo3(signature = (start_dim=0, end_dim=-1))]
    fn flatten<'py>(&self, py: Python<'py>, start_dim: i64, end_dim: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.flatten(start_dim, end_dim).py()?)
    }
    fn unflatten<'py>(&self, py: Python<'py>, dim: i64, sizes: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.unflatten(dim, &int_list(sizes, "unflatten")?).py()?)
    }
    fn transpose<'py>(&self, py: Python<'py>, dim0: i64, dim1: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.transpose(dim0, dim1).py()?)
    }
    fn swapaxes<'py>(&self, py: Python<'py>, axis0: i64, axis1: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.transpose(axis0, axis1).py()?)
    }
    fn swapdims<'py>(&self, py: Python<'py>, dim0: i64, dim1: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.transpose(dim0, dim1).py()?)
    }
    fn t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.t().py()?)
    }
    #[getter(T)]
    fn big_t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let n = self.t.ndim() as i64;
        let dims: Vec<i64> = (0..n).rev().collect();
        wrap(py, self.t.permute(&dims).py()?)
    }
    #[getter(mT)]
    fn m_t<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.mt().py()?)
    }
    #[pyo3(signature = (*dims))]
    fn permute<'py>(&self, py: Python<'py>, dims: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.permute(&shape_from_args(dims, "permute")?).py()?)
    }
    #[pyo3(signature = (*sizes))]
    fn expand<'py>(&self, py: Python<'py>, sizes: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.expand(&shape_from_args(sizes, "expand")?).py()?)
    }
    fn expand_as<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.expand_as(&tensor_of(other)?).py()?)
    }
    fn broadcast_to<'py>(&self, py: Python<'py>, size: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.expand(&int_list(size, "broadcast_to")?).py()?)
    }
    #[pyo3(signature = (dim=None))]
    fn squeeze<'py>(&self, py: Python<'py>, dim: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let d = dims_of(dim)?;
        wrap(py, self.t.squeeze(d.as_deref()).py()?)
    }
    fn unsqueeze<'py>(&self, py: Python<'py>, dim: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let dim = crate::args::int_arg(dim, "unsqueeze", "dim", 1)?;
        wrap(py, self.t.unsqueeze(dim).py()?)
    }
    fn narrow<'py>(&self, py: Python<'py>, dim: i64, start: &Bound<'py, PyAny>, length: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.narrow(dim, index_of(start)?, length).py()?)
    }
    fn select<'py>(&self, py: Python<'py>, dim: i64, index: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.select(dim, index).py()?)
    }
    #[pyo3(signature = (dim=0))]
    fn unbind<'py>(&self, py: Python<'py>, dim: i64) -> PyResult<Bound<'py, PyTuple>> {
        wrap_tuple(py, self.t.unbind(dim).py()?)
    }
    #[pyo3(signature = (split_size_or_sections, dim=0))]
    fn split<'py>(&self, py: Python<'py>, split_size_or_sections: &Bound<'py, PyAny>, dim: i64) -> PyResult<Bound<'py, PyTuple>> {
        let parts = match index_of(split_size_or_sections) {
            Ok(s) => self.t.split(s, dim),
            Err(_) => self.t.split_with_sizes(&int_list(split_size_or_sections, "split")?, dim),
        };
        wrap_tuple(py, parts.py()?)
    }
    #[pyo3(signature = (chunks, dim=0))]
    fn chunk<'py>(&self, py: Python<'py>, chunks: i64, dim: i64) -> PyResult<Bound<'py, PyTuple>> {
        wrap_tuple(py, self.t.chunk(chunks, dim).py()?)
    }
    #[pyo3(signature = (offset=0, dim1=0, dim2=1))]
    fn diagonal<'py>(&self, py: Python<'py>, offset: i64, dim1: i64, dim2: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.diagonal(offset, dim1, dim2).py()?)
    }
    fn unfold<'py>(&self, py: Python<'py>, dimension: i64, size: i64, step: i64) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.unfold(dimension, size, step).py()?)
    }
    #[pyo3(signature = (size, stride, storage_offset=None))]
    fn as_strided<'py>(&self, py: Python<'py>, size: &Bound<'py, PyAny>, stride: &Bound<'py, PyAny>, storage_offset: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        let s = int_list(size, "as_strided")?;
        let st = int_list(stride, "as_strided")?;
        wrap(py, self.t.as_strided(&s, &st, storage_offset).py()?)
    }

    // ----- copies and conversions ---------------------------------------------

    #[pyo3(signature = (memory_format=None))]
    fn contiguous<'py>(slf: &Bound<'py, Self>, memory_format: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = memory_format;
        let t = &slf.get().t;
        if t.is_contiguous() {
            return Ok(slf.clone().into_any());
        }
        wrap(slf.py(), t.clone_data().py()?)
    }
    #[pyo3(signature = (*, memory_format=None))]
    fn clone<'py>(&self, py: Python<'py>, memory_format: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = memory_format;
        wrap(py, self.t.clone_as(self.t.dtype()).py()?)
    }
    #[pyo3(signature = (src, non_blocking=false))]
    fn copy_<'py>(slf: &Bound<'py, Self>, src: &Bound<'py, PyAny>, non_blocking: bool) -> PyResult<Bound<'py, Self>> {
        let _ = non_blocking;
        let t = &slf.get().t;
        check_inplace_leaf(t)?;
        // PyTorch's parser lets copy_ take a Python number as its Tensor
        // (a wrapped scalar: int64/float64/bool, then cast on copy).
        let s = match number_of(src) {
            Some(v) => {
                let dt = match v {
                    Scalar::Bool(_) => DType::Bool,
                    Scalar::Int(_) => DType::Int64,
                    Scalar::Float(_) => DType::Float64,
                    Scalar::Complex(..) => DType::Complex128,
                };
                Tensor::full(&[], v, dt, t.device()).py()?
            }
            None => tensor_of(src).map_err(|_| {
                PyTypeError::new_err(format!("copy_(): argument 'other' (position 1) must be Tensor, not {}", type_name(src)))
            })?,
        };
        crate::convert::warn_complex_to_real(slf.py(), s.dtype(), t.dtype())?;
        t.copy_(&s).py()?;
        Ok(slf.clone())
    }
    fn fill_<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().t;
        check_inplace_leaf(t)?;
        match number_of(value) {
            Some(v) => t.fill_(v).py()?,
            None => t.fill_tensor_(&tensor_of(value)?).py()?,
        }
        Ok(slf.clone())
    }
    fn zero_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().t;
        check_inplace_leaf(t)?;
        t.fill_(Scalar::Int(0)).py()?;
        Ok(slf.clone())
    }
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::scalar_to_py(py, self.t.item().py()?)
    }
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::tolist(py, &self.t)
    }
    #[pyo3(signature = (*, force=false))]
    fn numpy<'py>(&self, py: Python<'py>, force: bool) -> PyResult<Bound<'py, PyAny>> {
        if self.t.requires_grad() && !force {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        crate::numpy::to_numpy(py, &self.t)
    }
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(&self, py: Python<'py>, dtype: Option<&Bound<'py, PyAny>>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
        let mut a = crate::numpy::to_numpy(py, &self.t.detach())?;
        if let Some(d) = dtype {
            if !d.is_none() {
                a = a.call_method1("astype", (d,))?;
            }
        }
        if copy == Some(true) {
            a = a.call_method0("copy")?;
        }
        Ok(a)
    }
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(&self, py: Python<'py>, stream: Option<&Bound<'py, PyAny>>, max_version: Option<&Bound<'py, PyAny>>, dl_device: Option<&Bound<'py, PyAny>>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
        let _ = (stream, max_version, dl_device, copy);
        if self.t.requires_grad() {
            return Err(pyo3::exceptions::PyBufferError::new_err(
                "Can't export tensors that require gradient, use tensor.detach()",
            ));
        }
        crate::dlpack::to_capsule(py, &self.t)
    }
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        crate::dlpack::device_tuple(self.t.device())
    }

    /// `to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other)`, with keywords.
    #[pyo3(signature = (*args, dtype=None, device=None, non_blocking=false, copy=false, memory_format=None))]
    fn to<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        dtype: Option<&Bound<'py, PyAny>>,
        device: Option<&Bound<'py, PyAny>>,
        non_blocking: bool,
        copy: bool,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (non_blocking, memory_format);
        let mut dt = opt_dtype(dtype)?;
        let mut dev = crate::device::opt_device(device)?;
        for a in args.iter() {
            if a.is_none() {
                continue;
            }
            if let Ok(o) = a.cast::<PyTensor>() {
                dt = Some(o.get().t.dtype());
                dev = Some(o.get().t.device());
            } else if a.cast::<PyDType>().is_ok() {
                dt = Some(extract_dtype(&a)?);
            } else if a.is_instance_of::<pyo3::types::PyString>() {
                dev = Some(extract_device(&a)?);
            } else if let Ok(d) = extract_device(&a) {
                dev = Some(d);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "to() received an invalid combination of arguments - got ({})",
                    type_name(&a)
                )));
            }
        }
        convert::to_impl(slf, dt, dev, copy)
    }
    #[pyo3(signature = (dtype=None, non_blocking=false))]
    fn r#type<'py>(slf: &Bound<'py, Self>, dtype: Option<&Bound<'py, PyAny>>, non_blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let _ = non_blocking;
        let t = &slf.get().t;
        match dtype {
            None => Ok(pyo3::types::PyString::new(slf.py(), convert::legacy_type_name(t.dtype())).into_any()),
            Some(d) => {
                let dt = match d.extract::<String>() {
                    Ok(s) => convert::dtype_from_legacy_name(&s)?,
                    Err(_) => extract_dtype(d)?,
                };
                convert::to_impl(slf, Some(dt), None, false)
            }
        }
    }
    fn cpu<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, None, Some(Device::CPU), false)
    }
    #[pyo3(signature = (device=None, non_blocking=false))]
    fn cuda<'py>(slf: &Bound<'py, Self>, device: Option<&Bound<'py, PyAny>>, non_blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let _ = non_blocking;
        let dev = crate::device::opt_device(device)?.unwrap_or(Device { kind: ferrotorch::DeviceType::Cuda, index: None });
        convert::to_impl(slf, None, Some(dev), false)
    }
    fn float<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Float32), None, false)
    }
    fn double<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Float64), None, false)
    }
    fn half<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Float16), None, false)
    }
    fn bfloat16<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::BFloat16), None, false)
    }
    fn long<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Int64), None, false)
    }
    fn int<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Int32), None, false)
    }
    fn short<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Int16), None, false)
    }
    fn char<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Int8), None, false)
    }
    fn byte<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::UInt8), None, false)
    }
    fn bool<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_impl(slf, Some(DType::Bool), None, false)
    }

    // ----- Python protocol ------------------------------------------------------

    fn __len__(&self) -> PyResult<usize> {
        match self.t.shape().first() {
            Some(&n) => Ok(n),
            None => Err(PyTypeError::new_err("len() of a 0-d tensor")),
        }
    }
    fn __bool__(&self) -> PyResult<bool> {
        if self.t.numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with {} is ambiguous",
                if self.t.numel() == 0 { "no values" } else { "more than one value" }
            )));
        }
        Ok(self.t.item().py()?.to_bool())
    }
    fn __float__(&self) -> PyResult<f64> {
        check_one_element(&self.t)?;
        Ok(self.t.item().py()?.to_f64())
    }
    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyComplex>> {
        check_one_element(&self.t)?;
        let (re, im) = self.t.item().py()?.to_c64();
        Ok(pyo3::types::PyComplex::from_doubles(py, re, im))
    }
    fn __int__(&self) -> PyResult<i64> {
        check_one_element(&self.t)?;
        Ok(self.t.item().py()?.to_i64())
    }
    fn __index__(&self) -> PyResult<i64> {
        if self.t.dtype().is_floating_point() || self.t.numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        Ok(self.t.item().py()?.to_i64())
    }
    fn __getitem__<'py>(&self, py: Python<'py>, idx: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, index::getitem(&self.t, idx)?)
    }
    fn __setitem__(&self, idx: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        check_inplace_leaf(&self.t)?;
        index::setitem(&self.t, idx, value)
    }

    // ----- arithmetic ------------------------------------------------------------

    fn __add__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Add, false)
    }
    fn __radd__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Add, true)
    }
    fn __sub__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Sub, false)
    }
    fn __rsub__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Sub, true)
    }
    fn __mul__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Mul, false)
    }
    fn __rmul__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Mul, true)
    }
    fn __truediv__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Div, false)
    }
    fn __rtruediv__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        // PyTorch's `__rdiv__` is `self.reciprocal() * other`, not a division:
        // `0 / t` is NaN where `1 / t` overflows (a subnormal `t`), and the
        // gradient flows through `reciprocal` and `mul`.
        let Some(b) = operand(o) else {
            return Ok(py.NotImplemented().into_bound(py));
        };
        let r = unary(&self.t, UnaryOp::Reciprocal).py()?;
        wrap(py, binary(Operand::T(&r), b.as_op(), BinaryOp::Mul).py()?)
    }
    fn __pow__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>, modulo: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = modulo;
        binop(py, &self.t, o, BinaryOp::Pow, false)
    }
    fn __rpow__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>, modulo: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = modulo;
        binop(py, &self.t, o, BinaryOp::Pow, true)
    }
    fn __matmul__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.matmul(&tensor_of(o)?).py()?)
    }
    fn __rmatmul__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, tensor_of(o)?.matmul(&self.t).py()?)
    }
    fn __iadd__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<()> {
        inplace(slf, o, BinaryOp::Add).map(|_| ())
    }
    fn __isub__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<()> {
        inplace(slf, o, BinaryOp::Sub).map(|_| ())
    }
    fn __imul__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<()> {
        inplace(slf, o, BinaryOp::Mul).map(|_| ())
    }
    fn __itruediv__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<()> {
        inplace(slf, o, BinaryOp::Div).map(|_| ())
    }
    fn __neg__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Neg).py()?)
    }
    fn __abs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Abs).py()?)
    }
    fn __eq__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Eq, false)
    }
    fn __ne__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Ne, false)
    }
    fn __lt__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Lt, false)
    }
    fn __le__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Le, false)
    }
    fn __gt__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Gt, false)
    }
    fn __ge__<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Ge, false)
    }
    fn __hash__(slf: &Bound<'_, Self>) -> isize {
        slf.as_ptr() as isize
    }

    #[pyo3(signature = (other, *, alpha=None))]
    fn add<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        add_alpha(py, &self.t, other, alpha, BinaryOp::Add)
    }
    #[pyo3(signature = (other, *, alpha=None))]
    fn sub<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        add_alpha(py, &self.t, other, alpha, BinaryOp::Sub)
    }
    fn mul<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, other, BinaryOp::Mul, false)
    }
    fn div<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, other, BinaryOp::Div, false)
    }
    #[pyo3(signature = (other, *, alpha=None))]
    fn add_<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        add_alpha_(slf, other, alpha, BinaryOp::Add)
    }
    #[pyo3(signature = (other, *, alpha=None))]
    fn sub_<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>, alpha: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        add_alpha_(slf, other, alpha, BinaryOp::Sub)
    }
    fn mul_<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        inplace(slf, other, BinaryOp::Mul)
    }
    fn div_<'py>(slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        inplace(slf, other, BinaryOp::Div)
    }
    fn pow<'py>(&self, py: Python<'py>, exponent: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, exponent, BinaryOp::Pow, false)
    }
    fn eq<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Eq, false)
    }
    fn maximum<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Maximum, false)
    }
    fn minimum<'py>(&self, py: Python<'py>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        binop(py, &self.t, o, BinaryOp::Minimum, false)
    }
    fn neg<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Neg).py()?)
    }
    fn abs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Abs).py()?)
    }
    fn exp<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Exp).py()?)
    }
    fn log<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Log).py()?)
    }
    fn sqrt<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Sqrt).py()?)
    }
    fn tanh<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Tanh).py()?)
    }
    fn sigmoid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Sigmoid).py()?)
    }
    fn relu<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Relu).py()?)
    }
    fn sin<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Sin).py()?)
    }
    fn cos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, unary(&self.t, UnaryOp::Cos).py()?)
    }
    /// sum(dim=None, keepdim=False, *, dtype=None) -> Tensor
    ///
    /// Sum over ``dim`` (all dims by default).
    #[pyo3(signature = (dim=Given::Omitted, keepdim=Given::Omitted, *, dtype=None))]
    fn sum<'py>(&self, py: Python<'py>, dim: Given<'py>, keepdim: Given<'py>, dtype: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let (d, keepdim) = reduce_dims("sum", &dim, &keepdim)?;
        wrap(py, self.t.sum_dims(d.as_deref(), keepdim, opt_dtype(dtype)?).py()?)
    }
    /// mean(dim=None, keepdim=False, *, dtype=None) -> Tensor
    ///
    /// Mean over ``dim`` (all dims by default).
    #[pyo3(signature = (dim=Given::Omitted, keepdim=Given::Omitted, *, dtype=None))]
    fn mean<'py>(&self, py: Python<'py>, dim: Given<'py>, keepdim: Given<'py>, dtype: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let (d, keepdim) = reduce_dims("mean", &dim, &keepdim)?;
        wrap(py, self.t.mean_dims(d.as_deref(), keepdim, opt_dtype(dtype)?).py()?)
    }
    fn mm<'py>(&self, py: Python<'py>, mat2: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.mm(&tensor_of(mat2)?).py()?)
    }
    fn bmm<'py>(&self, py: Python<'py>, mat2: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.bmm(&tensor_of(mat2)?).py()?)
    }
    fn matmul<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        wrap(py, self.t.matmul(&tensor_of(other)?).py()?)
    }
    fn equal(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let o = tensor_of(other)?;
        if o.shape() != self.t.shape() {
            return Ok(false);
        }
        binary(Operand::T(&self.t), Operand::T(&o), BinaryOp::Eq).and_then(|r| r.all_true()).py()
    }
}

