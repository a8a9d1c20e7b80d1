"""Parameter initialisation (``nn.init``), computed in place under ``no_grad``."""

import math

from .. import _C


def _fan_in(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` with values drawn from U(a, b)."""
    r = _C.rand(*tensor.shape, dtype=tensor.dtype, generator=generator)
    prev = _C.is_grad_enabled()
    _C._set_grad_enabled(False)
    try:
        tensor.copy_(r * (b - a) + a)
    finally:
        _C._set_grad_enabled(prev)
    return tensor


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialisation with a uniform distribution (PyTorch's Linear default uses a=sqrt(5))."""
    fan = _fan_in(tensor)
    gain = math.sqrt(2.0 / (1 + a * a))
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)
