//! Indexing kernels: reads and writes at positions named by integer index
//! tensors, and the data-dependent mask ops (`nonzero`, `masked_fill_`,
//! `masked_scatter_`).
//!
//! An indexed access walks a *positions* layout (the indexed tensor's own
//! strides with the indexed dims' strides set to 0, over the broadcast
//! index shape) and adds, per position, `index[p] * stride` for each
//! [`IndexTerm`]; every position then covers a *block* of relative offsets
//! (the un-indexed dims of advanced indexing; one element otherwise). Every
//! index value is checked before any element is read or written, and the
//! first bad value (in row-major order, terms in order) is the error.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::op::index::{IndexBounds, IndexReduce};

/// One integer index operand of an indexed access.
#[derive(Clone, Copy)]
pub struct IndexTerm<'a> {
    /// int64 index values, broadcast to the positions' shape.
    pub index: Src<'a>,
    /// Element stride of the indexed dim in the indexed tensor.
    pub stride: isize,
    /// The valid values and the error for the others.
    pub bounds: IndexBounds,
}

/// PyTorch's error for `nonzero` (and everything built on it) on `meta`:
/// its output size depends on the values.
pub fn meta_nonzero_error() -> Error {
    Error::not_implemented(
        "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct data-independent implementation does not exist. This implementation returns a fake value, assuming all elements of the tensor are non-zero. To enable this registration, please set 'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.",
    )
}

/// The indexing kernels of a device.
pub trait IndexKernels {
    /// `out[p, r] = src[pos(p) + Σ terms + block(r)]`: `src.layout` is the
    /// positions layout (see the module docs), `block` the relative offsets
    /// (offset 0), and `out` holds `positions × block` elements of `dtype`
    /// in row-major order. Index values are checked even when `block` is
    /// empty.
    fn index_read(&self, dtype: DType, src: Src, terms: &[IndexTerm], block: &Layout, out: Dst) -> Result<()>;

    /// `dst[pos(p) + Σ terms + block(r)] = mode(that, vals[p, r])`, serially
    /// in row-major order so repeated positions combine deterministically
    /// (the last write wins for [`IndexReduce::Assign`]). `vals` has the
    /// positions × block elements in any layout, in `dtype`, and does not
    /// alias `dst`.
    fn index_write(&self, dtype: DType, dst: Dst, terms: &[IndexTerm], block: &Layout, vals: Src, mode: IndexReduce) -> Result<()>;

    /// The number of non-zero elements of `x`, read back to the host.
    fn count_nonzero(&self, x: Src, dtype: DType) -> Result<usize>;

    /// Row-major coordinates of the non-zero elements of `x` into the int64
    /// `out` of shape `[count_nonzero(x), x.ndim]`.
    fn nonzero(&self, x: Src, dtype: DType, out: Dst) -> Result<()>;

    /// `dst[p] = value` where the bool `mask` (broadcast to `dst`'s shape)
    /// is true; other elements (and their aliases) are not written. `value`
    /// is one element of `dtype`.
    fn masked_fill(&self, dtype: DType, dst: Dst, mask: Src, value: Src) -> Result<()>;

    /// Where the bool `mask` (broadcast to `dst`'s shape) is true, the next
    /// element of `source` (row-major, `dtype`); PyTorch's RuntimeError when
    /// `source` has fewer elements than the mask has true ones.
    fn masked_scatter(&self, dtype: DType, dst: Dst, mask: Src, source: Src) -> Result<()>;
}

impl IndexKernels for Meta {
    fn index_read(&self, _dtype: DType, _src: Src, _terms: &[IndexTerm], _block: &Layout, _out: Dst) -> Result<()> {
        Ok(())
    }
    fn index_write(&self, _dtype: DType, _dst: Dst, _terms: &[IndexTerm], _block: &Layout, _vals: Src, _mode: IndexReduce) -> Result<()> {
        Ok(())
    }
    fn count_nonzero(&self, _x: Src, _dtype: DType) -> Result<usize> {
        Err(meta_nonzero_error())
    }
    fn nonzero(&self, _x: Src, _dtype: DType, _out: Dst) -> Result<()> {
        Err(meta_nonzero_error())
    }
    fn masked_fill(&self, _dtype: DType, _dst: Dst, _mask: Src, _value: Src) -> Result<()> {
        Ok(())
    }
    fn masked_scatter(&self, _dtype: DType, _dst: Dst, _mask: Src, _source: Src) -> Result<()> {
        Ok(())
    }
}
