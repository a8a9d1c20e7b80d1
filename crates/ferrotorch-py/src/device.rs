//! `ferrotorch.device` objects.

use crate::errors::IntoPyResult;
use ferrotorch::Device;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

/// A device, as `torch.device('cuda:0')`.
#[pyclass(name = "device", module = "ferrotorch", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
pub struct PyDevice {
    /// The engine device.
    pub dev: Device,
}

#[pymethods]
impl PyDevice {
    #[new]
    #[pyo3(signature = (r#type, index=None))]
    fn new(r#type: &Bound<'_, PyAny>, index: Option<i64>) -> PyResult<Self> {
        if let Ok(d) = r#type.cast::<PyDevice>() {
            return Ok(*d.get());
        }
        if let Ok(i) = r#type.cast::<PyInt>() {
            return Ok(PyDevice { dev: accelerator_index(i.extract()?)? });
        }
        let s: String = r#type.extract().map_err(|_| PyTypeError::new_err("device() received an invalid combination of arguments"))?;
        let mut dev = Device::parse(&s).py()?;
        if let Some(i) = index {
            if dev.index.is_some() {
                return Err(PyRuntimeError::new_err(format!(
                    "type (string) must not include an index because index was passed explicitly: {s}"
                )));
            }
            if i < 0 {
                return Err(PyRuntimeError::new_err("Device index must not be negative"));
            }
            dev = Device::new(dev.kind, Some(i as u32)).py()?;
        }
        Ok(PyDevice { dev })
    }
    #[getter]
    fn r#type(&self) -> &'static str {
        self.dev.type_name()
    }
    #[getter]
    fn index(&self) -> Option<u32> {
        self.dev.index
    }
    fn __repr__(&self) -> String {
        match self.dev.index {
            Some(i) => format!("device(type='{}', index={})", self.dev.type_name(), i),
            None => format!("device(type='{}')", self.dev.type_name()),
        }
    }
    fn __str__(&self) -> String {
        self.dev.to_string()
    }
}

/// `torch.set_default_device`: where factories put tensors when no `device=`
/// is given (None: the CPU). Process-wide, as PyTorch's global default.
static DEFAULT_DEVICE: std::sync::Mutex<Option<Device>> = std::sync::Mutex::new(None);

/// The device factories use when none is given.
pub fn default_device() -> Device {
    DEFAULT_DEVICE.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or(Device::CPU)
}

/// `torch.set_default_device(device)`; None restores the CPU.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn _set_default_device(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let d = opt_device(device)?;
    *DEFAULT_DEVICE.lock().unwrap_or_else(|e| e.into_inner()) = d;
    Ok(())
}

/// `torch.get_default_device()`.
#[pyfunction]
pub fn _get_default_device() -> PyDevice {
    PyDevice { dev: default_device() }
}

/// A bare integer names a device of the current accelerator, as in PyTorch;
/// this build has none, so it is PyTorch's error on a machine without one.
fn accelerator_index(i: i64) -> PyResult<Device> {
    if i < 0 {
        return Err(PyRuntimeError::new_err("Device index must not be negative"));
    }
    Err(PyRuntimeError::new_err("Cannot access accelerator device when none is available."))
}

/// Accepts a device object, a string, or an int (a CUDA index).
pub fn extract_device(obj: &Bound<'_, PyAny>) -> PyResult<Device> {
    if let Ok(d) = obj.cast::<PyDevice>() {
        return Ok(d.get().dev);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Device::parse(&s.to_cow()?).py();
    }
    if let Ok(i) = obj.extract::<i64>() {
        return accelerator_index(i);
    }
    Err(PyTypeError::new_err(format!("expected a device, got {}", obj.get_type().name()?)))
}

/// Optional device argument (None → CPU).
pub fn opt_device(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Device>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => extract_device(o).map(Some),
    }
}
