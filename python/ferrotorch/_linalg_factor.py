"""Factorisation-based ``torch.linalg`` functions and their gradients.

The native kernels (``_C._linalg_lu_factor_ex``, ``_linalg_lu_solve``,
``_linalg_cholesky_ex``, ``_linalg_qr``, ``_linalg_eigh``,
``_linalg_solve_triangular``; ``faer`` on the CPU) return detached factors,
column-major as LAPACK's. Here they become PyTorch's functions, and
``autograd.Function`` nodes carrying PyTorch's backward-node names
(``LinalgSolveExBackward0``, ``LinalgCholeskyExBackward0``, ...) record the
derivative formulas of PyTorch's ``FunctionsManual.cpp`` for real inputs.
"""

from . import _C
from ._math_ops import _pretty, return_types, _rt
from ._svd import LinAlgError, _mT  # noqa: F401 - LinAlgError is re-exported to _linalg_functions

for _name, _fields in (
    ("linalg_lu_factor", ("LU", "pivots")), ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
    ("linalg_lu", ("P", "L", "U")), ("lu_unpack", ("P", "L", "U")),
    ("linalg_cholesky_ex", ("L", "info")), ("linalg_inv_ex", ("inverse", "info")),
    ("linalg_solve_ex", ("result", "info")), ("linalg_qr", ("Q", "R")), ("qr", ("Q", "R")),
    ("linalg_eigh", ("eigenvalues", "eigenvectors")), ("linalg_slogdet", ("sign", "logabsdet")),
    ("slogdet", ("sign", "logabsdet")), ("triangular_solve", ("solution", "cloned_coefficient")),
    ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
    ("linalg_ldl_factor", ("LD", "pivots")), ("linalg_ldl_factor_ex", ("LD", "pivots", "info")),
):
    setattr(return_types, _name, _rt(_name, _fields))


def _torch():
    """The ``ferrotorch`` package (imported lazily: this module loads during its import)."""
    import ferrotorch
    return ferrotorch


def _needs_grad(*ts):
    return _C.is_grad_enabled() and any(getattr(t, "requires_grad", False) for t in ts)


def _eye_like(A, n=None):
    n = A.shape[-1] if n is None else n
    return _C.eye(n, dtype=A.dtype, device=A.device)


def _batch_prefix(info, index):
    """PyTorch's ``(Batch element i): `` prefix when the input was batched."""
    return f"(Batch element {index}): " if info.dim() > 0 else ""


def _first_bad(info):
    """``(flat batch index, info value)`` of the first nonzero ``info``, or None
    (a meta tensor has no values: PyTorch's meta kernels skip the check)."""
    if info.device.type == "meta" or info.numel() == 0:
        return None
    flat = info.reshape(-1)
    bad = (flat != 0).nonzero()
    if bad.numel() == 0:
        return None
    i = int(bad[0, 0])
    return i, int(flat[i])


def _check_float(A, fname):
    if not A.is_floating_point():
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got {_pretty(A.dtype)}")


def _check_square(A, fname, name="A"):
    if A.dim() < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")
    _check_float(A, fname)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: {name} must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")


def _named(cls, name):
    cls._backward_name = name
    return cls


# ----- permutations from LAPACK pivots ------------------------------------------------------


def _pivots_to_perm(pivots, m):
    """``perm`` with row ``i`` of ``P^T A`` being row ``perm[i]`` of ``A``, from
    LAPACK's 1-based ``pivots`` (swaps applied in order); ``(*, m)`` int64."""
    lead = tuple(pivots.shape[:-1])
    perm = _C.arange(m, device=pivots.device).expand(lead + (m,)).contiguous()
    piv = pivots.long() - 1
    for i in range(pivots.shape[-1]):
        j = piv[..., i:i + 1]
        at_i = perm[..., i:i + 1].clone()
        at_j = perm.gather(-1, j)
        perm[..., i:i + 1] = at_j
        perm.scatter_(-1, j, at_i)
    return perm


def _perm_matrix(perm, dtype):
    """``P`` with ``A = P (P^T A)``: ``P[r, i] = (perm[i] == r)``."""
    m = perm.shape[-1]
    rows = _C.arange(m, device=perm.device).unsqueeze(-1)
    return (perm.unsqueeze(-2) == rows).to(dtype)


def _unpack_lu(LU, pivots, dtype=None):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + _C.eye(m, k, dtype=LU.dtype, device=LU.device)
    U = LU[..., :k, :].triu()
    P = _perm_matrix(_pivots_to_perm(pivots, m), LU.dtype if dtype is None else dtype)
    return P, L, U


# ----- autograd nodes -----------------------------------------------------------------------


def _make_functions():
    from .autograd import Function

    class LuFactor(Function):
        @staticmethod
        def forward(ctx, A):
            LU, piv, info = _C._linalg_lu_factor_ex(A)
            ctx.mark_non_differentiable(piv, info)
            ctx.save_for_backward(LU, piv)
            return LU, piv, info

        @staticmethod
        def backward(ctx, gLU, _gp, _gi):
            LU, piv = ctx.saved_tensors
            m, n = LU.shape[-2], LU.shape[-1]
            P, L, U = _unpack_lu(LU, piv)

            def left_solve_lt(Lk, B):  # Lk^{-T} B, Lk unit lower triangular
                return _C._linalg_solve_triangular(_mT(Lk), B, True, True)

            def right_solve_ut(B, Uk):  # B Uk^{-T}, Uk upper triangular
                return _mT(_C._linalg_solve_triangular(Uk, _mT(B), True, False))

            # A = P L U with the packed gradient split into gL (strictly lower) and gU.
            if m == n:
                # gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}.
                phi = (_mT(L) @ gLU.tril(-1)).tril(-1) + (gLU.triu() @ _mT(U)).triu()
                return P @ right_solve_ut(left_solve_lt(L, phi), U)
            if m < n:
                # Wide: U = [U1 | U2]. gA1 = P L^{-T} (tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T)) U1^{-T},
                # gA2 = P L^{-T} gU2.
                U1, U2 = U[..., :, :m], U[..., :, m:]
                g1, gU2 = gLU[..., :, :m], gLU[..., :, m:]
                phi = (_mT(L) @ g1.tril(-1) - gU2 @ _mT(U2)).tril(-1) + (g1.triu() @ _mT(U1)).triu()
                gA1 = right_solve_ut(left_solve_lt(L, phi), U1)
                return P @ _C._cat([gA1, left_solve_lt(L, gU2)], -1)
            # Tall: L = [L1; L2]. gB1 = L1^{-T} (tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2)) U^{-T},
            # gB2 = gL2 U^{-T}, gA = P [gB1; gB2].
            L1, L2 = L[..., :n, :], L[..., n:, :]
            g1, gL2 = gLU[..., :n, :], gLU[..., n:, :]
            phi = (_mT(L1) @ g1.tril(-1)).tril(-1) + (g1.triu() @ _mT(U) - _mT(L2) @ gL2).triu()
            gB1 = right_solve_ut(left_solve_lt(L1, phi), U)
            return P @ _C._cat([gB1, right_solve_ut(gL2, U)], -2)

    class LuSolve(Function):
        @staticmethod
        def forward(ctx, LU, piv, B, adjoint):
            X = _C._linalg_lu_solve(LU, piv, B, adjoint)
            ctx.save_for_backward(LU, piv, X)
            ctx.adjoint, ctx.shapes = adjoint, (LU.shape, B.shape)
            return X

        @staticmethod
        def backward(ctx, gX):
            LU, piv, X = ctx.saved_tensors
            gB = _C._linalg_lu_solve(LU, piv, gX, not ctx.adjoint)
            gLU = None
            if ctx.needs_input_grad[0]:
                # the gradient of the matrix A = P L U the factors stand for,
                # taken back to the packed factors
                gA = -(X @ _mT(gB)) if ctx.adjoint else -(gB @ _mT(X))
                P, L, U = _unpack_lu(LU, piv)
                PtgA = _mT(P) @ gA
                gLU = _sum_to((PtgA @ _mT(U)).tril(-1) + (_mT(L) @ PtgA).triu(), ctx.shapes[0])
            return gLU, None, _sum_to(gB, ctx.shapes[1]), None

    class Solve(Function):
        @staticmethod
        def forward(ctx, A, B):
            LU, piv, info = _C._linalg_lu_factor_ex(A)
            X = _C._linalg_lu_solve(LU, piv, B, False)
            ctx.mark_non_differentiable(info)
            ctx.save_for_backward(LU, piv, X)
            ctx.shapes = (A.shape, B.shape)
            return X, info

        @staticmethod
        def backward(ctx, gX, _gi):
            LU, piv, X = ctx.saved_tensors
            gB = _C._linalg_lu_solve(LU, piv, gX, True)
            gA = -(gB @ _mT(X)) if ctx.needs_input_grad[0] else None
            return _sum_to(gA, ctx.shapes[0]), _sum_to(gB, ctx.shapes[1])

    class Inv(Function):
        @staticmethod
        def forward(ctx, A):
            LU, piv, info = _C._linalg_lu_factor_ex(A)
            Ainv = _C._linalg_lu_solve(LU, piv, _eye_like(A).expand(A.shape), False)
            ctx.mark_non_differentiable(info)
            ctx.save_for_backward(Ainv)
            return Ainv, info

        @staticmethod
        def backward(ctx, g, _gi):
            (Ainv,) = ctx.saved_tensors
            AinvT = _mT(Ainv)
            return -(AinvT @ g @ AinvT)

    class Det(Function):
        @staticmethod
        def forward(ctx, A):
            d = _det_values(A)
            ctx.save_for_backward(A, d)
            return d

        @staticmethod
        def backward(ctx, g):
            A, d = ctx.saved_tensors
            return _det_grad(A, d, g)

    class Slogdet(Function):
        @staticmethod
        def forward(ctx, A):
            sign, logabs = _slogdet_values(A)
            # PyTorch records the node on both outputs; a real sign is
            # piecewise constant, so its incoming gradient adds nothing.
            ctx.save_for_backward(A)
            return sign, logabs

        @staticmethod
        def backward(ctx, _gs, glog):
            (A,) = ctx.saved_tensors
            # d log|det A| = A^{-T}
            LU, piv, _ = _C._linalg_lu_factor_ex(A)
            AinvT = _C._linalg_lu_solve(LU, piv, _eye_like(A).expand(A.shape), True)
            return glog.unsqueeze(-1).unsqueeze(-1) * AinvT

    class Cholesky(Function):
        @staticmethod
        def forward(ctx, A, upper):
            L, info = _C._linalg_cholesky_ex(A, upper)
            ctx.mark_non_differentiable(info)
            ctx.save_for_backward(L)
            ctx.upper = upper
            return L, info

        @staticmethod
        def backward(ctx, gL, _gi):
            (L,) = ctx.saved_tensors
            if ctx.upper:
                L, gL = _mT(L), _mT(gL)
            # gA = L^{-T} Phi(L^T gL) L^{-1}, Phi = lower triangle with the
            # diagonal halved, then symmetrised.
            phi = (_mT(L) @ gL).tril()
            phi = phi - 0.5 * _torch().diag_embed(phi.diagonal(0, -2, -1))
            gA = _C._linalg_solve_triangular(_mT(L), phi, True, False)
            gA = _mT(_C._linalg_solve_triangular(_mT(L), _mT(gA), True, False))
            return 0.5 * (gA + _mT(gA)), None

    class Qr(Function):
        @staticmethod
        def forward(ctx, A, mode):
            Q, R = _C._linalg_qr(A, mode)
            ctx.save_for_backward(A, Q, R)
            ctx.mode = mode
            return Q, R

        @staticmethod
        def backward(ctx, gQ, gR):
            A, Q, R = ctx.saved_tensors
            m, n = A.shape[-2], A.shape[-1]
            if ctx.mode == "r":
                raise RuntimeError(
                    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                    "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
            if ctx.mode == "complete" and m > n:
                raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
            if gQ is None:
                gQ = _C.zeros_like(Q)
            if gR is None:
                gR = _C.zeros_like(R)
            if m >= n:
                return _qr_backward_tall(Q, R, gQ, gR), None
            # A = [X | Y] with X square: R = [U | V], Y = Q V.
            U, gU, gV = R[..., :, :m], gR[..., :, :m], gR[..., :, m:]
            Y = A[..., :, m:]
            gY = Q @ gV
            gX = _qr_backward_tall(Q, U, gQ + Y @ _mT(gV), gU)
            return _torch().cat([gX, gY], -1), None

    class Eigh(Function):
        @staticmethod
        def forward(ctx, A, upper):
            w, V = _C._linalg_eigh(A, upper, True)
            ctx.save_for_backward(w, V)
            return w, V

        @staticmethod
        def backward(ctx, gw, gV):
            w, V = ctx.saved_tensors
            inner = _C.zeros_like(V) if gV is None else _eigh_inner(w, V, gV)
            if gw is not None:
                inner = inner + _torch().diag_embed(gw)
            gA = V @ inner @ _mT(V)
            # PyTorch returns the symmetric part (the gradient of a function
            # of the symmetric matrix, whichever triangle was read).
            return 0.5 * (gA + _mT(gA)), None

    class SolveTriangular(Function):
        @staticmethod
        def forward(ctx, A, B, upper, left, unit):
            X = _solve_tri_values(A, B, upper, left, unit)
            ctx.save_for_backward(A, X)
            ctx.args = (upper, left, unit, A.shape, B.shape)
            return X

        @staticmethod
        def backward(ctx, gX):
            A, X = ctx.saved_tensors
            upper, left, unit, ashape, bshape = ctx.args
            gB = _solve_tri_values(_mT(A), gX, not upper, left, unit)
            gA = None
            if ctx.needs_input_grad[0]:
                gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
                gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
            return _sum_to(gA, ashape), _sum_to(gB, bshape), None, None, None

    class MatrixExp(Function):
        @staticmethod
        def forward(ctx, A):
            ctx.save_for_backward(A)
            return _matrix_exp_values(A)

        @staticmethod
        def backward(ctx, g):
            (A,) = ctx.saved_tensors
            # The Fréchet derivative: the top-right block of exp([[A^T, g], [0, A^T]]).
            n = A.shape[-1]
            top = _torch().cat([_mT(A), g], -1)
            bottom = _torch().cat([_C.zeros_like(A), _mT(A)], -1)
            return _matrix_exp_values(_torch().cat([top, bottom], -2))[..., :n, n:]

    names = {
        LuFactor: "LinalgLuFactorExBackward0", LuSolve: "LinalgLuSolveBackward0", Solve: "LinalgSolveExBackward0",
        Inv: "LinalgInvExBackward0", Det: "LinalgDetBackward0", Slogdet: "LinalgSlogdetBackward0",
        Cholesky: "LinalgCholeskyExBackward0", Qr: "LinalgQrBackward0", Eigh: "LinalgEighBackward0",
        SolveTriangular: "LinalgSolveTriangularBackward0", MatrixExp: "LinalgMatrixExpBackward0",
    }
    for cls, name in names.items():
        _named(cls, name)
    return {cls.__name__: cls for cls in names}


_FNS = None


def _fn(name):
    global _FNS
    if _FNS is None:
        _FNS = _make_functions()
    return _FNS[name]


def _sum_to(g, shape):
    """``g`` summed over the batch dims it was broadcast to from ``shape`` (a
    falsy ``shape`` means no gradient)."""
    if g is None or not shape:
        return None
    return g.sum_to_size(tuple(shape))
    lead = g.dim() - len(shape)
    if lead > 0:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


def _qr_backward_tall(Q, R, gQ, gR):
    """``gA`` for ``A = Q R`` with ``m >= n`` (reduced): ``(gQ + Q copyltu(M)) R^{-T}``,
    ``M = R gR^T - gQ^T Q``."""
    M = R @ _mT(gR) - _mT(gQ) @ Q
    M = M.tril() + M.tril(-1).transpose(-2, -1)
    X = gQ + Q @ M
    return _mT(_C._linalg_solve_triangular(R, _mT(X), True, False))


def _eigh_inner(w, V, gV):
    """``F ∘ (V^T gV)`` with ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal
    (PyTorch's ``linalg_eig_backward`` for Hermitian input)."""
    VtgV = _mT(V) @ gV
    E = w.unsqueeze(-2) - w.unsqueeze(-1)
    E = E + _eye_like(V).expand(E.shape) * 1.0  # keep the diagonal finite; it is zeroed below
    inner = VtgV / E
    return inner - _torch().diag_embed(inner.diagonal(0, -2, -1))


def _solve_tri_values(A, B, upper, left, unit):
    if left:
        return _C._linalg_solve_triangular(A, B, upper, unit)
    # X A = B  <=>  A^T X^T = B^T
    return _mT(_C._linalg_solve_triangular(_mT(A), _mT(B), not upper, unit))


# ----- determinants ------------------------------------------------------------------------


def _slogdet_values(A):
    LU, piv, _ = _C._linalg_lu_factor_ex(A)
    diag = LU.diagonal(0, -2, -1)
    n = A.shape[-1]
    swaps = (piv != _C.arange(1, n + 1, dtype=piv.dtype, device=piv.device)).sum(-1)
    sign = (1 - 2 * (swaps % 2)).to(A.dtype) * diag.sign().prod(-1)
    logabs = diag.abs().log().sum(-1)
    return sign, logabs


def _det_values(A):
    LU, piv, _ = _C._linalg_lu_factor_ex(A)
    n = A.shape[-1]
    swaps = (piv != _C.arange(1, n + 1, dtype=piv.dtype, device=piv.device)).sum(-1)
    return (1 - 2 * (swaps % 2)).to(A.dtype) * LU.diagonal(0, -2, -1).prod(-1)


def _det_grad(A, d, g):
    """``g`` times the gradient of ``det A``: ``det A A^{-T}``, and zero where
    ``det A`` is zero (what PyTorch 2.13's ``linalg_det_backward`` gives on the CPU)."""
    LU, piv, _ = _C._linalg_lu_factor_ex(A)
    d = d.unsqueeze(-1).unsqueeze(-1)
    g_inv = (g.unsqueeze(-1).unsqueeze(-1) * d) * _C._linalg_lu_solve(LU, piv, _eye_like(A).expand(A.shape), True)
    return _torch().where(d == 0, _C.zeros_like(g_inv), g_inv)


# ----- matrix exponential ------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential
# revisited": the degree-13 Padé approximant and its 1-norm threshold.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _matrix_exp_values(A):
    import math

    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    norm1 = A.abs().sum(-2).amax(-1)
    s = 0
    if A.device.type != "meta":
        top = float(norm1.max())
        if top > _THETA13 and math.isfinite(top):
            s = max(0, math.ceil(math.log2(top / _THETA13)))
    A = A / (2.0 ** s)
    b = _PADE13
    I = _eye_like(A).expand(A.shape)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * I)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * I
    P, Q = V + U, V - U
    LU, piv, _ = _C._linalg_lu_factor_ex(Q)
    R = _C._linalg_lu_solve(LU, piv, P, False)
    for _ in range(s):
        R = R @ R
    return R
