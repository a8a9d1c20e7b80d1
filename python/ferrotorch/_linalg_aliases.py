"""PyTorch's ``torch.*`` and ``Tensor`` spellings of the ``torch.linalg``
factorisations (``torch.det``, ``torch.inverse``, ``Tensor.cholesky``, ...)."""

from . import _tensor_methods
from . import _args
from . import _linalg_functions as _la
from ._math_ops import _write_out

__all__ = [
    "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "lu", "lu_solve",
    "lu_unpack", "matrix_exp", "matrix_power", "pinverse", "triangular_solve",
]



@_args.signature("Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, Tensor? out=None")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    r"""lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None) -> (Tensor, Tensor, Tensor)

    Unpacks the compact factors of :func:`torch.linalg.lu_factor` into ``P, L, U``.
    """
    return _la.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots, out=out)


@_args.signature("Tensor input, Tensor input2, bool upper=False, *, Tensor? out=None")
def cholesky_solve(input, input2, upper=False, *, out=None):
    r"""cholesky_solve(input, input2, upper=False, *, out=None) -> Tensor

    Solves ``A X = input`` given the Cholesky factor ``input2`` of ``A``.
    """
    return _la.cholesky_solve(input, input2, upper, out=out)


@_args.signature("Tensor input, bool upper=False, *, Tensor? out=None")
def cholesky_inverse(input, upper=False, *, out=None):
    r"""cholesky_inverse(input, upper=False, *, out=None) -> Tensor

    The inverse of ``A`` from its Cholesky factor ``input``.
    """
    return _la.cholesky_inverse(input, upper, out=out)


@_args.signature("Tensor input, float rcond=1e-15")
def pinverse(input, rcond=1e-15):
    r"""pinverse(input, rcond=1e-15) -> Tensor

    Alias of :func:`torch.linalg.pinv` with ``rtol=rcond``.
    """
    return _la.pinverse(input, rcond)


@_args.signature("Tensor input, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *, Tensor? out=None")
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    r"""triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None) -> (Tensor, Tensor)

    The deprecated form of :func:`torch.linalg.solve_triangular`.
    """
    return _la.triangular_solve(input, A, upper, transpose, unitriangular, out=out)


@_args.signature("Tensor input")
def logdet(input):
    r"""logdet(input) -> Tensor

    ``log(det(input))``: NaN where the determinant is negative.
    """
    return _la.logdet(input)


@_args.signature("Tensor input, *, Tensor? out=None")
def slogdet(input, *, out=None):
    r"""slogdet(input, *, out=None) -> (Tensor, Tensor)

    Alias of :func:`torch.linalg.slogdet`.
    """
    return _la.torch_slogdet(input, out=out)


@_args.signature("Tensor input, bool upper=False, *, Tensor? out=None")
def cholesky(input, upper=False, *, out=None):
    r"""cholesky(input, upper=False, *, out=None) -> Tensor

    The deprecated form of :func:`torch.linalg.cholesky`.
    """
    return _la.torch_cholesky(input, upper, out=out)


@_args.signature("Tensor input, bool some=True, *, Tensor? out=None")
def qr(input, some=True, *, out=None):
    r"""qr(input, some=True, *, out=None) -> (Tensor, Tensor)

    The deprecated form of :func:`torch.linalg.qr` (reduced when ``some``).
    """
    return _la.torch_qr(input, some, out=out)


@_args.signature("Tensor input")
def det(input):
    r"""det(input) -> Tensor

    Alias of :func:`torch.linalg.det`.
    """
    return _la.det(input)


@_args.signature("Tensor input, *, Tensor? out=None")
def inverse(input, *, out=None):
    r"""inverse(input, *, out=None) -> Tensor

    Alias of :func:`torch.linalg.inv`.
    """
    return _la.inv(input, out=out)


@_args.signature("Tensor A")
def matrix_exp(A):
    r"""matrix_exp(A) -> Tensor

    Alias of :func:`torch.linalg.matrix_exp`.
    """
    return _la.matrix_exp(A)


@_args.signature("Tensor input, int n")
def matrix_power(input, n):
    r"""matrix_power(input, n) -> Tensor

    Alias of :func:`torch.linalg.matrix_power`.
    """
    return _la.matrix_power(input, n)


def lu(A, pivot=True, get_infos=False, out=None):
    r"""lu(A, pivot=True, get_infos=False, out=None) -> (Tensor, Tensor[, Tensor])

    The deprecated ``torch.lu``: ``(LU, pivots)`` of :func:`torch.linalg.lu_factor_ex`
    (with ``infos`` when ``get_infos``).
    """
    if not isinstance(pivot, bool):
        raise TypeError(f"_lu_with_info(): argument 'pivot' must be bool, not {type(pivot).__name__}")
    LU, piv, info = _la.lu_factor_ex(A, pivot=pivot)
    res = (LU, piv, info) if get_infos else (LU, piv)
    return _write_out(res, out) if out is not None else res


@_args.signature("Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor? out=None")
def lu_solve(input, LU_data, LU_pivots, *, out=None):
    r"""lu_solve(input, LU_data, LU_pivots, *, out=None) -> Tensor

    The deprecated ``torch.lu_solve``: :func:`torch.linalg.lu_solve` with the right-hand side first.
    """
    return _la.lu_solve(LU_data, LU_pivots, input, out=out)


def _declare_methods():
    table = {
        "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse, "cholesky": cholesky,
        "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse, "qr": qr, "lu_solve": lu_solve,
        "matrix_exp": matrix_exp, "matrix_power": matrix_power, "pinverse": pinverse,
        "triangular_solve": triangular_solve,
    }
    for name, fn in table.items():
        if not _tensor_methods.defined(name):
            _tensor_methods.define(name, _args.method_signature(fn) if hasattr(fn, "__schemas__") else fn)

    def lu_method(self, pivot=True, get_infos=False):
        return lu(self, pivot, get_infos)
    if not _tensor_methods.defined("lu"):
        _tensor_methods.define("lu", lu_method)


_declare_methods()
