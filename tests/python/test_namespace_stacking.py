"""Stacking, splitting, block/product constructions, view copies and scatters,
and diagonal constructions against PyTorch: values, dtypes, shapes, strides,
errors, gradients and the meta device."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import assert_same, errors_match, gradcheck, parity, rnd

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

A = rnd(3, 4)
V = rnd(5, seed=1)
B3 = rnd(2, 3, 4, seed=2)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast(name, shape):
    a = rnd(*shape) if shape else np.array(1.5, dtype=np.float32)
    parity(torch, lambda m, x: getattr(m, name)(x), a, grad=(0,))
    parity(torch, lambda m, x: getattr(m, name)(x, x), a)
    parity(torch, lambda m, x: getattr(m, name)([x, x * 2]), a)


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.dstack([x, y]),
    lambda m, x, y: m.column_stack([x, y]),
    lambda m, x, y: m.column_stack([x[:, 0], y]),
    lambda m, x, y: m.row_stack([x, y[0]]),
    lambda m, x, y: m.dstack([x[0], y[0]]),
])
def test_stacks(fn):
    parity(torch, fn, A, rnd(3, 4, seed=3), grad=(0, 1))


@pytest.mark.parametrize("ios", [1, 2, 3, 5, [1, 3], [0, 2, 2, 9], [-1], (3, 1)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_tensor_split(ios, dim):
    parity(torch, lambda m, x: m.tensor_split(x, ios, dim), A, grad=(0,))
    parity(torch, lambda m, x: x.tensor_split(ios, dim=dim), A)


def test_tensor_split_tensor_argument_and_views():
    parity(torch, lambda m, x: m.tensor_split(x, m.tensor([1, 3]), 1), A)
    parity(torch, lambda m, x: m.tensor_split(x, m.tensor(2), 1), A)
    x = ft.from_numpy(A.copy())
    parts = ft.tensor_split(x, 2, 1)
    assert all(p.data_ptr() >= x.data_ptr() and p.stride() == x.stride() for p in parts)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.hsplit(x, 2), lambda m, x: m.hsplit(x, [1, 3]), lambda m, x: m.vsplit(x, 3),
    lambda m, x: m.hsplit(x[0], 2), lambda m, x: x.vsplit([1]),
    lambda m, x: m.split_with_sizes(x, [1, 3], 1), lambda m, x: x.split_with_sizes([2, 1]),
    lambda m, x: m.unsafe_split(x, 2, 1), lambda m, x: m.unsafe_chunk(x, 2, 1),
    lambda m, x: m.unsafe_split_with_sizes(x, [3, 1], 1),
])
def test_splits(fn):
    parity(torch, fn, A, grad=(0,))


def test_dsplit():
    parity(torch, lambda m, x: m.dsplit(x, 2), B3, grad=(0,))
    parity(torch, lambda m, x: m.dsplit(x, [1, 3]), B3)


@pytest.mark.parametrize("fn, arr", [
    (lambda m, x: m.hsplit(x, 3), A), (lambda m, x: m.vsplit(x[0], 1), A), (lambda m, x: m.dsplit(x, 1), A),
    (lambda m, x: m.hsplit(x[0, 0], 1), A), (lambda m, x: m.split_with_sizes(x, [1, 1]), A),
    (lambda m, x: m.tensor_split(x, 0), A), (lambda m, x: m.tensor_split(x[0, 0], 1), A),
    (lambda m, x: m.tensor_split(x, m.tensor([1.0])), A), (lambda m, x: m.block_diag(x.reshape(1, 3, 4)), A),
    (lambda m, x: m.cartesian_prod(x), A), (lambda m, x: m.combinations(x), A),
    (lambda m, x: m.combinations(x[0], -1), A), (lambda m, x: m.dstack([]), A), (lambda m, x: m.column_stack([]), A),
    (lambda m, x: m.hsplit(x, 0), A),
])
def test_split_and_construction_errors(fn, arr):
    errors_match(torch, fn, arr, same_message=True)


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int32", "float64"), ("int64", "int16")])
def test_block_diag(dtypes):
    a = (rnd(2, 3) * 4).astype(dtypes[0])
    b = (rnd(3, seed=1) * 4).astype(dtypes[1])
    parity(torch, lambda m, x, y: m.block_diag(x, y, x[0, 0], y[:0]), a, b)
    parity(torch, lambda m, x, y: m.block_diag(x, y), rnd(2, 3), rnd(1, 2, seed=2), grad=(0, 1))
    assert_same(ft.block_diag(), torch.block_diag())


def test_cartesian_prod_and_combinations():
    parity(torch, lambda m, x, y: m.cartesian_prod(x, y), V, rnd(3, seed=4), grad=(0, 1))
    parity(torch, lambda m, x: m.cartesian_prod(x), V)
    for r in (0, 1, 2, 3, 5, 6):
        for rep in (False, True):
            parity(torch, lambda m, x: m.combinations(x, r, rep), V)
    parity(torch, lambda m, x: m.combinations(x, 2, True), V, grad=(0,))


@pytest.mark.parametrize("sa, sb", [((2, 3), (3, 2)), ((3,), (2,)), ((2, 1, 3), (4, 2)), ((), (3,))])
def test_kron(sa, sb):
    parity(torch, lambda m, x, y: m.kron(x, y), rnd(*sa), rnd(*sb, seed=5), grad=(0, 1))
    a, b = np.asarray(rnd(*sa) * 3).astype("int64"), np.asarray(rnd(*sb) * 3).astype("int32")
    parity(torch, lambda m, x, y: x.kron(y), a, b)


def test_ravel_msort_swapdims():
    parity(torch, lambda m, x: m.ravel(x.t()), A, grad=(0,))
    parity(torch, lambda m, x: m.msort(x), A, grad=(0,))
    parity(torch, lambda m, x: x.msort(), A)
    parity(torch, lambda m, x: m.swapdims(x, 0, 1), A)
    assert ft.ravel(ft.from_numpy(A.copy()).t()).is_contiguous()


COPIES = [
    ("alias_copy", lambda m, x: m.alias_copy(x)),
    ("as_strided_copy", lambda m, x: m.as_strided_copy(x, (2, 2), (1, 3), 1)),
    ("detach_copy", lambda m, x: m.detach_copy(x)),
    ("diagonal_copy", lambda m, x: m.diagonal_copy(x, 1)),
    ("expand_copy", lambda m, x: m.expand_copy(x[:1], (2, 4))),
    ("permute_copy", lambda m, x: m.permute_copy(x, (1, 0))),
    ("select_copy", lambda m, x: m.select_copy(x, 1, 2)),
    ("slice_copy", lambda m, x: m.slice_copy(x, 1, 1, 4, 2)),
    ("split_copy", lambda m, x: m.split_copy(x, 2, 1)),
    ("split_with_sizes_copy", lambda m, x: m.split_with_sizes_copy(x, [1, 3], 1)),
    ("squeeze_copy", lambda m, x: m.squeeze_copy(x[:1])),
    ("t_copy", lambda m, x: m.t_copy(x)),
    ("transpose_copy", lambda m, x: m.transpose_copy(x, 0, 1)),
    ("unbind_copy", lambda m, x: m.unbind_copy(x, 1)),
    ("unfold_copy", lambda m, x: m.unfold_copy(x, 1, 2, 1)),
    ("unsqueeze_copy", lambda m, x: m.unsqueeze_copy(x, 1)),
    ("view_copy", lambda m, x: m.view_copy(x, (2, 6))),
]


@pytest.mark.parametrize("name, fn", COPIES, ids=[c[0] for c in COPIES])
def test_view_copies(name, fn):
    out = parity(torch, fn, A, grad=() if name == "detach_copy" else (0,))
    src = ft.from_numpy(A.copy())
    res = fn(ft, src)
    for r in (res if isinstance(res, tuple) else (res,)):
        assert r.is_contiguous()
        assert r.untyped_storage().data_ptr() != src.untyped_storage().data_ptr()
    t_res = fn(torch, torch.from_numpy(A.copy()))
    for r, t in zip(res if isinstance(res, tuple) else (res,), t_res if isinstance(t_res, tuple) else (t_res,)):
        assert r.stride() == t.stride()
    assert out is not None


def test_view_copy_out():
    out = ft.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ft.t_copy(ft.from_numpy(A.copy()), out=out)
    np.testing.assert_array_equal(out.numpy(), A.T)


SCATTERS = [
    (lambda m, x, s: m.select_scatter(x, s[0], 0, 1), (4,)),
    (lambda m, x, s: m.slice_scatter(x, s[:, :2], 1, 0, 4, 2), (3, 4)),
    (lambda m, x, s: m.slice_scatter(x, s[:2], 0, 1), (3, 4)),
    (lambda m, x, s: x.diagonal_scatter(s[0, :3], 1), (3, 4)),
    (lambda m, x, s: m.diagonal_scatter(x, s[0, :2], -1), (3, 4)),
    (lambda m, x, s: m.as_strided_scatter(x, s[:2, :2], (2, 2), (1, 4), 1), (3, 4)),
]


@pytest.mark.parametrize("fn, sshape", SCATTERS)
def test_scatters(fn, sshape):
    # PyTorch 2.13's as_strided_scatter gives ``input`` the gradient of the overwritten
    # positions instead of the kept ones, so that one is checked by finite differences
    grad = (1,) if "as_strided_scatter" in fn.__code__.co_names else (0, 1)
    parity(torch, fn, A, rnd(3, 4, seed=7), grad=grad)


def test_as_strided_scatter_gradient_by_finite_differences():
    x = ft.from_numpy(rnd(3, 4, dtype="float64")).requires_grad_()
    s = ft.from_numpy(rnd(2, 2, seed=3, dtype="float64")).requires_grad_()
    assert gradcheck(lambda a, b: ft.as_strided_scatter(a, b, (2, 2), (1, 4), 1), x, s)


def test_scatter_errors():
    errors_match(torch, lambda m, x: m.select_scatter(x, m.ones(3), 0, 1), A)
    errors_match(torch, lambda m, x: m.diagonal_scatter(x, m.ones(2), 1), A)


@pytest.mark.parametrize("k", [0, 1, -2, 4])
def test_diag(k):
    parity(torch, lambda m, x: m.diag(x, k), V, grad=(0,))
    parity(torch, lambda m, x: m.diag(x, k), A, grad=(0,))
    parity(torch, lambda m, x: x.diagflat(k), A, grad=(0,))
    parity(torch, lambda m, x: m.diag((x * 3).int(), k), V)


@pytest.mark.parametrize("offset, d1, d2", [(0, -2, -1), (1, 0, 2), (-1, 2, 0), (2, 1, 2)])
def test_diag_embed(offset, d1, d2):
    parity(torch, lambda m, x: m.diag_embed(x, offset, d1, d2), A, grad=(0,))
    parity(torch, lambda m, x: x.diag_embed(offset, d1, d2), B3)


def test_diag_errors():
    errors_match(torch, lambda m, x: m.diag(x), B3, same_message=True)
    errors_match(torch, lambda m, x: m.diag_embed(x, 0, 0, 0), A, same_message=True)
    errors_match(torch, lambda m, x: m.diag_embed(x, 0, 0, 5), A)


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False), ((3, 7), True),
                                         ((4, 4, 4), False), ((3, 4), True)])
def test_fill_diagonal_(shape, wrap):
    parity(torch, lambda m, x: x.clone().fill_diagonal_(5.0, wrap=wrap), rnd(*shape))


def test_fill_diagonal_errors():
    errors_match(torch, lambda m, x: x.fill_diagonal_(1), V, same_message=True)
    errors_match(torch, lambda m, x: x.fill_diagonal_(1), B3, same_message=True)


@pytest.mark.parametrize("r, c, off", [(3, 4, 0), (3, 4, 1), (4, 3, -1), (5, 5, -7), (0, 3, 0), (3, 3, 9)])
def test_tri_indices(r, c, off):
    assert_same(ft.tril_indices(r, c, off), torch.tril_indices(r, c, off))
    assert_same(ft.triu_indices(r, c, off), torch.triu_indices(r, c, off))
    assert_same(ft.tril_indices(r, c, off, dtype=ft.int32), torch.tril_indices(r, c, off, dtype=torch.int32))


def test_tri_indices_errors():
    errors_match(torch, lambda m: m.tril_indices(-1, 2), same_message=True)


@pytest.mark.parametrize("n, inc", [(None, False), (3, True), (0, False), (5, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_vander(n, inc, dtype):
    x = np.array([1, 2, 3, -2], dtype=dtype)
    parity(torch, lambda m, t: m.vander(t, n, inc), x)


def test_vander_grad_and_errors():
    # PyTorch 2.13's own vander backward fails (its cumprod runs in place), so finite differences decide
    x = ft.from_numpy(rnd(4, dtype="float64")).requires_grad_()
    assert gradcheck(lambda t: ft.vander(t, 3), x)
    errors_match(torch, lambda m, t: m.vander(t), A, same_message=True)
    errors_match(torch, lambda m, t: m.vander(t, -1), V, same_message=True)


def test_meta_device():
    m = ft.ones(3, 4, device="meta")
    assert ft.block_diag(m, m).shape == (6, 8)
    assert ft.diag_embed(m).shape == (3, 4, 4)
    assert ft.kron(m, m).shape == (9, 16)
    assert [p.shape for p in ft.tensor_split(m, 3, 1)] == [(3, 2), (3, 1), (3, 1)]
    assert ft.select_scatter(m, ft.ones(4, device="meta"), 0, 0).device.type == "meta"
    assert ft.t_copy(m).shape == (4, 3)
