//! The symmetric-indefinite factorisation `A = L D Lᵀ` with Bunch–Kaufman
//! pivoting in LAPACK's compact form (`sytrf`/`sytf2`, `UPLO='L'`) and the
//! solve from it (`sytrs`).
//!
//! `faer`'s `bunch_kaufman` factorisation is not used: its partial-pivoting
//! test for keeping a 1x1 pivot (`|a_kk| ≥ α σ² / λ`) is not LAPACK's
//! (`|a_kk| σ ≥ α λ²`, with `λ` the largest off-diagonal magnitude of the
//! column and `σ` that of the candidate's row), so its pivots, and hence the
//! factors, differ from PyTorch's; and it returns `L` with every
//! interchange applied, where LAPACK's format keeps each column of `L` in
//! the row order of its own step. This is LAPACK's unblocked algorithm, whose
//! pivot decisions the blocked `sytrf` makes too.

use super::batch::Chunks;
use crate::parallel::parallel_for;
use ferrotorch_core::op::linalg::{LdlSolveSpec, LdlSpec};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// The float arithmetic the factorisation needs (float32 and float64).
pub trait LdlFloat:
    Copy + Send + Sync + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `|self|`.
    fn abs(self) -> Self;
    /// Bunch and Kaufman's growth bound `α = (1 + √17) / 8`, in this precision as LAPACK computes it.
    fn alpha() -> Self;
}

macro_rules! ldl_float {
    ($T:ty) => {
        impl LdlFloat for $T {
            const ZERO: $T = 0.0;
            const ONE: $T = 1.0;
            fn abs(self) -> $T {
                <$T>::abs(self)
            }
            fn alpha() -> $T {
                (1.0 + <$T>::sqrt(17.0)) / 8.0
            }
        }
    };
}
ldl_float!(f32);
ldl_float!(f64);

/// A column-major `n x n` matrix over a slice.
struct Col<'a, T> {
    a: &'a mut [T],
    n: usize,
}

impl<T: LdlFloat> Col<'_, T> {
    fn at(&self, i: usize, j: usize) -> T {
        self.a[j * self.n + i]
    }

    fn set(&mut self, i: usize, j: usize, v: T) {
        self.a[j * self.n + i] = v;
    }

    fn swap(&mut self, (i, j): (usize, usize), (p, q): (usize, usize)) {
        self.a.swap(j * self.n + i, q * self.n + p);
    }

    /// The first row in `rows` of column `j` holding the largest magnitude
    /// (BLAS `i?amax`: ties and NaN keep the earlier row), with that magnitude.
    fn col_amax(&self, rows: std::ops::Range<usize>, j: usize) -> (usize, T) {
        let mut best = (rows.start, self.at(rows.start, j).abs());
        for i in rows.start + 1..rows.end {
            let v = self.at(i, j).abs();
            if v > best.1 {
                best = (i, v);
            }
        }
        best
    }

    /// As [`col_amax`](Self::col_amax), along row `i` over the columns `cols`.
    fn row_amax(&self, i: usize, cols: std::ops::Range<usize>) -> T {
        let mut best = self.at(i, cols.start).abs();
        for j in cols.start + 1..cols.end {
            let v = self.at(i, j).abs();
            if v > best {
                best = v;
            }
        }
        best
    }
}

/// Factorises each column-major `n x n` matrix of `a` (lower triangle read)
/// into `ld`, `pivots` and `info` as `LinalgKernels::ldl_factor` describes.
pub fn ldl_factor<T: LdlFloat>(spec: &LdlSpec, a: &[T], ld: &mut [T], pivots: &mut [i32], info: &mut [i32]) {
    let n = spec.n;
    let (lds, pivs, infos) = (Chunks::new(ld, n * n), Chunks::new(pivots, n), Chunks::new(info, 1));
    parallel_for(spec.batch, |b| {
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let (ld, piv, info) = unsafe { (lds.get(b), pivs.get(b), infos.get(b)) };
        let src = &a[b * n * n..(b + 1) * n * n];
        // Only the lower triangle is read and written: the upper one stays zero.
        for j in 0..n {
            ld[j * n..j * n + j].fill(T::ZERO);
            ld[j * n + j..(j + 1) * n].copy_from_slice(&src[j * n + j..(j + 1) * n]);
        }
        info[0] = factor_one(&mut Col { a: ld, n }, piv);
    });
}

/// LAPACK's `sytf2` (lower) on one matrix: returns `info`.
fn factor_one<T: LdlFloat>(m: &mut Col<'_, T>, piv: &mut [i32]) -> i32 {
    let n = m.n;
    let alpha = T::alpha();
    let mut info = 0;
    let mut k = 0;
    while k < n {
        let mut kstep = 1;
        let absakk = m.at(k, k).abs();
        let (imax, colmax) = if k + 1 < n { m.col_amax(k + 1..n, k) } else { (k, T::ZERO) };
        let kp;
        // Fortran's MAX as x86 evaluates it (`a > b ? a : b`): a NaN diagonal compares as the
        // column's maximum, so a NaN pivot with a zero column below it is recorded like a zero one.
        if (if absakk > colmax { absakk } else { colmax }) == T::ZERO {
            // A zero column: record it and leave it, as LAPACK does.
            if info == 0 {
                info = k as i32 + 1;
            }
            kp = k;
        } else {
            if absakk >= alpha * colmax {
                kp = k;
            } else {
                // The largest off-diagonal magnitude in row/column `imax` of the trailing matrix.
                let mut rowmax = m.row_amax(imax, k..imax);
                if imax + 1 < n {
                    let (_, below) = m.col_amax(imax + 1..n, imax);
                    if below > rowmax {
                        rowmax = below;
                    }
                }
                if absakk * rowmax >= alpha * colmax * colmax {
                    kp = k;
                } else if m.at(imax, imax).abs() >= alpha * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                interchange(m, k, kk, kp, kstep);
            }
            if kstep == 1 {
                eliminate_1x1(m, k);
            } else {
                eliminate_2x2(m, k);
            }
        }
        if kstep == 1 {
            piv[k] = kp as i32 + 1;
        } else {
            piv[k] = -(kp as i32 + 1);
            piv[k + 1] = piv[k];
        }
        k += kstep;
    }
    info
}

/// Interchanges rows and columns `kk` and `kp > kk` of the trailing lower
/// triangle `A[k.., k..]` (and, for a 2x2 pivot, the two entries of column `k`).
fn interchange<T: LdlFloat>(m: &mut Col<'_, T>, k: usize, kk: usize, kp: usize, kstep: usize) {
    let n = m.n;
    for i in kp + 1..n {
        m.swap((i, kk), (i, kp));
    }
    for j in kk + 1..kp {
        m.swap((j, kk), (kp, j));
    }
    m.swap((kk, kk), (kp, kp));
    if kstep == 2 {
        m.swap((k + 1, k), (kp, k));
    }
}

/// A 1x1 pivot at `k`: `A[k+1.., k+1..] -= x xᵀ / d`, then `x /= d`, with
/// `x = A[k+1.., k]` and `d = A[k, k]`.
fn eliminate_1x1<T: LdlFloat>(m: &mut Col<'_, T>, k: usize) {
    let n = m.n;
    if k + 1 >= n {
        return;
    }
    let r1 = T::ONE / m.at(k, k);
    let (head, tail) = m.a.split_at_mut((k + 1) * n);
    let x = &mut head[k * n..(k + 1) * n];
    for j in k + 1..n {
        let t = -r1 * x[j];
        let col = &mut tail[(j - k - 1) * n..(j - k) * n];
        for i in j..n {
            col[i] = col[i] + x[i] * t;
        }
    }
    for v in &mut x[k + 1..n] {
        *v = *v * r1;
    }
}

/// A 2x2 pivot at `k, k+1`: eliminates both columns from the trailing
/// matrix and stores their multipliers, as LAPACK's `sytf2` computes them.
fn eliminate_2x2<T: LdlFloat>(m: &mut Col<'_, T>, k: usize) {
    let n = m.n;
    if k + 2 >= n {
        return;
    }
    let d21 = m.at(k + 1, k);
    let d11 = m.at(k + 1, k + 1) / d21;
    let d22 = m.at(k, k) / d21;
    let t = T::ONE / (d11 * d22 - T::ONE);
    let d21 = t / d21;
    for j in k + 2..n {
        let wk = d21 * (d11 * m.at(j, k) - m.at(j, k + 1));
        let wkp1 = d21 * (d22 * m.at(j, k + 1) - m.at(j, k));
        for i in j..n {
            let v = m.at(i, j) - (m.at(i, k) * wk + m.at(i, k + 1) * wkp1);
            m.set(i, j, v);
        }
        m.set(j, k, wk);
        m.set(j, k + 1, wkp1);
    }
}

/// The blocks of LAPACK pivots for order `n`: `Err` names the first pivot
/// no factorisation produces (outside `±[1, n]`, or a negative one without
/// an equal partner after it).
fn check_pivots(piv: &[i32], n: usize) -> Result<(), i32> {
    let mut k = 0;
    while k < n {
        let p = piv[k];
        if p == 0 || p.unsigned_abs() as usize > n {
            return Err(p);
        }
        if p > 0 {
            k += 1;
        } else if k + 1 < n && piv[k + 1] == p && (-p) as usize > k + 1 {
            k += 2;
        } else {
            return Err(p);
        }
    }
    Ok(())
}

/// Solves `A X = B` for each matrix from its compact factors `ld` and
/// `pivots`; `b`, `x` column-major `n x k`. Invalid pivots are an error (the
/// pivot found).
pub fn ldl_solve<T: LdlFloat>(spec: &LdlSolveSpec, ld: &[T], pivots: &[i32], b: &[T], x: &mut [T]) -> Result<(), i32> {
    let (n, k) = (spec.n, spec.k);
    for i in 0..spec.batch {
        check_pivots(&pivots[i * n..(i + 1) * n], n)?;
    }
    let xs = Chunks::new(x, n * k);
    parallel_for(spec.batch, |i| {
        // SAFETY: `i < batch`, and this task alone takes chunk `i`.
        let x = unsafe { xs.get(i) };
        x.copy_from_slice(&b[i * n * k..(i + 1) * n * k]);
        solve_one(&ld[i * n * n..(i + 1) * n * n], &pivots[i * n..(i + 1) * n], n, k, x);
    });
    Ok(())
}

/// LAPACK's `sytrs` (lower) on one system, `x` holding `B` on entry.
fn solve_one<T: LdlFloat>(f: &[T], piv: &[i32], n: usize, nrhs: usize, x: &mut [T]) {
    let at = |i: usize, j: usize| f[j * n + i];
    let swap = |x: &mut [T], r: usize, p: usize| {
        if r != p {
            for c in 0..nrhs {
                x.swap(c * n + r, c * n + p);
            }
        }
    };
    // L D Y = B, block by block: interchange, eliminate below, divide by D.
    let mut k = 0;
    while k < n {
        if piv[k] > 0 {
            swap(x, k, piv[k] as usize - 1);
            let d = at(k, k);
            for c in 0..nrhs {
                let col = &mut x[c * n..(c + 1) * n];
                let xk = col[k];
                for i in k + 1..n {
                    col[i] = col[i] - at(i, k) * xk;
                }
                col[k] = xk / d;
            }
            k += 1;
        } else {
            swap(x, k + 1, (-piv[k]) as usize - 1);
            let akm1k = at(k + 1, k);
            let akm1 = at(k, k) / akm1k;
            let ak = at(k + 1, k + 1) / akm1k;
            let denom = akm1 * ak - T::ONE;
            for c in 0..nrhs {
                let col = &mut x[c * n..(c + 1) * n];
                let (x0, x1) = (col[k], col[k + 1]);
                for i in k + 2..n {
                    col[i] = col[i] - at(i, k) * x0 - at(i, k + 1) * x1;
                }
                let (bkm1, bk) = (x0 / akm1k, x1 / akm1k);
                col[k] = (ak * bkm1 - bk) / denom;
                col[k + 1] = (akm1 * bk - bkm1) / denom;
            }
            k += 2;
        }
    }
    // Lᵀ X = Y, from the last block back.
    let dot_below = |col: &[T], j: usize, from: usize| (from..n).fold(T::ZERO, |s, i| s + at(i, j) * col[i]);
    let mut k = n;
    while k > 0 {
        let j = k - 1;
        if piv[j] > 0 {
            for c in 0..nrhs {
                let col = &mut x[c * n..(c + 1) * n];
                col[j] = col[j] - dot_below(col, j, j + 1);
            }
            swap(x, j, piv[j] as usize - 1);
            k -= 1;
        } else {
            // `check_pivots` guarantees the block's first column `j - 1` exists.
            for c in 0..nrhs {
                let col = &mut x[c * n..(c + 1) * n];
                let (s1, s0) = (dot_below(col, j, j + 1), dot_below(col, j - 1, j + 1));
                col[j] = col[j] - s1;
                col[j - 1] = col[j - 1] - s0;
            }
            swap(x, j, (-piv[j]) as usize - 1);
            k -= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A = L D Lᵀ` rebuilt from LAPACK's compact form, column-major.
    fn rebuild(ld: &[f64], piv: &[i32], n: usize) -> Vec<f64> {
        // Apply the blocks from the last to the first: M = P(k) L(k) D_k-part (L(k))ᵀ P(k)ᵀ ...
        let at = |i: usize, j: usize| ld[j * n + i];
        // Start from D.
        let mut m = vec![0.0; n * n];
        let mut k = 0;
        let mut blocks = vec![];
        while k < n {
            if piv[k] > 0 {
                m[k * n + k] = at(k, k);
                blocks.push((k, 1));
                k += 1;
            } else {
                m[k * n + k] = at(k, k);
                m[(k + 1) * n + k + 1] = at(k + 1, k + 1);
                m[k * n + k + 1] = at(k + 1, k);
                m[(k + 1) * n + k] = at(k + 1, k);
                blocks.push((k, 2));
                k += 2;
            }
        }
        for &(k, s) in blocks.iter().rev() {
            // L(k) = I + multipliers in columns k..k+s below the block.
            let mut l = vec![0.0; n * n];
            for i in 0..n {
                l[i * n + i] = 1.0;
            }
            for j in k..k + s {
                for i in k + s..n {
                    l[j * n + i] = at(i, j);
                }
            }
            let mul = |a: &[f64], b: &[f64], bt: bool| {
                let mut c = vec![0.0; n * n];
                for i in 0..n {
                    for j in 0..n {
                        c[j * n + i] = (0..n).map(|r| a[r * n + i] * if bt { b[r * n + j] } else { b[j * n + r] }).sum();
                    }
                }
                c
            };
            m = mul(&mul(&l, &m, false), &l, true);
            let p = piv[k + s - 1].unsigned_abs() as usize - 1;
            let q = k + s - 1;
            for c in 0..n {
                m.swap(c * n + p, c * n + q);
            }
            for r in 0..n {
                m.swap(p * n + r, q * n + r);
            }
        }
        m
    }

    fn factor(a: &[f64], n: usize) -> (Vec<f64>, Vec<i32>, i32) {
        let (mut ld, mut piv, mut info) = (vec![0.0; n * n], vec![0; n], [0]);
        ldl_factor(&LdlSpec { batch: 1, n, hermitian: false }, a, &mut ld, &mut piv, &mut info);
        (ld, piv, info[0])
    }

    #[test]
    fn a_2x2_pivot_reconstructs_the_matrix() {
        // [[1, 2, 3], [2, -1, 4], [3, 4, 0.5]]: |a11| = 1 < α·3 and the row
        // test fails too, so the first block is 2x2 with rows 2 and 3 swapped.
        let a = [1.0, 2.0, 3.0, 2.0, -1.0, 4.0, 3.0, 4.0, 0.5];
        let (ld, piv, info) = factor(&a, 3);
        assert_eq!((piv.as_slice(), info), (&[-3, -3, 3][..], 0));
        let m = rebuild(&ld, &piv, 3);
        for (x, y) in m.iter().zip(&a) {
            assert!((x - y).abs() < 1e-12, "{m:?}");
        }
        // The upper triangle is zero.
        assert_eq!((ld[3], ld[6], ld[7]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn solve_inverts_the_factorisation() {
        // A symmetric indefinite 4x4 matrix (zero diagonal forces 2x2 pivots).
        let a = [0.0, 1.0, 2.0, 3.0, 1.0, 0.0, 4.0, 5.0, 2.0, 4.0, 0.0, 6.0, 3.0, 5.0, 6.0, 0.0];
        let (ld, piv, info) = factor(&a, 4);
        assert_eq!(info, 0);
        assert!(piv.iter().any(|&p| p < 0));
        let want = [1.0, -2.0, 0.5, 3.0, 2.0, 0.0, -1.0, 1.0];
        let mut b = [0.0; 8];
        for c in 0..2 {
            for i in 0..4 {
                b[c * 4 + i] = (0..4).map(|j| a[j * 4 + i] * want[c * 4 + j]).sum();
            }
        }
        let mut x = [0.0; 8];
        ldl_solve(&LdlSolveSpec { batch: 1, n: 4, k: 2, hermitian: false }, &ld, &piv, &b, &mut x).unwrap();
        for (x, y) in x.iter().zip(&want) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn a_nan_diagonal_pivots_as_lapack_does() {
        // [[NaN, 1], [1, 2]]: every test against NaN fails, so row 2 is the 1x1 pivot; the
        // updated NaN that is left has no column below it and is recorded as info = 2.
        let (ld, piv, info) = factor(&[f64::NAN, 1.0, 1.0, 2.0], 2);
        assert_eq!((piv.as_slice(), info), (&[2, 2][..], 2));
        assert_eq!((ld[0], ld[1]), (2.0, 0.5));
        assert!(ld[3].is_nan());
    }

    #[test]
    fn a_zero_column_sets_info_and_bad_pivots_are_rejected() {
        let (_, piv, info) = factor(&[0.0; 9], 3);
        assert_eq!((piv.as_slice(), info), (&[1, 2, 3][..], 1));
        for bad in [[0, 2], [3, 2], [-2, 1], [1, -2], [-1, -1]] {
            let mut x = [0.0; 2];
            let r = ldl_solve(&LdlSolveSpec { batch: 1, n: 2, k: 1, hermitian: false }, &[1.0, 0.0, 0.0, 1.0], &bad, &[1.0, 1.0], &mut x);
            assert!(r.is_err(), "{bad:?}");
        }
    }
}
