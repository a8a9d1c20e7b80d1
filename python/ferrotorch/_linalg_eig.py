"""``torch.linalg.eig`` and ``eigvals``: the eigendecomposition of general
(non-symmetric) real or complex matrices, always complex, on the native
kernel (``_C._linalg_eig``; ``faer`` on the CPU), with PyTorch's
``LinalgEigBackward0``.

Eigenvectors have unit Euclidean norm with their largest component real and
positive, as LAPACK's ``geev`` returns them; an eigenvector is still only
defined up to that choice, so losses should not depend on its phase. The
eigenvalues' order is the algorithm's (LAPACK's may differ).
"""

from . import _C
from ._math_ops import return_types, _rt, _write_out

return_types.linalg_eig = _rt("linalg_eig", ("eigenvalues", "eigenvectors"))

__all__ = ["eig", "eigvals"]


def _torch():
    import ferrotorch
    return ferrotorch


def _check(A, fname):
    if A.dim() < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        A.dtype.to_complex()  # PyTorch's "Unknown Complex ScalarType for Long"
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")


def _complex_solve(M, Y):
    """``M^{-1} Y`` for complex ``M``, through the real system ``[[Re, -Im], [Im, Re]]``."""
    T = _torch()
    Mr, Mi = M.real, M.imag
    big = T.cat([T.cat([Mr, -Mi], -1), T.cat([Mi, Mr], -1)], -2)
    X = T.linalg.solve(big, T.cat([Y.real, Y.imag], -2))
    n = M.shape[-1]
    return T.complex(X[..., :n, :].contiguous(), X[..., n:, :].contiguous())


def _eig_backward(A_is_real, L, V, gL, gV):
    """PyTorch's ``linalg_eig_backward``: ``V^{-H} (diag(gL) + F) V^H`` with
    ``F = (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(L_j - L_i)`` off the diagonal."""
    T = _torch()
    Vh = V.mH
    if gV is None:
        inner = T.zeros_like(V)
    else:
        VhgV = Vh @ gV
        re_diag = VhgV.diagonal(0, -2, -1).real
        inner = VhgV - Vh @ (V * re_diag.unsqueeze(-2))
        E = (L.unsqueeze(-2) - L.unsqueeze(-1)).conj()
        E = E + T.eye(L.shape[-1], dtype=L.dtype, device=L.device)  # diagonal zeroed below
        inner = inner / E
        inner = inner - T.diag_embed(inner.diagonal(0, -2, -1))
    if gL is not None:
        inner = inner + T.diag_embed(gL)
    gA = _complex_solve(Vh, inner @ Vh)
    return gA.real.contiguous() if A_is_real else gA


_EIG = None


def _eig_function():
    global _EIG
    if _EIG is None:
        from .autograd import Function

        class Eig(Function):
            @staticmethod
            def forward(ctx, A):
                L, V = _C._linalg_eig(A, True)
                ctx.save_for_backward(L, V)
                ctx.real = not A.is_complex()
                return L, V

            @staticmethod
            def backward(ctx, gL, gV):
                L, V = ctx.saved_tensors
                return _eig_backward(ctx.real, L, V, gL, gV)

        Eig._backward_name = "LinalgEigBackward0"
        _EIG = Eig
    return _EIG


def _needs_grad(A):
    return _C.is_grad_enabled() and A.requires_grad


def eig(A, *, out=None):
    r"""linalg.eig(A, *, out=None) -> (Tensor, Tensor)

    The eigenvalues and eigenvectors (columns) of each square matrix of ``A``,
    real or complex; both results are complex (``complex64`` for float32
    input, ``complex128`` for float64). ``A = V diag(L) V^{-1}``.
    """
    _check(A, "linalg.eig")
    res = _eig_function().apply(A) if _needs_grad(A) else _C._linalg_eig(A, True)
    return _write_out(return_types.linalg_eig(*res), out)


def eigvals(A, *, out=None):
    r"""linalg.eigvals(A, *, out=None) -> Tensor

    The eigenvalues of each square matrix of ``A`` (complex, see :func:`eig`).
    """
    _check(A, "linalg.eigvals")
    L = _eig_function().apply(A)[0] if _needs_grad(A) else _C._linalg_eig(A, False)
    return _write_out(L, out)
