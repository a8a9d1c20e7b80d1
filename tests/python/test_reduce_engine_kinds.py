"""prod/var/std/var_mean/logsumexp/vector_norm/all/any/count_nonzero on the
strided reduction engine (issue 9): every dim and layout against PyTorch,
including inputs big enough to run in parallel, column mode (the reduced dim
strided, the kept one contiguous) and the float32 rounding order that shows in
overflowing products and short norms."""

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
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t.tolist())


def _pair(values, dtype):
    arr = np.asarray(values)
    return ft.from_numpy(arr).to(getattr(ft, dtype)), torch.from_numpy(arr).to(getattr(torch, dtype))


def _views(lib, x):
    """The same logical values as several layouts."""
    return {
        "contiguous": x,
        "transposed": x.t().contiguous().t(),
        "stepped": x[::2],
        "expanded": x[:, :1].expand(x.shape[0], 5),
    }


def _check(ours, theirs, rtol):
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert ours.dtype.__repr__().split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(a.astype(float), b.astype(float), rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(70, 4), (300, 256)])
def test_prod_dim_rounds_in_pytorchs_order(dtype, shape):
    rng = np.random.default_rng(1)
    big = {"float32": 1e25, "float64": 1e200, "float16": 300.0, "bfloat16": 1e25}[dtype]
    vals = rng.choice([big, 1 / big, 3.0, -2.0, 0.5, 1.0], size=shape)
    x, y = _pair(vals, dtype)
    for name in ("contiguous", "transposed", "stepped", "expanded"):
        a, b = _views(ft, x)[name], _views(torch, y)[name]
        for d in (0, 1, -1):
            for keepdim in (False, True):
                _check(a.prod(d, keepdim=keepdim), b.prod(d, keepdim=keepdim), rtol=1e-6)


def test_prod_dim_integers_and_dtype_argument():
    vals = np.arange(-6, 18).reshape(4, 6) * 1000003
    x, y = _pair(vals, "int32")
    for d in (0, 1):
        _check(x.prod(d), y.prod(d), rtol=0)
        _check(x.prod(d, dtype=ft.int32), y.prod(d, dtype=torch.int32), rtol=0)
        _check(x.prod(d, dtype=ft.float64), y.prod(d, dtype=torch.float64), rtol=1e-12)
    _check(x.prod(), y.prod(), rtol=0)


@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-6), ("float64", 1e-12), ("float16", 1e-3)])
@pytest.mark.parametrize("shape", [(5, 7), (600, 300)])
def test_var_std_and_means_match_welford(dtype, rtol, shape):
    rng = np.random.default_rng(2)
    vals = rng.standard_normal(shape) * 3 + 1
    vals[1, :] = 0.7  # equal elements: exactly 0
    vals[2, 3] = inf
    vals[3, -1] = -inf
    vals[4, 2] = nan
    x, y = _pair(vals, dtype)
    for name in ("contiguous", "transposed", "stepped"):
        a, b = _views(ft, x)[name], _views(torch, y)[name]
        for dims in (0, 1, (0, 1)):
            for corr in (0, 1, 2):
                _check(a.var(dims, correction=corr), b.var(dims, correction=corr), rtol)
                _check(a.std(dims, correction=corr, keepdim=True), b.std(dims, correction=corr, keepdim=True), rtol)
                for f in ("var_mean", "std_mean"):
                    (o1, o2), (t1, t2) = getattr(ft, f)(a, dims, correction=corr), getattr(torch, f)(b, dims, correction=corr)
                    _check(o1, t1, rtol)
                    _check(o2, t2, rtol)


def test_var_of_equal_elements_is_exactly_zero():
    for lib in (ft, torch):
        x = lib.full((3, 5000), 0.1, dtype=lib.float32)
        assert float(x.var(1).abs().max()) == 0.0
        assert float(x.std(0).abs().max()) == 0.0


def test_var_empty_and_single():
    for d in (0, 1):
        for shape in ((0, 3), (1, 3), (3, 1)):
            x, y = ft.zeros(shape), torch.zeros(shape)
            _check(x.var(d), y.var(d), 0)
            _check(ft.var_mean(x, d)[1], torch.var_mean(y, d)[1], 0)


# PyTorch forms float16/bfloat16 results from sums in those types: looser there.
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-6), ("float64", 1e-12), ("float16", 5e-3), ("bfloat16", 2e-2)])
@pytest.mark.parametrize("shape", [(6, 9), (500, 400)])
def test_logsumexp_every_dim_and_special_values(dtype, rtol, shape):
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(shape) * 5
    vals[0, :] = -inf            # all -inf
    vals[1, 2] = inf             # an inf
    vals[2, 1], vals[2, 3] = inf, -inf
    vals[3, 4] = nan
    vals[4, 0], vals[4, 1] = inf, nan
    vals[:, 5] = -inf
    vals[:, 6] = 80.0            # exp overflows float32 without the shift
    x, y = _pair(vals, dtype)
    for name in ("contiguous", "transposed", "stepped", "expanded"):
        a, b = _views(ft, x)[name], _views(torch, y)[name]
        for dims in (0, 1, (0, 1), ()):
            _check(ft.logsumexp(a, dims, keepdim=True), torch.logsumexp(b, dims, keepdim=True), rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(4, 6), (400, 300)])
def test_all_any_count_nonzero(dtype, shape):
    rng = np.random.default_rng(4)
    vals = rng.choice([0.0, 1.0, -0.0, 2.0], size=shape, p=[0.05, 0.85, 0.05, 0.05])
    vals[0, :] = 0.0
    vals[1, :] = 1.0
    if dtype.startswith("float"):
        vals[2, 0] = nan
    x, y = _pair(vals, dtype)
    for name in ("contiguous", "transposed", "stepped", "expanded"):
        a, b = _views(ft, x)[name], _views(torch, y)[name]
        for d in (0, 1, (0, 1)):
            _check(a.all(d), b.all(d), 0)
            _check(a.any(d, keepdim=True), b.any(d, keepdim=True), 0)
            _check(ft.count_nonzero(a, d), torch.count_nonzero(b, d), 0)
        _check(a.all(), b.all(), 0)
        _check(a.any(), b.any(), 0)


@pytest.mark.parametrize("ord", [1, 2, 3, 0.5, 0, inf, -inf])
@pytest.mark.parametrize("dtype,rtol", [("float32", 2e-6), ("float64", 1e-12), ("bfloat16", 1e-2)])
@pytest.mark.parametrize("shape", [(3, 2), (9, 12), (40, 17), (300, 200)])
def test_vector_norm_short_and_long_rows(ord, dtype, rtol, shape):
    rng = np.random.default_rng(5)
    vals = rng.standard_normal(shape)
    if ord >= 1:
        # Its square overflows float32. (Below 1 the root amplifies what
        # PyTorch's float32 lanes lose next to it: only this row is compared.)
        vals[0, 0] = 3e19
    vals[-1, -1] = 0.0
    x, y = _pair(vals, dtype)
    for name in ("contiguous", "transposed", "stepped"):
        a, b = _views(ft, x)[name], _views(torch, y)[name]
        for dims in (0, 1, (0, 1)):
            # (PyTorch sums in float32 lanes; a root of order 1/ord > 1 multiplies
            # that sum's relative error, ours is the f64 sum's)
            tol = rtol * (50 if 0 < ord < 1 else 1)
            _check(ft.linalg.vector_norm(a, ord, dims), torch.linalg.vector_norm(b, ord, dims), tol)
