"""Singular value decomposition for ``torch.linalg.svd`` / ``svdvals``.

The decomposition is the native ``linalg_svd`` of the tensor's backend
(one-sided Jacobi rotations in double precision on the CPU, batched over the
leading dims); it returns detached factors, with ``U`` column-major and
``Vh`` row-major as PyTorch lays them out. Gradients go through
``autograd.Function`` nodes here (``U diag(gS) Vh`` for the singular values,
PyTorch's ``svd_backward`` formula for the full SVD).
"""

from . import _C

# ``torch._C._LinAlgError``, what ``torch.linalg.LinAlgError`` names; the
# native kernels raise it.
LinAlgError = _C._LinAlgError


def _needs_grad(A):
    return getattr(A, "requires_grad", False) and _C.is_grad_enabled()


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
            U, S, Vh = _C._linalg_svd(A, False)
            ctx.save_for_backward(U, Vh)
            return S

        @staticmethod
        def backward(ctx, gS):
            U, Vh = ctx.saved_tensors
            return (U * gS.unsqueeze(-2)) @ Vh

    class SvdBackward(Function):
        @staticmethod
        def forward(ctx, A, full_matrices):
            ctx.set_materialize_grads(False)
            U, S, Vh = _C._linalg_svd(A, full_matrices)
            k = S.shape[-1]
            # the extra orthonormal columns of a full U (rows of Vh) carry no
            # gradient (PyTorch refuses one in backward): the formula uses the
            # reduced factors
            ctx.save_for_backward(U[..., :k], S, Vh[..., :k, :])
            return U, S, Vh

        @staticmethod
        def backward(ctx, gU, gS, gVh):
            U, S, Vh = ctx.saved_tensors
            m, n = U.shape[-2], Vh.shape[-1]
            k = S.shape[-1]
            if gU is not None:
                gU = gU[..., :k]
            if gVh is not None:
                gVh = gVh[..., :k, :]
            if gU is None and gVh is None:
                if gS is None:
                    return None, None
                return (U * gS.unsqueeze(-2)) @ Vh, None
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
            return gA, None

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
    S = _fns()[0].apply(A) if _needs_grad(A) else _C._linalg_svd(A, False, False)
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
    if _needs_grad(A):
        res = _svd_rt(*_fns()[1].apply(A, full_matrices))
    else:
        res = _svd_rt(*_C._linalg_svd(A, full_matrices))
    if out is not None:
        from ._math_ops import _write_out
        for o, r in zip(out, res):
            _write_out(r, o)
        return out
    return res


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
