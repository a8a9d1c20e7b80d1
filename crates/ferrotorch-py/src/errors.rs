//! The one place where engine errors become Python exceptions.

use ferrotorch::{Error, ErrorKind};
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::PyErr;

pyo3::create_exception!(ferrotorch, OutOfMemoryError, PyRuntimeError, "The caching allocator could not satisfy a request.");
// PyTorch's class is `torch._C._LinAlgError`, exposed as `torch.linalg.LinAlgError`.
#[allow(non_camel_case_types)]
mod linalg_error {
    pyo3::create_exception!(torch._C, _LinAlgError, pyo3::exceptions::PyRuntimeError, "Error from a linear algebra routine (`torch.linalg.LinAlgError`).");
}
pub use linalg_error::_LinAlgError as LinAlgError;

/// Converts an engine error to the exception type PyTorch raises for it.
pub fn to_py(e: Error) -> PyErr {
    match e.kind {
        ErrorKind::Runtime => PyRuntimeError::new_err(e.msg),
        ErrorKind::Index => PyIndexError::new_err(e.msg),
        ErrorKind::Type => PyTypeError::new_err(e.msg),
        ErrorKind::Value => PyValueError::new_err(e.msg),
        ErrorKind::NotImplemented => PyNotImplementedError::new_err(e.msg),
        ErrorKind::OutOfMemory => OutOfMemoryError::new_err(e.msg),
        ErrorKind::LinAlg => LinAlgError::new_err(e.msg),
    }
}

/// `?`-friendly conversion: `engine_call().map_err(to_py)?` spelled `.py()?`.
pub trait IntoPyResult<T> {
    /// Maps the engine error to a Python exception.
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for ferrotorch::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
