//! The op layer's side of the indexing kernels: an indexed access described
//! as a positions layout, integer index operands and a block of relative
//! offsets ([`IndexKernels`](ferrotorch_core::backend::IndexKernels)), run on
//! the tensors' backend. Nothing here reads an element: index values are
//! checked by the kernel that reads them.

use crate::ops::{broadcast_layout, common_device};
use crate::Tensor;
use ferrotorch_core::backend::IndexTerm;
use ferrotorch_core::op::index::IndexBounds;
use ferrotorch_core::{DType, Error, Layout, Result, Src};

pub use ferrotorch_core::op::index::IndexReduce as Reduce;
pub(crate) use ferrotorch_core::op::index::OutOfRange;

/// One integer index operand: its values as int64, broadcast to the
/// positions' shape.
pub(crate) struct Term {
    idx: Tensor,
    layout: Layout,
    stride: isize,
    bounds: IndexBounds,
}

impl Term {
    /// `index` (any integer dtype) broadcast to `shape`, scaled by `stride`.
    pub(crate) fn new(index: &Tensor, shape: &[usize], stride: isize, bounds: IndexBounds) -> Result<Term> {
        let idx = index.to_dtype(DType::Int64)?;
        let layout = broadcast_layout(&idx, shape)?.into_owned();
        Ok(Term { idx, layout, stride, bounds })
    }

    fn kernel(&self) -> IndexTerm<'_> {
        IndexTerm { index: Src { base: self.idx.storage().raw_ptr(), layout: &self.layout }, stride: self.stride, bounds: self.bounds }
    }
}

/// Where an indexed op reads or writes in a tensor's storage: per position
/// of `pos` (the tensor's strides with the indexed dims' set to 0), its
/// offset plus each term's `index * stride`, then every offset of `block`.
pub(crate) struct Access {
    pub pos: Layout,
    pub terms: Vec<Term>,
    pub block: Layout,
}

/// The one-element block: each position is one element.
pub(crate) fn one_element() -> Layout {
    Layout::contiguous(&[])
}

impl Access {
    /// Positions of `shape` in `x` whose coordinate along `dim` is replaced by
    /// `index` (broadcast to `shape`), one element each.
    pub(crate) fn along_dim(x: &Tensor, shape: &[usize], dim: usize, index: &Tensor, bounds: IndexBounds) -> Result<Access> {
        let mut strides = x.strides().to_vec();
        strides[dim] = 0;
        let pos = Layout { shape: shape.into(), strides: strides.into(), offset: x.storage_offset() };
        let terms = vec![Term::new(index, shape, x.strides()[dim], bounds)?];
        Ok(Access { pos, terms, block: one_element() })
    }

    fn device_check(&self, t: &Tensor) -> Result<()> {
        let mut ts: Vec<&Tensor> = vec![t];
        ts.extend(self.terms.iter().map(|k| &k.idx));
        common_device(&ts).map(|_| ())
    }

    fn kernel_terms(&self) -> Vec<IndexTerm<'_>> {
        self.terms.iter().map(Term::kernel).collect()
    }
}

/// A contiguous tensor of `shape` holding the elements `acc` addresses in
/// `src`, in row-major (position, block) order.
pub(crate) fn read_at(src: &Tensor, acc: &Access, shape: &[usize]) -> Result<Tensor> {
    acc.device_check(src)?;
    let out = Tensor::empty(shape, src.dtype(), src.device())?;
    if acc.pos.numel() * acc.block.numel() != out.numel() {
        return Err(Error::runtime("internal error: read_at offsets do not match the output shape"));
    }
    // The index terms and the block reach past `acc.pos`'s span: a
    // conjugate-bit source is resolved over its whole storage.
    let s = crate::ops::conj_bit::read_whole(src, &acc.pos)?;
    out.backend()?.index_read(src.dtype(), s.src(), &acc.kernel_terms(), &acc.block, out.operand_mut()?.dst())?;
    Ok(out)
}

/// Writes `vals` (any layout of positions × block elements, row-major) into
/// `dst`'s storage where `acc` addresses, combining by `mode`.
pub(crate) fn write_at(dst: &Tensor, acc: &Access, vals: &Tensor, mode: Reduce) -> Result<()> {
    acc.device_check(dst)?;
    common_device(&[dst, vals])?;
    if acc.pos.numel() * acc.block.numel() != vals.numel() {
        return Err(Error::runtime("internal error: write_at values do not match the offsets"));
    }
    let v = vals.to_dtype(dst.dtype())?;
    // Values that alias the destination are read from a private copy.
    let v = if std::sync::Arc::ptr_eq(v.storage(), dst.storage()) { v.clone_data()? } else { v };
    let d = crate::ops::conj_bit::write_whole(dst, &acc.pos)?;
    dst.backend()?.index_write(dst.dtype(), d.dst(), &acc.kernel_terms(), &acc.block, v.operand()?.src(), mode)?;
    dst.bump_version();
    Ok(())
}

/// Checks `index`'s values against `bounds` (a kernel pass that moves no
/// element), for paths that raise before any position is visited.
pub(crate) fn check_index_values(x: &Tensor, index: &Tensor, bounds: IndexBounds) -> Result<()> {
    let shape = [index.numel()];
    let acc = Access { pos: Layout { shape: shape[..].into(), strides: [0isize][..].into(), offset: 0 }, terms: vec![Term::new(&index.reshape(&[-1])?, &shape, 0, bounds)?], block: Layout::contiguous(&[0]) };
    read_at(x, &acc, &[0]).map(|_| ())
}

/// Row-major positions of the non-zero elements of `t`, as an `[n, ndim]`
/// int64 tensor: the backend counts them, then fills.
pub(crate) fn nonzero_raw(t: &Tensor) -> Result<Tensor> {
    let b = t.backend()?;
    let n = b.count_nonzero(t.operand()?.src(), t.dtype())?;
    let out = Tensor::empty(&[n, t.ndim()], DType::Int64, t.device())?;
    b.nonzero(t.operand()?.src(), t.dtype(), out.operand_mut()?.dst())?;
    Ok(out)
}

/// The number of non-zero elements of `t`, read back from its backend.
pub(crate) fn count_nonzero_raw(t: &Tensor) -> Result<usize> {
    t.backend()?.count_nonzero(t.operand()?.src(), t.dtype())
}
