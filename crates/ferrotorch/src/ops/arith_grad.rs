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
    if r.dtype() != dtype && dtype.is_floating_point() {
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
        _ => return,
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
                        // -g * a / b^2
                        let av = sa.value(node)?;
                        let num = binary(t(&g), av.op(), BinaryOp::Mul)?;
                        let b2 = binary(bv.op(), bv.op(), BinaryOp::Mul)?;
                        Some(unary(&binary(t(&num), t(&b2), BinaryOp::Div)?, UnaryOp::Neg)?)
                    } else {
                        None
                    };
                    (ga, gb)
                }
                BinaryOp::Pow => {
                    let av = sa.value(node)?;
                    let bv = sb.value(node)?;
                    let ga = if wa {
                        // g * b * a^(b-1)
                        let bm1 = binary(bv.op(), s(1.0), BinaryOp::Sub)?;
                        let p = binary(av.op(), t(&bm1), BinaryOp::Pow)?;
                        let p = match &bv {
                            OperandOwned::S(Scalar::Float(e)) if *e == 0.0 => binary(t(&p), s(0.0), BinaryOp::Mul)?,
                            _ => p,
                        };
                        Some(binary(t(&binary(t(&g), bv.op(), BinaryOp::Mul)?), t(&p), BinaryOp::Mul)?)
                    } else {
                        None
                    };
                    let gb = if wb {
                        // g * a^b * ln(a)
                        let r = out_saved.unpack(node)?;
                        let ln_a = match &av {
                            OperandOwned::T(x) => unary(x, UnaryOp::Log)?,
                            OperandOwned::S(v) => Tensor::scalar(v.to_f64().ln())?,
                        };
                        Some(binary(t(&binary(t(&g), t(&r), BinaryOp::Mul)?), t(&ln_a), BinaryOp::Mul)?)
                    } else {
                        None
                    };
                    (ga, gb)
                }
                BinaryOp::Maximum | BinaryOp::Minimum => {
                    let av = sa.value(node)?;
                    let bv = sb.value(node)?;
                    // Ties split the gradient evenly, as PyTorch does.
                    let cmp = if op == BinaryOp::Maximum { BinaryOp::Gt } else { BinaryOp::Lt };
                    let win = binary(av.op(), bv.op(), cmp)?.to_dtype(g.dtype())?;
                    let tie = binary(av.op(), bv.op(), BinaryOp::Eq)?.to_dtype(g.dtype())?;
                    let wa_mask = binary(t(&win), t(&binary(t(&tie), s(0.5), BinaryOp::Mul)?), BinaryOp::Add)?;
                    let ga = if wa { Some(binary(t(&g), t(&wa_mask), BinaryOp::Mul)?) } else { None };
                    let gb = if wb {
                        let wb_mask = binary(s(1.0), t(&wa_mask), BinaryOp::Sub)?;
                        Some(binary(t(&g), t(&wb_mask), BinaryOp::Mul)?)
                    } else {
                        None
                    };
                    (ga, gb)
                }
                _ => (None, None),
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

/// Records the node of `op(x)` producing `out`.
pub(crate) fn record_unary(x: &Tensor, op: UnaryOp, out: &Tensor) {
    let name = match op {
        UnaryOp::Neg => "NegBackward0",
        UnaryOp::Abs => "AbsBackward0",
        UnaryOp::Exp => "ExpBackward0",
        UnaryOp::Log => "LogBackward0",
        UnaryOp::Sqrt => "SqrtBackward0",
        UnaryOp::Tanh => "TanhBackward0",
        UnaryOp::Sigmoid => "SigmoidBackward0",
        UnaryOp::Relu => "ReluBackward0",
    };
    let saved_in = SavedTensor::input(x);
    let saved_out = SavedTensor::output(out, 0);
    let dtype = x.dtype();
    record(name, &[Some(x)], &[out], move || {
        rule(move |node, grads| {
            let Some(g) = g0(grads) else { return Ok(vec![None]) };
            let r = match op {
                UnaryOp::Neg => unary(&g, UnaryOp::Neg)?,
                UnaryOp::Abs => {
                    let xv = saved_in.unpack(node)?;
                    let pos = binary(t(&xv), s(0.0), BinaryOp::Gt)?.to_dtype(g.dtype())?;
                    let neg = binary(t(&xv), s(0.0), BinaryOp::Lt)?.to_dtype(g.dtype())?;
                    binary(t(&g), t(&binary(t(&pos), t(&neg), BinaryOp::Sub)?), BinaryOp::Mul)?
                }
                UnaryOp::Exp => binary(t(&g), t(&saved_out.unpack(node)?), BinaryOp::Mul)?,
                UnaryOp::Log => binary(t(&g), t(&saved_in.unpack(node)?), BinaryOp::Div)?,
                UnaryOp::Sqrt => {
                    let r = saved_out.unpack(node)?;
                    binary(t(&g), t(&binary(t(&r), s(2.0), BinaryOp::Mul)?), BinaryOp::Div)?
                }
                UnaryOp::Tanh => {
                    let r = saved_out.unpack(node)?;
                    let d = binary(s(1.0), t(&binary(t(&r), t(&r), BinaryOp::Mul)?), BinaryOp::Sub)?;
                    binary(t(&g), t(&d), BinaryOp::Mul)?
                }
                UnaryOp::Sigmoid => {
                    let r = saved_out.unpack(node)?;
                    let d = binary(t(&r), t(&binary(s(1.0), t(&r), BinaryOp::Sub)?), BinaryOp::Mul)?;
                    binary(t(&g), t(&d), BinaryOp::Mul)?
                }
                UnaryOp::Relu => {
                    let r = saved_out.unpack(node)?;
                    let m = binary(t(&r), s(0.0), BinaryOp::Gt)?.to_dtype(g.dtype())?;
                    binary(t(&g), t(&m), BinaryOp::Mul)?
                }
            };
            let r = if r.dtype() != dtype && dtype.is_floating_point() { r.to_dtype(dtype)? } else { r };
            Ok(vec![Some(r)])
        })
    });
}
