//! The classical orthogonal polynomials `P_n(x)` of `torch.special`, in the
//! compute type of the kernel (as PyTorch evaluates them): the three-term
//! recurrences, with the trigonometric closed forms of the Chebyshev families
//! inside (-1, 1) for larger n.

use crate::real::Real;

/// Which polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poly {
    /// Chebyshev of the first kind `T_n`.
    ChebyshevT,
    /// Chebyshev of the second kind `U_n`.
    ChebyshevU,
    /// Chebyshev of the third kind `V_n`.
    ChebyshevV,
    /// Chebyshev of the fourth kind `W_n`.
    ChebyshevW,
    /// Physicists' Hermite `H_n`.
    HermiteH,
    /// Probabilists' Hermite `He_n`.
    HermiteHe,
    /// Laguerre `L_n`.
    LaguerreL,
    /// Legendre `P_n`.
    LegendreP,
}

/// The degree PyTorch's kernels read from a floating `n` (a C cast: NaN,
/// infinities and values beyond int64 become its most negative value, and so
/// a negative degree).
pub fn degree(n: f64) -> i64 {
    if n.is_finite() && n.abs() < 9.223_372_036_854_775_807e18 {
        n as i64
    } else {
        i64::MIN
    }
}

/// `P_n(x)` of the shifted Chebyshev family (`x` mapped from [0, 1] to [-1, 1]).
pub fn shifted<C: Real>(p: Poly, x: C, n: i64) -> C {
    let c = |v: f64| C::c(v);
    let (one, zero) = (c(1.0), c(0.0));
    if n < 0 {
        return zero;
    }
    let nf = n as f64;
    // PyTorch forms the mapped argument as `x + x - 1` at each use.
    let y = x + x - one;
    match p {
        Poly::ChebyshevT => {
            if x == one {
                return one;
            }
            if x == zero {
                return if n % 2 == 0 { one } else { -one };
            }
            if n > 6 && y.abs() < one {
                return (c(nf) * y.acos()).cos();
            }
            recur(n, one, y, |q, pr| (y + y) * q - pr, one, y)
        }
        Poly::ChebyshevU => {
            if x == one {
                return c(nf + 1.0);
            }
            if x == zero {
                return if n % 2 == 0 { c(nf + 1.0) } else { -c(nf + 1.0) };
            }
            if n > 6 && y.abs() < one {
                let t = y.acos();
                if t.sin() != zero {
                    return (c(nf + 1.0) * t).sin() / t.sin();
                }
                return c(nf + 1.0) * (c(nf + 1.0) * t).cos() / y;
            }
            recur(n, one, y + y, |q, pr| (y + y) * q - pr, one, y + y)
        }
        Poly::ChebyshevV => {
            if x == one {
                return one;
            }
            if x == zero {
                return if n % 2 == 0 { c(2.0 * nf + 1.0) } else { -c(2.0 * nf + 1.0) };
            }
            if n > 6 && y.abs() < one {
                let t = y.acos();
                if (t / c(2.0)).sin() != one {
                    return ((c(nf) + c(0.5)) * t).cos() / (t / c(2.0)).cos();
                }
                return if n % 2 == 0 { c(2.0 * nf + 1.0) } else { -c(2.0 * nf + 1.0) };
            }
            let q1 = y + y - one;
            recur(n, one, q1, |q, pr| (y + y) * q - pr, one, q1)
        }
        Poly::ChebyshevW => {
            if x == one {
                return c(2.0 * nf + 1.0);
            }
            if x == zero {
                return if n % 2 == 0 { one } else { -one };
            }
            if n > 4 && y.abs() < one {
                let t = y.acos();
                if (t / c(2.0)).cos() != one {
                    return ((c(nf) + c(0.5)) * t).sin() / (t / c(2.0)).sin();
                }
                return if n % 2 == 0 { one } else { -one };
            }
            let q1 = y + y + one;
            recur(n, one, q1, |q, pr| (y + y) * q - pr, one, q1)
        }
        _ => plain(p, x, n),
    }
}

/// The recurrence `r = f(q, p)` from `(p0, q1)` up to degree `n` (n = 0 gives
/// `at0`, n = 1 `at1`), stopping once a term is NaN as PyTorch's loops do.
#[inline]
fn recur<C: Real>(n: i64, at0: C, at1: C, f: impl Fn(C, C) -> C, p0: C, q1: C) -> C {
    if n == 0 {
        return at0;
    }
    if n == 1 {
        return at1;
    }
    let (mut p, mut q) = (p0, q1);
    let mut r = q;
    let mut k = 2;
    while k <= n && !q.is_nan() {
        r = f(q, p);
        p = q;
        q = r;
        k += 1;
    }
    r
}

/// `P_n(x)` of the unshifted families.
pub fn plain<C: Real>(p: Poly, x: C, n: i64) -> C {
    let c = |v: f64| C::c(v);
    let (one, zero) = (c(1.0), c(0.0));
    if n < 0 {
        return zero;
    }
    let nf = n as f64;
    match p {
        Poly::ChebyshevT => {
            if x.abs() == one {
                return if x > zero || n % 2 == 0 { one } else { -one };
            }
            if n > 6 && x.abs() < one {
                return (c(nf) * x.acos()).cos();
            }
            recur(n, one, x, |q, pr| (x + x) * q - pr, one, x)
        }
        Poly::ChebyshevU => {
            if x.abs() == one {
                return if x > zero || n % 2 == 0 { c(nf + 1.0) } else { -c(nf + 1.0) };
            }
            if n > 8 && x.abs() < one {
                let t = x.acos();
                if t.sin() != zero {
                    return (c(nf + 1.0) * t).sin() / t.sin();
                }
                return c(nf + 1.0) * (c(nf + 1.0) * t).cos() / x;
            }
            recur(n, one, x + x, |q, pr| (x + x) * q - pr, one, x + x)
        }
        Poly::ChebyshevV => {
            if x.abs() == one {
                if x > zero {
                    return one;
                }
                return if n % 2 == 0 { c(2.0 * nf + 1.0) } else { -c(2.0 * nf + 1.0) };
            }
            if n > 8 && x.abs() < one {
                let t = x.acos();
                if (t / c(2.0)).sin() != one {
                    return ((c(nf) + c(0.5)) * t).cos() / (t / c(2.0)).cos();
                }
                return if n % 2 == 0 { c(2.0 * nf + 1.0) } else { -c(2.0 * nf + 1.0) };
            }
            recur(n, one, x + x - one, |q, pr| (x + x) * q - pr, one, x + x - one)
        }
        Poly::ChebyshevW => {
            if x.abs() == one {
                if x > zero {
                    return c(2.0 * nf + 1.0);
                }
                return if n % 2 == 0 { one } else { -one };
            }
            if n > 8 && x.abs() < one {
                let t = x.acos();
                if (t / c(2.0)).cos() != one {
                    return ((c(nf) + c(0.5)) * t).sin() / (t / c(2.0)).sin();
                }
                if x > zero {
                    return c(2.0 * nf + 1.0);
                }
                return if n % 2 == 0 { one } else { -one };
            }
            recur(n, one, x + x + one, |q, pr| (x + x) * q - pr, one, x + x + one)
        }
        Poly::HermiteH | Poly::HermiteHe => {
            let h = p == Poly::HermiteH;
            if n == 0 {
                return one;
            }
            if n == 1 {
                return if h { x + x } else { x };
            }
            // Beyond these degrees PyTorch gives NaN rather than loop on.
            let limit = if std::mem::size_of::<C>() == 4 { 128 } else { 512 };
            if n > limit {
                return C::nan();
            }
            let (mut pr, mut q) = (one, if h { x + x } else { x });
            let mut r = zero;
            if h {
                let mut k = 2;
                while k < n + n {
                    r = (x + x) * q - c(k as f64) * pr;
                    pr = q;
                    q = r;
                    k += 2;
                }
            } else {
                for k in 1..n {
                    r = x * q - c(k as f64) * pr;
                    pr = q;
                    q = r;
                }
            }
            r
        }
        Poly::LaguerreL => {
            if x.abs() == zero {
                return one;
            }
            if n == 0 {
                return one;
            }
            if n == 1 {
                return one - x;
            }
            let (mut pr, mut q) = (one, one - x);
            let mut r = q;
            let mut k = 1;
            while k < n && !q.is_nan() {
                let kf = c(k as f64);
                r = ((kf + kf + (one - x)) * q - kf * pr) / c((k + 1) as f64);
                pr = q;
                q = r;
                k += 1;
            }
            r
        }
        Poly::LegendreP => {
            if x.abs() == one {
                return if x > zero || n % 2 == 0 { one } else { -one };
            }
            if n == 0 {
                return one;
            }
            if n == 1 {
                return x;
            }
            let (mut pr, mut q) = (one, x);
            let mut r = q;
            let mut k = 1;
            while k < n && !q.is_nan() {
                r = (c((2 * k + 1) as f64) * x * q - c(k as f64) * pr) / c((k + 1) as f64);
                pr = q;
                q = r;
                k += 1;
            }
            r
        }
    }
}
