"""Disagreements the quick fuzz profile found in session 14, each against PyTorch."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldexp_records_ldexp_backward_with_pytorchs_rounding(dtype):
    rng = np.random.default_rng(1)
    x, e, g = rng.standard_normal((3, 1, 4)), rng.uniform(-5, 5, (2, 1)), rng.standard_normal((3, 2, 4))
    res = []
    for lib in (ft, torch):
        X = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        E = lib.tensor(e, dtype=getattr(lib, dtype), requires_grad=True)
        o = lib.ldexp(X, E)
        o.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
        res.append((o.tolist(), X.grad.tolist(), E.grad.tolist(), o.grad_fn.name()))
    assert res[0] == res[1]


def test_ldexp_gradient_sums_opposite_infinities_to_nan():
    # The exponent's gradient is formed over the broadcast shape before the sum: terms
    # -inf, -inf, inf, -inf add up to NaN (a sum of the input first would give -inf).
    res = []
    for lib in (ft, torch):
        x = lib.tensor([[[-2, -4, 5, -1]]])
        e = lib.tensor([[[3e38]], [[88.0]]], requires_grad=True)
        out = lib.ldexp(x, e)
        out.backward(lib.ones_like(out))
        res.append(e.grad.tolist())
    assert math.isnan(res[0][0][0][0]) and math.isnan(res[1][0][0][0])
    assert res[0][1] == res[1][1]
    # Without a gradient to record, the plain product (and out=) still work.
    o = ft.empty(2)
    ft.ldexp(ft.tensor([1.0, 3.0]), ft.tensor([2, -1]), out=o)
    assert o.tolist() == torch.ldexp(torch.tensor([1.0, 3.0]), torch.tensor([2, -1])).tolist()
