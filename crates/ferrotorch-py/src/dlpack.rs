//! DLPack export/import, so PyTorch and NumPy can exchange tensors with us
//! without copies. The structs follow the DLPack v0.8 ABI (`dlpack.h`).

use crate::errors::IntoPyResult;
use ferrotorch::{DType, Device, DeviceType, Layout, Storage, Tensor};
use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;
use std::ptr::NonNull;
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// What our exported capsule owns: the tensor and its shape/stride arrays.
struct ExportCtx {
    _tensor: Tensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

const K_DL_CPU: i32 = 1;
const K_DL_CUDA: i32 = 2;
const NAME: &CStr = c"dltensor";
const USED: &CStr = c"used_dltensor";

/// `__dlpack_device__()`; DLPack has no code for PyTorch's `meta` device.
pub fn device_tuple(d: Device) -> PyResult<(i32, i32)> {
    match d.kind {
        DeviceType::Cpu => Ok((K_DL_CPU, 0)),
        DeviceType::Cuda => Ok((K_DL_CUDA, d.index.unwrap_or(0) as i32)),
        DeviceType::Meta => Err(pyo3::exceptions::PyValueError::new_err("Unknown device type meta for Dlpack")),
    }
}

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8),
        DType::UInt8 => (1, 8),
        DType::Int8 => (0, 8),
        DType::Int16 => (0, 16),
        DType::Int32 => (0, 32),
        DType::Int64 => (0, 64),
        DType::Float16 => (2, 16),
        DType::Float32 => (2, 32),
        DType::Float64 => (2, 64),
        DType::BFloat16 => (4, 16),
        DType::Complex64 => (5, 64),
        DType::Complex128 => (5, 128),
    };
    DLDataType { code, bits, lanes: 1 }
}

fn from_dl_dtype(t: DLDataType) -> Option<DType> {
    if t.lanes != 1 {
        return None;
    }
    DType::ALL.into_iter().find(|&d| {
        let x = dl_dtype(d);
        x.code == t.code && x.bits == t.bits
    })
}

unsafe extern "C" fn managed_deleter(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: `m` and its ctx were created by `to_capsule` with Box::into_raw.
    let m = Box::from_raw(m);
    drop(Box::from_raw(m.manager_ctx as *mut ExportCtx));
}

unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // Only an unconsumed capsule still owns its tensor.
    if ffi::PyCapsule_IsValid(cap, NAME.as_ptr()) == 1 {
        let m = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()) as *mut DLManagedTensor;
        if !m.is_null() {
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

/// `__dlpack__()`: a "dltensor" capsule that keeps the tensor alive until the
/// consumer calls the deleter.
pub fn to_capsule<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    if t.device().is_meta() {
        return Err(pyo3::exceptions::PyBufferError::new_err("Cannot pack tensors on meta"));
    }
    if t.is_conj() {
        return Err(PyBufferError::new_err("Can't export tensors with the conjugate bit set"));
    }
    let mut ctx = Box::new(ExportCtx {
        _tensor: t.clone(),
        shape: t.shape().iter().map(|&s| s as i64).collect(),
        strides: t.strides().iter().map(|&s| s as i64).collect(),
    });
    let (dt, di) = device_tuple(t.device())?;
    let dl = DLTensor {
        data: t.storage().as_mut_ptr() as *mut c_void,
        device: DLDevice { device_type: dt, device_id: di },
        ndim: t.ndim() as i32,
        dtype: dl_dtype(t.dtype()),
        shape: ctx.shape.as_mut_ptr(),
        strides: ctx.strides.as_mut_ptr(),
        byte_offset: (t.storage_offset() * t.dtype().itemsize()) as u64,
    };
    let managed = Box::new(DLManagedTensor {
        dl_tensor: dl,
        manager_ctx: Box::into_raw(ctx) as *mut c_void,
        deleter: Some(managed_deleter),
    });
    let raw = Box::into_raw(managed);
    // SAFETY: raw is a valid DLManagedTensor; the destructor frees it unless a
    // consumer renamed the capsule to "used_dltensor" (then the consumer owns it).
    unsafe {
        let cap = ffi::PyCapsule_New(raw as *mut c_void, NAME.as_ptr(), Some(capsule_destructor));
        if cap.is_null() {
            managed_deleter(raw);
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap))
    }
}

/// Owner of imported DLPack memory: calls the producer's deleter on drop.
struct DlOwner(*mut DLManagedTensor);
// SAFETY: the DLPack contract lets the deleter run from any thread.
unsafe impl Send for DlOwner {}
unsafe impl Sync for DlOwner {}
impl Drop for DlOwner {
    fn drop(&mut self) {
        // SAFETY: self.0 came from a consumed capsule; we own it now.
        unsafe {
            if let Some(d) = (*self.0).deleter {
                d(self.0);
            }
        }
    }
}

/// `torch.from_dlpack(obj)`: zero-copy import of any DLPack producer.
pub fn from_dlpack(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let cap = if obj.hasattr("__dlpack__")? { obj.call_method0("__dlpack__")? } else { obj.clone() };
    let _ = py;
    // SAFETY: we check the capsule name before reading its pointer, and we take
    // ownership by renaming it, as the DLPack protocol prescribes.
    unsafe {
        let p = cap.as_ptr();
        if ffi::PyCapsule_IsValid(p, NAME.as_ptr()) != 1 {
            return Err(PyRuntimeError::new_err("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you might have already constructed a tensor from it once."));
        }
        let m = ffi::PyCapsule_GetPointer(p, NAME.as_ptr()) as *mut DLManagedTensor;
        if m.is_null() {
            return Err(PyErr::fetch(cap.py()));
        }
        let dl = &(*m).dl_tensor;
        if dl.device.device_type != K_DL_CPU {
            return Err(PyRuntimeError::new_err(format!(
                "from_dlpack: device type {} is not supported (only CPU)",
                dl.device.device_type
            )));
        }
        let dtype = from_dl_dtype(dl.dtype).ok_or_else(|| PyBufferError::new_err("from_dlpack: unsupported dtype"))?;
        let nd = dl.ndim.max(0) as usize;
        let shape: Vec<usize> = (0..nd).map(|i| *dl.shape.add(i) as usize).collect();
        let strides: Vec<isize> = if dl.strides.is_null() {
            ferrotorch_core::layout::contiguous_strides(&shape).to_vec()
        } else {
            (0..nd).map(|i| *dl.strides.add(i) as isize).collect()
        };
        if strides.iter().any(|&s| s < 0) {
            return Err(PyRuntimeError::new_err("from_dlpack: negative strides are not supported"));
        }
        let item = dtype.itemsize();
        if dl.byte_offset as usize % item != 0 {
            return Err(PyRuntimeError::new_err("from_dlpack: byte_offset is not a multiple of the element size"));
        }
        let layout = Layout { shape: shape.into_iter().collect(), strides: strides.into_iter().collect(), offset: dl.byte_offset as usize / item };
        let nbytes = layout.storage_span().map(|(_, hi)| hi * item).unwrap_or(0);
        let data = NonNull::new(dl.data as *mut u8).unwrap_or(NonNull::dangling());
        ffi::PyCapsule_SetName(p, USED.as_ptr() as *const c_char);
        let storage = Storage::from_foreign(data, nbytes, Device::CPU, Box::new(DlOwner(m)));
        Tensor::from_parts(Arc::new(storage), layout, dtype).py()
    }
}
