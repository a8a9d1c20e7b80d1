//! LU factorisation with partial pivoting (LAPACK's `getrf` pivots) and the
//! solve from its factors (`getrs`).

use super::batch::Chunks;
use super::LinalgFloat;
use crate::parallel::parallel_for;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::triangular_solve as tri;
use faer::{MatMut, MatRef, Par};
use ferrotorch_core::op::linalg::{LuSolveSpec, LuSpec};

/// Factorises each column-major `m x n` matrix of `a` into `lu` (packed,
/// column-major), `pivots` (1-based row interchanges, `k` per matrix) and
/// `info` (1-based index of the first zero pivot, or 0); see
/// `LinalgKernels::lu_factor`.
pub fn lu_factor<T: LinalgFloat>(spec: &LuSpec, a: &[T], lu: &mut [T], pivots: &mut [i32], info: &mut [i32]) {
    let (m, n, k) = (spec.m, spec.n, spec.k());
    let (lus, pivs, infos) = (Chunks::new(lu, m * n), Chunks::new(pivots, k), Chunks::new(info, 1));
    parallel_for(spec.batch, |b| {
        // SAFETY: `b < batch`, and this task alone takes chunk `b` of each output.
        let (lu, piv, info) = unsafe { (lus.get(b), pivs.get(b), infos.get(b)) };
        lu.copy_from_slice(&a[b * m * n..(b + 1) * m * n]);
        let mut fwd = vec![0usize; m];
        let mut inv = vec![0usize; m];
        let mut mem = MemBuffer::new(lu_in_place_scratch::<usize, T>(m, n, Par::Seq, Default::default()));
        lu_in_place(MatMut::from_column_major_slice_mut(lu, m, n), &mut fwd, &mut inv, Par::Seq, MemStack::new(&mut mem), Default::default());
        interchanges(&fwd, piv);
        info[0] = (0..k).find(|&i| lu[i * m + i] == T::ZERO).map_or(0, |i| i as i32 + 1);
    });
}

/// LAPACK's pivots of the row permutation `fwd` (row `i` of `P A` is row
/// `fwd[i]` of `A`): the swaps `i <-> piv[i] - 1`, applied in order, that
/// produce it. Each step may only swap with a later row, so they are unique.
fn interchanges(fwd: &[usize], piv: &mut [i32]) {
    let m = fwd.len();
    // `pos[r]`: where original row `r` is now; `at[p]`: which row is at `p`.
    let mut pos: Vec<usize> = (0..m).collect();
    let mut at: Vec<usize> = (0..m).collect();
    for (i, p) in piv.iter_mut().enumerate() {
        let j = pos[fwd[i]];
        *p = j as i32 + 1;
        let moved = at[i];
        at.swap(i, j);
        pos[moved] = j;
        pos[fwd[i]] = i;
    }
}

/// Solves `A X = B` (or `Aᵀ X = B`) for each matrix from its packed
/// column-major factors and pivots; `b`, `x` column-major `n x k`.
///
/// A pivot outside `1..=n` is an error (the 1-based pivot it found).
pub fn lu_solve<T: LinalgFloat>(spec: &LuSolveSpec, lu: &[T], pivots: &[i32], b: &[T], x: &mut [T]) -> Result<(), i32> {
    let (n, k) = (spec.n, spec.k);
    if let Some(&bad) = pivots.iter().find(|&&p| p < 1 || p as usize > n) {
        return Err(bad);
    }
    let xs = Chunks::new(x, n * k);
    parallel_for(spec.batch, |i| {
        // SAFETY: `i < batch`, and this task alone takes chunk `i`.
        let x = unsafe { xs.get(i) };
        x.copy_from_slice(&b[i * n * k..(i + 1) * n * k]);
        let f = MatRef::from_column_major_slice(&lu[i * n * n..(i + 1) * n * n], n, n);
        let piv = &pivots[i * n..(i + 1) * n];
        // `linalg.inv` solves against the identity: its inverse from the
        // triangular factors (getri's flops, a third fewer than two dense
        // triangular solves) when no pivot is zero; a singular matrix keeps
        // the solves' infs and NaNs, as PyTorch's getrs gives them.
        if !spec.adjoint && k == n && is_identity(x, n) && (0..n).all(|d| f[(d, d)] != T::ZERO) {
            inverse_into(f, piv, MatMut::from_column_major_slice_mut(x, n, n));
            return;
        }
        let mut rhs = MatMut::from_column_major_slice_mut(x, n, k);
        // A = P L U with P the product of the interchanges in order.
        if spec.adjoint {
            // Aᵀ = Uᵀ Lᵀ Pᵀ: X = P L⁻ᵀ U⁻ᵀ B.
            tri::solve_lower_triangular_in_place(f.transpose(), rhs.as_mut(), Par::Seq);
            tri::solve_unit_upper_triangular_in_place(f.transpose(), rhs.as_mut(), Par::Seq);
            for (r, &p) in piv.iter().enumerate().rev() {
                swap_rows(rhs.as_mut(), r, p);
            }
        } else {
            // X = U⁻¹ L⁻¹ Pᵀ B.
            for (r, &p) in piv.iter().enumerate() {
                swap_rows(rhs.as_mut(), r, p);
            }
            tri::solve_unit_lower_triangular_in_place(f, rhs.as_mut(), Par::Seq);
            tri::solve_upper_triangular_in_place(f, rhs.as_mut(), Par::Seq);
        }
    });
    Ok(())
}

/// Whether the column-major `n x n` matrix `m` is the identity.
fn is_identity<T: LinalgFloat>(m: &[T], n: usize) -> bool {
    let one = T::from_f64(1.0);
    m.chunks_exact(n).enumerate().all(|(c, col)| col.iter().enumerate().all(|(r, &v)| v == if r == c { one } else { T::ZERO }))
}

/// `A⁻¹` into `out` from the packed factors of `P A = L U` (no zero pivot):
/// `A⁻¹ = U⁻¹ L⁻¹ P`, the column interchanges applied last to first.
fn inverse_into<T: LinalgFloat>(f: MatRef<'_, T>, piv: &[i32], mut out: MatMut<'_, T>) {
    use faer::linalg::matmul::triangular::{matmul, BlockStructure};
    use faer::linalg::triangular_inverse::{invert_unit_lower_triangular, invert_upper_triangular};
    let n = f.nrows();
    // L⁻¹ (strictly lower part) and U⁻¹ (upper part) share one square.
    let mut tri = faer::Mat::<T>::zeros(n, n);
    invert_unit_lower_triangular(tri.as_mut(), f, Par::Seq);
    invert_upper_triangular(tri.as_mut(), f, Par::Seq);
    matmul(
        out.as_mut(),
        BlockStructure::Rectangular,
        faer::Accum::Replace,
        tri.as_ref(),
        BlockStructure::TriangularUpper,
        tri.as_ref(),
        BlockStructure::UnitTriangularLower,
        T::from_f64(1.0),
        Par::Seq,
    );
    for (c, &p) in piv.iter().enumerate().rev() {
        let p = p as usize - 1;
        if p != c {
            for r in 0..n {
                let t = out[(r, c)];
                out[(r, c)] = out[(r, p)];
                out[(r, p)] = t;
            }
        }
    }
}

/// Swaps row `r` with the 1-based row `p` (checked to be in range by [`lu_solve`]).
fn swap_rows<T: LinalgFloat>(mut m: MatMut<'_, T>, r: usize, p: i32) {
    let p = p as usize - 1;
    if p != r {
        for c in 0..m.ncols() {
            let t = m[(r, c)];
            m[(r, c)] = m[(p, c)];
            m[(p, c)] = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies LAPACK pivots to the rows `0..m` in order.
    fn apply(piv: &[i32], m: usize) -> Vec<usize> {
        let mut rows: Vec<usize> = (0..m).collect();
        for (i, &p) in piv.iter().enumerate() {
            rows.swap(i, p as usize - 1);
        }
        rows
    }

    #[test]
    fn interchanges_reproduce_the_permutation() {
        for fwd in [vec![2, 0, 1], vec![0, 1, 2], vec![3, 2, 1, 0], vec![1, 3, 0, 2]] {
            let mut piv = vec![0; fwd.len()];
            interchanges(&fwd, &mut piv);
            assert_eq!(apply(&piv, fwd.len()), fwd);
            assert!(piv.iter().enumerate().all(|(i, &p)| p as usize > i));
        }
    }

    #[test]
    fn factor_then_solve_recovers_the_right_hand_side() {
        // A = [[1, 2], [4, 2]] column-major, b = A [1, 1]^T = [3, 6].
        let a = [1.0f64, 4.0, 2.0, 2.0];
        let spec = LuSpec { batch: 1, m: 2, n: 2 };
        let (mut lu, mut piv, mut info) = ([0.0; 4], [0; 2], [0; 1]);
        lu_factor(&spec, &a, &mut lu, &mut piv, &mut info);
        assert_eq!((piv, info), ([2, 2], [0]));
        assert_eq!(lu, [4.0, 0.25, 2.0, 1.5]);
        let mut x = [0.0; 2];
        lu_solve(&LuSolveSpec { batch: 1, n: 2, k: 1, adjoint: false }, &lu, &piv, &[3.0, 6.0], &mut x).unwrap();
        assert_eq!(x, [1.0, 1.0]);
        // Aᵀ [1, 1]^T = [5, 4]
        lu_solve(&LuSolveSpec { batch: 1, n: 2, k: 1, adjoint: true }, &lu, &piv, &[5.0, 4.0], &mut x).unwrap();
        assert_eq!(x, [1.0, 1.0]);
        assert_eq!(lu_solve(&LuSolveSpec { batch: 1, n: 2, k: 1, adjoint: false }, &lu, &[3, 1], &[3.0, 6.0], &mut x), Err(3));
    }

    /// A deterministic, well-conditioned-enough pseudo-random matrix.
    fn matrix(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n * n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    #[test]
    fn identity_right_hand_side_gives_the_inverse() {
        // Sizes past faer's blocking thresholds; the reference is A X = I
        // computed naively, and the general solve of 2 I (no fast path) halved.
        for &n in &[1usize, 3, 17, 70, 130] {
            let a = matrix(n, n as u64 + 7);
            let spec = LuSpec { batch: 1, m: n, n };
            let (mut lu, mut piv, mut info) = (vec![0.0; n * n], vec![0; n], [0; 1]);
            lu_factor(&spec, &a, &mut lu, &mut piv, &mut info);
            assert_eq!(info, [0]);
            let eye: Vec<f64> = (0..n * n).map(|i| if i % (n + 1) == 0 { 1.0 } else { 0.0 }).collect();
            let solve = LuSolveSpec { batch: 1, n, k: n, adjoint: false };
            let mut x = vec![0.0; n * n];
            lu_solve(&solve, &lu, &piv, &eye, &mut x).unwrap();
            for c in 0..n {
                for r in 0..n {
                    let ax: f64 = (0..n).map(|j| a[j * n + r] * x[c * n + j]).sum();
                    let want = if r == c { 1.0 } else { 0.0 };
                    assert!((ax - want).abs() < 1e-9, "n={n} (A X)[{r}, {c}] = {ax}");
                }
            }
            let two: Vec<f64> = eye.iter().map(|v| 2.0 * v).collect();
            let mut y = vec![0.0; n * n];
            lu_solve(&solve, &lu, &piv, &two, &mut y).unwrap();
            for (xi, yi) in x.iter().zip(&y) {
                assert!((xi - yi / 2.0).abs() < 1e-9 * (1.0 + xi.abs()), "n={n}: {xi} vs {}", yi / 2.0);
            }
        }
    }

    #[test]
    fn singular_identity_solve_keeps_the_solves_values() {
        // A zero pivot skips the inverse path: the result is the solves' (inf/NaN).
        let a = [1.0f64, 2.0, 2.0, 4.0];
        let spec = LuSpec { batch: 1, m: 2, n: 2 };
        let (mut lu, mut piv, mut info) = ([0.0; 4], [0; 2], [0; 1]);
        lu_factor(&spec, &a, &mut lu, &mut piv, &mut info);
        assert_eq!(info, [2]);
        let mut x = [0.0; 4];
        lu_solve(&LuSolveSpec { batch: 1, n: 2, k: 2, adjoint: false }, &lu, &piv, &[1.0, 0.0, 0.0, 1.0], &mut x).unwrap();
        assert!(x.iter().all(|v| !v.is_finite()), "{x:?}");
    }
}
