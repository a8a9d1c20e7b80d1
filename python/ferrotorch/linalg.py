"""``torch.linalg``: vector and matrix norms over ferrotorch's reductions,
and the decompositions, solves and matrix functions of ``_linalg_functions``
(native LU, Cholesky, QR and symmetric eigen kernels through ``faer``, and
LAPACK's Bunch-Kaufman ``L D L^T``).

Matrix norms that need singular values (``ord=2``, ``-2`` and ``'nuc'``) use
``svdvals`` (the native one-sided Jacobi in double precision, see ``_svd``),
which is meant for small matrices.
"""

import math

from . import _C
from ._math_ops import _write_out, _pretty, vector_norm as _vector_norm
from ._svd import LinAlgError, svd, svdvals
from ._linalg_eig import eig, eigvals
from ._linalg_functions import (  # noqa: F401
    cholesky, cholesky_ex, cond, cross, det, diagonal, eigh, eigvalsh, householder_product, inv, inv_ex, ldl_factor, ldl_factor_ex,
    ldl_solve, lstsq, lu,
    lu_factor, lu_factor_ex, lu_solve, matmul, matrix_exp, matrix_power, matrix_rank, multi_dot, pinv, qr, slogdet,
    solve, solve_ex, solve_triangular, tensorinv, tensorsolve, vander, vecdot,
)

__all__ = [
    "vector_norm", "norm", "matrix_norm", "svd", "svdvals", "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross",
    "det", "diagonal", "eig", "eigvals", "eigh", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_power", "matrix_rank", "multi_dot", "pinv", "qr",
    "slogdet", "solve", "solve_ex", "solve_triangular", "tensorinv", "tensorsolve", "vander", "vecdot",
]


def _check_float(A, fname):
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_pretty(A.dtype)}")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    r"""linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor

    Computes a vector norm: ``sum(|x|^ord)^(1/ord)`` over ``dim`` (all
    elements when ``dim`` is None); ``ord`` may also be ``inf`` (max ``|x|``),
    ``-inf`` (min ``|x|``) or ``0`` (number of non-zero elements).

    Args:
        x (Tensor): a floating-point tensor.
        ord (int, float, inf, -inf): the order of the norm. Default: 2.
        dim (int, tuple of ints, optional): dims to reduce over.
        keepdim (bool, optional): keep the reduced dims with size one.

    Keyword args:
        dtype (torch.dtype, optional): compute and return in this dtype.
        out (Tensor, optional): the output tensor.
    """
    if dtype is None:
        _check_float(x, "vector_norm")
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype, out=out)


def _dims2(A, dim, fname):
    if isinstance(dim, int) or len(dim) != 2:
        got = str(dim) if isinstance(dim, int) else " ".join(str(d) for d in dim)
        raise RuntimeError(f"linalg.{fname}: dim must be a 2-tuple. Got {got}")
    nd = A.dim()
    for d in dim:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    d0, d1 = (d % nd if nd else d for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.{fname}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    r"""linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None) -> Tensor

    Computes a matrix norm over the two dims ``dim`` (batched over the rest):
    ``'fro'`` (Frobenius), ``1`` / ``-1`` (max / min absolute column sum),
    ``inf`` / ``-inf`` (max / min absolute row sum), ``2`` / ``-2`` (largest /
    smallest singular value) and ``'nuc'`` (sum of the singular values).

    Args:
        A (Tensor): a floating-point tensor with at least 2 dims.
        ord (int, inf, -inf, 'fro', 'nuc', optional): the order. Default: ``'fro'``.
        dim (Tuple[int, int], optional): the matrix dims. Default: ``(-2, -1)``.
        keepdim (bool, optional): keep the reduced dims with size one.

    Keyword args:
        dtype (torch.dtype, optional): compute and return in this dtype.
        out (Tensor, optional): the output tensor.
    """
    if isinstance(ord, str) and ord not in ("fro", "nuc") or not isinstance(ord, str) and ord not in (
            1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    _check_float(A, "matrix_norm")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = _dims2(A, dim, "matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim, out=out)
    if ord in ("nuc", 2, -2) and not isinstance(ord, bool):
        return _write_out(_svd_norm(A, ord, d0, d1, keepdim), out)
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # |A| summed over one matrix dim, then the max or min over the other
    sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    s = A.abs().sum(sum_dim, keepdim=True)
    r = s.amax(red_dim, keepdim=True) if ord > 0 else s.amin(red_dim, keepdim=True)
    if not keepdim:
        r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    return _write_out(r, out)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    r"""linalg.norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None) -> Tensor

    A vector or matrix norm: with ``dim`` an int (or ``A`` 1-D) a vector norm,
    with ``dim`` a 2-tuple (or ``A`` 2-D and ``ord`` given) a matrix norm.
    With both ``ord`` and ``dim`` omitted, the 2-norm of the flattened tensor.

    Args:
        A (Tensor): a floating-point tensor.
        ord (int, float, inf, -inf, 'fro', 'nuc', optional): the order.
        dim (int, Tuple[int], Tuple[int, int], optional): dims to reduce over.
        keepdim (bool, optional): keep the reduced dims with size one.

    Keyword args:
        out (Tensor, optional): the output tensor.
        dtype (torch.dtype, optional): compute and return in this dtype.
    """
    if dtype is None:
        _check_float(A, "norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")


def _svd_norm(A, ord, d0, d1, keepdim):
    """The 2, -2 or nuclear norm over the matrix dims ``(d0, d1)``."""
    if A.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_pretty(A.dtype)}")
    nd = A.dim()
    rest = [d for d in range(nd) if d not in (d0, d1)]
    M = A.permute(*rest, d0, d1)
    S = svdvals(M)
    if ord == "nuc":
        r = S.sum(-1)
    elif ord == 2:
        r = S.amax(-1) if S.shape[-1] else S.sum(-1)
    else:
        if not S.shape[-1]:
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        r = S.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r
