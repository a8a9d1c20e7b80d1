"""KL divergence registry and closed forms between pairs of distributions."""

import math
import warnings
from functools import total_ordering

import ferrotorch as torch

from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Dirichlet, Exponential, Gamma
from .heavy_tails import Cauchy, Gumbel, Laplace, Pareto
from .independent import Independent
from .multivariate import MultivariateNormal
from .normal import HalfNormal, LogNormal, Normal
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant
from ._special import digamma, lgamma

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """Decorator to register a pairwise function with :meth:`kl_divergence`.

    Lookup returns the most specific (type, type) match ordered by subclass;
    ambiguous matches raise a ``RuntimeWarning``.

    Args:
        type_p (type): A subclass of :class:`~torch.distributions.Distribution`.
        type_q (type): A subclass of :class:`~torch.distributions.Distribution`.
    """
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
        )
    return left_fun


def kl_divergence(p, q):
    r"""Computes the Kullback-Leibler divergence :math:`KL(p \| q)` between two distributions.

    Args:
        p (Distribution): A :class:`~torch.distributions.Distribution` object.
        q (Distribution): A :class:`~torch.distributions.Distribution` object.

    Returns:
        Tensor: A batch of KL divergences of shape `batch_shape`.

    Raises:
        NotImplementedError: If the distribution types have not been registered via
            :meth:`register_kl`.
    """
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _infinite_like(t):
    return torch.full_like(t, math.inf)


def _x_log_x(t):
    return t * t.log()


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    def term(a, la, lb):
        # a * (log a - log b) with 0 * anything = 0.
        zero = a == 0
        return torch.where(zero, torch.zeros_like(a), a * (la - lb))

    softplus = lambda x: torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))  # noqa: E731
    log_p1, log_q1 = -softplus(-p.logits), -softplus(-q.logits)
    log_p0, log_q0 = -softplus(p.logits), -softplus(q.logits)
    t1 = term(p.probs, log_p1, log_q1)
    t2 = term(1 - p.probs, log_p0, log_q0)
    t1 = torch.where(q.probs == 0, torch.where(p.probs == 0, t1, _infinite_like(t1)), t1)
    t2 = torch.where(q.probs == 1, torch.where(p.probs == 1, t2, _infinite_like(t2)), t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (_kl_bernoulli_bernoulli(Bernoulli(probs=p.probs), Bernoulli(probs=q.probs)))
    inf_idxs = p.total_count > q.total_count
    return torch.where(inf_idxs, _infinite_like(kl), kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = torch.where(q.probs == 0, torch.full_like(t, math.inf), t)
    t = torch.where(p.probs == 0, torch.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot "
            "                            be computed using Bregman divergences"
        )
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    with torch.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        term = (qnp - pnp) * g
        result = result - _sum_rightmost(term, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * torch.log(p.rate / q.rate)
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = torch.exp(ct2 + torch.exp(lgamma(ct1 + 1)).log() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - torch.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * torch.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    batch = torch.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    Lq_b = Lq.expand(tuple(batch) + (n, n))
    Lp_b = Lp.expand(tuple(batch) + (n, n))
    # tr(Sigma_q^{-1} Sigma_p) = ||Lq^{-1} Lp||_F^2
    term2 = torch.linalg.solve_triangular(Lq_b, Lp_b, upper=False).pow(2).flatten(-2).sum(-1)
    from .multivariate import _batch_mahalanobis

    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _register_low_rank_pairs():
    from .low_rank import LowRankMultivariateNormal

    for pair in (
        (LowRankMultivariateNormal, LowRankMultivariateNormal),
        (LowRankMultivariateNormal, MultivariateNormal),
        (MultivariateNormal, LowRankMultivariateNormal),
    ):
        register_kl(*pair)(_kl_multivariatenormal_multivariatenormal)


_register_low_rank_pairs()


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return torch.where(p.support.lower_bound < q.support.lower_bound, _infinite_like(result), result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return torch.where(outside, _infinite_like(result), result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * torch.log(ratio)
    return t1 + ratio + lgamma(q.concentration) + q.concentration * euler_constant - (1 + euler_constant)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = torch.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * torch.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * torch.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * torch.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * torch.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


def _infinite_pair(p, q):
    return _infinite_like(p.mean if not isinstance(p, Categorical) else p.probs[..., 0])


# Pairs where q's support misses part of p's, so the divergence is infinite.
for _p, _qs in [
    (Normal, (Beta, Exponential, Gamma, Pareto, Uniform)),
    (Laplace, (Beta, Exponential, Gamma, Pareto, Uniform)),
    (Gumbel, (Beta, Exponential, Gamma, Pareto, Uniform)),
    (Exponential, (Beta, Pareto, Uniform)),
    (Gamma, (Beta, Pareto, Uniform)),
    (Pareto, (Beta, Uniform)),
    (Poisson, (Bernoulli, Binomial)),
]:
    for _q in _qs:
        register_kl(_p, _q)(_infinite_pair)


# Cross-family closed forms: KL(p || q) = -H(p) - E_p[log q(x)], with the
# expectations of x, x^2, log x (and exp(-x / s) for Gumbel) taken under p.


def _neg_cross_entropy_normal(q, mean, second_moment):
    # E_p[log N(x; mu, sigma)] from E[x] and E[x^2].
    e_sq = second_moment - 2 * q.loc * mean + q.loc.pow(2)
    return -0.5 * math.log(2 * math.pi) - q.scale.log() - e_sq / (2 * q.scale.pow(2))


def _neg_cross_entropy_gamma(q, mean, mean_log):
    a, b = q.concentration, q.rate
    return a * b.log() - lgamma(a) + (a - 1) * mean_log - b * mean


def _neg_cross_entropy_gumbel(q, mean, mean_exp_neg):
    # E[log Gumbel(x)] = -log s - E[z] - E[exp(-z)], z = (x - loc) / s; mean_exp_neg = E[exp(-x / s)].
    return -q.scale.log() - (mean - q.loc) / q.scale - torch.exp(q.loc / q.scale) * mean_exp_neg


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    m = p.mean
    return -p.entropy() - _neg_cross_entropy_normal(q, m, p.variance + m.pow(2))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    e = (p.rate / (p.rate + q.scale.reciprocal())).pow(p.concentration)
    return -p.entropy() - _neg_cross_entropy_gumbel(q, p.mean, e)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    e = p.rate / (p.rate + q.scale.reciprocal())
    return -p.entropy() - _neg_cross_entropy_gumbel(q, p.mean, e)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    e = torch.exp(-p.loc / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2)))
    return -p.entropy() - _neg_cross_entropy_gumbel(q, p.loc, e)


def _uniform_outside(p, lower, upper=None):
    out = p.low < lower
    if upper is not None:
        out = out | (p.high > upper)
    return out


def _uniform_mean_log(low, high):
    # E[log x] for x ~ U(low, high), 0 <= low < high.
    def antideriv(x):
        safe = torch.where(x > 0, x, torch.ones_like(x))
        return torch.where(x > 0, x * safe.log() - x, torch.zeros_like(x))

    return (antideriv(high) - antideriv(low)) / (high - low)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return torch.where(_uniform_outside(p, 0), _infinite_like(result), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() - _neg_cross_entropy_gamma(q, p.mean, _uniform_mean_log(p.low, p.high))
    return torch.where(_uniform_outside(p, 0), _infinite_like(result), result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    s = q.scale
    e = s * (torch.exp(-p.low / s) - torch.exp(-p.high / s)) / (p.high - p.low)
    return -p.entropy() - _neg_cross_entropy_gumbel(q, p.mean, e)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    cross = (a - 1) * mean_log + (b - 1) * mean_log1m - (lgamma(a) + lgamma(b) - lgamma(a + b))
    result = -p.entropy() - cross
    return torch.where(_uniform_outside(p, 0, 1), _infinite_like(result), result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    cross = q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * _uniform_mean_log(p.low, p.high)
    result = -p.entropy() - cross
    return torch.where(_uniform_outside(p, q.scale), _infinite_like(result), result)


def _beta_mean_log(p):
    return digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > 0) | (q.high < 1)
    return torch.where(outside, _infinite_like(result), result)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() - _neg_cross_entropy_gamma(q, p.mean, _beta_mean_log(p))


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    m = p.mean
    return -p.entropy() - _neg_cross_entropy_normal(q, m, p.variance + m.pow(2))


@register_kl(Beta, Pareto)
def _kl_beta_pareto(p, q):
    return _infinite_like(p.mean)
