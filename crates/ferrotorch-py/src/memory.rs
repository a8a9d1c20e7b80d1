//! Caching-pool statistics for `device='cpu'`, named as `torch.cuda`'s.

use crate::device::opt_device;
use ferrotorch_alloc::with_host_pool;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn check_cpu(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match opt_device(device)? {
        Some(d) if !d.is_cpu() => Err(PyRuntimeError::new_err(format!(
            "no memory pool for device '{d}': CUDA is not available"
        ))),
        _ => Ok(()),
    }
}

/// Bytes currently handed out to live tensors.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn memory_allocated(device: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    check_cpu(device)?;
    Ok(with_host_pool(|p| p.stats().allocated_bytes))
}

/// Peak of `memory_allocated` since the last reset.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn max_memory_allocated(device: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    check_cpu(device)?;
    Ok(with_host_pool(|p| p.stats().peak_allocated_bytes))
}

/// Bytes held by the pool (live plus cached).
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn memory_reserved(device: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    check_cpu(device)?;
    Ok(with_host_pool(|p| p.stats().reserved_bytes))
}

/// Peak of `memory_reserved` since the last reset.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn max_memory_reserved(device: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    check_cpu(device)?;
    Ok(with_host_pool(|p| p.stats().peak_reserved_bytes))
}

/// Resets every peak to the current value.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn reset_peak_memory_stats(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    check_cpu(device)?;
    with_host_pool(|p| p.reset_peak_stats());
    Ok(())
}

/// Returns cached, entirely free segments to the system.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn empty_cache(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    check_cpu(device)?;
    with_host_pool(|p| p.empty_cache());
    Ok(())
}

/// The pool's counters, keyed like `torch.cuda.memory_stats()`.
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn memory_stats<'py>(py: Python<'py>, device: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    check_cpu(device)?;
    stats_dict(py, &with_host_pool(|p| p.stats()))
}

/// A pool's counters as `torch.cuda.memory_stats()` names them (the `all`
/// pool), for the host pool and each CUDA device's.
pub(crate) fn stats_dict<'py>(py: Python<'py>, s: &ferrotorch_alloc::MemoryStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, cur, peak) in [
        ("allocated_bytes", s.allocated_bytes, s.peak_allocated_bytes),
        ("reserved_bytes", s.reserved_bytes, s.peak_reserved_bytes),
        ("active_bytes", s.active_bytes, s.peak_active_bytes),
        ("requested_bytes", s.requested_bytes, s.peak_requested_bytes),
    ] {
        d.set_item(format!("{k}.all.current"), cur)?;
        d.set_item(format!("{k}.all.peak"), peak)?;
    }
    d.set_item("allocation.all.allocated", s.allocation_count)?;
    d.set_item("allocation.all.freed", s.free_count)?;
    d.set_item("segment.all.current", s.segment_count)?;
    d.set_item("inactive_split_bytes.all.current", s.inactive_split_bytes)?;
    d.set_item("num_alloc_retries", s.num_alloc_retries)?;
    d.set_item("num_ooms", s.num_ooms)?;
    Ok(d)
}

/// `_tensor_from_shared_fd(fd, nbytes, dtype, size, stride, storage_offset)`:
/// a tensor over the shared storage another process sent (its descriptor,
/// duplicated into this process by multiprocessing; this takes ownership).
#[cfg(unix)]
#[pyfunction]
pub fn _tensor_from_shared_fd<'py>(
    py: Python<'py>,
    fd: i32,
    nbytes: usize,
    dtype: &Bound<'py, PyAny>,
    size: Vec<usize>,
    stride: Vec<isize>,
    storage_offset: usize,
) -> PyResult<Bound<'py, PyAny>> {
    use crate::errors::IntoPyResult;
    let dt = crate::dtype::opt_dtype(Some(dtype))?.ok_or_else(|| PyRuntimeError::new_err("dtype required"))?;
    if size.len() != stride.len() {
        return Err(PyRuntimeError::new_err(format!(
            "mismatch in length of strides and shape: {} vs {}",
            stride.len(),
            size.len()
        )));
    }
    let layout = ferrotorch_core::Layout { shape: size.into_iter().collect(), strides: stride.into_iter().collect(), offset: storage_offset };
    // SAFETY: multiprocessing's DupFd hands this process its own duplicate of the
    // descriptor, detached from any Python object, so nothing else closes it.
    let t = unsafe { ferrotorch::Tensor::from_shared_fd(fd, nbytes, dt, layout) }.py()?;
    crate::tensor::wrap(py, t)
}
