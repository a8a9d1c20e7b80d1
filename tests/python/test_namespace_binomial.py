"""``torch.binomial`` (native sampler on ferrotorch's generator) at the level of the
distribution: the exact pmf (chi-square), moments in each algorithm's regime, the
deterministic corners PyTorch defines, broadcasting, dtypes, errors and grad nodes."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402
from _parity import error_of as _err  # noqa: E402


def _pmf(n, p):
    return np.array([math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)])


# (n, p): inversion (n p < 10), BTRS (n p >= 10), and both mirrored through p > 1/2.
@pytest.mark.parametrize("n,p", [(12, 0.3), (200, 0.25), (40, 0.8), (500, 0.6), (1, 0.5)])
def test_samples_follow_the_binomial_pmf(n, p):
    g = ft.Generator().manual_seed(1234)
    m = 40000
    x = ft.binomial(ft.full((m,), float(n), dtype=ft.float64), ft.full((m,), p, dtype=ft.float64), generator=g)
    k = x.numpy()
    assert x.dtype == ft.float64 and np.all(k == np.round(k)) and k.min() >= 0 and k.max() <= n
    counts = np.bincount(k.astype(np.int64), minlength=n + 1)
    expected = m * _pmf(n, p)
    keep = expected >= 5  # pool the tails so every cell expects >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 1:
        obs, exp = obs[:-1], exp[:-1]
    chi2 = ((obs - exp) ** 2 / exp).sum()
    dof = max(len(obs) - 1, 1)
    # 5-sigma bound on a chi-square statistic with `dof` degrees of freedom
    assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)
    assert abs(k.mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / m)


def test_deterministic_corners_match_torch():
    c = [-1., 0., 3., 4., 4., 2.5]
    p = [0.5, 0.5, 0., 1.5, -0.5, 1.0]
    for dt in ("float32", "float64"):
        a = ft.binomial(ft.tensor(c, dtype=getattr(ft, dt)), ft.tensor(p, dtype=getattr(ft, dt)))
        b = torch.binomial(torch.tensor(c, dtype=getattr(torch, dt)), torch.tensor(p, dtype=getattr(torch, dt)))
        assert a.tolist() == b.tolist() and str(a.dtype).split(".")[-1] == dt
    nan = ft.binomial(ft.tensor([5.]), ft.tensor([float("nan")]))
    assert math.isnan(nan.item()) and math.isnan(torch.binomial(torch.tensor([5.]), torch.tensor([float("nan")])).item())


@pytest.mark.parametrize("cs,ps", [((2, 1), (3,)), ((1,), (3,)), ((3,), (2, 1)), ((2, 3), (2, 3)), ((), ())])
def test_broadcast_shapes_and_contiguous_output(cs, ps):
    a = ft.binomial(ft.full(cs, 5.), ft.full(ps, 0.5))
    b = torch.binomial(torch.full(cs, 5.), torch.full(ps, 0.5))
    assert tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride())


def test_transposed_count_gives_contiguous_output():
    a = ft.binomial(ft.full((1, 2), 10.).expand(2, 2).t(), ft.tensor([[0.5, 0.1], [0.2, 0.3]]))
    b = torch.binomial(torch.full((1, 2), 10.).expand(2, 2).t(), torch.tensor([[0.5, 0.1], [0.2, 0.3]]))
    assert tuple(a.stride()) == tuple(b.stride()) == (2, 1)


@pytest.mark.parametrize("mk", [
    lambda L: (L.tensor([10., 5.]), L.tensor([0.5, 0.2], dtype=L.float64)),
    lambda L: (L.tensor([10, 5]), L.tensor([0.5, 0.2])),
    lambda L: (L.tensor([10., 5.]).half(), L.tensor([0.5, 0.2]).half()),
    lambda L: (L.tensor([10., 5.]).bfloat16(), L.tensor([0.5, 0.2]).bfloat16()),
    lambda L: (L.tensor([10., 5.]), 0.5),
    lambda L: (L.tensor([10., 5.]), L.tensor([0.5, 0.2, 0.1])),
])
def test_errors_match(mk):
    assert _err(lambda: ft.binomial(*mk(ft))) == _err(lambda: torch.binomial(*mk(torch)))


def test_generator_reproducibility():
    c, p = ft.full((100,), 50.), ft.full((100,), 0.3)
    a = ft.binomial(c, p, generator=ft.Generator().manual_seed(7))
    b = ft.binomial(c, p, generator=ft.Generator().manual_seed(7))
    d = ft.binomial(c, p, generator=ft.Generator().manual_seed(8))
    assert a.tolist() == b.tolist() != d.tolist()
    ft.manual_seed(3)
    x = ft.binomial(c, p)
    ft.manual_seed(3)
    assert ft.binomial(c, p).tolist() == x.tolist()


def test_no_derivative():
    for lib in (ft, torch):
        c = lib.tensor([10., 5.], requires_grad=True)
        out = lib.binomial(c, lib.tensor([0.5, 0.2]))
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            out.sum().backward()


def test_distribution_sample_uses_the_sampler():
    d = ft.distributions.Binomial(ft.tensor([10., 300.]), probs=ft.tensor([0.2, 0.7]))
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000, 2)
    mean = s.mean(0).tolist()
    assert abs(mean[0] - 2.0) < 0.05 and abs(mean[1] - 210.0) < 0.5
    assert tuple(torch.distributions.Binomial(torch.tensor([10., 300.]), probs=torch.tensor([0.2, 0.7]))
                 .sample((3,)).shape) == tuple(d.sample((3,)).shape)
