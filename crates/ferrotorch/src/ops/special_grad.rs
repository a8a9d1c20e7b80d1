//! Derivative rules of the special functions (the gamma family, Bessel and
//! normal-distribution functions, `xlogy`, `zeta`, the incomplete gammas),
//! with PyTorch's formulas and its "not implemented" derivatives.

use super::arith::{binary as bin, unary as un, BinaryOp, Operand, UnaryOp};
use super::arith_grad::{add, adds, cond, div, mul, muls, pick, sub, zeros_like};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result, Scalar};
use std::f64::consts::PI;

fn t(x: &Tensor) -> Operand<'_> {
    Operand::T(x)
}

/// A 0-d tensor holding `v` in `dtype` on `like`'s device.
fn full(v: f64, like: &Tensor) -> Result<Tensor> {
    adds(&Tensor::zeros(&[], like.dtype(), like.device())?, v)
}

/// The gradient of a special unary op at input `x` with output `y`.
pub(super) fn unary(op: UnaryOp, g: &Tensor, x: &dyn Fn() -> Result<Tensor>, y: &dyn Fn() -> Result<Tensor>) -> Result<Tensor> {
    use UnaryOp::*;
    Ok(match op {
        Lgamma => mul(g, &un(&x()?, Digamma)?)?,
        Digamma => mul(g, &un(&x()?, Polygamma(1))?)?,
        Polygamma(n) => mul(g, &un(&x()?, Polygamma(n + 1))?)?,
        Mvlgamma(p) => {
            // Σ_j ψ(x - j/2), summed from the smallest argument as PyTorch's
            // `digamma(x + arange(-(p-1)/2, 1/2, 1/2)).sum(-1)`.
            let x = x()?;
            let mut s = un(&adds(&x, -((p - 1) as f64) / 2.0)?, Digamma)?;
            for j in (0..p - 1).rev() {
                s = add(&s, &un(&adds(&x, -(j as f64) / 2.0)?, Digamma)?)?;
            }
            mul(g, &s)?
        }
        I0 => mul(g, &un(&x()?, I1)?)?,
        Sinc => {
            // (πx cos πx - sin πx) / (π x^2), 0 at x = 0 (PyTorch's sinc_backward).
            let x = x()?;
            let px = muls(&x, PI)?;
            let num = sub(&mul(&px, &un(&px, Cos)?)?, &un(&px, Sin)?)?;
            let d = div(&num, &mul(&px, &x)?)?;
            pick(&cond(&x, BinaryOp::Eq, 0.0)?, &zeros_like(g)?, &mul(&d, g)?)?
        }
        Deg2rad => muls(g, PI / 180.0)?,
        Rad2deg => muls(g, 180.0 / PI)?,
        // Piecewise constant for real inputs (complex inputs have a rule of their own).
        Angle => zeros_like(g)?,
        Erfcx => {
            let d = adds(&muls(&mul(&x()?, &y()?)?, 2.0)?, -2.0 / PI.sqrt())?;
            mul(&d, g)?
        }
        Ndtri => {
            let y = y()?;
            mul(&muls(g, (2.0 * PI).sqrt())?, &un(&muls(&mul(&y, &y)?, 0.5)?, Exp)?)?
        }
        LogNdtr => {
            let x = x()?;
            let e = un(&un(&add(&y()?, &muls(&mul(&x, &x)?, 0.5)?)?, Neg)?, Exp)?;
            mul(&muls(g, 1.0 / (2.0 * PI).sqrt())?, &e)?
        }
        I0e => {
            let x = x()?;
            mul(g, &sub(&un(&x, I1e)?, &mul(&un(&x, Sgn)?, &y()?)?)?)?
        }
        I1 | I1e => {
            // PyTorch's i1_backward/i1e_backward: x is replaced by eps where
            // |x| <= eps, whose gradient is set to 1/2 there.
            let x = x()?;
            let eps = if g.dtype() == DType::Float64 { f64::EPSILON } else { f32::EPSILON as f64 };
            let not_tiny = cond(&un(&x, Abs)?, BinaryOp::Gt, eps)?;
            let safe = pick(&not_tiny, &x, &full(eps, &x)?)?;
            let y = y()?;
            let gx = if op == I1 {
                sub(&un(&safe, I0)?, &mul(&y, &un(&safe, Reciprocal)?)?)?
            } else {
                let k = add(&un(&safe, Sgn)?, &un(&safe, Reciprocal)?)?;
                sub(&un(&safe, I0e)?, &mul(&y, &k)?)?
            };
            mul(g, &pick(&not_tiny, &gx, &full(0.5, &gx)?)?)?
        }
        Entr => mul(g, &un(&adds(&un(&x()?, Log)?, 1.0)?, Neg)?)?,
        _ => return Err(Error::runtime(format!("{}: no derivative rule", op.name()))),
    })
}

/// The `grad_fn` node PyTorch records for a special binary op: `...Backward1`
/// for a Python number as `self`, `...Backward2` as `other`.
pub(super) fn binary_node(op: BinaryOp, a: &Operand, b: &Operand) -> Option<&'static str> {
    let variant = match (a, b) {
        (Operand::S(_), _) => 1,
        (_, Operand::S(_)) => 2,
        _ => 0,
    };
    let pick3 = |names: [&'static str; 3]| Some(names[variant]);
    match op {
        BinaryOp::Xlogy => pick3(["XlogyBackward0", "XlogyBackward1", "XlogyBackward2"]),
        BinaryOp::Xlog1py => pick3(["SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1", "SpecialXlog1PyBackward2"]),
        BinaryOp::Zeta => pick3(["SpecialZetaBackward0", "SpecialZetaBackward1", "SpecialZetaBackward2"]),
        BinaryOp::Igamma => Some("IgammaBackward0"),
        BinaryOp::Igammac => Some("IgammacBackward0"),
        BinaryOp::NextAfter => Some("NextafterBackward0"),
        BinaryOp::LogAddExp2 => Some("Logaddexp2Backward0"),
        BinaryOp::Heaviside => Some("torch::autograd::NotImplemented"),
        _ => None,
    }
}

/// Whether [`binary`] holds the op's rule.
pub(super) fn has_binary_rule(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Xlogy
            | BinaryOp::Xlog1py
            | BinaryOp::Zeta
            | BinaryOp::Igamma
            | BinaryOp::Igammac
            | BinaryOp::NextAfter
            | BinaryOp::LogAddExp2
            | BinaryOp::Heaviside
    )
}

/// The gradients of a special binary op for the sides wanted (`wa`, `wb`).
pub(super) fn binary(op: BinaryOp, g: &Tensor, a: Operand, b: Operand, wa: bool, wb: bool) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let not_impl = |what: &str| Error::not_implemented(format!("the derivative for '{what}' is not implemented."));
    Ok(match op {
        BinaryOp::Xlogy | BinaryOp::Xlog1py => {
            // PyTorch: `xlogy(grad, other)` (or xlog1py) masked to 0 where
            // self == 0 and other <= 0 (<= -1 for xlog1py), and `grad * self / other`
            // (`/ (other + 1)`).
            let edge = if op == BinaryOp::Xlogy { 0.0 } else { -1.0 };
            let ga = match (wa, a) {
                (true, Operand::T(x)) => {
                    let d = bin(t(g), b, op)?;
                    let zero_a = cond(x, BinaryOp::Eq, 0.0)?;
                    let low_b = {
                        let _no_grad = crate::autograd::GradModeGuard::new(false);
                        bin(b, Operand::S(Scalar::Float(edge)), BinaryOp::Le)?
                    };
                    let masked = {
                        let _no_grad = crate::autograd::GradModeGuard::new(false);
                        bin(t(&zero_a), t(&low_b), BinaryOp::LogicalAnd)?
                    };
                    Some(pick(&masked, &zeros_like(&d)?, &d)?)
                }
                _ => None,
            };
            let gb = if wb {
                let num = bin(t(g), a, BinaryOp::Mul)?;
                Some(if op == BinaryOp::Xlogy { bin(t(&num), b, BinaryOp::Div)? } else { div(&num, &bin(b, Operand::S(Scalar::Float(1.0)), BinaryOp::Add)?)? })
            } else {
                None
            };
            (ga, gb)
        }
        BinaryOp::Zeta => {
            if wa {
                return Err(not_impl("zeta"));
            }
            let gb = if wb {
                let a1 = bin(a, Operand::S(Scalar::Float(1.0)), BinaryOp::Add)?;
                let neg_a = bin(a, Operand::S(Scalar::Float(-1.0)), BinaryOp::Mul)?;
                Some(mul(&mul(g, &neg_a)?, &bin(t(&a1), b, BinaryOp::Zeta)?)?)
            } else {
                None
            };
            (None, gb)
        }
        BinaryOp::Igamma | BinaryOp::Igammac => {
            if wa {
                return Err(not_impl(if op == BinaryOp::Igamma { "igamma: input" } else { "igammac: input" }));
            }
            let gb = if wb {
                // x^(a-1) e^-x / Γ(a), through logs.
                let am1 = bin(a, Operand::S(Scalar::Float(-1.0)), BinaryOp::Add)?;
                let lb = bin(b, Operand::S(Scalar::Float(0.0)), BinaryOp::Add)?;
                let lb = un(&lb, UnaryOp::Log)?;
                let la = un(&bin(a, Operand::S(Scalar::Float(0.0)), BinaryOp::Add)?, UnaryOp::Lgamma)?;
                let e = sub(&bin(t(&mul(&am1, &lb)?), b, BinaryOp::Sub)?, &la)?;
                let d = mul(g, &un(&e, UnaryOp::Exp)?)?;
                Some(if op == BinaryOp::Igamma { d } else { un(&d, UnaryOp::Neg)? })
            } else {
                None
            };
            (None, gb)
        }
        BinaryOp::NextAfter => (if wa { Some(g.clone()) } else { None }, if wb { Some(zeros_like(g)?) } else { None }),
        BinaryOp::LogAddExp2 => {
            // g / (1 + 2^(b - a)) and g / (1 + 2^(a - b)).
            let side = |x: Operand, y: Operand| -> Result<Tensor> {
                let p = un(&bin(y, x, BinaryOp::Sub)?, UnaryOp::Exp2)?;
                div(g, &adds(&p, 1.0)?)
            };
            (if wa { Some(side(a, b)?) } else { None }, if wb { Some(side(b, a)?) } else { None })
        }
        BinaryOp::Heaviside => {
            if wa || wb {
                return Err(Error::runtime("derivative for aten::heaviside is not implemented"));
            }
            (None, None)
        }
        _ => (None, None),
    })
}
