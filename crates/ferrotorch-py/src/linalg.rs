//! Bindings of the matrix factorisations and solves (`_C._linalg_*`).
//! They return detached factors: `ferrotorch.linalg` and `ferrotorch._svd`
//! record the gradients and make the user-facing functions.

use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap, wrap_tuple};
use pyo3::prelude::*;

/// `linalg.svd(A, full_matrices)` as `(U, S, Vh)`, or only `S` without
/// `compute_uv` (`linalg.svdvals`); detached (`ferrotorch._svd` records
/// the gradients).
#[pyfunction]
#[pyo3(signature = (input, full_matrices=true, compute_uv=true))]
pub fn _linalg_svd<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, full_matrices: bool, compute_uv: bool) -> PyResult<Bound<'py, PyAny>> {
    let a = tensor_of(input)?;
    if !compute_uv {
        return wrap(py, a.linalg_svdvals().py()?);
    }
    let (u, s, vh) = a.linalg_svd(full_matrices).py()?;
    Ok(wrap_tuple(py, vec![u, s, vh])?.into_any())
}

/// `linalg.lu_factor_ex(A)` as `(LU, pivots, info)`.
#[pyfunction]
pub fn _linalg_lu_factor_ex<'py>(py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let (lu, pivots, info) = tensor_of(input)?.linalg_lu_factor_ex().py()?;
    Ok(wrap_tuple(py, vec![lu, pivots, info])?.into_any())
}

/// `linalg.lu_solve(LU, pivots, B, adjoint=adjoint)` with `left=True`.
#[pyfunction]
#[pyo3(signature = (lu, pivots, b, adjoint=false))]
pub fn _linalg_lu_solve<'py>(py: Python<'py>, lu: &Bound<'py, PyAny>, pivots: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>, adjoint: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(lu)?.linalg_lu_solve(&tensor_of(pivots)?, &tensor_of(b)?, adjoint).py()?)
}

/// `linalg.cholesky_ex(A, upper=upper)` as `(L, info)`.
#[pyfunction]
#[pyo3(signature = (input, upper=false))]
pub fn _linalg_cholesky_ex<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, upper: bool) -> PyResult<Bound<'py, PyAny>> {
    let (l, info) = tensor_of(input)?.linalg_cholesky_ex(upper).py()?;
    Ok(wrap_tuple(py, vec![l, info])?.into_any())
}

/// `linalg.qr(A, mode)` as `(Q, R)`.
#[pyfunction]
#[pyo3(signature = (input, mode="reduced"))]
pub fn _linalg_qr<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, mode: &str) -> PyResult<Bound<'py, PyAny>> {
    let (q, r) = tensor_of(input)?.linalg_qr(mode).py()?;
    Ok(wrap_tuple(py, vec![q, r])?.into_any())
}

/// `linalg.eigh(A, UPLO)` as `(eigenvalues, eigenvectors)`, or only the
/// eigenvalues without `vectors` (`linalg.eigvalsh`).
#[pyfunction]
#[pyo3(signature = (input, upper=false, vectors=true))]
pub fn _linalg_eigh<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, upper: bool, vectors: bool) -> PyResult<Bound<'py, PyAny>> {
    let (w, v) = tensor_of(input)?.linalg_eigh(upper, vectors).py()?;
    match v {
        Some(v) => Ok(wrap_tuple(py, vec![w, v])?.into_any()),
        None => wrap(py, w),
    }
}

/// `linalg.eig(A)` as `(eigenvalues, eigenvectors)`, or only the
/// eigenvalues without `vectors` (`linalg.eigvals`).
#[pyfunction]
#[pyo3(signature = (input, vectors=true))]
pub fn _linalg_eig<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, vectors: bool) -> PyResult<Bound<'py, PyAny>> {
    let (w, v) = tensor_of(input)?.linalg_eig(vectors).py()?;
    match v {
        Some(v) => Ok(wrap_tuple(py, vec![w, v])?.into_any()),
        None => wrap(py, w),
    }
}

/// `linalg.solve_triangular(A, B, upper=upper, left=True, unitriangular=unit)`.
#[pyfunction]
#[pyo3(signature = (a, b, upper, unit=false))]
pub fn _linalg_solve_triangular<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>, upper: bool, unit: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(a)?.linalg_solve_triangular(&tensor_of(b)?, upper, unit).py()?)
}

/// `linalg.ldl_factor_ex(A, hermitian=hermitian)` as `(LD, pivots, info)`;
/// `LD` carries PyTorch's `NotImplemented` node (no derivative).
#[pyfunction]
#[pyo3(signature = (input, hermitian=false))]
pub fn _linalg_ldl_factor_ex<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, hermitian: bool) -> PyResult<Bound<'py, PyAny>> {
    let (ld, pivots, info) = tensor_of(input)?.linalg_ldl_factor_ex(hermitian).py()?;
    Ok(wrap_tuple(py, vec![ld, pivots, info])?.into_any())
}

/// `linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)`.
#[pyfunction]
#[pyo3(signature = (ld, pivots, b, hermitian=false))]
pub fn _linalg_ldl_solve<'py>(py: Python<'py>, ld: &Bound<'py, PyAny>, pivots: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>, hermitian: bool) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(ld)?.linalg_ldl_solve(&tensor_of(pivots)?, &tensor_of(b)?, hermitian).py()?)
}

/// Adds the linear-algebra bindings to `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_linalg_svd, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_lu_factor_ex, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_lu_solve, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_cholesky_ex, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_qr, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_eigh, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_eig, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_solve_triangular, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_ldl_factor_ex, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_ldl_solve, m)?)?;
    Ok(())
}
