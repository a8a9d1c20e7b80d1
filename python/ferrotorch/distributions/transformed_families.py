"""Families defined by pushing a simpler one through transforms, plus FisherSnedecor
and GeneralizedPareto: LogisticNormal, InverseGamma, Kumaraswamy."""

import math
import numbers

import ferrotorch as torch

from . import constraints
from .distribution import Distribution, _expand_params
from .gamma import Gamma, _rsample_standard_gamma
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform, StickBreakingTransform
from .uniform import Uniform
from ._special import digamma, lgamma
from .utils import broadcast_all, euler_constant

__all__ = ["FisherSnedecor", "GeneralizedPareto", "InverseGamma", "Kumaraswamy", "LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    r"""Creates a logistic-normal distribution parameterized by :attr:`loc` and :attr:`scale`
    that define the base `Normal` distribution transformed with the `StickBreakingTransform`.

    Args:
        loc (float or Tensor): mean of the base distribution
        scale (float or Tensor): standard deviation of the base distribution
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


class InverseGamma(TransformedDistribution):
    r"""Creates an inverse gamma distribution parameterized by :attr:`concentration` and
    :attr:`rate`: ``X ~ Gamma(concentration, rate)``, ``Y = 1 / X``.

    Args:
        concentration (float or Tensor): shape parameter of the distribution
        rate (float or Tensor): rate = 1 / scale of the distribution
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = torch.full((), -1.0, dtype=base_dist.rate.dtype, device=base_dist.rate.device)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, result, torch.full_like(result, math.inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        result = self.rate.pow(2) / ((a - 1).pow(2) * (a - 2))
        return torch.where(a > 2, result, torch.full_like(result, math.inf))

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)


def _moments(a, b, n):
    # E[X^n] = b * B(1 + n / a, b) for X ~ Kumaraswamy(a, b).
    arg1 = 1 + n / a
    return torch.exp(b.log() + lgamma(arg1) + lgamma(b) - lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    r"""Samples from a Kumaraswamy distribution: ``(1 - U ** (1 / concentration0)) ** (1 / concentration1)``
    for ``U ~ Uniform(0, 1)``.

    Args:
        concentration1 (float or Tensor): 1st concentration parameter of the distribution
            (often referred to as alpha)
        concentration0 (float or Tensor): 2nd concentration parameter of the distribution
            (often referred to as beta)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            torch.full_like(self.concentration0, 0), torch.full_like(self.concentration0, 1), validate_args=validate_args
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # Interior mode for a >= 1, b >= 1 (not both 1); NaN otherwise.
        a, b = self.concentration1, self.concentration0
        ok = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        safe_den = torch.where(ok, a * b - 1, torch.ones_like(a))
        mode = ((a - 1) / safe_den).pow(a.reciprocal())
        return torch.where(ok, mode, torch.full_like(mode, math.nan))

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = digamma(b + 1) + euler_constant
        return (1 - a.reciprocal()) * harmonic_b + (1 - b.reciprocal()) - torch.log(a * b)


class FisherSnedecor(Distribution):
    r"""Creates a Fisher-Snedecor distribution parameterized by :attr:`df1` and :attr:`df2`.

    Args:
        df1 (float or Tensor): degrees of freedom parameter 1
        df2 (float or Tensor): degrees of freedom parameter 2
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, FisherSnedecor, batch_shape, ("df1", "df2"), _instance)

    @property
    def mean(self):
        df2 = self.df2
        return torch.where(df2 > 2, df2 / (df2 - 2), torch.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return torch.where(self.df1 > 2, mode, torch.full_like(mode, math.nan))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return torch.where(d2 > 4, var, torch.full_like(var, math.nan))

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = _rsample_standard_gamma((0.5 * self.df1).expand(shape)) / (0.5 * self.df1)
        x2 = _rsample_standard_gamma((0.5 * self.df2).expand(shape)) / (0.5 * self.df2)
        tiny = torch.finfo(x2.dtype).tiny
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        return (
            lgamma(h1 + h2)
            - lgamma(h1)
            - lgamma(h2)
            + h1 * ratio.log()
            + (h1 - 1) * torch.log(value)
            - (h1 + h2) * torch.log1p(ratio * value)
        )


class GeneralizedPareto(Distribution):
    r"""Creates a Generalized Pareto distribution parameterized by :attr:`loc`, :attr:`scale`,
    and :attr:`concentration`.

    Args:
        loc (float or Tensor): Location parameter of the distribution
        scale (float or Tensor): Scale parameter of the distribution
        concentration (float or Tensor): Concentration parameter of the distribution
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, GeneralizedPareto, batch_shape, ("loc", "scale", "concentration"), _instance)

    def _is_exponential(self):
        return self.concentration.abs() < torch.finfo(self.concentration.dtype).eps

    def _safe_xi(self):
        return torch.where(self._is_exponential(), torch.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi = self._safe_xi()
        t = 1 + xi * z
        inside = (z >= 0) & ((t > 0) | self._is_exponential())
        safe_t = torch.where(t > 0, t, torch.ones_like(t))
        general = -self.scale.log() - (1 / xi + 1) * torch.log(safe_t)
        exponential = -self.scale.log() - z
        lp = torch.where(self._is_exponential(), exponential, general)
        return torch.where(inside, lp, torch.full_like(lp, -math.inf))

    def log_survival_function(self, value):
        z = (value - self.loc) / self.scale
        xi = self._safe_xi()
        t = (1 + xi * z).clamp(min=0)
        general = -(1 / xi) * torch.log(t)
        return torch.where(self._is_exponential(), -z, general)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = ((value - self.loc) / self.scale).clamp(min=0)
        xi = self._safe_xi()
        general = 1 - (1 + xi * z).clamp(min=0).pow(-1 / xi)
        return torch.where(self._is_exponential(), -torch.expm1(-z), general)

    def icdf(self, value):
        xi = self._safe_xi()
        general = self.loc + self.scale * torch.expm1(-xi * torch.log1p(-value)) / xi
        exponential = self.loc - self.scale * torch.log1p(-value)
        return torch.where(self._is_exponential(), exponential, general)

    @property
    def mean(self):
        mean = self.loc + self.scale / (1 - self.concentration)
        return torch.where(self.concentration < 1, mean, torch.full_like(mean, math.nan))

    @property
    def variance(self):
        xi = self.concentration
        var = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return torch.where(xi < 0.5, var, torch.full_like(var, math.nan))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = torch.where(
            self.concentration < 0,
            self.loc - self.scale / torch.where(self.concentration < 0, self.concentration, -torch.ones_like(self.concentration)),
            torch.full_like(self.loc, math.inf),
        )
        return constraints.interval(self.loc, upper)
