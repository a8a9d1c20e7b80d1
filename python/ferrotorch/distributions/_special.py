"""The special functions the distributions use: the native ``lgamma``,
``digamma`` and ``xlogy`` under one import, and the regularized lower
incomplete gamma ``gammainc`` composed of tensor ops, so that autograd
differentiates it in ``a`` too (the native ``special.gammainc`` has no
derivative in ``a``, as PyTorch's has none).
"""

import math

import ferrotorch as torch

lgamma = torch.lgamma
digamma = torch.digamma
xlogy = torch.xlogy


def _max_terms(a):
    # Both expansions need O(sqrt(a)) terms near x ~ a; 12 sqrt(a) + 60 covers float64.
    amax = float(a.detach().max()) if a.numel() else 1.0
    return int(min(4000, 12 * math.sqrt(max(amax, 1.0)) + 60))


def gammainc(a, x):
    """Regularized lower incomplete gamma function P(a, x) for a > 0, x >= 0.

    Uses the power series for x < a + 1 and the continued fraction for Q = 1 - P
    otherwise (both with a fixed number of vectorised steps), so it is
    differentiable in ``a`` and ``x`` by autograd.
    """
    a, x = torch.broadcast_tensors(a, x)
    n_terms = _max_terms(a)
    use_series = x < a + 1
    tiny = torch.finfo(x.dtype).tiny
    positive_x = x > 0
    # Each branch sees only inputs where it is valid, so the unused one stays finite.
    xs = torch.where(use_series & positive_x, x, torch.zeros_like(x) + 0.5 * torch.where(use_series, a, torch.ones_like(a)))
    xc = torch.where(use_series, a + 2, x)

    term = 1.0 / a
    total = term
    for n in range(1, n_terms):
        term = term * xs / (a + n)
        total = total + term
    log_prefactor_s = a * torch.log(xs) - xs - lgamma(a)
    p_series = total * torch.exp(log_prefactor_s)

    b = xc + 1 - a
    c = torch.full_like(xc, 1.0 / tiny)
    d = 1.0 / b
    h = d
    for i in range(1, n_terms):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = torch.where(d.abs() < tiny, torch.full_like(d, tiny), d)
        c = b + an / c
        c = torch.where(c.abs() < tiny, torch.full_like(c, tiny), c)
        d = 1.0 / d
        h = h * d * c
    q_cf = torch.exp(a * torch.log(xc) - xc - lgamma(a)) * h
    p = torch.where(use_series, p_series, 1 - q_cf)
    return torch.where(positive_x, p, torch.zeros_like(p))
