"""Window functions for spectral analysis: ``hann``, ``hamming``,
``blackman``, ``bartlett`` and ``kaiser``, following PyTorch's formulas and
computing in the requested dtype so the rounding matches.
"""

import math

from . import _C, _args

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]

_CPP = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool"}


def _setup(name, window_length, dtype, device):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype or _C.get_default_dtype()
    if not dtype.is_floating_point:
        n = str(dtype).split(".")[-1]
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP.get(n, n)}, device=cpu, "
            "layout=Strided (default), requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
        )
    return dtype, device


def _finish(w, requires_grad):
    return w.requires_grad_(True) if requires_grad else w


def _trivial(window_length, dtype, device, requires_grad):
    if window_length == 0:
        return _finish(_C.empty(0, dtype=dtype, device=device), requires_grad)
    if window_length == 1:
        return _finish(_C.ones(1, dtype=dtype, device=device), requires_grad)
    return None


@_args.signature(
    'int window_length, bool periodic=True, float alpha=0.54, float beta=0.46, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """Hamming window ``alpha - beta * cos(2 pi n / (N - 1))``; ``periodic=True`` gives
    the first ``window_length`` points of a window one longer (for use with FFTs)."""
    dtype, device = _setup("hamming_window", window_length, dtype, device)
    t = _trivial(window_length, dtype, device, requires_grad)
    if t is not None:
        return t
    n = window_length + 1 if periodic else window_length
    w = _C.arange(n, dtype=dtype, device=device) * (2 * math.pi / (n - 1))
    w = w.cos() * (-beta) + alpha
    return _finish(w[:window_length] if periodic else w, requires_grad)


@_args.signature(
    'int window_length, bool periodic=True, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (see :func:`hamming_window`)."""
    _setup("hann_window", window_length, dtype, device)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


@_args.signature(
    'int window_length, bool periodic=True, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    dtype, device = _setup("blackman_window", window_length, dtype, device)
    t = _trivial(window_length, dtype, device, requires_grad)
    if t is not None:
        return t
    n = window_length + 1 if periodic else window_length
    w = _C.arange(n, dtype=dtype, device=device) * (math.pi / (n - 1))
    w = (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _finish(w[:window_length] if periodic else w, requires_grad)


@_args.signature(
    'int window_length, bool periodic=True, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """Bartlett (triangular) window rising from 0 to 1 at the centre and back."""
    dtype, device = _setup("bartlett_window", window_length, dtype, device)
    t = _trivial(window_length, dtype, device, requires_grad)
    if t is not None:
        return t
    n = window_length + 1 if periodic else window_length
    w = _C.arange(n, dtype=dtype, device=device) * (2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    w = _C._cat([w[:half], 2 - w[half:]], 0)
    return _finish(w[:window_length] if periodic else w, requires_grad)


def _i0(x):
    """Modified Bessel function of order 0 by its power series, summed until the
    terms stop contributing (a loop over terms, never over elements)."""
    q = (x * x) / 4
    term = _C.ones(x.shape, dtype=x.dtype, device=x.device)
    total = term
    bound = float(q.max().item()) if x.numel() and x.device.type != "meta" else 0.0
    k = 1
    while True:
        term = term * q / (k * k)
        total = total + term
        # terms shrink once k^2 > q; stop when the largest one is below double rounding
        if k * k > bound and (x.device.type == "meta" or float(term.max().item()) <= 1e-17 * float(total.max().item())):
            break
        k += 1
    return total


@_args.signature(
    'int window_length, bool periodic=True, float beta=12.0, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """Kaiser window ``I0(beta sqrt(1 - ((n - alpha) / alpha)^2)) / I0(beta)`` with
    ``alpha = (N - 1) / 2``."""
    dtype, device = _setup("kaiser_window", window_length, dtype, device)
    t = _trivial(window_length, dtype, device, requires_grad)
    if t is not None:
        return t
    n = window_length + 1 if periodic else window_length
    alpha = (n - 1) / 2.0
    a = _C.arange(n, dtype=_C.float64, device=device)
    arg = beta * (1 - ((a - alpha) / alpha) ** 2).clamp(min=0).sqrt()
    w = (_i0(arg) / _i0(_C.full((1,), float(beta), dtype=_C.float64, device=device))).to(dtype)
    return _finish(w[:window_length] if periodic else w, requires_grad)
