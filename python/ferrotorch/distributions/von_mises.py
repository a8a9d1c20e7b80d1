"""The von Mises distribution on the circle.

The modified Bessel functions I0 and I1 use the polynomial approximations of
Abramowitz and Stegun (9.8.1-9.8.4), relative error below about 1e-7.
Sampling is Best and Fisher's rejection scheme, vectorised over the batch.
"""

import math

import ferrotorch as torch

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["VonMises"]

_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813)
_I0_LARGE = (0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633, 0.00392377)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411)
_I1_LARGE = (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654, -0.00420059)


def _poly(coefs, t):
    result = torch.full_like(t, coefs[-1])
    for c in reversed(coefs[:-1]):
        result = result * t + c
    return result


def _log_bessel(x, order):
    """log(I_order(x)) for x > 0, order 0 or 1."""
    small_coef, large_coef = (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    small_x = torch.where(x < 3.75, x, torch.full_like(x, 3.75))
    large_x = torch.where(x >= 3.75, x, torch.full_like(x, 3.75))
    y = (small_x / 3.75).pow(2)
    small = _poly(small_coef, y).log()
    if order == 1:
        small = small + small_x.log()
    large = large_x - 0.5 * large_x.log() + _poly(large_coef, 3.75 / large_x).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    done = torch.zeros(shape, dtype=torch.bool, device=loc.device)
    x = torch.zeros(shape, dtype=loc.dtype, device=loc.device)
    while not bool(done.all()):
        u = torch.rand((3,) + tuple(shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u[0], u[1], u[2]
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        new = (u3 - 0.5).sign() * f.clamp(min=-1, max=1).acos()
        x = torch.where(accept & ~done, new, x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    r"""A circular von Mises distribution. Samples lie in :math:`[-\pi, \pi)`.

    Args:
        loc (Tensor): an angle in radians.
        concentration (Tensor): concentration parameter
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, torch.Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_bessel(self.concentration, 0)

    @property
    def _proposal_r(self):
        kappa = self.concentration.to(torch.float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        # For tiny kappa the expression above cancels badly; its series is 1/kappa + kappa.
        series = 1 / kappa + kappa
        return torch.where(kappa < 1e-5, series, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=torch.Size()):
        """Draws with Best and Fisher's rejection sampler (computed in float64)."""
        shape = tuple(self._extended_shape(sample_shape))
        with torch.no_grad():
            x = _rejection_sample(
                self.loc.to(torch.float64).expand(shape),
                self.concentration.to(torch.float64).expand(shape),
                self._proposal_r.expand(shape),
                shape,
            )
            return x.to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        ratio = (_log_bessel(self.concentration, 1) - _log_bessel(self.concentration, 0)).exp()
        return 1 - ratio
