//! The CPU's indexing kernels ([`crate::index`]) behind the seam.

use super::Cpu;
use crate::index;
use crate::{Dst, Src};
use ferrotorch_core::backend::{IndexKernels, IndexTerm};
use ferrotorch_core::op::index::IndexReduce;
use ferrotorch_core::{DType, Layout, Result};

impl IndexKernels for Cpu {
    fn index_read(&self, dtype: DType, src: Src, terms: &[IndexTerm], block: &Layout, out: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("index_read", dtype));
        }
        index::index_read(dtype, src, terms, block, out)
    }
    fn index_write(&self, dtype: DType, dst: Dst, terms: &[IndexTerm], block: &Layout, vals: Src, mode: IndexReduce) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("index_write", dtype));
        }
        index::index_write(dtype, dst, terms, block, vals, mode)
    }
    fn count_nonzero(&self, x: Src, dtype: DType) -> Result<usize> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("count_nonzero", dtype));
        }
        Ok(index::count_nonzero(x, dtype))
    }
    fn nonzero(&self, x: Src, dtype: DType, out: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("nonzero", dtype));
        }
        index::nonzero(x, dtype, out)
    }
    fn masked_fill(&self, dtype: DType, dst: Dst, mask: Src, value: Src) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("masked_fill", dtype));
        }
        index::masked_fill(dtype, dst, mask, value)
    }
    fn masked_scatter(&self, dtype: DType, dst: Dst, mask: Src, source: Src) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("masked_scatter", dtype));
        }
        index::masked_scatter(dtype, dst, mask, source)
    }
}
