"""MultivariateNormal and MixtureSameFamily."""

import math

import ferrotorch as torch

from . import constraints
from .discrete import Categorical
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MixtureSameFamily", "MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L, x):
    """Squared Mahalanobis distance x^T (L L^T)^{-1} x, batched and broadcast."""
    shape = torch.broadcast_shapes(tuple(L.shape[:-1]), tuple(x.shape))
    L = L.expand(tuple(shape) + (L.shape[-1],))
    x = x.expand(tuple(shape))
    z = torch.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # A lower factor L with L L^T = P^{-1}: from the Cholesky factor of the flipped precision.
    Lf = torch.linalg.cholesky(torch.flip(P, (-2, -1)))
    L_inv = torch.transpose(torch.flip(Lf, (-2, -1)), -2, -1)
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return torch.linalg.solve_triangular(L_inv, eye.expand(tuple(L_inv.shape)), upper=False)


def _check_mixture_args(mixture_distribution, component_distribution, categorical_cls):
    if not isinstance(mixture_distribution, categorical_cls):
        raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
    if not isinstance(component_distribution, Distribution):
        raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
    mdbs = tuple(mixture_distribution.batch_shape)
    cdbs = tuple(component_distribution.batch_shape)[:-1]
    for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
        if size1 != 1 and size2 != 1 and size1 != size2:
            raise ValueError(
                f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                f"`component_distribution.batch_shape`({cdbs})"
            )
    km = mixture_distribution.logits.shape[-1]
    kc = component_distribution.batch_shape[-1]
    if km is not None and kc is not None and km != kc:
        raise ValueError(
            f"`mixture_distribution component` ({km}) does not equal `component_distribution.batch_shape[-1]` ({kc})"
        )


class MultivariateNormal(Distribution):
    r"""Creates a multivariate normal (also called Gaussian) distribution parameterized by a
    mean vector and a covariance matrix, given by exactly one of :attr:`covariance_matrix`,
    :attr:`precision_matrix` or :attr:`scale_tril`.

    Args:
        loc (Tensor): mean of the distribution
        covariance_matrix (Tensor): positive-definite covariance matrix
        precision_matrix (Tensor): positive-definite precision matrix
        scale_tril (Tensor): lower-triangular factor of covariance, with positive-valued diagonal
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            matrix, name = scale_tril, "scale_tril"
        elif covariance_matrix is not None:
            matrix, name = covariance_matrix, "covariance_matrix"
        else:
            matrix, name = precision_matrix, "precision_matrix"
        if matrix.dim() < 2:
            what = {"scale_tril": "scale_tril matrix", "covariance_matrix": "covariance_matrix", "precision_matrix": "precision_matrix"}[name]
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return torch.matmul(L, L.transpose(-2, -1)).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = torch.linalg.solve_triangular(L, eye.expand(tuple(L.shape)), upper=False)
        P = torch.matmul(L_inv.transpose(-2, -1), L_inv)
        return P.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return torch.diagonal(self._unbroadcasted_scale_tril, dim1=-2, dim2=-1).log().sum(-1)

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


class MixtureSameFamily(Distribution):
    r"""Mixture of components of the same family, selected by a Categorical
    ``mixture_distribution`` over the rightmost batch dimension of ``component_distribution``.

    Args:
        mixture_distribution: `torch.distributions.Categorical`-like instance.
        component_distribution: `torch.distributions.Distribution`-like instance whose
            rightmost batch dimension indexes the components.
    """

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        _check_mixture_args(mixture_distribution, component_distribution, Categorical)
        cdbs = component_distribution.batch_shape[:-1]
        self._num_component = mixture_distribution.logits.shape[-1]
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = torch.Size(tuple(batch_shape))
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _mix_probs(self):
        probs = self._mixture_distribution.probs
        for _ in range(self._event_ndims):
            probs = probs.unsqueeze(-1)
        return probs

    @property
    def mean(self):
        return (self._mix_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._mix_probs()
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        var_cond_mean = (probs * (self._component_distribution.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = torch.log_softmax(self._mixture_distribution.logits, dim=-1)
        return torch.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            sample_len = len(tuple(sample_shape))
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self.event_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.expand(mix_shape + (1,) + es)
            return torch.gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        args = f"\n  {self._mixture_distribution},\n  {self._component_distribution}"
        return "MixtureSameFamily" + "(" + args + ")"
