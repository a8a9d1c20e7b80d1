"""Location-scale and heavy-tailed families: Cauchy, HalfCauchy, StudentT,
Laplace, Gumbel, Pareto and Weibull."""

import math
import numbers

import ferrotorch as torch

from . import constraints
from .distribution import Distribution, _expand_params
from .gamma import _rsample_standard_gamma
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from ._special import digamma, lgamma
from .utils import broadcast_all, euler_constant

__all__ = ["Cauchy", "Gumbel", "HalfCauchy", "Laplace", "Pareto", "StudentT", "Weibull"]


def _batch_shape_of(params, tensors):
    if all(isinstance(p, numbers.Number) for p in params):
        return torch.Size()
    return tensors[0].size()


def _full(like, shape, value):
    return torch.full(tuple(shape), value, dtype=like.dtype, device=like.device)


class Cauchy(Distribution):
    r"""Samples from a Cauchy (Lorentz) distribution: the ratio of independent normally
    distributed random variables with means `0`.

    Args:
        loc (float or Tensor): mode or median of the distribution.
        scale (float or Tensor): half width at half maximum.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of((loc, scale), (self.loc,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return _full(self.loc, self._extended_shape(), math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _full(self.loc, self._extended_shape(), math.inf)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = torch.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(TransformedDistribution):
    r"""Creates a half-Cauchy distribution: ``X ~ Cauchy(0, scale)`` and ``Y = |X|``.

    Args:
        scale (float or Tensor): scale of the full Cauchy distribution
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return _full(self.scale, self._extended_shape(), math.inf)

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, torch.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class Laplace(Distribution):
    r"""Creates a Laplace distribution parameterized by :attr:`loc` and :attr:`scale`.

    Args:
        loc (float or Tensor): mean of the distribution
        scale (float or Tensor): scale of the distribution
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of((loc, scale), (self.loc,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Laplace, batch_shape, ("loc", "scale"), _instance)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = torch.finfo(self.loc.dtype).eps
        # u in (-1, 1): the open lower end keeps log1p(-|u|) finite.
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) - (1 - eps)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torch.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)


class Gumbel(Distribution):
    r"""Samples from a Gumbel Distribution.

    Args:
        loc (float or Tensor): Location parameter of the distribution
        scale (float or Tensor): Scale parameter of the distribution
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of((loc, scale), (self.loc,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gumbel, batch_shape, ("loc", "scale"), _instance)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        finfo = torch.finfo(self.loc.dtype)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device).clamp(min=finfo.tiny, max=1 - finfo.eps)
        return self.loc - self.scale * torch.log(-torch.log(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + torch.exp(-z)) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.exp(-torch.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * torch.log(-torch.log(value))

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class StudentT(Distribution):
    r"""Creates a Student's t-distribution parameterized by degree of freedom :attr:`df`,
    mean :attr:`loc` and scale :attr:`scale`.

    Args:
        df (float or Tensor): degrees of freedom
        loc (float or Tensor): mean of the distribution
        scale (float or Tensor): scale of the distribution
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return torch.where(self.df > 1, self.loc, torch.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        heavy = torch.where(df > 1, torch.full_like(df, math.inf), torch.full_like(df, math.nan))
        return torch.where(df > 2, finite, heavy)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, StudentT, batch_shape, ("df", "loc", "scale"), _instance)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x = torch.randn(shape, dtype=self.df.dtype, device=self.df.device)
        # Z ~ Chi2(df) = 2 * Gamma(df / 2, 1); Y = X / sqrt(Z / df).
        z = _rsample_standard_gamma((0.5 * self.df).expand(shape)) * 2.0
        y = x * torch.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + lgamma(0.5 * self.df)
            - lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        half = 0.5 * self.df
        lbeta = lgamma(half) + math.lgamma(0.5) - lgamma(half + 0.5)
        return (
            self.scale.log()
            + (half + 0.5) * (digamma(half + 0.5) - digamma(half))
            + 0.5 * self.df.log()
            + lbeta
        )


class Pareto(Distribution):
    r"""Samples from a Pareto Type 1 distribution.

    Args:
        scale (float or Tensor): Scale parameter of the distribution
        alpha (float or Tensor): Shape parameter of the distribution
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(_batch_shape_of((scale, alpha), (self.scale,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Pareto, batch_shape, ("scale", "alpha"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        e = torch.empty(shape, dtype=self.scale.dtype, device=self.scale.device).exponential_()
        return self.scale * torch.exp(e / self.alpha)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (self.scale / value).pow(self.alpha)

    def icdf(self, value):
        return self.scale * (1 - value).pow(-self.alpha.reciprocal())

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(Distribution):
    r"""Samples from a two-parameter Weibull distribution.

    Args:
        scale (float or Tensor): Scale parameter of distribution (lambda).
        concentration (float or Tensor): Concentration parameter of distribution (k/shape).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(_batch_shape_of((scale, concentration), (self.scale,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(self, Weibull, batch_shape, ("scale", "concentration"), _instance)
        new.concentration_reciprocal = new.concentration.reciprocal()
        return new

    @property
    def mean(self):
        return self.scale * torch.exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (
            torch.exp(lgamma(1 + 2 * self.concentration_reciprocal))
            - torch.exp(2 * lgamma(1 + self.concentration_reciprocal))
        )

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        e = torch.empty(shape, dtype=self.scale.dtype, device=self.scale.device).exponential_()
        return self.scale * e.pow(self.concentration_reciprocal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k, lam = self.concentration, self.scale
        z = value / lam
        return torch.log(k / lam) + (k - 1) * torch.log(z) - z.pow(k)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-(value / self.scale).pow(self.concentration))

    def icdf(self, value):
        return self.scale * (-torch.log1p(-value)).pow(self.concentration_reciprocal)

    def entropy(self):
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + torch.log(self.scale * self.concentration_reciprocal)
            + 1
        )
