"""Singular value decomposition for ``torch.linalg.svd`` / ``svdvals``.

The decomposition runs in Python double precision with one-sided (Hestenes)
Jacobi rotations, one matrix of the batch at a time: it is accurate (high
relative accuracy for the singular values) but meant for small matrices; the
cost is O(sweeps * min(m, n)^2 * max(m, n)) Python float operations per matrix.
Gradients go through ``autograd.Function`` nodes (``U diag(gS) Vh`` for the
singular values, PyTorch's ``svd_backward`` formula for the full SVD).
"""

import math
from operator import mul

from . import _C

_EPS = 2.220446049250313e-16


class LinAlgError(RuntimeError):
    """Error from a linear algebra routine (``torch.linalg.LinAlgError``)."""


LinAlgError.__module__ = "torch._C"
LinAlgError.__qualname__ = LinAlgError.__name__ = "_LinAlgError"
_MAX_SWEEPS = 80


def _dot(a, b):
    return sum(map(mul, a, b))


def _jacobi_cols(cols, n_rows):
    """One-sided Jacobi on the columns ``cols`` (``len(cols) <= n_rows``).

    Returns ``(S, U_cols, V_cols)`` with the singular values in descending
    order, ``U_cols`` orthonormal columns of length ``n_rows`` and ``V_cols``
    the columns of the orthogonal ``V`` (length ``len(cols)``).
    """
    n = len(cols)
    V = [[1.0 if i == j else 0.0 for i in range(n)] for j in range(n)]
    tol = _EPS * n_rows
    for _ in range(_MAX_SWEEPS):
        rotated = False
        nrm = [_dot(c, c) for c in cols]
        for p in range(n - 1):
            for q in range(p + 1, n):
                cp, cq = cols[p], cols[q]
                gamma = _dot(cp, cq)
                if gamma == 0.0:
                    continue
                alpha, beta = nrm[p], nrm[q]
                if abs(gamma) <= tol * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                if abs(zeta) > 1e150:
                    t = 0.5 / zeta
                else:
                    t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                nrm[p] = alpha - t * gamma
                nrm[q] = beta + t * gamma
                cols[p] = [c * x - s * y for x, y in zip(cp, cq)]
                cols[q] = [s * x + c * y for x, y in zip(cp, cq)]
                vp, vq = V[p], V[q]
                V[p] = [c * x - s * y for x, y in zip(vp, vq)]
                V[q] = [s * x + c * y for x, y in zip(vp, vq)]
        if not rotated:
            break
    S = [math.sqrt(_dot(c, c)) for c in cols]
    order = sorted(range(n), key=lambda j: -S[j])
    S = [S[j] for j in order]
    V = [V[j] for j in order]
    U = []
    smax = S[0] if S else 0.0
    for j, sj in zip(order, S):
        if sj > 0.0 and sj > smax * _EPS * 1e-3:
            U.append([x / sj for x in cols[j]])
        else:
            U.append(None)
    # complete the columns of U for (numerically) zero singular values
    for j in range(n):
        if U[j] is not None:
            continue
        basis = [u for u in U if u is not None]
        best = None
        for e in range(n_rows):
            v = [0.0] * n_rows
            v[e] = 1.0
            for _ in range(2):
                for u in basis:
                    d = _dot(u, v)
                    v = [x - d * y for x, y in zip(v, u)]
            nv = math.sqrt(_dot(v, v))
            if best is None or nv > best[0]:
                best = (nv, v)
            if nv > 0.5:
                break
        U[j] = [x / best[0] for x in best[1]]
    return S, U, V


def _svd_one(rows, m, n):
    """SVD of one m x n matrix given as a list of rows: ``(U rows, S, Vh rows)``."""
    k = min(m, n)
    if k == 0:
        return [[] for _ in range(m)], [], []
    if any(x != x for r in rows for x in r):
        raise LinAlgError("The algorithm failed to converge because the input matrix contained non-finite values.")
    scale = max(abs(x) for r in rows for x in r)
    if math.isinf(scale):
        # infinite entries (no NaN): LAPACK returns NaN singular values rather than failing
        nan = math.nan
        return [[nan] * k for _ in range(m)], [nan] * k, [[nan] * n for _ in range(k)]
    if scale == 0.0:
        scale = 1.0
    if m >= n:
        cols = [[rows[i][j] / scale for i in range(m)] for j in range(n)]
        S, Uc, Vc = _jacobi_cols(cols, m)
    else:
        # A^T = U' S V'^T  =>  A = V' S U'^T
        cols = [[x / scale for x in r] for r in rows]
        S, Vc, Uc = _jacobi_cols(cols, n)
    S = [s * scale for s in S]
    U = [[Uc[j][i] for j in range(k)] for i in range(m)]
    return U, S, Vc


def _svd_raw(A):
    """Detached ``(U, S, Vh)`` (reduced) of a batched float tensor, in ``A``'s dtype."""
    shape = tuple(A.shape)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    nb = math.prod(batch)
    dt = A.dtype
    if nb == 0 or k == 0:
        U = _C.zeros(batch + (m, k), dtype=dt)
        S = _C.zeros(batch + (k,), dtype=dt)
        Vh = _C.zeros(batch + (k, n), dtype=dt)
        if k == 0 or nb == 0:
            return U, S, Vh
    data = A.detach().to(_C.float64).reshape(nb, m, n).tolist()
    Us, Ss, Vs = [], [], []
    for b, mat in enumerate(data):
        try:
            U, S, Vh = _svd_one(mat, m, n)
        except LinAlgError as e:
            prefix = f"(Batch element {b}): " if batch else ""
            raise LinAlgError(f"linalg.svd: {prefix}{e}") from None
        Us.append(U)
        Ss.append(S)
        Vs.append(Vh)
    mk = lambda x, s: _C.tensor(x, dtype=_C.float64).reshape(s).to(dt)  # noqa: E731
    return mk(Us, batch + (m, k)), mk(Ss, batch + (k,)), mk(Vs, batch + (k, n))


def _check(A, fname="linalg.svd"):
    if not A.is_floating_point():
        from ._math_ops import _pretty
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got {_pretty(A.dtype)}")
    if A.dim() < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if A.dtype not in (_C.float32, _C.float64):
        from ._math_ops import _pretty
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{_pretty(A.dtype)}'")


def _mT(x):
    return x.transpose(-2, -1)


def _diag_embed(v):
    k = v.shape[-1]
    return v.unsqueeze(-1) * _C.eye(k, dtype=v.dtype)


def _make_functions():
    from .autograd import Function

    class SvdvalsBackward(Function):
        @staticmethod
        def forward(ctx, A):
            U, S, Vh = _svd_raw(A)
            ctx.save_for_backward(U, Vh)
            return S

        @staticmethod
        def backward(ctx, gS):
            U, Vh = ctx.saved_tensors
            return (U * gS.unsqueeze(-2)) @ Vh

    class SvdBackward(Function):
        @staticmethod
        def forward(ctx, A):
            ctx.set_materialize_grads(False)
            U, S, Vh = _svd_raw(A)
            ctx.save_for_backward(U, S, Vh)
            return U, S, Vh

        @staticmethod
        def backward(ctx, gU, gS, gVh):
            U, S, Vh = ctx.saved_tensors
            m, n = U.shape[-2], Vh.shape[-1]
            k = S.shape[-1]
            if gU is None and gVh is None:
                if gS is None:
                    return None
                return (U * gS.unsqueeze(-2)) @ Vh
            V = _mT(Vh)
            gV = None if gVh is None else _mT(gVh)
            Srow = S.unsqueeze(-2)
            S2 = S * S
            E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _C.eye(k, dtype=S.dtype)
            gA = None
            if gU is not None:
                UhgU = _mT(U) @ gU
                UhgU = UhgU - _mT(UhgU)
                gA = UhgU * Srow
            if gV is not None:
                VhgV = _mT(V) @ gV
                VhgV = VhgV - _mT(VhgV)
                t = S.unsqueeze(-1) * VhgV
                gA = t if gA is None else gA + t
            gA = gA / E
            if gS is not None:
                gA = gA + _diag_embed(gS)
            if m > k and gU is not None:
                gA = U @ gA
                gUSinv = gU / Srow
                gA = gA + gUSinv - U @ (_mT(U) @ gUSinv)
                gA = gA @ Vh
            elif n > k and gV is not None:
                gA = gA @ Vh
                gVSinv = gV / Srow
                gA = gA + _mT(gVSinv) - (_mT(gVSinv) @ V) @ Vh
                gA = U @ gA
            else:
                gA = U @ (gA @ Vh)
            return gA

    return SvdvalsBackward, SvdBackward


_FNS = None


def _fns():
    global _FNS
    if _FNS is None:
        _FNS = _make_functions()
    return _FNS


def svdvals(A, *, driver=None, out=None):
    r"""linalg.svdvals(A, *, driver=None, out=None) -> Tensor

    The singular values of ``A`` (shape ``(*, m, n)``, float32/float64) in
    descending order, shape ``(*, min(m, n))``; differentiable.
    """
    _check(A)
    if A.device.type == "meta":
        return _meta_svd(A, False)[1]
    S = _fns()[0].apply(A)
    if out is not None:
        from ._math_ops import _write_out
        return _write_out(S, out)
    return S


def svd(A, full_matrices=True, *, driver=None, out=None):
    r"""linalg.svd(A, full_matrices=True, *, driver=None, out=None) -> (Tensor, Tensor, Tensor)

    ``A = U diag(S) Vh`` with ``S`` descending. With ``full_matrices=False``
    ``U`` is ``(*, m, k)`` and ``Vh`` ``(*, k, n)`` (``k = min(m, n)``) and all
    three are differentiable; with ``full_matrices=True`` and a non-square
    ``A`` the extra columns of ``U`` (rows of ``Vh``) carry no gradient.
    """
    _check(A)
    m, n = A.shape[-2], A.shape[-1]
    if A.device.type == "meta":
        return _svd_rt(*_meta_svd(A, full_matrices))
    U, S, Vh = _fns()[1].apply(A)
    if full_matrices and m != n:
        # the extra orthonormal columns carry no gradient (PyTorch refuses it in backward)
        from ._shape_ops import cat
        k = min(m, n)
        if m > k:
            U = cat([U, _complete(U.detach(), m)[..., k:]], -1)
        else:
            Vh = cat([Vh, _mT(_complete(_mT(Vh.detach()), n))[..., k:, :]], -2)
    res = _svd_rt(U, S, Vh)
    if out is not None:
        from ._math_ops import _write_out
        for o, r in zip(out, res):
            _write_out(r, o)
        return out
    return res


def _meta_svd(A, full_matrices):
    """Empty ``(U, S, Vh)`` of a meta ``A`` with PyTorch's shapes and strides (``U``
    column-major, as LAPACK returns it; ``Vh`` row-major)."""
    batch, (m, n) = tuple(A.shape[:-2]), tuple(A.shape[-2:])
    k = min(m, n)
    mu, nv = (m, n) if full_matrices else (k, k)
    U = _C.empty(*batch, mu, m, dtype=A.dtype, device=A.device).transpose(-2, -1)
    Vh = _C.empty(*batch, nv, n, dtype=A.dtype, device=A.device)
    return U, _C.empty(*batch, k, dtype=A.dtype, device=A.device), Vh


def _svd_rt(*vals):
    from ._math_ops import return_types
    return return_types.linalg_svd(*vals)


def torch_svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``); reduced unless ``some=False``.

    With ``compute_uv=False`` only ``S`` is computed and ``U``, ``V`` are
    zero-filled ``(*, m, m)`` and ``(*, n, n)``.
    """
    from ._math_ops import return_types, _write_out
    if compute_uv:
        U, S, Vh = svd(input, full_matrices=not some)
        res = return_types.svd(U, S, _mT(Vh))
    else:
        S = svdvals(input)
        b, m, n = tuple(input.shape[:-2]), input.shape[-2], input.shape[-1]
        res = return_types.svd(_C.zeros(b + (m, m), dtype=S.dtype), S, _C.zeros(b + (n, n), dtype=S.dtype))
    return _write_out(res, out)


def _complete(Q, m):
    """Extends the orthonormal columns of ``Q`` (*, m, k) to an orthogonal (*, m, m)."""
    shape = tuple(Q.shape)
    batch, k = shape[:-2], shape[-1]
    if k == m:
        return Q
    nb = math.prod(batch)
    if nb == 0:
        return _C.zeros(batch + (m, m), dtype=Q.dtype)
    data = Q.to(_C.float64).reshape(nb, m, k).tolist()
    res = []
    for mat in data:
        basis = [[mat[i][j] for i in range(m)] for j in range(k)]
        e = 0
        while len(basis) < m:
            v = [0.0] * m
            v[e] = 1.0
            e += 1
            for _ in range(2):
                for u in basis:
                    d = _dot(u, v)
                    v = [x - d * y for x, y in zip(v, u)]
            nv = math.sqrt(_dot(v, v))
            if nv > 1e-8:
                basis.append([x / nv for x in v])
        res.append([[basis[j][i] for j in range(m)] for i in range(m)])
    return _C.tensor(res, dtype=_C.float64).reshape(batch + (m, m)).to(Q.dtype)
