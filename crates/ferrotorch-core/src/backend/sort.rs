//! Order-statistic kernels: per-row selections along a dim (sort, topk,
//! kthvalue, median, mode) and `unique`.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::op::sort::RowSelect;

/// PyTorch's error for `unique` on `meta`: its output size depends on the
/// values.
pub fn meta_unique_error() -> Error {
    Error::not_implemented(
        "aten::_unique2: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered. You may have run into this message while using an operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a fake impl. Please see the following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
    )
}

/// The order-statistic kernels of a device.
pub trait SortKernels {
    /// For each row of the contiguous `x` (of `dtype`, at least 1-d) along
    /// `dim`, the positions `sel` picks into the int64 `indices` and their
    /// values into `values` (`dtype`); both contiguous, shaped like `x` with
    /// `dim` of size `sel.count(x.shape[dim])`.
    #[allow(clippy::too_many_arguments)]
    fn select_rows(&self, sel: RowSelect, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()>;

    /// The number of distinct values of `x` (NaNs all distinct), read back
    /// to the host.
    fn unique_count(&self, x: Src, dtype: DType) -> Result<usize>;

    /// The sorted distinct values of `x` (row-major order of its elements)
    /// into the 1-d `values` (`dtype`), each element's position among them
    /// into the int64 `inverse` (`x`'s numel, row-major) and each value's
    /// count into the int64 `counts`.
    fn unique(&self, x: Src, dtype: DType, values: Dst, inverse: Dst, counts: Dst) -> Result<()>;
}

impl SortKernels for Meta {
    fn select_rows(&self, _sel: RowSelect, _x: Src, _dtype: DType, _dim: usize, _values: Dst, _indices: Dst) -> Result<()> {
        Ok(())
    }
    fn unique_count(&self, _x: Src, _dtype: DType) -> Result<usize> {
        Err(meta_unique_error())
    }
    fn unique(&self, _x: Src, _dtype: DType, _values: Dst, _inverse: Dst, _counts: Dst) -> Result<()> {
        Err(meta_unique_error())
    }
}
