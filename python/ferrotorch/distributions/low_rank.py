"""LowRankMultivariateNormal: a multivariate normal with covariance
``cov_factor @ cov_factor.T + diag(cov_diag)``.

Densities use the Cholesky factor of the assembled covariance, which is exact and
simple; it costs O(n^3) in the event size rather than the Woodbury O(n m^2).
"""

import math

import ferrotorch as torch

from . import constraints
from .distribution import Distribution
from .multivariate import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    r"""Creates a multivariate normal distribution with covariance matrix having a low-rank form
    parameterized by :attr:`cov_factor` and :attr:`cov_diag`::

        covariance_matrix = cov_factor @ cov_factor.T + cov_diag

    Args:
        loc (Tensor): mean of the distribution with shape `batch_shape + event_shape`
        cov_factor (Tensor): factor part of low-rank form of covariance matrix with shape
            `batch_shape + event_shape + (rank,)`
        cov_diag (Tensor): diagonal part of low-rank form of covariance matrix with shape
            `batch_shape + event_shape`
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        batch_shape = torch.broadcast_shapes(
            tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1])
        )
        n, m = event_shape[0], cov_factor.shape[-1]
        self.loc = loc.expand(tuple(batch_shape) + (n,))
        self.cov_factor = cov_factor.expand(tuple(batch_shape) + (n, m))
        self.cov_diag = cov_diag.expand(tuple(batch_shape) + (n,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        n = self.event_shape[0]
        new.loc = self.loc.expand(tuple(batch_shape) + (n,))
        new.cov_diag = self.cov_diag.expand(tuple(batch_shape) + (n,))
        new.cov_factor = self.cov_factor.expand(tuple(batch_shape) + tuple(self.cov_factor.shape[-2:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _unbroadcasted_covariance(self):
        W = self._unbroadcasted_cov_factor
        return torch.matmul(W, W.transpose(-2, -1)) + torch.diag_embed(self._unbroadcasted_cov_diag)

    @lazy_property
    def _unbroadcasted_scale_tril(self):
        return torch.linalg.cholesky(self._unbroadcasted_covariance())

    def _half_log_det(self):
        return torch.diagonal(self._unbroadcasted_scale_tril, dim1=-2, dim2=-1).log().sum(-1)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        var = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return var.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        return self._unbroadcasted_covariance().expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        return torch.linalg.inv(self._unbroadcasted_covariance()).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2
        )

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        W = self._unbroadcasted_cov_factor
        eps_w = torch.randn(shape[:-1] + (W.shape[-1],), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        H = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
