"""Shape ops (cat, stack, flip, roll, repeat, tril, meshgrid, ...) against PyTorch:
values, dtypes, shapes, errors and gradients."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import assert_same, errors_match, gradcheck, parity

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

rng = np.random.default_rng(0)


def r(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_values_and_grad(dim):
    parity(torch, lambda L, a, b: L.cat([a, b], dim), r(2, 3), r(2, 3), grad=(0, 1))


def test_cat_promotes_and_aliases():
    a = r(2, 3)
    b = np.arange(6, dtype=np.int64).reshape(2, 3)
    parity(torch, lambda L, x, y: L.cat((x, y), 0), a, b)
    parity(torch, lambda L, x, y: L.concat([x, y], dim=1), a, a)
    parity(torch, lambda L, x, y: L.concatenate([x, y], axis=1), a, a)
    parity(torch, lambda L, x, y: L.cat([x, y]), np.zeros(0, np.float32), a)  # legacy empty skip


def test_cat_grad_fn_name_and_noncontiguous():
    x = ft.randn(3, 4, requires_grad=True)
    y = ft.cat([x.t(), x.t()], 1)
    assert y.grad_fn.name() == "CatBackward0"
    parity(torch, lambda L, a: L.cat([a.t(), a[:, ::2].t()], 0), r(3, 4), grad=(0,))


def test_cat_errors():
    assert "Sizes of tensors must match except in dimension 1" in errors_match(torch, lambda L, a, b: L.cat([a, b], 1), r(2, 3), r(3, 3))
    errors_match(torch, lambda L: L.cat([]))
    errors_match(torch, lambda L, a: L.cat([a]), np.float32(1.0).reshape(()))
    errors_match(torch, lambda L, a: L.cat([a, a], 2), r(2, 3))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(dim):
    y = parity(torch, lambda L, a, b: L.stack([a, b], dim), r(2, 3), r(2, 3), grad=(0, 1))
    a = ft.ones(2, requires_grad=True)
    assert ft.stack([a, a]).grad_fn.name() == "StackBackward0"
    assert y is not None


def test_stack_errors():
    assert "stack expects each tensor to be equal size" in errors_match(torch, lambda L, a, b: L.stack([a, b]), r(2), r(3))


def test_hstack_vstack():
    parity(torch, lambda L, a, b: L.hstack([a, b]), r(3), r(2), grad=(0, 1))
    parity(torch, lambda L, a, b: L.hstack([a, b]), r(2, 3), r(2, 1), grad=(0, 1))
    parity(torch, lambda L, a, b: L.vstack([a, b]), r(3), r(3), grad=(0, 1))
    parity(torch, lambda L, a, b: L.vstack([a, b]), r(2, 3), r(1, 3))


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1, 0)])
def test_flip(dims):
    parity(torch, lambda L, a: L.flip(a, dims), r(3, 4), grad=(0,))
    parity(torch, lambda L, a: a.t().flip(*dims), r(3, 4), grad=(0,))
    x = ft.ones(2, 2, requires_grad=True)
    assert x.flip(0).grad_fn.name() == "FlipBackward0"


def test_flip_int_and_empty():
    parity(torch, lambda L, a: L.flip(a, [0]), np.arange(5, dtype=np.int64))
    parity(torch, lambda L, a: L.flip(a, [0, 1]), np.zeros((0, 3), np.float32))
    parity(torch, lambda L, a: L.fliplr(a), r(2, 3))
    parity(torch, lambda L, a: L.flipud(a), r(2, 3))


@pytest.mark.parametrize("shifts,dims", [(1, 0), (-2, 1), ((1, 2), (0, 1)), (7, None), (3, -1)])
def test_roll(shifts, dims):
    parity(torch, lambda L, a: L.roll(a, shifts, dims), r(3, 4), grad=(0,))
    x = ft.ones(2, 2, requires_grad=True)
    assert x.roll(1, 0).grad_fn.name() == "RollBackward0"


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90(k):
    parity(torch, lambda L, a: L.rot90(a, k, (0, 1)), r(2, 3), grad=(0,))
    parity(torch, lambda L, a: a.rot90(k, [1, 2]), r(2, 3, 4), grad=(0,))


def test_rot90_errors():
    errors_match(torch, lambda L, a: L.rot90(a, 1, (0, 0)), r(2, 3))
    errors_match(torch, lambda L, a: L.rot90(a), r(3))


@pytest.mark.parametrize("reps", [(2, 3), (1, 1), (2, 1, 2), (0, 2)])
def test_repeat(reps):
    parity(torch, lambda L, a: a.repeat(*reps), r(2, 3), grad=(0,))
    parity(torch, lambda L, a: a.t().repeat(reps), r(3, 2), grad=(0,))
    x = ft.ones(2, requires_grad=True)
    assert x.repeat(2).grad_fn.name() == "RepeatBackward0"


def test_repeat_errors():
    errors_match(torch, lambda L, a: a.repeat(2), r(2, 3))


@pytest.mark.parametrize("reps", [(2,), (2, 2), (1, 2, 3)])
def test_tile(reps):
    parity(torch, lambda L, a: L.tile(a, reps), r(2, 3), grad=(0,))
    parity(torch, lambda L, a: a.tile(*reps), r(2, 3))


def test_repeat_interleave():
    parity(torch, lambda L, a: L.repeat_interleave(a, 2), r(2, 3), grad=(0,))
    parity(torch, lambda L, a: a.repeat_interleave(3, dim=1), r(2, 3), grad=(0,))
    parity(torch, lambda L, a, rep: L.repeat_interleave(a, rep, dim=0), r(3, 2), np.array([1, 0, 2]), grad=(0,))
    parity(torch, lambda L, rep: L.repeat_interleave(rep), np.array([2, 0, 3]))
    parity(torch, lambda L, a, rep: a.repeat_interleave(rep, dim=0, output_size=3), r(3, 2), np.array([1, 0, 2]))
    errors_match(torch, lambda L, a, rep: L.repeat_interleave(a, rep, dim=0), r(3, 2), np.array([1, 2]))


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu(k):
    parity(torch, lambda L, a: L.tril(a, k), r(3, 4), grad=(0,))
    parity(torch, lambda L, a: a.triu(diagonal=k), r(2, 3, 4), grad=(0,))
    parity(torch, lambda L, a: L.triu(a, k), np.arange(12, dtype=np.int64).reshape(3, 4))
    x = ft.ones(2, 2, requires_grad=True)
    assert x.tril().grad_fn.name() == "TrilBackward0"
    assert x.triu().grad_fn.name() == "TriuBackward0"


def test_tril_keeps_nan_and_inplace():
    a = np.array([[np.nan, np.inf], [1.0, -np.inf]], np.float32)
    parity(torch, lambda L, x: L.tril(x), a)
    parity(torch, lambda L, x: L.triu(x), a)
    parity(torch, lambda L, x: x.clone().tril_(), r(3, 3))
    parity(torch, lambda L, x: x.clone().triu_(1), r(3, 3))
    errors_match(torch, lambda L, x: L.tril(x), r(3))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    parity(torch, lambda L, a, b, c: L.meshgrid(a, b, c, indexing=indexing), r(2), r(3), r(4), grad=(0, 1, 2))
    parity(torch, lambda L, a, b: L.meshgrid([a, b], indexing=indexing), r(2), r(3))


def test_broadcast_shapes_and_tensors():
    assert tuple(ft.broadcast_shapes((8, 1, 6, 1), (7, 1, 5))) == tuple(torch.broadcast_shapes((8, 1, 6, 1), (7, 1, 5)))
    assert tuple(ft.broadcast_shapes(3, (2, 1))) == (2, 3)
    assert isinstance(ft.broadcast_shapes((2,)), ft.Size)
    with pytest.raises(RuntimeError):
        ft.broadcast_shapes((2, 3), (4,))
    parity(torch, lambda L, a, b: L.broadcast_tensors(a, b), r(3, 1), r(4), grad=(0, 1))
    errors_match(torch, lambda L, a, b: L.broadcast_tensors(a, b), r(2, 3), r(4))


@pytest.mark.parametrize("src,dst", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([1], [1])])
def test_movedim(src, dst):
    parity(torch, lambda L, a: L.movedim(a, src, dst), r(2, 3, 4), grad=(0,))
    parity(torch, lambda L, a: a.moveaxis(src, dst), r(2, 3, 4))
    y = ft.zeros(2, 3, 4).movedim(src, dst)
    assert y._base is not None  # a view


def test_narrow_copy():
    y = parity(torch, lambda L, a: L.narrow_copy(a, 1, 1, 2), r(3, 4), grad=(0,))
    assert y.is_contiguous() and y._base is None


def test_gradcheck_shape_ops():
    x = ft.randn(3, 4, dtype=ft.float64, requires_grad=True)
    y = ft.randn(2, 4, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda a, b: ft.cat([a, b], 0), x, y)
    assert gradcheck(lambda a: ft.stack([a, a * 2], 1), x)
    assert gradcheck(lambda a: a.flip(0, 1), x)
    assert gradcheck(lambda a: a.roll((1, -1), (0, 1)), x)
    assert gradcheck(lambda a: a.repeat(2, 1, 3), x)
    assert gradcheck(lambda a: a.tril(1), x)
    assert gradcheck(lambda a: a.triu(-1), x)
    assert gradcheck(lambda a: a.repeat_interleave(2, dim=1), x)
    assert gradcheck(lambda a: a.rot90(1), x)


def test_double_backward_through_flip_and_repeat():
    x = ft.randn(3, dtype=ft.float64, requires_grad=True)
    y = (x.flip(0).repeat(2) ** 2).sum()
    (g,) = ft.autograd.grad(y, x, create_graph=True)
    (gg,) = ft.autograd.grad(g.sum(), x)
    assert_same(gg, torch.full((3,), 4.0, dtype=torch.float64))
