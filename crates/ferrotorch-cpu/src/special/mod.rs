//! Scalar special functions for the elementwise kernels: the gamma family,
//! Bessel and Airy functions, the normal distribution's functions and the
//! classical orthogonal polynomials, by the approximations PyTorch's CPU
//! kernels use (mostly the Cephes Math Library's rational and Chebyshev fits).
//! Most are generic over the compute type (`f32` for float32 and the halves,
//! `f64`) because PyTorch evaluates them in it: a float32 `bessel_j0(1e4)`
//! reduces its float32 argument, and `i0(89)` overflows in float32 arithmetic
//! although the result is representable. The well-conditioned ones PyTorch
//! also evaluates accurately (`erfcx`, `ndtri`, `log_ndtr`, `zeta`) are
//! computed in `f64` and rounded once.

pub mod bessel;
pub mod gamma;
pub mod normal;
pub mod poly;

use crate::real::Real;

/// `c[0] x^n + c[1] x^(n-1) + ... + c[n]` by Horner's rule, in `x`'s type.
#[inline]
pub(crate) fn polevl<C: Real>(x: C, c: &[f64]) -> C {
    c.iter().fold(C::zero(), |acc, &v| acc * x + C::c(v))
}

/// Clenshaw's sum of a Chebyshev series (coefficients highest order first,
/// the zero-order term last) at `x`, where `x` is already mapped to `[-2, 2]`
/// (Cephes' `chbevl`).
#[inline]
pub(crate) fn chbevl<C: Real>(x: C, c: &[f64]) -> C {
    let (mut b0, mut b1, mut b2) = (C::c(c[0]), C::zero(), C::zero());
    for &v in &c[1..] {
        b2 = b1;
        b1 = b0;
        b0 = x * b1 - b2 + C::c(v);
    }
    C::c(0.5) * (b0 - b2)
}

/// Is `C` the single-precision compute type?
#[inline]
pub(crate) fn single<C: Real>() -> bool {
    std::mem::size_of::<C>() == 4
}

/// `exp(x * x)` without the rounding error of forming `x * x` first, which
/// the exponential would magnify by `x^2`.
#[inline]
pub(crate) fn exp_x2(x: f64) -> f64 {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    hi.exp() * lo.exp()
}
