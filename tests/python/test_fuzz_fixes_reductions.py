"""Regression tests for fuzz classes in reductions (std/var/std_mean/var_mean), against PyTorch."""
import math

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf = math.inf


def _same(a, b, tol=1e-6):
    a, b = a.tolist(), torch.as_tensor(b).tolist()
    a = a if isinstance(a, list) else [a]
    b = b if isinstance(b, list) else [b]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if math.isnan(y):
            assert math.isnan(x), (a, b)
        else:
            assert x == pytest.approx(y, rel=tol, abs=tol), (a, b)


@pytest.mark.parametrize("vals", [[1.0, inf], [inf, 1.0], [1.0, inf, 2.0], [inf, inf], [-inf, 1.0, 2.0], [1.0, 2.0, 4.0]])
@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
def test_moment_mean_with_inf_is_welford(vals, fn):
    # PyTorch's Welford mean: inf only when the one infinity is visited last.
    o = getattr(ft, fn)(ft.tensor(vals), dim=0)
    r = getattr(torch, fn)(torch.tensor(vals), dim=0)
    _same(o[0], r[0])
    _same(o[1], r[1])


def test_std_mean_grad_equal_elements():
    # Equal elements: std is exactly 0, so its gradient part is masked to 0.
    v = 1.6835285674927545
    a = ft.tensor([v], dtype=ft.float64).requires_grad_()
    b = torch.tensor([v], dtype=torch.float64).requires_grad_()
    for lib, x in ((ft, a), (torch, b)):
        s, m = lib.std_mean(x.clone().expand([3]), dim=-1, keepdim=True)
        (s * 0.7 - m * 0.3).sum().backward()
    _same(a.grad, b.grad, 1e-9)


def test_var_grad_near_float_max_no_overflow():
    vals = [0.5, -1.0, 3.0000000054977558e38, 2.0, -88.0]
    a = ft.tensor(vals).requires_grad_()
    b = torch.tensor(vals).requires_grad_()
    ft.var(a, dim=0).backward()
    torch.var(b, dim=0).backward()
    assert not math.isinf(a.grad.tolist()[2])
    _same(a.grad, b.grad, 1e-4)
