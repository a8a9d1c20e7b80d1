"""Reductions, scans, order statistics and softmax against PyTorch: values,
dtypes, shapes, NaN handling, empty and 0-d inputs, non-contiguous inputs,
keepdim/dtype arguments, error types, and gradients (gradcheck in float64,
grad_fn names and torch's gradients)."""

import zlib

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch import _math_ops as fm

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
ALL = FLOATS + INTS + ["bool"]


def make(a, dtype):
    a = np.asarray(a, dtype=np.float64)
    return [lib.from_numpy(a.copy()).to(getattr(lib, dtype)) for lib in (ft, torch)]


def np_of(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def tol(dtype):
    return {"float16": (5e-3, 1e-3), "bfloat16": (3e-2, 1e-2), "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}.get(dtype, (0, 0))


def same(a, b, rtol=None, atol=None):
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y, rtol, atol)
        return
    if not hasattr(b, "dtype"):
        assert a == b
        return
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"dtype {a.dtype} != {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} != {tuple(b.shape)}"
    x, y = np_of(a), np_of(b)
    if x.dtype.kind == "f":
        r, t = tol(str(b.dtype).split(".")[-1])
        np.testing.assert_allclose(x, y, rtol=r if rtol is None else rtol, atol=t if atol is None else atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(x, y)


def both(fn, *pairs, check=same):
    err = None
    try:
        expected = fn(torch, *[p[1] for p in pairs])
    except Exception as e:  # noqa: BLE001
        err = e
    if err is not None:
        with pytest.raises(type(err)):
            fn(ft, *[p[0] for p in pairs])
        return None
    got = fn(ft, *[p[0] for p in pairs])
    check(got, expected)
    return got


def data(dtype, shape=(3, 4, 5), seed=0, nan=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        a = rng.integers(0, 2, size=shape)
    elif dtype == "uint8":
        a = rng.integers(0, 200, size=shape)
    elif dtype in INTS:
        a = rng.integers(-60, 60, size=shape)
    else:
        a = np.round(rng.standard_normal(shape) * 4, 2)
        if nan:
            a.flat[3] = np.nan
    return a


REDUCE_DIMS = [None, 0, 1, -1, (0, 2), (1, -1)]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", REDUCE_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["amax", "amin", "all", "any", "logsumexp", "count_nonzero"])
def test_multi_dim_reductions(name, dtype, dim, keepdim):
    p = make(data(dtype, nan=True), dtype)
    if name == "count_nonzero":
        both(lambda lib, x: lib.count_nonzero(x, dim), p)
    elif name == "logsumexp":
        if dim is None:
            return
        both(lambda lib, x: lib.logsumexp(x, dim, keepdim), p)
    elif dim is None:
        both(lambda lib, x: getattr(lib, name)(x), p)
    else:
        if name in ("all", "any") and isinstance(dim, tuple):
            return
        both(lambda lib, x: getattr(lib, name)(x, dim, keepdim), p)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(dtype, dim, keepdim):
    a = data(dtype, shape=(3, 4), seed=1)
    if dtype in INTS:
        a = np.clip(a, -5, 5)
    p = make(a, dtype)
    if dim is None:
        both(lambda lib, x: lib.prod(x), p)
        both(lambda lib, x: x.prod(dtype=lib.float64), p)
    else:
        both(lambda lib, x: lib.prod(x, dim, keepdim), p)
        both(lambda lib, x: lib.prod(x, dim, keepdim, dtype=lib.int64), p)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_forms(name, dtype):
    p = make(data(dtype, nan=True), dtype)
    both(lambda lib, x: getattr(lib, name)(x), p)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            r = both(lambda lib, x: getattr(x, name)(dim, keepdim), p)
            if r is not None:
                assert hasattr(r, "values") and hasattr(r, "indices")
    q = make(data(dtype, seed=3), dtype)
    both(lambda lib, x, y: getattr(lib, name)(x, y), p, q)
    both(lambda lib, x: getattr(lib, "arg" + name)(x), p)
    both(lambda lib, x: getattr(lib, "arg" + name)(x, 1, True), p)


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("dim", [None, 0, (0, 2), -1])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_std(name, dtype, dim, correction):
    p = make(data(dtype), dtype)
    both(lambda lib, x: getattr(lib, name)(x, dim, correction=correction), p)
    both(lambda lib, x: getattr(lib, name)(x, dim, correction=correction, keepdim=True), p)


def test_var_unbiased_forms():
    p = make(data("float64"), "float64")
    both(lambda lib, x: x.var(False), p)
    both(lambda lib, x: x.std(1, False, True), p)
    both(lambda lib, x: lib.var(x, 1, unbiased=True), p)
    both(lambda lib, x: lib.std(x, dim=0, unbiased=False), p)


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, float("inf"), -float("inf")])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_vector_norm(ord, dim, dtype):
    p = make(data(dtype), dtype)
    both(lambda lib, x: (fm.vector_norm if lib is ft else torch.linalg.vector_norm)(x, ord, dim), p)
    both(lambda lib, x: (fm.vector_norm if lib is ft else torch.linalg.vector_norm)(x, ord, dim, True), p)
    if ord not in (0,) and not (isinstance(dim, tuple) and ord != 2):
        both(lambda lib, x: x.norm(ord, dim), p)


def test_norm_errors_and_dtype():
    both(lambda lib, x: x.norm(), make(data("float32"), "float32"))
    both(lambda lib, x: x.norm(p="fro", dim=(0, 1)), make(data("float64"), "float64"))
    both(lambda lib, x: (fm.vector_norm if lib is ft else torch.linalg.vector_norm)(x), make([1, 2], "int64"))
    both(lambda lib, x: (fm.vector_norm if lib is ft else torch.linalg.vector_norm)(x, dtype=lib.float64), make([1.0, 2.0], "float32"))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_scans(name, dtype, dim):
    a = data(dtype, shape=(3, 5), seed=2)
    if dtype != "bool" and dtype not in FLOATS:
        a = np.clip(a, -4, 4) if dtype != "uint8" else np.clip(a, 0, 4)
    p = make(a, dtype)
    both(lambda lib, x: getattr(lib, name)(x, dim), p)
    if name in ("cumsum", "cumprod"):
        both(lambda lib, x: getattr(x, name)(dim, dtype=lib.float64), p)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_long_scans_bitwise_match_torch_accumulator(name, dtype, dim):
    # Long rows expose the running value's type (f64 for f32, f32 for
    # f16/bf16 in PyTorch's CPU kernel): any other accumulator drifts away.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 700)) * 10
    if name == "cumprod":
        a = 1 + rng.standard_normal((40, 700)) * 0.01
    p = make(a, dtype)
    got, want = getattr(p[0], name)(dim), getattr(p[1], name)(dim)
    np.testing.assert_array_equal(np_of(got), np_of(want))
    # transposed input (strided scan), and the kernel's blocked outputs past 64
    got, want = getattr(p[0].t(), name)(1 - dim), getattr(p[1].t(), name)(1 - dim)
    np.testing.assert_array_equal(np_of(got), np_of(want))


def test_scans_nan_and_ties():
    p = make([1.0, float("nan"), 3.0, float("nan"), 0.5], "float32")
    for name in ("cummax", "cummin", "cumsum", "cumprod"):
        both(lambda lib, x: getattr(lib, name)(x, 0), p)
    q = make([1, 3, 3, 1, 2, 3], "int64")
    both(lambda lib, x: lib.cummax(x, 0), q)
    both(lambda lib, x: lib.cummin(x, 0), q)
    a = make([[1, 2], [3, 4]], "int32")
    b, c = a[0].clone(), a[1].clone()
    b.cumsum_(0)
    c.cumsum_(0)
    same(b, c)


def check_sorted(got, expected):
    """Values must match exactly; indices must point at those values."""
    same(got[0], expected[0])
    assert got[1].dtype == ft.int64
    assert tuple(got[1].shape) == tuple(expected[1].shape)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(dtype, dim, descending):
    p = make(data(dtype, shape=(4, 6), nan=True), dtype)
    both(lambda lib, x: lib.sort(x, dim=dim, descending=descending, stable=True), p)
    both(lambda lib, x: lib.sort(x, dim, descending), p, check=lambda g, e: same(g[0], e[0]))
    both(lambda lib, x: lib.argsort(x, dim=dim, descending=descending, stable=True), p)
    both(lambda lib, x: x.sort(dim=dim, descending=descending, stable=True), p)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "float16"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, k, largest):
    p = make(np.random.default_rng(5).permutation(24).reshape(4, 6) - 8 * (dtype != "uint8"), dtype)
    both(lambda lib, x: lib.topk(x, k, 1, largest), p)
    both(lambda lib, x: x.topk(k, 0, largest), p)
    both(lambda lib, x: x.topk(7, 1), p)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bfloat16"])
def test_kthvalue_median_mode(dtype):
    a = np.random.default_rng(6).permutation(30).reshape(5, 6) - 10
    p = make(a, dtype)
    for dim in (0, 1):
        for keepdim in (False, True):
            both(lambda lib, x: lib.kthvalue(x, 2, dim, keepdim), p)
            both(lambda lib, x: lib.median(x, dim, keepdim), p)
    both(lambda lib, x: lib.median(x), p)
    m = make([[1, 3, 3, 1, 2, 2, 2], [5, 5, 4, 4, 9, 9, 0]], dtype)
    both(lambda lib, x: lib.mode(x, 1), m)
    both(lambda lib, x: x.mode(0, True), m)


def test_median_nan_and_even_length():
    p = make([[1.0, float("nan"), 3.0, 2.0], [4.0, 1.0, 2.0, 3.0]], "float32")
    both(lambda lib, x: x.median(1), p)
    both(lambda lib, x: x.median(), p)
    both(lambda lib, x: x[1].median(), p)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8", "float64"])
def test_unique(dtype):
    a = np.array([[3, 1, 2, 3], [1, 0, 2, 5]]) % (2 if dtype == "bool" else 10)
    p = make(a, dtype)
    both(lambda lib, x: lib.unique(x), p)
    both(lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True), p)
    both(lambda lib, x: x.unique(return_counts=True), p)
    both(lambda lib, x: x.unique(sorted=True, return_inverse=True), p)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dtype, dim):
    a = data(dtype) * 10
    a[0, 0, 0] = 1000.0 if dtype in ("float32", "float64") else 60.0
    p = make(a, dtype)
    both(lambda lib, x: getattr(lib, name)(x, dim), p)
    both(lambda lib, x: getattr(x, name)(dim), p)
    both(lambda lib, x: getattr(lib, name)(x, dim, dtype=lib.float64), p)


def test_softmax_special_values():
    p = make([[-float("inf"), -float("inf")], [0.0, -float("inf")], [float("nan"), 1.0]], "float32")
    for name in ("softmax", "log_softmax"):
        both(lambda lib, x: getattr(lib, name)(x, 1), p)
    both(lambda lib, x: lib.softmax(x, 0), make([1, 2], "int64"))
    both(lambda lib, x: lib.softmax(x, 0, dtype=lib.float32), make([1, 2], "int64"))


def test_empty_and_zero_dim_and_errors():
    e = make(np.zeros((2, 0)), "float32")
    for fn in (
        lambda lib, x: x.max(1), lambda lib, x: x.amax(1), lambda lib, x: x.argmax(1), lambda lib, x: x.max(),
        lambda lib, x: x.amax(0), lambda lib, x: x.var(1), lambda lib, x: x.logsumexp(1), lambda lib, x: x.median(1),
        lambda lib, x: x.prod(1), lambda lib, x: x.norm(dim=1), lambda lib, x: x.all(1), lambda lib, x: x.mode(1),
        lambda lib, x: x.kthvalue(1, 1), lambda lib, x: x.topk(0, 1), lambda lib, x: x.sort(1), lambda lib, x: x.cummax(1),
        lambda lib, x: x.cumsum(1), lambda lib, x: x.softmax(1), lambda lib, x: x.sum(1), lambda lib, x: x.count_nonzero(1),
        lambda lib, x: x.any(), lambda lib, x: x.std(0), lambda lib, x: x.median(),
    ):
        both(fn, e)
    z = make(2.5, "float64")
    for fn in (
        lambda lib, x: x.max(), lambda lib, x: x.max(0), lambda lib, x: x.amax(0), lambda lib, x: x.argmax(),
        lambda lib, x: x.prod(0), lambda lib, x: x.cumsum(0), lambda lib, x: x.sort(0), lambda lib, x: x.softmax(0),
        lambda lib, x: x.logsumexp(0), lambda lib, x: x.median(0), lambda lib, x: x.kthvalue(1, 0),
        lambda lib, x: x.topk(1, 0), lambda lib, x: x.var(0, correction=0), lambda lib, x: x.cummax(0),
    ):
        both(fn, z)
    p = make(data("float32"), "float32")
    for fn in (lambda lib, x: x.max(3), lambda lib, x: x.amax((0, 0)), lambda lib, x: x.topk(9, 1), lambda lib, x: x.kthvalue(0, 1),
               lambda lib, x: x.cumsum(5), lambda lib, x: x.softmax(-4)):
        both(fn, p)
    both(lambda lib, x: x.var(), make([1, 2], "int64"))


def test_noncontiguous_inputs():
    base = data("float64", shape=(4, 6, 5))
    p = make(base, "float64")
    views = [lambda x: x.transpose(0, 2), lambda x: x[:, ::2], lambda x: x[1:3].permute(2, 0, 1)]
    for v in views:
        for fn in (
            lambda lib, x: v(x).amax(1), lambda lib, x: v(x).max(0), lambda lib, x: v(x).var((0, 1)),
            lambda lib, x: v(x).cumsum(1), lambda lib, x: v(x).sort(-1), lambda lib, x: v(x).softmax(0),
            lambda lib, x: v(x).prod(2), lambda lib, x: v(x).logsumexp(1), lambda lib, x: v(x).median(0),
        ):
            both(fn, p)


def test_out_and_return_types():
    x = ft.tensor([[1.0, 5.0], [3.0, 2.0]])
    v, i = ft.empty(2), ft.empty(2, dtype=ft.int64)
    r = ft.max(x, 1, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [5.0, 3.0] and i.tolist() == [1, 0]
    o = ft.empty(2, 2)
    ft.cumsum(x, 0, out=o)
    assert o.tolist() == [[1.0, 5.0], [4.0, 7.0]]
    r = x.sort(1)
    assert r.values.tolist() == r[0].tolist()
    assert "values=" in repr(r)


# ----- gradients ---------------------------------------------------------------------

GRADS = {
    "sum_dim": (lambda lib, x: x.sum((0, 2)), "SumBackward1"),
    "prod": (lambda lib, x: x.prod(), "ProdBackward0"),
    "prod_dim": (lambda lib, x: x.prod(1), "ProdBackward1"),
    "max": (lambda lib, x: x.max(), "MaxBackward1"),
    "min": (lambda lib, x: x.min(), "MinBackward1"),
    "max_dim": (lambda lib, x: x.max(1)[0], "MaxBackward0"),
    "min_dim_keep": (lambda lib, x: x.min(0, True)[0], "MinBackward0"),
    "amax": (lambda lib, x: x.amax((0, 2)), "AmaxBackward0"),
    "amin": (lambda lib, x: x.amin(1, True), "AminBackward0"),
    "var": (lambda lib, x: x.var(), "VarBackward0"),
    "var_dim": (lambda lib, x: x.var(1, correction=0), "VarBackward0"),
    "std": (lambda lib, x: x.std((0, 2), keepdim=True), "StdBackward0"),
    "norm": (lambda lib, x: x.norm(), "LinalgVectorNormBackward0"),
    "norm1": (lambda lib, x: x.norm(1, 1), "LinalgVectorNormBackward0"),
    "norm3": (lambda lib, x: x.norm(3, 0), "LinalgVectorNormBackward0"),
    "norm_inf": (lambda lib, x: (fm.vector_norm if lib is ft else torch.linalg.vector_norm)(x, float("inf"), 1), "LinalgVectorNormBackward0"),
    "logsumexp": (lambda lib, x: x.logsumexp(1), "LogsumexpBackward0"),
    "cumsum": (lambda lib, x: x.cumsum(1), "CumsumBackward0"),
    "cumprod": (lambda lib, x: x.cumprod(2), "CumprodBackward0"),
    "cummax": (lambda lib, x: x.cummax(1)[0], "CummaxBackward0"),
    "cummin": (lambda lib, x: x.cummin(0)[0], "CumminBackward0"),
    "sort": (lambda lib, x: x.sort(1, descending=True)[0], "SortBackward0"),
    "topk": (lambda lib, x: x.topk(2, 2)[0], "TopkBackward0"),
    "kthvalue": (lambda lib, x: x.kthvalue(2, 1)[0], "KthvalueBackward0"),
    "median": (lambda lib, x: x.median(), "MedianBackward0"),
    "median_dim": (lambda lib, x: x.median(2, True)[0], "MedianBackward1"),
    "mode": (lambda lib, x: x.mode(1)[0], "ModeBackward0"),
    "softmax": (lambda lib, x: x.softmax(1), "SoftmaxBackward0"),
    "log_softmax": (lambda lib, x: x.log_softmax(-1), "LogSoftmaxBackward0"),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reduction_gradients(name):
    fn, gname = GRADS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()) % 1000)  # str hash() varies per run
    x = rng.permutation(24).reshape(2, 3, 4) / 7.0 + 0.3  # distinct, non-zero
    if name == "mode":
        x = np.array([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 9.0]])[None].repeat(2, 0) + np.arange(2)[:, None, None]
    fx = ft.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    if name != "mode":
        assert ft.autograd.gradcheck(lambda t: fn(ft, t), (fx,))
    fy, ty = fn(ft, fx), fn(torch, tx)
    assert fy.grad_fn.name() == ty.grad_fn.name() == gname
    same(fy, ty)
    up = rng.standard_normal(tuple(ty.shape))
    (fy * ft.from_numpy(up.copy())).sum().backward()
    (ty * torch.from_numpy(up.copy())).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_var_mean_std_mean_gradients():
    x = np.random.default_rng(1).standard_normal((3, 4))
    for name, gname in (("var_mean", "VarMeanBackward0"), ("std_mean", "StdMeanBackward0")):
        fx, tx = ft.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
        assert ft.autograd.gradcheck(lambda t: getattr(ft, name)(t, 1), (fx,))
        fv, fmn = getattr(ft, name)(fx, 1)
        tv, tmn = getattr(torch, name)(tx, 1)
        assert fv.grad_fn.name() == tv.grad_fn.name() == gname
        (fv * 2 + fmn * 3).sum().backward()
        (tv * 2 + tmn * 3).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


def test_gradients_with_ties_and_zeros():
    # ties split evenly for max() / amax; prod with zeros uses the exact rule
    cases = [
        ([[1.0, 3.0, 3.0], [0.5, 3.0, 2.0]], lambda lib, x: x.max()),
        ([[1.0, 3.0, 3.0], [0.5, 3.0, 2.0]], lambda lib, x: x.amax(1)),
        ([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]], lambda lib, x: x.prod(1)),
        ([[1.0, 0.0, 3.0], [2.0, 5.0, 2.0]], lambda lib, x: x.prod()),
        ([[1.0, 0.0, 3.0], [2.0, 0.0, 2.0]], lambda lib, x: x.cumprod(1)),
        ([[0.0, 0.0], [3.0, 4.0]], lambda lib, x: x.norm(dim=1)),
    ]
    for x, fn in cases:
        fx, tx = ft.tensor(x, dtype=ft.float64, requires_grad=True), torch.tensor(x, dtype=torch.float64, requires_grad=True)
        fn(ft, fx).sum().backward()
        fn(torch, tx).sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_double_backward_softmax_logsumexp_var():
    x = ft.tensor([[0.3, -1.2, 2.0], [1.0, 0.5, -0.5]], dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradgradcheck(lambda t: t.softmax(1), (x,))
    assert ft.autograd.gradgradcheck(lambda t: t.log_softmax(0), (x,))
    assert ft.autograd.gradgradcheck(lambda t: t.logsumexp(1), (x,))
    assert ft.autograd.gradgradcheck(lambda t: t.var(1), (x,))
    assert ft.autograd.gradgradcheck(lambda t: t.cumsum(1), (x,))
    assert ft.autograd.gradgradcheck(lambda t: t.max(1)[0], (x,))


def test_integer_outputs_never_require_grad():
    x = ft.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
    for r in (x.argmax(), x.max(1)[1], x.sort(1)[1], x.all(), x.count_nonzero(), x.unique(return_counts=True)[1],
              x.topk(1)[1], x.cummax(0)[1]):
        assert not r.requires_grad
    assert x.max(1)[0].requires_grad and x.sort(0)[0].requires_grad


def test_inplace_cumsum_and_comparison_keep_autograd():
    for lib in (ft, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y.cumsum_(1)
        assert y.grad_fn.name() == "CumsumBackward0"
        y.sum().backward()
        assert x.grad.tolist() == [[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]]
    a, b = make([1, 5, 3], "int32")
    a.lt_(ft.tensor([2, 2, 3], dtype=ft.int32))
    b.lt_(torch.tensor([2, 2, 3], dtype=torch.int32))
    same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_amax_amin_column_and_row_modes_propagate_nan_like_torch(dtype):
    """Wide matrices reduced over dim 0 take the engine's column mode; NaN
    anywhere in a column must win, and +-inf must be kept, as in PyTorch."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 517)).astype(dtype)
    a[5, 7] = a[299, 11] = np.nan
    a[100, 9], a[250, 10] = np.inf, -np.inf
    for dim in (0, 1, (0, 1)):
        for name in ("amax", "amin"):
            got = getattr(ft.from_numpy(a), name)(dim).numpy()
            want = getattr(torch.from_numpy(a), name)(dim).numpy()
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ft.from_numpy(a).t().amax(1).numpy(), torch.from_numpy(a).t().amax(1).numpy())


@pytest.mark.parametrize("f", [
    lambda t, x: x.sum(), lambda t, x: x.sum(1), lambda t, x: x.sum((0, 1), keepdim=True), lambda t, x: x.amax(0),
    lambda t, x: x.max(1)[0], lambda t, x: x.max(1)[1], lambda t, x: x.var(1), lambda t, x: x.std(),
    lambda t, x: x.prod(), lambda t, x: x.mean(0), lambda t, x: x.argmax(1), lambda t, x: x.logsumexp(1),
    lambda t, x: x.norm(dim=1), lambda t, x: x.all(1), lambda t, x: t.var_mean(x, 1)[1],
    lambda t, x: x.to(t.int64).sum(0),
])
def test_reduction_results_are_not_views(f):
    # A reduction's result is a fresh tensor in PyTorch (no `_base`), with its
    # own contiguous strides, whether or not the reduced dims are kept.
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    ours, ref = f(ft, ft.tensor(a)), f(torch, torch.tensor(a))
    assert (ours._base is None) == (ref._base is None) == True  # noqa: E712
    assert tuple(ours.shape) == tuple(ref.shape) and tuple(ours.stride()) == tuple(ref.stride())
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)
