//! Unary elementwise kernels: the op list of PyTorch's pointwise unary
//! functions as [`UnaryKind`], a scalar f64 reference per op, and fast f32/f64
//! kernels that run vectorised (with runtime ISA dispatch) on contiguous runs.
//!
//! Paths, per run of the strided iterator:
//! - f32/f64, contiguous input and output, op with a vector form
//!   ([`UnaryKind::has_simd`]): the SIMD algorithm of `simd::math`;
//! - f16/bf16, contiguous: converted to f32 in blocks, the f32 SIMD path, and back;
//! - anything else (strided or broadcast runs, ops without a vector form):
//!   [`reference()`] per element, computed in f64 and rounded to the dtype.
//!
//! Integer and bool dtypes support the ops that keep their dtype in PyTorch
//! (neg, abs, sign, square, relu, floor/ceil/round/trunc); the op layer
//! promotes to a float dtype for the rest.

use crate::elementwise::Num;
use crate::iter::Plan;
use crate::simd::{isa, map1, math as m, Isa, Vf};
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::{DType, Element, Error, Result};
use half::{bf16, f16};

/// A pointwise unary function. Parameterised variants carry their PyTorch
/// arguments; [`UnaryKind::SOFTPLUS`] is softplus with the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryKind {
    /// `-x`
    Neg,
    /// `|x|`
    Abs,
    /// `-1`, `0` or `1` (`0` for NaN, as PyTorch)
    Sign,
    /// `√x`
    Sqrt,
    /// `1/√x`
    Rsqrt,
    /// `e^x`
    Exp,
    /// `2^x`
    Exp2,
    /// `e^x - 1`
    Expm1,
    /// `ln x`
    Log,
    /// `log2 x`
    Log2,
    /// `log10 x`
    Log10,
    /// `ln(1 + x)`
    Log1p,
    /// `sin x`
    Sin,
    /// `cos x`
    Cos,
    /// `tan x`
    Tan,
    /// `asin x`
    Asin,
    /// `acos x`
    Acos,
    /// `atan x`
    Atan,
    /// `sinh x`
    Sinh,
    /// `cosh x`
    Cosh,
    /// `tanh x`
    Tanh,
    /// `asinh x`
    Asinh,
    /// `acosh x`
    Acosh,
    /// `atanh x`
    Atanh,
    /// `1/(1 + e^-x)`
    Sigmoid,
    /// `ln(x/(1 - x))`
    Logit,
    /// `logit(clamp(x, eps, 1 - eps))`
    LogitEps(f64),
    /// error function
    Erf,
    /// `1 - erf x`
    Erfc,
    /// inverse error function
    Erfinv,
    /// `⌊x⌋`
    Floor,
    /// `⌈x⌉`
    Ceil,
    /// round half to even
    Round,
    /// `round(x · 10^d) / 10^d` (PyTorch's `round(decimals=d)`)
    RoundDecimals(i32),
    /// toward zero
    Trunc,
    /// `x - trunc(x)`
    Frac,
    /// `1/x`
    Reciprocal,
    /// `x²`
    Square,
    /// `max(x, 0)` (NaN propagates)
    Relu,
    /// `min(max(x, 0), 6)`
    Relu6,
    /// `x > 0 ? x : slope·x`
    LeakyRelu(f64),
    /// `x > 0 ? x : alpha·(e^x - 1)`
    Elu(f64),
    /// `x > 0 ? x : alpha·(e^(x/alpha) - 1)`
    Celu(f64),
    /// `scale · (x > 0 ? x : alpha·(e^x - 1))` with PyTorch's constants
    Selu,
    /// `x · sigmoid(x)`
    Silu,
    /// `x · tanh(softplus(x))`
    Mish,
    /// `x·beta > threshold ? x : ln(1 + e^(beta·x))/beta`
    Softplus {
        /// `beta`
        beta: f64,
        /// `threshold`
        threshold: f64,
    },
    /// `x / (1 + |x|)`
    Softsign,
    /// `clamp(x, min, max)`
    Hardtanh(f64, f64),
    /// `relu6(x + 3) / 6`
    Hardsigmoid,
    /// `x · relu6(x + 3) / 6`
    Hardswish,
    /// `x/2 · (1 + erf(x/√2))`
    Gelu,
    /// `x/2 · (1 + tanh(√(2/π)(x + 0.044715x³)))`
    GeluTanh,
    /// NaN → `nan`, +inf → `posinf`, -inf → `neginf` (the op layer resolves
    /// PyTorch's defaults to the dtype's finite extremes)
    NanToNum {
        /// replacement for NaN
        nan: f64,
        /// replacement for +inf
        posinf: f64,
        /// replacement for -inf
        neginf: f64,
    },
}

const SELU_ALPHA: f64 = 1.6732632423543772848170429916717;
const SELU_SCALE: f64 = 1.0507009873554804934193349852946;

impl UnaryKind {
    /// `softplus` with PyTorch's defaults (`beta = 1`, `threshold = 20`).
    pub const SOFTPLUS: UnaryKind = UnaryKind::Softplus { beta: 1.0, threshold: 20.0 };

    /// Every op, with default parameters for the parameterised ones (for tests
    /// and benchmarks).
    pub const ALL: [UnaryKind; 55] = {
        use UnaryKind::*;
        [
            Neg, Abs, Sign, Sqrt, Rsqrt, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sin, Cos, Tan, Asin,
            Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Sigmoid, Logit, LogitEps(9.5367431640625e-7), Erf, Erfc,
            Erfinv, Floor, Ceil, Round, RoundDecimals(2), Trunc, Frac, Reciprocal, Square, Relu, Relu6,
            LeakyRelu(0.01), Elu(1.0), Celu(1.0), Selu, Silu, Mish, UnaryKind::SOFTPLUS, Softsign,
            Hardtanh(-1.0, 1.0), Hardsigmoid, Hardswish, Gelu, GeluTanh,
            NanToNum { nan: 0.0, posinf: 3.4028234663852886e38, neginf: -3.4028234663852886e38 },
            RoundDecimals(-1),
        ]
    };

    /// The PyTorch function name.
    pub fn name(self) -> &'static str {
        use UnaryKind::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Sign => "sign",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Exp => "exp",
            Exp2 => "exp2",
            Expm1 => "expm1",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Sigmoid => "sigmoid",
            Logit | LogitEps(_) => "logit",
            Erf => "erf",
            Erfc => "erfc",
            Erfinv => "erfinv",
            Floor => "floor",
            Ceil => "ceil",
            Round | RoundDecimals(_) => "round",
            Trunc => "trunc",
            Frac => "frac",
            Reciprocal => "reciprocal",
            Square => "square",
            Relu => "relu",
            Relu6 => "relu6",
            LeakyRelu(_) => "leaky_relu",
            Elu(_) => "elu",
            Celu(_) => "celu",
            Selu => "selu",
            Silu => "silu",
            Mish => "mish",
            Softplus { .. } => "softplus",
            Softsign => "softsign",
            Hardtanh(..) => "hardtanh",
            Hardsigmoid => "hardsigmoid",
            Hardswish => "hardswish",
            Gelu => "gelu",
            GeluTanh => "gelu",
            NanToNum { .. } => "nan_to_num",
        }
    }

    /// Does the op have a vectorised f32/f64 form?
    pub fn has_simd(self) -> bool {
        use UnaryKind::*;
        !matches!(self, Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Erfinv | RoundDecimals(_))
    }

    /// Is the op defined on integer dtypes (keeping the dtype)?
    pub fn supports_integers(self) -> bool {
        use UnaryKind::*;
        matches!(self, Neg | Abs | Sign | Square | Relu | Floor | Ceil | Round | Trunc)
    }
}

/// Scalar reference of every op, in f64 (std math; erf/erfc/erfinv hand-written).
/// The strided paths of every float dtype use it, and the tests measure the
/// vectorised kernels against it.
pub fn reference(op: UnaryKind, x: f64) -> f64 {
    use UnaryKind::*;
    match op {
        Neg => -x,
        Abs => x.abs(),
        Sign => sign(x),
        Sqrt => x.sqrt(),
        Rsqrt => 1.0 / x.sqrt(),
        Exp => x.exp(),
        Exp2 => x.exp2(),
        Expm1 => if x == 0.0 { x } else { x.exp_m1() },
        Log => x.ln(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Log1p => if x == 0.0 { x } else { x.ln_1p() },
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        Asinh => asinh(x),
        Acosh => acosh(x),
        Atanh => atanh(x),
        Sigmoid => x_sigmoid(1.0, x),
        Logit => logit(x),
        LogitEps(eps) => logit(clamp(x, eps, 1.0 - eps)),
        Erf => erf(x),
        Erfc => erfc(x),
        Erfinv => erfinv(x),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round_ties_even(),
        RoundDecimals(d) => round_decimals(x, d),
        Trunc => x.trunc(),
        Frac => x - x.trunc(),
        Reciprocal => 1.0 / x,
        Square => x * x,
        Relu => relu(x),
        Relu6 => clamp(x, 0.0, 6.0),
        LeakyRelu(s) => {
            if x > 0.0 {
                x
            } else {
                x * s
            }
        }
        Elu(a) => elu(x, a, 1.0),
        Celu(a) => elu(x, a, 1.0 / a),
        Selu => SELU_SCALE * elu(x, SELU_ALPHA, 1.0),
        Silu => x_sigmoid(x, x),
        Mish => x * x.exp().ln_1p().tanh(),
        Softplus { beta, threshold } => softplus(x, beta, threshold),
        Softsign => x / (1.0 + x.abs()),
        Hardtanh(lo, hi) => clamp(x, lo, hi),
        Hardsigmoid => clamp(x + 3.0, 0.0, 6.0) / 6.0,
        Hardswish => x * clamp(x + 3.0, 0.0, 6.0) / 6.0,
        Gelu => m::gelu::<f64>(x),
        GeluTanh => {
            let inner = std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2 * (x + 0.044715 * x * x * x);
            x_sigmoid(x, 2.0 * inner)
        }
        NanToNum { nan, posinf, neginf } => nan_to_num(x, nan, posinf, neginf),
    }
}

/// `asinh` without std's overflow of `|x| + |x|/(…)` near the top of the
/// range (PyTorch's is finite up to the largest float): `ln 2|x|` past 2^28,
/// where the dropped `1/(4x²)` is below the last bit.
pub fn asinh(x: f64) -> f64 {
    if x.abs() > 268_435_456.0 {
        (x.abs().ln() + std::f64::consts::LN_2).copysign(x)
    } else {
        x.asinh()
    }
}

/// `acosh` without the overflow of `x + sqrt(x² - 1)`: `ln 2x` past 2^28.
pub fn acosh(x: f64) -> f64 {
    if x > 268_435_456.0 {
        x.ln() + std::f64::consts::LN_2
    } else {
        x.acosh()
    }
}

/// `atanh` accurate near ±1. std's `0.5 * ln_1p(2x / (1 - x))` takes `ln_1p`
/// of a value near -1 for x near -1 (atanh(-0.9999946) in float32 lost three
/// digits); by odd symmetry the argument stays positive, and below 0.5 the
/// form `t + t·|x| / (1 - |x|)` keeps `ln_1p`'s small-argument accuracy.
pub fn atanh(x: f64) -> f64 {
    let a = x.abs();
    let r = if a < 0.5 {
        let t = a + a;
        0.5 * (t + t * a / (1.0 - a)).ln_1p()
    } else {
        0.5 * ((a + a) / (1.0 - a)).ln_1p()
    };
    r.copysign(x)
}

fn sign(x: f64) -> f64 {
    ((0.0 < x) as i32 - (x < 0.0) as i32) as f64
}

/// `max(x, 0)` keeping NaN and `-0.0` as PyTorch does.
fn relu(x: f64) -> f64 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// `min(max(x, lo), hi)` with NaN passing through.
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let y = if x < lo { lo } else { x };
    if y > hi {
        hi
    } else {
        y
    }
}

/// `x · sigmoid(z)` without overflow or cancellation.
fn x_sigmoid(x: f64, z: f64) -> f64 {
    if z >= 0.0 {
        x / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        x * e / (1.0 + e)
    }
}

/// `ln(x/(1-x))`, via `ln_1p((2x-1)/(1-x))` near 1/2 where the ratio is close to 1.
fn logit(x: f64) -> f64 {
    if (x - 0.5).abs() < 0.25 {
        ((2.0 * x - 1.0) / (1.0 - x)).ln_1p()
    } else {
        (x / (1.0 - x)).ln()
    }
}

fn elu(x: f64, alpha: f64, input_scale: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        alpha * (x * input_scale).exp_m1()
    }
}

fn softplus(x: f64, beta: f64, threshold: f64) -> f64 {
    if x * beta > threshold {
        x
    } else {
        (x * beta).exp().ln_1p() / beta
    }
}

fn round_decimals(x: f64, d: i32) -> f64 {
    if d >= 0 {
        let s = 10f64.powi(d);
        (x * s).round_ties_even() / s
    } else {
        let s = 10f64.powi(-d);
        (x / s).round_ties_even() * s
    }
}

fn nan_to_num(x: f64, nan: f64, posinf: f64, neginf: f64) -> f64 {
    if x.is_nan() {
        nan
    } else if x == f64::INFINITY {
        posinf
    } else if x == f64::NEG_INFINITY {
        neginf
    } else {
        x
    }
}

/// Error function in f64 (fdlibm's method; see [`crate::simd`]'s math notes).
pub fn erf(x: f64) -> f64 {
    m::erf::<f64>(x)
}

/// Complementary error function in f64.
pub fn erfc(x: f64) -> f64 {
    m::erfc::<f64>(x)
}

/// Inverse error function in f64: Giles' single-precision approximation
/// refined by Newton steps on `erf` (on `ln erfc` near ±1, avoiding cancellation).
pub fn erfinv(x: f64) -> f64 {
    let a = x.abs();
    if x.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(x);
    }
    // M. Giles, "Approximating the erfinv function", GPU Computing Gems (2011).
    let w = -((1.0 - a) * (1.0 + a)).ln();
    let mut y = if w < 5.0 {
        let w = w - 2.5;
        let c = [
            1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06, -3.5233877e-06,
            3.43273939e-07, 2.81022636e-08,
        ];
        horner(w, &c) * a
    } else {
        let w = w.sqrt() - 3.0;
        let c = [
            2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844, 0.00134934322,
            0.000100950558, -0.000200214257,
        ];
        horner(w, &c) * a
    };
    // Newton steps: on erf near 0; on ln(erfc) in the tail, where the initial
    // guess (fitted for f32 arguments) can be far and ln(erfc) is nearly quadratic.
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..8 {
        let d = two_over_sqrt_pi * (-y * y).exp();
        if d == 0.0 {
            break;
        }
        let step = if y > 0.5 {
            let c = erfc(y);
            (c / (1.0 - a)).ln() * c / d
        } else {
            (a - erf(y)) / d
        };
        y += step;
        if step.abs() <= 1e-17 * y.abs() {
            break;
        }
    }
    y.copysign(x)
}

fn horner(x: f64, c: &[f64]) -> f64 {
    c.iter().rev().fold(0.0, |p, &ci| p * x + ci)
}

/// The vector form of `op` on one vector (for ops where [`UnaryKind::has_simd`]).
#[inline(always)]
fn simd_apply<V: Vf>(op: UnaryKind, x: V) -> V {
    use UnaryKind::*;
    let k = V::c;
    let relu = |v: V| k(0.0).max(v);
    let clamp = |v: V, lo: f64, hi: f64| k(hi).min(k(lo).max(v));
    match op {
        Neg => x.neg(),
        Abs => x.abs(),
        Sign => V::select(x.gt(k(0.0)), k(1.0), V::select(x.lt(k(0.0)), k(-1.0), k(0.0))),
        Sqrt => x.sqrt(),
        Rsqrt => k(1.0).div(x.sqrt()),
        Exp => m::exp(x),
        Exp2 => m::exp2(x),
        Expm1 => m::expm1(x),
        Log => m::log(x),
        Log2 => m::log(x).mul(k(std::f64::consts::LOG2_E)),
        Log10 => m::log(x).mul(k(std::f64::consts::LOG10_E)),
        Log1p => m::log1p(x),
        Tanh => m::tanh(x),
        Sigmoid => m::sigmoid(x),
        Logit => simd_logit(x),
        LogitEps(eps) => simd_logit(clamp(x, eps, 1.0 - eps)),
        Erf => m::erf(x),
        Erfc => m::erfc(x),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round(),
        Trunc => x.trunc(),
        Frac => x.sub(x.trunc()),
        Reciprocal => k(1.0).div(x),
        Square => x.mul(x),
        Relu => relu(x),
        Relu6 => clamp(x, 0.0, 6.0),
        LeakyRelu(s) => V::select(x.gt(k(0.0)), x, x.mul(k(s))),
        Elu(a) => V::select(x.gt(k(0.0)), x, k(a).mul(m::expm1(x))),
        Celu(a) => V::select(x.gt(k(0.0)), x, k(a).mul(m::expm1(x.mul(k(1.0 / a))))),
        Selu => k(SELU_SCALE).mul(V::select(x.gt(k(0.0)), x, k(SELU_ALPHA).mul(m::expm1(x)))),
        Silu => m::silu(x),
        Mish => m::mish(x),
        Softplus { beta, threshold } => m::softplus(x, k(beta), k(threshold)),
        Softsign => x.div(k(1.0).add(x.abs())),
        Hardtanh(lo, hi) => clamp(x, lo, hi),
        Hardsigmoid => clamp(x.add(k(3.0)), 0.0, 6.0).div(k(6.0)),
        Hardswish => x.mul(clamp(x.add(k(3.0)), 0.0, 6.0)).div(k(6.0)),
        Gelu => m::gelu(x),
        GeluTanh => m::gelu_tanh(x),
        NanToNum { nan, posinf, neginf } => {
            let y = V::select(x.is_nan(), k(nan), x);
            let y = V::select(x.eq(k(f64::INFINITY)), k(posinf), y);
            V::select(x.eq(k(f64::NEG_INFINITY)), k(neginf), y)
        }
        Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Erfinv | RoundDecimals(_) => {
            unreachable!("no vector form")
        }
    }
}

/// `ln(x/(1-x))`, as `log1p((2x-1)/(1-x))` near 1/2 where the ratio is close to 1.
#[inline(always)]
fn simd_logit<V: Vf>(x: V) -> V {
    let one = V::c(1.0);
    let om = one.sub(x);
    let far = m::log(x.div(om));
    let near = m::log1p(x.add(x).sub(one).div(om));
    V::select(x.sub(V::c(0.5)).abs().lt(V::c(0.25)), near, far)
}

/// One specialised loop per listed op (`op` is a constant inside each arm);
/// parameterised ops share one loop.
macro_rules! unary_arms {
    ($V:ty, $op:expr, $x:expr, $o:expr, $n:expr; $($k:ident),*) => {
        match $op {
            $(UnaryKind::$k => map1::<$V>($x, $o, $n, |v| simd_apply(UnaryKind::$k, v)),)*
            other => map1::<$V>($x, $o, $n, |v| simd_apply(other, v)),
        }
    };
}

/// Runs the vector form of `op` over a contiguous run, for one ISA.
macro_rules! simd_unary_fn {
    ($name:ident, $V:ty, $E:ty $(, $feat:literal)?) => {
        $(#[target_feature(enable = $feat)])?
        unsafe fn $name(op: UnaryKind, x: *const $E, o: *mut $E, n: usize) {
            unary_arms!(
                $V, op, x, o, n;
                Neg, Abs, Sign, Sqrt, Rsqrt, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Tanh, Sigmoid, Logit, Erf,
                Erfc, Floor, Ceil, Round, Trunc, Frac, Reciprocal, Square, Relu, Relu6, Selu, Silu, Mish, Softsign,
                Hardsigmoid, Hardswish, Gelu, GeluTanh
            )
        }
    };
}

simd_unary_fn!(unary_scalar_f32, f32, f32);
simd_unary_fn!(unary_scalar_f64, f64, f64);
#[cfg(target_arch = "x86_64")]
simd_unary_fn!(unary_avx2_f32, crate::simd::avx2::F32x8, f32, "avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_unary_fn!(unary_avx2_f64, crate::simd::avx2::F64x4, f64, "avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_unary_fn!(unary_avx512_f32, crate::simd::avx512::F32x16, f32, "avx512f,avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_unary_fn!(unary_avx512_f64, crate::simd::avx512::F64x8, f64, "avx512f,avx2,fma");

/// A float type with a contiguous fast path.
pub(crate) trait FastFloat: Element + Num {
    /// `o[..n] = op(x[..n])` on a contiguous run with the given ISA
    /// (falls back to [`reference`] for ops without a vector form).
    ///
    /// # Safety
    /// `x`/`o` valid for `n` elements (may be equal, must not otherwise overlap);
    /// `isa` must be supported by this CPU.
    unsafe fn contiguous_unary(isa: Isa, op: UnaryKind, x: *const Self, o: *mut Self, n: usize);
}

macro_rules! fast_float {
    ($t:ty, $scalar:ident, $avx2:ident, $avx512:ident) => {
        impl FastFloat for $t {
            unsafe fn contiguous_unary(isa: Isa, op: UnaryKind, x: *const $t, o: *mut $t, n: usize) {
                if n == 0 {
                    return;
                }
                if !op.has_simd() {
                    for i in 0..n {
                        *o.add(i) = reference(op, *x.add(i) as f64) as $t;
                    }
                    return;
                }
                match isa {
                    #[cfg(target_arch = "x86_64")]
                    Isa::Avx512 => $avx512(op, x, o, n),
                    #[cfg(target_arch = "x86_64")]
                    Isa::Avx2 => $avx2(op, x, o, n),
                    _ => $scalar(op, x, o, n),
                }
            }
        }
    };
}
fast_float!(f32, unary_scalar_f32, unary_avx2_f32, unary_avx512_f32);
fast_float!(f64, unary_scalar_f64, unary_avx2_f64, unary_avx512_f64);

/// `out = op(a)` for float32 tensors; `a` already broadcast to `out`'s shape.
/// Contiguous runs are vectorised; other runs use [`reference()`].
pub fn unary_f32(op: UnaryKind, out: Dst, a: Src) {
    unary_fast::<f32>(op, out, a)
}

/// `out = op(a)` for float64 tensors; `a` already broadcast to `out`'s shape.
pub fn unary_f64(op: UnaryKind, out: Dst, a: Src) {
    unary_fast::<f64>(op, out, a)
}

fn unary_fast<T: FastFloat>(op: UnaryKind, out: Dst, a: Src) {
    let isa = isa();
    run_unary::<T>(out, a, |x, o, n, st| {
        // SAFETY: the plan's offsets address elements of both layouts, which
        // the caller guarantees fit their storages; `out` may equal `a`.
        unsafe {
            if st == [1, 1] {
                T::contiguous_unary(isa, op, x, o, n);
            } else {
                for i in 0..n as isize {
                    *o.offset(i * st[0]) = T::from_f64(reference(op, (*x.offset(i * st[1])).to_f64()));
                }
            }
        }
    });
}

/// Drives `f(x, o, n, strides)` over the runs of `out = op(a)` in parallel.
fn run_unary<T: Element>(out: Dst, a: Src, f: impl Fn(*const T, *mut T, usize, [isize; 2]) + Sync) {
    let plan = Plan::<2>::new(
        &out.layout.shape,
        [&out.layout.strides, &a.layout.strides],
        [out.layout.offset, a.layout.offset],
    );
    let (ob, ab) = (out.base as usize, a.base as usize);
    plan.for_each_par(|off, n, st| {
        // SAFETY: offsets come from the plan over the two layouts.
        let (o, x) = unsafe { (at_mut::<T>(ob as *mut u8, off[0]), at::<T>(ab as *const u8, off[1])) };
        f(x, o, n, st)
    });
}

/// Half types: contiguous runs go through the f32 vector path in blocks.
macro_rules! half_unary {
    ($name:ident, $h:ty) => {
        fn $name(op: UnaryKind, out: Dst, a: Src) {
            use half::slice::HalfFloatSliceExt;
            let isa = isa();
            run_unary::<$h>(out, a, |x, o, n, st| {
                // SAFETY: as in `unary_fast`: plan offsets inside both layouts.
                unsafe {
                    if st == [1, 1] {
                        const B: usize = 512;
                        let mut buf = [0f32; B];
                        let mut i = 0;
                        while i < n {
                            let c = B.min(n - i);
                            let src = std::slice::from_raw_parts(x.add(i), c);
                            src.convert_to_f32_slice(&mut buf[..c]);
                            f32::contiguous_unary(isa, op, buf.as_ptr(), buf.as_mut_ptr(), c);
                            std::slice::from_raw_parts_mut(o.add(i), c).convert_from_f32_slice(&buf[..c]);
                            i += c;
                        }
                    } else {
                        for i in 0..n as isize {
                            *o.offset(i * st[0]) = <$h as Element>::from_f64(reference(op, (*x.offset(i * st[1])).to_f64()));
                        }
                    }
                }
            });
        }
    };
}
half_unary!(unary_f16, f16);
half_unary!(unary_bf16, bf16);

/// Integer/bool ops that keep the dtype.
fn unary_int<T: Num>(op: UnaryKind, out: Dst, a: Src) {
    let zero = T::zero();
    let one = T::one();
    let f = move |v: T| -> T {
        match op {
            UnaryKind::Neg => v.neg(),
            UnaryKind::Abs => v.abs(),
            UnaryKind::Sign => {
                if v > zero {
                    one
                } else if v < zero {
                    zero.sub(one)
                } else {
                    zero
                }
            }
            UnaryKind::Square => v.mul(v),
            UnaryKind::Relu => {
                if v < zero {
                    zero
                } else {
                    v
                }
            }
            _ => v, // floor/ceil/round/trunc are the identity on integers
        }
    };
    run_unary::<T>(out, a, |x, o, n, st| {
        // SAFETY: plan offsets inside both layouts.
        unsafe {
            for i in 0..n as isize {
                *o.offset(i * st[0]) = f(*x.offset(i * st[1]));
            }
        }
    });
}

/// `out = op(a)` for any dtype (`out` and `a` share `dtype`; `a` already
/// broadcast to `out`'s shape; `out` may be `a` itself for in-place ops).
///
/// Errors with `NotImplementedError` for an op the dtype does not support
/// (the op layer promotes integer inputs of float-only ops first).
pub fn unary(op: UnaryKind, dtype: DType, out: Dst, a: Src) -> Result<()> {
    match dtype {
        DType::Float32 => unary_f32(op, out, a),
        DType::Float64 => unary_f64(op, out, a),
        DType::Float16 => unary_f16(op, out, a),
        DType::BFloat16 => unary_bf16(op, out, a),
        DType::Bool if op == UnaryKind::Neg => {
            return Err(Error::runtime(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ))
        }
        _ if op.supports_integers() => {
            ferrotorch_core::dispatch_dtype!(dtype, T => unary_int::<T>(op, out, a))
        }
        _ => {
            return Err(Error::not_implemented(format!(
                "\"{}_cpu\" not implemented for '{}'",
                op.name(),
                dtype.name()
            )))
        }
    }
    Ok(())
}

/// `out[i] = op(x[i])` on contiguous f32 slices, on the calling thread.
///
/// # Panics
/// If the lengths differ.
pub fn unary_slice_f32(op: UnaryKind, x: &[f32], out: &mut [f32]) {
    unary_slice_with(isa(), op, x, out)
}

/// `out[i] = op(x[i])` on contiguous f64 slices, on the calling thread.
///
/// # Panics
/// If the lengths differ.
pub fn unary_slice_f64(op: UnaryKind, x: &[f64], out: &mut [f64]) {
    unary_slice_with(isa(), op, x, out)
}

/// As [`unary_slice_f32`] with an explicit instruction set (for tests and
/// benchmarks). Levels this CPU lacks fall back to the best supported one below.
#[allow(private_bounds)]
pub fn unary_slice_with<T: FastFloat>(isa_req: Isa, op: UnaryKind, x: &[T], out: &mut [T]) {
    assert_eq!(x.len(), out.len(), "unary_slice: length mismatch");
    let isa = Isa::ALL.iter().rev().copied().find(|i| *i <= isa_req && i.is_supported()).unwrap_or(Isa::Scalar);
    // SAFETY: both slices hold `len` elements and cannot overlap (borrow rules);
    // `isa` is supported.
    unsafe { T::contiguous_unary(isa, op, x.as_ptr(), out.as_mut_ptr(), x.len()) }
}
