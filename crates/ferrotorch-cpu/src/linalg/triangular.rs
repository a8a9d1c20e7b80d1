//! Triangular solves (LAPACK's `trtrs`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_for;
use faer::linalg::triangular_solve as tri;
use faer::{MatMut, MatRef, Par};
use ferrotorch_core::op::linalg::TriangularSpec;

/// `X = A⁻¹ B` for each triangular column-major `n x n` matrix of `a` (only
/// its `spec.upper` or lower triangle read, its diagonal taken as ones when
/// `spec.unit`) and column-major `n x k` right-hand side.
pub fn solve_triangular<T: LinalgFloat>(spec: &TriangularSpec, a: &[T], b: &[T], x: &mut [T]) {
    let (n, k) = (spec.n, spec.k);
    let xs = Chunks::new(x, n * k);
    parallel_for(spec.batch, |i| {
        // SAFETY: `i < batch`, and this task alone takes chunk `i`.
        let x = unsafe { xs.get(i) };
        x.copy_from_slice(&b[i * n * k..(i + 1) * n * k]);
        let a = MatRef::from_column_major_slice(&a[i * n * n..(i + 1) * n * n], n, n);
        let rhs = MatMut::from_column_major_slice_mut(x, n, k);
        match (spec.upper, spec.unit) {
            (true, false) => tri::solve_upper_triangular_in_place(a, rhs, Par::Seq),
            (true, true) => tri::solve_unit_upper_triangular_in_place(a, rhs, Par::Seq),
            (false, false) => tri::solve_lower_triangular_in_place(a, rhs, Par::Seq),
            (false, true) => tri::solve_unit_lower_triangular_in_place(a, rhs, Par::Seq),
        }
    });
}
