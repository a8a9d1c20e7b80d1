"""Gamma-family distributions: Gamma, Exponential, Chi2, Beta and Dirichlet.

Gamma variates come from Marsaglia and Tsang's rejection sampler, run as a
vectorised loop over the still-rejected entries of the batch. ``rsample`` is
differentiable in the shape parameter by implicit reparameterisation:
dz/dalpha = -(dP/dalpha)(alpha, z) / p(z; alpha), with P the regularized lower
incomplete gamma function (differentiated by autograd through its expansion).
"""

import numbers

import ferrotorch as torch

from . import constraints
from .distribution import Distribution, _expand_params
from .exp_family import ExponentialFamily
from ._special import digamma, gammainc, lgamma, xlogy
from .utils import broadcast_all

__all__ = ["Beta", "Chi2", "Dirichlet", "Exponential", "Gamma"]


def _standard_gamma(alpha):
    """Draws Gamma(alpha, 1) variates with the shape of ``alpha`` (no gradient)."""
    with torch.no_grad():
        dtype, device = alpha.dtype, alpha.device
        # alpha < 1 is boosted to alpha + 1 and corrected by U ** (1 / alpha).
        small = alpha < 1
        a = torch.where(small, alpha + 1, alpha)
        d = a - 1.0 / 3.0
        c = 1.0 / torch.sqrt(9.0 * d)
        out = torch.zeros_like(alpha)
        pending = torch.ones_like(alpha, dtype=torch.bool)
        shape = tuple(alpha.shape)
        while bool(pending.any()):
            x = torch.randn(shape, dtype=dtype, device=device)
            v = (1.0 + c * x) ** 3
            u = torch.rand(shape, dtype=dtype, device=device)
            safe_v = torch.where(v > 0, v, torch.ones_like(v))
            accept = (v > 0) & (torch.log(u) < 0.5 * x * x + d - d * safe_v + d * torch.log(safe_v))
            take = accept & pending
            out = torch.where(take, d * safe_v, out)
            pending = pending & ~accept
        u = torch.rand(shape, dtype=dtype, device=device)
        boost = torch.where(small, u ** (1.0 / alpha), torch.ones_like(u))
        out = out * boost
        return out.clamp(min=torch.finfo(dtype).tiny)


def _standard_gamma_grad(alpha, z):
    """dz/dalpha of a Gamma(alpha, 1) draw z held at a fixed cdf level."""
    with torch.enable_grad():
        a = alpha.detach().requires_grad_()
        cdf = gammainc(a, z.detach())
        (dcdf_da,) = torch.autograd.grad(cdf.sum(), [a])
    a = alpha.detach()
    log_pdf = (a - 1) * torch.log(z) - z - lgamma(a)
    return -dcdf_da * torch.exp(-log_pdf)


class _ReparamStandardGamma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        z = _standard_gamma(alpha.detach())
        ctx.save_for_backward(alpha, z)
        return z

    @staticmethod
    def backward(ctx, grad):
        alpha, z = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, z)


def _rsample_standard_gamma(alpha):
    if alpha.requires_grad and torch.is_grad_enabled():
        return _ReparamStandardGamma.apply(alpha)
    return _standard_gamma(alpha)


class Exponential(ExponentialFamily):
    r"""Creates a Exponential distribution parameterized by :attr:`rate`.

    Args:
        rate (float or Tensor): rate = 1 / scale of the distribution
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Exponential, batch_shape, ("rate",), _instance)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        e = torch.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)


class Gamma(ExponentialFamily):
    r"""Creates a Gamma distribution parameterized by shape :attr:`concentration` and :attr:`rate`.

    Args:
        concentration (float or Tensor): shape parameter of the distribution
            (often referred to as alpha)
        rate (float or Tensor): rate parameter of the distribution
            (often referred to as beta), rate = 1 / scale
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    def rsample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _rsample_standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=torch.finfo(value.dtype).tiny)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - lgamma(self.concentration)
        )

    def entropy(self):
        a = self.concentration
        return a - torch.log(self.rate) + lgamma(a) + (1.0 - a) * digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Chi2(Gamma):
    r"""Creates a Chi-squared distribution parameterized by shape parameter :attr:`df`.
    This is exactly equivalent to ``Gamma(alpha=0.5*df, beta=0.5)``.

    Args:
        df (float or Tensor): shape parameter of the distribution
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, numbers.Number):
            df = torch.tensor(float(df), dtype=torch.get_default_dtype())
        super().__init__(0.5 * df, torch.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(ExponentialFamily):
    r"""Creates a Dirichlet distribution parameterized by concentration :attr:`concentration`.

    Args:
        concentration (Tensor): concentration parameter of the distribution
            (often referred to as alpha)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g = _rsample_standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        c = self.concentration
        cm1 = (c - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # With every concentration below one the density peaks at the largest one's vertex.
        vertex = torch.nn.functional.one_hot(c.argmax(-1), c.shape[-1]).to(c.dtype)
        all_small = (c < 1).all(-1, keepdim=True)
        return torch.where(all_small, vertex, mode)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    r"""Beta distribution parameterized by :attr:`concentration1` and :attr:`concentration0`.

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
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            c = torch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = torch.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
