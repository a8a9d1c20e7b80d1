//! The CPU's order-statistic kernels ([`crate::sort`]) behind the seam.

use super::Cpu;
use crate::sort;
use crate::{Dst, Src};
use ferrotorch_core::backend::SortKernels;
use ferrotorch_core::op::sort::RowSelect;
use ferrotorch_core::{DType, Result};

impl SortKernels for Cpu {
    fn select_rows(&self, sel: RowSelect, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        sort::select_rows(sel, x, dtype, dim, values, indices)
    }
    fn unique_count(&self, x: Src, dtype: DType) -> Result<usize> {
        sort::unique_count(x, dtype)
    }
    fn unique(&self, x: Src, dtype: DType, values: Dst, inverse: Dst, counts: Dst) -> Result<()> {
        sort::unique(x, dtype, values, inverse, counts)
    }
}
