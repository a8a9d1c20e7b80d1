//! Elementwise arithmetic with NumPy broadcasting and PyTorch type promotion.

use super::{broadcast_layout, common_device};
use super::creation::pretty;
use crate::defaults::default_dtype;
use crate::Tensor;
use ferrotorch_core::dtype::{result_type, OperandKind};
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{DType, Error, Result, Scalar};

pub use ferrotorch_core::op::{BinaryOp, UnaryOp};

/// One side of a binary op: a tensor or a Python number.
#[derive(Clone, Copy)]
pub enum Operand<'a> {
    /// A tensor.
    T(&'a Tensor),
    /// A Python scalar (promotes only across categories).
    S(Scalar),
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
        Scalar::Complex(re, im) => Tensor::scalar_complex(re, im),
    }
}

fn operand_info(o: &Operand) -> (DType, OperandKind) {
    match o {
        Operand::T(t) => (t.dtype(), kind_of(t)),
        Operand::S(s) => (s.inferred_dtype(default_dtype()), OperandKind::Scalar),
    }
}

/// `torch.result_type` of any number of operands (PyTorch's common dtype of
/// an op's inputs, computed once over all of them).
pub fn common_dtype(operands: &[Operand]) -> Result<DType> {
    result_type(&operands.iter().map(operand_info).collect::<Vec<_>>())
}

/// The dtype an op computes in and the dtype it returns.
fn op_dtypes(op: BinaryOp, a: &Operand, b: &Operand) -> Result<(DType, DType)> {
    let common = result_type(&[operand_info(a), operand_info(b)])?;
    Ok(match op {
        _ if op.int_to_float() && !common.is_differentiable() => (default_dtype(), default_dtype()),
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

/// An operand as a kernel computing in `common` sees it in its opmath dtype
/// ([`opmath`]): PyTorch's iterator first casts every input to the common
/// dtype and the kernel then widens, so an int32 -1.5e9 in a float16 op is
/// -inf (not a finite float32) before any float32 arithmetic.
pub fn to_opmath(o: &Operand, common: DType) -> Result<Tensor> {
    let t = as_tensor(o, common)?;
    let work = opmath(common);
    if work != common { t.to_dtype(work) } else { Ok(t) }
}

/// The dtype a kernel of `dtype` accumulates and takes its scalar arguments
/// in (PyTorch's `opmath_type`): float32 for float16/bfloat16, so composites
/// on reduced-precision tensors round once at the end; `dtype` itself otherwise.
pub fn opmath(dtype: DType) -> DType {
    match dtype {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    }
}

/// PyTorch's `Scalar::to<scalar_t>()`: the value a number argument of an op
/// (`alpha`, `value`, `beta`, a threshold, a fill value) takes inside a kernel
/// computing in `dtype`. PyTorch converts such arguments to the kernel's type
/// before using them (they never promote the result), so a float truncates
/// toward zero in an integer kernel (`addcmul(int, .., value=1.9)` scales by 1)
/// and any number becomes its truthiness in a bool kernel; a value outside
/// `dtype`'s range is PyTorch's overflow error. Every op taking such an
/// argument goes through here.
pub fn scalar_arg(value: Scalar, dtype: DType) -> Result<Scalar> {
    ferrotorch_core::dtype::check_scalar_fits(value, dtype, 2)?;
    Ok(match dtype {
        DType::Bool => Scalar::Bool(value.to_bool()),
        DType::Float64 => Scalar::Float(value.to_f64()),
        DType::Complex128 => {
            let (re, im) = value.to_c64();
            Scalar::Complex(re, im)
        }
        DType::Complex64 => {
            let (re, im) = value.to_c64();
            Scalar::Complex(re as f32 as f64, im as f32 as f64)
        }
        // Rounded to the dtype once, as the kernel holds it.
        d if d.is_floating_point() => Scalar::Float(Tensor::scalar(value.to_f64())?.to_dtype(d)?.to_f64_vec()?[0]),
        _ => Scalar::Int(value.to_i64()),
    })
}

/// `a + alpha * b` (`op` = `Add`) or `a - alpha * b` (`Sub`): PyTorch's
/// `add`/`sub` with `alpha`. `alpha` is checked ([`check_alpha`]) and
/// converted to the common dtype ([`scalar_arg`]); `b` is scaled in that dtype
/// (so `add(f64, f16, alpha=)` does not round through float16), and float16/
/// bfloat16 results compute in float32 and round once, as PyTorch's kernel.
pub fn add_scaled(a: Operand, b: Operand, alpha: Scalar, op: BinaryOp) -> Result<Tensor> {
    check_operands(op, &a, &b)?;
    let (compute, _) = op_dtypes(op, &a, &b)?;
    check_alpha(compute, alpha)?;
    let alpha_c = scalar_arg(alpha, compute)?;
    if alpha_c.to_f64() == 1.0 {
        return binary(a, b, op);
    }
    // float16/bfloat16: `a ± alpha·b` in float32 with alpha held in the
    // tensors' dtype, rounded once (PyTorch's vectorised kernel).
    let s = if op == BinaryOp::Sub { -alpha_c.to_f64() } else { alpha_c.to_f64() };
    let r = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let (ta, tb) = (to_opmath(&a, compute)?, to_opmath(&b, compute)?);
        let r = if ta.dtype().is_floating_point() {
            // One fused multiply-add, as PyTorch's `fmadd(b, alpha, a)`: a
            // product past the range does not overflow before the sum
            // (-inf + 3.5 * 3e38 is -inf, not NaN), and rounds once.
            fused_add_alpha(&ta, &tb, s)?
        } else {
            let sb = binary(Operand::T(&tb), Operand::S(alpha_c), BinaryOp::Mul)?;
            binary(Operand::T(&ta), Operand::T(&sb), op)?
        };
        if r.dtype() != compute { r.to_dtype(compute)? } else { r }
    };
    if r.dtype().is_differentiable() {
        // The backward scales by the number as given (PyTorch's
        // `maybe_multiply(grad, alpha)`), not by its value in the kernel's dtype.
        let sg = if op == BinaryOp::Sub { -alpha.to_f64() } else { alpha.to_f64() };
        record_add_scaled(a, b, sg, op, &r);
    }
    Ok(r)
}

/// The node of [`add_scaled`], as PyTorch's `AddBackward0`/`SubBackward0`
/// with `alpha`: `a` gets the output's gradient, `b` the gradient times
/// `s` (±alpha as given) in the output's dtype (a float16 gradient is scaled and rounded
/// before it is summed over `b`'s broadcast dims), each summed to its
/// input's shape and cast to its dtype. A Python-number side has no edge.
fn record_add_scaled(a: Operand, b: Operand, s: f64, op: BinaryOp, out: &Tensor) {
    let side = |o: &Operand| match o {
        Operand::T(t) => Some((t.shape().to_vec(), t.dtype())),
        Operand::S(_) => None,
    };
    let (ma, mb) = (side(&a), side(&b));
    let inputs = [if let Operand::T(t) = a { Some(t) } else { None }, if let Operand::T(t) = b { Some(t) } else { None }];
    let name = if op == BinaryOp::Sub { "SubBackward0" } else { "AddBackward0" };
    crate::autograd::record(name, &inputs, &[out], move || {
        crate::autograd::rule(move |node, grads| {
            let Some(g) = super::arith_grad::g0(grads) else { return Ok(vec![None, None]) };
            let wants = |i: usize| node.next_edges()[i].is_some();
            let ga = match &ma {
                Some((shape, dt)) if wants(0) => Some(super::arith_grad::reduce_grad(&g, shape, *dt)?),
                _ => None,
            };
            let gb = match &mb {
                Some((shape, dt)) if wants(1) => {
                    let scaled = binary(Operand::T(&g), Operand::S(Scalar::Float(s)), BinaryOp::Mul)?;
                    Some(super::arith_grad::reduce_grad(&scaled, shape, *dt)?)
                }
                _ => None,
            };
            Ok(vec![ga, gb])
        })
    });
}

/// `a + s * b` (float32/float64, broadcast) with one rounding: the
/// backend's fused multiply-add kernel.
fn fused_add_alpha(a: &Tensor, b: &Tensor, s: f64) -> Result<Tensor> {
    let device = common_device(&[a, b])?;
    let shape = ferrotorch_core::layout::broadcast_shapes(a.shape(), b.shape())?;
    let out = Tensor::empty(&shape, a.dtype(), device)?;
    let (a, b) = (super::on_device(a, device)?, super::on_device(b, device)?);
    let (la, lb) = (broadcast_layout(&a, &shape)?, broadcast_layout(&b, &shape)?);
    let (ra, rb) = (a.operand_as(&la)?, b.operand_as(&lb)?);
    out.backend()?.add_scaled(a.dtype(), out.operand_mut()?.dst(), ra.src(), rb.src(), s)?;
    Ok(out)
}

/// In-place [`add_scaled`]: `a += alpha * b` / `a -= alpha * b`.
pub fn add_scaled_(a: &Tensor, b: Operand, alpha: Scalar, op: BinaryOp) -> Result<()> {
    check_operands(op, &Operand::T(a), &b)?;
    let (compute, _) = op_dtypes(op, &Operand::T(a), &b)?;
    // The in-place forms check alpha against the receiver's dtype.
    check_alpha(a.dtype(), alpha)?;
    if scalar_arg(alpha, compute)?.to_f64() == 1.0 {
        return binary_(a, b, op);
    }
    a.layout().check_no_internal_overlap()?;
    let b_grad = matches!(b, Operand::T(t) if t.requires_grad());
    update_with(a, b_grad, |x| add_scaled(Operand::T(x), b, alpha, op))
}

/// `a <op> b` into a new tensor, recording the autograd node when needed.
pub fn binary(a: Operand, b: Operand, op: BinaryOp) -> Result<Tensor> {
    let out = binary_raw(a, b, op)?;
    if out.dtype().is_differentiable() && !op.is_comparison() {
        super::arith_grad::record_binary(a, b, op, &out);
    }
    Ok(out)
}

fn operand_is_bool(o: &Operand) -> bool {
    match o {
        Operand::T(t) => t.dtype() == DType::Bool,
        Operand::S(s) => matches!(s, Scalar::Bool(_)),
    }
}

/// The operand checks PyTorch makes before it builds the op's iterator, so
/// before any shape or dtype check (a Python number counts as the 0-d tensor
/// PyTorch wraps it in).
pub fn check_operands(op: BinaryOp, a: &Operand, b: &Operand) -> Result<()> {
    let (ab, bb) = (operand_is_bool(a), operand_is_bool(b));
    match op {
        BinaryOp::Sub if ab && bb => Err(Error::runtime(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
        )),
        BinaryOp::Sub if ab || bb => Err(Error::runtime(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        )),
        // PyTorch's pow.Tensor_Scalar meta check (NumPy's rule), bool
        // tensors included; it runs before the iterator is built.
        BinaryOp::Pow
            if matches!(b, Operand::S(Scalar::Int(e)) if *e < 0)
                && matches!(a, Operand::T(t) if !t.dtype().is_floating_point()) =>
        {
            Err(Error::runtime("Integers to negative integer powers are not allowed."))
        }
        BinaryOp::Heaviside => match (a, b) {
            (Operand::T(x), Operand::T(y)) if x.dtype() != y.dtype() => {
                Err(Error::runtime("heaviside is not yet implemented for tensors with different dtypes."))
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// PyTorch's `alpha_check` for `add`/`sub(..., alpha=)`: `result` is the
/// dtype the op produces (the output's dtype for the in-place forms).
pub fn check_alpha(result: DType, alpha: Scalar) -> Result<()> {
    if matches!(alpha, Scalar::Bool(_)) && result != DType::Bool {
        return Err(Error::runtime("Boolean alpha only supported for Boolean results."));
    }
    if matches!(alpha, Scalar::Float(_)) && !result.is_differentiable() {
        return Err(Error::runtime(
            "For integral input tensors, argument alpha must not be a floating point number.",
        ));
    }
    Ok(())
}

/// The dtype `a <op> b` returns (PyTorch's result type for the op).
pub fn binary_result_dtype(a: Operand, b: Operand, op: BinaryOp) -> Result<DType> {
    Ok(op_dtypes(op, &a, &b)?.1)
}

/// `a <op> b` without autograd.
pub fn binary_raw(a: Operand, b: Operand, op: BinaryOp) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    check_operands(op, &a, &b)?;
    let (compute, out_dtype) = op_dtypes(op, &a, &b)?;
    if let Some(out) = reduced_float_scalar_op(op, &a, &b, compute, out_dtype)? {
        return Ok(out);
    }
    if let (BinaryOp::Pow, Operand::T(x), Operand::S(e)) = (op, &a, &b) {
        return pow_tensor_scalar(x, *e, compute);
    }
    let (ta, tb) = (as_tensor(&a, compute)?, as_tensor(&b, compute)?);
    let device = common_device(&[&ta, &tb])?;
    let shape = broadcast_shapes(ta.shape(), tb.shape())?;
    check_kernel(op, compute)?;
    let out = Tensor::empty(&shape, out_dtype, device)?;
    run_binary(op, &out, &ta, &tb, compute)?;
    Ok(out)
}

/// `a <op> b` computed straight into `out` (the `out=` form), without the
/// temporary and copy of computing out of place: returns `Ok(false)`,
/// having written nothing, when the caller must take that general path
/// (a number operand, autograd, an `out` whose dtype, shape or device
/// differs from the result's, or one that shares memory with an operand),
/// so PyTorch's `out=` checks and conversions stay in one place.
pub fn binary_into(a: &Tensor, b: &Tensor, op: BinaryOp, out: &Tensor) -> Result<bool> {
    let grad = crate::autograd::is_grad_enabled() && (a.requires_grad() || b.requires_grad() || out.requires_grad());
    if grad || op == BinaryOp::Pow {
        return Ok(false);
    }
    let (oa, ob) = (Operand::T(a), Operand::T(b));
    check_operands(op, &oa, &ob)?;
    let (compute, out_dtype) = op_dtypes(op, &oa, &ob)?;
    if out.dtype() != out_dtype || compute != out_dtype || a.device() != out.device() || b.device() != out.device() {
        return Ok(false);
    }
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let shares = |t: &Tensor| std::sync::Arc::ptr_eq(t.storage(), out.storage());
    if shape.as_slice() != out.shape() || shares(a) || shares(b) || out.layout().check_no_internal_overlap().is_err() {
        return Ok(false);
    }
    check_kernel(op, compute)?;
    let (ta, tb) = (a.to_dtype(compute)?, b.to_dtype(compute)?);
    run_binary(op, out, &ta, &tb, compute)?;
    out.bump_version();
    Ok(true)
}

/// The dtype checks of a binary kernel: PyTorch raises them when it
/// dispatches the kernel, so after the iterator's shape checks (a bool
/// tensor exponent has no pow kernel; a Python bool exponent is the
/// `x ** True` shortcut and never gets here).
fn check_kernel(op: BinaryOp, compute: DType) -> Result<()> {
    if op == BinaryOp::Pow && compute == DType::Bool {
        return Err(Error::not_implemented("\"pow\" not implemented for 'Bool'"));
    }
    Ok(())
}

/// PyTorch's `pow(Tensor, Scalar)` (`pow_Tensor_Scalar_out` and
/// `pow_tensor_scalar_kernel`), which differs from the tensor-tensor kernel:
/// exponent 0 (or `False`) fills ones and 1 (or `True`) copies; float32,
/// float64 and bfloat16 (not float16) take `0.5`, `-0.5` and `-1` through the
/// sqrt, rsqrt and reciprocal kernels (`pow(-inf, 0.5)` is NaN there, inf in
/// C's pow; `(-0.0) ** -0.5` is -inf); otherwise the exponent is converted
/// to the kernel's type as any scalar argument ([`scalar_arg`]: an integer
/// exponent out of an int8 tensor's range is an overflow error, a float16
/// one is rounded to float16), float32/float64 keeping it a double.
fn pow_tensor_scalar(base: &Tensor, e: Scalar, compute: DType) -> Result<Tensor> {
    let x = base.to_dtype(compute)?;
    // `Scalar::equal` never matches a bool scalar against a number.
    let (zero, one) = match e {
        Scalar::Bool(v) => (!v, v),
        _ => (e.to_f64() == 0.0, e.to_f64() == 1.0),
    };
    if zero {
        return Tensor::ones(x.shape(), compute, x.device());
    }
    if one {
        return if x.same(base) { x.clone_data() } else { Ok(x) };
    }
    if matches!(compute, DType::Float32 | DType::Float64 | DType::BFloat16) && !matches!(e, Scalar::Bool(_)) {
        let special = match e.to_f64() {
            0.5 => Some(UnaryOp::Sqrt),
            -0.5 => Some(UnaryOp::Rsqrt),
            -1.0 => Some(UnaryOp::Reciprocal),
            _ => None,
        };
        if let Some(u) = special {
            return unary_raw(&x, u);
        }
    }
    let ec = match compute {
        DType::Float32 | DType::Float64 => Scalar::Float(e.to_f64()),
        d => scalar_arg(e, d)?,
    };
    let te = scalar_tensor(ec)?.to_dtype(compute)?;
    let out = Tensor::empty(x.shape(), compute, x.device())?;
    run_binary(BinaryOp::Pow, &out, &x, &te, compute)?;
    Ok(out)
}

/// PyTorch's CPU `mul`/`div` kernels (all rounding modes) on float16/bfloat16
/// take a single-valued second operand at its *original* value converted to
/// float32 (`iter.original_scalar_value<opmath_t>`), not rounded to the
/// reduced dtype first, and compute in float32 before rounding once; so
/// `t_f16 * 1e30` is 0 at a zero element (1e30 would be inf in float16) and
/// `t_f16 / -0.828` divides by the float32 value. A Python number on the
/// left of `*` counts too, as PyTorch's `__rmul__` is `self.mul(other)`.
/// `None` when the op takes the ordinary path.
fn reduced_float_scalar_op(op: BinaryOp, a: &Operand, b: &Operand, compute: DType, out_dtype: DType) -> Result<Option<Tensor>> {
    if !matches!(compute, DType::Float16 | DType::BFloat16)
        || !matches!(op, BinaryOp::Mul | BinaryOp::Div | BinaryOp::DivTrunc | BinaryOp::DivFloor)
    {
        return Ok(None);
    }
    let (x, s) = match (a, b) {
        (_, Operand::S(_)) => (a, b),
        (Operand::S(_), Operand::T(_)) if op == BinaryOp::Mul => (b, a),
        // The iterator's cast of a tensor of another dtype is a contiguous
        // copy, so only a one-element tensor stays PyTorch's "scalar"
        // operand (an expanded stride-0 one is cast to float16 first).
        (_, Operand::T(t)) if t.numel() == 1 && t.dtype() != compute => (a, b),
        _ => return Ok(None),
    };
    let (tx, ts) = (as_tensor(x, DType::Float32)?, as_tensor(s, DType::Float32)?);
    let device = common_device(&[&tx, &ts])?;
    let shape = broadcast_shapes(tx.shape(), ts.shape())?;
    let wide = Tensor::empty(&shape, DType::Float32, device)?;
    run_binary(op, &wide, &tx, &ts, DType::Float32)?;
    Ok(Some(wide.to_dtype(out_dtype)?))
}

/// `a <op>= b` in place; the result must be castable to `a`'s dtype and shape.
/// When autograd records, `a` takes the new node as its history.
pub fn binary_(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    a.layout().check_no_internal_overlap()?;
    let tb = if let Operand::T(x) = b { Some(x) } else { None };
    // A view of a base that requires grad goes through the checks even when
    // the view itself does not (made under no_grad: PyTorch refuses that).
    let recording = crate::autograd::is_grad_enabled()
        && (a.requires_grad() || tb.is_some_and(|x| x.requires_grad()) || a.base().is_some_and(|b| b.requires_grad()));
    if recording {
        check_operands(op, &Operand::T(a), &b)?;
        check_inplace_result(a, &b, op)?;
        return binary_recorded(a, b, op);
    }
    binary_raw_(a, b, op)
}

/// In-place op under autograd: the out-of-place rule on a copy of `a`'s old
/// value, then the generic history rebase (`CopySlices` for views).
fn binary_recorded(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    crate::autograd::apply_inplace(a, crate::autograd::OldValue::Copy, |snap| {
        let r = binary_for_inplace(snap, b, op, a.dtype())?;
        check_write_back(a, &r)?;
        Ok(r)
    })
}

/// The checks PyTorch's iterator makes for an in-place op, in its order and
/// before any kernel runs (so before "not implemented for" dtype errors):
/// the operands broadcast, the broadcast shape is the output's, and the
/// result type casts to the output's dtype.
fn check_inplace_result(a: &Tensor, b: &Operand, op: BinaryOp) -> Result<()> {
    if let Operand::T(tb) = b {
        let shape = broadcast_shapes(a.shape(), tb.shape())?;
        if shape.as_slice() != a.shape() {
            return Err(Error::runtime(format!(
                "output with shape {} doesn't match the broadcast shape {}",
                fmt_shape(a.shape()),
                fmt_shape(&shape)
            )));
        }
    }
    let (_, out_dtype) = op_dtypes(op, &Operand::T(a), b)?;
    if !DType::can_cast(out_dtype, a.dtype()) {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            pretty(out_dtype),
            pretty(a.dtype())
        )));
    }
    Ok(())
}

/// The out-of-place result of `snap <op> b` for an in-place update of a
/// tensor of dtype `target` under autograd. A comparison has no derivative,
/// yet PyTorch's `x.eq_(y)` keeps `x` requiring grad with a node (`EqBackward`)
/// that sends zeros to both inputs; the bool result is cast to `target` and
/// given that node so the rebased history carries zeros, not the old
/// gradient path.
pub fn binary_for_inplace(snap: &Tensor, b: Operand, op: BinaryOp, target: DType) -> Result<Tensor> {
    // The written tensor is the result PyTorch's backward sees (hypot_'s
    // `grad * other / result` divides by the float16 inf of an overflowing
    // `f16.hypot_(f32)`), so a result of another float dtype is cast to
    // the target before its node is recorded.
    let out_dt = op_dtypes(op, &Operand::T(snap), &b)?.1;
    if !op.is_comparison() && out_dt != target && target.is_floating_point() && out_dt.is_floating_point() {
        let r = binary_raw(Operand::T(snap), b, op)?;
        let r = {
            let _no_grad = crate::autograd::GradModeGuard::new(false);
            r.to_dtype(target)?
        };
        super::arith_grad::record_binary(Operand::T(snap), b, op, &r);
        return Ok(r);
    }
    let r = binary(Operand::T(snap), b, op)?;
    // Only the six comparisons have PyTorch derivative entries (zeros); the
    // in-place logical ops record nothing there, so the old history stays.
    let is_compare = matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge);
    if !is_compare || !target.is_floating_point() {
        return Ok(r);
    }
    let r = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        r.to_dtype(target)?
    };
    let tb = if let Operand::T(x) = b { Some(x) } else { None };
    let name: &'static str = match (op, tb.is_some()) {
        (BinaryOp::Eq, true) => "EqBackward1",
        (BinaryOp::Eq, false) => "EqBackward0",
        (BinaryOp::Ne, true) => "NeBackward1",
        (BinaryOp::Ne, false) => "NeBackward0",
        (BinaryOp::Lt, true) => "LtBackward1",
        (BinaryOp::Lt, false) => "LtBackward0",
        (BinaryOp::Le, true) => "LeBackward1",
        (BinaryOp::Le, false) => "LeBackward0",
        (BinaryOp::Gt, true) => "GtBackward1",
        (BinaryOp::Gt, false) => "GtBackward0",
        (BinaryOp::Ge, true) => "GeBackward1",
        _ => "GeBackward0",
    };
    let metas: Vec<(Vec<usize>, DType, crate::Device)> =
        std::iter::once(snap).chain(tb).map(|t| (t.shape().to_vec(), t.dtype(), t.device())).collect();
    // One edge per tensor input: a Python-number `other` has none.
    let inputs: Vec<Option<&Tensor>> = std::iter::once(snap).chain(tb).map(Some).collect();
    crate::autograd::record(name, &inputs, &[&r], move || {
        crate::autograd::rule(move |_node, _grads| {
            metas
                .iter()
                .map(|(shape, dt, dev)| Tensor::zeros(shape, *dt, *dev).map(Some))
                .collect()
        })
    });
    Ok(r)
}

/// `out = a <op> b` on `out`'s backend, the inputs (already in `compute`)
/// broadcast to `out`'s shape.
fn run_binary(op: BinaryOp, out: &Tensor, a: &Tensor, b: &Tensor, compute: DType) -> Result<()> {
    let (device, shape) = (out.device(), out.shape());
    if a.device() == device && b.device() == device && a.shape() == shape && b.shape() == shape {
        // The common case (same device, no broadcast): the operands as they are.
        let (ra, rb) = (a.operand()?, b.operand()?);
        return out.backend()?.binary(op, compute, out.operand_mut()?.dst(), ra.src(), rb.src());
    }
    let (a, b) = (super::on_device(a, out.device())?, super::on_device(b, out.device())?);
    let la = broadcast_layout(&a, out.shape())?;
    let lb = broadcast_layout(&b, out.shape())?;
    let (ra, rb) = (a.operand_as(&la)?, b.operand_as(&lb)?);
    out.backend()?.binary(op, compute, out.operand_mut()?.dst(), ra.src(), rb.src())
}

/// `a <op>= b` without autograd.
pub fn binary_raw_(a: &Tensor, b: Operand, op: BinaryOp) -> Result<()> {
    check_operands(op, &Operand::T(a), &b)?;
    if let Operand::T(t) = &b {
        common_device(&[a, t])?;
    }
    check_inplace_result(a, &b, op)?;
    let (compute, out_dtype) = op_dtypes(op, &Operand::T(a), &b)?;
    if let Some(r) = reduced_float_scalar_op(op, &Operand::T(a), &b, compute, out_dtype)? {
        return a.copy_raw_(&r);
    }
    if let (BinaryOp::Pow, Operand::S(e)) = (op, &b) {
        return a.copy_raw_(&pow_tensor_scalar(a, *e, compute)?);
    }
    check_kernel(op, compute)?;
    let tb = as_tensor(&b, compute)?;
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
        a.copy_raw_(&tmp)?;
    }
    Ok(())
}




pub use super::arith_grad::unary_for_inplace;

/// `op(x)` into a new tensor, recording the autograd node when needed.
pub fn unary(x: &Tensor, op: UnaryOp) -> Result<Tensor> {
    let op = kernel_args(op, x.dtype())?;
    let out = unary_raw(x, op)?;
    if out.dtype().is_differentiable() {
        super::arith_grad::record_unary(x, op, &out);
    }
    Ok(out)
}

/// A unary op's number arguments as its kernel (and backward kernel) holds
/// them ([`scalar_arg`]): logit's `eps` is converted to the float dtype it
/// computes in, so -4e-17 is -0.0 in float16 (no longer "negative": the
/// input is clamped to [-0, 1]) and -4.5e9 is float16's overflow error.
///
/// The activations' parameters are checked against the type their kernel
/// converts them to (`Scalar::to<T>()` raises on a finite value beyond its
/// range): elu/celu/selu, leaky_relu and softplus take them in the opmath
/// type (float32 for float16/bfloat16, so 1e39 is "float" overflow), celu
/// also its `1 / alpha` (its elu call's input scale), hardtanh in the input's
/// own dtype. Integer inputs are refused by the kernel dispatch before that.
fn kernel_args(op: UnaryOp, x: DType) -> Result<UnaryOp> {
    let fits = |vals: &[f64], d: DType| -> Result<()> {
        if x.is_floating_point() {
            for &v in vals {
                ferrotorch_core::dtype::check_scalar_fits(Scalar::Float(v), d, 2)?;
            }
        }
        Ok(())
    };
    Ok(match op {
        UnaryOp::Logit(eps) => {
            let d = if x.is_floating_point() { x } else { default_dtype() };
            UnaryOp::Logit(scalar_arg(Scalar::Float(eps), d)?.to_f64())
        }
        UnaryOp::LeakyRelu(a) => {
            fits(&[a], opmath(x))?;
            op
        }
        UnaryOp::Elu(a, b, c) => {
            fits(&[a, b, c], opmath(x))?;
            op
        }
        UnaryOp::Celu(a) => {
            fits(&[a, 1.0 / a], opmath(x))?;
            op
        }
        UnaryOp::Softplus(a, b) => {
            fits(&[a, b], opmath(x))?;
            op
        }
        UnaryOp::Hardtanh(lo, hi) => {
            fits(&[lo, hi], x)?;
            op
        }
        UnaryOp::Polygamma(n) if n < 0 => return Err(Error::runtime("polygamma(n, x) does not support negative n.")),
        UnaryOp::Mvlgamma(p) if p < 1 => return Err(Error::runtime("p has to be greater than or equal to 1")),
        op => op,
    })
}

/// `op(x)` without autograd. Integer inputs of float-only ops compute in the
/// default float dtype, as PyTorch does.
pub fn unary_raw(x: &Tensor, op: UnaryOp) -> Result<Tensor> {
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    let op = kernel_args(op, x.dtype())?;
    let xd = x.dtype();
    if xd == DType::Bool {
        match op {
            UnaryOp::Neg => {
                return Err(Error::runtime(
                    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                ))
            }
            UnaryOp::Relu => return Err(Error::runtime("\"clamp_min_scalar_cpu\" not implemented for 'Bool'")),
            UnaryOp::Hardtanh(..) => return Err(Error::runtime("Bool inputs not supported for hardtanh")),
            UnaryOp::Abs | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::RoundDecimals(_) | UnaryOp::Trunc => {
                return Err(ferrotorch_core::dtype::not_impl(op.name(), xd))
            }
            UnaryOp::Sign | UnaryOp::Sgn | UnaryOp::NanToNum(..) => return x.clone_data(),
            UnaryOp::BitwiseNot => return unary_raw(x, UnaryOp::LogicalNot),
            _ => {}
        }
    }
    if let UnaryOp::Hardtanh(lo, _) = op {
        if xd == DType::UInt8 && (lo as i64) < 0 {
            return Err(Error::runtime("cannot do hardtanh on an unsigned type with negative limits"));
        }
    }
    if !xd.is_differentiable() && op.float_only() {
        return Err(ferrotorch_core::dtype::not_impl(op.name(), xd));
    }
    if !xd.is_floating_point() && matches!(op, UnaryOp::RoundDecimals(_)) {
        return Err(ferrotorch_core::dtype::not_impl("round", xd));
    }
    let dtype = if op.is_predicate() || op.keeps_int() || xd.is_differentiable() { xd } else { default_dtype() };
    // `abs` and `angle` of a complex tensor are real.
    let out_dtype = if op.is_predicate() {
        DType::Bool
    } else if matches!(op, UnaryOp::Abs | UnaryOp::Angle) {
        dtype.to_real()
    } else {
        dtype
    };
    let xi = x.to_dtype(dtype)?;
    let out = Tensor::empty(x.shape(), out_dtype, x.device())?;
    out.backend()?.unary(op, dtype, out.operand_mut()?.dst(), xi.operand()?.src())?;
    Ok(out)
}

/// Applies `f` to `a` and writes the result back into `a` (the `op_` forms).
/// Under autograd, `f` runs on a snapshot carrying `a`'s history so saved
/// inputs stay intact, and `a` takes the result's node as its history.
/// `others_require_grad` says whether another input of `f` requires grad.
pub fn update_with(a: &Tensor, others_require_grad: bool, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    update_with_old(a, others_require_grad, crate::autograd::OldValue::Copy, f)
}

/// [`update_with`] for ops whose recorded rule reads the written tensor with
/// its own strides (PyTorch's result-based backward of elu_, celu_, selu_).
pub fn update_with_strided(a: &Tensor, others_require_grad: bool, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    update_with_old(a, others_require_grad, crate::autograd::OldValue::CopyStrided, f)
}

fn update_with_old(
    a: &Tensor,
    others_require_grad: bool,
    old: crate::autograd::OldValue,
    f: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<()> {
    let recording = crate::autograd::is_grad_enabled() && (a.requires_grad() || others_require_grad);
    if !recording {
        let r = f(a)?;
        return write_back(a, &r);
    }
    // The autograd layer snapshots the old value, writes back and rebases
    // the history (through `CopySlices` when `a` is a view).
    crate::autograd::apply_inplace(a, old, |old| {
        let r = f(old)?;
        check_write_back(a, &r)?;
        Ok(r)
    })
}

/// Copies an op's result into the tensor it updates in place, with PyTorch's
/// dtype and shape checks.
fn write_back(a: &Tensor, r: &Tensor) -> Result<()> {
    check_write_back(a, r)?;
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    a.copy_(r)
}

fn check_write_back(a: &Tensor, r: &Tensor) -> Result<()> {
    // PyTorch's iterator checks the output's shape before its dtype.
    if r.shape() != a.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_shape(a.shape()),
            fmt_shape(r.shape())
        )));
    }
    if !DType::can_cast(r.dtype(), a.dtype()) {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            pretty(r.dtype()),
            pretty(a.dtype())
        )));
    }
    Ok(())
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

#[cfg(test)]
mod binary_kernel_tests {
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
