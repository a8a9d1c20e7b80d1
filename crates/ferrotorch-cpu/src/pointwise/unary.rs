//! The CPU's unary elementwise kernels: one generic loop per op
//! ([`crate::elementwise::unary`]), floats computed in their compute type
//! (halves in `f32`); float32/float64 ops with a vector form run the
//! vectorised [`crate::unary`] module instead.

use crate::elementwise::{unary as un_kernel, Num};
use crate::real::{not_impl, Compute, Real};
use crate::real_dispatch;
use crate::unary::{has_simd, unary_f32, unary_f64};
use crate::{Dst, Src};
use ferrotorch_core::{dispatch_dtype, DType, Element, Result, UnaryOp};
use num_traits::Float as _;

/// `out = op(x)`: `x` in the dtype the op computes in (`dtype`), `out` in the
/// op's result dtype (bool for predicates).
pub fn unary(op: UnaryOp, dtype: DType, o: Dst, s: Src) -> Result<()> {
    match op {
        UnaryOp::Neg => dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, Num::neg)),
        UnaryOp::Abs => dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, Num::abs)),
        UnaryOp::Relu => {
            dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, |v: T| if v > T::zero() || v != v { v } else { T::zero() }))
        }
        _ if op.is_predicate() => run_predicate(op, o, s, dtype),
        _ if !dtype.is_floating_point() => run_int(op, o, s, dtype)?,
        // The vectorised kernels (runtime ISA choice) for f32/f64.
        _ if dtype == DType::Float32 && has_simd(op) => unary_f32(op, o, s),
        _ if dtype == DType::Float64 && has_simd(op) => unary_f64(op, o, s),
        _ => run_float(op, o, s, dtype)?,
    }
    Ok(())
}

/// Bool-valued ops (`isnan`, `logical_not`, ...) on any dtype.
fn run_predicate(op: UnaryOp, o: Dst, s: Src, dtype: DType) {
    dispatch_dtype!(dtype, T => un_kernel::<T, bool>(o, s, move |v: T| {
        let f = v.to_f64();
        match op {
            UnaryOp::LogicalNot => v == T::zero(),
            UnaryOp::IsNan => f.is_nan(),
            UnaryOp::IsInf => f.is_infinite(),
            UnaryOp::IsPosInf => f == f64::INFINITY,
            UnaryOp::IsNegInf => f == f64::NEG_INFINITY,
            UnaryOp::Signbit => f.is_sign_negative(),
            _ => f.is_finite(),
        }
    }))
}

/// The ops that keep integer dtypes (`neg`, `abs` and `relu` are done by the caller).
fn run_int(op: UnaryOp, o: Dst, s: Src, dtype: DType) -> Result<()> {
    dispatch_dtype!(dtype, T => {
        match op {
            UnaryOp::Sign | UnaryOp::Sgn => un_kernel::<T, T>(o, s, |v: T| T::from_i64(v.to_i64().signum())),
            UnaryOp::BitwiseNot => un_kernel::<T, T>(o, s, |v: T| T::from_i64(!v.to_i64())),
            UnaryOp::Hardtanh(lo, hi) => {
                let (lo, hi) = (lo as i64, hi as i64);
                un_kernel::<T, T>(o, s, move |v: T| T::from_i64(v.to_i64().max(lo).min(hi)))
            }
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc | UnaryOp::NanToNum(..) => {
                un_kernel::<T, T>(o, s, |v: T| v)
            }
            _ => return Err(not_impl(op.name(), dtype)),
        }
    });
    Ok(())
}

/// Round half to even, as `nearbyint` does.
#[inline(always)]
pub fn rint<C: Real>(x: C) -> C {
    let r = x.round();
    if (r - x).abs() == C::c(0.5) {
        C::c(2.0) * (x * C::c(0.5)).round()
    } else {
        r
    }
}

/// `min(max(x, 0), 6)` with NaN passing through (`f::max` would drop it).
#[inline(always)]
fn relu6<C: Real>(x: C) -> C {
    if x < C::zero() {
        C::zero()
    } else if x > C::c(6.0) {
        C::c(6.0)
    } else {
        x
    }
}

#[inline(always)]
fn sigmoid<C: Real>(x: C) -> C {
    C::one() / (C::one() + (-x).exp())
}

/// Floating kernels.
fn run_float(op: UnaryOp, o: Dst, s: Src, dtype: DType) -> Result<()> {
    if op == UnaryOp::BitwiseNot || op.is_predicate() {
        return Err(not_impl(op.name(), dtype));
    }
    if matches!(dtype, DType::Float16 | DType::BFloat16) && !op.has_reduced_float_kernel() {
        return Err(not_impl(op.kernel_name(), dtype));
    }
    real_dispatch!(dtype, op.name(), T => float_kernel::<T>(op, o, s));
    Ok(())
}

fn float_kernel<T: Compute>(op: UnaryOp, o: Dst, s: Src) {
    macro_rules! go {
        (|$x:ident| $e:expr) => {
            un_kernel::<T, T>(o, s, move |v: T| {
                let $x: T::C = v.up();
                T::down($e)
            })
        };
    }
    let c = |v: f64| <T::C as Real>::c(v);
    let (zero, one) = (c(0.0), c(1.0));
    use UnaryOp::*;
    match op {
        Neg => go!(|x| -x),
        Abs => go!(|x| x.abs()),
        Relu => go!(|x| if x > zero || x.is_nan() { x } else { zero }),
        Exp => go!(|x| x.exp()),
        Log => go!(|x| x.ln()),
        Sqrt => go!(|x| x.sqrt()),
        Tanh => go!(|x| x.tanh()),
        Sigmoid => go!(|x| sigmoid(x)),
        Sign | Sgn => go!(|x| if x > zero { one } else if x < zero { -one } else { zero }),
        Rsqrt => go!(|x| one / x.sqrt()),
        Exp2 => go!(|x| x.exp2()),
        Expm1 => go!(|x| if x == zero { x } else { x.exp_m1() }),
        Log2 => go!(|x| x.log2()),
        Log10 => go!(|x| x.log10()),
        Log1p => go!(|x| if x == zero { x } else { x.ln_1p() }),
        Sin => go!(|x| x.sin()),
        Cos => go!(|x| x.cos()),
        Tan => go!(|x| x.tan()),
        Asin => go!(|x| x.asin()),
        Acos => go!(|x| x.acos()),
        Atan => go!(|x| x.atan()),
        Sinh => go!(|x| x.sinh()),
        Cosh => go!(|x| x.cosh()),
        // In f64 (std's f32 forms overflow from ~1.7e38), rounded once.
        Asinh => go!(|x| c(crate::unary::asinh(x.f()))),
        Acosh => go!(|x| c(crate::unary::acosh(x.f()))),
        // In f64 (std's forms lose digits near ±1), rounded once.
        Atanh => go!(|x| c(crate::unary::atanh(x.f()))),
        Logit(eps) => {
            // PyTorch computes logit in the input's own type: for float16/
            // bfloat16 the bounds `eps` and `1 - eps`, then `1 - z` and the
            // quotient are each rounded to that type before the log (Half
            // arithmetic). `r` is the identity for float32/float64.
            let r = |v: T::C| T::down(v).up();
            let lo = r(c(eps));
            let hi = r(one - lo);
            if eps < 0.0 {
                go!(|x| r(x / r(one - x)).ln())
            } else {
                go!(|x| {
                    let z = if x < lo { lo } else if x > hi { hi } else { x };
                    r(z / r(one - z)).ln()
                })
            }
        }
        Erf => go!(|x| x.erf()),
        Erfc => go!(|x| x.erfc()),
        Erfinv => go!(|x| x.erfinv()),
        Floor => go!(|x| x.floor()),
        Ceil => go!(|x| x.ceil()),
        Round => go!(|x| rint(x)),
        RoundDecimals(d) => {
            let p = c(10f64.powi(d.unsigned_abs().min(400) as i32));
            if d >= 0 {
                go!(|x| rint(x * p) / p)
            } else {
                go!(|x| rint(x / p) * p)
            }
        }
        Trunc => go!(|x| x.trunc()),
        Frac => go!(|x| x - x.trunc()),
        Reciprocal => go!(|x| one / x),
        Hardtanh(lo, hi) => {
            let (lo, hi) = (c(lo), c(hi));
            // NaN passes through, as PyTorch's clamp does.
            go!(|x| if x < lo { lo } else if x > hi { hi } else { x })
        }
        Shrink(lambd, soft) => {
            // PyTorch's kernels: x * 0 keeps a NaN (and the sign of zero) inside.
            let l = c(lambd);
            if soft {
                go!(|x| if x > l { x - l } else if x < -l { x + l } else { x * zero })
            } else {
                go!(|x| if x >= -l && x <= l { zero } else { x })
            }
        }
        LeakyRelu(slope) => {
            let sl = c(slope);
            go!(|x| if x > zero { x } else { x * sl })
        }
        Elu(alpha, scale, iscale) => {
            let (a, sc, isc) = (c(alpha), c(scale), c(iscale));
            // x = ±0 takes the linear branch, as PyTorch's (expm1(0) * inf is NaN).
            go!(|x| if x >= zero { x * sc } else { ((x * isc).exp_m1()) * a * sc })
        }
        Celu(alpha) => float_kernel::<T>(Elu(alpha, 1.0, 1.0 / alpha), o, s),
        Gelu(false) => go!(|x| x * c(0.5) * (one + (x * c(std::f64::consts::FRAC_1_SQRT_2)).erf())),
        Gelu(true) => {
            let k = c((2.0 / std::f64::consts::PI).sqrt());
            go!(|x| c(0.5) * x * (one + (k * (x + c(0.044715) * x * x * x)).tanh()))
        }
        Silu => go!(|x| x * sigmoid(x)),
        Mish => go!(|x| x * softplus(x, one, c(20.0)).tanh()),
        Softplus(beta, thr) => {
            let (b, t) = (c(beta), c(thr));
            go!(|x| softplus(x, b, t))
        }
        Hardsigmoid => go!(|x| relu6(x + c(3.0)) / c(6.0)),
        Hardswish => go!(|x| x * relu6(x + c(3.0)) / c(6.0)),
        LogSigmoid => go!(|x| {
            // log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
            x.min(zero) - (-x.abs()).exp().ln_1p()
        }),
        NanToNum(nan, pos, neg) => {
            let nan = c(nan);
            let pos = pos.map(c).unwrap_or_else(T::C::max_value);
            let neg = neg.map(c).unwrap_or_else(T::C::min_value);
            // A half's extremes are not f32's: clamp to the storage type's range.
            let (pos, neg) = (T::down(pos).up(), T::down(neg).up());
            let (pos, neg) = (if pos.is_infinite() { half_max::<T>() } else { pos }, if neg.is_infinite() { -half_max::<T>() } else { neg });
            go!(|x| if x.is_nan() { nan } else if x == T::C::infinity() { pos } else if x == T::C::neg_infinity() { neg } else { x })
        }
        BitwiseNot | LogicalNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | Signbit => {} // refused by run_float
        _ => special_kernel::<T>(op, o, s),
    }
}

/// The special functions ([`crate::special`]), in the compute type as
/// PyTorch evaluates them; `erfcx`, `ndtri` and `log_ndtr` in f64, rounded once.
fn special_kernel<T: Compute>(op: UnaryOp, o: Dst, s: Src) {
    use crate::special::{bessel, gamma, normal};
    use std::f64::consts::PI;
    macro_rules! go {
        (|$x:ident| $e:expr) => {
            un_kernel::<T, T>(o, s, move |v: T| {
                let $x: T::C = v.up();
                T::down($e)
            })
        };
    }
    let c = |v: f64| <T::C as Real>::c(v);
    let (zero, one) = (c(0.0), c(1.0));
    use UnaryOp::*;
    match op {
        Lgamma => go!(|x| gamma::lgamma_c(x)),
        Digamma => go!(|x| gamma::digamma(x)),
        Polygamma(n) => go!(|x| gamma::polygamma(n, x)),
        Mvlgamma(p) => {
            // PyTorch's composition rounds to the storage dtype at each step
            // (`lgamma(x + arange(...)).sum(-1) + c` on float16/bfloat16 tensors);
            // `r` is the identity for float32/float64.
            let r = |v: T::C| T::down(v).up();
            let k = c((p * (p - 1)) as f64 / 4.0 * PI.ln());
            go!(|x| {
                let mut s = zero;
                for j in (0..p).rev() {
                    s = s + r(gamma::lgamma_c(r(x + c(-(j as f64) / 2.0))));
                }
                r(s) + k
            })
        }
        I0 | ModifiedBesselI0 => go!(|x| bessel::i0(x)),
        I0e => go!(|x| bessel::i0e(x)),
        I1 => go!(|x| bessel::i1(x, false)),
        ModifiedBesselI1 => go!(|x| bessel::i1(x, true)),
        I1e => go!(|x| bessel::i1e(x)),
        BesselJ0 => go!(|x| bessel::j0(x)),
        BesselJ1 => go!(|x| bessel::j1(x)),
        BesselY0 => go!(|x| bessel::y0(x)),
        BesselY1 => go!(|x| bessel::y1(x)),
        ModifiedBesselK0 => go!(|x| bessel::k0(x, false)),
        ModifiedBesselK1 => go!(|x| bessel::k1(x, false)),
        ScaledModifiedBesselK0 => go!(|x| bessel::k0(x, true)),
        ScaledModifiedBesselK1 => go!(|x| bessel::k1(x, true)),
        SphericalBesselJ0 => go!(|x| bessel::spherical_j0(x)),
        AiryAi => go!(|x| bessel::airy_ai(x)),
        Erfcx => go!(|x| c(normal::erfcx(x.f()))),
        Ndtri => go!(|x| c(normal::ndtri(x.f()))),
        LogNdtr => go!(|x| c(normal::log_ndtr(x.f()))),
        Sinc => {
            let pi = c(PI);
            go!(|x| if x == zero {
                one
            } else {
                let p = pi * x;
                p.sin() / p
            })
        }
        Deg2rad => {
            let k = c(PI / 180.0);
            go!(|x| x * k)
        }
        Angle => {
            let pi = c(PI);
            go!(|x| if x < zero { pi } else if x.is_nan() { x } else { zero })
        }
        Rad2deg => {
            let k = c(180.0 / PI);
            go!(|x| x * k)
        }
        Entr => go!(|x| if x.is_nan() {
            x
        } else if x > zero {
            -x * x.ln()
        } else if x == zero {
            zero
        } else {
            T::C::neg_infinity()
        }),
        _ => unreachable!("{} has a kernel of its own", op.name()),
    }
}

/// The largest finite value of the storage type `T`, in its compute type.
fn half_max<T: Compute>() -> T::C {
    let v = match T::DTYPE {
        DType::Float16 => 65504.0,
        DType::BFloat16 => 3.389_531_389_251_535_5e38,
        DType::Float32 => f32::MAX as f64,
        _ => f64::MAX,
    };
    <T::C as Real>::c(v)
}

#[inline(always)]
fn softplus<C: Real>(x: C, beta: C, thr: C) -> C {
    if x * beta > thr {
        x
    } else {
        (x * beta).exp().ln_1p() / beta
    }
}

