//! Dense linear algebra on the CPU: the singular value decomposition
//! (one-sided Jacobi, [`svd`]) and, through `faer`, the LU, Cholesky, QR and
//! symmetric eigen decompositions and the triangular and LU solves; the
//! Bunch–Kaufman `L D Lᵀ` factorisation and its solve ([`ldl`], LAPACK's
//! algorithm and format).
//!
//! The `faer`-based kernels take and give column-major matrices (what
//! `faer` and LAPACK work in, and the strides PyTorch returns), one matrix
//! of the batch per parallel task, each factorised single-threaded.

mod batch;
mod cholesky;
mod eig;
mod eigh;
pub mod ldl;
mod lu;
mod qr;
mod svd;
mod triangular;

pub use cholesky::cholesky;
pub use eigh::eigh;
pub use ldl::{ldl_factor, ldl_solve};
pub use lu::{lu_factor, lu_solve};
pub use eig::eig;
pub use qr::qr;
pub use svd::*;
pub use triangular::solve_triangular;

/// A float `faer` factorises: float32 or float64.
pub trait LinalgFloat: faer::traits::RealField + Copy + Send + Sync + PartialEq {
    /// Zero.
    const ZERO: Self;
    /// A quiet NaN.
    fn nan() -> Self;
    /// Neither infinite nor NaN.
    fn finite(self) -> bool;
    /// Widened to `f64`.
    fn to_f64(self) -> f64;
    /// Rounded from `f64`.
    fn from_f64(v: f64) -> Self;
}

impl LinalgFloat for f32 {
    const ZERO: f32 = 0.0;
    fn nan() -> f32 {
        f32::NAN
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl LinalgFloat for f64 {
    const ZERO: f64 = 0.0;
    fn nan() -> f64 {
        f64::NAN
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> f64 {
        v as f64
    }
}
