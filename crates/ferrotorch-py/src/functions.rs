//! Module-level factories (`tensor`, `zeros`, `arange`, `randn`, ...),
//! dtype utilities and the generator.

use crate::args::{index_of, number_of, shape_from_args};
use crate::convert::tensor_from_data;
use crate::device::opt_device;
use crate::dtype::{dtype_obj, extract_dtype, opt_dtype, PyDType};
use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap, PyTensor};
use ferrotorch::defaults::{default_dtype, SharedGenerator};
use ferrotorch::{DType, Device, Scalar, Tensor};
use ferrotorch_core::dtype::{result_type as core_result_type, OperandKind};
use ferrotorch_core::layout::check_sizes;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::{Arc, Mutex};

/// Raises PyTorch's error for a device this machine cannot use: without a
/// driver, "Found no NVIDIA driver on your system. ..."; past the last GPU,
/// an invalid device ordinal.
pub fn check_device(dev: Device) -> PyResult<()> {
    if dev.is_cpu() || dev.is_meta() {
        return Ok(());
    }
    let index = match dev.index {
        Some(i) => i as usize,
        None => ferrotorch_cuda::device::current_device().py()?,
    };
    ferrotorch_cuda::device::check_device(index).py()
}

/// The `out=` tensor of a factory, if one was given.
fn out_of(out: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Tensor>> {
    out.filter(|o| !o.is_none()).map(tensor_of).transpose()
}

/// A factory's dtype: `dtype=`, else `out=`'s (PyTorch fills `out` in its own
/// dtype), else `default`.
fn factory_dtype(dtype: Option<&Bound<'_, PyAny>>, out: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    Ok(match opt_dtype(dtype)? {
        Some(d) => d,
        None => out_of(out)?.map(|o| o.dtype()).unwrap_or(default),
    })
}

/// Returns a factory's result, or writes it into `out=` and returns `out`
/// (every factory goes through here so `out=` is never silently ignored).
fn finish_out<'py>(py: Python<'py>, t: Tensor, out: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let (Some(o), Some(ot)) = (out, out_of(out)?) else { return finish(py, t, requires_grad) };
    if ot.shape() != t.shape() {
        // PyTorch's resize_output: resized, with its deprecation warning when it had elements.
        if ot.numel() != 0 {
            let msg = format!(
                "An output with one or more elements was resized since it had shape {}, which does not match the required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                ferrotorch_core::layout::fmt_shape(ot.shape()),
                ferrotorch_core::layout::fmt_shape(t.shape())
            );
            let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(py, &cat, &std::ffi::CString::new(msg).unwrap_or_default(), 1)?;
        }
        ot.resize_(t.shape()).py()?;
    }
    ot.copy_(&t).py()?;
    Ok(o.clone())
}

fn finish<'py>(py: Python<'py>, t: Tensor, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    if requires_grad {
        t.set_requires_grad(true).py()?;
    }
    wrap(py, t)
}

fn sizes(args: &Bound<'_, PyTuple>, what: &str) -> PyResult<Vec<usize>> {
    if args.is_empty() {
        // `zeros()` is an error; a 0-d tensor is `zeros(())`.
        return Err(PyTypeError::new_err(format!("{what}() missing 1 required positional arguments: \"size\"")));
    }
    let s = shape_from_args(args, what)?;
    Ok(check_sizes(&s).py()?.to_vec())
}

/// `torch.tensor(data, *, dtype=None, device=None, requires_grad=False)`.
#[pyfunction]
#[pyo3(signature = (data, *, dtype=None, device=None, requires_grad=false, pin_memory=false))]
pub fn tensor<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, dtype: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool, pin_memory: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = pin_memory;
    let dev = opt_device(device)?.or_else(|| Some(crate::device::default_device()).filter(|d| *d != Device::CPU));
    let mut t = tensor_from_data(py, data, opt_dtype(dtype)?, dev)?;
    if let Some(d) = dev {
        t = on_device(t, d)?;
    }
    finish(py, t.detach(), requires_grad)
}

/// `torch.as_tensor(data, dtype=None, device=None)`: shares memory when it can.
#[pyfunction]
#[pyo3(signature = (data, dtype=None, device=None))]
pub fn as_tensor<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, dtype: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let dt = opt_dtype(dtype)?;
    if let Some(d) = opt_device(device)? {
        check_device(d)?;
    }
    if let Ok(t) = data.cast::<PyTensor>() {
        let tt = &t.get().t;
        return match dt {
            Some(d) if d != tt.dtype() => wrap(py, tt.to_dtype_preserve(d).py()?),
            _ => Ok(t.clone().into_any()),
        };
    }
    if crate::numpy::is_ndarray(py, data)? {
        let t = crate::numpy::from_numpy(py, data)?;
        return wrap(py, match dt {
            Some(d) => t.to_dtype_preserve(d).py()?,
            None => t,
        });
    }
    wrap(py, tensor_from_data(py, data, dt, None)?)
}

/// `torch.from_numpy(ndarray)`.
#[pyfunction]
pub fn from_numpy<'py>(py: Python<'py>, ndarray: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, crate::numpy::from_numpy(py, ndarray)?)
}

/// `torch.from_dlpack(ext_tensor)`.
#[pyfunction]
pub fn from_dlpack<'py>(py: Python<'py>, ext_tensor: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, crate::dlpack::from_dlpack(py, ext_tensor)?)
}

/// `t` on `dev`: itself when it is there already, else a copy. Factories
/// whose values are computed on the host (ranges, random draws) build them
/// on the CPU and move them here.
fn on_device(t: Tensor, dev: Device) -> PyResult<Tensor> {
    if t.device().kind == dev.kind {
        return Ok(t);
    }
    t.to_device(dev, t.dtype(), false).py()
}

fn cpu_device(d: Option<&Bound<'_, PyAny>>) -> PyResult<Device> {
    let dev = opt_device(d)?.unwrap_or_else(crate::device::default_device);
    check_device(dev)?;
    Ok(dev)
}

macro_rules! factory {
    ($name:ident, $doc:literal, |$shape:ident, $dt:ident, $dev:ident| $body:expr) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (*size, out=None, dtype=None, layout=None, device=None, requires_grad=false, pin_memory=false, memory_format=None))]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<'py>(
            py: Python<'py>,
            size: &Bound<'py, PyTuple>,
            out: Option<&Bound<'py, PyAny>>,
            dtype: Option<&Bound<'py, PyAny>>,
            layout: Option<&Bound<'py, PyAny>>,
            device: Option<&Bound<'py, PyAny>>,
            requires_grad: bool,
            pin_memory: bool,
            memory_format: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let _ = (layout, pin_memory, memory_format);
            let $shape = sizes(size, stringify!($name))?;
            let $dt = factory_dtype(dtype, out, default_dtype())?;
            let $dev = cpu_device(device)?;
            let t: Tensor = $body.py()?;
            finish_out(py, t, out, requires_grad)
        }
    };
}

factory!(zeros, "`torch.zeros(*size)`: a tensor filled with 0.", |s, d, dev| Tensor::zeros(&s, d, dev));
factory!(ones, "`torch.ones(*size)`: a tensor filled with 1.", |s, d, dev| Tensor::ones(&s, d, dev));
factory!(empty, "`torch.empty(*size)`: uninitialised memory from the caching pool.", |s, d, dev| Tensor::empty(&s, d, dev));

/// `torch.full(size, fill_value)`: dtype inferred from the value when not given.
#[pyfunction]
#[pyo3(signature = (size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn full<'py>(py: Python<'py>, size: &Bound<'py, PyAny>, fill_value: &Bound<'py, PyAny>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let s = check_sizes(&crate::args::int_list(size, "full")?).py()?.to_vec();
    let v = fill_value_of(fill_value, "full")?;
    let dt = factory_dtype(dtype, out, v.inferred_dtype(default_dtype()))?;
    let t = Tensor::full(&s, v, dt, cpu_device(device)?).py()?;
    finish_out(py, t, out, requires_grad)
}

fn fill_value_of(v: &Bound<'_, PyAny>, func: &str) -> PyResult<Scalar> {
    crate::args::number_arg(v, func, "fill_value", 2)
}

fn like_dtype(t: &Tensor, d: Option<&Bound<'_, PyAny>>) -> PyResult<DType> {
    Ok(opt_dtype(d)?.unwrap_or(t.dtype()))
}

macro_rules! like {
    ($name:ident, $doc:literal, |$t:ident, $dt:ident| $body:expr) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (input, *, dtype=None, layout=None, device=None, requires_grad=false, memory_format=None))]
        pub fn $name<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool, memory_format: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
            let _ = (layout, memory_format);
            let $t = tensor_of(input)?;
            let $dt = like_dtype(&$t, dtype)?;
            let dev = opt_device(device)?;
            if let Some(d) = dev {
                check_device(d)?;
            }
            let mut r: Tensor = $body.py()?;
            if let Some(d) = dev {
                r = on_device(r, d)?;
            }
            finish(py, r, requires_grad)
        }
    };
}

like!(zeros_like, "`torch.zeros_like(input)`.", |t, d| t.new_like_from(&Tensor::zeros(&[], d, Device::CPU).py()?, d));
like!(ones_like, "`torch.ones_like(input)`.", |t, d| t.new_like_from(&Tensor::ones(&[], d, Device::CPU).py()?, d));
like!(empty_like, "`torch.empty_like(input)`.", |t, d| t.empty_like(d));
like!(rand_like, "`torch.rand_like(input)`.", |t, d| t.new_like_from(&Tensor::rand(t.shape(), d, None).py()?, d));
like!(randn_like, "`torch.randn_like(input)`.", |t, d| t.new_like_from(&Tensor::randn(t.shape(), d, None).py()?, d));

/// `torch.full_like(input, fill_value)`.
#[pyfunction]
#[pyo3(signature = (input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=false, memory_format=None))]
#[allow(clippy::too_many_arguments)]
pub fn full_like<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, fill_value: &Bound<'py, PyAny>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool, memory_format: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let _ = (layout, memory_format);
    let t = tensor_of(input)?;
    let dev = opt_device(device)?;
    if let Some(d) = dev {
        check_device(d)?;
    }
    let d = like_dtype(&t, dtype)?;
    let mut r = t.full_like(fill_value_of(fill_value, "full_like")?, d).py()?;
    if let Some(d) = dev {
        r = on_device(r, d)?;
    }
    finish(py, r, requires_grad)
}

/// `torch.arange(start=0, end, step=1)`: int64 for integer arguments, else the default dtype.
#[pyfunction]
#[pyo3(signature = (*args, start=None, end=None, step=None, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn arange<'py>(py: Python<'py>, args: &Bound<'py, PyTuple>, start: Option<&Bound<'py, PyAny>>, end: Option<&Bound<'py, PyAny>>, step: Option<&Bound<'py, PyAny>>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    let num = |a: &Bound<'py, PyAny>| -> PyResult<Scalar> {
        number_of(a)
            .or_else(|| tensor_of(a).ok().and_then(|t| t.item().ok()))
            .ok_or_else(|| PyTypeError::new_err(format!("arange(): argument must be Number, not {}", crate::args::type_name(a))))
    };
    let pos = args.iter().map(|a| num(&a)).collect::<PyResult<Vec<Scalar>>>()?;
    let kw = |o: Option<&Bound<'py, PyAny>>| o.filter(|a| !a.is_none()).map(num).transpose();
    let (kstart, kend, kstep) = (kw(start)?, kw(end)?, kw(step)?);
    let (s, e, st) = match (pos.as_slice(), kstart, kend) {
        ([e], None, None) => (Scalar::Int(0), *e, kstep),
        ([s, e], None, None) => (*s, *e, kstep),
        ([s, e, st], None, None) if kstep.is_none() => (*s, *e, Some(*st)),
        ([], s, Some(e)) => (s.unwrap_or(Scalar::Int(0)), e, kstep),
        ([s], None, Some(e)) => (*s, e, kstep),
        _ => return Err(PyTypeError::new_err("arange() received an invalid combination of arguments - expected (start=0, end, step=1)")),
    };
    let st = st.unwrap_or(Scalar::Int(1));
    let all_int = [s, e, st].iter().all(|v| !v.is_float());
    let dt = factory_dtype(dtype, out, if all_int { DType::Int64 } else { default_dtype() })?;
    finish_out(py, on_device(Tensor::arange(s, e, st, dt).py()?, dev)?, out, requires_grad)
}

/// `torch.linspace(start, end, steps)`.
#[pyfunction]
#[pyo3(signature = (start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn linspace<'py>(py: Python<'py>, start: f64, end: f64, steps: i64, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    finish_out(py, on_device(Tensor::linspace(start, end, steps, factory_dtype(dtype, out, default_dtype())?).py()?, dev)?, out, requires_grad)
}

/// `torch.logspace(start, end, steps, base=10.0)`.
#[pyfunction]
#[pyo3(signature = (start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn logspace<'py>(py: Python<'py>, start: f64, end: f64, steps: i64, base: f64, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    finish_out(py, on_device(Tensor::logspace(start, end, steps, base, factory_dtype(dtype, out, default_dtype())?).py()?, dev)?, out, requires_grad)
}

/// `torch.eye(n, m=None)`.
#[pyfunction]
#[pyo3(signature = (n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn eye<'py>(py: Python<'py>, n: i64, m: Option<i64>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    let m = m.unwrap_or(n);
    if n < 0 {
        return Err(PyRuntimeError::new_err(format!("n must be greater or equal to 0, got {n}")));
    }
    if m < 0 {
        return Err(PyRuntimeError::new_err(format!("m must be greater or equal to 0, got {m}")));
    }
    finish_out(py, on_device(Tensor::eye(n as usize, m as usize, factory_dtype(dtype, out, default_dtype())?).py()?, dev)?, out, requires_grad)
}

/// A random-number generator, as `torch.Generator`.
#[pyclass(name = "Generator", module = "ferrotorch", frozen)]
pub struct PyGenerator {
    /// Shared state (the default generator is shared with the engine).
    pub g: SharedGenerator,
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (device=None))]
    fn new(device: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        cpu_device(device)?;
        Ok(PyGenerator { g: Arc::new(Mutex::new(ferrotorch_core::random::Generator::default())) })
    }
    /// Reseeds and returns the generator.
    fn manual_seed<'py>(slf: &Bound<'py, Self>, seed: i128) -> Bound<'py, Self> {
        lock(&slf.get().g).manual_seed(seed as u64);
        slf.clone()
    }
    /// The seed last set.
    fn initial_seed(&self) -> u64 {
        lock(&self.g).initial_seed()
    }
    /// Seeds from the clock and returns the seed.
    fn seed(&self) -> u64 {
        let s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        lock(&self.g).manual_seed(s);
        s
    }
    /// The state as a uint8 tensor.
    fn get_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = lock(&self.g).state();
        let bytes: Vec<u8> = s.iter().flat_map(|w| w.to_le_bytes()).collect();
        wrap(py, Tensor::from_vec(bytes, &[32]).py()?)
    }
    /// Restores a state from `get_state()`.
    fn set_state<'py>(slf: &Bound<'py, Self>, new_state: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let t = tensor_of(new_state)?;
        let b = t.to_vec::<u8>().py()?;
        if b.len() != 32 {
            return Err(PyRuntimeError::new_err("Expected a generator state of 32 bytes"));
        }
        let mut s = [0u64; 4];
        for (i, w) in s.iter_mut().enumerate() {
            *w = u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        }
        lock(&slf.get().g).set_state(s);
        Ok(slf.clone())
    }
    #[getter]
    fn device(&self) -> crate::device::PyDevice {
        crate::device::PyDevice { dev: Device::CPU }
    }
}

fn lock(g: &SharedGenerator) -> std::sync::MutexGuard<'_, ferrotorch_core::random::Generator> {
    g.lock().unwrap_or_else(|p| p.into_inner())
}

/// The default generator object.
#[pyfunction]
pub fn _default_generator() -> PyGenerator {
    PyGenerator { g: ferrotorch::defaults::default_generator().clone() }
}

fn gen_of(g: Option<&Bound<'_, PyAny>>) -> PyResult<Option<SharedGenerator>> {
    match g {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(o.cast::<PyGenerator>().map_err(|_| PyTypeError::new_err("generator must be a ferrotorch.Generator"))?.get().g.clone())),
    }
}

macro_rules! random_factory {
    ($name:ident, $doc:literal, $f:path) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=false, pin_memory=false))]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<'py>(py: Python<'py>, size: &Bound<'py, PyTuple>, generator: Option<&Bound<'py, PyAny>>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool, pin_memory: bool) -> PyResult<Bound<'py, PyAny>> {
            let _ = (layout, pin_memory);
            let dev = cpu_device(device)?;
            let s = sizes(size, stringify!($name))?;
            let g = gen_of(generator)?;
            finish_out(py, on_device($f(&s, factory_dtype(dtype, out, default_dtype())?, g.as_ref()).py()?, dev)?, out, requires_grad)
        }
    };
}

random_factory!(rand, "`torch.rand(*size)`: uniform on [0, 1).", Tensor::rand);
random_factory!(randn, "`torch.randn(*size)`: standard normal.", Tensor::randn);

/// `torch.binomial(count, prob, generator=None)` (records `NotImplemented`).
#[pyfunction]
#[pyo3(signature = (count, prob, generator=None))]
pub fn _binomial<'py>(py: Python<'py>, count: &Bound<'py, PyAny>, prob: &Bound<'py, PyAny>, generator: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let g = gen_of(generator)?;
    wrap(py, tensor_of(count)?.binomial(&tensor_of(prob)?, g.as_ref()).py()?)
}

/// `torch.poisson(input, generator=None)` (records `PoissonBackward0`).
#[pyfunction]
#[pyo3(signature = (input, generator=None))]
pub fn _poisson<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, generator: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let g = gen_of(generator)?;
    wrap(py, tensor_of(input)?.poisson(g.as_ref()).py()?)
}

/// `torch.randint(low=0, high, size)`.
#[pyfunction]
#[pyo3(signature = (*args, size=None, low=None, high=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn randint<'py>(py: Python<'py>, args: &Bound<'py, PyTuple>, size: Option<&Bound<'py, PyAny>>, low: Option<&Bound<'py, PyAny>>, high: Option<&Bound<'py, PyAny>>, generator: Option<&Bound<'py, PyAny>>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    let mut pos: Vec<Bound<'py, PyAny>> = args.iter().collect();
    if let Some(s) = size {
        pos.push(s.clone());
    }
    let bad = || PyTypeError::new_err("randint() received an invalid combination of arguments - expected (low=0, high, size)");
    let (low, high, size) = match (pos.len(), low, high) {
        (2, None, None) => (0, index_of(&pos[0])?, pos[1].clone()),
        (3, None, None) => (index_of(&pos[0])?, index_of(&pos[1])?, pos[2].clone()),
        (1, l, Some(h)) => (l.map(index_of).transpose()?.unwrap_or(0), index_of(h)?, pos[0].clone()),
        (2, None, Some(h)) => (index_of(&pos[0])?, index_of(h)?, pos[1].clone()),
        _ => return Err(bad()),
    };
    let s = check_sizes(&crate::args::int_list(&size, "randint")?).py()?.to_vec();
    let dt = factory_dtype(dtype, out, DType::Int64)?;
    let g = gen_of(generator)?;
    finish_out(py, on_device(Tensor::randint(low, high, &s, dt, g.as_ref()).py()?, dev)?, out, requires_grad)
}

/// `torch.randperm(n)`.
#[pyfunction]
#[pyo3(signature = (n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn randperm<'py>(py: Python<'py>, n: i64, generator: Option<&Bound<'py, PyAny>>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    if n < 0 {
        return Err(PyRuntimeError::new_err(format!("n must be non-negative, got{n}")));
    }
    let g = gen_of(generator)?;
    let dt = factory_dtype(dtype, out, DType::Int64)?;
    finish_out(py, on_device(Tensor::randperm(n as usize, dt, g.as_ref()).py()?, dev)?, out, requires_grad)
}

/// `torch.normal(mean, std, size)` with float mean and std.
#[pyfunction]
#[pyo3(signature = (mean, std, size, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=false))]
#[allow(clippy::too_many_arguments)]
pub fn normal<'py>(py: Python<'py>, mean: f64, std: f64, size: &Bound<'py, PyAny>, generator: Option<&Bound<'py, PyAny>>, out: Option<&Bound<'py, PyAny>>, dtype: Option<&Bound<'py, PyAny>>, layout: Option<&Bound<'py, PyAny>>, device: Option<&Bound<'py, PyAny>>, requires_grad: bool) -> PyResult<Bound<'py, PyAny>> {
    let _ = layout;
    let dev = cpu_device(device)?;
    let s = check_sizes(&crate::args::int_list(size, "normal")?).py()?.to_vec();
    let g = gen_of(generator)?;
    finish_out(py, on_device(Tensor::normal(mean, std, &s, factory_dtype(dtype, out, default_dtype())?, g.as_ref()).py()?, dev)?, out, requires_grad)
}

/// `torch.manual_seed(seed)`: seeds the default generator and returns it.
#[pyfunction]
pub fn manual_seed(seed: i128) -> PyGenerator {
    ferrotorch::defaults::manual_seed(seed as u64);
    _default_generator()
}

/// `torch.initial_seed()`.
#[pyfunction]
pub fn initial_seed() -> u64 {
    ferrotorch::defaults::with_generator(None, |g| g.initial_seed())
}

/// `torch.get_num_threads()`.
#[pyfunction]
pub fn get_num_threads() -> usize {
    ferrotorch::defaults::num_threads()
}

/// `torch.set_num_threads(n)`: PyTorch's checks (an int that is not a bool,
/// positive).
#[pyfunction]
pub fn set_num_threads(n: &Bound<'_, PyAny>) -> PyResult<()> {
    use pyo3::types::{PyBool, PyInt};
    if n.is_instance_of::<PyBool>() || !n.is_instance_of::<PyInt>() {
        let name = n.get_type().name()?;
        return Err(PyRuntimeError::new_err(format!("set_num_threads expects an int, but got {name}")));
    }
    let v: i64 = n.extract().map_err(|_| pyo3::exceptions::PyValueError::new_err("Overflow when unpacking long long"))?;
    if v <= 0 {
        return Err(PyRuntimeError::new_err("set_num_threads expects a positive integer"));
    }
    ferrotorch::defaults::set_num_threads(v as usize).py()
}

/// `torch.get_default_dtype()`.
#[pyfunction]
pub fn get_default_dtype(py: Python<'_>) -> Py<PyDType> {
    dtype_obj(py, default_dtype())
}

/// `torch.set_default_dtype(d)`.
#[pyfunction]
pub fn set_default_dtype(d: &Bound<'_, PyAny>) -> PyResult<()> {
    ferrotorch::defaults::set_default_dtype(extract_dtype(d)?).py()
}

/// `torch.promote_types(type1, type2)`.
#[pyfunction]
pub fn promote_types(py: Python<'_>, type1: &Bound<'_, PyAny>, type2: &Bound<'_, PyAny>) -> PyResult<Py<PyDType>> {
    Ok(dtype_obj(py, DType::promote(extract_dtype(type1)?, extract_dtype(type2)?)))
}

/// `torch.can_cast(from_, to)`.
#[pyfunction]
pub fn can_cast(from_: &Bound<'_, PyAny>, to: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(DType::can_cast(extract_dtype(from_)?, extract_dtype(to)?))
}

fn operand_info(o: &Bound<'_, PyAny>) -> PyResult<(DType, OperandKind)> {
    if let Ok(t) = o.cast::<PyTensor>() {
        let t = &t.get().t;
        return Ok((t.dtype(), if t.ndim() == 0 { OperandKind::ZeroDim } else { OperandKind::Dim }));
    }
    match number_of(o) {
        Some(s) => Ok((s.inferred_dtype(default_dtype()), OperandKind::Scalar)),
        None => Err(PyTypeError::new_err("result_type(): arguments must be Tensors or Numbers")),
    }
}

/// `torch.result_type(tensor1, tensor2)`.
#[pyfunction]
pub fn result_type(py: Python<'_>, tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>) -> PyResult<Py<PyDType>> {
    let r = core_result_type(&[operand_info(tensor1)?, operand_info(tensor2)?]).py()?;
    Ok(dtype_obj(py, r))
}
