"""The rest of ``torch.nn.functional``'s pooling family: ``max_unpool*``, ``lp_pool*``,
``fractional_max_pool*`` and the ``*_with_indices`` spellings of the 3-d poolings.

Composed from differentiable tensor ops (``scatter``, ``gather``, the
average/max poolings), so autograd covers them without extra rules.
"""

import math

from .. import _C
from .. import _math_ops as _m
from .. import _shape_ops as _s
from . import functional as _F
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = [
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices",
]


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v) if len(v) != 1 else tuple(v) * n
    return (v,) * n


# -- max_unpool -------------------------------------------------------------------------------------


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    shape = list(input.shape)
    default = [(shape[-nd + i] - 1) * stride[i] + kernel_size[i] - 2 * padding[i] for i in range(nd)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        shown = output_size
        output_size = list(output_size)
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a length of "
                f"'{len(output_size)}'")
        for i in range(nd):
            lo, hi = default[i] - stride[i], default[i] + stride[i]
            if not lo < output_size[i] < hi:
                raise ValueError(f'invalid output_size "{_tuple_repr(shown)}" (dim {i} must be between '
                                 f'{lo} and {hi})')
        ret = output_size
    for i in range(nd):
        if ret[i] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{i}]={ret[i]}")
    return ret


def _tuple_repr(v):
    # PyTorch prints the caller's sequence as it came, trimmed to the spatial dims.
    return repr(v)


def _max_unpool(input, indices, out_size, nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
                           f"tensor with {input.dim()} dimensions.")
    if indices.dtype != _C.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_m._pretty(indices.dtype)}")
    if list(indices.shape) != list(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_unpool{nd}d\" not implemented for '{_m._pretty(input.dtype)}'")
    lead = list(input.shape[:-nd])
    plane = math.prod(out_size)
    idx = indices.reshape(*lead, -1)
    with _no_grad():
        bad = (idx < 0) | (idx >= plane)
        if idx.numel() and bool(bad.any()):
            first = int(idx.reshape(-1)[bad.reshape(-1).to(_C.int64).argmax()].item())
            raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                               f"{'x'.join(str(v) for v in out_size)})")
    # Each pooled value goes back to the position its index names; the
    # gradient (scatter's backward) gathers it from there, as PyTorch's.
    out = _C.zeros(*lead, plane, dtype=input.dtype, device=input.device)
    out = out.scatter(-1, idx, input.reshape(*lead, -1))
    return out.reshape(*lead, *out_size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""Computes a partial inverse of :class:`MaxPool1d`.

    See :class:`~torch.nn.MaxUnpool1d` for details.
    """
    k = _tuple(kernel_size, 1)
    s = _tuple(stride, 1) if stride is not None else k
    p = _tuple(padding, 1)
    out = _unpool_output_size(input, k, s, p, output_size)
    # As PyTorch: a 2-d unpooling over a trailing unit dim.
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), list(out) + [1], 2).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""Computes a partial inverse of :class:`MaxPool2d`.

    See :class:`~torch.nn.MaxUnpool2d` for details.
    """
    k = _tuple(kernel_size, 2)
    s = _tuple(stride, 2) if stride is not None else k
    p = _tuple(padding, 2)
    out = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, list(out), 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    r"""Computes a partial inverse of :class:`MaxPool3d`.

    See :class:`~torch.nn.MaxUnpool3d` for details.
    """
    k = _tuple(kernel_size, 3)
    s = _tuple(stride, 3) if stride is not None else k
    p = _tuple(padding, 3)
    out = _unpool_output_size(input, k, s, p, output_size)
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(s)}")
    return _max_unpool(input, indices, list(out), 3)


# -- lp_pool ----------------------------------------------------------------------------------------


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, count):
    max_fn = (_F.max_pool1d, _F.max_pool2d, _F.max_pool3d)[nd - 1]
    avg_fn = (_F.avg_pool1d, _F.avg_pool2d, _F.avg_pool3d)[nd - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_fn(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_fn(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_fn(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_fn(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # The window mean times its size is the window sum of x**p; sign * relu(abs)
    # keeps PyTorch's exact arithmetic (and its gradient at 0).
    return (out.sign() * _F.relu(out.abs())).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""Applies a 1D power-average pooling over an input signal composed of several input planes.

    If the sum of all inputs to the power of `p` is zero, the gradient is set to zero as well.

    See :class:`~torch.nn.LPPool1d` for details.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""Applies a 2D power-average pooling over an input signal composed of several input planes.

    If the sum of all inputs to the power of `p` is zero, the gradient is set to zero as well.

    See :class:`~torch.nn.LPPool2d` for details.
    """
    kw, kh = _F._pair(kernel_size)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, kw * kh)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    r"""Applies a 3D power-average pooling over an input signal composed of several input planes.

    If the sum of all inputs to the power of `p` is zero, the gradient is set to zero as well.

    See :class:`~torch.nn.LPPool3d` for details.
    """
    kd, kw, kh = _F._ntuple(kernel_size, 3)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, kd * kw * kh)


# -- fractional max pooling -------------------------------------------------------------------------

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(sample, in_size, out_size, pool):
    """Window starts ``(..., out_size)`` for per-plane ``sample``s ``(...)`` in [0, 1).

    PyTorch's rule, in the input's floating dtype: ``alpha = (in - pool) / (out - 1)``,
    ``start[i] = int((i + u) * alpha) - int(u * alpha)``, the last window flush right.
    """
    dev = sample.device
    if out_size == 1:
        return _C.full((*sample.shape, 1), in_size - pool, dtype=_C.int64, device=dev)
    dt = sample.dtype
    alpha = _C.tensor(float(in_size - pool), dtype=dt, device=dev) / _C.tensor(float(out_size - 1), dtype=dt,
                                                                               device=dev)
    u = sample.unsqueeze(-1)
    i = _C.arange(out_size - 1, dtype=dt, device=dev)
    starts = ((i + u) * alpha).trunc().to(_C.int64) - (u * alpha).trunc().to(_C.int64)
    last = _C.full((*sample.shape, 1), in_size - pool, dtype=_C.int64, device=dev)
    return _s.cat([starts, last], -1)


def _fractional(input, kernel_size, output_size, output_ratio, samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _F._ntuple(output_ratio, nd)
        output_size = [int(input.size(-nd + i) * ratio[i]) for i in range(nd)]
    if samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = _C.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    if isinstance(kernel_size, (list, tuple)) and len(kernel_size) not in (1, nd):
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of Ints")
    if isinstance(output_size, (list, tuple)) and len(output_size) not in (1, nd):
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of Ints")
    k = _tuple(kernel_size, nd)
    outs = _tuple(output_size, nd)
    if input.dim() not in (nd + 1, nd + 2):
        if nd == 2:
            raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got: "
                               f"{input.dim()}")
        raise RuntimeError(f"fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to be 3D tensor, got: {samples.dim()}D tensor.")
    batched = input.dim() == nd + 2
    n = input.size(0) if batched else 1
    c = input.size(-nd - 1)
    if samples.size(0) < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.size(2)}.")
    sizes = tuple(input.shape[-nd:])
    prefix = f"{name}()" if nd == 2 else "fractional_max_pool3d_out()"
    for i in range(nd):
        # The 3-d kernel's bound is strict, the 2-d one's is not (as PyTorch's).
        if outs[i] + k[i] - 1 > sizes[i] or (nd == 3 and outs[i] + k[i] - 1 == sizes[i]):
            dn = _DIM_NAMES[nd][i]
            raise RuntimeError(f"{prefix}: pool {dn} {k[i]} too large relative to input {dn} {sizes[i]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{_m._pretty(input.dtype)}'")
    x = input if batched else input.unsqueeze(0)
    dev = input.device
    samples = samples[:n]
    # PyTorch draws the 2-d samples as (width, height): reverse them into dim order.
    order = [1, 0] if nd == 2 else [0, 1, 2]
    with _no_grad():
        flat = None
        for i in range(nd):
            st = _intervals(samples[:, :, order[i]], sizes[i], outs[i], k[i])  # (N, C, out_i)
            pos = st.unsqueeze(-1) + _C.arange(k[i], dtype=_C.int64, device=dev)  # (N, C, out_i, k_i)
            stride = math.prod(sizes[i + 1:])
            # Place dim i's (out_i, k_i) pair at axes (2+i, 2+nd+i) of a (N, C, *outs, *k) grid.
            shape = [n, c] + [1] * (2 * nd)
            shape[2 + i], shape[2 + nd + i] = outs[i], k[i]
            term = (pos * stride).reshape(shape)
            flat = term if flat is None else flat + term
        flat = flat.expand(n, c, *outs, *k).reshape(n, c, math.prod(outs), math.prod(k))
    if math.prod(outs) == 0:
        vals = _C.zeros(n, c, *outs, dtype=input.dtype, device=dev)
        idx = _C.zeros(n, c, *outs, dtype=_C.int64, device=dev)
    else:
        win = x.reshape(n, c, -1).gather(2, flat.reshape(n, c, -1)).reshape(flat.shape)
        arg = _F._window_argmax(win).unsqueeze(-1)
        vals = win.gather(-1, arg).squeeze(-1).reshape(n, c, *outs)
        idx = flat.gather(-1, arg).squeeze(-1).reshape(n, c, *outs)
    if not batched:
        vals, idx = vals.squeeze(0), idx.squeeze(0)
    return vals, idx


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    r"""fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None)

    Applies 2D fractional max pooling over an input signal composed of several input planes.

    Fractional MaxPooling is described in detail in the paper `Fractional MaxPooling`_ by Ben Graham.
    The max-pooling operation is applied in :math:`kH \times kW` regions by a stochastic
    step size determined by the target output size.

    Args:
        kernel_size: the size of the window to take a max over (``k`` or ``(kH, kW)``).
        output_size: the target output size ``oH x oW`` (``oH`` or ``(oH, oW)``).
        output_ratio: the output size as a ratio of the input size, in (0, 1).
        return_indices: if ``True``, will return the indices along with the outputs.

    .. _Fractional MaxPooling: http://arxiv.org/abs/1412.6071
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def _fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                           _random_samples=None):
    return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                              _random_samples)[0]


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    r"""fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None)

    Applies 2D fractional max pooling over an input signal composed of several input planes;
    with ``return_indices=True`` returns ``(output, indices)``. See
    :func:`fractional_max_pool2d_with_indices`.
    """
    if return_indices:
        return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, True,
                                                  _random_samples)
    return _fractional_max_pool2d(input, kernel_size, output_size, output_ratio, False, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    r"""fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None)

    Applies 3D fractional max pooling over an input signal composed of several input planes.

    The max-pooling operation is applied in :math:`kT \times kH \times kW` regions by a stochastic
    step size determined by the target output size.

    Args:
        kernel_size: the size of the window to take a max over (``k`` or ``(kT, kH, kW)``).
        output_size: the target output size ``oT x oH x oW``.
        output_ratio: the output size as a ratio of the input size, in (0, 1).
        return_indices: if ``True``, will return the indices along with the outputs.
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def _fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                           _random_samples=None):
    return fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                              _random_samples)[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    r"""fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None)

    Applies 3D fractional max pooling; with ``return_indices=True`` returns ``(output, indices)``.
    See :func:`fractional_max_pool3d_with_indices`.
    """
    if return_indices:
        return fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, True,
                                                  _random_samples)
    return _fractional_max_pool3d(input, kernel_size, output_size, output_ratio, False, _random_samples)


# -- *_with_indices spellings -----------------------------------------------------------------------


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """:func:`max_pool3d` returning ``(values, indices)``."""
    return _F.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool3d` returning ``(values, indices)``."""
    return _F.adaptive_max_pool3d(input, output_size, True)
