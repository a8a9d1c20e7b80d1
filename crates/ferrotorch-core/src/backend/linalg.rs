//! Linear-algebra decompositions and solves: SVD, LU, Cholesky, QR, the
//! symmetric eigendecomposition, the symmetric-indefinite (`L D Lᵀ`)
//! factorisation, triangular, LU and `L D Lᵀ` solves.

use super::{Dst, Meta, Src};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::linalg::{CholeskySpec, EigSpec, EighSpec, LdlSolveSpec, LdlSpec, LuSolveSpec, LuSpec, QrSpec, SvdSpec, TriangularSpec};

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
    /// The LU factorisation with partial pivoting of the `spec.batch`
    /// matrices of `a` (float32/float64), `A = P L U`, as LAPACK's `getrf`.
    ///
    /// Like every method below except [`svd`](Self::svd), matrices are
    /// *column-major*: `a` and `lu` are contiguous `(batch, n, m)` buffers
    /// holding `Aᵀ` and the packed factors' transpose (`L` unit lower below
    /// the diagonal, `U` on and above it). `pivots` (int32, `(batch, k)`)
    /// gets LAPACK's 1-based row interchanges (row `i` was swapped with
    /// row `pivots[i]`, in order); `info` (int32, `(batch,)`) the 1-based
    /// index of the first zero on `U`'s diagonal, or 0.
    fn lu_factor(&self, spec: &LuSpec, dtype: DType, a: Src, lu: Dst, pivots: Dst, info: Dst) -> Result<()>;

    /// `X = A⁻¹ B` (or `A⁻ᵀ B` with [`LuSolveSpec::adjoint`]) from the
    /// column-major packed factors `lu` and the `pivots` of
    /// [`lu_factor`](Self::lu_factor); `b` and `x` are column-major
    /// (`(batch, k, n)` buffers).
    fn lu_solve(&self, spec: &LuSolveSpec, dtype: DType, lu: Src, pivots: Src, b: Src, x: Dst) -> Result<()>;

    /// The Cholesky factor of each column-major matrix of `a` into the
    /// column-major `factor` (the other triangle zero). `info` (int32,
    /// `(batch,)`) gets the order of the first leading minor that is not
    /// positive-definite, or 0; the factor of such a matrix is unspecified.
    fn cholesky(&self, spec: &CholeskySpec, dtype: DType, a: Src, factor: Dst, info: Dst) -> Result<()>;

    /// The Householder QR decomposition of each column-major matrix of `a`:
    /// `q` (column-major, `m x q_cols`; absent in [`QrMode::R`](crate::op::linalg::QrMode::R))
    /// and `r` (column-major, `q_cols x n`, zero below the diagonal).
    fn qr(&self, spec: &QrSpec, dtype: DType, a: Src, q: Option<Dst>, r: Dst) -> Result<()>;

    /// The eigenvalues (ascending, `(batch, n)`) and, with
    /// [`EighSpec::vectors`], the column-major orthonormal eigenvectors of
    /// each symmetric column-major matrix of `a`.
    fn eigh(&self, spec: &EighSpec, dtype: DType, a: Src, w: Dst, v: Option<Dst>) -> Result<()>;

    /// The eigenvalues (`(batch, n)`, complex of `dtype`'s precision) and,
    /// with [`EigSpec::vectors`], the column-major eigenvectors (unit norm,
    /// largest component real, as LAPACK's `geev`) of each column-major
    /// matrix of `a`, real or complex of `dtype`.
    fn eig(&self, spec: &EigSpec, dtype: DType, a: Src, w: Dst, v: Option<Dst>) -> Result<()>;

    /// `X = A⁻¹ B` for triangular `A` (column-major `(batch, n, n)`) and
    /// column-major `b`, `x` (`(batch, k, n)` buffers).
    fn solve_triangular(&self, spec: &TriangularSpec, dtype: DType, a: Src, b: Src, x: Dst) -> Result<()>;

    /// The Bunch–Kaufman `L D Lᵀ` factorisation of each symmetric
    /// column-major matrix of `a` (only its lower triangle read), in
    /// LAPACK's `sytrf` (`UPLO='L'`) compact form: `ld` (column-major,
    /// zero above the diagonal) holds `D`'s diagonal, the subdiagonal
    /// element of each 2x2 block of `D`, and below them the multipliers of
    /// `L = P(1) L(1) P(2) L(2) ...`. `pivots` (int32, `(batch, n)`) gets
    /// LAPACK's 1-based pivots: `p > 0` at `k` is a 1x1 block after
    /// interchanging rows and columns `k` and `p`; `-p` at `k` and `k + 1`
    /// a 2x2 block after interchanging `k + 1` and `p`. `info` (int32,
    /// `(batch,)`) gets the 1-based index of the first exactly zero
    /// diagonal block (a column that is zero, or NaN on the diagonal and zero
    /// below, as LAPACK's test evaluates), or 0.
    fn ldl_factor(&self, spec: &LdlSpec, dtype: DType, a: Src, ld: Dst, pivots: Dst, info: Dst) -> Result<()>;

    /// `X = A⁻¹ B` from the column-major compact factors `ld` and the
    /// `pivots` of [`ldl_factor`](Self::ldl_factor); `b` and `x` are
    /// column-major (`(batch, k, n)` buffers). Pivots that no factorisation
    /// produces (out of range, or a 2x2 block without its pair) are an error.
    fn ldl_solve(&self, spec: &LdlSolveSpec, dtype: DType, ld: Src, pivots: Src, b: Src, x: Dst) -> Result<()>;
}

impl LinalgKernels for Meta {
    fn svd(&self, _spec: &SvdSpec, _dtype: DType, _batched: bool, _a: Src, _s: Dst, _uv: Option<(Dst, Dst)>) -> Result<()> {
        Ok(())
    }

    fn lu_factor(&self, _spec: &LuSpec, _dtype: DType, _a: Src, _lu: Dst, _pivots: Dst, _info: Dst) -> Result<()> {
        Ok(())
    }

    fn lu_solve(&self, _spec: &LuSolveSpec, _dtype: DType, _lu: Src, _pivots: Src, _b: Src, _x: Dst) -> Result<()> {
        Ok(())
    }

    fn cholesky(&self, _spec: &CholeskySpec, _dtype: DType, _a: Src, _factor: Dst, _info: Dst) -> Result<()> {
        Ok(())
    }

    fn qr(&self, _spec: &QrSpec, _dtype: DType, _a: Src, _q: Option<Dst>, _r: Dst) -> Result<()> {
        Ok(())
    }

    fn eigh(&self, _spec: &EighSpec, _dtype: DType, _a: Src, _w: Dst, _v: Option<Dst>) -> Result<()> {
        Ok(())
    }

    fn eig(&self, _spec: &EigSpec, _dtype: DType, _a: Src, _w: Dst, _v: Option<Dst>) -> Result<()> {
        Ok(())
    }

    fn solve_triangular(&self, _spec: &TriangularSpec, _dtype: DType, _a: Src, _b: Src, _x: Dst) -> Result<()> {
        Ok(())
    }

    fn ldl_factor(&self, _spec: &LdlSpec, _dtype: DType, _a: Src, _ld: Dst, _pivots: Dst, _info: Dst) -> Result<()> {
        Ok(())
    }

    fn ldl_solve(&self, _spec: &LdlSolveSpec, _dtype: DType, _ld: Src, _pivots: Src, _b: Src, _x: Dst) -> Result<()> {
        Ok(())
    }
}
