//! Householder QR decomposition (LAPACK's `geqrf` + `orgqr`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_for;
use faer::linalg::solvers::Qr;
use faer::MatRef;
use ferrotorch_core::op::linalg::{QrMode, QrSpec};

/// Decomposes each column-major `m x n` matrix of `a` into `q` (column-major
/// `m x q_cols`, absent in `QrMode::R`) and `r` (column-major `q_cols x n`,
/// zero below the diagonal).
pub fn qr<T: LinalgFloat>(spec: &QrSpec, a: &[T], q: Option<&mut [T]>, r: &mut [T]) {
    let (m, n, qc) = (spec.m, spec.n, spec.q_cols());
    let rs = Chunks::new(r, qc * n);
    let qs = q.map(|q| Chunks::new(q, m * qc));
    parallel_for(spec.batch, |b| {
        let qr = Qr::new(MatRef::from_column_major_slice(&a[b * m * n..(b + 1) * m * n], m, n));
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let r = unsafe { rs.get(b) };
        let rf = qr.R();
        for c in 0..n {
            for i in 0..qc {
                r[c * qc + i] = if i <= c && i < rf.nrows() { rf[(i, c)] } else { T::ZERO };
            }
        }
        if let Some(qs) = &qs {
            // SAFETY: as above.
            let q = unsafe { qs.get(b) };
            let qf = if spec.mode == QrMode::Complete { qr.compute_Q() } else { qr.compute_thin_Q() };
            for c in 0..qc {
                for i in 0..m {
                    q[c * m + i] = qf[(i, c)];
                }
            }
        }
    });
}
