"""``torch.lobpcg``: the k largest (or smallest) eigenpairs of a symmetric
positive-definite generalized eigenproblem ``A x = λ B x`` by the locally
optimal block preconditioned conjugate gradient method (Knyazev 2001).

Each iteration does a Rayleigh–Ritz projection of ``A`` on the span of the
current eigenvector block ``X``, the (preconditioned) residuals ``W`` and the
previous search directions ``P``. The basis is made ``B``-orthonormal by an
eigendecomposition of its Gram matrix that drops directions whose Gram
eigenvalue is negligible next to the largest, as the robust "ortho" variant
does, so both
``method`` values run this same robust iteration. It stops when every
residual ``||A x - λ B x||`` is below ``tol`` relative to
``||x|| (||A X|| / ||X|| + |λ| ||B X|| / ||X||)``, PyTorch's rule (or after
``niter`` iterations). All the work is dense tensor algebra through the native
``eigh``; batches of matrices are solved one after another, as in PyTorch.
The result is differentiable through that algebra when ``A`` requires grad
(PyTorch records its own ``LOBPCGAutogradFunction`` instead).
"""

import math

__all__ = ["lobpcg"]


def _t():
    import ferrotorch
    return ferrotorch


def _b_orthonormal(S, BS_of, tol):
    """A B-orthonormal basis of the columns of ``S`` (dropping near-dependent directions)."""
    torch = _t()
    # Unit columns first, so that the threshold compares directions, not the scales of X, W and P.
    S = S / S.norm(dim=0).clamp_min(1e-300)
    G = S.mT @ BS_of(S)
    G = (G + G.mT) / 2
    w, V = torch.linalg.eigh(G)
    keep = w > tol * w.abs().max().clamp_min(1e-300)
    V, w = V[:, keep], w[keep]
    return S @ (V / w.sqrt())


def _one(A, B, X, iK, k, niter, tol, largest):
    torch = _t()
    Bmul = (lambda Y: B @ Y) if B is not None else (lambda Y: Y)
    X = _b_orthonormal(X, Bmul, 100 * torch.finfo(A.dtype).eps)
    n = X.shape[-1]
    P = None
    E = None
    for it in range(niter if niter >= 0 else 1 << 62):
        AX = A @ X
        T = X.mT @ AX
        T = (T + T.mT) / 2
        w, C = torch.linalg.eigh(T)
        order = torch.argsort(w, descending=largest)
        w, C = w[order], C[:, order]
        X, AX = X @ C, AX @ C
        E = w
        BX = Bmul(X)
        R = AX - BX * E
        # PyTorch's relative residual: ||r|| / (||x|| (||A X|| / ||X|| + |λ| ||B X|| / ||X||)).
        xn = X.norm()
        scale = AX.norm() / xn + E.abs() * (BX.norm() / xn)
        if bool((R.norm(dim=0) < tol * X.norm(dim=0) * scale).all()):
            break
        W = iK @ R if iK is not None else R
        parts = [X, W] + ([P] if P is not None else [])
        S = _b_orthonormal(torch.cat(parts, -1), Bmul, max(tol * tol, 100 * torch.finfo(A.dtype).eps))
        AS = A @ S
        T = S.mT @ AS
        T = (T + T.mT) / 2
        w, C = torch.linalg.eigh(T)
        order = torch.argsort(w, descending=largest)[:n]
        C = C[:, order]
        X_new = S @ C
        # the new search directions: the part of the update outside the old block
        P = X_new - X @ (X.mT @ Bmul(X_new))
        X = X_new
    return E[:k], X[:, :k]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    r"""lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None) -> (Tensor, Tensor)

    Find the k largest (or smallest) eigenvalues and the corresponding
    eigenvectors of a symmetric positive definite generalized eigenvalue
    problem using matrix-free LOBPCG methods.

    Args:
        A (Tensor): the input tensor of size :math:`(*, m, m)`.
        k (integer, optional): the number of requested eigenpairs. Default is the
            number of :math:`X` columns (when specified) or `1`.
        B (Tensor, optional): the input tensor of size :math:`(*, m, m)`. When not
            specified, `B` is interpreted as identity matrix.
        X (tensor, optional): the input tensor of size :math:`(*, m, n)` where
            `k <= n <= m`: the initial approximation of the eigenvectors.
        n (integer, optional): the size of the generated random initial
            approximation when :math:`X` is not given. Default: `k`.
        iK (tensor, optional): a preconditioner of size :math:`(*, m, m)`.
        niter (int, optional): maximum number of iterations (`-1`: until
            convergence). Default: 1000.
        tol (float, optional): residual tolerance for stopping criterion. Default is
            `feps ** 0.5` where `feps` is the dtype's machine epsilon.
        largest (bool, optional): solve for the largest eigenvalues (else the
            smallest). Default: `True`.
        method (str, optional): `"ortho"` (default) or `"basic"`; both run the
            robust orthogonalized iteration here.
        tracker, ortho_iparams, ortho_fparams, ortho_bparams: accepted for
            compatibility; ``ortho_fparams['ortho_tol']`` is honoured.

    Returns:
        E (Tensor): tensor of eigenvalues of size :math:`(*, k)`, largest first
        (smallest first with ``largest=False``).

        X (Tensor): tensor of eigenvectors of size :math:`(*, m, k)`.
    """
    torch = _t()
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.is_floating_point() else torch.float32
    if tol is None:
        tol = {torch.float32: 1.2e-07, torch.float64: 2.23e-16}.get(dtype, 1.2e-07) ** 0.5
    if ortho_fparams and "ortho_tol" in ortho_fparams:
        tol = ortho_fparams["ortho_tol"]
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    if not A.is_floating_point():
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: long int != float")
    niter = 1000 if niter is None else niter
    largest = True if largest is None else largest
    if A.requires_grad or (B is not None and B.requires_grad):
        # As PyTorch, the gradient is made symmetric by symmetrizing the input.
        A = (A + A.mT) / 2
        B = (B + B.mT) / 2 if B is not None else None
    lead = tuple(A.shape[:-2])
    count = math.prod(lead)
    bA = A.reshape((count, m, m))
    bB = B.reshape((count, m, m)) if B is not None else None
    bX = X.reshape((count, m, n)) if X is not None else None
    Es, Xs = [], []
    for i in range(count):
        X0 = torch.randn((m, n), dtype=dtype, device=A.device) if bX is None else bX[i].to(dtype)
        E, V = _one(bA[i], None if bB is None else bB[i], X0, iK, k, niter, tol, largest)
        Es.append(E)
        Xs.append(V)
    E = torch.stack(Es).reshape(lead + (k,))
    V = torch.stack(Xs).reshape(lead + (m, k))
    return E, V
