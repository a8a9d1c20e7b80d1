"""Small layers: ``Unflatten``, ``Bilinear``, ``ChannelShuffle``, ``Softmax2d``, ``RMSNorm``,
``LocalResponseNorm``."""

import math

from .. import _C
from .modules import Module
from .parameter import Parameter
from . import functional as F
from . import init
from . import _losses as L
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = ["Unflatten", "Bilinear", "ChannelShuffle", "Softmax2d", "RMSNorm", "LocalResponseNorm"]


class Unflatten(Module):
    r"""Expands dimension ``dim`` of the input into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(input):
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                    f"{type(elem).__name__} at pos {idx}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}")

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    r"""``y = x1^T A x2 + b``, weight of shape ``(out_features, in1_features, in2_features)``,
    both weight and bias drawn from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_C.empty(out_features, in1_features, in2_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1)) if self.weight.size(1) > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return L.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class ChannelShuffle(Module):
    r"""Divides the channels into ``groups`` and interleaves them."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return L.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class Softmax2d(Module):
    r"""Softmax over the channels (dim ``-3``) of a ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class RMSNorm(Module):
    r"""Root-mean-square normalisation over the trailing ``normalized_shape`` dims, with a
    learnable per-element scale (ones) when ``elementwise_affine``."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.empty(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            with _no_grad():
                self.weight.fill_(1.0)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    r"""Normalises each element by the mean of squares over ``size`` neighbouring channels:
    ``x / (k + alpha * mean(x^2))^beta``."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _window_sums(x, lo, hi):
    """Sums of ``x`` over channels ``lo[c]..hi[c]`` (inclusive, clipped to the channels; empty
    where ``lo > hi``), for every channel ``c`` of dim 1."""
    from .. import _shape_ops as _s

    n = x.shape[1]
    cs = _s.cat([_C.zeros_like(x.narrow(1, 0, 1)), x.cumsum(1)], 1)
    lo = [min(max(v, 0), n) for v in lo]
    hi = [min(max(v + 1, 0), n) for v in hi]
    hi = [max(h, l) for h, l in zip(hi, lo)]
    return cs.index_select(1, _C.tensor(hi, dtype=_C.int64)) - cs.index_select(1, _C.tensor(lo, dtype=_C.int64))


def _cross_map_windows(size, channels):
    pre_pad = int((size - 1) / 2 + 1)
    lo = [0 if c <= pre_pad else c - pre_pad + 1 for c in range(channels)]
    hi = [c + pre_pad - 1 for c in range(channels)]
    inv = int(size - (size - 1) / 2)
    blo = [c - inv for c in range(channels)]
    bhi = [c + size - 1 - inv for c in range(channels)]
    return lo, hi, blo, bhi


def _cross_map_function():
    from ..autograd.function import Function

    class _CrossMapLRN2d(Function):
        @staticmethod
        def forward(ctx, input, size, alpha, beta, k):
            if input.dim() != 4:
                raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
            n = input.shape[1]
            lo, hi, blo, bhi = _cross_map_windows(size, n)
            sq = input * input
            sums = _window_sums(sq, lo, hi)
            pre_pad = int((size - 1) / 2 + 1)
            if n > pre_pad + 1:
                # PyTorch's sliding sum never subtracts channel 0 once it starts subtracting.
                keep0 = _C.tensor([1.0 if c > pre_pad else 0.0 for c in range(n)], dtype=sq.dtype)
                sums = sums + sq.narrow(1, 0, 1) * keep0.reshape(1, n, 1, 1)
            scale = sums * (alpha / size) + k
            out = scale.pow(-beta) * input
            ctx.save_for_backward(input, out, scale)
            ctx.args = (size, alpha, beta, blo, bhi)
            return out

        @staticmethod
        def backward(ctx, grad_output):
            # PyTorch's hand-written backward (its window is not the forward's mirror image).
            input, out, scale = ctx.saved_tensors
            size, alpha, beta, blo, bhi = ctx.args
            ratio = grad_output * out / scale
            accum = _window_sums(ratio, blo, bhi)
            grad = scale.pow(-beta) * grad_output - (2 * alpha * beta / size) * input * accum
            return grad, None, None, None, None

    return _CrossMapLRN2d


class CrossMapLRN2d(Module):
    r"""Local response normalisation across channels of a 4-D input, as Lua Torch's
    ``SpatialCrossMapLRN`` (PyTorch's legacy windows and gradient)."""

    _fn = None

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if CrossMapLRN2d._fn is None:
            CrossMapLRN2d._fn = _cross_map_function()
        return CrossMapLRN2d._fn.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Container(Module):
    r"""Deprecated: a :class:`Module` whose keyword arguments become submodules."""

    def __init__(self, **kwargs):
        import warnings

        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
