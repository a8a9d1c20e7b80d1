//! Device discovery and the per-device state (context, stream, memory pool,
//! kernel modules), created on first use as PyTorch's lazy CUDA init.

use crate::alloc::{CudaRaw, DevicePool};
use crate::kernels::KernelCache;
use crate::library::driver_present;
use cudarc::driver::{result, sys, CudaContext, CudaStream};
use ferrotorch_alloc::CachingAllocator;
use ferrotorch_core::{Error, Result};
use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// PyTorch's message when CUDA is used on a machine without the driver.
pub const NO_DRIVER: &str = "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU \
                             and installed a driver from http://www.nvidia.com/Download/index.aspx";

/// PyTorch's message when the driver is present but sees no GPU.
pub const NO_GPU: &str = "No CUDA GPUs are available";

/// The number of CUDA devices; 0 (never a panic) without a driver or GPU.
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        if !driver_present() {
            return 0;
        }
        if result::init().is_err() {
            return 0;
        }
        result::device::get_count().map(|n| n.max(0) as usize).unwrap_or(0)
    })
}

/// Whether a CUDA device can be used (`torch.cuda.is_available()`).
pub fn is_available() -> bool {
    device_count() > 0
}

/// The error for using CUDA where there is none, in PyTorch's words.
pub fn unavailable() -> Error {
    Error::runtime(if driver_present() { NO_GPU } else { NO_DRIVER })
}

/// Checks that CUDA works and `index` names a device.
pub fn check_device(index: usize) -> Result<()> {
    let n = device_count();
    if n == 0 {
        return Err(unavailable());
    }
    if index >= n {
        return Err(Error::runtime("CUDA error: invalid device ordinal"));
    }
    Ok(())
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

/// The calling thread's current device (`torch.cuda.current_device()`).
pub fn current_device() -> Result<usize> {
    check_device(0)?;
    Ok(CURRENT.with(Cell::get))
}

/// Makes `index` the calling thread's current device.
pub fn set_device(index: usize) -> Result<()> {
    check_device(index)?;
    CURRENT.with(|c| c.set(index));
    Ok(())
}

/// Everything kept per device once it is first used.
pub struct DeviceState {
    /// Device ordinal.
    pub index: usize,
    /// Its primary context.
    pub ctx: Arc<CudaContext>,
    /// The stream kernels and copies are queued on (the legacy default
    /// stream, so host copies and `synchronize` order with it).
    pub stream: Arc<CudaStream>,
    /// Compute capability as `major * 10 + minor` (80 for sm_80).
    pub arch: u32,
    /// The caching allocator over this device's memory.
    pub pool: DevicePool,
    /// Kernel modules compiled for this device.
    pub kernels: KernelCache,
    /// The cuBLAS handle, created by the first matrix product.
    pub blas: OnceLock<crate::backend::BlasHandle>,
}

impl DeviceState {
    fn create(index: usize) -> Result<DeviceState> {
        let drv = |e: result::DriverError| Error::runtime(format!("CUDA error: {e}"));
        let ctx = CudaContext::new(index).map_err(drv)?;
        // The op layer orders work itself (one stream, host copies through
        // it), so cudarc's per-buffer event bookkeeping would only cost time.
        // SAFETY: no CudaSlice of this context exists yet, and none is ever
        // made: memory comes from our pool, not from cudarc's allocations.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx.compute_capability().map_err(drv)?;
        let stream = ctx.default_stream();
        let pool = Mutex::new(CachingAllocator::new(CudaRaw::new(ctx.clone())));
        Ok(DeviceState { index, arch: (major * 10 + minor) as u32, ctx, stream, pool, kernels: KernelCache::default(), blas: OnceLock::new() })
    }

    /// The device's total and free memory in bytes (`mem_get_info`).
    pub fn mem_info(&self) -> Result<(u64, u64)> {
        self.ctx.bind_to_thread().map_err(|e| Error::runtime(format!("CUDA error: {e}")))?;
        let (free, total) = result::mem_get_info().map_err(|e| Error::runtime(format!("CUDA error: {e}")))?;
        Ok((total as u64, free as u64))
    }

    /// Waits for all work queued on the device.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.synchronize().map_err(|e| Error::runtime(format!("CUDA error: {e}")))
    }

    /// The device's name (`get_device_name`).
    pub fn name(&self) -> Result<String> {
        self.ctx.name().map_err(|e| Error::runtime(format!("CUDA error: {e}")))
    }

    /// Streaming multiprocessors of the device.
    pub fn multiprocessor_count(&self) -> Result<i32> {
        self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    }

    /// One attribute of the device.
    pub fn attribute(&self, attr: sys::CUdevice_attribute) -> Result<i32> {
        self.ctx.attribute(attr).map_err(|e| Error::runtime(format!("CUDA error: {e}")))
    }
}

/// The state of device `index`, created on first use (PyTorch's lazy init).
pub fn state(index: usize) -> Result<&'static DeviceState> {
    static STATES: Mutex<Vec<Option<&'static DeviceState>>> = Mutex::new(Vec::new());
    check_device(index)?;
    let mut states = STATES.lock().unwrap_or_else(PoisonError::into_inner);
    if states.len() <= index {
        states.resize(index + 1, None);
    }
    if let Some(s) = states[index] {
        return Ok(s);
    }
    // Devices live as long as the process: leaking the state gives kernels
    // and storage owners a `'static` handle without reference counting.
    let s: &'static DeviceState = Box::leak(Box::new(DeviceState::create(index)?));
    states[index] = Some(s);
    let _ = INIT.set(());
    Ok(s)
}

/// The state of device `index` if it was already created (no init).
pub fn state_if_initialized(index: usize) -> Option<&'static DeviceState> {
    if !is_initialized() || index >= device_count() {
        return None;
    }
    state(index).ok()
}

/// Whether CUDA has been initialised in this process (a device's state was
/// created: by `init`, or by the first tensor or call that needed one), as
/// `torch.cuda.is_initialized`.
pub fn is_initialized() -> bool {
    INIT.get().is_some()
}

static INIT: OnceLock<()> = OnceLock::new();

/// Initialises CUDA (`torch.cuda.init()`): the current device's state.
pub fn init() -> Result<()> {
    state(current_device()?)?;
    Ok(())
}

/// The device holding device pointer `ptr` (with unified addressing every
/// device pointer is unique across devices).
pub fn device_of(ptr: *const u8) -> Result<usize> {
    if device_count() <= 1 {
        check_device(0)?;
        return Ok(0);
    }
    let mut ordinal: i32 = 0;
    // SAFETY: the driver is initialised (device_count > 1) and the call
    // writes one int for this attribute.
    let rc = unsafe {
        sys::cuPointerGetAttribute(
            (&mut ordinal as *mut i32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr as sys::CUdeviceptr,
        )
    };
    if rc != sys::CUresult::CUDA_SUCCESS {
        return Err(Error::runtime(format!("CUDA error: pointer {ptr:p} is not device memory ({rc:?})")));
    }
    Ok(ordinal as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_everything_is_an_error_not_a_panic() {
        if is_available() {
            return; // what this checks is the machine without a GPU
        }
        assert_eq!(device_count(), 0);
        let err = current_device().unwrap_err();
        assert!(err.msg == NO_DRIVER || err.msg == NO_GPU, "{}", err.msg);
        assert!(state(0).is_err());
        assert!(init().is_err());
        assert!(!is_initialized());
        assert!(set_device(0).is_err());
        assert!(device_of(std::ptr::null()).is_err());
    }
}
