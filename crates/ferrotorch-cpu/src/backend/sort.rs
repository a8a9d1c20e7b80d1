//! The CPU's order-statistic kernels ([`crate::sort`]) behind the seam.

use super::Cpu;
use crate::sort;
use crate::{Dst, Src};
use ferrotorch_core::backend::SortKernels;
use ferrotorch_core::op::sort::RowSelect;
use ferrotorch_core::{DType, Result};

impl SortKernels for Cpu {
    fn select_rows(&self, sel: RowSelect, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("select_rows", dtype));
        }
        sort::select_rows(sel, x, dtype, dim, values, indices)
    }
    fn unique_count(&self, x: Src, dtype: DType) -> Result<usize> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("unique_count", dtype));
        }
        sort::unique_count(x, dtype)
    }
    fn unique(&self, x: Src, dtype: DType, values: Dst, inverse: Dst, counts: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("unique", dtype));
        }
        sort::unique(x, dtype, values, inverse, counts)
    }
}
