//! `untyped_storage()`: the bytes behind a tensor, shared by all its views.

use ferrotorch::Storage;
use pyo3::prelude::*;
use std::sync::Arc;

/// A handle on a tensor's storage, as `torch.UntypedStorage`.
#[pyclass(name = "UntypedStorage", module = "ferrotorch", frozen)]
pub struct PyUntypedStorage {
    /// The shared storage.
    pub storage: Arc<Storage>,
}

#[pymethods]
impl PyUntypedStorage {
    /// Address of the first byte (0 for a `meta` storage, which has none).
    fn data_ptr(&self) -> usize {
        if self.storage.device().is_meta() {
            return 0;
        }
        self.storage.as_ptr() as usize
    }
    /// Size in bytes.
    fn nbytes(&self) -> usize {
        self.storage.nbytes()
    }
    /// Size in bytes (an untyped storage counts bytes).
    fn size(&self) -> usize {
        self.storage.nbytes()
    }
    fn __len__(&self) -> usize {
        self.storage.nbytes()
    }
    #[getter]
    fn device(&self) -> crate::device::PyDevice {
        crate::device::PyDevice { dev: self.storage.device() }
    }
    /// Byte `i` of the storage.
    fn __getitem__(&self, i: i64) -> PyResult<u8> {
        let n = self.storage.nbytes() as i64;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {i} out of range for storage of size {n}"
            )));
        }
        if self.storage.device().is_meta() {
            return Err(pyo3::exceptions::PyNotImplementedError::new_err("Not available for 'meta' device type"));
        }
        // SAFETY: 0 <= j < nbytes, and the storage has memory (not meta).
        Ok(unsafe { *self.storage.as_ptr().add(j as usize) })
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyUntypedStorage>() {
            Ok(o) => Arc::ptr_eq(&self.storage, &o.get().storage),
            Err(_) => false,
        }
    }
    fn __hash__(&self) -> usize {
        Arc::as_ptr(&self.storage) as usize
    }
    fn __repr__(&self) -> String {
        format!("ferrotorch.UntypedStorage(nbytes={}, device={})", self.storage.nbytes(), self.storage.device())
    }
}
