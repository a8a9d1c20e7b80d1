//! The singular value decomposition in double precision, one matrix of the
//! batch per task: one-sided (Hestenes) Jacobi rotations for small matrices,
//! `faer`'s bidiagonalising SVD from [`JACOBI_MAX`] singular values up.
//!
//! Jacobi is accurate (high relative accuracy for the singular values) and
//! simple, but costs O(sweeps * min(m, n)^2 * max(m, n)) per matrix, 13x
//! LAPACK's time at 512 x 512; `faer` is backward stable, as LAPACK's
//! `gesdd` is, and as fast. Float32 inputs are widened to float64 and the
//! factors rounded once at the end. The sums are plain left-to-right loops
//! so the results do not depend on the thread count.

use ferrotorch_core::op::linalg::SvdSpec;

/// The largest `min(m, n)` decomposed by Jacobi rotations; larger matrices
/// go to `faer`.
pub const JACOBI_MAX: usize = 32;

/// Unit roundoff of float64; the rotation threshold is `EPS * rows`.
const EPS: f64 = 2.220446049250313e-16;
/// Sweeps before giving up on convergence (the rotations are then as good
/// as they get; no error, as LAPACK's one-sided Jacobi also returns).
const MAX_SWEEPS: usize = 80;
/// A basis vector is kept by [`complete`] when its residual after
/// orthogonalisation is longer than this.
const COMPLETE_TOL: f64 = 1e-8;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = 0.0;
    for (x, y) in a.iter().zip(b) {
        acc += x * y;
    }
    acc
}

/// `v -= (u . v) u` for every `u` of `basis` (`len`-long vectors packed end
/// to end), twice: modified Gram-Schmidt with one reorthogonalisation,
/// enough for an orthonormal basis in double precision.
fn orthogonalise(v: &mut [f64], basis: &[f64], len: usize) {
    for _ in 0..2 {
        for u in basis.chunks_exact(len) {
            let d = dot(u, v);
            for (x, y) in v.iter_mut().zip(u) {
                *x -= d * y;
            }
        }
    }
}

/// `(x, y) <- (c x - s y, s x + c y)` on vectors `p < q` of `buf` (each
/// `len` long).
fn rotate(buf: &mut [f64], len: usize, p: usize, q: usize, c: f64, s: f64) {
    let (lo, hi) = buf.split_at_mut(q * len);
    let xp = &mut lo[p * len..(p + 1) * len];
    let xq = &mut hi[..len];
    for (x, y) in xp.iter_mut().zip(xq.iter_mut()) {
        let (a, b) = (*x, *y);
        *x = c * a - s * b;
        *y = s * a + c * b;
    }
}

/// The decomposition of the `n` columns `cols` (each `rows >= n` long,
/// packed end to end) as Jacobi leaves it.
struct Jacobi {
    /// Singular values, descending.
    s: Vec<f64>,
    /// `n` orthonormal vectors of length `rows`, in the order of `s`
    /// (empty unless the vectors were asked for).
    left: Vec<f64>,
    /// The `n` columns of the orthogonal `V`, each `n` long, in the order
    /// of `s` (empty unless asked for).
    right: Vec<f64>,
}

/// One-sided Jacobi on `cols`: rotates pairs of columns until all are
/// mutually orthogonal (to `EPS * rows` relative to their norms), tracking
/// the rotations in `V` when `vectors`.
fn jacobi(mut cols: Vec<f64>, n: usize, rows: usize, vectors: bool) -> Jacobi {
    let mut v = vec![0.0; if vectors { n * n } else { 0 }];
    if vectors {
        for j in 0..n {
            v[j * n + j] = 1.0;
        }
    }
    let tol = EPS * rows as f64;
    let mut nrm = vec![0.0; n];
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for (j, c) in cols.chunks_exact(rows).enumerate() {
            nrm[j] = dot(c, c);
        }
        for p in 0..n.saturating_sub(1) {
            for q in p + 1..n {
                let gamma = dot(&cols[p * rows..(p + 1) * rows], &cols[q * rows..(q + 1) * rows]);
                if gamma == 0.0 {
                    continue;
                }
                let (alpha, beta) = (nrm[p], nrm[q]);
                if gamma.abs() <= tol * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                // For a huge zeta, 1 + zeta^2 overflows; t ~ 1 / (2 zeta) then.
                let t = if zeta.abs() > 1e150 { 0.5 / zeta } else { 1f64.copysign(zeta) / (zeta.abs() + (1.0 + zeta * zeta).sqrt()) };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                nrm[p] = alpha - t * gamma;
                nrm[q] = beta + t * gamma;
                rotate(&mut cols, rows, p, q, c, s);
                if vectors {
                    rotate(&mut v, n, p, q, c, s);
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = cols.chunks_exact(rows).map(|c| dot(c, c).sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    // Stable, so equal values keep their column order.
    order.sort_by(|&i, &j| norms[j].partial_cmp(&norms[i]).unwrap_or(std::cmp::Ordering::Equal));
    let s: Vec<f64> = order.iter().map(|&j| norms[j]).collect();
    if !vectors {
        return Jacobi { s, left: Vec::new(), right: Vec::new() };
    }
    let right: Vec<f64> = order.iter().flat_map(|&j| v[j * n..(j + 1) * n].iter().copied()).collect();
    let smax = s.first().copied().unwrap_or(0.0);
    let mut left = vec![0.0; n * rows];
    let mut known = vec![false; n];
    for (i, (&j, &sj)) in order.iter().zip(&s).enumerate() {
        if sj > 0.0 && sj > smax * EPS * 1e-3 {
            for (dst, x) in left[i * rows..(i + 1) * rows].iter_mut().zip(&cols[j * rows..(j + 1) * rows]) {
                *dst = x / sj;
            }
            known[i] = true;
        }
    }
    // The vectors of (numerically) zero singular values: the unit vector
    // farthest from the span of the others (the first whose residual is
    // longer than 1/2, else the longest), orthonormalised.
    for i in 0..n {
        if known[i] {
            continue;
        }
        let basis: Vec<f64> = (0..n).filter(|&j| known[j]).flat_map(|j| left[j * rows..(j + 1) * rows].iter().copied()).collect();
        let mut best: Option<(f64, Vec<f64>)> = None;
        for e in 0..rows {
            let mut w = vec![0.0; rows];
            w[e] = 1.0;
            orthogonalise(&mut w, &basis, rows);
            let nw = dot(&w, &w).sqrt();
            let longer = best.as_ref().is_none_or(|(nb, _)| nw > *nb);
            if longer {
                best = Some((nw, w));
            }
            if nw > 0.5 {
                break;
            }
        }
        if let Some((nb, w)) = best {
            for (dst, x) in left[i * rows..(i + 1) * rows].iter_mut().zip(&w) {
                *dst = x / nb;
            }
        }
        known[i] = true;
    }
    Jacobi { s, left, right }
}

/// Appends unit vectors orthogonalised against `basis` (`len`-long
/// orthonormal vectors packed end to end) until there are `len` of them:
/// `e_0, e_1, ...` in turn, skipping those already in the span. A basis
/// holding NaN (the factors of an infinite input) is completed with NaN.
fn complete(basis: &mut Vec<f64>, len: usize) {
    let target = len * len;
    if basis.iter().all(|x| x.is_finite()) {
        let mut e = 0;
        while basis.len() < target && e < len {
            let mut v = vec![0.0; len];
            v[e] = 1.0;
            e += 1;
            orthogonalise(&mut v, basis, len);
            let nv = dot(&v, &v).sqrt();
            if nv > COMPLETE_TOL {
                basis.extend(v.iter().map(|x| x / nv));
            }
        }
    }
    basis.resize(target, f64::NAN);
}

/// The factors of one matrix, in float64: `s` (`k`), the columns of `U`
/// (`u_cols` vectors of length `m`) and the rows of `Vh` (`vh_rows`
/// vectors of length `n`), the last two empty without `compute_uv`.
pub struct SvdOne {
    /// Singular values, descending.
    pub s: Vec<f64>,
    /// Columns of `U`, end to end.
    pub u: Vec<f64>,
    /// Rows of `Vh`, end to end.
    pub vh: Vec<f64>,
}

/// The decomposition of the row-major `m x n` matrix `a` (float64 values),
/// `None` when it holds NaN. `round` is the output dtype's rounding: the
/// extra columns of a full `U` (rows of `Vh`) are built against the rounded
/// reduced ones, so that together they are orthonormal in that dtype.
pub fn svd_one(spec: &SvdSpec, a: &[f64], round: fn(f64) -> f64) -> Option<SvdOne> {
    let (m, n, k) = (spec.m, spec.n, spec.k());
    if a.iter().any(|x| x.is_nan()) {
        return None;
    }
    let uv = spec.compute_uv;
    let (mut s, mut u, mut vh) = (Vec::new(), Vec::new(), Vec::new());
    if k > 0 {
        let scale = a.iter().fold(0.0f64, |acc, x| acc.max(x.abs()));
        if scale.is_infinite() {
            // LAPACK returns NaN factors for infinite entries rather than failing.
            s = vec![f64::NAN; k];
            if uv {
                u = vec![f64::NAN; k * m];
                vh = vec![f64::NAN; k * n];
            }
        } else {
            // Scaling by the largest magnitude keeps the squared norms of the
            // rotations clear of overflow and underflow.
            let scale = if scale == 0.0 { 1.0 } else { scale };
            if k > JACOBI_MAX {
                return faer_svd(spec, a, scale);
            }
            let j = if m >= n {
                let mut cols = vec![0.0; n * m];
                for (i, row) in a.chunks_exact(n).enumerate() {
                    for (jj, x) in row.iter().enumerate() {
                        cols[jj * m + i] = x / scale;
                    }
                }
                jacobi(cols, n, m, uv)
            } else {
                // Aᵀ = U' S V'ᵀ, so A = V' S U'ᵀ: the rows of A are the columns to rotate.
                jacobi(a.iter().map(|x| x / scale).collect(), m, n, uv)
            };
            s = j.s.iter().map(|x| x * scale).collect();
            if m >= n {
                (u, vh) = (j.left, j.right);
            } else {
                (u, vh) = (j.right, j.left);
            }
        }
    }
    if uv && spec.full_matrices {
        if m > k {
            u.iter_mut().for_each(|x| *x = round(*x));
            complete(&mut u, m);
        } else if n > k {
            vh.iter_mut().for_each(|x| *x = round(*x));
            complete(&mut vh, n);
        }
    }
    Some(SvdOne { s, u, vh })
}

/// The decomposition of a large matrix by `faer` (see the module doc), of
/// `a / scale`; `None` if `faer` does not converge.
fn faer_svd(spec: &SvdSpec, a: &[f64], scale: f64) -> Option<SvdOne> {
    use faer::linalg::solvers::Svd;
    let (m, n, k) = (spec.m, spec.n, spec.k());
    let scaled: Vec<f64> = a.iter().map(|x| x / scale).collect();
    let mat = faer::MatRef::from_row_major_slice(&scaled, m, n);
    if !spec.compute_uv {
        let s = mat.singular_values().ok()?;
        return Some(SvdOne { s: s.iter().map(|x| x * scale).collect(), u: Vec::new(), vh: Vec::new() });
    }
    let svd = if spec.full_matrices { Svd::new(mat) } else { Svd::new_thin(mat) }.ok()?;
    let (u, sv, v) = (svd.U(), svd.S(), svd.V());
    let (uc, vr) = (spec.u_cols(), spec.vh_rows());
    let mut ut = vec![0.0; uc * m];
    for l in 0..uc {
        for i in 0..m {
            ut[l * m + i] = u[(i, l)];
        }
    }
    let mut vh = vec![0.0; vr * n];
    for l in 0..vr {
        for j in 0..n {
            vh[l * n + j] = v[(j, l)];
        }
    }
    Some(SvdOne { s: (0..k).map(|i| sv[i] * scale).collect(), u: ut, vh })
}

/// The batched decomposition: `a` holds `spec.batch` row-major matrices;
/// the factors of each go to `s` (`k` each), `ut` (`u_cols x m` each: row
/// `j` is column `j` of `U`) and `vh` (`vh_rows x n` each), the last two
/// only with `compute_uv`. `Err(b)` names the first matrix holding NaN.
pub fn svd<T: Copy + Send + Sync>(
    spec: &SvdSpec,
    a: &[T],
    s: &mut [T],
    uv: Option<(&mut [T], &mut [T])>,
    widen: fn(T) -> f64,
    narrow: fn(f64) -> T,
    round: fn(f64) -> f64,
) -> Result<(), usize> {
    let (m, n, k) = (spec.m, spec.n, spec.k());
    let mn = m * n;
    let results = crate::parallel::parallel_map(spec.batch, |b| {
        let mat: Vec<f64> = a[b * mn..(b + 1) * mn].iter().map(|&x| widen(x)).collect();
        svd_one(spec, &mat, round)
    });
    let write = |dst: &mut [T], src: &[f64]| dst.iter_mut().zip(src).for_each(|(d, &x)| *d = narrow(x));
    let (ulen, vlen) = (spec.u_cols() * m, spec.vh_rows() * n);
    let mut uv = uv;
    for (b, r) in results.into_iter().enumerate() {
        let r = r.ok_or(b)?;
        write(&mut s[b * k..(b + 1) * k], &r.s);
        if let Some((ut, vh)) = uv.as_mut() {
            write(&mut ut[b * ulen..(b + 1) * ulen], &r.u);
            write(&mut vh[b * vlen..(b + 1) * vlen], &r.vh);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(m: usize, n: usize, full: bool) -> SvdSpec {
        SvdSpec { batch: 1, m, n, compute_uv: true, full_matrices: full }
    }

    /// `U diag(S) Vh` from the packed factors (`U` by columns).
    fn rebuild(r: &SvdOne, m: usize, n: usize) -> Vec<f64> {
        let k = r.s.len();
        let mut a = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                a[i * n + j] = (0..k).map(|l| r.u[l * m + i] * r.s[l] * r.vh[l * n + j]).sum();
            }
        }
        a
    }

    /// Max deviation of the `count` vectors of length `len` from orthonormal.
    fn orth_err(v: &[f64], count: usize, len: usize) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..count {
            for j in 0..count {
                let d = dot(&v[i * len..(i + 1) * len], &v[j * len..(j + 1) * len]);
                worst = worst.max((d - if i == j { 1.0 } else { 0.0 }).abs());
            }
        }
        worst
    }

    fn matrix(m: usize, n: usize) -> Vec<f64> {
        // Deterministic, full-rank-ish entries.
        (0..m * n).map(|i| ((i * 7919 % 113) as f64 - 56.0) / 17.0 + if i % (n + 1) == 0 { 3.0 } else { 0.0 }).collect()
    }

    #[test]
    fn reconstructs_and_orthonormal() {
        for &(m, n) in &[(1, 1), (3, 3), (5, 3), (3, 5), (8, 8), (12, 9), (1, 7), (7, 1), (40, 36), (36, 40)] {
            for full in [false, true] {
                let a = matrix(m, n);
                let r = svd_one(&spec(m, n, full), &a, |x| x).expect("finite input");
                let k = m.min(n);
                assert_eq!(r.s.len(), k);
                assert!(r.s.windows(2).all(|w| w[0] >= w[1]), "descending {:?}", r.s);
                let (uc, vr) = if full { (m, n) } else { (k, k) };
                assert_eq!(r.u.len(), uc * m);
                assert_eq!(r.vh.len(), vr * n);
                assert!(orth_err(&r.u, uc, m) < 1e-12, "U of {m}x{n}");
                assert!(orth_err(&r.vh, vr, n) < 1e-12, "Vh of {m}x{n}");
                let back = rebuild(&r, m, n);
                let scale = a.iter().fold(0.0f64, |s, x| s.max(x.abs()));
                for (x, y) in back.iter().zip(&a) {
                    assert!((x - y).abs() <= 1e-12 * scale, "{m}x{n}: {x} vs {y}");
                }
            }
        }
    }

    #[test]
    fn diagonal_matrix() {
        // diag(1, -3, 2) in a 4x3: singular values 3, 2, 1.
        let mut a = vec![0.0; 12];
        a[0] = 1.0;
        a[4] = -3.0;
        a[8] = 2.0;
        let r = svd_one(&spec(4, 3, true), &a, |x| x).expect("finite input");
        assert_eq!(r.s, vec![3.0, 2.0, 1.0]);
        // Already orthogonal columns: no rotation, so U's columns are the
        // signed unit vectors and the completion is e_3.
        assert_eq!(&r.u[..4], &[0.0, -1.0, 0.0, 0.0]);
        assert_eq!(&r.u[12..], &[0.0, 0.0, 0.0, 1.0]);
        assert_eq!(&r.vh[..3], &[0.0, 1.0, 0.0]);
    }

    #[test]
    fn rank_deficient_and_zero() {
        // Rank 1: the second column of U is completed to an orthonormal one.
        let a = [1.0, 2.0, 2.0, 4.0, 3.0, 6.0];
        let r = svd_one(&spec(3, 2, false), &a, |x| x).expect("finite input");
        assert!((r.s[0] - 70f64.sqrt()).abs() < 1e-13 && r.s[1].abs() < 1e-14);
        assert!(orth_err(&r.u, 2, 3) < 1e-14);
        let z = svd_one(&spec(3, 2, false), &[0.0; 6], |x| x).expect("finite input");
        assert_eq!(z.s, vec![0.0, 0.0]);
        assert!(orth_err(&z.u, 2, 3) < 1e-15);
    }

    #[test]
    fn nan_fails_and_inf_gives_nan() {
        assert!(svd_one(&spec(2, 2, false), &[1.0, f64::NAN, 0.0, 1.0], |x| x).is_none());
        let r = svd_one(&spec(3, 2, true), &[1.0, f64::INFINITY, 0.0, 1.0, 2.0, 3.0], |x| x).expect("no NaN");
        assert!(r.s.iter().chain(&r.u).chain(&r.vh).all(|x| x.is_nan()));
        assert_eq!(r.u.len(), 9);
    }

    #[test]
    fn batched_reports_first_nan() {
        let spec = SvdSpec { batch: 3, m: 2, n: 2, compute_uv: false, full_matrices: false };
        let a = [1.0, 0.0, 0.0, 1.0, 1.0, f64::NAN, 0.0, 1.0, f64::NAN, 0.0, 0.0, 1.0];
        let mut s = [0.0; 6];
        assert_eq!(svd::<f64>(&spec, &a, &mut s, None, |x| x, |x| x, |x| x), Err(1));
        let ok = [2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0];
        assert_eq!(svd::<f64>(&spec, &ok, &mut s, None, |x| x, |x| x, |x| x), Ok(()));
        assert_eq!(s, [2.0, 1.0, 0.0, 0.0, 5.0, 0.0]);
    }
}
