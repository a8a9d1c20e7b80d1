"""Count distributions built on other families: Multinomial and NegativeBinomial."""

import numbers

import ferrotorch as torch

from . import constraints
from .discrete import Binomial, Categorical
from .distribution import Distribution, _expand_params
from .gamma import _standard_gamma
from ._special import lgamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Multinomial", "NegativeBinomial"]


def _log_sigmoid(x):
    return -(torch.clamp(-x, min=0) + torch.log1p(torch.exp(-x.abs())))


class Multinomial(Distribution):
    r"""Creates a Multinomial distribution parameterized by :attr:`total_count` and
    either :attr:`probs` or :attr:`logits` (but not both). The innermost dimension of
    :attr:`probs` indexes over categories. All other dimensions index over batches.

    Args:
        total_count (int): number of trials
        probs (Tensor): event probabilities
        logits (Tensor): event log probabilities (unnormalized)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Number):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = torch.Size(tuple(batch_shape))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=torch.Size()):
        sample_shape = torch.Size(tuple(sample_shape))
        n = self.total_count
        k = self._categorical._num_events
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            if n == 0:
                return torch.zeros(shape, dtype=self.probs.dtype, device=self.probs.device)
            draws = self._categorical.sample(torch.Size((n,)) + sample_shape)
            # Count how many of the n draws landed in each category.
            onehot = torch.nn.functional.one_hot(draws, k).to(self.probs.dtype)
            return onehot.sum(0).reshape(shape)

    def entropy(self):
        n = torch.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torch.exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = torch.broadcast_tensors(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # logits are log-probabilities here; a zero count contributes nothing even where p = 0.
        log_powers = torch.where(value == 0, torch.zeros_like(logits), value * logits).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(Distribution):
    r"""Creates a negative binomial distribution: the number of successful independent and
    identical Bernoulli trials before :attr:`total_count` failures are achieved, each
    succeeding with probability :attr:`probs`.

    Args:
        total_count (float or Tensor): non-negative number of negative Bernoulli
            trials to stop, although the distribution is still valid for real valued count
        probs (Tensor): Event probabilities of success in the half open interval [0, 1)
        logits (Tensor): Event log-odds for probabilities of success
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(self, NegativeBinomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=torch.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            # Gamma-Poisson mixture: rate ~ Gamma(total_count, scale = p / (1 - p)).
            rate = _standard_gamma(self.total_count.expand(shape)) * torch.exp(self.logits).expand(shape)
            return torch.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * _log_sigmoid(-self.logits) + value * _log_sigmoid(self.logits)
        # n * log(1 - p) is 0 when n == 0 even for p -> 1.
        log_unnormalized = torch.where(n + value == 0, torch.zeros_like(log_unnormalized), log_unnormalized)
        log_norm = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        log_norm = torch.where(n + value == 0, torch.zeros_like(log_norm), log_norm)
        return log_unnormalized - log_norm
