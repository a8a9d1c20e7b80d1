//! Symmetric eigendecomposition (LAPACK's `syevd`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_map;
use faer::linalg::solvers::SelfAdjointEigen;
use faer::{MatRef, Side};
use ferrotorch_core::op::linalg::EighSpec;

/// The ascending eigenvalues `w` (`n` per matrix) and, when `v` is given,
/// the column-major orthonormal eigenvectors of each symmetric column-major
/// matrix of `a` (its lower triangle, or the upper one when `spec.upper`).
///
/// A matrix holding NaN gets NaN results; one the algorithm fails on is an
/// error: the index of the first such matrix.
pub fn eigh<T: LinalgFloat>(spec: &EighSpec, a: &[T], w: &mut [T], v: Option<&mut [T]>) -> Result<(), usize> {
    let n = spec.n;
    let ws = Chunks::new(w, n);
    let vs = v.map(|v| Chunks::new(v, n * n));
    let ok = parallel_map(spec.batch, |b| {
        let mat = MatRef::from_column_major_slice(&a[b * n * n..(b + 1) * n * n], n, n);
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let w = unsafe { ws.get(b) };
        if (0..n).any(|c| (0..n).any(|r| mat[(r, c)] != mat[(r, c)])) {
            // NaN in, NaN out (as LAPACK's `syevd` gives, without an error).
            w.fill(T::nan());
            if let Some(vs) = &vs {
                // SAFETY: as above.
                unsafe { vs.get(b) }.fill(T::nan());
            }
            return true;
        }
        let side = if spec.upper { Side::Upper } else { Side::Lower };
        let Ok(evd) = SelfAdjointEigen::new(mat, side) else { return false };
        let (s, u) = (evd.S(), evd.U());
        for (i, wi) in w.iter_mut().enumerate() {
            *wi = s[i];
        }
        if let Some(vs) = &vs {
            // SAFETY: as above.
            let v = unsafe { vs.get(b) };
            for c in 0..n {
                for r in 0..n {
                    v[c * n + r] = u[(r, c)];
                }
            }
        }
        true
    });
    match ok.iter().position(|&ok| !ok) {
        Some(b) => Err(b),
        None => Ok(()),
    }
}
