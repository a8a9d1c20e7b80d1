"""torch.poisson as a native op (issue 9): its samples follow the Poisson law (a chi-square
test against the closed-form pmf, both of PyTorch's algorithms: below and above rate 10), a
seeded generator reproduces them, and dtypes, gradients and errors match PyTorch."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _chi_square(samples, lam):
    """Pearson's statistic over the bins of the pmf (tails pooled) and the degrees of freedom."""
    n = len(samples)
    lo, hi = max(0, int(lam - 5 * math.sqrt(lam))), int(lam + 5 * math.sqrt(lam)) + 2
    ks = np.arange(lo, hi + 1)
    logp = ks * math.log(lam) - lam - np.array([math.lgamma(k + 1) for k in ks])
    p = np.exp(logp)
    p[0] += 1 - p.sum()  # pool the far tails into the edge bins
    observed = np.array([np.sum(samples == k) for k in ks], dtype=float)
    observed[0] += np.sum(samples < lo) + np.sum(samples > hi)
    expected = n * p
    keep = expected >= 5
    stat = float(np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep]))
    return stat, int(keep.sum()) - 1


@pytest.mark.parametrize("lam", [0.3, 3.0, 9.5, 10.0, 30.0, 400.0])
def test_samples_follow_the_poisson_law(lam):
    g = ft.Generator().manual_seed(1234)
    samples = ft.poisson(ft.full((100_000,), lam, dtype=ft.float64), generator=g).numpy()
    assert np.all(samples >= 0) and np.all(samples == np.floor(samples))
    stat, dof = _chi_square(samples, lam)
    # The 99.99th percentile of chi-square is below dof + 9 sqrt(2 dof) + 20 for these dofs.
    assert stat < dof + 9 * math.sqrt(2 * dof) + 20, (stat, dof)
    assert abs(samples.mean() - lam) < 5 * math.sqrt(lam / samples.size)


def test_seeded_generator_reproduces_and_global_seed_too():
    rates = ft.tensor([[0.5, 12.0, 3.0], [100.0, 0.0, 7.5]])
    a = ft.poisson(rates, generator=ft.Generator().manual_seed(5))
    b = ft.poisson(rates, generator=ft.Generator().manual_seed(5))
    assert a.tolist() == b.tolist()
    ft.manual_seed(9)
    c = ft.poisson(rates)
    ft.manual_seed(9)
    assert ft.poisson(rates).tolist() == c.tolist()
    assert a[1, 1].item() == 0.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_dtype_shape_and_layout_follow_the_input(dtype):
    rates = ft.full((3, 4), 2.0, dtype=getattr(ft, dtype)).t()
    out = ft.poisson(rates)
    ref = torch.poisson(torch.full((3, 4), 2.0, dtype=getattr(torch, dtype)).t())
    assert out.dtype == getattr(ft, dtype) and str(ref.dtype) == str(out.dtype).replace("ferrotorch", "torch")
    assert tuple(out.shape) == tuple(ref.shape) == (4, 3)
    assert ft.poisson(ft.zeros(0, dtype=getattr(ft, dtype))).shape == (0,)


def test_gradient_is_zero_like_pytorch():
    for lib in (torch, ft):
        x = lib.tensor([3.0, 20.0], requires_grad=True)
        y = lib.poisson(x)
        assert y.requires_grad and y.grad_fn.name() == "PoissonBackward0"
        (y * 2).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("value", [math.nan, -1.0, -1e-40])
def test_invalid_rates_raise_like_pytorch(value):
    msgs = []
    for lib in (torch, ft):
        with pytest.raises(RuntimeError) as e:
            lib.poisson(lib.tensor([1.0, value]))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_integer_input_and_huge_rates_like_pytorch():
    for lib in (torch, ft):
        with pytest.raises(NotImplementedError, match="poisson_cpu"):
            lib.poisson(lib.ones(2, dtype=lib.int64))
    # A count past int64 (an infinite or 1e20 rate) is int64's minimum, as PyTorch's conversion gives.
    for v in (math.inf, 1e20):
        assert ft.poisson(ft.tensor([v])).item() == torch.poisson(torch.tensor([v])).item() == -(2.0 ** 63)
