"""Regression tests for a second batch of fuzzer classes, each against PyTorch:
adaptive average pooling with inf/huge values, group_norm/layer_norm statistics
on overflowing inputs, float16 std_mean, einsum's integer promotion and empty
operands, cat's gradient for skipped empties, and ops that raised on inputs
PyTorch accepts (bool clamp_max, bool mm/bmm/mv and empty median, tril_/triu_
on expanded views)."""

import math

import pytest

import ferrotorch as ft
from _parity import results

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


def _run(fn):
    """(result, None) or (None, exception class name) for torch, then ferrotorch."""
    return results(torch, fn)


def _flat(x):
    return [float(v) for v in x.double().reshape(-1).tolist()]


def _close(a, b, rtol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-6


def assert_same(fn, rtol=1e-5):
    (a, ea), (b, eb) = _run(fn)
    assert ea == eb, f"torch raised {ea}, ferrotorch raised {eb}"
    if ea is not None:
        return
    if isinstance(a, (tuple, list)):
        pairs = list(zip(a, b))
    else:
        pairs = [(a, b)]
    for x, y in pairs:
        assert str(y.dtype).split(".")[-1] == str(x.dtype).split(".")[-1]
        assert tuple(y.shape) == tuple(x.shape)
        fx, fy = _flat(x), _flat(y)
        assert all(_close(p, q, rtol) for p, q in zip(fx, fy)), (fx, fy)


# --- adaptive_avg_pool: each output the mean of its own window --------------------


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_adaptive_avg_pool1d_huge_values_stay_in_their_window(dt):
    v = [[[1e-30, -0.6154, 0.9836, 1.3697, 3e38, -0.0649]], [[nan, 1.1992, 1e-30, 1.6711, 1e30, 0.1186]]]
    assert_same(lambda m: m.nn.functional.adaptive_avg_pool1d(m.tensor(v, dtype=getattr(m, dt)), 2), rtol=1e-2)


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_adaptive_avg_pool2d_inf_only_in_its_window(dt):
    v = [[[[-0.9385, -20.0, 0.0, -0.0, -inf]]]]
    assert_same(lambda m: m.nn.functional.adaptive_avg_pool2d(m.tensor(v, dtype=getattr(m, dt)), 3), rtol=1e-2)


def test_adaptive_avg_pool3d_inf_and_gradient():
    v = [[[[[1.0, inf, 2.0], [3.0, 4.0, -inf]], [[5.0, 6.0, 7.0], [8.0, 9.0, 1e38]]]]]
    assert_same(lambda m: m.nn.functional.adaptive_avg_pool3d(m.tensor(v), (1, 2, 2)))
    grads = []
    for m in (torch, ft):
        x = m.tensor([[[0.5, 1.0, -2.0, 3.0, 4.0]]], dtype=m.float64).requires_grad_()
        (m.nn.functional.adaptive_avg_pool1d(x, 3) * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        grads.append(x.grad.reshape(-1).tolist())
    assert grads[0] == pytest.approx(grads[1])


# --- group_norm / layer_norm: PyTorch's RowwiseMoments statistics ------------------


def test_group_norm_overflowing_square_gives_nan_like_torch():
    v = [[[1.4049, 710.0, -1.0], [-0.2986, -1e30, -1.0360]]]
    assert_same(lambda m: m.nn.functional.group_norm(m.tensor(v), 2), rtol=1e-4)
    assert_same(lambda m: m.nn.functional.layer_norm(m.tensor(v), [3]), rtol=1e-4)


@pytest.mark.parametrize("vals", [
    [1e20, 0.0], [1e20, 1e20], [1e20] * 9, [3e38, 3e38, 3e38], [inf, 0.0, 1.0],
    [1e30, 1.0] + [0.0] * 13, [1.5e19, -1.5e19] * 4, [1e20] + [0.0] * 40,
])
@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_norm_statistics_on_overflowing_rows(vals, dt):
    for fn in (lambda m, x: m.nn.functional.group_norm(x, 1), lambda m, x: m.nn.functional.layer_norm(x, [len(vals)])):
        assert_same(lambda m: fn(m, m.tensor(vals, dtype=getattr(m, dt)).reshape(1, 1, -1)), rtol=1e-2)


def test_group_norm_gradient_still_flows():
    grads = []
    for m in (torch, ft):
        x = m.tensor([[[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]]], dtype=m.float64).requires_grad_()
        m.nn.functional.group_norm(x, 1).pow(3).sum().backward()
        grads.append(x.grad.reshape(-1).tolist())
    assert grads[0] == pytest.approx(grads[1], abs=1e-9)


# --- std_mean / var_mean / std on float16 ------------------------------------------


def test_std_mean_float16_no_overflow_in_variance():
    v = [[[1.4336, 0.5, 1.249, -1.3164, 0.3669], [-0.5, -88.0, 710.0, nan, 0.5],
          [-2.0039, 0.8198, 0.5303, -inf, -0.0572], [88.0, -0.248, -0.1986, inf, 1.0]]]
    for f in (lambda m, x: m.std_mean(x, dim=-2), lambda m, x: m.std(x, dim=-2), lambda m, x: m.var_mean(x, dim=-2)):
        assert_same(lambda m: f(m, m.tensor(v, dtype=m.float16)), rtol=1e-3)


# --- einsum ------------------------------------------------------------------------


@pytest.mark.parametrize("eq,shapes,dt", [
    ("ii", [(1, 1)], "uint8"), ("ii", [(2, 2)], "uint8"), ("ij->", [(1, 1)], "int32"), ("ij->i", [(2, 1)], "bool"),
    ("ii->i", [(2, 2)], "uint8"), ("ij,k->k", [(1, 1), (2,)], "uint8"), ("ij,k->k", [(2, 2), (2,)], "uint8"),
])
def test_einsum_sum_promotes_integers(eq, shapes, dt):
    def f(m):
        ops = [(m.arange(math.prod(s)).reshape(s) % 2 == 0).to(getattr(m, dt)) for s in shapes]
        return m.einsum(eq, *ops)
    assert_same(f)


def test_einsum_with_empty_operand():
    def f(m):
        a = m.zeros(3, 0, dtype=m.float64).transpose(-1, -2)
        b = m.ones(3, 3, dtype=m.float64)
        return m.einsum("ij,jk->ik", a, b)
    assert_same(f)
    assert_same(lambda m: m.einsum("bij,bjk->bik", m.ones(0, 2, 3), m.ones(0, 3, 2)))
    assert_same(lambda m: m.einsum("ij,jk->ik", m.ones(2, 0), m.ones(0, 3)))


# --- cat: skipped legacy empty still gets a gradient --------------------------------


def test_cat_skipped_empty_input_gets_empty_gradient():
    leaf = ft.tensor([], dtype=ft.float32).reshape([0]).requires_grad_()
    r = ft.cat([ft.zeros(1, 0, 4, 1, dtype=ft.int32), ft.zeros(1, 0, 4, 1, dtype=ft.uint8), leaf.clone()], 3)
    assert r.grad_fn is not None
    r.sum().backward()
    assert leaf.grad is not None and tuple(leaf.grad.shape) == (0,)


# --- ops that raised where PyTorch does not ----------------------------------------


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([True, False]).clamp_max(-2),
    lambda m: m.zeros(5, 1, 0, 4, dtype=m.bool).clamp_max(-2),
    lambda m: m.tensor([True, False]).clamp_min(2),
    lambda m: m.tensor([True, False]).clamp_max(1.5),
    lambda m: m.tensor([True, False]).clamp_max(False),
])
def test_bool_clamp_methods(fn):
    assert_same(fn)


@pytest.mark.parametrize("dt", ["int32", "int64", "uint8", "int8", "bool", "float16"])
def test_median_of_empty(dt):
    assert_same(lambda m: m.median(m.zeros(2, 1, 0, 1, dtype=getattr(m, dt))))


@pytest.mark.parametrize("fn", [
    lambda m: m.bmm(m.zeros(2, 2, 0, dtype=m.bool), m.zeros(2, 1, 0, dtype=m.bool).transpose(-1, -2)),
    lambda m: m.bmm(m.zeros(2, 0, 1, dtype=m.bool), m.zeros(2, 1, 1, dtype=m.bool)),
    lambda m: m.mm(m.zeros(2, 0, dtype=m.bool), m.zeros(0, 3, dtype=m.bool)),
    lambda m: m.mv(m.zeros(4, 0, dtype=m.bool)[:, ::2], m.zeros(0, dtype=m.bool)),
    lambda m: m.mv(m.zeros(0, 2, dtype=m.bool), m.zeros(2, dtype=m.bool)),
    lambda m: m.bmm(m.zeros(2, 2, 1, dtype=m.bool), m.zeros(2, 1, 1, dtype=m.bool)),
    lambda m: m.mv(m.zeros(2, 2, dtype=m.bool), m.zeros(2, dtype=m.bool)),
])
def test_bool_products_with_nothing_to_multiply(fn):
    assert_same(fn)


@pytest.mark.parametrize("op", ["tril_", "triu_"])
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3])
def test_tril_triu_inplace_on_expanded_view(op, k):
    assert_same(lambda m: getattr(m.tensor([[1.0, 2.0, 3.0, 4.0]]).expand(4, 4), op)(k))
    assert_same(lambda m: getattr(m.tensor([[1.0], [2.0]]).expand(3, 2, 2), op)(k))


def test_tril_inplace_expanded_of_grad_tensor():
    def f(m):
        leaf = m.tensor([[-0.0515], [-0.4658]]).requires_grad_()
        return leaf.clone().expand(2, 2).tril_(2).detach()
    assert_same(f)
