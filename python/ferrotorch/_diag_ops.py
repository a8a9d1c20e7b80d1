"""Diagonal and triangle constructions: ``diag``, ``diagflat``, ``diag_embed``,
``fill_diagonal_``, ``tril_indices``/``triu_indices`` and ``vander``.

Diagonals are written through ``Tensor.diagonal`` views of a zero tensor, so the
result stays on the autograd graph and works on ``meta``.
"""

import builtins

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _write_out

__all__ = ["diag", "diagflat", "diag_embed", "tril_indices", "triu_indices", "vander"]


@_args.signature('Tensor input, int diagonal=0, *, Tensor? out=None')
def diag(input, diagonal=0, *, out=None):
    """A 1-d ``input`` becomes a square matrix with it on the ``diagonal``-th diagonal;
    a 2-d ``input`` gives (a copy of) its ``diagonal``-th diagonal as a 1-d tensor.
    """
    if input.dim() == 1:
        n = input.shape[0] + builtins.abs(diagonal)
        res = _C.zeros(n, n, dtype=input.dtype, device=input.device)
        res.diagonal(diagonal).copy_(input)
    elif input.dim() == 2:
        res = input.diagonal(diagonal).clone()
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return _write_out(res, out)


@_args.signature('Tensor input, int offset=0')
def diagflat(input, offset=0):
    """Like :func:`diag` of the flattened ``input``: always a 2-d matrix."""
    return diag(input.reshape(-1), offset)


@_args.signature('Tensor input, int offset=0, int dim1=-2, int dim2=-1')
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Puts the last dimension of ``input`` on the ``offset`` diagonal of the 2-d planes
    given by ``dim1`` and ``dim2`` of a new, one-dimension-larger tensor.
    """
    nd = input.dim() + 1
    d1 = dim1 % nd if -nd <= dim1 < nd else None
    d2 = dim2 % nd if -nd <= dim2 < nd else None
    for d in (dim1, dim2):
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + builtins.abs(offset)
    rest = list(input.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else rest.pop(0))
    res = _C.zeros(*shape, dtype=input.dtype, device=input.device)
    res.diagonal(offset, d1, d2).copy_(input)
    return res


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal of a tensor (all dims equal when more than 2-d) in place.

    With ``wrap=True`` a tall matrix's diagonal restarts every ``ncols + 1`` rows, as NumPy's.
    """
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    if nd > 2 and builtins.any(s != self.shape[0] for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    value = _C.tensor(fill_value, dtype=self.dtype, device=self.device)
    rows, cols = self.shape[0], self.shape[1]
    if nd == 2 and wrap and rows > cols + 1:
        r = _C.arange(rows, device=self.device)
        c = r % (cols + 1)
        keep = c < cols
        self.index_put_((r[keep], c[keep]), value)
        return self
    if nd == 2:
        self.diagonal(0, 0, 1).fill_(value)
    else:
        self.index_put_((_C.arange(self.shape[0], device=self.device),) * nd, value)
    return self


def _check_indices_args(row, col):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")


def _tri_indices(row, col, offset, dtype, device, lower):
    _check_indices_args(row, col)
    r = _C.arange(row, device=device).unsqueeze(1)
    c = _C.arange(col, device=device).unsqueeze(0)
    mask = (c - r <= offset) if lower else (c - r >= offset)
    # nonzero walks the mask in row-major order, which is PyTorch's index order
    return mask.nonzero().t().contiguous().to(dtype)


@_args.signature(
    'int row, int col, int offset=0, *, ScalarType? dtype=None, Device? device=None, Layout? layout=None',
)
def tril_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """Indices of the lower triangle of a ``row`` x ``col`` matrix as a ``2 x N`` tensor.

    Row coordinates are in the first row; ``offset`` shifts the diagonal (positive: up).
    """
    return _tri_indices(row, col, offset, dtype or _C.int64, device, True)


@_args.signature(
    'int row, int col, int offset=0, *, ScalarType? dtype=None, Device? device=None, Layout? layout=None',
)
def triu_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """Indices of the upper triangle of a ``row`` x ``col`` matrix as a ``2 x N`` tensor."""
    return _tri_indices(row, col, offset, dtype or _C.int64, device, False)


@_args.signature('Tensor x, SymInt? N=None, bool increasing=False')
def vander(x, N=None, increasing=False):
    """Generates a Vandermonde matrix: column ``i`` is ``x ** (N - i - 1)``
    (``x ** i`` with ``increasing=True``). Integer and bool inputs give ``int64``.
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _C.promote_types(x.dtype, _C.int64)
    n = x.shape[0]
    res = _C.empty(n, 0, dtype=dtype, device=x.device)
    if N > 0:
        # powers by running product, as PyTorch does, so integer results are exact
        cols = _C._cat([_C.ones(n, 1, dtype=dtype, device=x.device),
                        x.to(dtype).unsqueeze(1).expand(n, N - 1)], 1)
        res = cols.cumprod(1)
    return res if increasing else res.flip(1)


def _declare_methods():
    def diag_m(self, diagonal=0):
        return diag(self, diagonal)

    def diagflat_m(self, offset=0):
        return diagflat(self, offset)

    def diag_embed_m(self, offset=0, dim1=-2, dim2=-1):
        return diag_embed(self, offset, dim1, dim2)

    for f, name in ((diag_m, "diag"), (diagflat_m, "diagflat"), (diag_embed_m, "diag_embed")):
        f.__name__ = name
        f.__doc__ = globals()[name].__doc__
        _methods.define(name, f)
    _methods.define("fill_diagonal_", _fill_diagonal_)


_declare_methods()
