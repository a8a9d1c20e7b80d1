"""NaN-aware and rank reductions, binning (searchsorted, bucketize, bincount,
histograms), finite differences and integration, and sample statistics
against PyTorch: values, dtypes, shapes, errors, gradients and the meta device."""

import math
import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import errors_match, gradcheck, parity, rnd

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

A = rnd(3, 4)
NANS = A.copy()
NANS[0, 1] = NANS[2, 0] = NANS[2, 3] = np.nan


def _ignore_warnings(fn):
    def run(*a, **k):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a, **k)
    return run


@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), ((0, 1), False), (-1, False)])
def test_nansum_nanmean(dim, keepdim):
    parity(torch, lambda m, x: m.nansum(x, dim, keepdim), NANS, grad=(0,))
    parity(torch, lambda m, x: m.nanmean(x, dim, keepdim), NANS, grad=(0,))
    parity(torch, lambda m, x: x.nansum(dim, keepdim, dtype=m.float64), NANS)


def test_nansum_integers_and_nanmean_errors():
    parity(torch, lambda m, x: m.nansum(x), np.array([1, 2, 3], dtype="int32"))
    errors_match(torch, lambda m, x: m.nanmean(x), np.array([1, 2], dtype="int64"), same_message=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_nanmedian_dim(dim, keepdim):
    parity(torch, lambda m, x: tuple(m.nanmedian(x, dim, keepdim)), NANS, grad=(0,))
    parity(torch, lambda m, x: tuple(x.nanmedian(dim, keepdim)), A)


def test_nanmedian_full():
    parity(torch, lambda m, x: m.nanmedian(x), NANS, grad=(0,))
    parity(torch, lambda m, x: m.nanmedian(x), np.array([3, 1, 2, 7], dtype="int64"))
    parity(torch, lambda m, x: m.nanmedian(x), np.full(3, np.nan, dtype="float32"))
    r = ft.nanmedian(ft.from_numpy(NANS.copy()), 1)
    assert type(r).__name__ == "nanmedian" and r.values is r[0]


Q = [0.0, 0.3, 0.5, 1.0]


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
def test_quantile(interpolation, dim, keepdim):
    for name in ("quantile", "nanquantile"):
        for data in (A, NANS):
            parity(torch, lambda m, x: getattr(m, name)(x, 0.37, dim, keepdim, interpolation=interpolation), data)
            parity(torch, lambda m, x: getattr(m, name)(x, m.tensor(Q), dim, keepdim, interpolation=interpolation),
                   data)


def test_quantile_grad_and_float64():
    parity(torch, lambda m, x: m.quantile(x, 0.4, 1), A, grad=(0,))
    parity(torch, lambda m, x: m.nanquantile(x, m.tensor([0.2, 0.9]), 0), NANS, grad=(0,))
    parity(torch, lambda m, x: x.quantile(m.tensor([0.25, 0.75], dtype=m.float64)), rnd(10, dtype="float64"))
    parity(torch, lambda m, x: m.quantile(x, 0.5), np.array(2.5, dtype="float32"))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.quantile(x.long(), 0.5), lambda m, x: m.quantile(x, 1.5),
    lambda m, x: m.quantile(x, m.tensor([0.5], dtype=m.float64)), lambda m, x: m.quantile(x, 0.5, interpolation="foo"),
    lambda m, x: m.quantile(x, m.ones(2, 2)), lambda m, x: m.quantile(x[:0], 0.5),
    lambda m, x: m.nanquantile(x, -0.1),
])
def test_quantile_errors(fn):
    errors_match(torch, fn, A, same_message=True)


@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
def test_aminmax(dim, keepdim):
    parity(torch, lambda m, x: tuple(m.aminmax(x, dim=dim, keepdim=keepdim)), A)
    parity(torch, lambda m, x: tuple(x.aminmax(dim=dim, keepdim=keepdim)), (A * 5).astype("int32"))
    r = ft.aminmax(ft.from_numpy(A.copy()))
    assert r._fields == ("min", "max")


def test_aminmax_errors():
    errors_match(torch, lambda m, x: m.aminmax(x[:0]), A, same_message=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_logcumsumexp(dim):
    parity(torch, lambda m, x: m.logcumsumexp(x, dim), A, grad=(0,))
    wide = A * 400
    wide[1, 2] = -np.inf
    parity(torch, lambda m, x: x.logcumsumexp(dim), wide, rtol=1e-5, atol=1e-3)
    parity(torch, lambda m, x: m.logcumsumexp(x, dim), rnd(5, 7, dtype="float64") * 50, rtol=1e-10, atol=1e-10)


def test_logcumsumexp_edge_cases():
    parity(torch, lambda m, x: m.logcumsumexp(x, 0), np.full(4, -np.inf, dtype="float32"))
    parity(torch, lambda m, x: m.logcumsumexp(x, 0), np.array(1.5, dtype="float32"))
    errors_match(torch, lambda m, x: m.logcumsumexp(x, 0), np.array([1, 2], dtype="int64"), same_message=True)


SEQ = np.array([1.0, 3.0, 3.0, 5.0, 8.0], dtype="float32")
VALS = np.array([[3.0, 6.0, 0.0], [1.0, 8.0, 9.0], [np.nan, 5.0, 2.0]], dtype="float32")


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("int32", [False, True])
def test_searchsorted(right, int32):
    parity(torch, lambda m, s, v: m.searchsorted(s, v, right=right, out_int32=int32), SEQ, VALS)
    parity(torch, lambda m, s, v: m.searchsorted(s, v, side="right" if right else "left"), SEQ, VALS)
    batched = np.sort(rnd(3, 6), axis=1)
    parity(torch, lambda m, s, v: m.searchsorted(s, v, right=right), batched, rnd(3, 4, seed=2))
    parity(torch, lambda m, s: m.searchsorted(s, 3.0, right=right), SEQ)
    parity(torch, lambda m, s, v: m.bucketize(v, s, right=right, out_int32=int32), SEQ, VALS)
    ints = np.array([1, 3, 3, 7], dtype="int64")
    parity(torch, lambda m, s, v: m.searchsorted(s, v, right=right), ints, np.array([0, 3, 4, 9], dtype="int32"))


def test_searchsorted_sorter_and_errors():
    unsorted = np.array([5.0, 1.0, 3.0], dtype="float32")
    parity(torch, lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([1, 2, 0])), unsorted, VALS)
    errors_match(torch, lambda m, s: m.searchsorted(s, m.tensor([3.0]), right=True, side="left"), SEQ,
                 same_message=True)
    errors_match(torch, lambda m, s: m.searchsorted(s, m.ones(3, 2)), rnd(2, 3), same_message=True)
    errors_match(torch, lambda m, s: m.bucketize(m.ones(2), s), rnd(2, 3), same_message=True)


@pytest.mark.parametrize("minlength", [0, 3, 9])
def test_bincount(minlength):
    idx = np.array([1, 1, 3, 0, 5, 1], dtype="int64")
    parity(torch, lambda m, x: m.bincount(x, minlength=minlength), idx)
    parity(torch, lambda m, x: x.bincount(minlength=minlength), idx.astype("int32"))
    for wd in ("float32", "float64", "int64"):
        w = np.arange(6).astype(wd)
        parity(torch, lambda m, x, y: m.bincount(x, y, minlength), idx, w)
    parity(torch, lambda m, x: m.bincount(x, minlength=minlength), np.zeros(0, dtype="int64"))


@pytest.mark.parametrize("fn, arr", [
    (lambda m, x: m.bincount(x - 2), np.array([1, 2], dtype="int64")),
    (lambda m, x: m.bincount(x.float()), np.array([1, 2], dtype="int64")),
    (lambda m, x: m.bincount(x, minlength=-1), np.array([1, 2], dtype="int64")),
    (lambda m, x: m.bincount(x, m.ones(3)), np.array([1, 2], dtype="int64")),
    (lambda m, x: m.bincount(x.reshape(1, 2)), np.array([1, 2], dtype="int64")),
])
def test_bincount_errors(fn, arr):
    errors_match(torch, fn, arr, same_message=True)


@pytest.mark.parametrize("bins, lo, hi", [(5, 0, 0), (4, -1, 1), (3, 0.5, 0.5), (7, -3, 2)])
def test_histc(bins, lo, hi):
    parity(torch, lambda m, x: m.histc(x, bins, lo, hi), A)
    parity(torch, lambda m, x: x.histc(bins, lo, hi), rnd(50, dtype="float64"))
    parity(torch, lambda m, x: m.histc(x, bins), np.full(4, 2.0, dtype="float32"))


def test_histc_errors():
    errors_match(torch, lambda m, x: m.histc(x.long(), 3), A, same_message=True)
    errors_match(torch, lambda m, x: m.histc(x, 0), A, same_message=True)
    errors_match(torch, lambda m, x: m.histc(x, 3, 4, 1), A, same_message=True)


@pytest.mark.parametrize("density", [False, True])
def test_histogram(density):
    x = rnd(40)
    parity(torch, lambda m, t: tuple(m.histogram(t, 6, density=density)), x)
    parity(torch, lambda m, t: tuple(m.histogram(t, 4, range=(-1.0, 2.0), density=density)), x)
    parity(torch, lambda m, t: tuple(t.histogram(m.tensor([-2.0, -0.5, 0.0, 3.0]), density=density)), x)
    parity(torch, lambda m, t, w: tuple(m.histogram(t, 5, weight=w, density=density)), x, np.abs(rnd(40, seed=9)))
    parity(torch, lambda m, t: tuple(m.histogram(t, 4)), np.full(3, 2.0, dtype="float32"))
    r = ft.histogram(ft.from_numpy(x), 3)
    assert r._fields == ("hist", "bin_edges")


@pytest.mark.parametrize("bins", [3, [2, 4]])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd(bins, density):
    pts = rnd(30, 2)
    parity(torch, lambda m, t: (lambda r: (r[0],) + tuple(r[1]))(m.histogramdd(t, bins, density=density)), pts)
    parity(torch, lambda m, t: (lambda r: (r[0],) + tuple(r[1]))(
        m.histogramdd(t, bins, range=[-1.0, 1.0, -2.0, 2.0])), pts)
    parity(torch, lambda m, t: (lambda r: (r[0],) + tuple(r[1]))(
        m.histogramdd(t, [m.tensor([-3.0, 0.0, 3.0]), m.tensor([-1.0, 0.5, 1.0])])), pts)


@pytest.mark.parametrize("n, dim", [(1, -1), (2, 1), (1, 0), (3, 1), (9, 1)])
def test_diff(n, dim):
    parity(torch, lambda m, x: m.diff(x, n, dim), A, grad=(0,))
    parity(torch, lambda m, x: x.diff(n, dim, prepend=x[:, :1] if dim != 0 else x[:1],
                                       append=x[:, :2] if dim != 0 else x[:2]), A)
    parity(torch, lambda m, x: m.diff(x, n, dim), (A > 0))
    parity(torch, lambda m, x: m.diff(x, n, dim), (A * 9).astype("int32"))


def test_diff_errors():
    errors_match(torch, lambda m, x: m.diff(x[0, 0]), A, same_message=True)
    errors_match(torch, lambda m, x: m.diff(x, -1), A, same_message=True)
    errors_match(torch, lambda m, x: m.diff(x[0], prepend=x), A, same_message=True)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", [1, 2.5, [2.0, 0.5]])
def test_gradient(edge_order, spacing):
    x = rnd(4, 5)
    parity(torch, lambda m, t: m.gradient(t, spacing=spacing, edge_order=edge_order), x, grad=(0,))
    parity(torch, lambda m, t: m.gradient(t, dim=1, edge_order=edge_order), x)
    parity(torch, lambda m, t: m.gradient(t, spacing=(m.tensor([0.0, 1.0, 3.0, 7.0, 8.0]),), dim=1,
                                          edge_order=edge_order), x, grad=(0,))
    parity(torch, lambda m, t: m.gradient(t, edge_order=edge_order), np.array([1, 4, 9, 16, 30], dtype="int64"))


def test_gradient_errors():
    errors_match(torch, lambda m, x: m.gradient(x, edge_order=3), A, same_message=True)
    errors_match(torch, lambda m, x: m.gradient(x[:1]), A, same_message=True)


@pytest.mark.parametrize("dim", [-1, 0])
def test_trapezoid(dim):
    y = rnd(4, 5)
    x = np.sort(rnd(y.shape[dim], seed=3))
    parity(torch, lambda m, t: m.trapezoid(t, dim=dim), y, grad=(0,))
    parity(torch, lambda m, t: m.trapezoid(t, dx=0.5, dim=dim), y)
    parity(torch, lambda m, t, s: m.trapezoid(t, s, dim=dim), y, x, grad=(0, 1))
    parity(torch, lambda m, t: m.trapz(t, dx=2, dim=dim), y)
    parity(torch, lambda m, t, s: m.trapz(t, s, dim=dim), y, x)
    parity(torch, lambda m, t: m.cumulative_trapezoid(t, dim=dim), y, grad=(0,))
    parity(torch, lambda m, t, s: m.cumulative_trapezoid(t, s, dim=dim), y, x, grad=(0, 1))
    parity(torch, lambda m, t: m.trapezoid(t, dim=dim), (y * 9).astype("int64"))
    parity(torch, lambda m, t: m.trapezoid(t, dx=2, dim=dim), (y * 9).astype("int64"))


def test_trapezoid_errors():
    errors_match(torch, lambda m, x: m.trapezoid(x, m.ones(2)), A, same_message=True)
    errors_match(torch, lambda m, x: m.trapezoid(x[0, 0]), A, same_message=True)


@pytest.mark.parametrize("correction", [0, 1, 2])
def test_cov_corrcoef(correction):
    x = rnd(3, 6)
    fw = np.array([1, 2, 1, 3, 1, 2], dtype="int64")
    aw = np.abs(rnd(6, seed=4)) + 0.1
    parity(torch, lambda m, t: m.cov(t, correction=correction), x, grad=(0,))
    parity(torch, lambda m, t, f: m.cov(t, correction=correction, fweights=f), x, fw)
    parity(torch, lambda m, t, a: m.cov(t, correction=correction, aweights=a), x, aw, grad=(0, 1))
    parity(torch, lambda m, t, f, a: m.cov(t, correction=correction, fweights=f, aweights=a), x, fw, aw)
    parity(torch, lambda m, t: m.cov(t[0], correction=correction), x)
    parity(torch, lambda m, t: m.corrcoef(t), x, grad=(0,))
    parity(torch, lambda m, t: t.corrcoef(), (x * 5).astype("int64"))
    parity(torch, lambda m, t: m.corrcoef(t[0]), x)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.cov(x.reshape(1, 3, 4)), lambda m, x: m.cov(x, fweights=m.ones(4)),
    lambda m, x: m.cov(x, fweights=m.tensor([1, 2, -3, 1])), lambda m, x: m.cov(x, aweights=m.tensor([1, 2, 3, 4])),
    lambda m, x: m.cov(x, fweights=m.tensor([1, 2])),
])
def test_cov_errors(fn):
    errors_match(torch, fn, A, same_message=True)


def test_cov_degrees_of_freedom_warning():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = ft.cov(ft.ones(1))
    assert math.isnan(r.item())


@pytest.mark.parametrize("p", [0, 1, 2, 3.5, math.inf, -math.inf])
def test_dist(p):
    parity(torch, lambda m, x, y: m.dist(x, y, p), A, rnd(4, seed=2), grad=(0, 1) if p not in (0,) else ())


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 0.5), (3, -1, 10.0), (2, 1, 0.0)])
def test_renorm(p, dim, maxnorm):
    parity(torch, lambda m, x: m.renorm(x, p, dim, maxnorm), A, grad=(0,))
    parity(torch, lambda m, x: x.clone().renorm_(p, dim, maxnorm), A)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.renorm(x, 0, 0, 1), lambda m, x: m.renorm(x, 2, 0, -1), lambda m, x: m.renorm(x[0], 2, 0, 1),
])
def test_renorm_errors(fn):
    errors_match(torch, fn, A, same_message=True)


@_ignore_warnings
def test_deprecated_norms():
    parity(torch, lambda m, x: m.frobenius_norm(x, (0, 1)), A, grad=(0,))
    parity(torch, lambda m, x: m.nuclear_norm(x), A, rtol=1e-4)


def test_meta_device():
    m = ft.ones(3, 4, device="meta")
    assert ft.nanmedian(m, 1).values.shape == (3,)
    assert ft.quantile(m, ft.tensor([0.1, 0.5], device="meta"), 1).shape == (2, 3)
    assert ft.logcumsumexp(m, 1).device.type == "meta"
    assert ft.searchsorted(ft.ones(5, device="meta"), m).dtype == ft.int64
    assert ft.cov(m).shape == (3, 3)
    assert ft.diff(m, 2).shape == (3, 2)
    assert ft.trapezoid(m).shape == (3,)
    assert ft.gradient(m)[1].shape == (3, 4)


def test_gradcheck_rank_ops():
    x = ft.from_numpy(rnd(3, 5, dtype="float64")).requires_grad_()
    assert gradcheck(lambda t: ft.logcumsumexp(t, 1), x)
    assert gradcheck(lambda t: ft.quantile(t, 0.3, 1), x)
    assert gradcheck(lambda t: ft.cov(t), x)
    assert gradcheck(lambda t: ft.gradient(t, spacing=1.5, edge_order=2)[1], x)
