//! The CPU's binary elementwise kernels: `+ - * / **`, comparisons (the
//! float32/float64 arithmetic through the vectorised [`crate::binary`]
//! module), rounding divisions, remainders, bitwise and logical ops, and the float-only ops
//! (`atan2`, `hypot`, `logaddexp`, `copysign`). Integer ops compute in `i64`
//! and wrap back, which reproduces C's two's-complement results.

use crate::elementwise::{binary as bin_kernel, Float, Num};
use crate::iter::Plan;
use crate::real::{not_impl, Compute, Real};
use crate::real_dispatch;
use crate::{at, Dst, Src};
use ferrotorch_core::{dispatch_dtype, BinaryOp, DType, Element, Error, Result};
use num_traits::Float as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// The ops beyond arithmetic, comparisons and logical ops.
fn run_other(op: BinaryOp, o: Dst, sa: Src, sb: Src, compute: DType) -> Result<()> {
    use BinaryOp::*;
    match op {
        DivTrunc | DivFloor | Remainder | Fmod => {
            if compute == DType::Bool {
                return Err(not_impl(op.name(), compute));
            }
            if compute.is_floating_point() {
                // PyTorch's trunc division rounds the quotient to the dtype before
                // truncating (float16/bfloat16 `a / b` is a reduced-float op),
                // except when the divisor is one broadcast value: that path
                // divides in float32 (`div_trunc_cpu_reduced_float`).
                let round_quotient = !is_broadcast_scalar(sb);
                real_dispatch!(compute, op.name(), T => float_div_like::<T>(op, o, sa, sb, round_quotient));
            } else {
                // PyTorch checks each divisor as its loop reads it: an empty
                // result reads none.
                if o.layout.numel() > 0 && dispatch_dtype!(compute, T => any_zero::<T>(sb)) {
                    return Err(Error::runtime("ZeroDivisionError"));
                }
                dispatch_dtype!(compute, T => int_div_like::<T>(op, o, sa, sb));
            }
        }
        Fmax | Fmin => {
            let max = op == Fmax;
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                // NaN loses: pick the other side.
                if x != x { y } else if y != y { x } else if (x > y) == max { x } else { y }
            }))
        }
        Atan2 | Hypot | LogAddExp | CopySign => {
            real_dispatch!(compute, op.name(), T => float_misc::<T>(op, o, sa, sb))
        }
        _ if matches!(compute, DType::Float16 | DType::BFloat16) && !op.has_reduced_float_kernel() => {
            return Err(not_impl(op.name(), compute))
        }
        Xlogy | Xlog1py | Zeta | Igamma | Igammac | LogAddExp2 => {
            real_dispatch!(compute, op.name(), T => float_special::<T>(op, o, sa, sb))
        }
        _ if op.is_polynomial() => real_dispatch!(compute, op.name(), T => polynomial::<T>(op, o, sa, sb)),
        NextAfter => match compute {
            DType::Float64 => bin_kernel::<f64, f64, f64>(o, sa, sb, |x, y| next_after_bits!(x, y, u64, f64)),
            DType::Float32 => bin_kernel::<f32, f32, f32>(o, sa, sb, |x, y| next_after_bits!(x, y, u32, f32)),
            DType::Float16 => bin_kernel::<half::f16, half::f16, half::f16>(o, sa, sb, |x, y| next_after_bits!(x, y, u16, half::f16)),
            DType::BFloat16 => bin_kernel::<half::bf16, half::bf16, half::bf16>(o, sa, sb, |x, y| next_after_bits!(x, y, u16, half::bf16)),
            other => return Err(not_impl(op.name(), other)),
        },
        Heaviside => dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, |x: T, y: T| {
            // A NaN input is neither zero nor positive: 0, as PyTorch's kernel.
            if x == T::zero() { y } else if x > T::zero() { T::one() } else { T::zero() }
        })),
        Gcd | Lcm => {
            if compute.is_floating_point() || compute == DType::Bool {
                return Err(not_impl(op.name(), compute));
            }
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                let (a, b) = (x.to_i64(), y.to_i64());
                let g = gcd(a, b);
                T::from_i64(if op == Gcd {
                    g
                } else if g == 0 {
                    0
                } else {
                    (a / g).wrapping_mul(b).wrapping_abs()
                })
            }))
        }
        BitAnd | BitOr | BitXor => {
            if compute.is_floating_point() {
                return Err(not_impl(op.name(), compute));
            }
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                let (a, b) = (x.to_i64(), y.to_i64());
                T::from_i64(match op { BitAnd => a & b, BitOr => a | b, _ => a ^ b })
            }))
        }
        Shl | Shr => {
            if compute.is_floating_point() || compute == DType::Bool {
                return Err(not_impl(op.name(), compute));
            }
            let bits = (compute.itemsize() * 8) as i64;
            let signed = compute.is_signed();
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                let (a, s) = (x.to_i64(), y.to_i64());
                T::from_i64(if op == Shl {
                    if (0..bits).contains(&s) { a.wrapping_shl(s as u32) } else { 0 }
                } else if (0..bits).contains(&s) {
                    a >> s
                } else if signed {
                    a >> 63
                } else {
                    0
                })
            }))
        }
        _ => return Err(Error::runtime(format!("{}: no kernel", op.name()))),
    }
    Ok(())
}

/// `nextafter(x, y)` on the bit pattern of a float type (any width): one
/// unit in the last place towards `y`, the smallest subnormal away from zero.
macro_rules! next_after_bits {
    ($x:expr, $y:expr, $bits:ty, $t:ty) => {{
        let (x, y): ($t, $t) = ($x, $y);
        if x != x {
            x
        } else if y != y {
            y
        } else if x == y {
            y
        } else if x == <$t>::from_bits(0) || x == <$t>::from_bits((1 as $bits) << (<$bits>::BITS - 1)) {
            // The smallest subnormal with y's sign.
            <$t>::from_bits((y.to_bits() & ((1 as $bits) << (<$bits>::BITS - 1))) | 1)
        } else {
            let b = x.to_bits();
            let up = (x < y) == (x > <$t>::from_bits(0));
            <$t>::from_bits(if up { b + 1 } else { b - 1 })
        }
    }};
}
use next_after_bits;

/// Euclid's gcd of the magnitudes (`|i64::MIN|` wraps to itself, as in C).
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.wrapping_abs(), b.wrapping_abs());
    while a != 0 {
        let c = a;
        a = b.wrapping_rem(a);
        b = c;
    }
    b
}

/// `xlogy`, `xlog1py`, `zeta`, the incomplete gammas and `logaddexp2` (in f64
/// for the series-based ones, rounded once).
fn float_special<T: Compute>(op: BinaryOp, o: Dst, sa: Src, sb: Src) {
    use crate::special::gamma;
    bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
        let (a, b) = (x.up(), y.up());
        let zero = <T::C as num_traits::Zero>::zero();
        T::down(match op {
            BinaryOp::Xlogy | BinaryOp::Xlog1py => {
                if b.is_nan() {
                    b
                } else if a == zero {
                    zero
                } else if op == BinaryOp::Xlogy {
                    a * b.ln()
                } else {
                    a * b.ln_1p()
                }
            }
            BinaryOp::LogAddExp2 => {
                if a.is_infinite() && a == b {
                    a
                } else {
                    let m = a.max(b);
                    m + (-(a - b).abs()).exp2().ln_1p() * <T::C as Real>::c(std::f64::consts::LOG2_E)
                }
            }
            BinaryOp::Zeta => <T::C as Real>::c(gamma::zeta(a.f(), b.f())),
            BinaryOp::Igamma => <T::C as Real>::c(gamma::igamma(a.f(), b.f())),
            _ => <T::C as Real>::c(gamma::igammac(a.f(), b.f())),
        })
    })
}

/// The orthogonal polynomials `P_n(x)` (`x` the first operand, the degree `n`
/// the second), in the compute type.
fn polynomial<T: Compute>(op: BinaryOp, o: Dst, sa: Src, sb: Src) {
    use crate::special::poly::{degree, plain, shifted, Poly};
    use BinaryOp::*;
    let (p, is_shifted) = match op {
        ChebyshevT => (Poly::ChebyshevT, false),
        ChebyshevU => (Poly::ChebyshevU, false),
        ChebyshevV => (Poly::ChebyshevV, false),
        ChebyshevW => (Poly::ChebyshevW, false),
        ShiftedChebyshevT => (Poly::ChebyshevT, true),
        ShiftedChebyshevU => (Poly::ChebyshevU, true),
        ShiftedChebyshevV => (Poly::ChebyshevV, true),
        ShiftedChebyshevW => (Poly::ChebyshevW, true),
        HermiteH => (Poly::HermiteH, false),
        HermiteHe => (Poly::HermiteHe, false),
        LaguerreL => (Poly::LaguerreL, false),
        _ => (Poly::LegendreP, false),
    };
    bin_kernel::<T, T, T>(o, sa, sb, move |x: T, n: T| {
        let n = degree(n.to_f64());
        T::down(if is_shifted { shifted(p, x.up(), n) } else { plain(p, x.up(), n) })
    })
}

/// `logical_and/or/xor` over any dtype (non-zero is true, NaN included).
fn run_logical(op: BinaryOp, o: Dst, sa: Src, sb: Src, compute: DType) {
    dispatch_dtype!(compute, T => bin_kernel::<T, T, bool>(o, sa, sb, move |x: T, y: T| {
        let (a, b) = (x != T::zero(), y != T::zero());
        match op {
            BinaryOp::LogicalAnd => a && b,
            BinaryOp::LogicalOr => a || b,
            _ => a ^ b,
        }
    }))
}

/// PyTorch's `TensorIterator::is_scalar`: one value read at every position.
fn is_broadcast_scalar(b: Src) -> bool {
    b.layout.shape.iter().zip(&b.layout.strides).all(|(&n, &st)| n == 1 || st == 0)
}

/// Does any element of `b` (over its broadcast shape) equal zero?
fn any_zero<T: Element>(b: Src) -> bool {
    let found = AtomicBool::new(false);
    let plan = Plan::<1>::new(&b.layout.shape, [&b.layout.strides], [b.layout.offset]);
    let base = b.base as usize;
    plan.for_each_par(|off, n, st| {
        // SAFETY: offsets come from the plan over a layout that fits its storage.
        let x = unsafe { at::<T>(base as *const u8, off[0]) };
        for i in 0..n as isize {
            if unsafe { *x.offset(i * st[0]) } == T::zero() {
                found.store(true, Ordering::Relaxed);
                return;
            }
        }
    });
    found.load(Ordering::Relaxed)
}

fn int_div_like<T: Element>(op: BinaryOp, o: Dst, sa: Src, sb: Src) {
    bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
        let (a, b) = (x.to_i64(), y.to_i64());
        if b == 0 {
            return T::zero(); // checked before the kernel runs
        }
        let r = a.wrapping_rem(b);
        T::from_i64(match op {
            BinaryOp::DivTrunc => a.wrapping_div(b),
            BinaryOp::DivFloor => {
                let q = a.wrapping_div(b);
                if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q }
            }
            BinaryOp::Remainder => {
                if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r }
            }
            _ => r,
        })
    })
}

/// PyTorch's `div_floor_floating`, `remainder` and `fmod` for floats.
pub fn floor_div<C: Real>(a: C, b: C) -> C {
    if b == C::zero() {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != C::zero() && ((b < C::zero()) != (m < C::zero())) {
        div = div - C::one();
    }
    if div != C::zero() {
        let mut f = div.floor();
        if div - f > C::c(0.5) {
            f = f + C::one();
        }
        f
    } else {
        C::zero().copysign(a / b)
    }
}

fn float_div_like<T: Compute>(op: BinaryOp, o: Dst, sa: Src, sb: Src, round_quotient: bool) {
    bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
        let (a, b) = (x.up(), y.up());
        T::down(match op {
            BinaryOp::DivTrunc if round_quotient => T::down(a / b).up().trunc(),
            BinaryOp::DivTrunc => (a / b).trunc(),
            BinaryOp::DivFloor => floor_div(a, b),
            BinaryOp::Remainder => {
                let m = a % b;
                if m != <T::C as num_traits::Zero>::zero() && ((b < num_traits::Zero::zero()) != (m < num_traits::Zero::zero())) {
                    m + b
                } else {
                    m
                }
            }
            _ => a % b,
        })
    })
}

fn float_misc<T: Compute>(op: BinaryOp, o: Dst, sa: Src, sb: Src) {
    bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
        let (a, b) = (x.up(), y.up());
        T::down(match op {
            BinaryOp::Atan2 => a.atan2(b),
            BinaryOp::Hypot => a.hypot(b),
            BinaryOp::LogAddExp => {
                if a.is_infinite() && a == b {
                    a
                } else {
                    let m = a.max(b);
                    m + (-(a - b).abs()).exp().ln_1p()
                }
            }
            _ => a.copysign(b),
        })
    })
}

/// `out = a <op> b` for operands already converted to `compute` and broadcast
/// to `out`'s shape.
pub fn binary(op: BinaryOp, compute: DType, o: Dst, sa: Src, sb: Src) -> Result<()> {
    if matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor) {
        run_logical(op, o, sa, sb, compute);
        return Ok(());
    }
    if op.is_comparison() {
        // One loop per comparison (not a function pointer called per
        // element), so each inlines and vectorises.
        dispatch_dtype!(compute, T => match op {
            BinaryOp::Eq => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x == y),
            BinaryOp::Ne => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x != y),
            BinaryOp::Lt => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x < y),
            BinaryOp::Le => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x <= y),
            BinaryOp::Gt => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x > y),
            _ => bin_kernel::<T, T, bool>(o, sa, sb, |x: T, y: T| x >= y),
        });
        return Ok(());
    }
    if matches!(compute, DType::Float32 | DType::Float64) {
        // The vectorised kernels of the backend (runtime ISA choice).
        if crate::binary::SIMD_OPS.contains(&op) {
            return crate::binary::binary(op, compute, o, sa, sb);
        }
    }
    match op {
        BinaryOp::Add => dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, Num::add)),
        BinaryOp::Sub => {
            if compute == DType::Bool {
                return Err(Error::runtime(
                    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
                ));
            }
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, Num::sub))
        }
        BinaryOp::Mul => dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, Num::mul)),
        BinaryOp::Div => real_dispatch!(compute, "div", T => bin_kernel::<T, T, T>(o, sa, sb, Float::div)),
        BinaryOp::Pow => {
            if compute.is_floating_point() {
                real_dispatch!(compute, "pow", T => bin_kernel::<T, T, T>(o, sa, sb, Float::powf))
            } else {
                dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, |x: T, y: T| int_pow(x, y)))
            }
        }
        BinaryOp::Maximum | BinaryOp::Minimum => {
            let max = op == BinaryOp::Maximum;
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                // NaN propagates: any comparison with NaN is false, so pick the NaN side.
                if x != x { x } else if y != y { y } else if (x > y) == max { x } else { y }
            }))
        }
        _ => run_other(op, o, sa, sb, compute)?,
    }
    Ok(())
}

/// PyTorch's `powi`: square-and-multiply over the whole exponent, wrapping
/// as the integer type does (products modulo 2^64 truncate to any narrower
/// type's wrapped product); a negative exponent gives 1, +-1 or 0.
fn int_pow<T: Element>(x: T, y: T) -> T {
    let (mut b, mut e) = (x.to_i64(), y.to_i64());
    if e < 0 {
        return T::from_i64(match b {
            1 => 1,
            -1 => if e % 2 == 0 { 1 } else { -1 },
            _ => 0,
        });
    }
    let mut r: i64 = 1;
    while e != 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        e /= 2;
        b = b.wrapping_mul(b);
    }
    T::from_i64(r)
}
