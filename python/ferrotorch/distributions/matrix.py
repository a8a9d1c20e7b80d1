"""Distributions over matrices: Wishart and LKJCholesky."""

import math
import numbers
import warnings

import ferrotorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import _rsample_standard_gamma, _standard_gamma
from ._special import digamma, lgamma
from .utils import lazy_property

__all__ = ["LKJCholesky", "Wishart"]


def _mvlgamma(a, p):
    """Multivariate log-gamma: p(p-1)/4 log(pi) + sum_j lgamma(a - j/2)."""
    total = p * (p - 1) / 4.0 * math.log(math.pi)
    for j in range(p):
        total = total + lgamma(a - j / 2.0)
    return total


def _mvdigamma(a, p):
    total = 0.0
    for j in range(p):
        total = total + digamma(a - j / 2.0)
    return total


def _log_det_from_tril(L):
    return 2.0 * torch.diagonal(L, dim1=-2, dim2=-1).log().sum(-1)


class Wishart(Distribution):
    r"""Creates a Wishart distribution parameterized by a symmetric positive definite matrix
    :math:`\Sigma`, or its Cholesky decomposition :math:`\mathbf{\Sigma} = \mathbf{L}\mathbf{L}^\top`.

    Args:
        df (float or Tensor): real-valued parameter larger than the (Dimension of Square Matrix) - 1
        covariance_matrix (Tensor): positive-definite covariance matrix
        precision_matrix (Tensor): positive-definite precision matrix
        scale_tril (Tensor): lower-triangular factor of covariance, with positive-valued diagonal
    """

    support = constraints.positive_definite
    has_rsample = True

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = torch.Size(tuple(param.shape[:-2]))
            self.df = torch.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(tuple(batch_shape))
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + tuple(event_shape)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(torch.linalg.inv(precision_matrix))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        full = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(full))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._full())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = torch.linalg.solve_triangular(L, eye.expand(tuple(L.shape)), upper=False)
        return (L_inv.transpose(-2, -1) @ L_inv).expand(self._full())

    def _df_matrix(self):
        return self.df.unsqueeze(-1).unsqueeze(-1)

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        p = self._event_shape[-1]
        factor = self._df_matrix() - p - 1
        mode = factor * self.covariance_matrix
        return torch.where(factor > 0, mode, torch.full_like(mode, math.nan))

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = torch.diagonal(V, dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def rsample(self, sample_shape=torch.Size()):
        """Bartlett decomposition: X = L A A^T L^T with A lower triangular,
        A_ii^2 ~ Chi2(df - i) and standard normal entries below the diagonal."""
        sample_shape = torch.Size(tuple(sample_shape))
        p = self._event_shape[-1]
        batch = tuple(sample_shape) + tuple(self._batch_shape)
        L = self._unbroadcasted_scale_tril
        dtype, device = L.dtype, L.device
        offsets = torch.arange(p, dtype=dtype, device=device)
        half_df = 0.5 * (self.df.unsqueeze(-1) - offsets)
        chi2 = 2.0 * _rsample_standard_gamma(half_df.expand(batch + (p,)))
        normals = torch.randn(batch + (p, p), dtype=dtype, device=device).tril(-1)
        eye = torch.eye(p, dtype=dtype, device=device)
        A = normals + eye * chi2.sqrt().unsqueeze(-2)
        LA = L @ A
        return LA @ LA.transpose(-2, -1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_x = _log_det_from_tril(torch.linalg.cholesky(value))
        full = torch.broadcast_shapes(tuple(L.shape), tuple(value.shape))
        # tr(Sigma^{-1} X) = tr(L^{-T} L^{-1} X)
        z = torch.linalg.solve_triangular(L.expand(full), value.expand(full), upper=False)
        z = torch.linalg.solve_triangular(L.transpose(-2, -1).expand(full), z, upper=True)
        trace = torch.diagonal(z, dim1=-2, dim2=-1).sum(-1)
        return (
            0.5 * (nu - p - 1) * log_det_x
            - 0.5 * trace
            - 0.5 * nu * p * math.log(2)
            - 0.5 * nu * _log_det_from_tril(L)
            - _mvlgamma(0.5 * nu, p)
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det = _log_det_from_tril(self._unbroadcasted_scale_tril)
        return (
            0.5 * (p + 1) * log_det
            + 0.5 * p * (p + 1) * math.log(2)
            + _mvlgamma(0.5 * nu, p)
            - 0.5 * (nu - p - 1) * _mvdigamma(0.5 * nu, p)
            + 0.5 * nu * p
        )


class LKJCholesky(Distribution):
    r"""LKJ distribution for the lower Cholesky factor of correlation matrices, controlled by
    ``concentration`` (eta): the correlation matrix ``L @ L.T`` has density proportional to
    ``det(M) ** (concentration - 1)``. Sampling uses the onion method.

    Args:
        dimension (dim): dimension of the matrices
        concentration (float or Tensor): concentration/shape parameter of the distribution
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        if isinstance(concentration, numbers.Number):
            concentration = torch.tensor(float(concentration))
        self.concentration = concentration
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _row_beta_params(self):
        # Row i (i = 1..dim-1) has squared off-diagonal norm y_i ~ Beta(i/2, eta + (dim-1-i)/2).
        eta = self.concentration.unsqueeze(-1)
        i = torch.arange(1, self.dim, dtype=eta.dtype, device=eta.device)
        return 0.5 * i, eta + 0.5 * (self.dim - 1 - i)

    def sample(self, sample_shape=torch.Size()):
        sample_shape = torch.Size(tuple(sample_shape))
        d = self.dim
        batch = tuple(sample_shape) + tuple(self._batch_shape)
        dtype, device = self.concentration.dtype, self.concentration.device
        with torch.no_grad():
            a, b = self._row_beta_params()
            ga = _standard_gamma(a.expand(batch + (d - 1,)))
            gb = _standard_gamma(b.expand(batch + (d - 1,)))
            y = ga / (ga + gb)
            zeros = torch.zeros(batch + (1,), dtype=dtype, device=device)
            y = torch.cat([zeros, y], -1)
            u = torch.randn(batch + (d, d), dtype=dtype, device=device).tril(-1)
            norms = u.pow(2).sum(-1, keepdim=True).sqrt()
            norms = torch.where(norms > 0, norms, torch.ones_like(norms))
            w = u / norms * y.sqrt().unsqueeze(-1)
            eye = torch.eye(d, dtype=dtype, device=device)
            diag = (1 - y).clamp(min=torch.finfo(dtype).tiny).sqrt()
            return w + eye * diag.unsqueeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        a, b = self._row_beta_params()
        diag = torch.diagonal(value, dim1=-2, dim2=-1)[..., 1:]
        i = torch.arange(1, d, dtype=diag.dtype, device=diag.device)
        exponent = 2 * (self.concentration.unsqueeze(-1) - 1) + d - 1 - i
        unnormalized = (exponent * diag.log()).sum(-1)
        log_norm = (lgamma(b) - lgamma(a + b) + 0.5 * i * math.log(math.pi)).sum(-1)
        return unnormalized - log_norm
