"""Regression tests for elementwise-arithmetic classes of the differential fuzz campaign."""

import math

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _same(a, b):
    assert a.dtype.__repr__().split(".")[-1] == b.dtype.__repr__().split(".")[-1]
    x, y = a.detach().double().flatten().tolist(), b.detach().double().flatten().tolist()
    assert len(x) == len(y)
    for p, q in zip(x, y):
        assert (math.isnan(p) and math.isnan(q)) or p == q, (x, y)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("s", [1e30, -0.828, 0.151])
def test_reduced_float_scalar_mul_div_in_float32(dt, s):
    vals = [0.0, -float("inf"), 7.75e-07, -2.234375, 4.03125, 1.0]
    for lib_fn in (lambda L, t: t * s, lambda L, t: s * t, lambda L, t: L.true_divide(t, s),
                   lambda L, t: L.floor_divide(t, s), lambda L, t: L.div(t, s, rounding_mode="trunc")):
        r = [lib_fn(L, L.tensor(vals, dtype=getattr(L, dt))) for L in (ft, torch)]
        _same(*r)


def test_inplace_mul_by_int_zero_dim():
    r = []
    for L in (ft, torch):
        t = L.tensor(0.0, dtype=L.float16)
        t *= L.tensor(-1055351008, dtype=L.int32)
        r.append(t)
    _same(*r)


def test_rtruediv_is_reciprocal_times_other():
    vals = [0.886935293674469, -1e30, -9.99994610111476e-41, 0.5, -0.0]
    out, grads = [], []
    for L in (ft, torch):
        leaf = L.tensor(vals, dtype=L.float32, requires_grad=True)
        o = -0.0 / leaf.clone()
        o.sum().backward()
        out.append(o)
        grads.append(leaf.grad)
    _same(*out)
    _same(*grads)


@pytest.mark.parametrize("op", ["fmod_", "remainder_"])
def test_inplace_fmod_grad_keeps_float32_quotient(op):
    g = []
    for L in (ft, torch):
        t0 = L.tensor([[-4.0]], dtype=L.float16)
        leaf = L.tensor([[-3.1089516811660944e-12]], dtype=L.float32, requires_grad=True)
        getattr(t0, op)(leaf.clone())
        t0.sum().backward()
        g.append(leaf.grad)
    _same(*g)


def test_lerp_large_negative_weight_uses_high_form():
    r = []
    for L in (ft, torch):
        s = L.tensor([3.0, 1.0, 3.0])
        e = L.tensor([-float("inf"), 2.0, float("inf")])
        r.append(L.lerp(s, e, -1.914))
        r.append(L.lerp(s, e, L.tensor([-0.7, -0.2, float("nan")])))
    _same(r[0], r[2])
    _same(r[1], r[3])
