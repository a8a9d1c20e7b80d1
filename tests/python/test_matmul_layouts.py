"""Matrix products by operand layout against PyTorch: the `x @ W.T` shape of a
linear layer (row-major result, column-major right operand), which the CPU
kernel computes through a column-major copy of the left operand and a
column-major scratch result; strided and transposed operands, odd sizes,
float32/float64, accumulation onto a bias (addmm), non-finite values in
either operand, one and two threads. Also ReLU's gradient (a `where` against
a broadcast zero) and the contiguous `where` loops it runs."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = ft.get_num_threads()
    ft.set_num_threads(request.param)
    yield request.param
    ft.set_num_threads(before)


def _vals(t):
    return np.asarray(t.detach().double().reshape(-1).tolist(), dtype=np.float64)


def _same(a, b, rtol, strides=True):
    """Values of `a` (ours) and `b` (PyTorch's): dtype, shape, strides, the
    same NaN and infinity positions, finite values within `rtol`."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    if strides:
        assert tuple(a.stride()) == tuple(b.stride())
    x, y = _vals(a), _vals(b)
    assert np.array_equal(np.isnan(x), np.isnan(y)), np.argwhere(np.isnan(x) != np.isnan(y))[:5]
    big = np.isinf(y)
    assert np.array_equal(x[big], y[big])
    fin = np.isfinite(y)
    np.testing.assert_allclose(x[fin], y[fin], rtol=rtol, atol=rtol * 10)


def _operand(lib, a, how):
    """`a` (a NumPy matrix) as a `lib` tensor of the same values: contiguous,
    column-major (a transposed contiguous copy), or a strided slice of a
    larger tensor."""
    if how == "row":
        return lib.from_numpy(a.copy())
    if how == "col":
        return lib.from_numpy(np.ascontiguousarray(a.T)).t()
    big = np.zeros((a.shape[0] * 2, a.shape[1] * 3), dtype=a.dtype)
    big[::2, 1::3] = a
    return lib.from_numpy(big)[::2, 1::3]


RTOL = {np.float32: 1e-4, np.float64: 1e-11}

# (m, n, k): a linear layer's batch x out x in, small batches, odd sizes,
# m > n (left operand row-major: the direct path), k below the copy threshold.
SHAPES = [(128, 512, 512), (32, 384, 128), (4, 512, 512), (2, 1024, 1024), (3, 97, 65), (65, 64, 130),
          (17, 300, 64), (64, 10, 512), (1, 200, 300), (40, 33, 63)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("lhs", ["row", "col", "strided"])
def test_x_times_weight_transposed(threads, dtype, m, n, k, lhs):
    rng = np.random.default_rng(m * 1000 + n + k)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    ours = _operand(ft, x, lhs).mm(ft.from_numpy(w).t())
    theirs = _operand(torch, x, lhs).mm(torch.from_numpy(w).t())
    _same(ours, theirs, RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("m,n,k", [(128, 512, 784), (32, 128, 512), (5, 70, 90)])
@pytest.mark.parametrize("rhs", ["col", "strided"])
def test_addmm_onto_a_bias(threads, dtype, m, n, k, rhs):
    rng = np.random.default_rng(k)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (n, k), (n,)))
    res = []
    for lib in (ft, torch):
        wt = _operand(lib, w, rhs).t() if rhs == "strided" else lib.from_numpy(w).t()
        res.append(lib.from_numpy(b).addmm(lib.from_numpy(x), wt, beta=1.0, alpha=1.0))
        res.append(lib.nn.functional.linear(lib.from_numpy(x), lib.from_numpy(w), lib.from_numpy(b)))
    _same(res[0], res[2], RTOL[dtype])
    _same(res[1], res[3], RTOL[dtype])


def _poison(a, where, value):
    a = a.copy()
    for i, j in where:
        a[i, j] = value
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("value", [inf, -inf, nan, "huge"])
@pytest.mark.parametrize("side", ["lhs", "rhs", "both"])
def test_non_finite_and_overflowing_operands(threads, dtype, value, side):
    # Each entry PyTorch's kernel gets NaN or an infinity for (an infinity
    # against a zero, opposite infinities, a term past the range) must come
    # out the same, whichever operand held it and through the copied lhs.
    m, n, k = 24, 160, 96
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    big = float(np.finfo(dtype).max) / 4
    v = big if value == "huge" else value
    if side in ("lhs", "both"):
        x = _poison(x, [(0, 0), (5, 95), (23, 40)], v)
        x[3, :] = 0.0
        x[3, 10] = v
    if side in ("rhs", "both"):
        w = _poison(w, [(0, 0), (159, 3), (80, 40)], -v if value == "huge" else v)
        w[7, :] = 0.0
        w[7, 10] = -v if value in (inf, "huge") else v
    for lhs in ("row", "strided"):
        ours = _operand(ft, x, lhs).mm(ft.from_numpy(w).t())
        theirs = _operand(torch, x, lhs).mm(torch.from_numpy(w).t())
        _same(ours, theirs, RTOL[dtype])


def test_relu_gradient_against_pytorch():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 300)).astype(np.float32)
    a[0, :4] = [0.0, -0.0, nan, inf]
    g = rng.standard_normal((64, 300)).astype(np.float32)
    g[1, :3] = [nan, inf, -inf]
    res = []
    for lib in (ft, torch):
        x = lib.from_numpy(a.copy()).requires_grad_(True)
        y = lib.nn.functional.relu(x)
        assert type(y.grad_fn).__name__ == "ReluBackward0"
        y.backward(lib.from_numpy(g.copy()))
        res.append(x.grad)
    _same(res[0], res[1], 0.0)
    np.testing.assert_array_equal(_vals(res[0]), _vals(res[1]))


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_relu_gradient_dtypes_and_noncontiguous(dtype):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((33, 70))
    res = []
    for lib in (ft, torch):
        x = lib.from_numpy(a.copy()).to(getattr(lib, dtype)).t().requires_grad_(True)
        lib.nn.functional.relu(x).sum().backward()
        res.append(x.grad)
    # The gradient of a transposed leaf is contiguous here, PyTorch's takes
    # the leaf's strides (AccumulateGrad's layout rule, not this kernel's).
    _same(res[0], res[1], 0.0, strides=False)


@pytest.mark.parametrize("shape", [(1000,), (37, 129), (3, 1, 70000)])
@pytest.mark.parametrize("form", ["tensors", "scalar_x", "scalar_y", "scalars"])
def test_where_contiguous_and_broadcast_scalars(threads, shape, form):
    rng = np.random.default_rng(5)
    c = rng.random(shape) < 0.5
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    res = []
    for lib in (ft, torch):
        xs = lib.tensor(2.5, dtype=lib.float64) if form in ("scalar_x", "scalars") else lib.from_numpy(x)
        ys = lib.tensor(-1.0, dtype=lib.float64) if form in ("scalar_y", "scalars") else lib.from_numpy(y)
        res.append(lib.where(lib.from_numpy(c), xs, ys))
    _same(res[0], res[1], 0.0)


@pytest.mark.parametrize("write", ["view", "base", "t_view"])
def test_in_place_writes_between_products_are_seen(write):
    # A weight multiplied, then written in place through a view (an infinity
    # and a NaN), then multiplied again: the second product sees the values.
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((96, 128)).astype(np.float32)
    res = []
    for lib in (ft, torch):
        W, X = lib.from_numpy(w.copy()), lib.from_numpy(x.copy())
        first = X.mm(W.t())
        if write == "view":
            W[3].fill_(inf)
            W[5, 7:9] = nan
        elif write == "base":
            W.mul_(0.0)
            W[0, 0] = -inf
        else:
            W.t()[7, 9] = inf
        res.append((first, X.mm(W.t())))
    _same(res[0][0], res[1][0], 1e-4)
    _same(res[0][1], res[1][1], 1e-4)
