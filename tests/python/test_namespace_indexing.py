"""Index-driven ops (index_reduce, put, isin, unique_consecutive,
nonzero_static, unravel_index) and products (cross, inner, kron, addr,
chain_matmul) against PyTorch: values, dtypes, errors and gradients."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import assert_same, errors_match, parity, rnd

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

A = rnd(3, 4)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce(reduce, include_self, dim):
    idx = np.array([0, 2, 0, 1] if dim == 1 else [2, 0, 2], dtype="int64")
    src = rnd(3, 4, seed=2) if dim == 1 else rnd(3, 4, seed=2)
    parity(torch, lambda m, x, i, s: m.index_reduce(x, dim, i, s, reduce, include_self=include_self), A, idx, src)
    parity(torch, lambda m, x, i, s: x.clone().index_reduce_(dim, i, s, reduce, include_self=include_self),
           A, idx, src)
    if reduce in ("mean", "prod"):
        parity(torch, lambda m, x, i, s: x.index_reduce(dim, i, s, reduce, include_self=include_self),
               A, idx, src, grad=(0, 2))


def test_index_reduce_errors_and_warning():
    errors_match(torch, lambda m, x: m.index_reduce(x, 0, m.tensor([0]), m.ones(1, 4), "sum"), A, same_message=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.index_reduce(ft.ones(2), 0, ft.tensor([0]), ft.ones(1), "prod")
    assert any("index_reduce() is in beta" in str(x.message) for x in w)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    idx = np.array([0, 7, -1, 7], dtype="int64")
    src = rnd(4, seed=3)
    parity(torch, lambda m, x, i, s: m.put(x, i, s, accumulate), A, idx, src, grad=(0, 2) if accumulate else (2,))
    parity(torch, lambda m, x, i, s: x.t().put(i, s, accumulate=accumulate), A, idx, src)
    parity(torch, lambda m, x, i, s: x.clone().put_(i.reshape(2, 2), s, accumulate), A, idx, src)


def test_put_errors():
    errors_match(torch, lambda m, x: m.put(x, m.tensor([0, 12]), m.ones(2)), A, same_message=True)
    errors_match(torch, lambda m, x: m.put(x, m.tensor([0, 1, 2]), m.ones(2)), A, same_message=True)


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    e = np.array([[1, 2, 3], [4, 9, 2]], dtype="int64")
    t = np.array([2, 9, 11, 2], dtype="int64")
    parity(torch, lambda m, x, y: m.isin(x, y, invert=invert), e, t)
    parity(torch, lambda m, x, y: m.isin(x, y.float() + 0.5, invert=invert), e, t)
    parity(torch, lambda m, x: m.isin(x, 2, invert=invert), e)
    parity(torch, lambda m, y: m.isin(9, y, invert=invert), t)
    parity(torch, lambda m, x, y: m.isin(x, y, invert=invert), np.array([1.0, np.nan], dtype="float32"),
           np.array([np.nan, 1.0], dtype="float32"))
    parity(torch, lambda m, x: m.isin(x, x[:0], invert=invert), e)


@pytest.mark.parametrize("inv", [False, True])
@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_consecutive(inv, counts, dim):
    x = np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 1, 1], [3, 3, 1, 1], [1, 1, 1, 5]], dtype="int64")
    parity(torch, lambda m, t: m.unique_consecutive(t, return_inverse=inv, return_counts=counts, dim=dim), x)
    parity(torch, lambda m, t: t.unique_consecutive(inv, counts, dim), x.astype("float32"))
    parity(torch, lambda m, t: m.unique_consecutive(t, return_inverse=inv, return_counts=counts, dim=dim),
           x[:0] if dim != 1 else x[:, :0])


@pytest.mark.parametrize("size, fill", [(7, -1), (2, 9), (0, -1), (4, 0)])
def test_nonzero_static(size, fill):
    x = np.array([[0, 1, 2], [3, 0, 5]], dtype="float32")
    parity(torch, lambda m, t: m.nonzero_static(t, size=size, fill_value=fill), x)
    parity(torch, lambda m, t: t.nonzero_static(size=size), x[0])
    errors_match(torch, lambda m, t: m.nonzero_static(t, size=-1), x, same_message=True)


@pytest.mark.parametrize("shape", [(2, 3), (6,), (2, 1, 3), (4, 5, 6)])
def test_unravel_index(shape):
    idx = np.array([[0, 4], [5, 1]], dtype="int64")
    parity(torch, lambda m, i: m.unravel_index(i, shape), idx)
    parity(torch, lambda m, i: m.unravel_index(i, shape), np.array(5, dtype="int32"))
    parity(torch, lambda m, i: m.unravel_index(i, shape), np.array([-1, 7], dtype="int64"))


def test_unravel_index_errors():
    errors_match(torch, lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)), same_message=True)
    errors_match(torch, lambda m: m.unravel_index(m.tensor([1]), (2, -3)), same_message=True)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_cross(dim):
    a = rnd(3, 3)
    b = rnd(3, 3, seed=4)
    parity(torch, lambda m, x, y: m.cross(x, y, dim), a, b, grad=(0, 1))
    if dim in (1, -1):  # the size-3 check comes before broadcasting
        parity(torch, lambda m, x, y: x.cross(y, dim=dim), a, b[:1])
    parity(torch, lambda m, x, y: m.cross(x, y, dim), (a * 5).astype("int64"), (b * 5).astype("int64"))


def test_cross_errors():
    errors_match(torch, lambda m, x: m.cross(x[:2, :2], x[:2, :2]), A, same_message=True)
    errors_match(torch, lambda m, x: m.cross(x[0, :3], x[:, :3], dim=-1), A, same_message=True)
    errors_match(torch, lambda m, x: m.cross(x, x, dim=1), A, same_message=True)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        ft.cross(ft.ones(3), ft.ones(3))


@pytest.mark.parametrize("sa, sb", [((4,), (4,)), ((3, 4), (2, 4)), ((2, 3, 4), (4,)), ((), (3, 2)), ((3,), ())])
def test_inner(sa, sb):
    parity(torch, lambda m, x, y: m.inner(x, y), rnd(*sa), rnd(*sb, seed=2), grad=(0, 1))
    ia, ib = (np.asarray(rnd(*s) * 4).astype("int64") for s in (sa, sb))
    parity(torch, lambda m, x, y: x.inner(y), ia, ib)


def test_inner_errors():
    errors_match(torch, lambda m, x: m.inner(x, x[0, :3]), A, same_message=True)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (2, 0.5), (0, 3), (0.5, 0)])
def test_addr(beta, alpha):
    parity(torch, lambda m, x, u, v: m.addr(x, u, v, beta=beta, alpha=alpha), A, rnd(3, seed=1), rnd(4, seed=2),
           grad=(0, 1, 2))
    parity(torch, lambda m, x, u, v: x.clone().addr_(u, v, beta=beta, alpha=alpha), A, rnd(3, seed=1),
           rnd(4, seed=2))
    parity(torch, lambda m, x, u, v: x.addr(u, v, beta=beta, alpha=alpha), A[0], rnd(3, seed=1), rnd(4, seed=2))
    nan_input = np.full((3, 4), np.nan, dtype="float32")
    if beta == 0:
        parity(torch, lambda m, x, u, v: m.addr(x, u, v, beta=0, alpha=alpha), nan_input, rnd(3), rnd(4))


def test_addr_integers_bools_and_errors():
    i = np.arange(6).reshape(2, 3).astype("int64")
    parity(torch, lambda m, x, u, v: m.addr(x, u, v, beta=2, alpha=3), i, np.array([1, 2]), np.array([1, 0, 2]))
    b = np.array([[True, False, False], [False, False, True]])
    parity(torch, lambda m, x, u, v: m.addr(x, u, v), b, np.array([True, False]), np.array([False, True, True]))
    errors_match(torch, lambda m, x: m.addr(x, x, x[0]), A, same_message=True)
    errors_match(torch, lambda m, x: m.addr(x, m.tensor([1, 2]), m.tensor([1, 2, 3]), alpha=2.5), i,
                 same_message=True)


def test_chain_matmul():
    ms = [rnd(2, 3), rnd(3, 4, seed=1), rnd(4, 2, seed=2)]
    parity(torch, lambda m, a, b, c: m.chain_matmul(a, b, c), *ms, grad=(0, 1, 2), rtol=1e-4)
    parity(torch, lambda m, a: m.chain_matmul(a), ms[0])
    errors_match(torch, lambda m: m.chain_matmul(), same_message=True)
    errors_match(torch, lambda m, a: m.chain_matmul(a.reshape(1, 2, 3)), ms[0], same_message=True)


def test_meta_device():
    m = ft.ones(3, 4, device="meta")
    assert ft.put(m, ft.tensor([1, 2], device="meta"), ft.ones(2, device="meta")).shape == (3, 4)
    assert ft.isin(m, ft.ones(5, device="meta")).dtype == ft.bool
    assert ft.cross(ft.ones(2, 3, device="meta"), ft.ones(2, 3, device="meta"), dim=1).shape == (2, 3)
    assert ft.inner(m, m).shape == (3, 3)
    assert ft.addr(m, ft.ones(3, device="meta"), ft.ones(4, device="meta")).device.type == "meta"
    assert_same(ft.unravel_index(ft.tensor([4]), (2, 3))[0], torch.tensor([1]))
