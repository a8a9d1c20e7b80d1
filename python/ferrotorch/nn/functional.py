"""``ferrotorch.nn.functional``: stateless layers and losses, built from
differentiable tensor ops (so autograd covers them without extra rules)."""

import math
import struct
import warnings

from .. import _C, _args
from .. import _math_ops as _m
from .. import _shape_ops as _s
from ..amp.autocast_mode import _cast_inputs as _autocast
from .._memory_format import _strides_like_channels_last_2d

# Activations implemented in the op layer.
relu6 = _m.relu6
hardtanh = _m.hardtanh
leaky_relu = _m.leaky_relu
elu = _m.elu
selu = _m.selu
celu = _m.celu
gelu = _m.gelu
silu = _m.silu
mish = _m.mish
softplus = _m.softplus
softsign = _m.softsign
hardsigmoid = _m.hardsigmoid
hardswish = _m.hardswish
logsigmoid = _m.logsigmoid


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (argument order as ``torch.nn.functional.softmax``)."""
    return _m.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log-softmax along ``dim``."""
    return _m.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)`` along ``dim``."""
    return _m.softmax(-input, dim, dtype)


def relu(input, inplace=False):
    """Rectified linear unit."""
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place :func:`relu`."""
    return input.relu_()


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return _m.elu(input, alpha, inplace=True)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return _m.celu(input, alpha, inplace=True)


def selu_(input):
    """In-place :func:`selu`."""
    return _m.selu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return _m.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return _m.hardtanh(input, min_val, max_val, inplace=True)


def threshold(input, threshold, value, inplace=False):
    """``input if input > threshold else value``."""
    threshold = _args.number(threshold, "threshold_" if inplace else "threshold", "threshold", 2)
    value = _args.number(value, "threshold_" if inplace else "threshold", "value", 3)
    if input.dtype == _C.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    # the kernel compares and fills with both numbers in its dtype (truncated for integers)
    threshold = _C._scalar_arg(threshold, input.dtype, True)
    value = _C._scalar_arg(value, input.dtype, True)
    x = input.float() if input.dtype in (_C.float16, _C.bfloat16) else input
    # PyTorch's kernel: ``x <= threshold ? value : x``, so NaN passes through
    out = _s.where(x <= threshold, _C.full((), value, dtype=input.dtype, device=input.device), input)
    if inplace:
        with _no_grad():
            input.copy_(out)
        return input
    return out


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def sigmoid(input):
    """Logistic sigmoid."""
    return input.sigmoid()


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


_SHRINK_RANGE = {"torch.float16": ("Half", 65504.0), "torch.bfloat16": ("BFloat16", 3.3895313892515355e38),
                 "torch.float32": ("Float", 3.4028234663852886e38), "torch.float64": ("Double", 1.7976931348623157e308)}


def _check_lambd(lambd, input):
    # PyTorch's softshrink checks lambd against [0, max of the input's dtype] (C++ %g formatting)
    if not input.dtype.is_floating_point:
        from .._random_ops import _not_impl
        raise _not_impl("softshrink_check", input.dtype)
    name, hi = _SHRINK_RANGE.get(str(input.dtype), ("Float", 3.4028234663852886e38))
    if not (0 <= lambd <= hi):
        raise RuntimeError(f"lambda must be in range [0, {hi:g}] for input dtype {name}, but found {float(lambd):g}")


def softshrink(input, lambd=0.5):
    """Shrinks towards zero by ``lambd``; zero inside ``[-lambd, lambd]``."""
    lambd = _args.number(lambd, "softshrink", "lambd", 2)
    _check_lambd(lambd, input)
    if isinstance(lambd, bool):
        lambd = float(lambd)  # a Scalar in the input's (floating) dtype, never bool arithmetic
    # Native (only floating inputs reach here): its backward gives a NaN input PyTorch's
    # per-position gradient. (PyTorch's kernel takes lambd in float32 here, unrounded to
    # a half input's dtype, unlike hardshrink's.)
    return _m._act("softshrink", input, float(lambd))


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else zero."""
    lambd = _args.number(lambd, "hardshrink", "lambd", 2)
    if not input.dtype.is_floating_point:
        from .._random_ops import _not_impl
        raise _not_impl("hardshrink_cpu", input.dtype)
    # lambd in the input's dtype, as PyTorch's kernel compares (its conversion checks the range;
    # a bool is the number 0 or 1 there, like any other Scalar)
    lambd = float(lambd)
    _args.checked_convert(lambd, input.dtype)
    return _m._act("hardshrink", input, _C.full((), lambd, dtype=input.dtype).item())


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves of ``dim``."""
    return _C._glu(input, dim)


def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)``, one weight per channel (dim 1) or shared."""
    if input.dtype != weight.dtype:
        from .._random_ops import _scalar_name
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_scalar_name(input.dtype)} and "
                           f"{_scalar_name(weight.dtype)}")
    if weight.numel() != 1:
        if input.dim() < 2 and input.dim() != 1:
            raise RuntimeError("Not allow zero-dim input tensor.")
        ch = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != ch:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {weight.numel()} "
                f"and channel size = {ch}."
            )
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if not input.dtype.is_floating_point:
        from .._random_ops import _not_impl
        raise _not_impl("prelu_cpu", input.dtype)
    # Native: PyTorch's backward selects (x > 0 ? g : w * g), so an infinite
    # weight leaves the gradient of positive inputs finite.
    return _C._prelu(input, weight)


def _rrelu_training_checks(input, lower, upper):
    """PyTorch's rrelu_with_noise kernel: float32/float64/bfloat16 only, and the bounds taken in
    float (its opmath type for bfloat16), where a finite bound beyond it overflows."""
    if not input.dtype.is_floating_point or input.dtype == _C.float16:
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for '{_m._pretty(input.dtype)}'")
    if input.dtype != _C.float64:
        _args.checked_convert(lower, _C.float32)
        _args.checked_convert(upper, _C.float32)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomised leaky ReLU: slope ~ U(lower, upper) in training, their mean otherwise.

    The out-of-place form requires finite bounds (``torch.rrelu``); the in-place
    one (``torch.rrelu_``) accepts infinite bounds outside training.
    """
    if not inplace:
        for name, v in (("lower", lower), ("upper", upper)):
            if not math.isfinite(float(v)):
                raise RuntimeError(f"rrelu: {name} bound must be finite, got {float(v)}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace=inplace)
    _rrelu_training_checks(input, lower, upper)
    with _no_grad():
        slope = _C.rand(*input.shape, dtype=input.dtype, device=input.device) * (upper - lower) + lower
        # PyTorch draws a slope for x <= 0 (x == 0 takes the random slope's gradient).
        noise = _s.where(input > 0, 1.0, slope).to(input.dtype)
    if inplace:
        # An in-place multiply keeps autograd's view of the op (and its leaf check).
        return input.mul_(noise)
    return input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps)
    return input / denom
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (2-D inputs go through ``addmm`` as in PyTorch)."""
    input, weight, bias = _autocast(input, weight, bias)
    if input.dim() == 2 and bias is not None:
        return bias.addmm(input, weight.t())
    if bias is not None and input.dim() > 2 and input.is_contiguous():
        # PyTorch flattens contiguous inputs into one addmm (bias added before rounding)
        shape = tuple(input.shape[:-1]) + (weight.shape[0],)
        return bias.addmm(input.reshape(-1, input.shape[-1]), weight.t()).view(shape)
    out = input.matmul(weight.t())
    if bias is not None:
        out = out + bias
    return out


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduction(size_average, reduce, reduction):
    """The reduction string, from the legacy ``size_average``/``reduce`` flags when given
    (with PyTorch's warning); an unknown string raises ``ValueError`` up front, as
    ``_Reduction.get_enum`` does."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                      stacklevel=3)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _warn_target_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted_pointwise(err, weight, input, reduction):
    """PyTorch's manual path for ``mse_loss``/``l1_loss`` with ``weight``."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    err = err * weight
    if reduction == "none":
        return err
    if reduction == "sum":
        return err.sum()
    return err.sum() / weight.sum()


def _check_float_loss(name, input, target):
    # PyTorch's pointwise loss kernels exist for floating dtypes only.
    dt = _C.promote_types(input.dtype, target.dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_m._pretty(dt)}'")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    _warn_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_float_loss("mse_cpu", input, target)
    if weight is not None:
        d = input - target
        return _weighted_pointwise(d * d, weight, input, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    input, target = _s.broadcast_tensors(input, target) if tuple(input.shape) != tuple(target.shape) else (input, target)
    return _C._mse_loss(input, target, {"none": 0, "mean": 1, "sum": 2}[reduction])


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error."""
    _warn_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    # Broadcast first, as PyTorch does: a 0-d float32 target then promotes a
    # bfloat16 input like any dimensioned tensor (float32 result).
    input, target = _s.broadcast_tensors(input, target) if tuple(input.shape) != tuple(target.shape) else (input, target)
    d = (input - target).abs()
    if weight is not None:
        return _weighted_pointwise(d, weight, input, reduction)
    return _reduce(d, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` for ``|d| < beta``, else ``|d| - beta / 2`` (``l1_loss`` at ``beta == 0``)."""
    _warn_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _s.broadcast_tensors(input, target) if tuple(input.shape) != tuple(target.shape) else (input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    _check_float_loss("smooth_l1_cpu", input, target)
    d = input - target
    z = d.abs()
    # where picks the branch, so the gradient is d / beta inside and sign(d) outside, as PyTorch's.
    return _reduce(_s.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` for ``|d| < delta``, else ``delta (|d| - delta / 2)``."""
    _warn_target_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_float_loss("huber_cpu", input, target)
    d = input - target
    z = d.abs()
    loss = _s.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta))
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce((-target * input).exp().log1p(), reduction)


_XLOGY_SELF = None


def _xlogy_self(t):
    """``xlogy(t, t)`` (0 where t == 0) with PyTorch's xlogy derivatives for both of its
    operands: ``xlogy(g, t)`` masked where t == 0, plus ``g * t / t``. A zero incoming
    gradient stays 0 for a negative t (xlogy(0, y) is 0), where ``g * (log t + 1)`` is NaN."""
    global _XLOGY_SELF
    if _XLOGY_SELF is None:
        from ..autograd import Function

        class XlogyBackward0(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return _s.where(x == 0, _C.zeros((), dtype=x.dtype), x * x.log())

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                zero = _C.zeros((), dtype=g.dtype)
                xlogy_g = _s.where((g == 0) & ~x.isnan(), zero, g * x.log())
                return _s.where(x == 0, zero, xlogy_g) + g * x / x

        XlogyBackward0._backward_name = "XlogyBackward0"
        _XLOGY_SELF = XlogyBackward0
    return _XLOGY_SELF.apply(t)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence of log-probabilities ``input`` from ``target``
    (``xlogy(t, t) - t * input``, or ``exp(t) (t - input)`` with ``log_target``)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        if reduction != "batchmean":
            _reduction(None, None, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    if reduction == "batchmean":
        loss = loss.sum()
        return loss / input.shape[0] if input.dim() != 0 else loss
    return _reduce(loss, reduction)


def _shape_list(t):
    return "[" + ", ".join(str(d) for d in t.shape) + "]"


def _class_view(w, input, class_dim):
    """A per-class weight shaped to broadcast along ``class_dim`` of ``input``."""
    if input.dim() <= 1:
        return w
    shape = [1] * input.dim()
    shape[class_dim] = w.shape[0]
    return w.reshape(shape)


def _check_class_weight(weight, n_classes, input, prefix=""):
    if weight is None:
        return
    if weight.dim() != 1 or weight.numel() != n_classes:
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes but got "
            f"weight tensor of shape: {_shape_list(weight)}")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_m._pretty(input.dtype)} but found {_m._pretty(weight.dtype)}")


def _check_nll_args(input, target, weight):
    """PyTorch's ``nll_loss_nd`` checks, in its order; returns the target reshaped so that
    ``target.unsqueeze(class_dim)`` indexes ``input`` (1-D input: a 0-d target)."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and input.shape[0] != (target.shape[0] if target.dim() else 0):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.dim() else 0}).")
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.dim() == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    elif input.dim() == 4:
        if target.dim() != 3:
            raise RuntimeError(
                f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {target.dim()}")
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(
                f"input and target batch or spatial sizes don't match: target {_shape_list(target)}, "
                f"input {_shape_list(input)}")
    elif tuple(target.shape[1:]) != tuple(input.shape[2:]):
        want = [input.shape[0]] + list(input.shape[2:])
        raise RuntimeError(f"Expected target size [{', '.join(map(str, want))}], got {_shape_list(target)}")
    if target.dtype not in (_C.int64, _C.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_m._pretty(target.dtype)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{_m._pretty(input.dtype)}'")
    _check_class_weight(weight, input.shape[1 if input.dim() > 1 else 0], input)
    if weight is not None and weight.requires_grad and _C.is_grad_enabled():
        # PyTorch's nll_loss kernels have no derivative for the class weights.
        fn = "nll_loss2d_forward" if input.dim() == 4 else "nll_loss_forward"
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")
    return target.reshape(()) if input.dim() == 1 else target


def _nll(input, target, weight, ignore_index, reduction):
    """``nll_loss`` of checked arguments: ``-input[target] * weight[target]`` along the
    class dim, 0 where ``target == ignore_index``; ``mean`` divides by the summed weights."""
    cd = 1 if input.dim() > 1 else 0
    n_classes = input.shape[cd]
    target = target.to(_C.int64)
    valid = target != ignore_index
    safe_t = _s.where(valid, target, _C.zeros_like(target))
    bad = (safe_t < 0) | (safe_t >= n_classes)
    # a meta target has no values to check (PyTorch's meta kernel skips it too)
    if safe_t.device.type != "meta" and bool(bad.any()):
        raise IndexError(f"Target {safe_t[bad].reshape(-1)[0].item()} is out of bounds.")
    picked = input.gather(cd, safe_t.unsqueeze(cd)).squeeze(cd)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight[safe_t]
    # where, not `-picked * w`: an ignored target gives 0, not -0, as PyTorch's kernel.
    loss = _s.where(valid, -picked * w, _C.zeros((), dtype=input.dtype))
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def _unbatched_with_1d_target(input, target):
    return input.dim() == 1 and target.dim() == 1


def _refuse_backward(loss, input, target):
    """PyTorch's nll_loss forward accepts a 1-d input with a one-element 1-d
    target, but its backward refuses the pair ("size mismatch"); the loss
    keeps its value and its backward fails the same way."""
    if not (_unbatched_with_1d_target(input, target) and loss.requires_grad):
        return loss
    from ..autograd import Function

    class _SizeMismatchInBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError(f"size mismatch (got input: {_shape_list(input)}, target: {_shape_list(target)})")

    return _SizeMismatchInBackward.apply(loss)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    (class dim 1, or 0 for unbatched input; any number of spatial dims)."""
    reduction = _reduction(size_average, reduce, reduction)
    checked = _check_nll_args(input, target, weight)
    return _refuse_backward(_nll(input, checked, weight, ignore_index, reduction), input, target)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` against class indices or, when ``target`` has
    ``input``'s shape, class probabilities (PyTorch's ``cross_entropy_loss``)."""
    reduction = _reduction(size_average, reduce, reduction)
    cd = 1 if input.dim() > 1 else 0
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {_m._pretty(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        n_classes = input.shape[cd]
        _check_class_weight(weight, n_classes, input, "cross_entropy: ")
        logp = log_softmax(input, cd)
        if label_smoothing > 0.0:
            if label_smoothing > 1.0:
                raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * _class_view(weight, input, cd)
        if reduction == "none":
            return -prod.sum(cd)
        if reduction == "sum":
            return -prod.sum()
        if input.numel() == 0:
            return -prod.sum() * float("nan")
        return -prod.sum() / (input.numel() // n_classes)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        if _unbatched_with_1d_target(input, target):
            # PyTorch's smoothing term is 0-d here and the nll term [1]: it cannot add them in place.
            _check_nll_args(input, target, weight)
            raise RuntimeError("output with shape [] doesn't match the broadcast shape [1]")
        target = _check_nll_args(input, target, weight)
        logp = log_softmax(input, cd)
        nll = _nll(logp, target, weight, ignore_index, reduction)
        n_classes = input.shape[cd]
        wl = logp if weight is None else logp * _class_view(weight, input, cd)
        ignored = target == ignore_index
        smooth = _s.where(ignored, _C.zeros((), dtype=logp.dtype), -wl.sum(cd))
        if reduction == "mean":
            kept = target[~ignored].to(_C.int64)
            denom = (~ignored).sum() if weight is None else weight[kept].sum()
            smooth = smooth.sum() / denom
        else:
            smooth = _reduce(smooth, reduction)
        return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)
    checked = _check_nll_args(input, target, weight)
    return _refuse_backward(_nll(log_softmax(input, cd), checked, weight, ignore_index, reduction), input, target)


def _check_loss_dtypes(input, target):
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_m._pretty(target.dtype)} but expected {_m._pretty(input.dtype)}")


def _check_unit_interval(input, target):
    """PyTorch's per-element check of ``binary_cross_entropy`` (NaN fails it too): the
    first offending element decides which message."""
    with _no_grad():
        bad_in = ~((input >= 0) & (input <= 1))
        bad_t = ~((target >= 0) & (target <= 1))
        either = (bad_in | bad_t).reshape(-1)
        if bool(either.any()):
            first = int(either.to(_C.int64).argmax().item())
            which = "input" if bool(bad_in.reshape(-1)[first]) else "target"
            raise RuntimeError(f"all elements of {which} should be between 0 and 1")


_bce_function = None


def _bce_elementwise(input, target):
    """Elementwise binary cross entropy (logs clamped at -100) with PyTorch's
    derivatives: ``(x - y) / max(x (1 - x), 1e-12)`` for the input (finite at 0 and 1)
    and ``-logit(x)`` for the target."""
    global _bce_function
    if _bce_function is None:
        from ..autograd import Function

        class BinaryCrossEntropyBackward(Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return -(y * x.log().clamp(min=-100) + (1 - y) * (1 - x).log().clamp(min=-100))

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                gx = gy = None
                if ctx.needs_input_grad[0]:
                    gx = g * (x - y) / ((1 - x) * x).clamp(min=1e-12)
                if ctx.needs_input_grad[1]:
                    gy = -g * _m.logit(x)
                return gx, gy

        _bce_function = BinaryCrossEntropyBackward
    return _bce_function.apply(input, target)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy on probabilities in [0, 1] (log clamped at -100 like PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is deprecated. "
            "Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(*_s.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    _check_loss_dtypes(input, target)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(f"The size of tensor a ({weight.shape[-1]}) must match the size of tensor b "
                           f"({input.shape[-1]}) at non-singleton dimension {weight.dim() - 1}")
    _check_unit_interval(input, target)
    loss = _bce_elementwise(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy on logits: ``(1 - y) x - w_pos log(sigmoid(x))`` with
    ``w_pos = 1 + (pos_weight - 1) y``, PyTorch's formula (its gradient is
    ``sigmoid(x) - y`` everywhere, 0 included)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    one_minus = 1 - target
    if not one_minus.dtype.is_floating_point:
        # PyTorch computes `(1 - target).mul_(input)` in place.
        rt = _C.promote_types(one_minus.dtype, input.dtype)
        raise RuntimeError(
            f"result type {_m._pretty(rt)} can't be cast to the desired output type {_m._pretty(one_minus.dtype)}")
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        shape = tuple(_s.broadcast_shapes(tuple(log_sig.shape), tuple(log_weight.shape)))
        if shape != tuple(log_sig.shape):
            raise RuntimeError(f"output with shape {_shape_list(log_sig)} doesn't match the broadcast shape "
                               f"[{', '.join(map(str, shape))}]")
        log_sig = (log_sig * log_weight).to(log_sig.dtype)
    loss = (one_minus * input).to(one_minus.dtype) - log_sig
    loss = loss.to(one_minus.dtype)
    if weight is not None:
        loss = (loss * weight).to(loss.dtype)
    return _reduce(loss, reduction)


# -- padding -----------------------------------------------------------------------------------


def _constant_pad(input, pad, value):
    # Negative pads crop (as narrow), positive ones grow into a filled tensor.
    x = input
    nd = x.dim()
    grow = False
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[d]
        if size + min(lo, 0) + min(hi, 0) < 0 or size + lo + hi < 0:
            raise RuntimeError(
                f"The input size {size}, plus negative padding {lo} and {hi} resulted in a negative output size, "
                f"which is invalid. Check dimension {d} of your input."
            )
        if lo < 0 or hi < 0:
            start = -lo if lo < 0 else 0
            x = x.narrow(d, start, size - start - (-hi if hi < 0 else 0))
        grow = grow or lo > 0 or hi > 0
    if not grow:
        return x.clone()
    out_shape = list(x.shape)
    idx = [slice(None)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = max(pad[2 * i], 0), max(pad[2 * i + 1], 0)
        idx[d] = slice(lo, lo + out_shape[d])
        out_shape[d] += lo + hi
    out = _C.full(out_shape, value, dtype=input.dtype, device=input.device)
    out[tuple(idx)] = x
    return out


def _pad_index(size, lo, hi, mode):
    # Source position of every output position along one dim (negative pads crop).
    idx = []
    for i in range(-lo, size + hi):
        if mode == "reflect":
            j = -i if i < 0 else i
            j = 2 * (size - 1) - j if j >= size else j
        elif mode == "replicate":
            j = min(max(i, 0), size - 1)
        else:  # circular: crop first, then wrap around what is left
            kept = size + min(lo, 0) + min(hi, 0)
            j = max(-lo, 0) + (i + min(lo, 0)) % kept
        idx.append(j)
    return idx


def pad(input, pad, mode="constant", value=None):
    r"""Pads ``input``: ``pad = (left, right, top, bottom, front, back)`` from the last dim backwards.

    Args:
        input (Tensor): N-dimensional tensor.
        pad (tuple): m-element tuple, m even and ``m // 2 <= input.dim()``.
        mode: ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
        value: fill value for ``'constant'`` padding. Default: ``0``.
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if n > 3 or input.dim() not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor. Supported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode != "circular":
        # PyTorch's reflection/replication kernels: only a batch dim may be empty.
        inner = input.shape[1:] if input.dim() == n + 2 else input.shape
        if any(v == 0 for v in inner):
            raise RuntimeError(
                f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and other "
                f"non-zero dimensions for input, but got: {list(input.shape)}")
    x = input
    for i in range(n):
        d = x.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[d]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}"
            )
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and size == 0:
            raise RuntimeError(f"Expected tensor with non-zero dimensions to pad, but got: {list(input.shape)}")
        if lo or hi:
            index = _C.tensor(_pad_index(size, lo, hi, mode), dtype=_C.int64, device=input.device)
            x = x.index_select(d, index)
    return x if x is not input else x.clone()


# -- convolution ---------------------------------------------------------------------------------


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        v = tuple(v)
        return v * n if len(v) == 1 else v
    return (v,) * n


def _pair(v):
    return _ntuple(v, 2)


def _conv_padding(padding, stride, dilation, kernel):
    """(left, right) padding per spatial dim, resolving ``'same'``/``'valid'``."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            out = []
            for d, k in zip(dilation, kernel):
                # PyTorch puts the odd leftover on the right/bottom side.
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return out
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return [(p, p) for p in _ntuple(padding, n)]


def _flat_pad(pairs):
    # F.pad order: last dim first.
    out = []
    for lo, hi in reversed(pairs):
        out += [lo, hi]
    return out


def _check_conv_weight_groups(weight, groups):
    # PyTorch's check_shape_forward, in its order: at least `groups` filters, then divisible
    if weight.shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of "
            f"size {list(weight.shape)} instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size {list(weight.shape)} instead"
        )


def _check_conv_channels(input, weight, groups):
    _check_conv_weight_groups(weight, groups)
    c, icg = input.shape[1], weight.shape[1]
    if c != icg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {icg * groups} channels, but got {c} channels instead"
        )


def _conv_empty(input, weight, bias, stride, dilation, pads):
    """PyTorch's ConvBackend::Empty for a batched ``input`` with no batch or no channels, or
    None: the backend is picked before any dtype dispatch (so integer and bool operands
    pass, promoting as ``input * weight``), after the shape checks (the kernel must fit),
    and with no channels the result has none either (its calc_output_size)."""
    n, c = input.shape[0], input.shape[1]
    if n and c:
        return None
    size, kern, spatial = [], [], []
    for i, ((lo, hi), s, d) in enumerate(zip(pads, stride, dilation)):
        size.append(input.shape[2 + i] + lo + hi)
        kern.append(d * (weight.shape[2 + i] - 1) + 1)
        spatial.append((size[-1] - kern[-1]) // s + 1)
    if any(a < k for a, k in zip(size, kern)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, size))}). Kernel size: "
            f"({' x '.join(map(str, kern))}). Kernel size can't be greater than actual input size"
        )
    wv = weight.reshape(-1)
    out = input.reshape(-1) * wv if c == 0 else input * wv[0]
    if bias is not None:
        out.add_(bias[0])
    return out.reshape([n, weight.shape[0] if c else 0] + spatial)


# dtypes the native convolution (_C._convolution, one ConvolutionBackward0 node) computes;
# float16/bfloat16 are computed in float32 and rounded once. Other dtypes (integers) take
# the composition in _conv_unfold / _conv_transpose_composed.
_NATIVE_CONV_DTYPES = (_C.float32, _C.float64, _C.float16, _C.bfloat16)


def _conv_param(v, nd, name):
    """A stride/padding/dilation/output_padding argument as ``nd`` ints, checked as PyTorch does."""
    vals = [int(x) for x in v] if isinstance(v, (list, tuple)) else [int(v)]
    if len(vals) == 1:
        vals = vals * nd
    if len(vals) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match the convolution "
            f"dimensions, but got {name}={vals}"
        )
    return vals


def _check_conv_window(groups, stride, dilation, pads=()):
    if any(v <= 0 for v in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if any(v < 0 for v in pads):
        raise RuntimeError("negative padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _conv_batched(input, nd, name):
    """``(input with a batch dim, whether it had one)``, or PyTorch's error for a wrong rank."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: "
            f"{list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    return (input if batched else input.unsqueeze(0)), batched


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """F.conv1d/2d/3d: argument normalisation (unbatched input, ``'same'``), then the native op."""
    input, weight, bias = _autocast(input, weight, bias)
    _check_conv_bias_dtype(input, bias)
    input, batched = _conv_batched(input, nd, name)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {list(weight.shape)}, "
            f"but got {input.dim()}-dimensional input of size {list(input.shape)} instead"
        )
    s, d = _conv_param(stride, nd, "stride"), _conv_param(dilation, nd, "dilation")
    if not isinstance(padding, str):
        padding = _conv_param(padding, nd, "padding")
    _check_conv_window(groups, s, d, () if isinstance(padding, str) else padding)
    k = tuple(weight.shape[2:])
    if 0 in k:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel of size {list(k)}")
    _check_conv_channels(input, weight, groups)
    pads = _conv_padding(padding, s, d, k)
    # The native op answers an empty batch of matching float operands itself (with
    # its ConvolutionBackward0); PyTorch's Empty backend takes the rest before any
    # dtype check.
    native = input.dtype in _NATIVE_CONV_DTYPES and weight.dtype in _NATIVE_CONV_DTYPES
    same = native and input.dtype == weight.dtype and input.shape[1] != 0
    empty = None if same else _conv_empty(input, weight, bias, s, d, pads)
    if empty is not None:
        return empty if batched else empty.squeeze(0)
    if input.dtype in _NATIVE_CONV_DTYPES:
        # The op pads symmetrically itself; only 'same' with an odd total
        # needs the extra trailing element padded here, as PyTorch does.
        extra = [hi - lo for lo, hi in pads]
        x = pad(input, _flat_pad([(0, e) for e in extra])) if any(extra) else input
        out = _C._convolution(x, weight, bias, s, [lo for lo, _ in pads], d, False, [0] * nd, groups)
    else:
        out = _conv_unfold(input, weight, bias, s, pads, d, groups)
    return out if batched else out.squeeze(0)


def _conv_unfold(x, weight, bias, s, pads, d, groups):
    """Convolution of the dtypes the native op lacks (integers): windows by ``unfold``, one matmul per group."""
    nd = len(s)
    if any(lo or hi for lo, hi in pads):
        x = pad(x, _flat_pad(pads))
    k = tuple(weight.shape[2:])
    reach = [di * (ki - 1) + 1 for di, ki in zip(d, k)]
    if any(x.shape[2 + i] < reach[i] for i in range(nd)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(str(v) for v in x.shape[2:])}). Kernel size: "
            f"({' x '.join(str(v) for v in reach)}). Kernel size can't be greater than actual input size"
        )
    # windows: (n, c, *out, *reach) -> dilated taps (n, c, *out, *k)
    cols = x
    for i in range(nd):
        cols = cols.unfold(2 + i, reach[i], s[i])
    if any(di > 1 for di in d):
        cols = cols[(Ellipsis,) + tuple(slice(None, None, di) for di in d)]
    n, oc, icg = x.shape[0], weight.shape[0], weight.shape[1]
    osz = tuple(cols.shape[2:2 + nd])
    rows = n
    for v in osz:
        rows *= v
    perm = (0,) + tuple(range(2, 2 + nd)) + (1,) + tuple(range(2 + nd, 2 + 2 * nd))
    outs = []
    for g in range(groups):
        cg = cols[:, g * icg:(g + 1) * icg]
        wg = weight[g * (oc // groups):(g + 1) * (oc // groups)]
        # (n * prod(out), icg * prod(k)) @ (icg * prod(k), ocg)
        outs.append(cg.permute(*perm).reshape(rows, -1).matmul(wg.reshape(wg.shape[0], -1).t()))
    out = outs[0] if groups == 1 else _s.cat(outs, 1)
    out = out.reshape(n, *osz, oc).permute(0, nd + 1, *range(1, nd + 1))
    if bias is not None:
        out = out + bias.reshape(1, oc, *([1] * nd))
    return out


def _check_conv_bias_dtype(input, bias):
    # conv1d/2d/3d compare the dtypes first of all (before any shape check)
    if bias is not None and bias.dtype != input.dtype:
        from .._random_ops import _CPP_NAMES, _dname
        raise RuntimeError(f"Input type ({_CPP_NAMES.get(_dname(input.dtype))}) and bias type "
                           f"({_CPP_NAMES.get(_dname(bias.dtype))}) should be the same")


_LEGACY_TYPE = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
                "bfloat16": "CPUBFloat16Type"}


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""1-D convolution over an input of shape ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        weight: filters of shape ``(C_out, C_in / groups, kW)``.
        bias: optional ``(C_out,)``.
        stride, dilation: int or 1-tuple.
        padding: int, 1-tuple, ``'valid'`` or ``'same'``.
        groups: split input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""2-D convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Args:
        weight: filters of shape ``(C_out, C_in / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, dilation: int or pair.
        padding: int, pair, ``'valid'`` or ``'same'``.
        groups: split input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""3-D convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Args:
        weight: filters of shape ``(C_out, C_in / groups, kD, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, dilation: int or triple.
        padding: int, triple, ``'valid'`` or ``'same'``.
        groups: split input channels into this many groups.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    input, weight, bias = _autocast(input, weight, bias)
    input, batched = _conv_batched(input, nd, name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if weight.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional weight for {name}, but got weight of size {list(weight.shape)}")
    s, p, op, d = (_conv_param(v, nd, n) for v, n in ((stride, "stride"), (padding, "padding"),
                                                       (output_padding, "output_padding"), (dilation, "dilation")))
    _check_conv_window(groups, s, d, p)
    _check_conv_weight_groups(weight, groups)
    cin = weight.shape[0]
    if input.shape[1] != cin:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{cin} channels, but got {input.shape[1]} channels instead"
        )
    for i in range(nd):
        if op[i] >= s[i] and op[i] >= d[i]:
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got output_padding={list(op)}, "
                f"stride={list(s)}, dilation={list(d)}"
            )
    late_bias = bias is not None and bias.dtype != input.dtype
    if late_bias and 0 not in input.shape[:2] and input.dtype in (_C.float32, _C.bfloat16):
        from .._random_ops import _dname
        name_of = lambda t: _LEGACY_TYPE.get(_dname(t.dtype), str(t.dtype))  # noqa: E731
        raise RuntimeError(f"Input type ({name_of(input)}) and bias type ({name_of(bias)}) should be the same or "
                           "input should be a MKLDNN tensor and bias is a dense tensor")
    b = None if late_bias else bias
    if input.dtype in _NATIVE_CONV_DTYPES and input.dtype == weight.dtype:
        out = _C._convolution(input, weight, b, s, p, d, True, op, groups)
    else:
        out = _conv_transpose_composed(input, weight, b, s, p, op, groups, d)
    if late_bias:
        # PyTorch's other kernels add a bias of another dtype in place, in the input's dtype
        out.add_(bias.reshape([1, -1] + [1] * nd))
    return out if batched else out.squeeze(0)


def _conv_transpose_composed(x, weight, bias, s, p, op, groups, d):
    """Transposed convolution of the operands the native op does not take (integers, mixed
    dtypes, which PyTorch accepts for empty inputs): the convolution of
    the stride-dilated (zero-inserted) input with the flipped, in/out-swapped kernel;
    padding becomes dilation*(k-1) - padding (negative: crop), output_padding extends
    the end."""
    nd = len(s)
    k = tuple(weight.shape[2:])
    cin = weight.shape[0]
    if any(si > 1 for si in s):
        up = [(li - 1) * si + 1 for li, si in zip(x.shape[2:], s)]
        z = _C.zeros(*x.shape[:2], *up, dtype=x.dtype, device=x.device)
        z[(slice(None), slice(None)) + tuple(slice(None, None, si) for si in s)] = x
        x = z
    pads = [(d[i] * (k[i] - 1) - p[i], d[i] * (k[i] - 1) - p[i] + op[i]) for i in range(nd)]
    if any(lo or hi for lo, hi in pads):
        x = pad(x, _flat_pad(pads))
    ocg = weight.shape[1]
    w = weight.reshape(groups, cin // groups, ocg, *k).transpose(1, 2).reshape(groups * ocg, cin // groups, *k)
    w = w.flip(list(range(2, 2 + nd)))
    # through the plain convolution: its Empty-backend and dtype rules apply
    return (conv1d, conv2d, conv3d)[nd - 1](x, w, bias, 1, 0, d, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""1-D transposed convolution ("deconvolution") over ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        weight: filters of shape ``(C_in, C_out / groups, kW)``.
        output_padding: extra size added to one side of the output.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Args:
        weight: filters of shape ``(C_in, C_out / groups, kH, kW)``.
        output_padding: extra size added to one side of each output dim.
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d")


# -- pooling --------------------------------------------------------------------------------------


def _pool_args(nd, kernel_size, stride, padding, dilation):
    """Pooling arguments as int lists (an empty stride means the kernel);
    the native op checks them, with PyTorch's messages and order."""
    empty = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    s = [] if empty else [int(v) for v in _ntuple(stride, nd)]
    return ([int(v) for v in _ntuple(kernel_size, nd)], s, [int(v) for v in _ntuple(padding, nd)],
            [int(v) for v in _ntuple(dilation, nd)])


def _check_max_pool1d(input, k, s, p, d, ceil_mode):
    """The checks of PyTorch's ``max_pool1d`` (its value-only kernel)."""
    for name, v, how in (("kernel_size", k, "an int, list of ints or tuple of ints"),
                         ("stride", s, "None, an int, list of ints, or tuple of ints"),
                         ("padding", p, "an int, list of ints, or tuple of ints"),
                         ("dilation", d, "an int, list of ints or tuple of ints")):
        if len(v) != 1 and not (name == "stride" and not v):
            raise RuntimeError(f"max_pool1d() {name} must be {how} of size 1 but got size {len(v)}")
    (k,), (p,), (d,) = k, p, d
    s = s[0] if s else k
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    size = input.shape[-1]
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def _windows(x, nd, k, s, p, d, outs, fill):
    """Pooling windows ``(..., *outs, *k)`` of the last ``nd`` dims, padded with ``fill``."""
    pads = []
    for i in range(nd):
        need = (outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        # ceil_mode may need extra room on the right beyond the symmetric padding.
        pads.append((p[i], max(p[i], need - p[i] - x.shape[x.dim() - nd + i])))
    if any(lo or hi for lo, hi in pads):
        x = _constant_pad(x, _flat_pad(pads), fill)
    base = x.dim() - nd
    for i in range(nd):
        x = x.unfold(base + i, d[i] * (k[i] - 1) + 1, s[i])
    for i in range(nd):
        if x.shape[base + i] != outs[i]:
            x = x.narrow(base + i, 0, outs[i])
    if any(di > 1 for di in d):
        x = x[(Ellipsis,) + tuple(slice(None, None, di) for di in d)]
    return x


def _pool_kernel_check(input, kernel, ints=True):
    """PyTorch's CPU pooling kernels take floating dtypes, plus the integer ones
    (not bool) when ``ints``; ``ints="int64"`` admits int64 only (avg_pool)."""
    dt = input.dtype
    if dt.is_floating_point or (dt != _C.bool and (ints is True or (ints == "int64" and dt == _C.int64))):
        return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_m._pretty(dt)}'")


def _window_argmax(flat):
    """The element PyTorch's max-pooling kernels pick along the last dim: they
    keep the first maximum but move to every NaN they meet (``val > max ||
    isnan(val)``), so the last NaN of a window wins (and takes the gradient)."""
    with _no_grad():
        a = flat.argmax(-1)
        if not flat.dtype.is_floating_point or flat.shape[-1] == 0:
            return a
        nan = flat.isnan()
        last_nan = (flat.shape[-1] - 1) - nan.flip(-1).to(_C.uint8).argmax(-1)
        return _s.where(nan.any(-1), last_nan, a)


def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d = _pool_args(nd, kernel_size, stride, padding, dilation)
    if nd == 1 and not return_indices:
        # PyTorch's max_pool1d checks on its own; without a gradient to
        # track it runs a value-only kernel, floating dtypes only.
        if input.dim() not in (2, 3) or 0 in input.shape[1:] or (input.dim() == 2 and input.shape[0] == 0):
            raise RuntimeError(
                "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                f"{list(input.shape)}"
            )
        _check_max_pool1d(input, k, s, p, d, ceil_mode)
        if not (input.requires_grad and _C.is_grad_enabled()):
            _pool_kernel_check(input, "max_pool1d_impl", ints=False)
    vals, idx = _C._max_pool(input, nd, k, s, p, d, bool(ceil_mode), bool(return_indices))
    if nd == 3 and input.dim() == 4 and _strides_like_channels_last_2d(tuple(input.shape), input.stride()):
        # PyTorch's max_pool3d kernel switches on the input's suggested memory
        # format after its argument checks; an unbatched (C, D, H, W) input laid
        # out as a channels-last 4-d tensor is neither of its two cases.
        raise RuntimeError("Unsupported memory format. Supports only ChannelsLast3d, Contiguous")
    return (vals, idx) if return_indices else vals


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r"""1-D max pooling over ``(N, C, L)`` or ``(C, L)``.

    With ``return_indices=True`` also returns int64 positions of the maxima within each ``L``-long row.
    """
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r"""2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    With ``return_indices=True`` also returns int64 flat indices ``h * W + w`` into each input plane.
    """
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r"""3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """:func:`max_pool1d` returning ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` returning ``(values, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, _ = _pool_args(nd, kernel_size, stride, padding, 1)
    return _C._avg_pool(input, nd, k, s, p, bool(ceil_mode), bool(count_include_pad),
                        None if divisor_override is None else int(divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    r"""1-D average pooling over ``(N, C, L)`` or ``(C, L)``."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for avg_pool1d)"
        )
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    r"""2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Args:
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: count zero padding in the divisor.
        divisor_override: if given, the divisor for every window.
    """
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    r"""3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_out(input, output_size, nd):
    """``output_size`` as ``nd`` ints, ``None`` keeping the input's size
    (PyTorch's ``_list_with_default``); the native op checks the rest."""
    if not isinstance(output_size, (list, tuple)):
        return [int(output_size)] * nd
    if nd > 1 and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    lead = input.dim() - len(output_size)
    return [int(input.shape[lead + i]) if o is None else int(o) for i, o in enumerate(output_size)]


def _adaptive_avg(input, output_size, nd, name=None):
    return _C._adaptive_avg_pool(input, nd, _adaptive_out(input, output_size, nd))


def adaptive_avg_pool1d(input, output_size):
    r"""1-D adaptive average pooling to ``output_size`` over ``(N, C, L)`` or ``(C, L)``."""
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    r"""2-D adaptive average pooling to ``output_size`` (int, pair, ``None`` keeps a dim)."""
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    r"""3-D adaptive average pooling to ``output_size``."""
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max(input, output_size, return_indices, nd, name=None):
    out, idx = _C._adaptive_max_pool(input, nd, _adaptive_out(input, output_size, nd))
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r"""1-D adaptive max pooling to ``output_size`` (optionally with int64 indices)."""
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r"""2-D adaptive max pooling to ``output_size`` (optionally with int64 flat indices per plane)."""
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    r"""3-D adaptive max pooling to ``output_size``."""
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool1d` returning ``(values, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` returning ``(values, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


# -- dropout ---------------------------------------------------------------------------------------


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, mask, scale, inplace):
    if inplace:
        return input.mul_(mask).mul_(scale)
    return input * mask * scale


def dropout(input, p=0.5, training=True, inplace=False):
    r"""Zeroes elements with probability ``p`` and rescales the rest by ``1/(1-p)``.

    The mask comes from :func:`ferrotorch.rand`, so ``manual_seed`` reproduces it.
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = (_C.rand(*input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    return _apply_mask(input, mask, 1.0 / (1.0 - p), inplace)


def _feature_dropout(input, p, training, inplace):
    # One Bernoulli draw per (batch, channel): the mask broadcasts over the spatial dims.
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    mask = (_C.rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    return _apply_mask(input, mask, 1.0 / (1.0 - p), inplace)


def _unbatched_feature_dropout(input, p, training, inplace, batched):
    if batched:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(input.unsqueeze(0), p, training, inplace)
    return input if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of ``(N, C, L)`` / ``(C, L)`` inputs with probability ``p``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists "
            "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs)."
        )
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of ``(N, C, H, W)`` inputs with probability ``p``."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will result in an "
            "error in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if input.dim() == 3:
        # Kept from PyTorch: a 3-D input is treated as batched 1-D (N, C, L).
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of ``(N, C, D, H, W)`` / ``(C, D, H, W)`` inputs with probability ``p``."""
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will result in an "
            "error in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _unbatched_feature_dropout(input, p, training, inplace, input.dim() == 5)


_SELU_ALPHA_SCALE = 1.7580993408473766  # SELU's negative saturation value -scale*alpha, negated


def _alpha_dropout(input, p, training, inplace, feature):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = (list(input.shape[:2]) + [1] * (input.dim() - 2)) if feature else list(input.shape)
    keep = (_C.rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    # Dropped units take SELU's saturation value; a and b restore zero mean
    # and unit variance.
    alpha = _SELU_ALPHA_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (keep - 1) * (alpha * a) + alpha * a * p
    out = input * (keep * a) + b
    if inplace:
        with _no_grad():
            input.copy_(out)
        return input
    return out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Dropout that keeps SELU's self-normalising mean and variance."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Channel-wise :func:`alpha_dropout`."""
    return _alpha_dropout(input, p, training, inplace, True)


# -- embedding -------------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Looks up rows of ``weight``; rows of ``padding_idx`` get no gradient."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        from ._embedding_bag import _renorm_
        _renorm_(weight, input, max_norm, norm_type)
    idx = input.reshape(-1)
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq and rows.requires_grad and idx.numel():
        # Each row's gradient divided by how often its index occurs in the batch.
        with _no_grad():
            freq = _C.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device).index_add(
                0, idx.to(_C.int64), _C.ones(idx.numel(), dtype=weight.dtype, device=weight.device))
            freq = freq.index_select(0, idx).unsqueeze(1)
        rows.register_hook(lambda g: g / freq)
    if padding_idx is not None and rows.requires_grad:
        # Same values, but the padding row's lookups are cut from the graph
        # (PyTorch's embedding_backward skips them).
        rows = _s.where((idx == padding_idx).unsqueeze(1), rows.detach(), rows)
    return rows.reshape(*input.shape, weight.shape[1])


def one_hot(tensor, num_classes=-1):
    """One-hot encodes an integer tensor (int64 result)."""
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1
    out = _C.zeros(*tensor.shape, num_classes, dtype=_C.int64)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


# -- normalisation -----------------------------------------------------------------------------------


def _reduced(t):
    # float16/bfloat16 inputs: PyTorch's CPU norm kernels compute statistics and
    # the normalisation in float32 and round the result once
    return t.dtype in (_C.float16, _C.bfloat16)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    r"""Normalises over the last ``len(normalized_shape)`` dims, then applies ``weight``/``bias``."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    # One native op (NativeLayerNormBackward0): statistics, output and the
    # three gradients on the tensor's backend; it also makes PyTorch's argument checks.
    return _C._layer_norm(input, list(normalized_shape), weight, bias, float(eps))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    r"""Root-mean-square normalisation over the last ``len(normalized_shape)`` dims."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n:]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(v) for v in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    if _reduced(input):
        # PyTorch's composite: normalised in float32 (default eps float32's), rounded, then weighted
        out = rms_norm(input.float(), normalized_shape, None, 2.0 ** -23 if eps is None else eps).to(input.dtype)
        return out * weight if weight is not None else out
    if eps is None:
        from .._finfo import finfo

        eps = finfo(input.dtype).eps
    dims = tuple(range(-n, 0))
    # PyTorch's composite squares with pow: its backward (`g * (2 * x)`) is
    # NaN where 2x overflows, even for a zero g.
    out = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def _verify_batch_size(size):
    """PyTorch's check that a normalisation has more than one value per channel."""
    prod = size[0]
    for d in size[2:]:
        prod *= d
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    r"""Batch normalisation over all dims but the channel dim (1).

    In training, batch statistics are used and ``running_mean``/``running_var`` (if given) are
    updated in place with ``momentum`` (the variance update is unbiased).
    """
    if training:
        _verify_batch_size(input.shape)
    # One native op (NativeBatchNormBackward0): statistics, running-stat
    # updates, output and the three gradients on the tensor's backend, with ATen's checks.
    return _C._batch_norm(input, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    r"""Normalises each channel of each sample over its spatial dims.

    With ``use_input_stats=False`` the running statistics are used instead; otherwise they are
    updated (if given) with the batch average of the per-instance statistics.
    """
    if use_input_stats:
        spatial = math.prod(input.shape[2:])
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    # ATen's instance_norm: batch_norm over the (1, N*C, ...) view with
    # repeated parameters (NativeBatchNormBackward0 under a view).
    from .._nn_aliases import instance_norm as _aten_instance_norm
    return _aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    r"""Normalises over groups of ``C / num_groups`` channels (and all spatial dims) per sample."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    # PyTorch's order: this check first (num_groups=0 divides by zero here too)
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    # One native op (NativeGroupNormBackward0) making ATen's checks.
    return _C._native_group_norm(input, num_groups, weight, bias, float(eps))[0]


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    r"""Normalises each element by the summed squares of ``size`` neighbouring channels."""
    if input.dim() < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)"
        )
    sq = input * input
    # Sum over a channel window [c - size//2, c + (size-1)//2], zero-padded.
    sq = pad(sq.unsqueeze(1), [0, 0] * (input.dim() - 2) + [size // 2, (size - 1) // 2])
    div = sq.unfold(2, size, 1).mean(-1).squeeze(1)
    return input / (div * alpha + k) ** beta


# -- resampling ---------------------------------------------------------------------------------------


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def _nearest_index(in_size, out_size, scale, exact):
    # Mirrors ATen's nearest_idx: float32 scale, floor, clamp to the last pixel.
    if not exact and out_size == in_size:
        return list(range(out_size))
    if not exact and out_size == 2 * in_size:
        return [i >> 1 for i in range(out_size)]
    sc = _f32(1.0 / scale if scale is not None and scale > 0 else _f32(in_size) / out_size)
    if exact:
        return [min(int(math.floor((i + 0.5) * sc)), in_size - 1) for i in range(out_size)]
    return [min(int(math.floor(_f32(i * sc))), in_size - 1) for i in range(out_size)]


def _linear_weights(in_size, out_size, scale, align_corners):
    # Mirrors ATen's area_pixel_compute_source_index + guard_index_and_lambda.
    if out_size == in_size and not align_corners:
        r = list(range(out_size))
        return r, r, [1.0] * out_size, [0.0] * out_size
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    i0s, i1s, l0s, l1s = [], [], [], []
    for o in range(out_size):
        src = ratio * o if align_corners else max(ratio * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), in_size - 1)
        lam = min(max(src - i0, 0.0), 1.0)
        i0s.append(i0)
        i1s.append(i0 + (1 if i0 < in_size - 1 else 0))
        l0s.append(1.0 - lam)
        l1s.append(lam)
    return i0s, i1s, l0s, l1s


_INTERP_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    r"""Resamples the spatial dims of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``.

    Modes: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D), ``'bilinear'`` (4-D),
    ``'trilinear'`` (5-D), ``'area'``. ``align_corners`` applies to the linear modes only.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            out_sizes = [int(v) for v in size]
        else:
            out_sizes = [int(size)] * nd
        scales = [None] * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            sf = [float(v) for v in scale_factor]
        else:
            sf = [float(scale_factor)] * nd
        out_sizes = [int(math.floor(float(input.shape[i + 2]) * sf[i])) for i in range(nd)]
        scales = [None] * nd if recompute_scale_factor else sf
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not implemented in ferrotorch")
    need = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in need and input.dim() != need[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need[mode]}D input")
    if mode not in ("nearest", "nearest-exact", "area", "linear", "bilinear", "trilinear") or nd not in (1, 2, 3):
        if mode == "bicubic" and nd == 2:
            raise NotImplementedError("interpolate(mode='bicubic') is not implemented in ferrotorch")
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    if mode == "area":
        return _adaptive_avg(input, out_sizes, nd, f"adaptive_avg_pool{nd}d")
    ins = list(input.shape[2:])
    if min(ins + out_sizes) <= 0:
        names = "DHW"[3 - nd:]
        fmt = lambda v: ", ".join(f"{a}: {b}" for a, b in zip(names, v))  # noqa: E731
        sep = " and " if nd == 1 else " "
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({fmt(ins)}){sep}"
                           f"output ({fmt(out_sizes)})")
    x = input
    dev = input.device
    for i in range(nd):
        dim = 2 + i
        n_in, n_out = input.shape[dim], out_sizes[i]
        if mode.startswith("nearest"):
            idx = _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact")
            x = x.index_select(dim, _C.tensor(idx, dtype=_C.int64, device=dev))
            continue
        # (Bi/tri)linear interpolation is separable: blend two gathers per dim.
        i0, i1, l0, l1 = _linear_weights(n_in, n_out, scales[i], align_corners)
        bshape = [n_out] + [1] * (nd - 1 - i)
        w0 = _C.tensor(l0, dtype=x.dtype, device=dev).reshape(bshape)
        w1 = _C.tensor(l1, dtype=x.dtype, device=dev).reshape(bshape)
        x = (x.index_select(dim, _C.tensor(i0, dtype=_C.int64, device=dev)) * w0
             + x.index_select(dim, _C.tensor(i1, dtype=_C.int64, device=dev)) * w1)
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    r"""Deprecated alias of :func:`interpolate`."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    r"""Deprecated: ``interpolate(..., mode='nearest')``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    r"""Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _pixel_shuffle_check(input, r, op, name):
    r = _args.integer(r, op, name, 2)
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           f"dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {r}")
    return r


def pixel_shuffle(input, upscale_factor):
    r"""``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``."""
    r = _pixel_shuffle_check(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    r"""``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``."""
    r = _pixel_shuffle_check(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not "
            f"divisible by {r}" if h % r else
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not "
            f"divisible by {r}"
        )
    if input.numel() == 0:
        # PyTorch returns a copy of an empty input as it is (unlike pixel_shuffle).
        return input.clone()
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v``."""
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query.matmul(key.transpose(-2, -1)) * s
    if is_causal:
        L, S = query.shape[-2], key.shape[-2]
        keep = _C.ones(L, S, dtype=_C.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return attn.matmul(value)


from ..autograd.grad_mode import no_grad as _no_grad  # noqa: E402


# Losses, distances and small layers composed in their own module.
from ._losses import (  # noqa: E402,F401
    cosine_similarity, pairwise_distance, pdist, cosine_embedding_loss, margin_ranking_loss, hinge_embedding_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss, poisson_nll_loss, gaussian_nll_loss, multi_margin_loss,
    multilabel_margin_loss, multilabel_soft_margin_loss, bilinear, channel_shuffle, native_channel_shuffle, ctc_loss,
    linear_cross_entropy, gumbel_softmax,
)
from .._tensor_class import Tensor  # noqa: E402,F401 - PyTorch's nn.functional re-exports it too

# Sliding blocks, the rest of the pooling family, grid sampling and embedding bags, each in its own module.
from ._fold import unfold, fold, conv_tbc  # noqa: E402,F401
from ._pool_extra import (  # noqa: E402,F401
    max_unpool1d, max_unpool2d, max_unpool3d, lp_pool1d, lp_pool2d, lp_pool3d, fractional_max_pool2d,
    fractional_max_pool2d_with_indices, fractional_max_pool3d, fractional_max_pool3d_with_indices,
    max_pool3d_with_indices, adaptive_max_pool3d_with_indices,
)
from ._grid_sample import (  # noqa: E402,F401
    GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES, affine_grid, grid_sample,
)
from ._embedding_bag import embedding_bag  # noqa: E402,F401
