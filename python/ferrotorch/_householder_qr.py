"""The QR decomposition in LAPACK's Householder form: ``geqrf`` (the reflectors
and ``R`` packed in one matrix, with their scalars ``tau``), ``orgqr`` (``Q``
from them, ``linalg.householder_product``) and ``ormqr`` (a product with ``Q``
without forming it), as ``torch.*`` functions and ``Tensor`` methods.

``geqrf`` follows LAPACK's ``dgeqr2``/``dlarfg``: column ``k``'s reflector
``H_k = I - tau_k v_k v_kᵀ`` (``v_k`` with a unit at ``k``) maps the column's
trailing part to ``beta e_k`` with ``beta = -sign(alpha) ||x||``; a column
already zero below the diagonal gets ``tau = 0``. It is batched tensor algebra,
one step per column (no loop over elements), and, as in PyTorch, has no
derivative (``GeqrfBackward0`` raises).
"""

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _pretty, _write_out, return_types, _rt
from ._linalg_functions import householder_product

__all__ = ["geqrf", "orgqr", "ormqr"]

return_types.geqrf = _rt("geqrf", ("a", "tau"))


def _geqrf_values(A):
    import ferrotorch as _t  # the package (this module loads during its import)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    a = A.clone()
    tau = _t.zeros(tuple(A.shape[:-2]) + (k,), dtype=A.dtype, device=A.device)
    for j in range(k):
        alpha = a[..., j, j]
        x = a[..., j + 1:, j]
        xnorm = x.norm(dim=-1) if m - j - 1 > 0 else _t.zeros_like(alpha)
        active = xnorm != 0
        # beta = -sign(alpha) * hypot(alpha, ||x||) (sign(0) taken as +, as LAPACK's SIGN)
        beta = -_t.hypot(alpha, xnorm) * _t.where(alpha >= 0, 1.0, -1.0).to(A.dtype)
        safe = _t.where(active, beta, _t.ones_like(beta))
        t = _t.where(active, (beta - alpha) / safe, _t.zeros_like(beta))
        scale = _t.where(active, 1.0 / (alpha - safe), _t.zeros_like(beta))
        v_tail = x * scale.unsqueeze(-1)
        tau[..., j] = t
        if j + 1 < n:
            # apply H = I - tau v vᵀ to the trailing columns
            rest = a[..., j:, j + 1:]
            v = _t.cat([_t.ones_like(alpha).unsqueeze(-1), v_tail], -1)
            w = (v.unsqueeze(-1) * rest).sum(-2)
            rest.sub_(t.unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1) * w.unsqueeze(-2))
        a[..., j + 1:, j] = _t.where(active.unsqueeze(-1), v_tail, x)
        a[..., j, j] = _t.where(active, beta, alpha)
    return a, tau


@_args.signature("Tensor input, *, Any out=None")
def geqrf(input, *, out=None):
    r"""geqrf(input, *, out=None) -> (Tensor, Tensor)

    A low-level function for calling LAPACK's geqrf directly. Computes a QR
    decomposition of ``input`` without forming ``Q`` and ``R`` explicitly: ``a``
    holds ``R`` on and above the diagonal and the Householder vectors below it,
    ``tau`` the reflectors' scalars. Batches of matrices are supported.

    Args:
        input (Tensor): the input matrix, shape ``(*, m, n)``.

    Keyword args:
        out (tuple, optional): the output tuple of (Tensor, Tensor). Ignored if ``None``.
    """
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{_pretty(input.dtype)}\'')
    # On a detached input the column steps record nothing.
    a, tau = _geqrf_values(input.detach())
    # LAPACK's output is column-major, as PyTorch returns it.
    cm = _C.empty(tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), dtype=a.dtype, device=a.device).mT
    cm.copy_(a)
    a = cm
    if input.requires_grad and _C.is_grad_enabled():
        a, tau = _mark_no_derivative(input, a, tau)
    return _write_out(return_types.geqrf(a, tau), out)


_GEQRF_FN = []


def _mark_no_derivative(input, a, tau):
    # PyTorch records GeqrfBackward0, whose backward raises.
    if not _GEQRF_FN:
        from .autograd import Function

        class Geqrf(Function):
            @staticmethod
            def forward(ctx, x, a, tau):
                return a.clone(), tau.clone()

            @staticmethod
            def backward(ctx, ga, gt):
                raise NotImplementedError("the derivative for 'geqrf' is not implemented.")

        Geqrf._backward_name = "GeqrfBackward0"
        _GEQRF_FN.append(Geqrf)
    return _GEQRF_FN[0].apply(input, a, tau)


@_args.signature("Tensor input, Tensor input2, *, Tensor? out=None")
def orgqr(input, input2, *, out=None):
    r"""orgqr(input, tau) -> Tensor

    Alias for :func:`torch.linalg.householder_product`: the first ``n`` columns
    of ``Q`` from the Householder form of :func:`torch.geqrf`.
    """
    return householder_product(input, input2, out=out)


@_args.signature("Tensor input, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor? out=None")
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    r"""ormqr(input, tau, other, left=True, transpose=False, *, out=None) -> Tensor

    Computes the matrix-matrix multiplication of a product of Householder
    matrices with a general matrix: ``op(Q) @ other`` (``left=True``) or
    ``other @ op(Q)``, where ``Q`` (``m x m``) is given by the Householder form
    ``(input, tau)`` of :func:`torch.geqrf` and ``op`` is the transpose when
    ``transpose``.

    Args:
        input (Tensor): the Householder vectors, shape ``(*, mn, k)`` (``mn`` is
            ``m`` when ``left`` else ``n``).
        tau (Tensor): their scalars, shape ``(*, min(mn, k))``.
        other (Tensor): shape ``(*, m, n)``.
        left (bool): multiply ``other`` from the left. Default: ``True``.
        transpose (bool): use ``Qᵀ``. Default: ``False``.
    """
    A, tau, C = input, input2, input3
    if A.dim() < 2 or C.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions." if A.dim() < 2
                           else "torch.ormqr: other must have at least 2 dimensions.")
    mn = C.shape[-2] if left else C.shape[-1]
    if left and A.shape[-2] != C.shape[-2]:
        raise RuntimeError("torch.ormqr: other.shape[-2] must be equal to input.shape[-2]")
    if not left and A.shape[-2] != C.shape[-1]:
        raise RuntimeError("torch.ormqr: other.shape[-1] must be equal to input.shape[-2]")
    if tau.shape[-1] > A.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]")
    for name, t in (("tau", tau), ("other", C)):
        if t.dtype != A.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_pretty(A.dtype)} and {name} has dtype {_pretty(t.dtype)}")
    import ferrotorch as _t
    k = tau.shape[-1]
    # Q (mn x mn) = H_1 ... H_k: the reflectors padded to a square matrix, the rest identity.
    V = A[..., :, :k]
    if mn > k:
        V = _t.cat([V, _t.zeros(tuple(V.shape[:-1]) + (mn - k,), dtype=A.dtype, device=A.device)], -1)
        tau = _t.cat([tau, _t.zeros(tuple(tau.shape[:-1]) + (mn - k,), dtype=A.dtype, device=A.device)], -1)
    Q = householder_product(V, tau)
    if transpose:
        Q = Q.mT
    return _write_out(Q @ C if left else C @ Q, out)


_methods.define("geqrf", lambda self: geqrf(self))
_methods.define("orgqr", lambda self, input2: orgqr(self, input2))
_methods.define("ormqr", lambda self, input2, input3, left=True, transpose=False: ormqr(self, input2, input3, left, transpose))
for _n in ("geqrf", "orgqr", "ormqr"):
    _methods.lookup(_n).__name__ = _n
    _methods.lookup(_n).__doc__ = f"See :func:`torch.{_n}`."
