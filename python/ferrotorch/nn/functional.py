"""``ferrotorch.nn.functional``: stateless layers and losses, built from
differentiable tensor ops (so autograd covers them without extra rules)."""

import math

from .. import _C
from .. import _math_ops as _m
from .. import _shape_ops as _s
from ..amp.autocast_mode import _cast_inputs as _autocast

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
softmax = _m.softmax
log_softmax = _m.log_softmax


def relu(input, inplace=False):
    """Rectified linear unit."""
    return input.relu()


def sigmoid(input):
    """Logistic sigmoid."""
    return input.sigmoid()


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (2-D inputs go through ``addmm`` as in PyTorch)."""
    input, weight, bias = _autocast(input, weight, bias)
    if input.dim() == 2 and bias is not None:
        return bias.addmm(input, weight.t())
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


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}). This will likely lead to incorrect results due to broadcasting.",
            stacklevel=2,
        )
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error."""
    return _reduce((input - target).abs(), reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
    n_classes = input.shape[1]
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    valid = target != ignore_index
    safe_t = _s.where(valid, target, _C.zeros_like(target))
    if bool(((safe_t < 0) | (safe_t >= n_classes)).any()):
        bad = safe_t[(safe_t < 0) | (safe_t >= n_classes)][0].item()
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = input.gather(1, safe_t.unsqueeze(1)).squeeze(1)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight[safe_t]
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` against class indices (or probabilities) ``target``."""
    logp = log_softmax(input, 1 if input.dim() > 1 else 0)
    if target.dtype.is_floating_point:
        loss = -(target * logp).sum(1 if input.dim() > 1 else 0)
        return _reduce(loss, reduction)
    if label_smoothing > 0.0:
        n = input.shape[1] if input.dim() > 1 else input.shape[0]
        nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
        smooth = -logp.mean(1 if input.dim() > 1 else 0)
        smooth = _reduce(smooth, reduction)
        return (1 - label_smoothing) * nll + label_smoothing * smooth * (1.0 if n else 0.0)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy on probabilities (log clamped at -100 like PyTorch)."""
    lo = input.log().clamp(min=-100)
    l1 = (1 - input).log().clamp(min=-100)
    loss = -(target * lo + (1 - target) * l1)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy on logits, computed stably."""
    neg_abs = -input.abs()
    base = input.clamp(min=0) - input * target + (1 + neg_abs.exp()).log()
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        base = (1 - target) * input + lw * ((1 + neg_abs.exp()).log() + (-input).clamp(min=0))
    if weight is not None:
        base = base * weight
    return _reduce(base, reduction)


def pad(input, pad, mode="constant", value=None):
    """Pads the last ``len(pad) // 2`` dims (``constant`` mode)."""
    if mode != "constant":
        raise NotImplementedError(f"pad mode '{mode}' is not implemented yet in ferrotorch")
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    shape = list(input.shape)
    n = len(pad) // 2
    out_shape = list(shape)
    for i in range(n):
        d = len(shape) - 1 - i
        out_shape[d] = shape[d] + pad[2 * i] + pad[2 * i + 1]
    out = _C.full(out_shape, 0.0 if value is None else value, dtype=input.dtype)
    idx = [slice(None)] * len(shape)
    for i in range(n):
        d = len(shape) - 1 - i
        idx[d] = slice(pad[2 * i], pad[2 * i] + shape[d])
    out[tuple(idx)] = input
    return out


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _native_conv_ok(x, weight, bias):
    """Whether the native float32/float64 convolution kernel takes these operands."""
    dt = x.dtype
    return (
        dt in (_C.float32, _C.float64)
        and weight.dtype == dt
        and (bias is None or bias.dtype == dt)
        and x.device.type == "cpu"
    )


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (im2col through ``unfold`` + matmul; differentiable)."""
    input, weight, bias = _autocast(input, weight, bias)
    batched = input.dim() == 4
    if not batched:
        input = input.unsqueeze(0)
    if input.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}")
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    n, c, h, w = input.shape
    oc, icg, kh, kw = weight.shape
    if c != icg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {icg * groups} channels, but got {c} channels instead"
        )
    extra_h = extra_w = 0
    if padding == "same":
        ph = (dh * (kh - 1)) // 2
        pw = (dw * (kw - 1)) // 2
        extra_h = dh * (kh - 1) - 2 * ph
        extra_w = dw * (kw - 1) - 2 * pw
    elif padding == "valid":
        ph = pw = 0
    else:
        ph, pw = _pair(padding)
    if _native_conv_ok(input, weight, bias):
        # The Rust kernel (im2col + GEMM, ConvolutionBackward0) pads
        # symmetrically itself; only 'same' with an odd total needs the
        # extra trailing row/column padded here, as PyTorch does.
        x = pad(input, (0, extra_w, 0, extra_h)) if (extra_h or extra_w) else input
        out = _C._conv2d(x, weight, bias, (sh, sw), (ph, pw), (dh, dw), groups)
        return out if batched else out.squeeze(0)
    x = pad(input, (pw, pw + extra_w, ph, ph + extra_h)) if (ph or pw or extra_h or extra_w) else input
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    # windows: (n, c, oh, ow, eh, ew) -> dilated taps (n, c, oh, ow, kh, kw)
    cols = x.unfold(2, eh, sh).unfold(3, ew, sw)
    if dh > 1 or dw > 1:
        cols = cols[..., ::dh, ::dw]
    oh, ow = cols.shape[2], cols.shape[3]
    outs = []
    for g in range(groups):
        cg = cols[:, g * icg:(g + 1) * icg]
        wg = weight[g * (oc // groups):(g + 1) * (oc // groups)]
        # (n, oh, ow, icg*kh*kw) @ (icg*kh*kw, ocg)
        cm = cg.permute(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, icg * kh * kw)
        outs.append(cm.matmul(wg.reshape(wg.shape[0], -1).t()))
    out = outs[0] if groups == 1 else _s.cat(outs, 1)
    out = out.reshape(n, oh, ow, oc).permute(0, 3, 1, 2)
    if bias is not None:
        out = out + bias.reshape(1, oc, 1, 1)
    return out if batched else out.squeeze(0)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling (no indices yet)."""
    if return_indices:
        raise NotImplementedError("max_pool2d(return_indices=True) is not implemented yet in ferrotorch")
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride if stride is not None else kernel_size)
    ph, pw = _pair(padding)
    x = pad(input, (pw, pw, ph, ph), value=float("-inf")) if (ph or pw) else input
    win = x.unfold(-2, kh, sh).unfold(-2, kw, sw)
    return win.amax((-2, -1))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """2-D average pooling."""
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride if stride is not None else kernel_size)
    ph, pw = _pair(padding)
    x = pad(input, (pw, pw, ph, ph)) if (ph or pw) else input
    win = x.unfold(-2, kh, sh).unfold(-2, kw, sw)
    return win.mean((-2, -1)) if divisor_override is None else win.sum((-2, -1)) / divisor_override


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability ``p`` and rescales the rest by ``1/(1-p)``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    mask = (_C.rand(*input.shape, dtype=input.dtype) >= p).to(input.dtype)
    return input * mask / (1.0 - p)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Looks up rows of ``weight``."""
    return weight.index_select(0, input.reshape(-1)).reshape(*input.shape, weight.shape[1])


def one_hot(tensor, num_classes=-1):
    """One-hot encodes an integer tensor (int64 result)."""
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1
    out = _C.zeros(*tensor.shape, num_classes, dtype=_C.int64)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the last ``len(normalized_shape)`` dims."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dims, keepdim=True)
    out = (input - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalisation over all dims but the channel dim (1)."""
    dims = (0,) + tuple(range(2, input.dim()))
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    if training:
        mean = input.mean(dims)
        var = ((input - mean.reshape(shape)) ** 2).mean(dims)
        n = input.numel() // input.shape[1]
        if running_mean is not None:
            with _no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / max(n - 1, 1)))
    else:
        mean, var = running_mean, running_var
    out = (input - mean.reshape(shape)) / (var.reshape(shape) + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


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


class _no_grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
