"""Reductions that skip NaN or rank values: ``nansum``, ``nanmean``,
``nanmedian``, ``quantile``/``nanquantile``, plus ``aminmax`` and
``logcumsumexp``.

The ranked ones sort once along the reduced dim (NaN sorts last) and gather the
wanted ranks, PyTorch's own algorithm, so values and gradients agree.
"""

import builtins
import math

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _pretty, _rt, _write_out, return_types

__all__ = ["nansum", "nanmean", "nanmedian", "quantile", "nanquantile", "aminmax", "logcumsumexp"]

return_types.aminmax = _rt("aminmax", ("min", "max"))
return_types.nanmedian = _rt("nanmedian")


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def _zero_nans(input):
    if not input.is_floating_point():
        return input
    return _C._where(input.isnan(), _C.zeros((), dtype=input.dtype, device=input.device), input)


@_args.signature('Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None')
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum of all elements (or along ``dim``), treating NaN as zero."""
    x = _zero_nans(input)
    dims = _dims(dim)
    res = x.sum(dtype=dtype) if not dims else x.sum(dims, keepdim, dtype=dtype)
    return _write_out(res, out)


@_args.signature('Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None')
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements (all of them, or along ``dim``)."""
    if not input.is_floating_point():
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {_pretty(input.dtype)}"
        )
    count = (~input.isnan()).sum() if not _dims(dim) else (~input.isnan()).sum(_dims(dim), keepdim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return _write_out(total / count.to(total.dtype), out)


def _rank_along(input, dim, ignore_nan):
    """``(sorted, sort_indices, count)`` with ``dim`` moved last; ``count`` is the
    number of leading non-NaN entries per row (or the row length)."""
    x = input.movedim(dim, -1)
    s = x.sort(dim=-1)
    vals, idx = s.values, s.indices
    if ignore_nan:
        count = (~x.isnan()).sum(-1, keepdim=True)
    else:
        count = _C.full(list(x.shape[:-1]) + [1], x.shape[-1], dtype=_C.int64, device=x.device)
    return vals, idx, count


@_args.signature('Tensor input, int? dim=None, bool keepdim=False, *, Any out=None')
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median of the non-NaN values.

    Without ``dim`` a 0-d tensor; with ``dim`` a ``(values, indices)`` named tuple.
    A row of only NaN gives NaN.
    """
    if dim is None:
        if input.numel() == 0:
            return _write_out(_C.full((), math.nan, dtype=input.dtype, device=input.device), out)
        vals, _, count = _rank_along(input.reshape(-1), 0, input.is_floating_point())
        pos = ((count - 1).clamp(min=0) // 2)
        return _write_out(vals.gather(-1, pos).reshape(()), out)
    nd = builtins.max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    x = input if input.dim() > 0 else input.reshape(1)
    if x.shape[dim] == 0:
        raise IndexError(
            f"nanmedian(): Expected reduction dim {dim % nd} to have non-zero size."
        )
    vals, idx, count = _rank_along(x, dim, x.is_floating_point())
    pos = (count - 1).clamp(min=0) // 2
    v, i = vals.gather(-1, pos), idx.gather(-1, pos)
    if keepdim and input.dim() > 0:
        v, i = v.movedim(-1, dim), i.movedim(-1, dim)
    else:
        v, i = v.squeeze(-1), i.squeeze(-1)
    return _write_out(return_types.nanmedian(v, i), out)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    name = "quantile"  # PyTorch's messages say quantile() for nanquantile too
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, _C.TensorBase) or q.dim() == 0
    if not isinstance(q, _C.TensorBase):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qt = _C.tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device.type != "meta" and q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qt = q.reshape(-1)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
        )
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        nd = builtins.max(input.dim(), 1)
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
        x, d = (input if input.dim() else input.reshape(1)), dim % nd
    vals, _, count = _rank_along(x, d, ignore_nan)
    last = vals.shape[-1] - 1
    if ignore_nan:
        # an all-NaN row points at its last (NaN) entry
        ranks = qt * (count - 1).to(input.dtype)
        ranks = _C._where(count == 0, _C.full((), float(last), dtype=input.dtype, device=x.device), ranks)
    else:
        # a row holding NaN sorts it last; pointing there makes the result NaN
        has_nan = vals.isnan().any(-1, keepdim=True)
        ranks = _C._where(has_nan, _C.full((), float(last), dtype=input.dtype, device=x.device),
                          qt * float(last))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    lo_i = ranks.floor().to(_C.int64).clamp(0, last)
    hi_i = ranks.ceil().to(_C.int64).clamp(0, last)
    lo, hi = vals.gather(-1, lo_i), vals.gather(-1, hi_i)
    if interpolation == "midpoint":
        res = lo.lerp(hi, _C.full((), 0.5, dtype=input.dtype, device=x.device))
    elif interpolation == "linear":
        res = lo.lerp(hi, ranks - ranks.floor())
    else:
        res = lo
    # res: (..., Q) with the reduced dim gone; PyTorch puts Q first
    res = res.movedim(-1, 0)
    if keepdim:
        if dim is None:
            res = res.reshape([res.shape[0]] + [1] * input.dim())
        elif input.dim() > 0:
            res = res.unsqueeze(d + 1)
    return res.squeeze(0) if scalar_q else res


@_args.signature(
    "Tensor input, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear', Tensor? out=None",
    "Tensor input, float q, int? dim=None, bool keepdim=False, *, str interpolation='linear', Tensor? out=None",
)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles of each row of ``input`` along ``dim`` (of all elements when None).

    ``q`` is a float or a 1-d tensor of the input's dtype; with a tensor the
    quantiles are the first dim of the result. A row holding NaN gives NaN.
    """
    return _write_out(_quantile(input, q, dim, keepdim, interpolation, False), out)


@_args.signature(
    "Tensor input, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear', Tensor? out=None",
    "Tensor input, float q, int? dim=None, bool keepdim=False, *, str interpolation='linear', Tensor? out=None",
)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Like :func:`quantile`, ignoring NaN values (a row of only NaN gives NaN)."""
    return _write_out(_quantile(input, q, dim, keepdim, interpolation, True), out)


@_args.signature('Tensor input, *, int? dim=None, bool keepdim=False, Any out=None')
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """The minimum and maximum of ``input`` (or along ``dim``) as a ``(min, max)`` named tuple."""
    if input.numel() == 0 and (dim is None or input.dim() == 0 or input.shape[dim] == 0):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    if dim is None:
        mn, mx = input.amin(), input.amax()
        if keepdim:
            shape = [1] * input.dim()
            mn, mx = mn.reshape(shape), mx.reshape(shape)
    else:
        mn, mx = input.amin(dim, keepdim), input.amax(dim, keepdim)
    return _write_out(return_types.aminmax(mn, mx), out)


@_args.signature('Tensor input, int dim, *, Tensor? out=None')
def logcumsumexp(input, dim, *, out=None):
    """Log of the cumulative sum of exponentials along ``dim``, computed stably.

    A log-space prefix scan (``log2(n)`` rounds of ``logaddexp`` on shifted copies)
    keeps every prefix accurate whatever the spread of magnitudes.
    """
    nd = builtins.max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_pretty(input.dtype)}'")
    x = input if input.dim() else input.reshape(1)
    n = x.shape[dim]
    step = 1
    while step < n:
        head = x.narrow(dim, 0, step)
        shifted = x.narrow(dim, 0, n - step)
        tail = _logaddexp(x.narrow(dim, step, n - step), shifted)
        x = _C._cat([head, tail], dim)
        step *= 2
    res = x if input.dim() else x.reshape(())
    return _write_out(res, out)


def _logaddexp(a, b):
    # -inf on both sides stays -inf instead of NaN (inf - inf)
    m = a.maximum(b)
    finite_m = _C._where(m.isinf(), _C.zeros((), dtype=m.dtype, device=m.device), m).detach()
    return ((a - finite_m).exp() + (b - finite_m).exp()).log() + finite_m


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (nansum, nanmean, nanmedian, quantile, nanquantile, aminmax, logcumsumexp):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))


_declare_methods()
