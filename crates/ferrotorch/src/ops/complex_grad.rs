//! Derivative rules of the unary ops on complex inputs, in PyTorch's
//! convention (see [`super::complex`]): a holomorphic `f` passes back
//! `g * conj(f'(z))`; `abs`, `angle` and `sgn` (not holomorphic) have rules
//! of their own.

use super::arith::{binary, unary as un, Operand};
use crate::Tensor;
use ferrotorch_core::{BinaryOp, Error, Result, Scalar, UnaryOp};

fn bin(a: &Tensor, b: &Tensor, op: BinaryOp) -> Result<Tensor> {
    binary(Operand::T(a), Operand::T(b), op)
}

fn bins(a: &Tensor, v: Scalar, op: BinaryOp) -> Result<Tensor> {
    binary(Operand::T(a), Operand::S(v), op)
}

fn one() -> Scalar {
    Scalar::Float(1.0)
}

/// `where(z == 0, 0, v)`: the rules below divide by `|z|`.
fn zero_at_origin(z: &Tensor, v: &Tensor) -> Result<Tensor> {
    let nonzero = bins(z, Scalar::Int(0), BinaryOp::Ne)?;
    super::arith_grad::keep_where(&nonzero, v)
}

/// The gradient of `op` at the complex `x` (output `y`) for the incoming
/// gradient `g` (real for `abs`/`angle`, complex otherwise).
pub(crate) fn unary(op: UnaryOp, g: &Tensor, x: &Tensor, y: &dyn Fn() -> Result<Tensor>) -> Result<Tensor> {
    use UnaryOp::*;
    // The derivative f'(z); the result is g * conj(f'(z)).
    let d = match op {
        Neg => return un(g, Neg),
        Abs => return bin(g, &un(x, Sgn)?, BinaryOp::Mul),
        Angle => {
            // ∂θ/∂x + i ∂θ/∂y = i z / |z|^2 (0 at z = 0).
            let a = un(x, Abs)?;
            let r = bin(&bins(x, Scalar::Complex(0.0, 1.0), BinaryOp::Mul)?, &bin(&a, &a, BinaryOp::Mul)?, BinaryOp::Div)?;
            return zero_at_origin(x, &bin(g, &r, BinaryOp::Mul)?);
        }
        Sgn => {
            // s = z/|z|: (g - Re(g conj(s)) s) / |z| (0 at z = 0).
            let s = y()?;
            let a = un(x, Abs)?;
            let proj = bin(&bin(g, &s.conj()?, BinaryOp::Mul)?.real()?, &s, BinaryOp::Mul)?;
            return zero_at_origin(x, &bin(&bin(g, &proj, BinaryOp::Sub)?, &a, BinaryOp::Div)?);
        }
        Exp => y()?,
        Expm1 => bins(&y()?, one(), BinaryOp::Add)?,
        Log => un(x, Reciprocal)?,
        Log2 => un(&bins(x, Scalar::Float(std::f64::consts::LN_2), BinaryOp::Mul)?, Reciprocal)?,
        Log10 => un(&bins(x, Scalar::Float(std::f64::consts::LN_10), BinaryOp::Mul)?, Reciprocal)?,
        Log1p => un(&bins(x, one(), BinaryOp::Add)?, Reciprocal)?,
        Sqrt => un(&bins(&y()?, Scalar::Float(2.0), BinaryOp::Mul)?, Reciprocal)?,
        Rsqrt => {
            let y = y()?;
            bins(&bin(&bin(&y, &y, BinaryOp::Mul)?, &y, BinaryOp::Mul)?, Scalar::Float(-0.5), BinaryOp::Mul)?
        }
        Reciprocal => {
            let y = y()?;
            un(&bin(&y, &y, BinaryOp::Mul)?, Neg)?
        }
        Sin => un(x, Cos)?,
        Cos => un(&un(x, Sin)?, Neg)?,
        Tan => {
            let y = y()?;
            bins(&bin(&y, &y, BinaryOp::Mul)?, one(), BinaryOp::Add)?
        }
        Sinh => un(x, Cosh)?,
        Cosh => un(x, Sinh)?,
        Tanh => {
            let y = y()?;
            binary(Operand::S(one()), Operand::T(&bin(&y, &y, BinaryOp::Mul)?), BinaryOp::Sub)?
        }
        Sigmoid => {
            let y = y()?;
            bin(&y, &binary(Operand::S(one()), Operand::T(&y), BinaryOp::Sub)?, BinaryOp::Mul)?
        }
        Asin | Acos => {
            let r = un(&un(&binary(Operand::S(one()), Operand::T(&bin(x, x, BinaryOp::Mul)?), BinaryOp::Sub)?, Sqrt)?, Reciprocal)?;
            if op == Acos {
                un(&r, Neg)?
            } else {
                r
            }
        }
        Atan => un(&bins(&bin(x, x, BinaryOp::Mul)?, one(), BinaryOp::Add)?, Reciprocal)?,
        Asinh => un(&un(&bins(&bin(x, x, BinaryOp::Mul)?, one(), BinaryOp::Add)?, Sqrt)?, Reciprocal)?,
        Acosh => {
            let lo = un(&bins(x, one(), BinaryOp::Sub)?, Sqrt)?;
            let hi = un(&bins(x, one(), BinaryOp::Add)?, Sqrt)?;
            un(&bin(&lo, &hi, BinaryOp::Mul)?, Reciprocal)?
        }
        Atanh => un(&binary(Operand::S(one()), Operand::T(&bin(x, x, BinaryOp::Mul)?), BinaryOp::Sub)?, Reciprocal)?,
        _ => {
            return Err(Error::runtime(format!(
                "the derivative of {} for complex inputs is not implemented",
                op.name()
            )))
        }
    };
    bin(g, &d.conj()?, BinaryOp::Mul)
}
