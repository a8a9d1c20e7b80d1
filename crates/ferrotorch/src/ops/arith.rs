//! Elementwise arithmetic with NumPy broadcasting and PyTorch type promotion.

use super::{broadcast_layout, check_cpu};
use super::creation::pretty;
use crate::defaults::default_dtype;
use crate::Tensor;
use ferrotorch_core::dtype::{result_type, OperandKind};
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result, Scalar};
use ferrotorch_cpu::elementwise::{binary as bin_kernel, unary as un_kernel, Float, Num};
use ferrotorch_cpu::Src;

/// One side of a binary op: a tensor or a Python number.
#[derive(Clone, Copy)]
pub enum Operand<'a> {
    /// A tensor.
    T(&'a Tensor),
    /// A Python scalar (promotes only across categories).
    S(Scalar),
}

/// The binary ops with a kernel here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// true division `a / b`
    Div,
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `maximum(a, b)` (NaN-propagating)
    Maximum,
    /// `minimum(a, b)` (NaN-propagating)
    Minimum,
    /// `a ** b`
    Pow,
}

impl BinaryOp {
    /// The aten-style name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Pow => "pow",
        }
    }
    /// Does the op return bool (and so never carry gradients)?
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }
}

fn kind_of(t: &Tensor) -> OperandKind {
    if t.ndim() == 0 {
        OperandKind::ZeroDim
    } else {
        OperandKind::Dim
    }
}

/// Materialises a Python scalar as a 0-d tensor of its inferred dtype.
fn scalar_tensor(s: Scalar) -> Result<Tensor> {
    match s {
        Scalar::Bool(b) => Tensor::scalar(b),
        Scalar::Int(i) => Tensor::scalar(i),
        Scalar::Float(f) => Tensor::scalar(f),
    }
}

fn operand_info(o: &Operand) -> (DType, OperandKind) {
    match o {
        Operand::T(t) => (t.dtype(), kind_of(t)),
        Operand::S(s) => (s.inferred_dtype(default_dtype()), OperandKind::Scalar),
    }
}

/// The dtype an op computes in and the dtype it returns.
fn op_dtypes(op: BinaryOp, a: &Operand, b: &Operand) -> Result<(DType, DType)> {
    let common = result_type(&[operand_info(a), operand_info(b)])?;
    Ok(match op {
        BinaryOp::Div if !common.is_floating_point() => (default_dtype(), default_dtype()),
        _ if op.is_comparison() => (common, DType::Bool),
        _ => (common, common),
    })
}

fn as_tensor(o: &Operand, dtype: DType) -> Result<Tensor> {
    match o {
        Operand::T(t) => t.to_dtype(dtype),
        Operand::S(s) => scalar_tensor(*s)?.to_dtype(dtype),
    }
}

/// `a <op> b` into a new tensor, recording the autograd node when needed.
pub fn binary(a: Operand, b: Operand, op: BinaryOp) -> Result<Tensor> {
    let out = binary_raw(a, b, op)?;
    if out.dtype().is_floating_point() && !op.is_comparison() {
        super::arith_grad::record_binary(a, b, op, &out);
    }
    Ok(out)
}

/// `a <op> b` without autograd.
pub fn binary_raw(a: Operand, b: Operand, op: BinaryOp) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    let (compute, out_dtype) = op_dtypes(op, &a, &b)?;
    let (ta, tb) = (as_tensor(&a, compute)?, as_tensor(&b, compute)?);
    check_cpu(op.name(), &[&ta, &tb])?;
    let shape = broadcast_shapes(ta.shape(), tb.shape())?;
    let out = Tensor::empty(&shape, out_dtype, ta.device())?;
    run_binary(op, &out, &ta, &tb, compute)?;
    Ok(out)
}

/// `a <op>= b` in place; the result must be castable to `a`'s dtype and shape.
/// When autograd records, `a` takes the new node as its history.
pub fn binary_(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    a.layout().check_no_internal_overlap()?;
    let tb = if let Operand::T(x) = b { Some(x) } else { None };
    let recording = crate::autograd::is_grad_enabled()
        && (a.requires_grad() || tb.is_some_and(|x| x.requires_grad()));
    if recording {
        return binary_recorded(a, b, op);
    }
    binary_raw_(a, b, op)
}

/// In-place op under autograd: computed out of place on a snapshot that
/// carries `a`'s old history, then written into `a`, whose history becomes
/// the new node.
fn binary_recorded(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    crate::autograd::check_inplace(a)?;
    let snap = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        a.clone_data()?
    };
    if let Some(f) = a.grad_fn() {
        crate::autograd::set_history(&snap, f, a.output_nr());
    }
    let r = binary(Operand::T(&snap), b, op)?;
    if !DType::can_cast(r.dtype(), a.dtype()) {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            pretty(r.dtype()),
            pretty(a.dtype())
        )));
    }
    if r.shape() != a.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_shape(a.shape()),
            fmt_shape(r.shape())
        )));
    }
    a.copy_(&r)?;
    if let Some(f) = r.grad_fn() {
        crate::autograd::set_history(a, f, 0);
    }
    Ok(())
}

/// `a <op>= b` without autograd.
pub fn binary_raw_(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    let (compute, out_dtype) = op_dtypes(op, &Operand::T(a), &b)?;
    if !DType::can_cast(out_dtype, a.dtype()) {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            pretty(out_dtype),
            pretty(a.dtype())
        )));
    }
    let tb = as_tensor(&b, compute)?;
    let shape = broadcast_shapes(a.shape(), tb.shape())?;
    if shape.as_slice() != a.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_shape(a.shape()),
            fmt_shape(&shape)
        )));
    }
    let ta = a.to_dtype(compute)?;
    // Compute straight into `a` when dtypes agree and `b` cannot alias it in a
    // way that changes results; otherwise through a temporary.
    let direct = out_dtype == a.dtype() && compute == a.dtype() && !std::sync::Arc::ptr_eq(a.storage(), tb.storage());
    if direct {
        run_binary(op, a, &ta, &tb, compute)?;
        a.bump_version();
    } else {
        let tmp = Tensor::empty(a.shape(), out_dtype, a.device())?;
        run_binary(op, &tmp, &ta, &tb, compute)?;
        a.copy_(&tmp)?;
    }
    Ok(())
}

fn run_binary(op: BinaryOp, out: &Tensor, a: &Tensor, b: &Tensor, compute: DType) -> Result<()> {
    let la = broadcast_layout(a, out.shape())?;
    let lb = broadcast_layout(b, out.shape())?;
    let sa = Src { base: a.storage().as_ptr(), layout: &la };
    let sb = Src { base: b.storage().as_ptr(), layout: &lb };
    let o = out.dst();
    if op.is_comparison() {
        dispatch_dtype!(compute, T => {
            let f: fn(T, T) -> bool = match op {
                BinaryOp::Eq => |x, y| x == y,
                BinaryOp::Ne => |x, y| x != y,
                BinaryOp::Lt => |x, y| x < y,
                BinaryOp::Le => |x, y| x <= y,
                BinaryOp::Gt => |x, y| x > y,
                _ => |x, y| x >= y,
            };
            bin_kernel::<T, T, bool>(o, sa, sb, f)
        });
        return Ok(());
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
        BinaryOp::Div => float_dispatch!(compute, "div", T => bin_kernel::<T, T, T>(o, sa, sb, Float::div)),
        BinaryOp::Pow => {
            if compute.is_floating_point() {
                float_dispatch!(compute, "pow", T => bin_kernel::<T, T, T>(o, sa, sb, Float::powf))
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
        _ => unreachable!("comparisons handled above"),
    }
    Ok(())
}

fn int_pow<T: Element>(x: T, y: T) -> T {
    let (b, e) = (x.to_i64(), y.to_i64());
    if e < 0 {
        return T::from_i64(match b {
            1 => 1,
            -1 => if e % 2 == 0 { 1 } else { -1 },
            _ => 0,
        });
    }
    T::from_i64(b.wrapping_pow(e.min(u32::MAX as i64) as u32))
}

/// Unary ops with a kernel here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `|x|`
    Abs,
    /// `e^x`
    Exp,
    /// `ln x`
    Log,
    /// `sqrt x`
    Sqrt,
    /// `tanh x`
    Tanh,
    /// `1 / (1 + e^-x)`
    Sigmoid,
    /// `max(x, 0)`
    Relu,
}

impl UnaryOp {
    /// The aten-style name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Relu => "relu",
        }
    }
}

/// `op(x)` into a new tensor, recording the autograd node when needed.
pub fn unary(x: &Tensor, op: UnaryOp) -> Result<Tensor> {
    let out = unary_raw(x, op)?;
    if out.dtype().is_floating_point() {
        super::arith_grad::record_unary(x, op, &out);
    }
    Ok(out)
}

/// `op(x)` without autograd. Integer inputs of float-only ops compute in the
/// default float dtype, as PyTorch does.
pub fn unary_raw(x: &Tensor, op: UnaryOp) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    check_cpu(op.name(), &[x])?;
    let float_only = !matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu);
    if op == UnaryOp::Neg && x.dtype() == DType::Bool {
        return Err(Error::runtime(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        ));
    }
    let dtype = if float_only && !x.dtype().is_floating_point() { default_dtype() } else { x.dtype() };
    let xi = x.to_dtype(dtype)?;
    let out = Tensor::empty(x.shape(), dtype, x.device())?;
    let (o, s) = (out.dst(), xi.src());
    match op {
        UnaryOp::Neg => dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, Num::neg)),
        UnaryOp::Abs => dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, Num::abs)),
        UnaryOp::Relu => {
            if dtype == DType::Bool {
                return Err(Error::runtime("\"clamp_min_scalar_cpu\" not implemented for 'Bool'"));
            }
            dispatch_dtype!(dtype, T => un_kernel::<T, T>(o, s, |v: T| if v > T::zero() || v != v { v } else { T::zero() }))
        }
        _ => {
            float_dispatch!(dtype, op.name(), T => {
                let f: fn(T) -> T = match op {
                    UnaryOp::Exp => Float::exp,
                    UnaryOp::Log => Float::ln,
                    UnaryOp::Sqrt => Float::sqrt,
                    UnaryOp::Tanh => Float::tanh,
                    _ => |v: T| v.map_f64(|z| 1.0 / (1.0 + (-z).exp())),
                };
                un_kernel::<T, T>(o, s, f)
            })
        }
    }
    Ok(out)
}

impl Tensor {
    /// `self + alpha * other`.
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        binary(Operand::T(self), Operand::T(other), BinaryOp::Add)
    }
    /// `self - other`.
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        binary(Operand::T(self), Operand::T(other), BinaryOp::Sub)
    }
    /// `self * other`.
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        binary(Operand::T(self), Operand::T(other), BinaryOp::Mul)
    }
    /// `self / other` (true division).
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        binary(Operand::T(self), Operand::T(other), BinaryOp::Div)
    }
}
