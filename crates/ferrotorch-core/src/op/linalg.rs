//! Descriptions of the linear-algebra decompositions, shared by the op layer
//! (which validates the operand and allocates the factors) and every
//! backend's [`LinalgKernels`](crate::backend::LinalgKernels).

use crate::error::Error;

/// One batched singular value decomposition `A = U diag(S) Vh` of `batch`
/// matrices of `m` rows and `n` columns, `k = min(m, n)` singular values
/// each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvdSpec {
    /// Number of matrices (the product of the leading dims).
    pub batch: usize,
    /// Rows of each matrix.
    pub m: usize,
    /// Columns of each matrix.
    pub n: usize,
    /// Whether `U` and `Vh` are computed at all (`svdvals` needs only `S`).
    pub compute_uv: bool,
    /// Whether `U` is square (`m x m`) and `Vh` square (`n x n`): the
    /// reduced factors extended by orthonormal columns (rows of `Vh`).
    /// Without it `U` is `m x k` and `Vh` `k x n`.
    pub full_matrices: bool,
}

impl SvdSpec {
    /// The number of singular values, `min(m, n)`.
    pub fn k(&self) -> usize {
        self.m.min(self.n)
    }

    /// Columns of `U`: `m` with [`full_matrices`](Self::full_matrices), else `k`.
    pub fn u_cols(&self) -> usize {
        if self.full_matrices {
            self.m
        } else {
            self.k()
        }
    }

    /// Rows of `Vh`: `n` with [`full_matrices`](Self::full_matrices), else `k`.
    pub fn vh_rows(&self) -> usize {
        if self.full_matrices {
            self.n
        } else {
            self.k()
        }
    }
}

/// PyTorch's error for a matrix the SVD cannot decompose (it holds NaN):
/// a `torch.linalg.LinAlgError`, naming the batch element when the input
/// had batch dims (`batch_index` is then `Some`).
pub fn svd_non_finite(batch_index: Option<usize>) -> Error {
    let prefix = batch_index.map(|b| format!("(Batch element {b}): ")).unwrap_or_default();
    Error::linalg(format!(
        "linalg.svd: {prefix}The algorithm failed to converge because the input matrix contained non-finite values."
    ))
}

/// A batched LU factorisation with partial (row) pivoting, `A = P L U`, of
/// `batch` matrices of `m` rows and `n` columns (LAPACK's `getrf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LuSpec {
    /// Number of matrices.
    pub batch: usize,
    /// Rows of each matrix.
    pub m: usize,
    /// Columns of each matrix.
    pub n: usize,
}

impl LuSpec {
    /// The number of pivots, `min(m, n)`.
    pub fn k(&self) -> usize {
        self.m.min(self.n)
    }
}

/// A batched Cholesky factorisation of `batch` symmetric positive-definite
/// `n x n` matrices: `A = L Lᵀ` read from the lower triangle, or
/// `A = Uᵀ U` read from the upper one when `upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CholeskySpec {
    /// Number of matrices.
    pub batch: usize,
    /// Order of each matrix.
    pub n: usize,
    /// Whether the upper factor is wanted (and the upper triangle read).
    pub upper: bool,
}

/// Which factors a QR decomposition returns (`torch.linalg.qr`'s `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QrMode {
    /// `Q` is `m x k` and `R` `k x n` (`k = min(m, n)`).
    Reduced,
    /// `Q` is `m x m` and `R` `m x n`.
    Complete,
    /// Only `R` (`k x n`).
    R,
}

/// A batched QR decomposition `A = Q R` of `batch` matrices `m x n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QrSpec {
    /// Number of matrices.
    pub batch: usize,
    /// Rows of each matrix.
    pub m: usize,
    /// Columns of each matrix.
    pub n: usize,
    /// Which factors, and their sizes.
    pub mode: QrMode,
}

impl QrSpec {
    /// Columns of `Q` (rows of `R`): `m` in [`QrMode::Complete`], else `min(m, n)`.
    pub fn q_cols(&self) -> usize {
        match self.mode {
            QrMode::Complete => self.m,
            _ => self.m.min(self.n),
        }
    }
}

/// A batched eigendecomposition of `batch` symmetric `n x n` matrices,
/// read from the lower triangle (or the upper one when `upper`):
/// eigenvalues ascending, with the orthonormal eigenvectors when `vectors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EighSpec {
    /// Number of matrices.
    pub batch: usize,
    /// Order of each matrix.
    pub n: usize,
    /// Whether the upper triangle holds the matrix (`UPLO='U'`).
    pub upper: bool,
    /// Whether the eigenvectors are computed.
    pub vectors: bool,
}

/// A batched general eigendecomposition (`linalg.eig`, LAPACK's `geev`)
/// of `batch` real or complex `n x n` matrices; the results are complex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EigSpec {
    /// Number of matrices.
    pub batch: usize,
    /// Order of each matrix.
    pub n: usize,
    /// Whether the eigenvectors are computed.
    pub vectors: bool,
}

/// A batched triangular solve `A X = B` for `batch` triangular `n x n`
/// matrices `A` and right-hand sides `B` of `k` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriangularSpec {
    /// Number of systems.
    pub batch: usize,
    /// Order of `A`.
    pub n: usize,
    /// Columns of `B` and `X`.
    pub k: usize,
    /// Whether `A` is upper (else lower) triangular; the other triangle is not read.
    pub upper: bool,
    /// Whether `A`'s diagonal is taken as ones (and not read).
    pub unit: bool,
}

/// A batched solve `A X = B` (or `Aᵀ X = B` when `adjoint`) from the packed
/// LU factors and pivots of `A` ([`LuSpec`] with `m = n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LuSolveSpec {
    /// Number of systems.
    pub batch: usize,
    /// Order of `A`.
    pub n: usize,
    /// Columns of `B` and `X`.
    pub k: usize,
    /// Whether `Aᵀ X = B` is solved instead.
    pub adjoint: bool,
}

/// A batched symmetric-indefinite factorisation `A = L D Lᵀ` of `batch`
/// `n x n` matrices read from their lower triangle, with Bunch–Kaufman
/// pivoting (LAPACK's `sytrf` with `UPLO='L'`): `D` is block diagonal with
/// 1x1 and 2x2 blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LdlSpec {
    /// Number of matrices.
    pub batch: usize,
    /// Order of each matrix.
    pub n: usize,
    /// Whether `A` is Hermitian (`hetrf`) rather than symmetric (`sytrf`):
    /// the two coincide for real dtypes.
    pub hermitian: bool,
}

/// A batched solve `A X = B` from the compact `L D Lᵀ` factors and pivots of
/// `A` ([`LdlSpec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LdlSolveSpec {
    /// Number of systems.
    pub batch: usize,
    /// Order of `A`.
    pub n: usize,
    /// Columns of `B` and `X`.
    pub k: usize,
    /// Whether the factors are of a Hermitian (rather than symmetric) `A`:
    /// the same for real dtypes.
    pub hermitian: bool,
}
