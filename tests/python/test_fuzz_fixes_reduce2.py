"""Reductions, scans and softmax against PyTorch (fuzz classes of issue 15):
prod's float32 overflow order and its gradient with zeros, cumprod's masked
gradient formula, softmax gradients of 0-d inputs, the var gradient with no
degrees of freedom, topk/mode ties and NaNs (libstdc++'s sort, as PyTorch's
CPU kernels), and the error classes of in-place scans, median and logsumexp."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


def _np(t):
    t = t.detach()
    if "bfloat16" in str(t.dtype) or "float16" in str(t.dtype):
        t = t.float()
    return np.asarray(t.tolist(), dtype=float)


def _close(a, b, rtol=1e-5):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


def _both(fn, values, dtype="float32", grad=False, up=None):
    """Runs `fn(lib, x)` on both libraries from `values`; returns
    (ours, theirs) outputs and, with `grad`, the input gradients for the
    upstream gradient `up` (ones by default)."""
    res = []
    for lib in (ft, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        if grad:
            x.requires_grad_()
        out = fn(lib, x)
        g = None
        if grad:
            o = out if hasattr(out, "shape") else out[0]
            u = lib.ones_like(o) if up is None else lib.tensor(up, dtype=o.dtype).reshape(o.shape)
            o.backward(u)
            g = x.grad
        res.append((out, g))
    return res


# --------------------------------------------------------------------- prod


@pytest.mark.parametrize("values,dtype", [
    ([1e30, 1e30, 1e-30], "float32"),                      # sequential overflow
    ([1e30, 1e-30] * 40, "float32"),                        # 4 x 8 lanes: inf * 0 = NaN
    ([1e30] + [1.0] * 63 + [1e-30, 1e-30, 1e30], "float32"),  # lanes, then the tail in order
    ([1e200, 1e200, 1e-200] * 12, "float64"),               # 4 x 4 lanes of float64, twice
    ([300.0, 300.0, 0.001], "float16"),
    ([3e38, 2.0, 0.25] * 30, "bfloat16"),
])
def test_prod_overflows_in_pytorchs_order(values, dtype):
    (ours, _), (theirs, _) = _both(lambda lib, x: x.prod(), values, dtype)
    _close(ours, theirs, rtol=1e-2)


@pytest.mark.parametrize("view", ["contiguous", "transposed", "expanded", "stepped"])
def test_prod_all_and_dim_follow_the_memory_order(view):
    rng = np.random.default_rng(3)
    base = rng.choice([1e25, 1e-25, 3.0, -2.0, 1e30], size=(70, 4)).tolist()

    def fn(lib, x):
        if view == "transposed":
            x = x.t()
        elif view == "expanded":
            x = x[:, :1].expand(70, 5)
        elif view == "stepped":
            x = x[::2]
        return x.prod(), x.prod(0), x.prod(-1)

    (ours, _), (theirs, _) = _both(fn, base)
    for a, b in zip(ours, theirs):
        _close(a, b, rtol=1e-4)


@pytest.mark.parametrize("values,dim", [
    ([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], 1),         # one / two zeros in a row
    ([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], None),      # two zeros overall: zeros
    ([[2.0, 0.0, inf], [4.0, 1.0, 5.0]], None),      # one zero, an inf factor
    ([[3e38, 1e-30, 2.0], [1.0, 2.0, 3.0]], 1),      # g * (out / x), not (g * out) / x
    ([[1e-30, -4e37, 1e-8]], None),
])
def test_prod_grad_is_pytorchs_prod_backward(values, dim):
    def fn(lib, x):
        return x.prod() if dim is None else x.prod(dim)
    (_, g1), (_, g2) = _both(fn, values, grad=True, up=None)
    _close(g1, g2)


# ------------------------------------------------------------------ cumprod


def test_cumprod_grad_masked_formula_with_inf_and_zero():
    values = [[[1e-30, 1.0, 0.2916, 1.576], [710.0, -1.357, inf, 0.67], [0.338, -0.0, -0.8737, 2.0],
               [-0.3697, 0.0233, 1.0208, -88.0], [-1.2558, -20.0, -20.0, 0.1129]]]
    up = np.linspace(-1, 1, 20).tolist()
    (o1, g1), (o2, g2) = _both(lambda lib, x: lib.cumprod(x, dim=1), values, grad=True, up=up)
    _close(o1, o2)
    _close(g1, g2)


def test_cumprod_grad_after_first_zero_is_zero():
    values = [[-inf], [-0.0], [-inf], [1.0], [-88.0]]
    (_, g1), (_, g2) = _both(lambda lib, x: lib.cumprod(x, dim=0), values, grad=True)
    _close(g1, g2)


def test_cumprod_inplace_grad():
    values = [[0.8, 88.0, -20.0], [-inf, -0.0, -inf]]

    def fn(lib, x):
        y = x.clone()
        y.cumprod_(1)
        return y
    (_, g1), (_, g2) = _both(fn, values, grad=True)
    _close(g1, g2)


def test_cumprod_dtype_grad_is_formed_in_the_input_dtype():
    values = [[0.8076, -0.2819, -0.2695, -0.0, -0.3783], [inf, -0.7781, -0.5104, -1.4783, 0.5204],
              [1.0, -1.0, -0.0, nan, 710.0]]
    up = np.linspace(-1, 1, 15).tolist()
    (_, g1), (_, g2) = _both(lambda lib, x: lib.cumprod(x, dim=1, dtype=lib.bfloat16), values, grad=True, up=up)
    assert str(g1.dtype).endswith("float32")
    _close(g1, g2, rtol=1e-2)


def test_cumsum_dtype_grad():
    (_, g1), (_, g2) = _both(lambda lib, x: lib.cumsum(x, 0, dtype=lib.float64), [3e38, 3e38, 1.0], grad=True,
                             up=[3e38, 3e38, 1.0])
    _close(g1, g2)


# ------------------------------------------------------------------ softmax


@pytest.mark.parametrize("v", [nan, inf, -inf, 2.0])
@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.softmax(x, dim=-1),
    lambda lib, x: lib.nn.functional.softmax(x, dim=0),
    lambda lib, x: lib.nn.functional.softmin(x, dim=0),
    lambda lib, x: lib.log_softmax(x, 0),
    lambda lib, x: lib.log_softmax(x, 0, dtype=lib.float64),
    lambda lib, x: lib.softmax(x, 0, dtype=lib.float64),
])
def test_softmax_grad_of_a_0d_input(v, fn):
    (o1, g1), (o2, g2) = _both(fn, v, grad=True, up=-0.5)
    _close(o1, o2)
    _close(g1, g2)


# ---------------------------------------------------------------------- var


@pytest.mark.parametrize("v", [nan, 1.5, inf])
def test_var_grad_without_degrees_of_freedom(v):
    (_, g1), (_, g2) = _both(lambda lib, x: lib.var(x, dim=None, correction=2), v, "float64", grad=True, up=-1.0)
    _close(g1, g2)


# --------------------------------------------------------------- topk, mode


@pytest.mark.parametrize("n,k", [(5, 3), (5, 4), (12, 5), (40, 17), (40, 39), (130, 2), (200, 3)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_ties_pick_pytorchs_indices(n, k, largest):
    rng = np.random.default_rng(n * 100 + k)
    for _ in range(20):
        values = rng.integers(-3, 3, size=n).astype(float)
        if rng.random() < 0.3:
            values[rng.integers(0, n, size=2)] = nan
        (o1, g1), (o2, g2) = _both(lambda lib, x: lib.topk(x, k, largest=largest), values.tolist(), grad=True)
        assert o1[1].tolist() == o2[1].tolist(), values.tolist()
        _close(o1[0], o2[0])
        _close(g1, g2)


@pytest.mark.parametrize("n", [4, 9, 16, 17, 30, 60])
def test_mode_with_nans_and_ties(n):
    rng = np.random.default_rng(n)
    for _ in range(30):
        values = rng.choice([nan, nan, 1.0, 2.0, -1.0, 0.5, float(rng.integers(0, 100))], size=n)
        (o1, _), (o2, _) = _both(lambda lib, x: lib.mode(x, 0), values.tolist(), "float64")
        _close(o1[0], o2[0])
        assert o1[1].item() == o2[1].item(), values.tolist()


def test_mode_dim_reproducer():
    values = [[[[-0.063, 2.145, 0.0877, -0.169], [nan, 1.66, -0.49, inf]]],
              [[[1.527, nan, -0.82, 0.768], [-1e30, -0.1007, 1e30, 0.3297]]],
              [[[88.0, -0.8935, -88.0, -1e-40], [-1e30, nan, -0.5, 1e-30]]]]
    (o1, _), (o2, _) = _both(lambda lib, x: lib.mode(x, dim=-2, keepdim=True), values, "float64")
    _close(o1[0], o2[0])


# ----------------------------------------------------------- error classes


def _outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, None
    return "ok", r


@pytest.mark.parametrize("fn", [
    lambda lib: lib.tensor(False).cumsum_(0),
    lambda lib: lib.tensor(True).cumprod_(-1),
    lambda lib: lib.tensor(False).cumsum_(lib.tensor(0, dtype=lib.uint8)),
    lambda lib: lib.tensor([False, True]).cumsum_(0),
    lambda lib: lib.tensor([True]).cumsum(0, dtype=lib.bool),
    lambda lib: lib.tensor([True, False]).cumprod(0, dtype=lib.bool),
    lambda lib: lib.tensor(True).cumsum(0, dtype=lib.bool),
    lambda lib: lib.tensor(True).median(dim=2),
    lambda lib: lib.tensor([True]).median(dim=0),
    lambda lib: lib.median(lib.tensor(True), dim=-2, keepdim=False),
    lambda lib: lib.logsumexp(lib.tensor([2.0]), dim=()),
    lambda lib: lib.logsumexp(lib.tensor([0, 2, 5], dtype=lib.uint8).as_strided([3, 3, 5], [1, 0, 0]), dim=()),
    lambda lib: lib.logsumexp(lib.tensor([[2.0, 1.0]]), dim=(), keepdim=True),
    lambda lib: lib.logsumexp(lib.tensor(2.0), dim=()),
    lambda lib: lib.logsumexp(lib.zeros(2, 0, 1), dim=()),
    lambda lib: lib.logsumexp(lib.zeros(3, 0, dtype=lib.int64), dim=()),
])
def test_error_classes_match(fn):
    (c1, r1), (c2, r2) = _outcome(fn, ft), _outcome(fn, torch)
    assert c1 == c2
    if c1 == "ok":
        assert str(r1.dtype).split(".")[-1] == str(r2.dtype).split(".")[-1]
        _close(r1, r2)


def test_logsumexp_empty_dims_message():
    with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the broadcast shape \[1, 1\]"):
        ft.logsumexp(ft.tensor([[2.0, 1.0]]), dim=())


# ------------------------------------------------------ float -> uint8 cast


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.to(lib.uint8),
    lambda lib, x: x.byte(),
    lambda lib, x: lib.cumprod(x, dim=0, dtype=lib.uint8),
    lambda lib, x: lib.cumsum(x, dim=0, dtype=lib.uint8),
])
def test_double_beyond_int32_to_uint8_keeps_the_int64_low_byte(fn):
    values = [-6.884109383462684e+16, -5.49971831967182e+16, 1e10 + 7, -3077098913.0017257, 1e20, -2.5, 300.7]
    for n in (1, len(values), 3 * len(values)):
        vs = (values * 3)[:n]
        (o1, _), (o2, _) = _both(fn, vs, "float64")
        assert o1.tolist() == o2.tolist(), vs
