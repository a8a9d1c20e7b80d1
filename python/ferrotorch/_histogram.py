"""Binning: ``searchsorted``, ``bucketize``, ``bincount``, ``histc``,
``histogram`` and ``histogramdd``.

``searchsorted`` runs PyTorch's binary search for every value at once
(``log2(m)`` rounds of gathers, no n x m comparison matrix); the histograms
compute each element's bin arithmetically and count with ``index_add``.
"""

import builtins
import math

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _pretty, _rt, _write_out, return_types

__all__ = ["searchsorted", "bucketize", "bincount", "histc", "histogram", "histogramdd"]

return_types.histogram = _rt("histogram", ("hist", "bin_edges"))
return_types.histogramdd = _rt("histogramdd", ("hist", "bin_edges"))


def _count_below(seq, values, right):
    """PyTorch's lower/upper-bound binary search, run for all values at once:
    ``seq`` (..., m) and ``values`` (..., n) share leading dims. The same probes
    as PyTorch's loop give the same answers, also for an unsorted ``seq`` or NaN."""
    m = seq.shape[-1]
    dtype = _C.promote_types(seq.dtype, values.dtype)
    seq, values = seq.to(dtype), values.to(dtype)
    lo = _C.zeros(values.shape, dtype=_C.int64, device=values.device)
    hi = _C.full(values.shape, m, dtype=_C.int64, device=values.device)
    if m == 0:
        return lo
    for _ in range(m.bit_length()):
        active = lo < hi
        mid = lo + (hi - lo) // 2
        probe = seq.gather(-1, mid.clamp(max=m - 1))
        # PyTorch's tests are !(mid >= v) and !(mid > v), which send NaN to the right
        go_right = ~(probe > values) if right else ~(probe >= values)
        lo = _C._where(active & go_right, mid + 1, lo)
        hi = _C._where(active & ~go_right, mid, hi)
    return lo


@_args.signature(
    'Tensor sorted_sequence, Tensor values, *, bool out_int32=False, bool right=False, str? side=None, Tensor? out=None, Tensor? sorter=None',
    'Tensor sorted_sequence, Scalar values, *, bool out_int32=False, bool right=False, str? side=None, Tensor? out=None, Tensor? sorter=None',
)
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, out=None, sorter=None):
    """Indices into the innermost dim of ``sorted_sequence`` where ``values`` would be
    inserted to keep it sorted.

    ``side='left'`` (or ``right=False``) returns the first suitable index, ``'right'``
    the last. ``sorter`` holds indices that sort an unsorted ``sorted_sequence``.
    The result is ``int64`` (``int32`` with ``out_int32=True``) and has ``values``' shape.
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
            )
        right = side == "right"
    scalar = not isinstance(values, _C.TensorBase)
    seq = sorted_sequence
    if scalar:
        values = _C.tensor(values, device=seq.device)
    if seq.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    if seq.dim() > 1 and (values.dim() != seq.dim() or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{list(seq.shape)}and got sorter tensor {list(sorter.shape)}"
            )
        seq = seq.gather(-1, sorter)
    seq, values = seq.detach(), values.detach()
    if seq.dim() == 1:
        flat = values.reshape(1, -1)
        res = _count_below(seq.unsqueeze(0), flat, right).reshape(values.shape)
    else:
        res = _count_below(seq, values, right)
    res = res.to(_C.int32 if out_int32 else _C.int64)
    return _write_out(res, out)


@_args.signature(
    'Tensor input, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor? out=None',
    'Scalar input, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor? out=None',
)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Index of the bucket of each element of ``input`` given 1-d ``boundaries``.

    With ``right=False`` element ``x`` goes to ``i`` with ``boundaries[i-1] < x <= boundaries[i]``;
    with ``right=True`` to ``i`` with ``boundaries[i-1] <= x < boundaries[i]``.
    """
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


@_args.signature('Tensor input, Tensor? weights=None, SymInt minlength=0')
def bincount(input, weights=None, minlength=0):
    """Count of each value in a 1-d tensor of non-negative integers.

    The result has ``max(input) + 1`` entries (at least ``minlength``). With
    ``weights`` each occurrence adds its weight instead of one (``float32`` weights
    give ``float32``, others ``float64``).
    """
    if input.is_floating_point() or input.dtype == _C.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_pretty(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() != 1 or (input.numel() and input.device.type != "meta" and bool((input < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = minlength
    if input.numel():
        size = builtins.max(size, int(input.max().item()) + 1)
    idx = input.to(_C.int64)
    if weights is None:
        return _C.zeros(size, dtype=_C.int64, device=input.device).index_add_(
            0, idx, _C.ones(input.shape[0], dtype=_C.int64, device=input.device))
    dtype = _C.float32 if weights.dtype == _C.float32 else _C.float64
    return _C.zeros(size, dtype=dtype, device=input.device).index_add(0, idx, weights.to(dtype))


def _check_float(name, input, half_ok=True):
    if not input.is_floating_point() or (not half_ok and input.dtype not in (_C.float32, _C.float64)):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_pretty(input.dtype)}'")


@_args.signature('Tensor input, int bins=100, Scalar min=0, Scalar max=0, *, Tensor? out=None')
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``input`` with ``bins`` equal-width bins between ``min`` and ``max``.

    With ``min == max`` the data's minimum and maximum are used (widened by one on
    each side when equal). Elements outside the range are ignored; the result has
    ``input``'s dtype.
    """
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _check_float("histogram_cpu", input)
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        lo, hi = float(input.min().item()), float(input.max().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    hist, _ = _histogramdd(input.reshape(-1, 1), [bins], [(lo, hi)], None, False, local_search=False)
    return _write_out(hist.to(input.dtype), out)


def _edges_for(x, bins, rng, d):
    if isinstance(bins, _C.TensorBase):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, but got {bins.dim()} dimensions in the bins tensor for dimension {d}")
        return bins.to(x.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension {d}")
    if rng is None:
        if x.numel():
            lo, hi = float(x.min().item()), float(x.max().item())
        else:
            lo, hi = 0.0, 0.0
    else:
        lo, hi = float(rng[0]), float(rng[1])
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd(): min should not exceed max, but got min {lo} max {hi} for dimension {d}"
            )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd(): dimension {d}'s range [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _C.linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)


def _histogramdd(points, bins, ranges, weight, density, local_search=True):
    """``points`` is ``(N, D)``; per dim ``bins[d]`` is an int or an edge tensor."""
    n, D = points.shape
    edges = [_edges_for(points[:, d], bins[d], ranges[d] if ranges else None, d) for d in range(D)]
    flat = _C.zeros(n, dtype=_C.int64, device=points.device)
    valid = _C.ones(n, dtype=_C.bool, device=points.device)
    counts = []
    for d in range(D):
        x, e = points[:, d], edges[d]
        nb = e.shape[0] - 1
        counts.append(nb)
        lo, hi = e[0], e[-1]
        valid = valid & (x >= lo) & (x <= hi)
        if isinstance(bins[d], _C.TensorBase):
            pos = searchsorted(e, x, right=True) - 1
        else:
            pos = ((x - lo) * nb / (hi - lo)).floor().nan_to_num(0).clamp(-1, nb).to(_C.int64)
            if local_search:
                # the arithmetic bin can be off by one at an edge through rounding; the edges decide
                pc = pos.clamp(0, nb - 1)
                pos = pc - (x < e[pc]).to(_C.int64) + (x >= e[(pc + 1).clamp(max=nb)]).to(_C.int64)
        # the last edge closes the last bin
        pos = pos.clamp(0, nb - 1)
        flat = flat * nb + pos
    w = weight.reshape(-1).to(points.dtype) if weight is not None else _C.ones(n, dtype=points.dtype, device=points.device)
    total = 1
    for c in counts:
        total *= c
    hist = _C.zeros(total, dtype=points.dtype, device=points.device).index_add(0, flat[valid], w[valid])
    hist = hist.reshape(counts)
    if density:
        widths = _C.ones(counts, dtype=points.dtype, device=points.device)
        for d, e in enumerate(edges):
            shape = [1] * D
            shape[d] = counts[d]
            widths = widths * (e[1:] - e[:-1]).reshape(shape)
        hist = hist / (hist.sum() * widths)
    return hist, edges


@_args.signature(
    'Tensor input, Tensor bins, *, Any range=None, Tensor? weight=None, bool density=False, Any out=None',
    'Tensor input, int bins=100, *, Any range=None, Tensor? weight=None, bool density=False, Any out=None',
)
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """Histogram of the values in ``input`` as a ``(hist, bin_edges)`` named tuple.

    ``bins`` is a number of equal-width bins over ``range`` (default: the data's
    minimum and maximum) or a 1-d tensor of increasing edges. With ``density=True``
    the histogram integrates to one.
    """
    if not isinstance(bins, _C.TensorBase) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    _check_float("histogramdd", input, half_ok=False)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd(): if weight tensor is provided, it should have the same shape as "
                           "the input tensor excluding its innermost dimension")
    hist, edges = _histogramdd(input.reshape(-1, 1), [bins], [range] if range is not None else None, weight, density)
    return _write_out(return_types.histogram(hist, edges[0]), out)


@_args.signature(
    'Tensor input, int[] bins, *, Any range=None, Tensor? weight=None, bool density=False, Any out=None',
    'Tensor input, int bins, *, Any range=None, Tensor? weight=None, bool density=False, Any out=None',
    'Tensor input, Tensor[] bins, *, Any range=None, Tensor? weight=None, bool density=False, Any out=None',
)
def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """Multi-dimensional histogram of the points in the innermost dim of ``input``.

    ``bins`` is an int (for every dim), a sequence of ints or a sequence of edge
    tensors; ``range`` is a flat sequence ``[min0, max0, min1, max1, ...]``.
    Returns ``(hist, bin_edges)`` with one edge tensor per dim.
    """
    _check_float("histogramdd", input, half_ok=False)
    D = input.shape[-1]
    points = input.reshape(-1, D)
    if isinstance(bins, int):
        bins = [bins] * D
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError(
            f"torch.histogramdd(): expected {D} sequences of bin edges for each of the {D} "
            f"dimensions of the input tensor, but got {len(bins)}"
        )
    ranges = None
    if range is not None:
        r = list(range)
        ranges = [(r[2 * d], r[2 * d + 1]) for d in builtins.range(D)]
    hist, edges = _histogramdd(points, bins, ranges, weight, density)
    return _write_out(return_types.histogramdd(hist, tuple(edges)), out)


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (bincount, histc, histogram):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))


_declare_methods()
