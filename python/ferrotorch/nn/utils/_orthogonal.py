"""Dense linear-algebra pieces for ``parametrizations.orthogonal``, written with tensor ops
(loops run over matrix columns, never over elements) so that autograd flows through them."""

import math


def _ft():
    import ferrotorch

    return ferrotorch


def matrix_exp(A):
    """``exp(A)`` for a (batch of) square matrices: scaling and squaring around a Taylor series."""
    ft = _ft()
    n = A.size(-1)
    eye = ft.eye(n, dtype=A.dtype)
    norm = float(A.detach().abs().sum(-2).max()) if A.numel() else 0.0
    # Scale so that ||A / 2^s||_1 <= 1/2; 18 Taylor terms then reach well below float64 epsilon.
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 else 0
    X = A / (2.0 ** s) if s else A
    P = eye + X / 18.0
    for k in range(17, 0, -1):
        P = eye + (X @ P) / float(k)
    for _ in range(s):
        P = P @ P
    return P


def householder_product(A, tau):
    """Product of the Householder reflectors stored LAPACK-style in ``A`` (first ``k`` columns of Q)."""
    ft = _ft()
    n, k = A.size(-2), A.size(-1)
    idx = ft.arange(n)
    Q = ft.eye(n, dtype=A.dtype).expand(*A.shape[:-2], n, n)
    for i in range(k - 1, -1, -1):
        col = A[..., :, i]
        v = ft.where(idx > i, col, (idx == i).to(dtype=A.dtype))
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        Q = Q - t * (v.unsqueeze(-1) @ (v.unsqueeze(-2) @ Q))
    return Q[..., :, :k]


def _geqrf_2d(A):
    ft = _ft()
    m, n = A.shape
    R = A.clone()
    taus = []
    for j in range(min(m, n)):
        x = R[j:, j]
        alpha = float(x[0])
        xnorm = float(x[1:].norm()) if m - j > 1 else 0.0
        if xnorm == 0.0:
            taus.append(0.0)
            continue
        beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
        tau = (beta - alpha) / beta
        v = ft.cat([ft.ones(1, dtype=A.dtype), x[1:] / (alpha - beta)])
        block = R[j:, j:]
        block = block - tau * (v.unsqueeze(-1) @ (v.unsqueeze(0) @ block))
        R[j:, j:] = block
        R[j + 1:, j] = v[1:]
        R[j, j] = beta
        taus.append(tau)
    return R, ft.tensor(taus, dtype=A.dtype)


def geqrf(A):
    """LAPACK's ``geqrf``: Householder QR with the reflectors below the diagonal and R above."""
    ft = _ft()
    if A.dim() == 2:
        return _geqrf_2d(A)
    batch = A.shape[:-2]
    flat = A.reshape(-1, A.size(-2), A.size(-1))
    outs = [_geqrf_2d(flat[b]) for b in range(flat.size(0))]
    R = ft.stack([o[0] for o in outs]).reshape(A.shape)
    tau = ft.stack([o[1] for o in outs]).reshape(*batch, -1)
    return R, tau


def solve_unpivoted(M, B):
    """``M^-1 B`` by Gaussian elimination without pivoting (``M = I - A/2`` with skew ``A``:
    its symmetric part is the identity, so every pivot is safe)."""
    ft = _ft()
    n = M.size(-1)
    for j in range(n - 1):
        pivot = M[..., j:j + 1, j:j + 1]
        factors = M[..., j + 1:, j:j + 1] / pivot
        M = ft.cat([M[..., :j + 1, :], M[..., j + 1:, :] - factors * M[..., j:j + 1, :]], dim=-2)
        B = ft.cat([B[..., :j + 1, :], B[..., j + 1:, :] - factors * B[..., j:j + 1, :]], dim=-2)
    rows = [None] * n
    for i in range(n - 1, -1, -1):
        acc = B[..., i:i + 1, :]
        for j in range(i + 1, n):
            acc = acc - M[..., i:i + 1, j:j + 1] * rows[j]
        rows[i] = acc / M[..., i:i + 1, i:i + 1]
    return ft.cat(rows, dim=-2)
