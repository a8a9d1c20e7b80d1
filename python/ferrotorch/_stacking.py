"""Joining and splitting tensors: ``atleast_*d``, the NumPy-style stacks and
splits, ``block_diag``, ``cartesian_prod`` and ``combinations``.

Everything is a composition of views, ``cat`` and ``narrow`` (native kernels),
so autograd and the ``meta`` device come for free.
"""

import builtins

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _pretty, _write_out

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "dstack", "column_stack", "row_stack",
    "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split",
    "unsafe_split_with_sizes", "unsafe_chunk", "block_diag", "cartesian_prod", "combinations",
    "ravel", "msort",
]


def _atleast(args, nd, name):
    def one(t):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(t).__name__})")
        if t.dim() >= nd:
            return t
        if nd == 1 or t.dim() == 0:
            t = t.reshape([1] * nd) if t.dim() == 0 else t
        if nd >= 2 and t.dim() == 1:
            t = t.unsqueeze(0)
        if nd == 3 and t.dim() == 2:
            t = t.unsqueeze(-1)
        return t

    if len(args) == 1 and isinstance(args[0], _C.TensorBase):
        return one(args[0])
    seq = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return tuple(one(t) for t in seq)


def atleast_1d(*tensors):
    """Returns a 1-dimensional view of each input tensor with zero dimensions.

    Input tensors with one or more dimensions are returned as-is. Given one tensor
    the result is a tensor, given several (or a list) it is a tuple.
    """
    return _atleast(tensors, 1, "atleast_1d")


def atleast_2d(*tensors):
    """Returns a 2-dimensional view of each input tensor with fewer dimensions.

    Input tensors with two or more dimensions are returned as-is.
    """
    return _atleast(tensors, 2, "atleast_2d")


def atleast_3d(*tensors):
    """Returns a 3-dimensional view of each input tensor with fewer dimensions.

    A 1-d tensor of size ``n`` becomes ``(1, n, 1)``, a 2-d ``(m, n)`` becomes ``(m, n, 1)``.
    """
    return _atleast(tensors, 3, "atleast_3d")


def _seq(tensors, name):
    if isinstance(tensors, _C.TensorBase):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _out(result, out):
    return _write_out(result, out)


@_args.signature('Tensor[] tensors, *, Tensor? out=None')
def dstack(tensors, *, out=None):
    """Stacks tensors in sequence depthwise (along the third axis).

    Inputs are made at least 3-d first (see :func:`atleast_3d`).
    """
    ts = _seq(tensors, "dstack")
    return _out(_C._cat([atleast_3d(t) for t in ts], 2), out)


@_args.signature('Tensor[] tensors, *, Tensor? out=None')
def column_stack(tensors, *, out=None):
    """Creates a new tensor by horizontally stacking the tensors in ``tensors``.

    0-d and 1-d inputs of ``n`` elements become ``(n, 1)`` columns first.
    """
    ts = _seq(tensors, "column_stack")
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in ts]
    return _out(_C._hstack(cols), out)


@_args.signature('Tensor[] tensors, *, Tensor? out=None')
def row_stack(tensors, *, out=None):
    """Alias of :func:`ferrotorch.vstack`."""
    return _out(_C._vstack(_seq(tensors, "row_stack")), out)


# ----- splitting ------------------------------------------------------------------

def _wrap_dim(dim, ndim, name=None):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _split_at(input, dim, bounds):
    size = input.shape[dim]
    pieces = []
    start = 0
    for b in list(bounds) + [size]:
        b = builtins.min(builtins.max(b if b >= 0 else b + size, 0), size)
        # a decreasing index gives an empty piece, and the next piece starts at it (NumPy's rule)
        pieces.append(input.narrow(dim, builtins.min(start, b), builtins.max(b - start, 0)))
        start = b
    return tuple(pieces)


@_args.signature(
    'Tensor input, SymInt indices_or_sections, int dim=0',
    'Tensor input, SymInt[] indices_or_sections, int dim=0',
    'Tensor input, Tensor indices_or_sections, int dim=0',
)
def tensor_split(input, indices_or_sections, dim=0):
    """Splits a tensor into multiple sub-tensors (views) along dimension ``dim``.

    An int ``n`` gives ``n`` pieces, the first ``size % n`` one element larger; a
    sequence of indices splits before each index (like NumPy's ``array_split``).
    A tensor argument must be a 0-d or 1-d ``int64`` tensor on the CPU.
    """
    if input.dim() == 0:
        raise RuntimeError(
            f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with {input.dim()} dims"
        )
    dim = _wrap_dim(dim, input.dim())
    ios = indices_or_sections
    if isinstance(ios, _C.TensorBase):
        if ios.dtype != _C.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got " + _pretty(ios.dtype)
            )
        if ios.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                f"tensor, but got a tensor with {ios.dim()} dims"
            )
        ios = int(ios.item()) if ios.dim() == 0 else [int(v) for v in ios.tolist()]
    size = input.shape[dim]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(size, ios)
        bounds, acc = [], 0
        for i in range(ios - 1):
            acc += q + (1 if i < r else 0)
            bounds.append(acc)
        return _split_at(input, dim, bounds)
    return _split_at(input, dim, [int(i) for i in ios])


def _nsplit(input, ios, dim, name, min_dim):
    if input.dim() < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with {input.dim()} dimensions!"
        )
    if isinstance(ios, int):
        size = input.shape[dim]
        if ios == 0 or size % ios != 0:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} "
                f"is not divisible by the split_size {ios}!"
            )
    return tensor_split(input, ios, dim)


@_args.signature('Tensor input, int indices_or_sections', 'Tensor input, int[] indices_or_sections')
def hsplit(input, indices_or_sections):
    """Splits ``input`` horizontally (dim 1, or dim 0 for 1-d tensors) into views.

    An int must divide the dimension evenly.
    """
    return _nsplit(input, indices_or_sections, 0 if input.dim() == 1 else 1, "hsplit", 1)


@_args.signature('Tensor input, int indices_or_sections', 'Tensor input, int[] indices_or_sections')
def vsplit(input, indices_or_sections):
    """Splits ``input`` (at least 2-d) vertically, along dim 0, into views."""
    return _nsplit(input, indices_or_sections, 0, "vsplit", 2)


@_args.signature('Tensor input, int indices_or_sections', 'Tensor input, int[] indices_or_sections')
def dsplit(input, indices_or_sections):
    """Splits ``input`` (at least 3-d) depthwise, along dim 2, into views."""
    return _nsplit(input, indices_or_sections, 2, "dsplit", 3)


@_args.signature('Tensor input, SymInt[] split_sizes, int dim=0')
def split_with_sizes(input, split_sizes, dim=0):
    """Splits ``input`` into views of the given sizes along ``dim``; the sizes must sum to the dim's size."""
    dim = _wrap_dim(dim, input.dim())
    sizes = [int(s) for s in split_sizes]
    size = input.shape[dim]
    if builtins.sum(sizes) != size or builtins.any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {dim}), "
            f"but got split_sizes=[{', '.join(str(s) for s in sizes)}]"
        )
    out, start = [], 0
    for s in sizes:
        out.append(input.narrow(dim, start, s))
        start += s
    return tuple(out)


@_args.signature('Tensor input, SymInt split_size, int dim=0')
def unsafe_split(input, split_size, dim=0):
    """Like :meth:`Tensor.split` (the "unsafe" variants exist for PyTorch's view tracking)."""
    return tuple(input.split(split_size, dim))


@_args.signature('Tensor input, SymInt[] split_sizes, int dim=0')
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """Like :func:`split_with_sizes`."""
    return split_with_sizes(input, split_sizes, dim)


@_args.signature('Tensor input, int chunks, int dim=0')
def unsafe_chunk(input, chunks, dim=0):
    """Like :meth:`Tensor.chunk`."""
    return tuple(input.chunk(chunks, dim))


# ----- block and product-set constructions ----------------------------------------

def _tensor_elements(tensors):
    """PyTorch's parser check of a ``Tensor[]`` passed as ``*tensors``."""
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


def block_diag(*tensors):
    """Creates a block diagonal matrix from the provided tensors.

    0-d inputs count as ``1x1``, 1-d inputs of ``n`` elements as ``1xn`` blocks; the
    result has the promoted dtype of all inputs.
    """
    _tensor_elements(tensors)
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t)
    if not mats:
        return _C.empty(1, 0)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = _C.promote_types(dtype, m.dtype)
    device = mats[0].device
    total = builtins.sum(m.shape[1] for m in mats)
    rows, before = [], 0
    for m in mats:
        r, c = m.shape
        parts = [_C.zeros(r, before, dtype=dtype, device=device), m.to(dtype),
                 _C.zeros(r, total - before - c, dtype=dtype, device=device)]
        rows.append(_C._cat(parts, 1))
        before += c
    return _C._cat(rows, 0)


def cartesian_prod(*tensors):
    """Cartesian product of the given 1-d tensors, as rows of a 2-d tensor.

    One input is returned unchanged (like ``itertools.product`` of one sequence).
    """
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _C._meshgrid(list(tensors), False)
    return _C._stack([g.reshape(-1) for g in grids], 1)


@_args.signature('Tensor input, int r=2, bool with_replacement=False')
def combinations(input, r=2, with_replacement=False):
    """Combinations of length ``r`` of the elements of the 1-d ``input``, as rows.

    Matches ``itertools.combinations`` (or ``combinations_with_replacement``) order.
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    idx = _C.arange(n, device=input.device)
    grids = _C._meshgrid([idx] * r, False)
    mask = _C.ones(*([n] * r), dtype=_C.bool, device=input.device)
    for a, b in zip(grids[:-1], grids[1:]):
        mask = mask & ((a <= b) if with_replacement else (a < b))
    # the mask keeps grid order, which is the lexicographic order itertools yields
    picks = [input[g.masked_select(mask)] for g in grids]
    return _C._stack(picks, 1)


@_args.signature('Tensor input')
def ravel(input):
    """Returns a contiguous flattened tensor (a view when ``input`` is contiguous)."""
    return input.reshape(-1)


@_args.signature('Tensor input, *, Tensor? out=None')
def msort(input, *, out=None):
    """Sorts the elements of ``input`` along its first dimension in ascending order."""
    return _out(input.sort(dim=0).values, out)


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (tensor_split, hsplit, vsplit, dsplit, split_with_sizes, unsafe_split,
               unsafe_split_with_sizes, unsafe_chunk, ravel, msort):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))


_declare_methods()
