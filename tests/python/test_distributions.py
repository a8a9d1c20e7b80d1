"""ferrotorch.distributions against torch.distributions: densities, cdf/icdf, moments,
entropy, shapes of samples, expand, validation errors, KL divergences, transforms,
reparameterised gradients and sample statistics."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

FD = ft.distributions
TD = torch.distributions


def _np(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def _t(lib, x, dtype="float64"):
    return lib.tensor(np.asarray(x, dtype=np.float64).tolist(), dtype=getattr(lib, dtype))


def _close(a, b, rtol=1e-7, atol=1e-9):
    assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


# name -> (constructor(lib, D, T), values in the support, methods to compare)
CONT = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]
CASES = {
    "Normal": (lambda D, T: D.Normal(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0])), [0.3, 1.0, -4.0], CONT),
    "Uniform": (lambda D, T: D.Uniform(T([0.0, -1.0, 2.0]), T([1.0, 3.0, 2.5])), [0.3, 1.0, 2.2],
                ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]),
    "Exponential": (lambda D, T: D.Exponential(T([0.5, 1.0, 3.0])), [0.3, 1.0, 4.0], CONT),
    "Laplace": (lambda D, T: D.Laplace(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0])), [0.3, 1.0, -4.0], CONT),
    "Cauchy": (lambda D, T: D.Cauchy(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0])), [0.3, 1.0, -4.0], CONT),
    "Gumbel": (lambda D, T: D.Gumbel(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0])), [0.3, 1.0, -4.0], CONT),
    "LogNormal": (lambda D, T: D.LogNormal(T([0.0, 0.5, -1.0]), T([1.0, 0.5, 0.3])), [0.3, 1.0, 4.0], CONT),
    "HalfNormal": (lambda D, T: D.HalfNormal(T([1.0, 0.5, 3.0])), [0.3, 1.0, 4.0], CONT),
    "HalfCauchy": (lambda D, T: D.HalfCauchy(T([1.0, 0.5, 3.0])), [0.3, 1.0, 4.0], CONT),
    "Pareto": (lambda D, T: D.Pareto(T([1.0, 0.5, 2.0]), T([0.5, 2.5, 3.0])), [1.3, 1.0, 4.0], CONT),
    "Weibull": (lambda D, T: D.Weibull(T([1.0, 0.5, 2.0]), T([0.7, 2.5, 3.0])), [1.3, 0.2, 4.0], CONT),
    "StudentT": (lambda D, T: D.StudentT(T([0.7, 1.5, 5.0]), T([0.0, 1.0, -1.0]), T([1.0, 2.0, 0.5])),
                 [0.3, 1.0, -4.0], ["log_prob", "entropy", "mean", "variance", "mode"]),
    "Gamma": (lambda D, T: D.Gamma(T([0.5, 2.0, 7.5]), T([1.0, 0.5, 3.0])), [0.3, 1.0, 4.0],
              ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    "Chi2": (lambda D, T: D.Chi2(T([0.5, 2.0, 7.5])), [0.3, 1.0, 4.0], ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    "Beta": (lambda D, T: D.Beta(T([0.5, 2.0, 7.5]), T([1.5, 0.5, 3.0])), [0.3, 0.9, 0.6],
             ["log_prob", "entropy", "mean", "variance", "mode"]),
    "Dirichlet": (lambda D, T: D.Dirichlet(T([[0.5, 2.0, 7.5], [1.5, 1.5, 3.0]])), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],
                  ["log_prob", "entropy", "mean", "variance", "mode"]),
    "Bernoulli": (lambda D, T: D.Bernoulli(T([0.2, 0.7, 0.5])), [1.0, 0.0, 1.0],
                  ["log_prob", "entropy", "mean", "variance", "mode", "enumerate_support"]),
    "BernoulliLogits": (lambda D, T: D.Bernoulli(logits=T([-1.2, 0.7, 3.0])), [1.0, 0.0, 1.0],
                        ["log_prob", "entropy", "mean", "variance", "mode"]),
    "Categorical": (lambda D, T: D.Categorical(T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])), [2.0, 0.0],
                    ["log_prob", "entropy", "mode", "enumerate_support"]),
    "CategoricalLogits": (lambda D, T: D.Categorical(logits=T([[0.2, -1.3, 0.5], [2.6, 0.1, 0.3]])), [1.0, 2.0],
                          ["log_prob", "entropy", "mode"]),
    "OneHotCategorical": (lambda D, T: D.OneHotCategorical(T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])),
                          [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
                          ["log_prob", "entropy", "mean", "variance", "mode", "enumerate_support"]),
    "Binomial": (lambda D, T: D.Binomial(T([5.0, 10.0, 3.0]), T([0.3, 0.6, 0.5])), [2.0, 10.0, 0.0],
                 ["log_prob", "mean", "variance", "mode"]),
    "BinomialHomogeneous": (lambda D, T: D.Binomial(6, T([0.3, 0.6, 0.5])), [2.0, 6.0, 0.0],
                            ["log_prob", "entropy", "mean", "variance", "mode", "enumerate_support"]),
    "Geometric": (lambda D, T: D.Geometric(T([0.3, 0.6, 1.0])), [2.0, 5.0, 0.0],
                  ["log_prob", "entropy", "mean", "variance", "mode"]),
    "Poisson": (lambda D, T: D.Poisson(T([0.5, 3.0, 12.0])), [2.0, 5.0, 0.0], ["log_prob", "mean", "variance", "mode"]),
    "MultivariateNormal": (lambda D, T: D.MultivariateNormal(T([[0.0, 1.0], [2.0, -1.0]]), T([[2.0, 0.3], [0.3, 0.5]])),
                           [[0.5, 0.2], [1.0, 1.0]], ["log_prob", "entropy", "mean", "variance", "mode"]),
    "MultivariateNormalTril": (lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), scale_tril=T([[[1.5, 0.0], [0.3, 0.5]], [[1.0, 0.0], [-0.4, 2.0]]])),
                               [[0.5, 0.2], [1.0, 1.0]], ["log_prob", "entropy", "mean", "variance"]),
    "MultivariateNormalPrecision": (lambda D, T: D.MultivariateNormal(T([0.0, 1.0]), precision_matrix=T([[2.0, 0.3], [0.3, 0.5]])),
                                    [[0.5, 0.2], [1.0, 1.0]], ["log_prob", "entropy", "variance"]),
    "Independent": (lambda D, T: D.Independent(D.Normal(T([[0.0, 1.5], [-2.0, 1.0]]), T([[1.0, 0.5], [3.0, 0.2]])), 1),
                    [[0.3, 1.0], [-4.0, 1.0]], ["log_prob", "entropy", "mean", "variance", "mode"]),
    "MixtureSameFamily": (lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.2, 0.3, 0.5])), D.Normal(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0]))),
                          [0.3, 1.0, -4.0], ["log_prob", "cdf", "mean", "variance"]),
    "TransformedAffineExp": (lambda D, T: D.TransformedDistribution(D.Normal(T([0.0, 0.5]), T([1.0, 0.4])), [D.AffineTransform(T([0.5, -1.0]), T([2.0, 0.5])), D.ExpTransform()]),
                             [0.3, 4.0], ["log_prob", "cdf", "icdf"]),
    "TransformedSigmoid": (lambda D, T: D.TransformedDistribution(D.Normal(T([0.0, 0.5]), T([1.0, 0.4])), D.SigmoidTransform()),
                           [0.3, 0.8], ["log_prob", "cdf", "icdf"]),
    "TransformedNegAffine": (lambda D, T: D.TransformedDistribution(D.Exponential(T([1.0, 2.0])), D.AffineTransform(1.0, -2.0)),
                             [0.3, -4.0], ["log_prob", "cdf", "icdf"]),
    "Multinomial": (lambda D, T: D.Multinomial(4, T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])), [[1.0, 0.0, 3.0], [2.0, 2.0, 0.0]],
                    ["log_prob", "entropy", "mean", "variance"]),
    "NegativeBinomial": (lambda D, T: D.NegativeBinomial(T([3.0, 0.5, 7.0]), T([0.4, 0.7, 0.1])), [2.0, 0.0, 5.0],
                         ["log_prob", "mean", "variance", "mode"]),
    "RelaxedBernoulli": (lambda D, T: D.RelaxedBernoulli(T(0.5), T([0.4, 0.7, 0.1])), [0.2, 0.5, 0.9], ["log_prob"]),
    "RelaxedOneHotCategorical": (lambda D, T: D.RelaxedOneHotCategorical(T(0.7), T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])),
                                 [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], ["log_prob"]),
    "OneHotCategoricalStraightThrough": (lambda D, T: D.OneHotCategoricalStraightThrough(T([0.2, 0.3, 0.5])), [0.0, 1.0, 0.0],
                                         ["log_prob", "entropy", "mean", "mode"]),
    "ContinuousBernoulli": (lambda D, T: D.ContinuousBernoulli(T([0.2, 0.5, 0.4995, 0.8])), [0.3, 0.6, 0.1, 0.95],
                            ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev"]),
    "LogisticNormal": (lambda D, T: D.LogisticNormal(T([0.0, 1.0]), T([1.0, 0.5])), [0.2, 0.3, 0.5], ["log_prob"]),
    "InverseGamma": (lambda D, T: D.InverseGamma(T([0.5, 2.0, 3.0]), T([2.0, 0.5, 3.0])), [0.3, 1.0, 4.0],
                     ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    "Kumaraswamy": (lambda D, T: D.Kumaraswamy(T([0.5, 2.0, 3.0]), T([2.0, 0.5, 3.0])), [0.3, 0.9, 0.6],
                    ["log_prob", "cdf", "icdf", "entropy", "mean", "variance"]),
    "FisherSnedecor": (lambda D, T: D.FisherSnedecor(T([1.0, 3.0, 5.0]), T([1.0, 3.0, 5.0])), [0.3, 1.0, 4.0],
                       ["log_prob", "mean", "variance", "mode"]),
    "GeneralizedPareto": (lambda D, T: D.GeneralizedPareto(T([0.0, 1.0, 0.5]), T([1.0, 2.0, 0.5]), T([0.3, 0.0, -0.4])),
                          [2.0, 1.5, 0.9], CONT),
    "LowRankMultivariateNormal": (lambda D, T: D.LowRankMultivariateNormal(T([[0.0, 1.0, 0.5], [2.0, -1.0, 0.0]]), T([[1.0, 0.2], [0.5, -0.3], [0.1, 0.4]]), T([1.0, 2.0, 0.5])),
                                  [[0.5, 0.2, 0.1], [1.0, 1.0, -1.0]], ["log_prob", "entropy", "mean", "variance", "mode"]),
    "VonMises": (lambda D, T: D.VonMises(T([0.0, 1.0, 2.0, -3.0]), T([0.5, 3.0, 20.0, 3.76])), [0.3, 0.2, 2.1, 3.1],
                 ["log_prob", "mean", "variance", "mode"]),
    "Wishart": (lambda D, T: D.Wishart(T([4.0, 5.5]), scale_tril=T([[1.5, 0.0], [0.3, 1.0]])), [[3.0, 0.2], [0.2, 2.0]],
                ["log_prob", "entropy", "mean", "variance", "mode"]),
    "WishartCov": (lambda D, T: D.Wishart(T(3.5), covariance_matrix=T([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.7]])),
                   [[3.0, 0.2, 0.0], [0.2, 2.0, 0.1], [0.0, 0.1, 1.0]], ["log_prob", "entropy", "mean", "variance", "mode"]),
    "LKJCholesky": (lambda D, T: D.LKJCholesky(3, T([2.0, 0.5])),
                    np.linalg.cholesky([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.0]]).tolist(),
                    ["log_prob"]),
}

# torch's GeneralizedPareto compares against a float32 zero, so it is checked in float32.
DTYPES = {"GeneralizedPareto": "float32"}
# Bessel functions come from polynomial approximations (|rel err| < ~1e-7).
TOLERANCES = {"VonMises": dict(rtol=2e-7, atol=1e-7)}


def _both(name, dt=None):
    ctor = CASES[name][0]
    dt = dt or DTYPES.get(name, "float64")
    return ctor(FD, lambda x: _t(ft, x, dt)), ctor(TD, lambda x: _t(torch, x, dt))


def _apply(d, lib, method, values, dtype="float64"):
    if method in ("log_prob", "cdf"):
        return getattr(d, method)(_t(lib, values, dtype))
    if method == "icdf":
        probs = np.full(np.shape(values), 0.3)
        probs.flat[0] = 0.85
        return d.icdf(_t(lib, probs, dtype))
    if method in ("entropy",):
        return d.entropy()
    if method == "enumerate_support":
        return d.enumerate_support()
    return getattr(d, method)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch(name, precision):
    dt = DTYPES.get(name, precision)
    f, t = _both(name, dt)
    values, methods = CASES[name][1], CASES[name][2]
    assert tuple(f.batch_shape) == tuple(t.batch_shape)
    assert tuple(f.event_shape) == tuple(t.event_shape)
    tol = dict(rtol=1e-7, atol=1e-9) if dt == "float64" else dict(rtol=2e-5, atol=2e-6)
    tol = TOLERANCES.get(name, tol)
    for method in methods:
        a, b = _apply(f, ft, method, values, dt), _apply(t, torch, method, values, dt)
        _close(a, b, **tol), method
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], method


@pytest.mark.parametrize("name", list(CASES))
def test_repr_support_and_constraints(name):
    f, t = _both(name)
    assert repr(f) == repr(t).replace("torch.distributions.", "")
    assert f.has_enumerate_support == t.has_enumerate_support
    try:
        ts = t.support
    except NotImplementedError:
        ts = None
    if ts is not None:
        assert repr(f.support) == repr(ts)
        assert f.support.is_discrete == ts.is_discrete
        assert f.support.event_dim == ts.event_dim
    assert sorted(f.arg_constraints) == sorted(t.arg_constraints)


# VonMises has no reparameterised sampler here (nor in torch).
NO_RSAMPLE_HERE = set()


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("sample_shape", [(), (3,), (2, 4)])
def test_sample_shapes(name, sample_shape):
    f, t = _both(name)
    ft.manual_seed(0)
    fs, ts = f.sample(sample_shape), t.sample(sample_shape)
    assert tuple(fs.shape) == tuple(ts.shape)
    assert str(fs.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    assert not fs.requires_grad
    if name in NO_RSAMPLE_HERE:
        assert not f.has_rsample
    else:
        assert f.has_rsample == t.has_rsample
    if f.has_rsample:
        assert tuple(f.rsample(sample_shape).shape) == tuple(ts.shape)
    # Samples lie in the support and score finitely.
    assert bool(f.support.check(fs).all())
    assert np.isfinite(_np(f.log_prob(fs))).all()


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("Transformed") and n != "MultivariateNormalTril"])
def test_expand(name):
    f, t = _both(name)
    new_batch = (4,) + tuple(t.batch_shape)
    fe, te = f.expand(new_batch), t.expand(new_batch)
    assert type(fe) is type(f)
    assert tuple(fe.batch_shape) == tuple(te.batch_shape) == new_batch
    assert tuple(fe.event_shape) == tuple(te.event_shape)
    values = np.asarray(CASES[name][1])
    if DTYPES.get(name):
        return
    if len(t.batch_shape) == 0:
        # The case's values are a batch of events; one event broadcasts against the new batch.
        values = values.reshape((-1,) + tuple(t.event_shape))[0]
    _close(fe.log_prob(_t(ft, values)), te.log_prob(_t(torch, values)))
    assert tuple(fe.sample((2,)).shape) == tuple(te.sample((2,)).shape)


def test_expand_transformed():
    f, t = _both("TransformedSigmoid")
    fe, te = f.expand((3, 2)), t.expand((3, 2))
    assert tuple(fe.batch_shape) == tuple(te.batch_shape)
    _close(fe.log_prob(_t(ft, [0.3, 0.8])), te.log_prob(_t(torch, [0.3, 0.8])))


# ---------------------------------------------------------------- statistics

MOMENT_CASES = ["Normal", "Uniform", "Exponential", "Laplace", "Gumbel", "LogNormal", "HalfNormal", "Weibull",
                "Gamma", "Chi2", "Beta", "Dirichlet", "Bernoulli", "Categorical", "OneHotCategorical", "Binomial",
                "Geometric", "Poisson", "MultivariateNormal", "MixtureSameFamily", "StudentT", "NegativeBinomial",
                "Multinomial", "LowRankMultivariateNormal", "Kumaraswamy", "ContinuousBernoulli"]


@pytest.mark.parametrize("name", MOMENT_CASES)
def test_sample_moments(name):
    f, t = _both(name)
    ft.manual_seed(1234)
    n = 20000
    s = _np(f.sample((n,)))
    if name == "Categorical":
        probs = _np(t.probs)
        freq = np.stack([(s == k).mean(0) for k in range(probs.shape[-1])], -1)
        np.testing.assert_allclose(freq, probs, atol=0.02)
        return
    if name == "StudentT":
        # Only the df > 2 component has a variance; check its mean and spread.
        col = s[:, 2]
        assert abs(col.mean() - (-1.0)) < 0.05
        assert abs(col.var() - float(t.variance[2])) < 0.1 * float(t.variance[2])
        return
    mean, var = _np(t.mean), _np(t.variance)
    se = np.sqrt(var / n)
    assert (np.abs(s.mean(0) - mean) < 6 * se + 1e-3).all(), (s.mean(0), mean)
    np.testing.assert_allclose(s.var(0), var, rtol=0.1, atol=1e-3)


def test_von_mises_sample_circular_moments():
    loc, kappa = _t(ft, [0.0, 3.0, -2.5]), _t(ft, [0.5, 3.0, 20.0])
    d = FD.VonMises(loc, kappa)
    ft.manual_seed(0)
    s = _np(d.sample((20000,)))
    assert (s >= -math.pi).all() and (s < math.pi).all()
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance; E[sin(x - loc)] = 0.
    resultant = np.cos(s - _np(loc)).mean(0)
    np.testing.assert_allclose(resultant, 1 - _np(TD.VonMises(_t(torch, [0.0, 3.0, -2.5]), _t(torch, [0.5, 3.0, 20.0])).variance), atol=0.015)
    assert np.abs(np.sin(s - _np(loc)).mean(0)).max() < 0.02


def test_wishart_and_lkj_sample_moments():
    cov = [[2.0, 0.6], [0.6, 0.5]]
    ft.manual_seed(0)
    s = _np(FD.Wishart(_t(ft, 5.0), covariance_matrix=_t(ft, cov)).sample((20000,)))
    np.testing.assert_allclose(s.mean(0), 5.0 * np.asarray(cov), rtol=0.03, atol=0.03)
    L = _np(FD.LKJCholesky(3, _t(ft, 2.0)).sample((20000,)))
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    # Each off-diagonal correlation is Beta(a, a) on (-1, 1) with a = eta - 1 + dim / 2.
    r = corr[:, [1, 2, 2], [0, 0, 1]]
    np.testing.assert_allclose(r.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(r.var(0), 1.0 / 6.0, rtol=0.05)


def test_mvn_sample_covariance():
    f = FD.MultivariateNormal(_t(ft, [1.0, -1.0]), _t(ft, [[2.0, 0.6], [0.6, 0.5]]))
    ft.manual_seed(0)
    s = _np(f.sample((30000,)))
    np.testing.assert_allclose(np.cov(s.T), [[2.0, 0.6], [0.6, 0.5]], atol=0.06)


# ------------------------------------------------------- reparameterised grads

def _leaf(x):
    return _t(ft, x).requires_grad_()


def test_normal_rsample_gradients():
    loc, scale = _leaf([0.5, -1.0]), _leaf([2.0, 0.3])
    ft.manual_seed(0)
    x = FD.Normal(loc, scale).rsample((5,))
    x.sum().backward()
    eps = (_np(x) - _np(loc)) / _np(scale)
    np.testing.assert_allclose(_np(loc.grad), [5.0, 5.0])
    np.testing.assert_allclose(_np(scale.grad), eps.sum(0), rtol=1e-10)


@pytest.mark.parametrize("family", ["Laplace", "Cauchy", "Gumbel"])
def test_location_scale_rsample_gradients(family):
    loc, scale = _leaf([0.5, -1.0]), _leaf([2.0, 0.3])
    x = getattr(FD, family)(loc, scale).rsample((7,))
    x.sum().backward()
    np.testing.assert_allclose(_np(loc.grad), [7.0, 7.0])
    np.testing.assert_allclose(_np(scale.grad), ((_np(x) - _np(loc)) / _np(scale)).sum(0), rtol=1e-9)


def test_exponential_pareto_weibull_rsample_gradients():
    rate = _leaf([0.5, 3.0])
    x = FD.Exponential(rate).rsample((6,))
    x.sum().backward()
    np.testing.assert_allclose(_np(rate.grad), (-_np(x) / _np(rate)).sum(0), rtol=1e-9)

    scale, alpha = _leaf([1.0, 2.0]), _leaf([1.5, 3.0])
    x = FD.Pareto(scale, alpha).rsample((6,))
    x.sum().backward()
    xs = _np(x)
    np.testing.assert_allclose(_np(alpha.grad), (-xs * np.log(xs / _np(scale)) / _np(alpha)).sum(0), rtol=1e-9)
    np.testing.assert_allclose(_np(scale.grad), (xs / _np(scale)).sum(0), rtol=1e-9)

    scale, k = _leaf([1.0, 2.0]), _leaf([1.5, 3.0])
    x = FD.Weibull(scale, k).rsample((6,))
    x.sum().backward()
    np.testing.assert_allclose(_np(scale.grad), (_np(x) / _np(scale)).sum(0), rtol=1e-9)


def test_pathwise_gradient_of_expectation():
    # d/dmu E[x^2] = 2 mu and d/dsigma E[x^2] = 2 sigma for x ~ N(mu, sigma).
    mu, sigma = _leaf([0.7]), _leaf([1.3])
    ft.manual_seed(3)
    x = FD.Normal(mu, sigma).rsample((40000,))
    (x ** 2).mean().backward()
    assert abs(float(mu.grad[0]) - 1.4) < 0.05
    assert abs(float(sigma.grad[0]) - 2.6) < 0.06


def _gamma_implicit_grad_truth(alpha, z):
    # dz/dalpha = -(dP/dalpha) / pdf, P from torch's regularized incomplete gamma.
    a, x = torch.tensor(alpha), torch.tensor(z)
    h = 1e-6
    dp = (torch.special.gammainc(a + h, x) - torch.special.gammainc(a - h, x)) / (2 * h)
    pdf = torch.exp((a - 1) * x.log() - x - torch.lgamma(a))
    return (-dp / pdf).numpy()


def test_gamma_rsample_implicit_gradient():
    alpha = _leaf([0.3, 1.0, 2.5, 7.5, 40.0])
    ft.manual_seed(0)
    z = FD.Gamma(alpha, _t(ft, 1.0)).rsample((3,))
    z.sum().backward()
    zs = _np(z)
    truth = sum(_gamma_implicit_grad_truth(_np(alpha), zs[i]) for i in range(3))
    np.testing.assert_allclose(_np(alpha.grad), truth, rtol=1e-6)
    # torch's own implicit gradient agrees to its (looser) accuracy.
    torch_grad = sum(torch._standard_gamma_grad(torch.tensor(_np(alpha)), torch.tensor(zs[i])).numpy() for i in range(3))
    np.testing.assert_allclose(_np(alpha.grad), torch_grad, rtol=2e-4)


def test_beta_dirichlet_rsample_gradient_of_mean():
    # d/da E[x] = b / (a + b)^2 for x ~ Beta(a, b).
    a, b = _leaf([2.0]), _leaf([3.0])
    ft.manual_seed(5)
    FD.Beta(a, b).rsample((20000,)).mean().backward()
    assert abs(float(a.grad[0]) - 3.0 / 25) < 0.01
    assert abs(float(b.grad[0]) + 2.0 / 25) < 0.01
    c = _leaf([1.0, 2.0, 3.0])
    FD.Dirichlet(c).rsample((20000,))[..., 0].mean().backward()
    # d/dc_j E[x_0] = (delta_0j * S - c_0) / S^2 with S = sum(c).
    np.testing.assert_allclose(_np(c.grad), [5.0 / 36, -1.0 / 36, -1.0 / 36], atol=0.01)


def test_mvn_and_transformed_rsample_gradients():
    loc = _leaf([0.5, -1.0])
    x = FD.MultivariateNormal(loc, scale_tril=_t(ft, [[1.0, 0.0], [0.5, 2.0]])).rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(_np(loc.grad), [3.0, 3.0])
    loc = _leaf([0.2])
    y = FD.LogNormal(loc, _t(ft, [0.5])).rsample((4,))
    y.sum().backward()
    np.testing.assert_allclose(_np(loc.grad), _np(y).sum(0), rtol=1e-9)


def test_log_prob_gradients_match_torch():
    for lib, D in ((ft, FD), (torch, TD)):
        c, r = _t(lib, [0.5, 2.0, 7.5]).requires_grad_(), _t(lib, [1.0, 0.5, 3.0]).requires_grad_()
        (D.Gamma(c, r).log_prob(_t(lib, [0.3, 1.0, 4.0])).sum() + D.Gamma(c, r).entropy().sum()).backward()
        if lib is ft:
            fg = (_np(c.grad), _np(r.grad))
        else:
            tg = (_np(c.grad), _np(r.grad))
    np.testing.assert_allclose(fg[0], tg[0], rtol=1e-8)
    np.testing.assert_allclose(fg[1], tg[1], rtol=1e-8)


# --------------------------------------------------------------- validation

ERROR_CASES = {
    "negative scale": lambda D, lib: D.Normal(_t(lib, [0.0, 1.0]), _t(lib, [-1.0, 1.0])),
    "out of support": lambda D, lib: D.Exponential(lib.tensor(1.0)).log_prob(lib.tensor(-1.0)),
    "not a tensor": lambda D, lib: D.Exponential(1.0).log_prob(1.0),
    "event shape": lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.ones(3)),
    "not broadcastable": lambda D, lib: D.Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.ones(3)),
    "probs and logits": lambda D, lib: D.Categorical(probs=lib.ones(3), logits=lib.ones(3)),
    "neither": lambda D, lib: D.Bernoulli(),
    "categorical simplex": lambda D, lib: D.Categorical(lib.tensor([0.3, -1.0])),
    "bernoulli support": lambda D, lib: D.Bernoulli(lib.tensor(0.3)).log_prob(lib.tensor(0.5)),
    "uniform low high": lambda D, lib: D.Uniform(1.0, 0.0),
    "uniform support": lambda D, lib: D.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
    "geometric zero": lambda D, lib: D.Geometric(lib.tensor([0.0, 0.5])),
    "dirichlet": lambda D, lib: D.Dirichlet(lib.tensor([1.0, -2.0])),
    "beta numbers": lambda D, lib: D.Beta(1.0, -2.0),
    "mvn two matrices": lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    "mvn 1-d cov": lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.ones(2)),
    "mvn loc 0-d": lambda D, lib: D.MultivariateNormal(lib.tensor(0.0), lib.eye(1)),
    "mixture size": lambda D, lib: D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Normal(lib.zeros(3), lib.ones(3))),
    "mixture type": lambda D, lib: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(lib.zeros(3), lib.ones(3))),
    "independent ndims": lambda D, lib: D.Independent(D.Normal(lib.zeros(3), lib.ones(3)), 2),
    "poisson negative": lambda D, lib: D.Poisson(lib.tensor([-1.0])),
    "binomial count": lambda D, lib: D.Binomial(lib.tensor([2.5]), lib.tensor([0.5])),
    "categorical 0-d": lambda D, lib: D.Categorical(lib.tensor(1.0)),
    "binomial inhomogeneous": lambda D, lib: D.Binomial(lib.tensor([5.0, 10.0]), lib.tensor([0.3, 0.6])).enumerate_support(),
    "kl missing": lambda D, lib: D.kl_divergence(D.Uniform(0.0, 1.0), D.Poisson(1.0)),
    "kl exp families": lambda D, lib: D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(1.0)),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_validation_errors_match_torch(case):
    caught = []
    for D, lib in ((FD, ft), (TD, torch)):
        try:
            ERROR_CASES[case](D, lib)
        except Exception as e:  # noqa: BLE001 - class and message are compared
            caught.append(e)
        else:
            caught.append(None)
    assert caught[1] is not None and caught[0] is not None, caught
    assert type(caught[0]).__name__ == type(caught[1]).__name__, caught
    assert str(caught[0]) == str(caught[1])


def test_validate_args_false_skips_checks():
    d = FD.Normal(_t(ft, [0.0]), _t(ft, [-1.0]), validate_args=False)
    assert tuple(d.batch_shape) == (1,)
    lp_f = FD.Uniform(0.0, 1.0, validate_args=False).log_prob(_t(ft, [2.0, 0.5]))
    lp_t = TD.Uniform(0.0, 1.0, validate_args=False).log_prob(_t(torch, [2.0, 0.5]))
    _close(lp_f, lp_t)


def test_set_default_validate_args():
    FD.Distribution.set_default_validate_args(False)
    try:
        FD.Normal(0.0, -1.0)
    finally:
        FD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        FD.Normal(0.0, -1.0)


# ---------------------------------------------------------------------- KL

KL_PAIRS = [
    ("Normal", "Normal", lambda D, T: (D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Bernoulli", "Bernoulli", lambda D, T: (D.Bernoulli(T([0.2, 0.7])), D.Bernoulli(T([0.5, 0.1])))),
    ("Categorical", "Categorical", lambda D, T: (D.Categorical(T([0.2, 0.3, 0.5])), D.Categorical(T([0.6, 0.1, 0.3])))),
    ("OneHot", "OneHot", lambda D, T: (D.OneHotCategorical(T([0.2, 0.3, 0.5])), D.OneHotCategorical(T([0.6, 0.1, 0.3])))),
    ("Exponential", "Exponential", lambda D, T: (D.Exponential(T([0.5, 2.0])), D.Exponential(T([1.5, 0.3])))),
    ("Gamma", "Gamma", lambda D, T: (D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])), D.Gamma(T([1.5, 0.3]), T([2.0, 0.5])))),
    ("Beta", "Beta", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Beta(T([1.5, 0.3]), T([2.0, 0.5])))),
    ("Dirichlet", "Dirichlet", lambda D, T: (D.Dirichlet(T([0.5, 2.0, 1.0])), D.Dirichlet(T([1.5, 0.3, 2.0])))),
    ("Laplace", "Laplace", lambda D, T: (D.Laplace(T([0.0, 1.0]), T([1.0, 2.0])), D.Laplace(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Uniform", "Uniform", lambda D, T: (D.Uniform(T([0.0, 1.0]), T([1.0, 2.0])), D.Uniform(T([-0.5, 1.5]), T([1.5, 3.0])))),
    ("Poisson", "Poisson", lambda D, T: (D.Poisson(T([0.5, 3.0])), D.Poisson(T([1.5, 2.0])))),
    ("Geometric", "Geometric", lambda D, T: (D.Geometric(T([0.5, 0.3])), D.Geometric(T([0.2, 0.8])))),
    ("Binomial", "Binomial", lambda D, T: (D.Binomial(5, T([0.5, 0.3])), D.Binomial(5, T([0.2, 0.8])))),
    ("Gumbel", "Gumbel", lambda D, T: (D.Gumbel(T([0.0, 1.0]), T([1.0, 2.0])), D.Gumbel(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Cauchy", "Cauchy", lambda D, T: (D.Cauchy(T([0.0, 1.0]), T([1.0, 2.0])), D.Cauchy(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Pareto", "Pareto", lambda D, T: (D.Pareto(T([1.0, 2.0]), T([1.0, 2.0])), D.Pareto(T([0.5, 1.0]), T([0.7, 1.5])))),
    ("LogNormal", "LogNormal", lambda D, T: (D.LogNormal(T([0.0, 1.0]), T([1.0, 2.0])), D.LogNormal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("HalfNormal", "HalfNormal", lambda D, T: (D.HalfNormal(T([1.0, 2.0])), D.HalfNormal(T([0.7, 1.5])))),
    ("MVN", "MVN", lambda D, T: (D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.3], [0.3, 0.5]])),
                                 D.MultivariateNormal(T([[1.0, -1.0], [0.0, 0.0]]), scale_tril=T([[1.0, 0.0], [0.4, 0.7]])))),
    ("Independent", "Independent", lambda D, T: (D.Independent(D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), 1),
                                                 D.Independent(D.Normal(T([0.5, -1.0]), T([0.7, 1.5])), 1))),
    ("Exponential", "Gamma", lambda D, T: (D.Exponential(T([0.5, 2.0])), D.Gamma(T([1.5, 0.3]), T([2.0, 0.5])))),
    ("Uniform", "Normal", lambda D, T: (D.Uniform(T([0.0, 1.0]), T([1.0, 2.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Normal", "Laplace", lambda D, T: (D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), D.Laplace(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Laplace", "Normal", lambda D, T: (D.Laplace(T([0.0, 1.0]), T([1.0, 2.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Exponential", "Normal", lambda D, T: (D.Exponential(T([0.5, 2.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Normal", "Gamma", lambda D, T: (D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), D.Gamma(T([1.5, 0.3]), T([2.0, 0.5])))),
    ("Bernoulli", "Poisson", lambda D, T: (D.Bernoulli(T([0.2, 0.7])), D.Poisson(T([0.5, 2.0])))),
    ("Poisson", "Bernoulli", lambda D, T: (D.Poisson(T([0.5, 2.0])), D.Bernoulli(T([0.2, 0.7])))),
    ("Gamma", "Exponential", lambda D, T: (D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])), D.Exponential(T([1.5, 0.3])))),
    ("Gamma", "Normal", lambda D, T: (D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Gamma", "Gumbel", lambda D, T: (D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])), D.Gumbel(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Exponential", "Gumbel", lambda D, T: (D.Exponential(T([0.5, 2.0])), D.Gumbel(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Normal", "Gumbel", lambda D, T: (D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), D.Gumbel(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Uniform", "Exponential", lambda D, T: (D.Uniform(T([0.5, -1.0]), T([2.0, 1.0])), D.Exponential(T([1.5, 0.3])))),
    ("Uniform", "Gamma", lambda D, T: (D.Uniform(T([0.5, 0.0]), T([2.0, 1.0])), D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])))),
    ("Uniform", "Gumbel", lambda D, T: (D.Uniform(T([0.5, -1.0]), T([2.0, 1.0])), D.Gumbel(T([0.2, 0.1]), T([2.0, 2.0])))),
    ("Uniform", "Beta", lambda D, T: (D.Uniform(T([0.2, -1.0, 0.0]), T([0.7, 0.5, 1.0])), D.Beta(T([0.5, 2.0, 3.0]), T([1.0, 3.0, 0.4])))),
    ("Uniform", "Pareto", lambda D, T: (D.Uniform(T([0.5, -1.0]), T([2.0, 1.0])), D.Pareto(T([0.2, 0.1]), T([2.0, 2.0])))),
    ("Beta", "Uniform", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Uniform(T([-0.5, 0.2]), T([1.5, 1.0])))),
    ("Beta", "Exponential", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Exponential(T([1.5, 0.3])))),
    ("Beta", "Gamma", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Gamma(T([1.5, 0.3]), T([2.0, 0.5])))),
    ("Beta", "Normal", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.5])))),
    ("Beta", "Pareto", lambda D, T: (D.Beta(T([0.5, 2.0]), T([1.0, 3.0])), D.Pareto(T([0.5, 0.1]), T([0.7, 1.5])))),
    ("Gamma", "Uniform", lambda D, T: (D.Gamma(T([0.5, 2.0]), T([1.0, 3.0])), D.Uniform(T([0.0, -1.0]), T([1.0, 2.0])))),
    ("LowRank", "LowRank", lambda D, T: (D.LowRankMultivariateNormal(T([0.0, 1.0]), T([[1.0], [0.5]]), T([1.0, 2.0])),
                                         D.LowRankMultivariateNormal(T([1.0, -1.0]), T([[0.3, 0.1], [0.5, 0.2]]), T([0.5, 1.0])))),
    ("MVN", "LowRank", lambda D, T: (D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.3], [0.3, 0.5]])),
                                     D.LowRankMultivariateNormal(T([1.0, -1.0]), T([[0.3, 0.1], [0.5, 0.2]]), T([0.5, 1.0])))),
    ("LowRank", "MVN", lambda D, T: (D.LowRankMultivariateNormal(T([1.0, -1.0]), T([[0.3, 0.1], [0.5, 0.2]]), T([0.5, 1.0])),
                                     D.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.3], [0.3, 0.5]])))),
    ("Bernoulli-edge", "Bernoulli", lambda D, T: (D.Bernoulli(T([0.0, 1.0, 0.3])), D.Bernoulli(T([0.5, 1.0, 0.0])))),
]


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[f"{a}-{b}" for a, b, _ in KL_PAIRS])
def test_kl_divergence_matches_torch(pair):
    make = pair[2]
    fp, fq = make(FD, lambda x: _t(ft, x))
    tp, tq = make(TD, lambda x: _t(torch, x))
    _close(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq), rtol=1e-7)


def test_register_kl_custom_pair():
    class MyNormal(FD.Normal):
        pass

    @FD.register_kl(MyNormal, FD.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0

    p = MyNormal(_t(ft, [0.0]), _t(ft, [1.0]))
    assert float(FD.kl_divergence(p, FD.Normal(0.0, 1.0))[0]) == 42.0
    # The plain pair still uses the closed form.
    assert float(FD.kl_divergence(FD.Normal(0.0, 1.0), FD.Normal(0.0, 1.0))) == 0.0


# --------------------------------------------------------------- transforms

TRANSFORMS = {
    "Exp": (lambda D, T: D.ExpTransform(), [[-1.0, 0.5, 2.0]]),
    "Affine": (lambda D, T: D.AffineTransform(T([0.5, -1.0, 2.0]), T([2.0, -0.5, 3.0])), [[-1.0, 0.5, 2.0]]),
    "AffineScalar": (lambda D, T: D.AffineTransform(1.0, -2.0), [[-1.0, 0.5, 2.0]]),
    "AffineEvent": (lambda D, T: D.AffineTransform(T([0.5, -1.0, 2.0]), T([2.0, -0.5, 3.0]), event_dim=1), [[-1.0, 0.5, 2.0]]),
    "Sigmoid": (lambda D, T: D.SigmoidTransform(), [[-1.0, 0.5, 2.0]]),
    "Tanh": (lambda D, T: D.TanhTransform(), [[-1.0, 0.5, 2.0]]),
    "Softplus": (lambda D, T: D.SoftplusTransform(), [[-1.0, 0.5, 2.0]]),
    "Power": (lambda D, T: D.PowerTransform(T(2.5)), [[0.3, 0.5, 2.0]]),
    "StickBreaking": (lambda D, T: D.StickBreakingTransform(), [[-1.0, 0.5, 2.0]]),
    "Compose": (lambda D, T: D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.ExpTransform()]), [[-1.0, 0.5, 2.0]]),
    "ComposeEvent": (lambda D, T: D.ComposeTransform([D.ExpTransform(), D.StickBreakingTransform()]), [[-1.0, 0.5, 2.0]]),
    "Inverse": (lambda D, T: D.ExpTransform().inv, [[0.3, 0.5, 2.0]]),
    "Independent": (lambda D, T: D.IndependentTransform(D.SigmoidTransform(), 1), [[-1.0, 0.5, 2.0]]),
    "Reshape": (lambda D, T: D.ReshapeTransform((3,), (3, 1)), [[-1.0, 0.5, 2.0]]),
    "CorrCholesky": (lambda D, T: D.CorrCholeskyTransform(), [[0.3, -1.2, 0.7, 2.0, -0.4, 0.1]]),
    "Stack": (lambda D, T: D.StackTransform([D.ExpTransform(), D.SigmoidTransform(), D.AffineTransform(1.0, 3.0)], dim=1),
              [[0.5, 1.0, -2.0], [2.0, 3.0, 0.1]]),
}


@pytest.mark.parametrize("dim", [0, -1])
def test_cat_transform_matches_torch(dim):
    x = [[0.5, 1.0, 2.0, -0.3], [0.1, -1.0, 0.4, 0.3]] if dim == -1 else [[0.5, 1.0], [2.0, -0.3], [0.1, 0.2]]
    for lib, D in ((ft, FD), (torch, TD)):
        c = D.CatTransform([D.ExpTransform(), D.SigmoidTransform()], dim=dim, lengths=[2, 2] if dim == -1 else [1, 2])
        xx = _t(lib, x)
        out = (c(xx), c.inv(c(xx)), c.log_abs_det_jacobian(xx, c(xx)))
        if lib is ft:
            fo = out
        else:
            to = out
    for a, b in zip(fo, to):
        _close(a, b)


def test_positive_definite_transform_matches_torch():
    x = [[[1.0, 0.5], [-0.3, 0.2]], [[0.1, 0.0], [2.0, -1.0]]]
    f, t = FD.PositiveDefiniteTransform(), TD.PositiveDefiniteTransform()
    fy, ty = f(_t(ft, x)), t(_t(torch, x))
    _close(fy, ty)
    _close(f.inv(fy), t.inv(ty), rtol=1e-7, atol=1e-9)


BIJECT_CONSTRAINTS = {
    "real": lambda C: C.real,
    "positive": lambda C: C.positive,
    "nonnegative": lambda C: C.nonnegative,
    "greater_than": lambda C: C.greater_than(2.0),
    "less_than": lambda C: C.less_than(3.0),
    "unit_interval": lambda C: C.unit_interval,
    "interval": lambda C: C.interval(-1.0, 2.0),
    "half_open": lambda C: C.half_open_interval(0.0, 3.0),
    "simplex": lambda C: C.simplex,
    "lower_cholesky": lambda C: C.lower_cholesky,
    "positive_definite": lambda C: C.positive_definite,
    "corr_cholesky": lambda C: C.corr_cholesky,
    "real_vector": lambda C: C.real_vector,
    "independent_positive": lambda C: C.independent(C.positive, 1),
    "boolean": lambda C: C.boolean,
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(BIJECT_CONSTRAINTS))
def test_biject_to_transform_to_match_torch(registry, name):
    fc, tc = BIJECT_CONSTRAINTS[name](FD.constraints), BIJECT_CONSTRAINTS[name](TD.constraints)
    try:
        tt = getattr(TD, registry)(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            getattr(FD, registry)(fc)
        return
    f = getattr(FD, registry)(fc)
    assert repr(f) == repr(tt)
    shape = {"lower_cholesky": (2, 2), "positive_definite": (2, 2), "corr_cholesky": (3,)}.get(name, (3,))
    x = np.linspace(-1.0, 1.2, int(np.prod(shape))).reshape(shape)
    fy, ty = f(_t(ft, x)), tt(_t(torch, x))
    _close(fy, ty)
    assert bool(fc.check(fy).all())


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_match_torch(name):
    make, x = TRANSFORMS[name]
    f = make(FD, lambda v: _t(ft, v))
    t = make(TD, lambda v: _t(torch, v))
    fx, tx = _t(ft, x), _t(torch, x)
    fy, ty = f(fx), t(tx)
    _close(fy, ty)
    _close(f.inv(fy), t.inv(ty), rtol=1e-6, atol=1e-9)
    _close(f.log_abs_det_jacobian(fx, fy), t.log_abs_det_jacobian(tx, ty))
    assert repr(f.domain) == repr(t.domain) and repr(f.codomain) == repr(t.codomain)
    assert f.bijective == t.bijective
    assert tuple(f.forward_shape(ft.Size([4, 3]))) == tuple(t.forward_shape(torch.Size([4, 3])))
    assert repr(f) == repr(t)


def test_transform_cache_and_sign():
    f = FD.ExpTransform(cache_size=1)
    x = _t(ft, [0.5])
    y = f(x)
    assert f.inv(y) is x
    assert FD.AffineTransform(0.0, -2.0).sign == TD.AffineTransform(0.0, -2.0).sign == -1
    assert FD.ExpTransform() == FD.ExpTransform() and FD.ExpTransform().inv == FD.ExpTransform().inv
    assert FD.identity_transform(x) is x
    with pytest.raises(ValueError):
        FD.ExpTransform(cache_size=2)


# -------------------------------------------------------------- constraints

CONSTRAINTS = [
    ("real", [1.0, math.nan, -math.inf]),
    ("positive", [1.0, 0.0, -1.0]),
    ("nonnegative", [1.0, 0.0, -1.0]),
    ("unit_interval", [1.0, 0.5, 1.5]),
    ("boolean", [1.0, 0.0, 0.5]),
    ("nonnegative_integer", [1.0, 0.0, 0.5]),
    ("positive_integer", [1.0, 0.0, 2.0]),
    ("simplex", [0.2, 0.3, 0.5]),
    ("real_vector", [0.2, math.nan, 0.5]),
    ("one_hot", [0.0, 1.0, 0.0]),
    ("lower_cholesky", [[1.0, 0.0], [0.5, 2.0]]),
    ("positive_definite", [[2.0, 0.5], [0.5, 1.0]]),
    ("positive_semidefinite", [[1.0, 1.0], [1.0, 1.0]]),
    ("symmetric", [[1.0, 2.0], [3.0, 1.0]]),
    ("lower_triangular", [[1.0, 0.0], [0.5, -2.0]]),
]


@pytest.mark.parametrize("name,value", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraints_match_torch(name, value):
    fc, tc = getattr(FD.constraints, name), getattr(TD.constraints, name)
    assert repr(fc) == repr(tc)
    assert fc.is_discrete == tc.is_discrete and fc.event_dim == tc.event_dim
    assert _np(fc.check(_t(ft, value))).tolist() == _np(tc.check(_t(torch, value))).tolist()


def test_parameterised_constraints():
    for make in (lambda C: C.interval(0.0, 2.0), lambda C: C.half_open_interval(0.0, 2.0),
                 lambda C: C.greater_than(1.0), lambda C: C.greater_than_eq(1.0), lambda C: C.less_than(1.0),
                 lambda C: C.integer_interval(0, 2), lambda C: C.independent(C.positive, 1)):
        fc, tc = make(FD.constraints), make(TD.constraints)
        assert repr(fc) == repr(tc)
        v = [0.0, 1.0, 2.0, 1.5]
        assert _np(fc.check(_t(ft, v))).tolist() == _np(tc.check(_t(torch, v))).tolist()
    assert FD.constraints.is_dependent(FD.constraints.dependent)
    assert not FD.constraints.is_dependent(FD.constraints.real)


def test_lazy_namespace_and_perplexity():
    import ferrotorch

    assert ferrotorch.distributions is FD
    assert "distributions" in dir(ferrotorch)
    f, t = _both("Categorical")
    _close(f.perplexity(), t.perplexity())


@pytest.mark.parametrize("diag", [0, -1, 1])
def test_tril_vec_helpers_match_torch(diag):
    from torch.distributions import utils as tu

    from ferrotorch.distributions import utils as fu

    m = np.arange(2 * 16, dtype=np.float64).reshape(2, 4, 4)
    fv, tv = fu.tril_matrix_to_vec(_t(ft, m), diag), tu.tril_matrix_to_vec(_t(torch, m), diag)
    _close(fv, tv)
    _close(fu.vec_to_tril_matrix(fv, diag), tu.vec_to_tril_matrix(tv, diag))


def test_probs_logits_helpers_match_torch():
    from torch.distributions import utils as tu

    from ferrotorch.distributions import utils as fu

    p = [[0.2, 0.3, 0.5], [0.0, 0.4, 0.6]]
    for binary in (False, True):
        _close(fu.probs_to_logits(_t(ft, p), binary), tu.probs_to_logits(_t(torch, p), binary))
        _close(fu.logits_to_probs(_t(ft, p), binary), tu.logits_to_probs(_t(torch, p), binary))
    a, b = fu.broadcast_all(_t(ft, [1.0, 2.0]), 3.0)
    assert tuple(b.shape) == (2,) and str(b.dtype).endswith("float64")
