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
