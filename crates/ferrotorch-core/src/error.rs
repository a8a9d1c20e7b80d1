//! The one error type of the engine. Each kind maps to the Python exception
//! PyTorch raises for the same mistake, so the bindings translate in one place.

use std::fmt;

/// Which Python exception an [`Error`] becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `RuntimeError`: shape mismatches, impossible views, autograd misuse.
    Runtime,
    /// `IndexError`: dimension or element index out of range.
    Index,
    /// `TypeError`: wrong argument types.
    Type,
    /// `ValueError`: values out of their domain.
    Value,
    /// `NotImplementedError`: an op without a kernel for this dtype/device.
    NotImplemented,
    /// `torch.OutOfMemoryError` (a `RuntimeError` subclass).
    OutOfMemory,
    /// `torch.linalg.LinAlgError` (a `RuntimeError` subclass): a
    /// decomposition failed on the values of its input.
    LinAlg,
}

/// An error with the message PyTorch would print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The exception type it maps to.
    pub kind: ErrorKind,
    /// Human-readable message naming the shapes or values involved.
    pub msg: String,
}

impl Error {
    /// A `RuntimeError`.
    pub fn runtime(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Runtime, msg: msg.into() }
    }
    /// An `IndexError`.
    pub fn index(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Index, msg: msg.into() }
    }
    /// A `TypeError`.
    pub fn type_error(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Type, msg: msg.into() }
    }
    /// A `ValueError`.
    pub fn value(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Value, msg: msg.into() }
    }
    /// A `NotImplementedError`.
    pub fn not_implemented(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::NotImplemented, msg: msg.into() }
    }
    /// A `torch.OutOfMemoryError`.
    pub fn out_of_memory(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::OutOfMemory, msg: msg.into() }
    }
    /// A `torch.linalg.LinAlgError`.
    pub fn linalg(msg: impl Into<String>) -> Self {
        Error { kind: ErrorKind::LinAlg, msg: msg.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

impl From<ferrotorch_alloc::OutOfMemory> for Error {
    fn from(e: ferrotorch_alloc::OutOfMemory) -> Self {
        Error { kind: ErrorKind::OutOfMemory, msg: e.to_string() }
    }
}

/// Result alias used across the engine.
pub type Result<T> = std::result::Result<T, Error>;

/// Wraps a possibly negative dimension index into `0..ndim`, with PyTorch's message.
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64; // a 0-d tensor accepts dims -1 and 0
    if dim < -n || dim >= n {
        return Err(Error::index(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {})",
            -n,
            n - 1,
            dim
        )));
    }
    Ok(if dim < 0 { (dim + n) as usize } else { dim as usize })
}

/// PyTorch's `maybe_wrap_dim(dim, ndim, wrap_scalar=false)`: for ops that need
/// an actual dim to index (`size(d)`, `stride(d)`, `roll`, `unflatten`, ...).
///
/// [`wrap_dim`] maps dims -1 and 0 of a 0-d tensor to 0 because most ops
/// treat a scalar as one element along a virtual dim; an op that then reads
/// `shape[d]` would index past an empty shape, so such ops wrap with this.
pub fn wrap_dim_no_scalar(dim: i64, ndim: usize) -> Result<usize> {
    if ndim == 0 {
        return Err(Error::index(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    wrap_dim(dim, ndim)
}

/// PyTorch's `dim_list_to_bitset`: wraps every dim of a list with [`wrap_dim`]
/// and rejects repeats, in the order given. On a 0-d tensor dims -1 and 0 both
/// wrap to 0, so naming both is a repeat, as in PyTorch.
pub fn wrap_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            return Err(Error::runtime(format!("dim {w} appears multiple times in the list of dims")));
        }
        out.push(w);
    }
    Ok(out)
}
