r"""Probability distributions and sampling functions, mirroring ``torch.distributions``.

Families are parameterised like PyTorch's, score with ``log_prob`` and sample with
``sample`` (or ``rsample`` for reparameterised, differentiable draws where
``has_rsample`` is true). ``kl_divergence`` dispatches on the pair of types,
extended with :func:`register_kl`.
"""

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Exponential, Gamma
from .heavy_tails import Cauchy, Gumbel, HalfCauchy, Laplace, Pareto, StudentT, Weibull
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate import MixtureSameFamily, MultivariateNormal
from .normal import HalfNormal, LogNormal, Normal
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all
from .uniform import Uniform
from .low_rank import LowRankMultivariateNormal
from .von_mises import VonMises
from .matrix import LKJCholesky, Wishart
from .counts import Multinomial, NegativeBinomial
from .relaxed import ContinuousBernoulli, OneHotCategoricalStraightThrough, RelaxedBernoulli, RelaxedOneHotCategorical
from .transformed_families import FisherSnedecor, GeneralizedPareto, InverseGamma, Kumaraswamy, LogisticNormal

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "ContinuousBernoulli",
    "FisherSnedecor",
    "GeneralizedPareto",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "Multinomial",
    "NegativeBinomial",
    "OneHotCategoricalStraightThrough",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "Chi2",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "MixtureSameFamily",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Pareto",
    "Poisson",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
] + list(_transforms_all)
