"""Index-driven ops: ``index_reduce``, ``put``, ``isin``,
``unique_consecutive``, ``nonzero_static`` and ``unravel_index``, over the
native scatter/gather, sort and nonzero kernels.
"""

import builtins
import warnings

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _write_out

__all__ = ["index_reduce", "put", "isin", "unique_consecutive", "nonzero_static", "unravel_index"]

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce(input, dim, index, source, reduce, include_self):
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    nd = builtins.max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    d = dim % nd
    if source.dim() and index.numel() != source.shape[d]:
        raise IndexError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({source.shape[d]})"
        )
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    # every source slice along ``dim`` lands on row ``index[i]``: scatter_reduce with the index broadcast
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = index.numel()
    idx = index.reshape(shape).expand(source.shape)
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


@_args.signature(
    'Tensor input, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True, Tensor? out=None',
)
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduces the slices of ``source`` into the rows of ``input`` selected by
    ``index`` along ``dim`` with ``reduce`` (``'prod'``, ``'mean'``, ``'amax'``,
    ``'amin'``); ``include_self=False`` leaves the old values of the targeted rows out.
    """
    return _write_out(_index_reduce(input, dim, index, source, reduce, include_self), out)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place :func:`index_reduce`."""
    return self.copy_(_index_reduce(self, dim, index, source, reduce, include_self))


def _put(input, index, source, accumulate):
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = input.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel() and index.device.type != "meta":
        bad = (flat_index >= n) | (flat_index < -n)
        if bool(bad.any()):
            v = int(flat_index[bad][0].item())
            raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")
    # indices address the tensor as if it were flattened in row-major order
    flat = input.reshape(-1).index_put((flat_index,), source.reshape(-1).to(input.dtype), accumulate)
    return flat.reshape(input.shape)


@_args.signature('Tensor input, Tensor index, Tensor source, bool accumulate=False')
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s values written at the flat (row-major)
    positions ``index``; ``accumulate=True`` adds instead of overwriting."""
    return _put(input, index, source, accumulate)


def _put_(self, index, source, accumulate=False):
    """In-place :func:`put`."""
    return self.copy_(_put(self, index, source, accumulate))


@_args.signature(
    'Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False',
    'Scalar elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False',
    'Tensor elements, Scalar test_elements, *, bool assume_unique=False, bool invert=False',
)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Tests whether each element of ``elements`` is in ``test_elements``; either may
    be a scalar. Returns a bool tensor of ``elements``' shape (NaN is never found)."""
    if not isinstance(elements, _C.TensorBase):
        device = test_elements.device
        elements = _C.tensor(elements, device=device)
    if not isinstance(test_elements, _C.TensorBase):
        test_elements = _C.tensor(test_elements, device=elements.device)
    dtype = _C.promote_types(elements.dtype, test_elements.dtype)
    e, t = elements.detach().to(dtype), test_elements.detach().to(dtype).reshape(-1)
    if t.is_floating_point() and t.device.type != "meta":
        # NaN matches nothing, and left in it would mislead the binary search
        t = t[~t.isnan()]
    if t.numel() == 0:
        found = _C.zeros(e.shape, dtype=_C.bool, device=e.device)
    else:
        from ._histogram import searchsorted
        seq = t.sort().values
        pos = searchsorted(seq, e).clamp(max=seq.numel() - 1)
        found = seq[pos] == e
    return ~found if invert else found


@_args.signature('Tensor input, Any return_inverse=False, Any return_counts=False, int? dim=None')
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Eliminates all but the first element from every run of equal consecutive
    elements (of the flattened input, or of slices along ``dim``).

    Returns the values, plus the inverse indices and the run lengths when asked.
    """
    # PyTorch's Python wrapper tests the flags' truth first (a tensor of several values
    # raises there), then its native op insists on bools
    bool(return_counts), bool(return_inverse)
    for name, flag in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        if not isinstance(flag, bool):
            raise TypeError(f"unique_consecutive(): argument '{name}' must be bool, not {type(flag).__name__}")
    if dim is None:
        x = input.reshape(-1)
        n = x.shape[0]
        if n == 0:
            starts = _C.zeros(0, dtype=_C.bool, device=x.device)
        else:
            starts = _C._cat([_C.ones(1, dtype=_C.bool, device=x.device), x[1:] != x[:-1]], 0)
        values = x[starts]
        inv_shape = input.shape
    else:
        nd = builtins.max(input.dim(), 1)
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
        d = dim % nd
        n = input.shape[d]
        if n == 0:
            starts = _C.zeros(0, dtype=_C.bool, device=input.device)
        else:
            change = input.narrow(d, 1, n - 1) != input.narrow(d, 0, n - 1)
            others = [i for i in range(input.dim()) if i != d]
            if others:
                change = change.any(others) if len(others) > 1 else change.any(others[0])
            starts = _C._cat([_C.ones(1, dtype=_C.bool, device=input.device), change], 0)
        values = input.index_select(d, starts.nonzero().reshape(-1))
        inv_shape = (n,)
    out = [values]
    if return_inverse:
        out.append((starts.to(_C.int64).cumsum(0) - 1).reshape(inv_shape))
    if return_counts:
        pos = starts.nonzero().reshape(-1)
        ends = _C._cat([pos[1:], _C.tensor([n], dtype=_C.int64, device=pos.device)], 0)
        out.append(ends - pos)
    return out[0] if len(out) == 1 else tuple(out)


@_args.signature('Tensor input, *, SymInt size, int fill_value=-1')
def nonzero_static(input, *, size, fill_value=-1):
    """Indices of the non-zero elements as a ``(size, input.dim())`` tensor: truncated
    to ``size`` rows, or padded with ``fill_value`` rows."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = input.nonzero()
    k = nz.shape[0]
    if k >= size:
        return nz[:size]
    pad = _C.full((size - k, nz.shape[1]), fill_value, dtype=_C.int64, device=nz.device)
    return _C._cat([nz, pad], 0)


def unravel_index(indices, shape):
    """Converts flat indices into a tuple of coordinate tensors for an array of
    ``shape`` (row-major). Out-of-range and negative indices wrap around, as in PyTorch.
    """
    if not isinstance(indices, _C.TensorBase):
        indices = _C.tensor(indices)
    if indices.is_floating_point() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {str(indices.dtype).replace('ferrotorch', 'torch')}")
    shape = [int(s) for s in ([shape] if isinstance(shape, int) else shape)]
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    idx = indices.to(_C.int64)
    coords = []
    stride = 1
    for s in reversed(shape):
        coords.append(idx.div(stride, rounding_mode="floor").remainder(s) if s else idx * 0)
        stride *= s
    return tuple(reversed(coords))


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (index_reduce, put, unique_consecutive, nonzero_static):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))
    _methods.define("index_reduce_", _index_reduce_)
    _methods.define("put_", _put_)


_declare_methods()
