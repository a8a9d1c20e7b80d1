"""Fuzz classes of issue 15 (float32 evaluation order, fill-value checks,
check order): addmm's alpha/beta placement per operand layout, addcmul's
fused multiply-add, glu's backward formula, full_like's overflow check and
scatter_reduce(bool, 'mean') raising before the index is read."""

import itertools
import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

BIG = 3e38


def _vals(t):
    return np.array(t.detach().double().reshape(-1).tolist(), dtype=np.float64)


def _same_values(a, b, rel=1e-5):
    x, y = _vals(a), _vals(b)
    assert x.shape == y.shape
    for u, v in zip(x, y):
        if math.isnan(v):
            assert math.isnan(u), (x, y)
        elif math.isinf(v):
            assert u == v, (x, y)
        else:
            assert u == pytest.approx(v, rel=rel, abs=1e-30), (x, y)


def _outcome(fn, lib):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)


# ---------------------------------------------------------------- addmm


def _layout(lib, a, transposed):
    """`a` (numpy, 2-D) as a row-major tensor, a column-major one (transposed
    storage), or a stepped slice (no unit stride: PyTorch copies it)."""
    if transposed == "row":
        return lib.tensor(a)
    if transposed == "col":
        return lib.tensor(np.ascontiguousarray(a.T)).t()
    return lib.tensor(np.repeat(a, 2, axis=1))[:, ::2]


def _addmm_cases(m, k, n):
    """Inputs whose result shows where alpha and beta are applied: a product
    that overflows unless alpha scales an operand first, an underflow that
    tells which operand it scales, and beta*input that overflows with the
    first product unless it is added after the sum."""
    a = np.zeros((m, k), np.float32)
    b = np.zeros((k, n), np.float32)
    a[:, 0], b[0, :] = 2, BIG
    yield a, b, np.zeros((m, n), np.float32), 0, 0.5
    a = np.zeros((m, k), np.float32)
    b = np.zeros((k, n), np.float32)
    a[:, 0], b[0, :] = 2.0**-149, 2.0**100
    yield a, b, np.zeros((m, n), np.float32), 0, 0.5
    a = np.zeros((m, k), np.float32)
    b = np.zeros((k, n), np.float32)
    b[:, 0], a[0, :] = 2.0**-149, 2.0**100
    yield a, b, np.zeros((m, n), np.float32), 0, 0.5
    if k >= 2:
        a = np.zeros((m, k), np.float32)
        b = np.zeros((k, n), np.float32)
        a[:, 0], a[:, 1], b[0, :], b[1, :] = 1, -1, BIG, BIG
        yield a, b, np.full((m, n), BIG, np.float32), 1, 1


@pytest.mark.parametrize("m,k,n", [(4, 3, 3), (1, 3, 3), (3, 3, 1), (1, 3, 1), (3, 1, 3), (3, 1, 1), (1, 1, 1), (2, 4, 5)])
def test_addmm_alpha_beta_follow_operand_layout(m, k, n):
    for (a, b, c, beta, alpha), la, lb in itertools.product(_addmm_cases(m, k, n), ["row", "col", "step"], ["row", "col", "step"]):
        theirs = torch.addmm(torch.tensor(c), _layout(torch, a, la), _layout(torch, b, lb), beta=beta, alpha=alpha)
        ours = ft.addmm(ft.tensor(c), _layout(ft, a, la), _layout(ft, b, lb), beta=beta, alpha=alpha)
        _same_values(ours, theirs)


def test_addmm_transposed_mat2_scales_the_sum():
    # The fuzz reproducer: mat2 a transposed view, so MKL forms the sum first
    # and scales it: -2 * 3e38 overflows before alpha=0.5 applies.
    def f(lib):
        t0 = lib.tensor([[2.0]])
        t1 = lib.tensor([[1.0, -3.0, 4.0], [-2.0, -2.0, -1.0], [-2.0, 1.0, 2.0], [1.0, -1.0, 1.0]])
        t2 = lib.tensor([[1e30, 0.8943077325820923, -0.5], [-1.0, 1.3996100425720215, -0.6744803190231323], [BIG, 710.0, 0.539764404296875]]).transpose(-1, -2)
        return lib.addmm(t0, t1, t2, beta=1, alpha=0.5)

    theirs = f(torch)
    assert theirs[1, 2].item() == -math.inf
    _same_values(f(ft), theirs)


# ---------------------------------------------------------------- addcmul


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_addcmul_fuses_the_last_multiply_add(dtype):
    def f(lib):
        d = getattr(lib, dtype)
        s = lib.tensor([-math.inf, -BIG, 1.0, 0.5, math.nan]).to(d)
        a = lib.tensor([8.0, 2.0, 1 + 2**-12, 3.0, 1.0]).to(d)
        b = lib.tensor([BIG, BIG, 1 + 2**-12, 0.1, 2.0]).to(d)
        return lib.addcmul(s, a, b, value=2), lib.addcmul(s, a, b, value=1), lib.addcdiv(s, a, b, value=2)

    for ours, theirs in zip(f(ft), f(torch)):
        _same_values(ours, theirs, rel=1e-2)


def test_addcmul_mixed_dtypes_out_of_range_product():
    # float16 -inf + 2 * uint8 8 * float32 3e38 in float32: -inf (PyTorch's
    # fused multiply-add), not inf - inf = NaN.
    def f(lib):
        return lib.addcmul(lib.tensor([-math.inf, 1.0], dtype=lib.float16), lib.tensor([8, 1], dtype=lib.uint8), lib.tensor([BIG, 2.0]), value=2.0)

    theirs = f(torch)
    assert theirs[0].item() == -math.inf
    _same_values(f(ft), theirs)


# ---------------------------------------------------------------- glu


def test_glu_backward_order():
    data = [[[1.6060601472854614, -1.5738931894302368, -88.0, 0.8349080085754395, 0.9706057906150818],
             [-88.0, BIG, 0.7711669206619263, 1e-30, -0.3436446189880371],
             [88.0, 710.0, 1e-30, -0.10832566022872925, -0.28262826800346375]],
            [[1e30, -0.5279016494750977, -1.3457436561584473, 1e-30, -1e-40],
             [-0.654017984867096, -0.3169114589691162, 710.0, 20.0, -0.8024377822875977],
             [710.0, 0.0, 0.2965932786464691, 710.0, 0.13107912242412567]]]
    w = np.linspace(-3, 3, 15, dtype=np.float32).reshape(5, 3, 1)

    def f(lib):
        leaf = lib.tensor(data).requires_grad_()
        y = lib.nn.functional.glu(leaf.clone().permute([2, 1, 0]), -1)
        (y * lib.tensor(w)).sum().backward()
        return y, leaf.grad, y.grad_fn.name()

    (yo, go, no), (yt, gt, nt) = f(ft), f(torch)
    assert no == nt == "GluBackward0"
    _same_values(yo, yt)
    # (1 - s) * s * a * g stays finite: -9.4e37, where (g * a) * (1 - s) * s is -inf.
    assert math.isfinite(gt[0, 1, 1].item())
    x, y = _vals(go), _vals(gt)
    assert np.array_equal(np.isfinite(x), np.isfinite(y))
    np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_glu_reduced_and_double(dtype):
    def f(lib):
        x = lib.tensor([[1.0, -2.0, 300.0, 60000.0], [-60000.0, 3.0, 0.5, 11.0]], dtype=getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.glu(x, 1)
        (y * lib.tensor([[7.0, -3.0], [60000.0, 2.0]], dtype=getattr(lib, dtype))).sum().backward()
        return y, x.grad

    for ours, theirs in zip(f(ft), f(torch)):
        _same_values(ours, theirs, rel=1e-2)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.glu(lib.tensor([1, 2]), 0),
    lambda lib: lib.nn.functional.glu(lib.tensor([1, 2, 3]), 0),
    lambda lib: lib.nn.functional.glu(lib.ones(3), 0),
    lambda lib: lib.nn.functional.glu(lib.tensor(1.0), 0),
    lambda lib: lib.nn.functional.glu(lib.ones(2), 1),
])
def test_glu_errors(call):
    assert _outcome(call, ft)[0] == _outcome(call, torch)[0]


# ---------------------------------------------------------------- full_like


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "uint8"])
@pytest.mark.parametrize("shape", [(), (1,), (0,), (2,), (1, 1), (2, 3)])
@pytest.mark.parametrize("value", [1276306366, 70000, 1e39, 300, -1, math.inf, "t_int", "t_float"])
def test_full_like_checks_value_against_the_result(dtype, shape, value):
    def f(lib):
        v = value
        if v == "t_int":
            v = lib.tensor(1276306366, dtype=lib.int32)
        elif v == "t_float":
            v = lib.tensor(1e10)
        return lib.full_like(lib.zeros(shape, dtype=getattr(lib, dtype)), v)

    ours, theirs = _outcome(f, ft), _outcome(f, torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "ok":
        assert ours[1].dtype == getattr(ft, dtype)
        assert tuple(ours[1].shape) == tuple(theirs[1].shape)
        _same_values(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


# ---------------------------------------------------------------- scatter_reduce


@pytest.mark.parametrize("reduce", ["mean", "sum", "amax"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("case", range(6))
def test_scatter_reduce_bool_check_order(reduce, include_self, case):
    def f(lib):
        self_, index, src = [
            (lib.tensor([], dtype=lib.bool), lib.tensor([0]), lib.tensor([True])),
            (lib.tensor([True, False]), lib.tensor([5]), lib.tensor([True])),
            (lib.tensor([True, False]), lib.tensor([1]), lib.tensor([True])),
            (lib.tensor([True, False]), lib.tensor([], dtype=lib.int64), lib.tensor([True])),
            (lib.tensor([True, False]), lib.tensor([0, 1, 1]), lib.tensor([True])),
            (lib.tensor([True, False]), lib.tensor([0]), lib.tensor([1.0])),
        ][case]
        return lib.scatter_reduce(self_, 0, index, src, reduce, include_self=include_self).tolist()

    ours, theirs = _outcome(f, ft), _outcome(f, torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] in ("ok", "NotImplementedError"):
        assert ours[1] == theirs[1]


def test_scatter_reduce_inplace_bool_mean_before_index():
    def f(lib):
        return lib.tensor([True, False]).scatter_reduce_(0, lib.tensor([7]), lib.tensor([True]), "mean", include_self=True)

    ours, theirs = _outcome(f, ft), _outcome(f, torch)
    assert ours == theirs


def test_linear_adds_bias_after_the_sum():
    # F.linear is addmm(bias, x, weight.t()): a column-major mat2, so MKL sums
    # the products first and adds beta * bias after (1 + (3e38 - 3e38 + 0.5)).
    def f(lib):
        x = lib.tensor([[1.0, -1.0, 0.5], [2.0, 2.0, 2.0]])
        w = lib.tensor([[BIG, BIG, 0.0], [BIG, BIG, 1.0]])
        return lib.nn.functional.linear(x, w, lib.tensor([BIG, 1.0]))

    theirs = f(torch)
    assert theirs[0].tolist() == [pytest.approx(BIG), 1.5]
    _same_values(f(ft), theirs)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_glu_sigmoid_underflows_like_pytorch(dtype):
    # glu's kernel is a * (1 / (1 + exp(-b))): exp(101.375) overflows float32,
    # so the gate is 0 and inf * 0 is NaN (float64 keeps the denormal gate).
    def f(lib):
        x = lib.tensor([[math.inf] * 20, [-101.375] * 20], dtype=getattr(lib, dtype))
        return lib.nn.functional.glu(x, 0), lib.nn.functional.glu(x[:, 0], 0)

    for ours, theirs in zip(f(ft), f(torch)):
        _same_values(ours, theirs)
