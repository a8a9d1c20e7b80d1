//! Cholesky factorisation (LAPACK's `potrf`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_for;
use faer::linalg::cholesky::llt::factor::LltError;
use faer::linalg::solvers::Llt;
use faer::{MatRef, Side};
use ferrotorch_core::op::linalg::CholeskySpec;

/// Factorises each symmetric column-major `n x n` matrix of `a` (its lower
/// triangle, or its upper one when `spec.upper`) into the column-major
/// triangular `factor` and `info` (the order of the first leading minor
/// that is not positive-definite, or 0; that matrix's factor is left zero).
pub fn cholesky<T: LinalgFloat>(spec: &CholeskySpec, a: &[T], factor: &mut [T], info: &mut [i32]) {
    let n = spec.n;
    let (fs, infos) = (Chunks::new(factor, n * n), Chunks::new(info, 1));
    parallel_for(spec.batch, |b| {
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let (f, info) = unsafe { (fs.get(b), infos.get(b)) };
        f.fill(T::ZERO);
        let mat = MatRef::from_column_major_slice(&a[b * n * n..(b + 1) * n * n], n, n);
        // `Side::Upper` reads the upper triangle (faer factorises its adjoint).
        let side = if spec.upper { Side::Upper } else { Side::Lower };
        match Llt::new(mat, side) {
            Ok(llt) => {
                info[0] = 0;
                let l = llt.L();
                for c in 0..n {
                    for r in c..n {
                        // The upper factor is Lᵀ.
                        let (i, j) = if spec.upper { (c, r) } else { (r, c) };
                        f[j * n + i] = l[(r, c)];
                    }
                }
            }
            Err(LltError::NonPositivePivot { index }) => info[0] = index as i32 + 1,
        }
    });
}
