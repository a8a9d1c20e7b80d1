//! `ferrotorch._C._cuda_*`: the native side of `ferrotorch.cuda` (device
//! queries, lazy initialisation, the device memory pools). Every call that
//! needs a device raises PyTorch's RuntimeError ("Found no NVIDIA driver on
//! your system...") on a machine without one; the queries that never need
//! one (`is_available`, `device_count`, `is_initialized`) never raise.

use crate::errors::IntoPyResult;
use ferrotorch_cuda::alloc::lock;
use ferrotorch_cuda::device::{self as dev, state, state_if_initialized};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Whether a CUDA device can be used.
#[pyfunction]
pub fn _cuda_is_available() -> bool {
    dev::is_available()
}

/// Number of CUDA devices (0 without a driver).
#[pyfunction]
pub fn _cuda_device_count() -> usize {
    dev::device_count()
}

/// Whether CUDA state was created in this process.
#[pyfunction]
pub fn _cuda_is_initialized() -> bool {
    dev::is_initialized()
}

/// Creates the current device's state (context, stream, pool).
#[pyfunction]
pub fn _cuda_init() -> PyResult<()> {
    dev::init().py()
}

/// The calling thread's current device.
#[pyfunction]
pub fn _cuda_current_device() -> PyResult<usize> {
    dev::current_device().py()
}

/// Makes `index` the current device, initialising it.
#[pyfunction]
pub fn _cuda_set_device(index: usize) -> PyResult<()> {
    dev::set_device(index).py()?;
    state(index).map(|_| ()).py()
}

/// Sets the current device to `index` and returns the previous one; a
/// negative index changes nothing and returns -1 (`torch.cuda.device`).
#[pyfunction]
pub fn _cuda_exchange_device(index: i64) -> PyResult<i64> {
    if index < 0 {
        return Ok(-1);
    }
    let prev = dev::current_device().py()?;
    _cuda_set_device(index as usize)?;
    Ok(prev as i64)
}

/// Waits for all work queued on device `index`.
#[pyfunction]
pub fn _cuda_synchronize(py: Python<'_>, index: usize) -> PyResult<()> {
    let s = state(index).py()?;
    py.detach(|| s.synchronize()).py()
}

/// `(name, major, minor, total_memory, multi_processor_count)` of a device.
#[pyfunction]
pub fn _cuda_device_properties(index: usize) -> PyResult<(String, u32, u32, u64, i32)> {
    let s = state(index).py()?;
    let (total, _) = s.mem_info().py()?;
    let sms = s.multiprocessor_count().py()?;
    Ok((s.name().py()?, s.arch / 10, s.arch % 10, total, sms))
}

/// `(free, total)` bytes of device `index`.
#[pyfunction]
pub fn _cuda_mem_get_info(index: usize) -> PyResult<(u64, u64)> {
    let (total, free) = state(index).py()?.mem_info().py()?;
    Ok((free, total))
}

/// Device `index`'s pool counters, keyed as `torch.cuda.memory_stats()`;
/// empty before CUDA is initialised, as PyTorch's.
#[pyfunction]
pub fn _cuda_memory_stats<'py>(py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
    match state_if_initialized(index) {
        Some(s) => crate::memory::stats_dict(py, &lock(&s.pool).stats()),
        None => Ok(PyDict::new(py)),
    }
}

/// Releases the wholly free cached segments of every initialised device.
#[pyfunction]
pub fn _cuda_empty_cache() {
    for i in 0..dev::device_count() {
        if let Some(s) = state_if_initialized(i) {
            lock(&s.pool).empty_cache();
        }
    }
}

/// Resets device `index`'s peak statistics.
#[pyfunction]
pub fn _cuda_reset_peak_memory_stats(index: usize) -> PyResult<()> {
    lock(&state(index).py()?.pool).reset_peak_stats();
    Ok(())
}

/// Resets device `index`'s accumulated counters.
#[pyfunction]
pub fn _cuda_reset_accumulated_memory_stats(index: usize) -> PyResult<()> {
    lock(&state(index).py()?.pool).reset_accumulated_stats();
    Ok(())
}

/// Loads NVRTC from `path` (the `nvidia-cuda-nvrtc` wheel's lib folder).
#[pyfunction]
pub fn _cuda_set_nvrtc_dir(path: &str) -> PyResult<()> {
    ferrotorch_cuda::library::set_nvrtc_dir(std::path::Path::new(path)).py()
}

/// Adds the `_cuda_*` functions to `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_cuda_is_available, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_device_count, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_is_initialized, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_init, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_current_device, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_set_device, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_exchange_device, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_device_properties, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_mem_get_info, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_memory_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_reset_peak_memory_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_reset_accumulated_memory_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_set_nvrtc_dir, m)?)?;
    Ok(())
}
