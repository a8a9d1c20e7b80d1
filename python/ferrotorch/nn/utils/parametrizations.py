"""Parametrization-based ``weight_norm`` and ``spectral_norm`` (the forms PyTorch recommends)."""

from ... import _C
from ..modules import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim
from . import _orthogonal as _la

from enum import Enum, auto

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _ft():
    import ferrotorch

    return ferrotorch


from ...autograd.grad_mode import no_grad as _no_grad  # noqa: E402


def _is_orthogonal(Q):
    ft = _ft()
    n, k = Q.size(-2), Q.size(-1)
    Id = ft.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * ft.finfo(Q.dtype).eps
    return bool(ft.allclose(Q.mT @ Q, Id, atol=eps))


def _make_orthogonal(A):
    """The Q of A's QR factorisation, with R's diagonal made positive."""
    X, tau = _la.geqrf(A)
    Q = _la.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        ft = _ft()
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # A skew-symmetric matrix from the lower triangle; its exponential / Cayley map is orthogonal.
            X = X.tril()
            if n != k:
                X = ft.cat([X, ft.zeros(*X.shape[:-2], n, n - k, dtype=X.dtype)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _la.matrix_exp(A)
            else:
                Id = ft.eye(n, dtype=A.dtype)
                Q = _la.solve_unpivoted(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _la.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).to(dtype=ft.int32).to(dtype=Q.dtype).unsqueeze(-2)
        # With the trivialization, the result is rotated by the orthogonal ``base`` of the last assignment.
        base = self._buffers.get("base")
        if base is not None:
            Q = base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        ft = _ft()
        with _no_grad():
            if Q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape {Q.shape}."
                )
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential "
                        "or the Cayley parametrizations when use_trivialization=False."
                    )
                A, tau = _la.geqrf(Q)
                # The householder map reads only the signs on the diagonal; a zero tau marks a
                # reflector LAPACK skipped, whose sign is flipped.
                diag = A.diagonal(dim1=-2, dim2=-1).sign()
                diag = ft.where(tau == 0.0, -diag, diag)
                on_diag = ft.eye(A.size(-2), A.size(-1), dtype=A.dtype).to(dtype=ft.bool)
                A = ft.where(on_diag, _diag_embed_like(diag, A), A)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                N = ft.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(ft.cat([Q, N], dim=-1))
            self.base = Q
            neg_Id = ft.zeros_like(Q_init)
            m = min(neg_Id.size(-2), neg_Id.size(-1))
            idx = ft.arange(m)
            neg_Id[..., idx, idx] = -1.0
            return neg_Id


def _diag_embed_like(diag, A):
    """A matrix shaped like ``A`` with ``diag`` on its main diagonal (zeros elsewhere)."""
    ft = _ft()
    out = ft.zeros_like(A)
    m = min(A.size(-2), A.size(-1))
    idx = ft.arange(m)
    out[..., idx, idx] = diag
    return out


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Applies an orthogonal or unitary parametrization to a matrix or a batch of matrices.

    The parametrized tensor :math:`Q` satisfies :math:`Q^{T} Q = I` (or :math:`Q Q^{T} = I`
    for wide matrices). It is computed from the original tensor by ``"matrix_exp"`` (the
    exponential of a skew-symmetric matrix), ``"cayley"`` (the Cayley map) or
    ``"householder"`` (a product of Householder reflectors).

    Args:
        module (nn.Module): module on which to register the parametrization.
        name (str, optional): name of the tensor to make orthogonal. Default: ``"weight"``.
        orthogonal_map (str, optional): One of the following: ``"matrix_exp"``, ``"cayley"``, ``"householder"``.
            Default: ``"matrix_exp"`` if the matrix is square or complex, ``"householder"`` otherwise.
        use_trivialization (bool, optional): whether to use the dynamic trivialization framework.
            Default: ``True``.

    Returns:
        The original module with an orthogonal parametrization registered to the specified weight
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.TensorBase):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    r"""Applies weight normalization to a parameter in the given module.

    .. math::
         \mathbf{w} = g \dfrac{\mathbf{v}}{\|\mathbf{v}\|}

    The magnitude lives in ``module.parametrizations[name].original0`` and the direction in
    ``module.parametrizations[name].original1``.

    Args:
        module (Module): containing module
        name (str, optional): name of weight parameter
        dim (int, optional): dimension over which to compute the norm (``None`` for the whole tensor)

    Returns:
        The original module with the weight norm parametrization
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        # Checkpoints of the hook-based weight_norm name the halves ``<name>_g`` / ``<name>_v``.
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    if hasattr(module, "_register_load_state_dict_pre_hook"):
        module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        from .. import functional as F

        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            ft = _ft()
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with _no_grad():
                u = ft.empty(h, dtype=weight.dtype).normal_(0, 1)
                v = ft.empty(w, dtype=weight.dtype).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a well-converged estimate: 15 iterations at registration.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        from .. import functional as F

        ft = _ft()
        with _no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ft.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ft.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        from .. import functional as F

        ft = _ft()
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ft.dot(u, ft.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Applies spectral normalization to a parameter in the given module.

    .. math::
        \mathbf{W}_{SN} = \dfrac{\mathbf{W}}{\sigma(\mathbf{W})},
        \sigma(\mathbf{W}) = \max_{\mathbf{h}: \mathbf{h} \ne 0} \dfrac{\|\mathbf{W} \mathbf{h}\|_2}{\|\mathbf{h}\|_2}

    Implemented with :func:`register_parametrization`; :math:`\sigma` is estimated by power
    iteration, one step per access in training mode.

    Args:
        module (nn.Module): containing module
        name (str, optional): name of weight parameter. Default: ``"weight"``.
        n_power_iterations (int, optional): number of power iterations to
            calculate spectral norm. Default: ``1``.
        eps (float, optional): epsilon for numerical stability in
            calculating norms. Default: ``1e-12``.
        dim (int, optional): dimension corresponding to number of outputs.
            Default: ``0``, except for modules that are instances of
            ConvTranspose{1,2,3}d, when it is ``1``

    Returns:
        The original module with a new parametrization registered to the specified weight
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.TensorBase):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
