//! Derivative rules of the elementwise ops in `arith`, one small function per op.

use super::arith::{binary, unary, BinaryOp, Operand, UnaryOp};
use crate::autograd::{record, rule, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Result, Scalar};

/// The first gradient, or None.
pub(crate) fn g0(g: Vec<Option<Tensor>>) -> Option<Tensor> {
    g.into_iter().next().flatten()
}

/// Reduces a broadcast gradient back to `shape` and casts it to `dtype`.
pub(crate) fn reduce_grad(g: &Tensor, shape: &[usize], dtype: DType) -> Result<Tensor> {
    let r = g.sum_to(shape)?;
    if r.dtype() != dtype && dtype.is_differentiable() {
        r.to_dtype(dtype)
    } else {
        Ok(r)
    }
}

fn t(x: &Tensor) -> Operand<'_> {
    Operand::T(x)
}

fn s(v: f64) -> Operand<'static> {
    Operand::S(Scalar::Float(v))
}

/// An operand as seen by a rule: saved tensor or scalar value.
enum Side {
    T(SavedTensor, Vec<usize>, DType, bool),
    S(Scalar),
}

impl Side {
    fn of(o: &Operand) -> Side {
        match o {
            Operand::T(x) => Side::T(SavedTensor::input(x), x.shape().to_vec(), x.dtype(), x.requires_grad()),
            Operand::S(v) => Side::S(*v),
        }
    }
    fn value(&self, node: &std::sync::Arc<crate::autograd::Node>) -> Result<OperandOwned> {
        Ok(match self {
            Side::T(st, ..) => OperandOwned::T(st.unpack(node)?),
            Side::S(v) => OperandOwned::S(*v),
        })
    }
    fn wants(&self) -> bool {
        matches!(self, Side::T(_, _, _, true))
    }
    fn finish(&self, g: Tensor) -> Result<Option<Tensor>> {
        match self {
            Side::T(_, shape, dt, true) => Ok(Some(reduce_grad(&g, shape, *dt)?)),
            _ => Ok(None),
        }
    }
}

enum OperandOwned {
    T(Tensor),
    S(Scalar),
}

impl OperandOwned {
    fn op(&self) -> Operand<'_> {
        match self {
            OperandOwned::T(x) => Operand::T(x),
            OperandOwned::S(v) => Operand::S(*v),
        }
    }
}

/// Records the node of `a <op> b` producing `out`.
pub(crate) fn record_binary(a: Operand, b: Operand, op: BinaryOp, out: &Tensor) {
    let ta = if let Operand::T(x) = a { Some(x) } else { None };
    let tb = if let Operand::T(x) = b { Some(x) } else { None };
    // Nothing to save when no node will be recorded (the common call outside autograd).
    let recording = match (ta, tb) {
        (Some(x), Some(y)) => crate::autograd::needs_grad(&[x, y]),
        (Some(x), None) | (None, Some(x)) => crate::autograd::needs_grad(&[x]),
        (None, None) => false,
    };
    if !recording {
        return;
    }
    let name = match (op, &a, &b) {
        (BinaryOp::Add, ..) => "AddBackward0",
        (BinaryOp::Sub, Operand::S(_), _) => "RsubBackward1",
        (BinaryOp::Sub, ..) => "SubBackward0",
        (BinaryOp::Mul, ..) => "MulBackward0",
        (BinaryOp::Div, ..) => "DivBackward0",
        (BinaryOp::Pow, _, Operand::S(_)) => "PowBackward0",
        (BinaryOp::Pow, Operand::S(_), _) => "PowBackward2",
        (BinaryOp::Pow, ..) => "PowBackward1",
        (BinaryOp::Maximum, ..) => "MaximumBackward0",
        (BinaryOp::Minimum, ..) => "MinimumBackward0",
        (BinaryOp::DivTrunc | BinaryOp::DivFloor, ..) => "DivBackward2",
        (BinaryOp::Remainder, _, Operand::S(_)) => "RemainderBackward0",
        (BinaryOp::Remainder, ..) => "RemainderBackward1",
        (BinaryOp::Fmod, _, Operand::S(_)) => "FmodBackward0",
        (BinaryOp::Fmod, ..) => "FmodBackward1",
        (BinaryOp::Atan2, ..) => "Atan2Backward0",
        (BinaryOp::Fmax, ..) => "FmaxBackward0",
        (BinaryOp::Fmin, ..) => "FminBackward0",
        (BinaryOp::Hypot, ..) => "HypotBackward0",
        (BinaryOp::LogAddExp, ..) => "LogaddexpBackward0",
        (BinaryOp::CopySign, _, Operand::S(_)) => "CopysignBackward1",
        (BinaryOp::CopySign, ..) => "CopysignBackward0",
        (op, a, b) => match super::special_grad::binary_node(op, a, b) {
            Some(name) => name,
            None => return,
        },
    };
    // Scalar-first commutative ops record the tensor first, as PyTorch's
    // reflected operators do (`2 * x` is `mul(x, 2)`).
    let (a, b, ta, tb) = match (op, ta, tb) {
        (BinaryOp::Add | BinaryOp::Mul, None, Some(_)) => (b, a, tb, ta),
        _ => (a, b, ta, tb),
    };
    let out_saved = SavedTensor::output(out, 0);
    let (sa, sb) = (Side::of(&a), Side::of(&b));
    let inputs = [ta, tb];
    record(name, &inputs, &[out], move || {
        rule(move |node, grads| {
            let Some(g) = g0(grads) else { return Ok(vec![None, None]) };
            let (wa, wb) = (sa.wants(), sb.wants());
            let (ga, gb) = match op {
                BinaryOp::Add => (if wa { Some(g.clone()) } else { None }, if wb { Some(g.clone()) } else { None }),
                BinaryOp::Sub => (if wa { Some(g.clone()) } else { None }, if wb { Some(unary(&g, UnaryOp::Neg)?) } else { None }),
                BinaryOp::Mul => {
                    let ga = if wa { Some(binary(t(&g), sb.value(node)?.op(), BinaryOp::Mul)?) } else { None };
                    let gb = if wb { Some(binary(t(&g), sa.value(node)?.op(), BinaryOp::Mul)?) } else { None };
                    (ga, gb)
                }
                BinaryOp::Div => {
                    let bv = sb.value(node)?;
                    let ga = if wa { Some(binary(t(&g), bv.op(), BinaryOp::Div)?) } else { None };
                    let gb = if wb {
                        // PyTorch's div_tensor_other_backward: -g * ((a / b) / b).
                        // Dividing twice keeps b*b from overflowing or
                        // underflowing (1e-200^2 is 0, 1e200^2 is inf).
                        let av = sa.value(node)?;
                        let q = binary(t(&binary(av.op(), bv.op(), BinaryOp::Div)?), bv.op(), BinaryOp::Div)?;
                        Some(unary(&binary(t(&g), t(&q), BinaryOp::Mul)?, UnaryOp::Neg)?)
                    } else {
                        None
                    };
                    (ga, gb)
                }
                BinaryOp::Pow => {
                    let av = sa.value(node)?;
                    // A Python bool exponent is the number 0 or 1 here, as in
                    // PyTorch (`exponent - 1` on a bool would be an error).
                    // PyTorch's `exponent.equal(0.0)` shortcut is false for a bool
                    // scalar, so `x ** False` still goes through `0 * x^-1`.
                    let (bv, bool_exponent) = match sb.value(node)? {
                        OperandOwned::S(Scalar::Bool(e)) => (OperandOwned::S(Scalar::Int(i64::from(e))), true),
                        other => (other, false),
                    };
                    let ga = if wa {
                        // g * b * a^(b-1), 0 where b == 0 (PyTorch's
                        // pow_backward_self: a^-1 would be inf at a == 0).
                        match &bv {
                            OperandOwned::S(e) if e.to_f64() == 0.0 && !bool_exponent => Some(zeros_like(&g)?),
                            _ => {
                                // PyTorch's `grad * (exponent * self.pow(exponent - 1))`,
                                // in that order (`2 * 3e38` overflows before a zero g
                                // makes it NaN), with an integer exponent tensor's
                                // `exponent - 1` in its own dtype (wrapping).
                                let one = match &bv {
                                    OperandOwned::T(e) if !e.dtype().is_floating_point() && e.dtype() != DType::Bool => Operand::S(Scalar::Int(1)),
                                    _ => s(1.0),
                                };
                                // A Python-number exponent stays a double (`exp - 1` on
                                // the Scalar): a 0-d tensor would round it to float32.
                                let p = match &bv {
                                    OperandOwned::S(e) => binary(av.op(), s(e.to_f64() - 1.0), BinaryOp::Pow)?,
                                    OperandOwned::T(_) => binary(av.op(), t(&binary(bv.op(), one, BinaryOp::Sub)?), BinaryOp::Pow)?,
                                };
                                let d = binary(t(&g), t(&binary(t(&p), bv.op(), BinaryOp::Mul)?), BinaryOp::Mul)?;
                                match &bv {
                                    OperandOwned::T(e) => Some(keep_where(&cond(e, BinaryOp::Ne, 0.0)?, &d)?),
                                    OperandOwned::S(_) => Some(d),
                                }
                            }
                        }
                    } else {
                        None
                    };
                    let gb = if wb {
                        // g * a^b * ln(a), 0 where a == 0 and b >= 0
                        // (pow_backward_exponent: 0 * -inf would be NaN).
                        let r = out_saved.unpack(node)?;
                        let OperandOwned::T(e) = &bv else { return Err(ferrotorch_core::Error::runtime("pow: exponent gradient without a tensor exponent")) };
                        let ln_a = match &av {
                            // PyTorch logs the base converted to the result type
                            // of base and exponent (an int32 or float16 base of a
                            // float32 exponent is logged in float32).
                            OperandOwned::T(x) => {
                                let pd = super::arith::common_dtype(&[Operand::T(x), Operand::T(e)])?;
                                unary(&x.to_dtype(pd)?, UnaryOp::Log)?
                            }
                            // PyTorch's pow_backward_exponent takes `base.log()` of
                            // the Scalar, which fails for a bool (an internal
                            // assert there, "unknown ivalue tag"): `True ** x`
                            // has no exponent gradient.
                            OperandOwned::S(Scalar::Bool(_)) => {
                                return Err(ferrotorch_core::Error::runtime(
                                    "pow: the gradient with respect to the exponent of a bool base (`True ** x`) is not supported (PyTorch: unknown ivalue tag 4)",
                                ))
                            }
                            OperandOwned::S(v) => Tensor::scalar(v.to_f64().ln())?,
                        };
                        // `grad * (result * log(base))`, in that order: the
                        // product with the result overflows to inf before a
                        // small grad could scale it down.
                        let d = binary(t(&g), t(&binary(t(&r), t(&ln_a), BinaryOp::Mul)?), BinaryOp::Mul)?;
                        let nonneg = cond(e, BinaryOp::Ge, 0.0)?;
                        let zero_base = match &av {
                            OperandOwned::T(x) => Some(cond2(t(&cond(x, BinaryOp::Eq, 0.0)?), t(&nonneg), BinaryOp::LogicalAnd)?),
                            OperandOwned::S(v) if v.to_f64() == 0.0 => Some(nonneg),
                            OperandOwned::S(_) => None,
                        };
                        match zero_base {
                            Some(z) => Some(keep_where(&unary(&z, UnaryOp::LogicalNot)?, &d)?),
                            None => Some(d),
                        }
                    } else {
                        None
                    };
                    (ga, gb)
                }
                BinaryOp::Maximum | BinaryOp::Minimum => {
                    let av = sa.value(node)?;
                    let bv = sb.value(node)?;
                    // PyTorch's formula: `where(a == b, g / 2, g)` with the
                    // losing side masked to 0 (`a < b` for maximum's a). An
                    // unordered pair (NaN) is neither a tie nor a loss, so both
                    // sides get the full gradient; the branch is picked, so an
                    // infinite g stays out of the masked side.
                    let (a_loses, b_loses) = if op == BinaryOp::Maximum { (BinaryOp::Lt, BinaryOp::Gt) } else { (BinaryOp::Gt, BinaryOp::Lt) };
                    let tie = cond2(av.op(), bv.op(), BinaryOp::Eq)?;
                    let split = pick(&tie, &muls(&g, 0.5)?, &g)?;
                    let ga = if wa { Some(keep_where(&un(&cond2(av.op(), bv.op(), a_loses)?, UnaryOp::LogicalNot)?, &split)?) } else { None };
                    let gb = if wb { Some(keep_where(&un(&cond2(av.op(), bv.op(), b_loses)?, UnaryOp::LogicalNot)?, &split)?) } else { None };
                    (ga, gb)
                }
                _ if super::special_grad::has_binary_rule(op) => {
                    let av = sa.value(node)?;
                    let bv = sb.value(node)?;
                    super::special_grad::binary(op, &g, av.op(), bv.op(), wa, wb)?
                }
                _ => {
                    let av = sa.value(node)?;
                    let bv = sb.value(node)?;
                    // PyTorch's atan2_backward computes `grad * -self * recip` for
                    // `other`: negating a bool `self` raises there.
                    if op == BinaryOp::Atan2 && wb && matches!(&av, OperandOwned::T(x) if x.dtype() == DType::Bool) {
                        return Err(ferrotorch_core::Error::runtime(
                            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                        ));
                    }
                    let (fa, fb) = binary_ext_grad(op, &g, av.op(), bv.op(), &|| out_saved.unpack(node))?;
                    (if wa { fa } else { None }, if wb { fb } else { None })
                }
            };
            let ga = match ga {
                Some(x) => sa.finish(x)?,
                None => None,
            };
            let gb = match gb {
                Some(x) => sb.finish(x)?,
                None => None,
            };
            Ok(vec![ga, gb])
        })
    });
}

/// Gradients of the ops in `binary_ext` (both sides; the caller drops the
/// ones not wanted).
fn binary_ext_grad(
    op: BinaryOp,
    g: &Tensor,
    a: Operand,
    b: Operand,
    out: &dyn Fn() -> Result<Tensor>,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let dt = g.dtype();
    let bin = |x: Operand, y: Operand, o: BinaryOp| binary(x, y, o);
    Ok(match op {
        BinaryOp::DivTrunc | BinaryOp::DivFloor => (Some(zeros_like(g)?), Some(zeros_like(g)?)),
        BinaryOp::Remainder | BinaryOp::Fmod => {
            // PyTorch: -g * a.div(b, rounding_mode="floor") (remainder) or
            // "trunc" (fmod). The rounding division is not floor(a / b): its
            // floor form goes through fmod, so inf // b is NaN. The quotient
            // keeps the operands' common dtype (an in-place `f16.fmod_(f32)`
            // has a float16 `g` but a float32 quotient that float16 would
            // overflow); only an integer quotient takes `g`'s dtype.
            let q = {
                let _no_grad = crate::autograd::GradModeGuard::new(false);
                let q = bin(a, b, if op == BinaryOp::Remainder { BinaryOp::DivFloor } else { BinaryOp::DivTrunc })?;
                if q.dtype().is_floating_point() { q } else { q.to_dtype(dt)? }
            };
            (Some(g.clone()), Some(un(&mul(g, &q)?, UnaryOp::Neg)?))
        }
        BinaryOp::Atan2 => {
            // PyTorch's atan2_backward: `recip = 1 / (a^2 + b^2)`, 0 where the
            // sum is 0, then `(g * b) * recip`. The reciprocal of a subnormal
            // sum is inf (so 0 * inf = NaN at (1e-20, 0) in float32), not the
            // finite quotient of a division.
            let den = bin(bin(a, a, BinaryOp::Mul)?.as_op(), bin(b, b, BinaryOp::Mul)?.as_op(), BinaryOp::Add)?;
            let nz = cond(&den, BinaryOp::Ne, 0.0)?;
            let recip = keep_where(&nz, &un(&den, UnaryOp::Reciprocal)?)?;
            let ga = mul(&bin(t(g), b, BinaryOp::Mul)?, &recip)?;
            // PyTorch: g * -a * recip, `-a` in a's own dtype (an integer
            // self wraps: -2 as uint8 is 254).
            let neg_a = match a {
                Operand::T(x) => un(x, UnaryOp::Neg)?,
                Operand::S(v) => Tensor::scalar(-v.to_f64())?,
            };
            let gb = mul(&mul(g, &neg_a)?, &recip)?;
            (Some(ga), Some(gb))
        }
        BinaryOp::Fmax | BinaryOp::Fmin => {
            let _no_grad = crate::autograd::GradModeGuard::new(false);
            let cmp = if op == BinaryOp::Fmax { BinaryOp::Ge } else { BinaryOp::Le };
            let ge = bin(a, b, cmp)?;
            let bnan = match b {
                Operand::T(x) => unary(x, UnaryOp::IsNan)?,
                Operand::S(v) => Tensor::scalar(v.to_f64().is_nan())?,
            };
            let pick_a = binary(t(&ge), t(&bnan), BinaryOp::LogicalOr)?;
            let pick_b = unary(&pick_a, UnaryOp::LogicalNot)?;
            drop(_no_grad);
            // PyTorch masked_fills the side not picked: an infinite g must
            // not turn into `inf * 0 = NaN` there.
            (Some(keep_where(&pick_a, g)?), Some(keep_where(&pick_b, g)?))
        }
        BinaryOp::Hypot => {
            let r = out()?;
            (Some(div(&bin(t(g), a, BinaryOp::Mul)?, &r)?), Some(div(&bin(t(g), b, BinaryOp::Mul)?, &r)?))
        }
        BinaryOp::LogAddExp => {
            let ea = adds(&un(&bin(b, a, BinaryOp::Sub)?, UnaryOp::Exp)?, 1.0)?;
            let eb = adds(&un(&bin(a, b, BinaryOp::Sub)?, UnaryOp::Exp)?, 1.0)?;
            (Some(div(g, &ea)?), Some(div(g, &eb)?))
        }
        BinaryOp::CopySign => {
            // PyTorch: grad * (result / self), masked to 0 where self == 0 only,
            // so a NaN or infinite self gives NaN (inf / inf).
            let r = out()?;
            let ratio = {
                let _no_grad = crate::autograd::GradModeGuard::new(false);
                let ratio = bin(t(&r), a, BinaryOp::Div)?;
                let zero = bin(a, s(0.0), BinaryOp::Eq)?;
                keep_where(&unary(&zero, UnaryOp::LogicalNot)?, &ratio)?
            };
            (Some(mul(g, &ratio)?), Some(zeros_like(g)?))
        }
        _ => (None, None),
    })
}

impl Tensor {
    /// This tensor as a binary operand.
    pub(crate) fn as_op(&self) -> Operand<'_> {
        Operand::T(self)
    }
}

// Small autograd-aware helpers: rules are written with them so that
// gradients of gradients flow through the same ops.
pub(crate) fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(t(a), t(b), BinaryOp::Mul)
}
pub(crate) fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(t(a), t(b), BinaryOp::Div)
}
pub(crate) fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(t(a), t(b), BinaryOp::Add)
}
pub(crate) fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(t(a), t(b), BinaryOp::Sub)
}
pub(crate) fn muls(a: &Tensor, v: f64) -> Result<Tensor> {
    binary(t(a), s(v), BinaryOp::Mul)
}
pub(crate) fn adds(a: &Tensor, v: f64) -> Result<Tensor> {
    binary(t(a), s(v), BinaryOp::Add)
}
/// `v - a`.
pub(crate) fn rsubs(v: f64, a: &Tensor) -> Result<Tensor> {
    binary(s(v), t(a), BinaryOp::Sub)
}
pub(crate) fn un(a: &Tensor, op: UnaryOp) -> Result<Tensor> {
    unary(a, op)
}
/// A constant 0/1 mask of `a <op> v` in `dtype` (no gradient flows through it).
pub(crate) fn mask(a: &Tensor, op: BinaryOp, v: f64, dtype: DType) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    binary(t(&a.detach()), s(v), op)?.to_dtype(dtype)
}
/// The constant boolean mask `a <op> v` (no gradient flows through it).
pub(crate) fn cond(a: &Tensor, op: BinaryOp, v: f64) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    binary(t(&a.detach()), s(v), op)
}
/// The constant boolean mask `a <op> b` of two operands.
fn cond2(a: Operand, b: Operand, op: BinaryOp) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    binary(a, b, op)
}
/// `c ? a : b`, differentiable in `a` and `b`. Piecewise derivative rules pick
/// their branch with it rather than multiplying by a 0/1 mask, so an infinite
/// or NaN value on the branch not taken (`exp(800)`, `1/0`) stays out, as in
/// PyTorch's kernels and `masked_fill`-based formulas.
pub(crate) fn pick(c: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    crate::ops::indexing::where_(c, t(a), t(b))
}
/// `c ? v : 0` (see [`pick`]).
pub(crate) fn keep_where(c: &Tensor, v: &Tensor) -> Result<Tensor> {
    let z = Tensor::zeros(&[], v.dtype(), v.device())?;
    pick(c, v, &z)
}
/// `g * 0`, the gradient of piecewise-constant ops (keeps NaN out, as PyTorch's zeros do).
pub(crate) fn zeros_like(g: &Tensor) -> Result<Tensor> {
    Tensor::zeros(g.shape(), g.dtype(), g.device())
}

/// The gradient of `op` at input `x` with output `y`.
fn unary_grad(op: UnaryOp, g: &Tensor, x: &dyn Fn() -> Result<Tensor>, y: &dyn Fn() -> Result<Tensor>) -> Result<Tensor> {
    use UnaryOp::*;
    let dt = g.dtype();
    Ok(match op {
        Neg => un(g, Neg)?,
        Abs => mul(g, &un(&x()?, Sign)?)?,
        Exp => mul(g, &y()?)?,
        Log => div(g, &x()?)?,
        Sqrt => div(g, &muls(&y()?, 2.0)?)?,
        Tanh => {
            let y = y()?;
            mul(g, &rsubs(1.0, &mul(&y, &y)?)?)?
        }
        Sigmoid => {
            let y = y()?;
            mul(g, &mul(&y, &rsubs(1.0, &y)?)?)?
        }
        // PyTorch's threshold_backward (`y <= 0 ? 0 : g`): a NaN output passes g.
        // The zero is a broadcast 0-d tensor: no zero-filled gradient-sized buffer.
        Relu => pick(&cond(&y()?, BinaryOp::Le, 0.0)?, &Tensor::zeros(&[], dt, g.device())?, g)?,
        Sign | Floor | Ceil | Round | RoundDecimals(_) | Trunc => zeros_like(g)?,
        Rsqrt => {
            let y = y()?;
            muls(&mul(g, &mul(&y, &mul(&y, &y)?)?)?, -0.5)?
        }
        Exp2 => muls(&mul(g, &y()?)?, std::f64::consts::LN_2)?,
        Expm1 => mul(g, &adds(&y()?, 1.0)?)?,
        Log2 => div(g, &muls(&x()?, std::f64::consts::LN_2)?)?,
        Log10 => div(g, &muls(&x()?, std::f64::consts::LN_10)?)?,
        Log1p => div(g, &adds(&x()?, 1.0)?)?,
        Sin => mul(g, &un(&x()?, Cos)?)?,
        Cos => un(&mul(g, &un(&x()?, Sin)?)?, Neg)?,
        Tan => {
            let y = y()?;
            mul(g, &adds(&mul(&y, &y)?, 1.0)?)?
        }
        Asin | Acos => {
            let x = x()?;
            let r = div(g, &un(&rsubs(1.0, &mul(&x, &x)?)?, Sqrt)?)?;
            if op == Acos { un(&r, Neg)? } else { r }
        }
        Atan => {
            let x = x()?;
            div(g, &adds(&mul(&x, &x)?, 1.0)?)?
        }
        Sinh => mul(g, &un(&x()?, Cosh)?)?,
        Cosh => mul(g, &un(&x()?, Sinh)?)?,
        Asinh => {
            let x = x()?;
            div(g, &un(&adds(&mul(&x, &x)?, 1.0)?, Sqrt)?)?
        }
        Acosh => {
            // PyTorch: g * (x^2 - 1).rsqrt(), finite below -1 (where acosh
            // itself is NaN) and inf at 1; sqrt(x-1)*sqrt(x+1) would be NaN there.
            let x = x()?;
            mul(g, &un(&adds(&mul(&x, &x)?, -1.0)?, Rsqrt)?)?
        }
        Atanh => {
            let x = x()?;
            div(g, &rsubs(1.0, &mul(&x, &x)?)?)?
        }
        Logit(eps) => {
            let x = x()?;
            let base = div(g, &mul(&x, &rsubs(1.0, &x)?)?)?;
            if eps < 0.0 {
                // NaN outside [0, 1], as PyTorch.
                let out = add(&mask(&x, BinaryOp::Lt, 0.0, dt)?, &mask(&x, BinaryOp::Gt, 1.0, dt)?)?;
                let inside = rsubs(1.0, &out)?;
                let base = logit_ends(g, &x, base)?;
                let r = mul(&base, &inside)?;
                add_nan_where(&r, &out)?
            } else {
                // Clamped outside [eps, 1 - eps]; NaN is not outside and gives NaN.
                let outside = cond2(t(&cond(&x, BinaryOp::Lt, eps)?), t(&cond(&x, BinaryOp::Gt, 1.0 - eps)?), BinaryOp::LogicalOr)?;
                let inside = unary(&outside, UnaryOp::LogicalNot)?;
                let base = logit_ends(g, &x, base)?;
                let r = keep_where(&inside, &base)?;
                // The vectorized lambda keeps `lo <= x <= hi` by a mask, which
                // NaN fails: 0 there, where the scalar one's branches give NaN.
                match vectorized_nan(&x, g, 2)? {
                    Some(vnan) => pick(&vnan, &zeros_like(g)?, &r)?,
                    None => r,
                }
            }
        }
        Erf | Erfc => {
            let x = x()?;
            let d = muls(&un(&un(&mul(&x, &x)?, Neg)?, Exp)?, std::f64::consts::FRAC_2_SQRT_PI)?;
            let r = mul(g, &d)?;
            if op == Erfc { un(&r, Neg)? } else { r }
        }
        Erfinv => {
            let y = y()?;
            muls(&mul(g, &un(&mul(&y, &y)?, Exp)?)?, std::f64::consts::PI.sqrt() / 2.0)?
        }
        Frac => g.clone(),
        Reciprocal => {
            let y = y()?;
            un(&mul(g, &mul(&y, &y)?)?, Neg)?
        }
        Hardtanh(lo, hi) => {
            // PyTorch's hardtanh_backward: `x <= lo || x >= hi ? 0 : g`, so a
            // NaN input passes g in its scalar loop; its vectorized loop
            // (see vectorized_nan) gives 0 there.
            let x = x()?;
            let outside = cond2(t(&cond(&x, BinaryOp::Le, lo)?), t(&cond(&x, BinaryOp::Ge, hi)?), BinaryOp::LogicalOr)?;
            let r = pick(&outside, &zeros_like(g)?, g)?;
            match vectorized_nan(&x, g, 1)? {
                Some(vnan) => pick(&vnan, &zeros_like(g)?, &r)?,
                None => r,
            }
        }
        Shrink(l, _) => {
            // PyTorch's shrink_backward: `-l <= x <= l ? 0 : g` in its scalar
            // lambda (NaN passes g), `(x < -l | x > l) & g` in its vectorized
            // one (NaN gives 0): see vectorized_nan.
            let x = x()?;
            let inside = cond2(t(&cond(&x, BinaryOp::Ge, -l)?), t(&cond(&x, BinaryOp::Le, l)?), BinaryOp::LogicalAnd)?;
            let r = pick(&inside, &zeros_like(g)?, g)?;
            match vectorized_nan(&x, g, 1)? {
                Some(vnan) => pick(&vnan, &zeros_like(g)?, &r)?,
                None => r,
            }
        }
        LeakyRelu(slope) => {
            // Picked, not blended as `pos * (1 - slope) + slope`: for a huge
            // slope (rrelu's (lower + upper) / 2 with lower = -9e8) the blend
            // cancels to 0 in float32 where PyTorch's `x > 0 ? g : g * slope` gives g.
            pick(&cond(&x()?, BinaryOp::Gt, 0.0)?, g, &muls(g, slope)?)?
        }
        Elu(alpha, scale, iscale) => elu_grad(g, &x()?, alpha, scale, iscale)?,
        Celu(alpha) => elu_grad(g, &x()?, alpha, 1.0, 1.0 / alpha)?,
        Gelu(false) => {
            let x = x()?;
            let cdf = muls(&adds(&un(&muls(&x, std::f64::consts::FRAC_1_SQRT_2)?, Erf)?, 1.0)?, 0.5)?;
            let pdf = muls(&un(&muls(&mul(&x, &x)?, -0.5)?, Exp)?, 1.0 / (2.0 * std::f64::consts::PI).sqrt())?;
            mul(g, &add(&cdf, &mul(&x, &pdf)?)?)?
        }
        Gelu(true) => {
            let x = x()?;
            let k = (2.0 / std::f64::consts::PI).sqrt();
            let x2 = mul(&x, &x)?;
            let inner = muls(&add(&x, &muls(&mul(&x2, &x)?, 0.044715)?)?, k)?;
            let th = un(&inner, Tanh)?;
            let dinner = muls(&adds(&muls(&x2, 3.0 * 0.044715)?, 1.0)?, k)?;
            let left = muls(&adds(&th, 1.0)?, 0.5)?;
            let right = mul(&muls(&x, 0.5)?, &mul(&rsubs(1.0, &mul(&th, &th)?)?, &dinner)?)?;
            mul(g, &add(&left, &right)?)?
        }
        Silu => {
            let x = x()?;
            let sg = un(&x, Sigmoid)?;
            mul(g, &mul(&sg, &adds(&mul(&x, &rsubs(1.0, &sg)?)?, 1.0)?)?)?
        }
        Mish => {
            let x = x()?;
            let th = un(&un(&x, Softplus(1.0, 20.0))?, Tanh)?;
            let d = add(&th, &mul(&mul(&x, &un(&x, Sigmoid)?)?, &rsubs(1.0, &mul(&th, &th)?)?)?)?;
            mul(g, &d)?
        }
        Softplus(beta, thr) => {
            let x = x()?;
            let lin = mask(&muls(&x, beta)?, BinaryOp::Gt, thr, dt)?;
            let sg = un(&muls(&x, beta)?, Sigmoid)?;
            mul(g, &add(&lin, &mul(&sg, &rsubs(1.0, &lin)?)?)?)?
        }
        Hardsigmoid => {
            let x = x()?;
            let inside = cond2(t(&cond(&x, BinaryOp::Gt, -3.0)?), t(&cond(&x, BinaryOp::Lt, 3.0)?), BinaryOp::LogicalAnd)?;
            keep_where(&inside, &muls(g, 1.0 / 6.0)?)?
        }
        Hardswish => {
            let x = x()?;
            // x <= -3: 0; -3 < x < 3: x/3 + 1/2; x >= 3: 1 (PyTorch's
            // kernel). Its scalar lambda (`x < 3 ? mid : g`) gives a NaN
            // input g; its vectorized one (blendv on `x >= 3`) the middle
            // branch, NaN: see vectorized_nan.
            let mid = mul(g, &adds(&muls(&x, 1.0 / 3.0)?, 0.5)?)?;
            let upper = pick(&cond(&x, BinaryOp::Lt, 3.0)?, &mid, g)?;
            let r = pick(&cond(&x, BinaryOp::Le, -3.0)?, &zeros_like(g)?, &upper)?;
            match vectorized_nan(&x, g, 2)? {
                Some(vnan) => pick(&vnan, &mid, &r)?,
                None => r,
            }
        }
        LogSigmoid => mul(g, &un(&un(&x()?, Neg)?, Sigmoid)?)?,
        NanToNum(..) => {
            let _no_grad = crate::autograd::GradModeGuard::new(false);
            let fin = unary(&x()?.detach(), IsFinite)?.to_dtype(dt)?;
            drop(_no_grad);
            mul(g, &fin)?
        }
        BitwiseNot | LogicalNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | Signbit | Sgn => zeros_like(g)?,
        _ => super::special_grad::unary(op, g, x, y)?,
    })
}

/// logit's gradient `base` (`g / (x * (1 - x))`) with PyTorch's ends: its
/// scalar lambda divides by +0 at x == 0 or 1 (`dy / 0`, the infinity takes
/// g's sign), its vectorized one keeps the formula (-0.0 flips the sign).
fn logit_ends(g: &Tensor, x: &Tensor, base: Tensor) -> Result<Tensor> {
    let mut at_end = cond2(t(&cond(x, BinaryOp::Eq, 0.0)?), t(&cond(x, BinaryOp::Eq, 1.0)?), BinaryOp::LogicalOr)?;
    if let Some(vec) = vectorized_part(x, g, 2)? {
        at_end = cond2(t(&at_end), t(&unary(&vec, UnaryOp::LogicalNot)?), BinaryOp::LogicalAnd)?;
    }
    pick(&at_end, &div(g, &zeros_like(g)?)?, &base)
}

/// `r` with NaN where `outside` is 1.
fn add_nan_where(r: &Tensor, outside: &Tensor) -> Result<Tensor> {
    // outside * NaN is NaN for 0 too, so build the NaN term as log(1 - 2*outside):
    // log(1) = 0 inside, log(-1) = NaN outside.
    let term = un(&rsubs(1.0, &muls(outside, 2.0)?)?, UnaryOp::Log)?;
    add(r, &term)
}

/// The positions that PyTorch's CPU kernel (`cpu_kernel_vec`) runs through
/// its vectorized lambda, or None when none. PyTorch's TensorIterator
/// (operands: the new output, `g`, `x`) orders the dims fastest first by the
/// inputs' strides, merges the dims that are contiguous in every operand into
/// one inner loop, and runs each inner row as whole chunks of `vectors`
/// vectors, then the last `len % chunk` elements through the scalar lambda
/// (elu, hardswish and logit unroll two vectors, hardtanh one). A row is
/// vectorized only if each input is contiguous along it or one of them is
/// broadcast (stride 0). The vector is the AVX512 one (64 bytes), PyTorch's
/// default CPU capability on x86 machines with it.
fn vectorized_part(x: &Tensor, g: &Tensor, vectors: usize) -> Result<Option<Tensor>> {
    if x.shape() != g.shape() || x.numel() == 0 {
        return Ok(None);
    }
    let shape = x.shape().to_vec();
    let nd = shape.len();
    let ops = [g.strides().to_vec(), x.strides().to_vec()];
    let perm = ferrotorch_core::layout::iteration_order(&shape, &[&ops[0], &ops[1]]);
    // coalesce_dimensions, only as far as the inner loop: the dims of `perm`
    // merged into it, and its size and strides.
    let (mut inner, mut len, mut sts) = (1usize, 1usize, [0isize, 0isize]);
    if nd > 0 {
        len = shape[perm[0]];
        sts = [ops[0][perm[0]], ops[1][perm[0]]];
        while inner < nd {
            let d = perm[inner];
            let merge = len == 1 || shape[d] == 1 || (0..2).all(|k| sts[k] * len as isize == ops[k][d]);
            if !merge {
                break;
            }
            if len == 1 {
                sts = [ops[0][d], ops[1][d]];
            }
            len *= shape[d];
            inner += 1;
        }
    }
    let vectorizes = len == 1 || matches!(sts, [1, 1] | [0, 1] | [1, 0]);
    let chunk = 64 * vectors / x.dtype().itemsize().max(1);
    let vec_end = len - len % chunk;
    if !vectorizes || vec_end == 0 {
        return Ok(None);
    }
    // Each element's index along the inner loop, in row-major logical order.
    let mut mult = vec![0usize; nd];
    let mut m = 1;
    for &d in &perm[..inner] {
        mult[d] = m;
        m *= shape[d];
    }
    let n = x.numel();
    let mut v = Vec::with_capacity(n);
    let mut idx = vec![0usize; nd];
    for _ in 0..n {
        let pos: usize = (0..nd).map(|d| idx[d] * mult[d]).sum();
        v.push(pos < vec_end);
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(Some(Tensor::from_vec(v, x.shape())?))
}

/// The NaN inputs that reach the vectorized lambda (see [`vectorized_part`]),
/// or None when there are none. Piecewise backward kernels (elu, hardswish,
/// hardtanh) disagree between their two lambdas on NaN only: the scalar
/// one's `if` takes one branch, the vectorized blendv the other.
fn vectorized_nan(x: &Tensor, g: &Tensor, vectors: usize) -> Result<Option<Tensor>> {
    let Some(part) = vectorized_part(x, g, vectors)? else { return Ok(None) };
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    let nan = cond2(t(&unary(&x.detach(), UnaryOp::IsNan)?), t(&part), BinaryOp::LogicalAnd)?;
    if !nan.all_any(None, false, false)?.item()?.to_bool() {
        return Ok(None);
    }
    Ok(Some(nan))
}

/// elu family: `x <= 0 ? g * alpha*scale*iscale * exp(x*iscale) : g*scale`
/// (PyTorch's elu_backward: NaN takes the positive branch in the scalar
/// loop, the negative one in the vectorized loop).
fn elu_grad(g: &Tensor, x: &Tensor, alpha: f64, scale: f64, iscale: f64) -> Result<Tensor> {
    // The branch is picked, not blended: exp(x * iscale) overflows for large
    // positive x and `0 * inf` would poison the positive side with NaN.
    let negd = muls(&un(&muls(x, iscale)?, UnaryOp::Exp)?, alpha * scale * iscale)?;
    let neg = mul(g, &negd)?;
    let r = pick(&cond(x, BinaryOp::Le, 0.0)?, &neg, &muls(g, scale)?)?;
    // The vectorized kernel's blendv on `x > 0` sends NaN to the negative branch.
    match vectorized_nan(x, g, 2)? {
        Some(vnan) => pick(&vnan, &neg, &r),
        None => Ok(r),
    }
}

/// `op(x)` for the in-place forms (`elu_`, `celu_`, `selu_`). PyTorch records
/// `EluBackward1`/`CeluBackward1`, whose rule works from the result:
/// `y <= 0 ? g * iscale * (y + alpha * scale) : g * scale`. A NaN result
/// (x < 0 with an infinite alpha) takes the positive branch in its scalar
/// loop. It refuses an alpha that is not `>= 0` (negative or NaN) when the
/// gradient is computed, not in the forward.
pub fn unary_for_inplace(x: &Tensor, op: UnaryOp) -> Result<Tensor> {
    let (alpha, scale, iscale, name) = match op {
        UnaryOp::Elu(a, s, i) => (a, s, i, "EluBackward1"),
        UnaryOp::Celu(a) => (a, 1.0, 1.0 / a, "CeluBackward1"),
        _ => return unary(x, op),
    };
    let out = super::arith::unary_raw(x, op)?;
    if !out.dtype().is_floating_point() {
        return Ok(out);
    }
    // PyTorch's rule reads the written tensor itself: the result in the
    // layout of `x` (the snapshot of the target, with its strides), which
    // decides the vectorized loop's elements below.
    let result = if crate::autograd::is_grad_enabled() && x.requires_grad() {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let y = x.clone_same_layout(true)?;
        y.copy_(&out)?;
        Some(y)
    } else {
        None
    };
    let dtype = out.dtype();
    record(name, &[Some(x)], &[&out], move || {
        rule(move |_node, grads| {
            if !(alpha >= 0.0) {
                return Err(ferrotorch_core::Error::runtime(
                    "In-place elu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead.",
                ));
            }
            let Some(g) = g0(grads) else { return Ok(vec![None]) };
            let Some(y) = result.clone() else { return Ok(vec![None]) };
            let neg = mul(&muls(&g, iscale)?, &adds(&y, alpha * scale)?)?;
            let r = pick(&cond(&y, BinaryOp::Le, 0.0)?, &neg, &muls(&g, scale)?)?;
            // The vectorized kernel's blendv on `y > 0` sends NaN to the negative branch.
            let r = match vectorized_nan(&y, &g, 2)? {
                Some(vnan) => pick(&vnan, &neg, &r)?,
                None => r,
            };
            let r = if r.dtype() != dtype { r.to_dtype(dtype)? } else { r };
            Ok(vec![Some(r)])
        })
    });
    Ok(out)
}

/// Records the node of `op(x)` producing `out`.
pub(crate) fn record_unary(x: &Tensor, op: UnaryOp, out: &Tensor) {
    if op.is_predicate() || op == UnaryOp::BitwiseNot || !op.is_differentiable() || !crate::autograd::needs_grad(&[x]) {
        return;
    }
    let name = op.node_name();
    let saved_in = SavedTensor::input(x);
    let saved_out = SavedTensor::output(out, 0);
    let dtype = x.dtype();
    // Native: complex inputs have rules in PyTorch's convention (and a real
    // input's gradient is real).
    record(name, &[Some(x)], &[out], move || {
        crate::autograd::rule_native(move |node, grads| {
            let Some(g) = g0(grads) else { return Ok(vec![None]) };
            let xf = || saved_in.unpack(node);
            let yf = || saved_out.unpack(node);
            let r = if dtype.is_complex() {
                super::complex_grad::unary(op, &g, &xf()?, &yf)?
            } else {
                unary_grad(op, &g, &xf, &yf)?
            };
            let r = if r.dtype() != dtype && dtype.is_differentiable() { r.to_dtype(dtype)? } else { r };
            Ok(vec![Some(r)])
        })
    });
}
