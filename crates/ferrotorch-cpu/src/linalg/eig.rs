//! General (non-symmetric) eigendecomposition (LAPACK's `geev`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_map;
use faer::linalg::solvers::Eigen;
use faer::MatRef;
use ferrotorch_core::num_complex::Complex;
use ferrotorch_core::op::linalg::EigSpec;

/// The eigenvalues `w` (`n` per matrix) and, when `v` is given, the
/// column-major eigenvectors (each of unit Euclidean norm, as LAPACK's) of
/// each column-major matrix of `a`: real (`re_a`) or complex (`cplx_a`).
///
/// A matrix holding NaN or infinities gets NaN results; one the algorithm
/// fails on is an error: the index of the first such matrix.
pub fn eig<T: LinalgFloat>(spec: &EigSpec, re_a: Option<&[T]>, cplx_a: Option<&[Complex<T>]>, w: &mut [Complex<T>], v: Option<&mut [Complex<T>]>) -> Result<(), usize> {
    let n = spec.n;
    let ws = Chunks::new(w, n);
    let vs = v.map(|v| Chunks::new(v, n * n));
    let ok = parallel_map(spec.batch, |b| {
        let range = b * n * n..(b + 1) * n * n;
        let evd = match (re_a, cplx_a) {
            (Some(a), _) => {
                let mat = MatRef::from_column_major_slice(&a[range], n, n);
                if (0..n).any(|c| (0..n).any(|r| !mat[(r, c)].finite())) {
                    None
                } else {
                    Some(Eigen::new_from_real(mat))
                }
            }
            (None, Some(a)) => {
                let mat = MatRef::from_column_major_slice(&a[range], n, n);
                if (0..n).any(|c| (0..n).any(|r| !(mat[(r, c)].re.finite() && mat[(r, c)].im.finite()))) {
                    None
                } else {
                    Some(Eigen::new(mat))
                }
            }
            (None, None) => return false,
        };
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let w = unsafe { ws.get(b) };
        let nan = Complex::new(T::nan(), T::nan());
        let Some(evd) = evd else {
            w.fill(nan);
            if let Some(vs) = &vs {
                // SAFETY: as above.
                unsafe { vs.get(b) }.fill(nan);
            }
            return true;
        };
        let Ok(evd) = evd else { return false };
        let (s, u) = (evd.S(), evd.U());
        for (i, wi) in w.iter_mut().enumerate() {
            *wi = s[i];
        }
        if let Some(vs) = &vs {
            // SAFETY: as above.
            let v = unsafe { vs.get(b) };
            for c in 0..n {
                // As LAPACK's `geev` returns them: unit Euclidean norm, and
                // the component of largest modulus real (the phase is free).
                let col: Vec<Complex<f64>> = (0..n).map(|r| Complex::new(u[(r, c)].re.to_f64(), u[(r, c)].im.to_f64())).collect();
                let norm = col.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
                let big = col.iter().copied().fold(Complex::new(0.0, 0.0), |m, z| if z.norm_sqr() > m.norm_sqr() { z } else { m });
                let scale = if norm > 0.0 && big.norm() > 0.0 { big.conj() / (big.norm() * norm) } else { Complex::new(1.0, 0.0) };
                for (r, z) in col.iter().enumerate() {
                    let x = z * scale;
                    v[c * n + r] = Complex::new(T::from_f64(x.re), T::from_f64(x.im));
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
