//! Scalar special functions for the elementwise kernels: the gamma family,
//! Bessel and Airy functions, the normal distribution's functions and the
//! classical orthogonal polynomials. Each is computed in `f64` by the
//! approximation PyTorch's CPU kernels use (mostly the Cephes Math Library's
//! rational and Chebyshev fits), so values agree to float64 rounding; the
//! kernels round the result once to the storage dtype.

pub mod bessel;
pub mod gamma;
pub mod normal;
pub mod poly;

/// `c[0] x^n + c[1] x^(n-1) + ... + c[n]` by Horner's rule.
#[inline]
pub(crate) fn polevl(x: f64, c: &[f64]) -> f64 {
    c.iter().fold(0.0, |acc, &v| acc * x + v)
}

/// Clenshaw's sum of a Chebyshev series (coefficients highest order first,
/// the zero-order term last) at `x`, where `x` is already mapped to `[-2, 2]`
/// (Cephes' `chbevl`).
#[inline]
pub(crate) fn chbevl(x: f64, c: &[f64]) -> f64 {
    let (mut b0, mut b1, mut b2) = (c[0], 0.0, 0.0);
    for &v in &c[1..] {
        b2 = b1;
        b1 = b0;
        b0 = x * b1 - b2 + v;
    }
    0.5 * (b0 - b2)
}

/// `exp(x * x)` without the rounding error of forming `x * x` first, which
/// the exponential would magnify by `x^2`.
#[inline]
pub(crate) fn exp_x2(x: f64) -> f64 {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    hi.exp() * lo.exp()
}
