//! Linear-algebra decompositions (the singular value decomposition).

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::linalg::SvdSpec;

/// The linear-algebra kernels of a device.
pub trait LinalgKernels {
    /// The singular value decomposition of the `spec.batch` matrices of
    /// `a`, contiguous `(batch, m, n)` of `dtype` (float32 or float64).
    ///
    /// Writes the singular values, descending, into `s` (contiguous
    /// `(batch, k)`); with [`SvdSpec::compute_uv`], `uv` holds `Uᵀ`
    /// (contiguous `(batch, u_cols, m)`: row `j` is column `j` of `U`, so
    /// the op layer's transposed view of it is column-major as LAPACK
    /// returns `U`) and `Vh` (contiguous `(batch, vh_rows, n)`). With
    /// [`SvdSpec::full_matrices`] the columns of `U` (rows of `Vh`) past
    /// `k` extend the others to an orthonormal basis.
    ///
    /// A matrix holding NaN is an error
    /// ([`svd_non_finite`](crate::op::linalg::svd_non_finite), naming the
    /// first such batch element when `batched`); one holding infinities
    /// (and no NaN) gives NaN factors, as LAPACK does.
    fn svd(&self, spec: &SvdSpec, dtype: DType, batched: bool, a: Src, s: Dst, uv: Option<(Dst, Dst)>) -> Result<()>;
}

impl LinalgKernels for Meta {
    fn svd(&self, _spec: &SvdSpec, _dtype: DType, _batched: bool, _a: Src, _s: Dst, _uv: Option<(Dst, Dst)>) -> Result<()> {
        Ok(())
    }
}
