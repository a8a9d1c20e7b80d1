"""The public ``torch.linalg`` functions built on the native factorisations
(``_linalg_factor``), and their ``torch.*`` / ``Tensor`` aliases."""

import math

from . import _C
from ._linalg_factor import (
    LinAlgError, _batch_prefix, _check_float, _check_square, _det_values, _fn, _first_bad, _matrix_exp_values,
    _mT, _needs_grad, _torch, _pivots_to_perm, _perm_matrix, _slogdet_values, _solve_tri_values, _eye_like,
)
from ._math_ops import _pretty, _write_out, return_types
from ._svd import svd, svdvals


def _raise_singular(fname, info, message):
    bad = _first_bad(info)
    if bad is not None:
        index, value = bad
        raise LinAlgError(f"{fname}: {_batch_prefix(info, index)}" + message.format(value=value))


# ----- LU ----------------------------------------------------------------------------------


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    r"""linalg.lu_factor_ex(A, *, pivot=True, check_errors=False, out=None) -> (Tensor, Tensor, Tensor)

    The LU factorisation with partial pivoting of ``A`` (shape ``(*, m, n)``)
    in LAPACK's compact form: ``LU`` holds ``L`` (unit lower, below the
    diagonal) and ``U``; ``pivots`` (int32) the 1-based row interchanges;
    ``info`` (int32) the index of the first zero pivot, or 0.
    """
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    res = _fn("LuFactor").apply(A) if _needs_grad(A) else _C._linalg_lu_factor_ex(A)
    if check_errors:
        _raise_singular("torch.linalg.lu_factor_ex", res[2],
                        "The factorization could not be completed because the input is not invertible.")
    return _write_out(return_types.linalg_lu_factor_ex(*res), out)


def lu_factor(A, *, pivot=True, out=None):
    r"""linalg.lu_factor(A, *, pivot=True, out=None) -> (Tensor, Tensor)

    ``(LU, pivots)`` of :func:`lu_factor_ex`; a zero pivot raises, as PyTorch does.
    """
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    bad = _first_bad(info)
    if bad is not None:
        index, value = bad
        raise RuntimeError(
            f"torch.linalg.lu_factor: {_batch_prefix(info, index)}U[{value},{value}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _write_out(return_types.linalg_lu_factor(LU, piv), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    r"""lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None) -> (Tensor, Tensor, Tensor)

    Unpacks the compact LU factors and pivots of :func:`lu_factor` into ``P, L, U``
    with ``A = P L U``; the parts not asked for are empty tensors.
    """
    if LU_pivots.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if LU_pivots.dtype != _C.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = _C.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + _C.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    P = _perm_matrix(_pivots_to_perm(LU_pivots, m), LU_data.dtype) if unpack_pivots else empty
    return _write_out(return_types.lu_unpack(P, L, U), out)


def lu(A, *, pivot=True, out=None):
    r"""linalg.lu(A, *, pivot=True, out=None) -> (Tensor, Tensor, Tensor)

    ``A = P L U`` with ``P`` a permutation matrix, ``L`` unit lower and ``U``
    upper triangular (``(*, m, k)`` and ``(*, k, n)``, ``k = min(m, n)``);
    differentiable for square ``A``.
    """
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    P, L, U = lu_unpack(LU, piv)
    return _write_out(return_types.linalg_lu(P, L, U), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    r"""linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None) -> Tensor

    Solves ``A X = B`` (``X A = B`` when not ``left``; with ``A^T`` when
    ``adjoint``) from the factors of :func:`lu_factor`.
    """
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if pivots.dtype != _C.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    n = LU.shape[-1]
    if pivots.device.type != "meta" and pivots.numel() and bool(((pivots < 1) | (pivots > n)).any()):
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to LU.size(-2). "
                           "Did you properly pass the result of lu_factor?")
    apply = (lambda L_, p, b, adj: _fn("LuSolve").apply(L_, p, b, adj)) if _needs_grad(LU, B) else _C._linalg_lu_solve
    if left:
        X = apply(LU, pivots, B, adjoint)
    else:
        # X A = B  <=>  A^T X^T = B^T
        X = _mT(apply(LU, pivots, _mT(B), not adjoint))
    return _write_out(X, out)


# ----- solve / inverse / determinants ------------------------------------------------------


def _is_vector_rhs(A, B):
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    r"""linalg.solve_ex(A, B, *, left=True, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`solve` returning ``(result, info)`` instead of raising on a
    singular ``A`` (unless ``check_errors``).
    """
    _check_square(A, "linalg.solve")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_pretty(A.dtype)} and B of type {_pretty(B.dtype)} instead")
    vector = _is_vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                               "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        A, Bm = _mT(A), _mT(Bm)
    n = A.shape[-1]
    if Bm.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    if _needs_grad(A, Bm):
        X, info = _fn("Solve").apply(A, Bm)
    else:
        LU, piv, info = _C._linalg_lu_factor_ex(A)
        X = _C._linalg_lu_solve(LU, piv, Bm, False)
    if check_errors:
        _raise_singular("torch.linalg.solve_ex", info, "The solver failed because the input matrix is singular.")
    if not left:
        X = _mT(X)
    if vector:
        X = X.squeeze(-1)
    return _write_out(return_types.linalg_solve_ex(X, info), out)


def solve(A, B, *, left=True, out=None):
    r"""linalg.solve(A, B, *, left=True, out=None) -> Tensor

    The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``) for
    square invertible ``A`` (``(*, n, n)``) and ``B`` of shape ``(*, n, k)``
    or ``(*, n)``; batch dims broadcast. A singular ``A`` raises
    ``torch.linalg.LinAlgError``.
    """
    X, info = solve_ex(A, B, left=left)
    _raise_singular("torch.linalg.solve", info, "The solver failed because the input matrix is singular.")
    return _write_out(X, out)


def inv_ex(A, *, check_errors=False, out=None):
    r"""linalg.inv_ex(A, *, check_errors=False, out=None) -> (Tensor, Tensor)

    The inverse of each square matrix of ``A`` and ``info`` (the 1-based
    index of the zero pivot of a singular matrix, or 0).
    """
    _check_square(A, "linalg.inv")
    if _needs_grad(A):
        Ainv, info = _fn("Inv").apply(A)
    else:
        LU, piv, info = _C._linalg_lu_factor_ex(A)
        Ainv = _C._linalg_lu_solve(LU, piv, _eye_like(A).expand(A.shape), False)
    if check_errors:
        _raise_singular("linalg.inv_ex", info, "The diagonal element {value} is zero, the inversion could not be "
                        "completed because the input matrix is singular.")
    return _write_out(return_types.linalg_inv_ex(Ainv, info), out)


def inv(A, *, out=None):
    r"""linalg.inv(A, *, out=None) -> Tensor

    The inverse of each square matrix of ``A``; a singular one raises
    ``torch.linalg.LinAlgError``.
    """
    Ainv, info = inv_ex(A)
    _raise_singular("linalg.inv", info, "The diagonal element {value} is zero, the inversion could not be "
                    "completed because the input matrix is singular.")
    return _write_out(Ainv, out)


def det(A, *, out=None):
    r"""linalg.det(A, *, out=None) -> Tensor

    The determinant of each square matrix of ``A`` (through its LU
    factorisation); differentiable, also at singular matrices.
    """
    _check_square(A, "linalg.det")
    if A.shape[-1] == 0:
        return _write_out(_C.ones(A.shape[:-2], dtype=A.dtype, device=A.device), out)
    d = _fn("Det").apply(A) if _needs_grad(A) else _det_values(A)
    return _write_out(d, out)


def slogdet(A, *, out=None):
    r"""linalg.slogdet(A, *, out=None) -> (Tensor, Tensor)

    ``(sign, logabsdet)`` with ``det A = sign * exp(logabsdet)``; a singular
    matrix gives ``(0, -inf)``.
    """
    _check_square(A, "linalg.slogdet")
    if A.shape[-1] == 0:
        ones = _C.ones(A.shape[:-2], dtype=A.dtype, device=A.device)
        return _write_out(return_types.linalg_slogdet(ones, ones * 0), out)
    res = _fn("Slogdet").apply(A) if _needs_grad(A) else _slogdet_values(A)
    return _write_out(return_types.linalg_slogdet(*res), out)


def logdet(input):
    r"""logdet(input) -> Tensor

    ``log(det(input))``: NaN where the determinant is negative, ``-inf`` where it is zero.
    """
    sign, logabs = slogdet(input)
    nan = _C.full_like(logabs, math.nan)
    return _torch().where(sign < 0, nan, logabs)


def torch_slogdet(input, *, out=None):
    """``torch.slogdet``: :func:`slogdet` under ``torch.return_types.slogdet``."""
    return _write_out(return_types.slogdet(*slogdet(input)), out)


# ----- LDL (Bunch-Kaufman) -----------------------------------------------------------------


def _raise_ldl(fname, info):
    # PyTorch has no message for a singular D: it fails an internal assert
    # naming the LAPACK code (a RuntimeError), without a batch prefix.
    bad = _first_bad(info)
    if bad is not None:
        raise RuntimeError(f"{fname}: Unknown error code: {bad[1]}.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    r"""linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None) -> (Tensor, Tensor, Tensor)

    This is a version of :func:`~ldl_factor` that does not perform error checks
    unless :attr:`check_errors`\ `= True`. It also returns the :attr:`info`
    tensor returned by LAPACK's ``sytrf``: 0 on success, else the 1-based
    index of the first exactly-zero diagonal block of ``D`` (the
    factorisation is then complete, but ``D`` is singular).

    Args:
        A (Tensor): tensor of shape ``(*, n, n)`` of symmetric matrices
            (only the lower triangle is read).

    Keyword args:
        hermitian (bool, optional): whether ``A`` is Hermitian rather than
            symmetric (the same for real inputs). Default: ``False``.
        check_errors (bool, optional): raise when ``info`` is nonzero. Default: ``False``.
        out (tuple, optional): tuple of three tensors to write the output to.

    Returns:
        A named tuple ``(LD, pivots, info)``.
    """
    res = _C._linalg_ldl_factor_ex(A, hermitian)
    if check_errors:
        _raise_ldl("torch.linalg.ldl_factor_ex", res[2])
    return _write_out(return_types.linalg_ldl_factor_ex(*res), out)


def ldl_factor(A, *, hermitian=False, out=None):
    r"""linalg.ldl_factor(A, *, hermitian=False, out=None) -> (Tensor, Tensor)

    Computes a compact representation of the LDL factorization of a symmetric
    (possibly indefinite) matrix, ``A = L D L^T``, with Bunch-Kaufman
    pivoting: ``D`` is block diagonal with 1x1 and 2x2 blocks.

    ``LD`` (LAPACK ``sytrf``'s compact form, lower) holds the diagonal of
    ``D``, the off-diagonal element of each 2x2 block below its diagonal,
    and the multipliers of ``L`` below those; ``pivots`` (int32) are 1-based:
    ``pivots[k] = p > 0`` is a 1x1 block after interchanging rows and columns
    ``k`` and ``p``, and ``pivots[k] = pivots[k+1] = -p`` a 2x2 block after
    interchanging ``k+1`` and ``p``. Batches of matrices are supported.

    Args:
        A (Tensor): tensor of shape ``(*, n, n)`` (only the lower triangle is read).

    Keyword args:
        hermitian (bool, optional): whether ``A`` is Hermitian (the same as
            symmetric for real inputs). Default: ``False``.
        out (tuple, optional): tuple of two tensors to write the output to.

    Example::

        >>> A = torch.randn(3, 3)
        >>> A = A @ A.mT  # make symmetric
        >>> LD, pivots = torch.linalg.ldl_factor(A)
        >>> B = torch.randn(3, 2)
        >>> X = torch.linalg.ldl_solve(LD, pivots, B)
        >>> torch.allclose(A @ X, B, atol=1e-5)
        True
    """
    LD, piv, info = _C._linalg_ldl_factor_ex(A, hermitian)
    _raise_ldl("torch.linalg.ldl_factor", info)
    return _write_out(return_types.linalg_ldl_factor(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    r"""linalg.ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor

    Computes the solution of a system of linear equations ``A X = B`` using
    the LDL factorization ``(LD, pivots)`` of ``A`` computed by
    :func:`ldl_factor` (LAPACK's ``sytrs``). The batch dims of ``LD`` and
    ``B`` broadcast.

    Args:
        LD (Tensor): the compact factors, shape ``(*, n, n)``.
        pivots (Tensor): the pivots (integers), shape ``(*, n)``.
        B (Tensor): right-hand side, shape ``(*, n, k)``, of ``LD``'s dtype.

    Keyword args:
        hermitian (bool, optional): whether the factors are of a Hermitian
            matrix (the same for real inputs). Default: ``False``.
        out (Tensor, optional): output tensor.
    """
    return _write_out(_C._linalg_ldl_solve(LD, pivots, B, hermitian), out)


# ----- Cholesky ----------------------------------------------------------------------------


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    r"""linalg.cholesky_ex(A, *, upper=False, check_errors=False, out=None) -> (Tensor, Tensor)

    The Cholesky factor of each symmetric positive-definite matrix of ``A``
    and ``info`` (the order of the first leading minor that is not
    positive-definite, or 0).
    """
    _check_square(A, "linalg.cholesky")
    res = _fn("Cholesky").apply(A, upper) if _needs_grad(A) else _C._linalg_cholesky_ex(A, upper)
    if check_errors:
        _raise_singular("linalg.cholesky_ex", res[1], "The factorization could not be completed because the input is "
                        "not positive-definite (the leading minor of order {value} is not positive-definite).")
    return _write_out(return_types.linalg_cholesky_ex(*res), out)


def cholesky(A, *, upper=False, out=None):
    r"""linalg.cholesky(A, *, upper=False, out=None) -> Tensor

    ``L`` with ``A = L L^T`` (``U`` with ``A = U^T U`` when ``upper``) for
    symmetric positive-definite ``A``; only the lower (upper) triangle of
    ``A`` is read. A matrix that is not positive-definite raises
    ``torch.linalg.LinAlgError``.
    """
    L, info = cholesky_ex(A, upper=upper)
    _raise_singular("linalg.cholesky", info, "The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {value} is not positive-definite).")
    return _write_out(L, out)


def torch_cholesky(input, upper=False, *, out=None):
    """``torch.cholesky`` (deprecated in PyTorch in favour of ``torch.linalg.cholesky``)."""
    return cholesky(input, upper=upper, out=out)


def cholesky_solve(B, L, upper=False, *, out=None):
    r"""cholesky_solve(B, L, upper=False, *, out=None) -> Tensor

    Solves ``A X = B`` given the Cholesky factor ``L`` of ``A`` (``U`` when ``upper``).
    """
    if B.dim() < 2 or L.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead"
                           if B.dim() < 2 else f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if upper:
        Y = solve_triangular(_mT(L), B, upper=False)
        X = solve_triangular(L, Y, upper=True)
    else:
        Y = solve_triangular(L, B, upper=False)
        X = solve_triangular(_mT(L), Y, upper=True)
    return _write_out(X, out)


def cholesky_inverse(L, upper=False, *, out=None):
    r"""cholesky_inverse(L, upper=False, *, out=None) -> Tensor

    The inverse of ``A = L L^T`` (``U^T U`` when ``upper``) from its Cholesky factor.
    """
    _check_square(L, "cholesky_inverse", "input")
    return _write_out(cholesky_solve(_eye_like(L).expand(L.shape), L, upper), out)


# ----- QR and eigh -------------------------------------------------------------------------


def qr(A, mode="reduced", *, out=None):
    r"""linalg.qr(A, mode='reduced', *, out=None) -> (Tensor, Tensor)

    ``A = Q R`` with ``Q`` orthonormal columns and ``R`` upper triangular;
    ``mode`` is ``'reduced'`` (``Q`` is ``(*, m, k)``), ``'complete'``
    (``(*, m, m)``) or ``'r'`` (``Q`` empty).
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _check_float(A, "linalg.qr")
    res = _fn("Qr").apply(A, mode) if _needs_grad(A) else _C._linalg_qr(A, mode)
    return _write_out(return_types.linalg_qr(*res), out)


def torch_qr(input, some=True, *, out=None):
    """``torch.qr(input, some=True)``: reduced when ``some``, else complete."""
    Q, R = qr(input, "reduced" if some else "complete")
    return _write_out(return_types.qr(Q, R), out)


def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("U", "u")


def eigh(A, UPLO="L", *, out=None):
    r"""linalg.eigh(A, UPLO='L', *, out=None) -> (Tensor, Tensor)

    The eigenvalues (ascending) and orthonormal eigenvectors (columns) of
    each symmetric matrix of ``A``, read from its lower (``UPLO='L'``) or
    upper triangle. Eigenvectors are unique up to sign.
    """
    upper = _uplo(UPLO)
    _check_square(A, "linalg.eigh")
    res = _fn("Eigh").apply(A, upper) if _needs_grad(A) else _C._linalg_eigh(A, upper, True)
    return _write_out(return_types.linalg_eigh(*res), out)


def eigvalsh(A, UPLO="L", *, out=None):
    r"""linalg.eigvalsh(A, UPLO='L', *, out=None) -> Tensor

    The eigenvalues of each symmetric matrix of ``A`` in ascending order.
    """
    upper = _uplo(UPLO)
    _check_square(A, "linalg.eigvalsh")
    w = _fn("Eigh").apply(A, upper)[0] if _needs_grad(A) else _C._linalg_eigh(A, upper, False)
    return _write_out(w, out)


# ----- triangular solves -------------------------------------------------------------------


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    r"""linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None) -> Tensor

    Solves ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``:
    only its upper (``upper=True``) or lower triangle is read, its diagonal
    taken as ones when ``unitriangular``. Batch dims broadcast.
    """
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    _check_square(A, "linalg.solve_triangular")
    dt = _torch().promote_types(A.dtype, B.dtype)
    A, B = A.to(dt), B.to(dt)
    n = A.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if _needs_grad(A, B):
        X = _fn("SolveTriangular").apply(A, B, upper, left, unitriangular)
    else:
        X = _solve_tri_values(A, B, upper, left, unitriangular)
    return _write_out(X, out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    r"""triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None) -> (Tensor, Tensor)

    The deprecated form of :func:`solve_triangular`: ``(solution, cloned_coefficient)``
    of ``A X = b`` (``A^T X = b`` when ``transpose``).
    """
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_pretty(b.dtype)} "
                           f"and A of type {_pretty(A.dtype)} instead.")
    M = _mT(A) if transpose else A
    X = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return _write_out(return_types.triangular_solve(X, A.clone()), out)


# ----- functions of matrices ---------------------------------------------------------------


def matrix_exp(A):
    r"""linalg.matrix_exp(A) -> Tensor

    The matrix exponential of each square matrix of ``A`` (scaling and
    squaring with the degree-13 Padé approximant, Higham 2005).
    """
    _check_square(A, "linalg.matrix_exp")
    return _fn("MatrixExp").apply(A) if _needs_grad(A) else _matrix_exp_values(A)


def matrix_power(A, n, *, out=None):
    r"""linalg.matrix_power(A, n, *, out=None) -> Tensor

    ``A`` multiplied by itself ``n`` times (the identity for ``n = 0``, the
    inverse's power for ``n < 0``), by repeated squaring.
    """
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else A.dim()} by {A.shape[-1] if A.dim() else 0} matrices")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return _write_out(_eye_like(A).expand(A.shape).clone(), out)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _write_out(result, out)


def _tol(S, m, n, atol, rtol, dtype):
    """PyTorch's singular-value cut-off: ``max(atol, rtol * s_max)``, ``rtol``
    defaulting to ``eps * max(m, n)`` when neither is given."""
    from ._finfo import finfo
    if rtol is None:
        rtol = finfo(dtype).eps * max(m, n) if atol is None or (not _is_t(atol) and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else _C.zeros(S.shape[:-1] + (1,), dtype=S.dtype)
    a = atol if atol is not None else 0.0
    a = a.unsqueeze(-1) if _is_t(a) else a
    r = rtol.unsqueeze(-1) if _is_t(rtol) else rtol
    return _torch().maximum(_as_t(a, S), r * smax)


def _is_t(x):
    return isinstance(x, _C.TensorBase)


def _as_t(x, like):
    return x if _is_t(x) else _C.full((), float(x), dtype=like.dtype, device=like.device)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    r"""linalg.pinv(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    The Moore–Penrose pseudo-inverse of each matrix of ``A`` through its SVD
    (its eigendecomposition when ``hermitian``), singular values below
    ``max(atol, rtol * s_max)`` treated as zero.
    """
    if A.dim() < 2 or A.dtype not in (_C.float32, _C.float64):
        from ._math_ops import _pretty as p
        raise RuntimeError(f"linalg.pinv({p(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more dimensions "
                           "of float, double, cfloat or cdouble types")
    m, n = A.shape[-2], A.shape[-1]
    if hermitian:
        w, V = eigh(A)
        tol = _tol(w.abs(), m, n, atol, rtol, A.dtype)
        winv = _torch().where(w.abs() > tol, 1.0 / w, _C.zeros_like(w))
        return _write_out((V * winv.unsqueeze(-2)) @ _mT(V), out)
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tol(S, m, n, atol, rtol, A.dtype)
    Sinv = _torch().where(S > tol, 1.0 / S, _C.zeros_like(S))
    return _write_out((_mT(Vh) * Sinv.unsqueeze(-2)) @ _mT(U), out)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: :func:`pinv` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None, tol=None):
    r"""linalg.matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    The number of singular values (absolute eigenvalues when ``hermitian``)
    above ``max(atol, rtol * s_max)``, as int64.
    """
    if tol is not None:
        atol, rtol = tol, 0.0
    _check_float(A, "linalg.matrix_rank")
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    cut = _tol(S, A.shape[-2], A.shape[-1], atol, rtol, A.dtype)
    return _write_out((S > cut).sum(-1), out)


def lstsq(A, B, rcond=None, *, driver=None):
    r"""linalg.lstsq(A, B, rcond=None, *, driver=None) -> (Tensor, Tensor, Tensor, Tensor)

    The minimum-norm least-squares solution of ``A X = B`` (through the
    pseudo-inverse, what LAPACK's default ``gelsy`` driver computes for
    full-rank and rank-deficient ``A``), its ``rank``; ``residuals`` and
    ``singular_values`` are empty, as ``gelsy`` returns them.
    """
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not (A.is_floating_point() and B.is_floating_point()):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    from ._finfo import finfo
    m, n = A.shape[-2], A.shape[-1]
    r = finfo(A.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    # one SVD serves the pseudo-inverse and the rank
    U, S, Vh = svd(A, full_matrices=False)
    keep = S > _tol(S.detach(), m, n, None, r, A.dtype)
    Sinv = _torch().where(keep, 1.0 / S, _C.zeros_like(S))
    X = (_mT(Vh) * Sinv.unsqueeze(-2)) @ (_mT(U) @ Bm)
    if vector:
        X = X.squeeze(-1)
    empty = _C.empty(0, dtype=A.dtype, device=A.device)
    rank = keep.sum(-1) if driver != "gels" else _C.empty(0, dtype=_C.int64)
    return return_types.linalg_lstsq(X, empty, rank, empty)


def cond(A, p=None, *, out=None):
    r"""linalg.cond(A, p=None, *, out=None) -> Tensor

    The condition number of each matrix of ``A`` in the norm ``p``: the
    ratio of extreme singular values for ``p`` in ``(None, 2, -2)``, else
    ``norm(A, p) * norm(inv(A), p)`` (square ``A``).
    """
    from .linalg import matrix_norm
    _check_float(A, "linalg.cond")
    if p in (None, 2, -2):
        S = svdvals(A)
        c = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    else:
        _check_square(A, "linalg.cond")
        c = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return _write_out(c, out)


def cross(input, other, *, dim=-1, out=None):
    r"""linalg.cross(input, other, *, dim=-1, out=None) -> Tensor

    The cross product of 3-vectors along ``dim`` (batch dims broadcast).
    """
    from ._products import _linalg_cross
    return _write_out(_linalg_cross(input, other, dim), out)


def vecdot(x, y, *, dim=-1, out=None):
    r"""linalg.vecdot(x, y, *, dim=-1, out=None) -> Tensor

    The dot product of vectors along ``dim`` (batch dims broadcast).
    """
    return _write_out((x * y).sum(dim), out)


def multi_dot(tensors, *, out=None):
    r"""linalg.multi_dot(tensors, *, out=None) -> Tensor

    The product of two or more matrices; the first may be a row vector and
    the last a column vector (1-D), which are squeezed from the result.
    """
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    ts = list(tensors)
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    r = ts[0]
    for t in ts[1:]:
        r = r @ t
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return _write_out(r, out)


def householder_product(A, tau, *, out=None):
    r"""linalg.householder_product(A, tau, *, out=None) -> Tensor

    The first ``n`` columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^T``
    and ``v_i`` the ``i``-th column of ``A`` below the diagonal (a unit on it),
    as LAPACK's ``orgqr``.
    """
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    V = A.tril(-1) + _C.eye(m, n, dtype=A.dtype, device=A.device)
    Q = _C.eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (_mT(v) @ Q))
    return _write_out(Q, out)


def tensorinv(A, ind=2, *, out=None):
    r"""linalg.tensorinv(A, ind=2, *, out=None) -> Tensor

    The inverse of ``A`` seen as a linear map from its last dims to its first ``ind``.
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    outer, inner = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows = math.prod(outer)
    if rows != math.prod(inner):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {math.prod(inner)} != {rows}")
    return _write_out(inv(A.reshape(rows, rows)).reshape(inner + outer), out)


def tensorsolve(A, B, dims=None, *, out=None):
    r"""linalg.tensorsolve(A, B, dims=None, *, out=None) -> Tensor

    ``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims`` are moved to the end of ``A`` first.
    """
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    rows = B.numel()
    if math.prod(rest) != rows:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {math.prod(rest)} != {rows}")
    X = solve(A.reshape(rows, rows), B.reshape(rows))
    return _write_out(X.reshape(rest), out)


def vander(x, *, N=None):
    r"""linalg.vander(x, *, N=None) -> Tensor

    The Vandermonde matrix of ``x`` with increasing powers ``x^0 .. x^{N-1}``
    (``N`` defaulting to ``x.shape[-1]``).
    """
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        if N < 1:
            raise RuntimeError("N must be greater than 1.")
        return _C.ones_like(x).unsqueeze(-1)
    xs = x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,))
    return _torch().cat([_C.ones_like(x).unsqueeze(-1), xs.cumprod(-1)], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    r"""linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor

    ``torch.diagonal`` with the matrix dims as defaults.
    """
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other, *, out=None):
    r"""linalg.matmul(input, other, *, out=None) -> Tensor

    Alias of ``torch.matmul``.
    """
    return _write_out(input @ other, out)
