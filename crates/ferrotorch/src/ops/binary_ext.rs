//! Kernels of the binary ops beyond `+ - * / **` and comparisons: rounding
//! divisions, remainders, bitwise and logical ops, and the float-only ops
//! (`atan2`, `hypot`, `logaddexp`, `copysign`). Integer ops compute in `i64`
//! and wrap back, which reproduces C's two's-complement results.

use super::arith::BinaryOp;
use super::math::{real_dispatch, Compute, Real};
use num_traits::Float as _;
use crate::Tensor;
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result};
use ferrotorch_cpu::elementwise::binary as bin_kernel;
use ferrotorch_cpu::{Dst, Src};

/// Runs `op` into `o` for operands already cast to `compute`.
pub(crate) fn run(op: BinaryOp, o: Dst, sa: Src, sb: Src, compute: DType, b: &Tensor) -> Result<()> {
    use BinaryOp::*;
    match op {
        DivTrunc | DivFloor | Remainder | Fmod => {
            if compute == DType::Bool {
                return Err(super::math::not_impl(op.name(), compute));
            }
            if compute.is_floating_point() {
                // PyTorch's trunc division rounds the quotient to the dtype before
                // truncating (float16/bfloat16 `a / b` is a reduced-float op),
                // except when the divisor is one broadcast value: that path
                // divides in float32 (`div_trunc_cpu_reduced_float`).
                let round_quotient = !is_broadcast_scalar(b);
                real_dispatch!(compute, op.name(), T => float_div_like::<T>(op, o, sa, sb, round_quotient));
            } else {
                // PyTorch checks each divisor as its loop reads it: an empty
                // result reads none.
                if o.layout.numel() > 0 && has_zero(b)? {
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
        BitAnd | BitOr | BitXor => {
            if compute.is_floating_point() {
                return Err(super::math::not_impl(op.name(), compute));
            }
            dispatch_dtype!(compute, T => bin_kernel::<T, T, T>(o, sa, sb, move |x: T, y: T| {
                let (a, b) = (x.to_i64(), y.to_i64());
                T::from_i64(match op { BitAnd => a & b, BitOr => a | b, _ => a ^ b })
            }))
        }
        Shl | Shr => {
            if compute.is_floating_point() || compute == DType::Bool {
                return Err(super::math::not_impl(op.name(), compute));
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

/// `logical_and/or/xor` over any dtype (non-zero is true, NaN included).
pub(crate) fn run_logical(op: BinaryOp, o: Dst, sa: Src, sb: Src, compute: DType) {
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
fn is_broadcast_scalar(b: &Tensor) -> bool {
    b.shape().iter().zip(b.strides()).all(|(&n, &st)| n == 1 || st == 0)
}

fn has_zero(b: &Tensor) -> Result<bool> {
    let v = b.to_dtype(DType::Int64)?.contiguous()?;
    Ok(v.to_vec::<i64>()?.contains(&0))
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
pub(crate) fn floor_div<C: Real>(a: C, b: C) -> C {
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

#[cfg(test)]
mod tests {
    use crate::ops::arith::{binary, BinaryOp, Operand};
    use crate::Tensor;

    fn run(a: Vec<f64>, b: Vec<f64>, op: BinaryOp) -> Vec<f64> {
        let (ta, tb) = (Tensor::from_vec(a, &[4]).unwrap(), Tensor::from_vec(b, &[4]).unwrap());
        binary(Operand::T(&ta), Operand::T(&tb), op).unwrap().to_f64_vec().unwrap()
    }

    #[test]
    fn remainder_takes_the_divisors_sign_and_fmod_the_dividends() {
        assert_eq!(run(vec![5.0, -5.0, 5.0, -5.0], vec![3.0, 3.0, -3.0, -3.0], BinaryOp::Remainder), vec![2.0, 1.0, -1.0, -2.0]);
        assert_eq!(run(vec![5.0, -5.0, 5.0, -5.0], vec![3.0, 3.0, -3.0, -3.0], BinaryOp::Fmod), vec![2.0, -2.0, 2.0, -2.0]);
        assert_eq!(run(vec![7.0, -7.0, 7.5, -0.5], vec![2.0, 2.0, -2.0, 4.0], BinaryOp::DivFloor), vec![3.0, -4.0, -4.0, -1.0]);
    }

    #[test]
    fn integer_division_by_zero_is_an_error_and_overflow_wraps() {
        let a = Tensor::from_vec(vec![5i64, -7], &[2]).unwrap();
        let z = Tensor::from_vec(vec![1i64, 0], &[2]).unwrap();
        assert!(binary(Operand::T(&a), Operand::T(&z), BinaryOp::DivFloor).is_err());
        let m = Tensor::from_vec(vec![i64::MIN], &[1]).unwrap();
        let n = Tensor::from_vec(vec![-1i64], &[1]).unwrap();
        let r = binary(Operand::T(&m), Operand::T(&n), BinaryOp::DivTrunc).unwrap();
        assert_eq!(r.to_vec::<i64>().unwrap(), vec![i64::MIN]);
        let s = Tensor::from_vec(vec![1i8, -128], &[2]).unwrap();
        let k = Tensor::from_vec(vec![8i8, 9], &[2]).unwrap();
        let l = binary(Operand::T(&s), Operand::T(&k), BinaryOp::Shl).unwrap();
        let rr = binary(Operand::T(&s), Operand::T(&k), BinaryOp::Shr).unwrap();
        assert_eq!(l.to_vec::<i8>().unwrap(), vec![0, 0]);
        assert_eq!(rr.to_vec::<i8>().unwrap(), vec![0, -1]);
    }
}
