//! The vectorised float32/float64 forms of the unary ops of the core
//! vocabulary ([`UnaryOp`]) that have one, with runtime ISA dispatch on
//! contiguous runs, and an f64 scalar reference of each (strided runs, and
//! the accuracy tests of the vector forms).
//!
//! The op set is core's: this module adds no op names of its own. Which ops
//! run here is [`has_simd`]; [`crate::pointwise`] routes float32/float64
//! inputs of those ops here and computes every other case with its generic
//! per-dtype closures.

use crate::elementwise::Num;
use crate::iter::Plan;
use crate::simd::{isa, map1, math as m, Isa, Vf};
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::{Element, UnaryOp};

/// The ops with a vector form here: float32/float64 inputs of these run
/// vectorised on contiguous runs.
pub const SIMD_OPS: [UnaryOp; 17] = {
    use UnaryOp::*;
    [
        Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Tanh, Sigmoid, Erf, Erfc, Reciprocal, Silu,
        Gelu(false), Gelu(true),
    ]
};

/// Does `op` have a vectorised float32/float64 form ([`SIMD_OPS`])?
pub fn has_simd(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Sqrt | Rsqrt | Tanh | Sigmoid | Erf | Erfc | Reciprocal | Silu | Gelu(_)
    )
}

/// Scalar reference of the [`SIMD_OPS`], in f64: the strided runs use it, and
/// the tests measure the vector forms against it. NaN for any other op.
pub fn reference(op: UnaryOp, x: f64) -> f64 {
    use UnaryOp::*;
    match op {
        Sqrt => x.sqrt(),
        Rsqrt => 1.0 / x.sqrt(),
        Exp => x.exp(),
        Exp2 => x.exp2(),
        Expm1 => if x == 0.0 { x } else { x.exp_m1() },
        Log => x.ln(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Log1p => if x == 0.0 { x } else { x.ln_1p() },
        Tanh => x.tanh(),
        Sigmoid => x_sigmoid(1.0, x),
        Erf => erf(x),
        Erfc => erfc(x),
        Reciprocal => 1.0 / x,
        Silu => x_sigmoid(x, x),
        Gelu(false) => m::gelu::<f64>(x),
        Gelu(true) => {
            let inner = std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2 * (x + 0.044715 * x * x * x);
            x_sigmoid(x, 2.0 * inner)
        }
        _ => f64::NAN,
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

/// `x · sigmoid(z)` without overflow or cancellation.
fn x_sigmoid(x: f64, z: f64) -> f64 {
    if z >= 0.0 {
        x / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        x * e / (1.0 + e)
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

/// The vector form of `op` on one vector (for the [`SIMD_OPS`]).
#[inline(always)]
fn simd_apply<V: Vf>(op: UnaryOp, x: V) -> V {
    use UnaryOp::*;
    let k = V::c;
    match op {
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
        Erf => m::erf(x),
        Erfc => m::erfc(x),
        Reciprocal => k(1.0).div(x),
        Silu => m::silu(x),
        Gelu(false) => m::gelu(x),
        Gelu(true) => m::gelu_tanh(x),
        _ => unreachable!("no vector form: callers check has_simd"),
    }
}

/// One specialised loop per listed op (`op` is a constant inside each arm).
macro_rules! unary_arms {
    ($V:ty, $op:expr, $x:expr, $o:expr, $n:expr; $($k:pat),*) => {
        match $op {
            $(op @ $k => map1::<$V>($x, $o, $n, |v| simd_apply(op, v)),)*
            other => map1::<$V>($x, $o, $n, |v| simd_apply(other, v)),
        }
    };
}

/// Runs the vector form of `op` over a contiguous run, for one ISA.
macro_rules! simd_unary_fn {
    ($name:ident, $V:ty, $E:ty $(, $feat:literal)?) => {
        $(#[target_feature(enable = $feat)])?
        unsafe fn $name(op: UnaryOp, x: *const $E, o: *mut $E, n: usize) {
            unary_arms!(
                $V, op, x, o, n;
                UnaryOp::Exp, UnaryOp::Exp2, UnaryOp::Expm1, UnaryOp::Log, UnaryOp::Log2, UnaryOp::Log10,
                UnaryOp::Log1p, UnaryOp::Sqrt, UnaryOp::Rsqrt, UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Erf,
                UnaryOp::Erfc, UnaryOp::Reciprocal, UnaryOp::Silu, UnaryOp::Gelu(false), UnaryOp::Gelu(true)
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
    unsafe fn contiguous_unary(isa: Isa, op: UnaryOp, x: *const Self, o: *mut Self, n: usize);
}

macro_rules! fast_float {
    ($t:ty, $scalar:ident, $avx2:ident, $avx512:ident) => {
        impl FastFloat for $t {
            unsafe fn contiguous_unary(isa: Isa, op: UnaryOp, x: *const $t, o: *mut $t, n: usize) {
                if n == 0 {
                    return;
                }
                if !has_simd(op) {
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
pub fn unary_f32(op: UnaryOp, out: Dst, a: Src) {
    unary_fast::<f32>(op, out, a)
}

/// `out = op(a)` for float64 tensors; `a` already broadcast to `out`'s shape.
pub fn unary_f64(op: UnaryOp, out: Dst, a: Src) {
    unary_fast::<f64>(op, out, a)
}

fn unary_fast<T: FastFloat>(op: UnaryOp, out: Dst, a: Src) {
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

/// `out[i] = op(x[i])` on contiguous f32 slices, on the calling thread.
///
/// # Panics
/// If the lengths differ.
pub fn unary_slice_f32(op: UnaryOp, x: &[f32], out: &mut [f32]) {
    unary_slice_with(isa(), op, x, out)
}

/// `out[i] = op(x[i])` on contiguous f64 slices, on the calling thread.
///
/// # Panics
/// If the lengths differ.
pub fn unary_slice_f64(op: UnaryOp, x: &[f64], out: &mut [f64]) {
    unary_slice_with(isa(), op, x, out)
}

/// As [`unary_slice_f32`] with an explicit instruction set (for tests and
/// benchmarks). Levels this CPU lacks fall back to the best supported one below.
#[allow(private_bounds)]
pub fn unary_slice_with<T: FastFloat>(isa_req: Isa, op: UnaryOp, x: &[T], out: &mut [T]) {
    assert_eq!(x.len(), out.len(), "unary_slice: length mismatch");
    let isa = Isa::ALL.iter().rev().copied().find(|i| *i <= isa_req && i.is_supported()).unwrap_or(Isa::Scalar);
    // SAFETY: both slices hold `len` elements and cannot overlap (borrow rules);
    // `isa` is supported.
    unsafe { T::contiguous_unary(isa, op, x.as_ptr(), out.as_mut_ptr(), x.len()) }
}
