"""Indexing against PyTorch and NumPy: advanced __getitem__/__setitem__,
gather/scatter, the index_* family, masked ops, where, nonzero, take."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import assert_same, errors_match, gradcheck, parity, to_lib

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")
hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

rng = np.random.default_rng(0)


def r(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def L_(lib, v):
    return lib.tensor(v)


# ----- __getitem__ --------------------------------------------------------------

GETITEM_CASES = [
    lambda L: (L_(L, [0, 2]),),
    lambda L: (slice(None), L_(L, [1, 0, 1])),
    lambda L: (Ellipsis, L_(L, [0, 3])),
    lambda L: (L_(L, [0, 1]), slice(None), L_(L, [2, 3])),  # separated: result dims first
    lambda L: (slice(None), L_(L, [[0], [1]]), L_(L, [1, 2])),  # adjacent, broadcast
    lambda L: (None, L_(L, [1]), None),
    lambda L: (1, L_(L, [0, 2])),
    lambda L: (L_(L, [-1, 0]),),
    lambda L: (slice(1, None), L_(L, [True, False, True, True])),
    lambda L: ([0, 1],),
    lambda L: ([[0, 1], [1, 0]],),  # legacy: a list of lists is a tuple
    lambda L: (L_(L, [[0, 1], [1, 0]]),),
    lambda L: (slice(None, None, 2), Ellipsis, L_(L, 1)),
    lambda L: (L_(L, 2),),
    lambda L: (True,),
    lambda L: (False, 0),
    lambda L: (L_(L, True),),
    lambda L: ([],),
]


@pytest.mark.parametrize("case", range(len(GETITEM_CASES)))
def test_getitem_advanced(case):
    mk = GETITEM_CASES[case]
    parity(torch, lambda L, x: x[mk(L)], r(3, 4, 5), grad=(0,))


@pytest.mark.parametrize("mask_shape", [(3,), (3, 4), (3, 4, 5)])
def test_getitem_bool_mask_prefix(mask_shape):
    m = rng.random(mask_shape) > 0.5
    y = parity(torch, lambda L, x, mm: x[mm], r(3, 4, 5), m, grad=(0,))
    assert y.grad_fn.name() == "IndexBackward0"
    parity(torch, lambda L, x, mm: x[mm, ...], r(3, 4, 5), m, grad=(0,))


def test_getitem_mask_not_at_front():
    m = rng.random((4, 5)) > 0.5
    parity(torch, lambda L, x, mm: x[:, mm], r(3, 4, 5), m, grad=(0,))
    parity(torch, lambda L, x, mm: x[1:, mm], r(3, 4, 5), m, grad=(0,))


def test_getitem_integer_dtypes_and_noncontiguous():
    for dt in (np.int64, np.int32, np.uint8, np.int16):
        parity(torch, lambda L, x: x[L.tensor([1, 0]), :2], np.arange(12).astype(dt).reshape(3, 4))
    parity(torch, lambda L, x: x.t()[[0, 3]], r(3, 4), grad=(0,))
    parity(torch, lambda L, x: x[::2][:, [1, 1]], r(5, 4), grad=(0,))


def test_getitem_numpy_index():
    parity(torch, lambda L, x: x[np.array([2, 0])], r(3, 4))
    parity(torch, lambda L, x: x[np.array([True, False, True])], r(3, 4))


def test_getitem_is_copy_with_index_backward():
    x = ft.arange(12.0).reshape(3, 4)
    y = x[ft.tensor([0, 2])]
    assert y._base is None
    y[0, 0] = 100.0
    assert x[0, 0].item() == 0.0
    assert y.is_contiguous()
    z = ft.ones(3, 4, requires_grad=True)
    assert z[[0, 1]].grad_fn.name() == "IndexBackward0"


def test_getitem_errors():
    msg = errors_match(torch, lambda L, x: x[:, L.tensor([7])], r(3, 4, 5))
    assert msg == "index 7 is out of bounds for dimension 0 with size 4"
    msg = errors_match(torch, lambda L, x: x[[0], :, [9]], r(3, 4, 5))
    assert msg == "index 9 is out of bounds for dimension 1 with size 5"
    msg = errors_match(torch, lambda L, x: x[L.ones(4, dtype=L.bool)], r(3, 4, 5))
    assert msg == "The shape of the mask [4] at index 0 does not match the shape of the indexed tensor [3, 4, 5] at index 0"
    msg = errors_match(torch, lambda L, x: x[:, L.ones(4, 3, dtype=L.bool)], r(3, 4, 5))
    assert msg == "The shape of the mask [4, 3] at index 1 does not match the shape of the indexed tensor [3, 4, 5] at index 2"
    msg = errors_match(torch, lambda L, x: x[[0, 1], [0, 1, 2]], r(3, 4, 5))
    assert msg == "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"
    errors_match(torch, lambda L, x: x[5], r(3, 4))
    errors_match(torch, lambda L, x: x[L.tensor([1.0])], r(3, 4))
    errors_match(torch, lambda L, x: x[0, 0, 0], r(3, 4))
    errors_match(torch, lambda L, x: x["a"], r(3, 4))


# ----- __setitem__ --------------------------------------------------------------

SETITEM_CASES = [
    (lambda L: (L_(L, [0, 2]),), 5.0),
    (lambda L: (L_(L, [0, 2]),), "row"),
    (lambda L: (slice(None), L_(L, [1, 3])), "col"),
    (lambda L: (L_(L, [0, 1]), L_(L, [2, 3])), "pair"),
    (lambda L: (L_(L, [0, 0]), L_(L, [1, 1])), 7.0),  # duplicates, accumulate=False
    (lambda L: (1, L_(L, [0, 2])), "pair"),
]


def _value(L, kind):
    if not isinstance(kind, str):
        return kind
    shapes = {"row": (4,), "col": (3, 1), "pair": (2,)}
    return L.from_numpy(np.arange(np.prod(shapes[kind]), dtype=np.float32).reshape(shapes[kind]) + 10)


@pytest.mark.parametrize("case", range(len(SETITEM_CASES)))
def test_setitem_advanced(case):
    mk, kind = SETITEM_CASES[case]

    def f(L, x):
        y = x.clone()
        y[mk(L)] = _value(L, kind)
        return y

    parity(torch, f, r(3, 4))


def test_setitem_masks():
    inp = np.array([-2.0, -1.0, 0.0, 1.0, 2.0], np.float32)

    def relu_grad(L, i):
        g = L.ones(5)
        g[i < 0] = 0
        return g

    parity(torch, relu_grad, inp)

    def mask2d(L, x):
        y = x.clone()
        y[y > 0] = L.tensor(-1.0)
        y[:, L.tensor([True, False, True, False])] = 3
        return y

    parity(torch, mask2d, r(3, 4))

    def mask_values(L, x):
        y = x.clone()
        m = y > 0
        y[m] = L.arange(int(m.sum())).to(y.dtype)
        return y

    parity(torch, mask_values, r(3, 4))


def test_setitem_casts_and_broadcasts():
    def f(L, x):
        y = x.clone()
        y[[0, 1]] = L.tensor([[1, 2, 3]])  # int into int64, leading 1 stripped
        y[:, [2]] = 9.7  # float into int truncates
        return y

    parity(torch, f, np.arange(9, dtype=np.int64).reshape(3, 3))


def test_setitem_errors():
    def bad_shape(L, x):
        x[[0, 1]] = L.ones(3)

    errors_match(torch, bad_shape, r(3, 4))

    def bad_index(L, x):
        x[L.tensor([3])] = 1

    assert "out of bounds" in errors_match(torch, bad_index, r(3, 4))


def test_setitem_autograd_index_put():
    def f(L, x, v):
        y = x * 2
        y[L.tensor([0, 2])] = v
        return y

    y = parity(torch, f, r(3, 4), r(4), grad=(0, 1))
    assert y.grad_fn.name() == "IndexPutBackward0"

    def g(L, x):
        y = x * 1
        y[y > 0] = 0.0
        return y

    parity(torch, g, r(3, 4), grad=(0,))


def test_setitem_leaf_requires_grad_raises():
    x = ft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[[0]] = 2.0


def test_index_put():
    idx = np.array([0, 2, 0])
    parity(torch, lambda L, x, i, v: x.index_put((i,), v, accumulate=True), r(3, 2), idx, r(3, 2), grad=(0, 2))
    parity(torch, lambda L, x, i, v: L.index_put(x, (i,), v), r(3, 2), np.array([0, 2]), r(2, 2), grad=(0, 2))

    def inplace(L, x, i):
        y = x.clone()
        y.index_put_((i,), L.tensor(1.0), accumulate=True)
        return y

    parity(torch, inplace, r(3, 2), idx)
    msg = errors_match(torch, lambda L, x, i: x.index_put_((i,), L.tensor(1.0, dtype=L.float64)), r(3, 2), idx)
    assert msg.startswith("Index put requires the source and destination dtypes match")


# ----- gather / scatter ---------------------------------------------------------

def idx_for(shape, hi, n=None):
    return rng.integers(0, hi, size=shape)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    x = r(3, 4)
    index = idx_for((2, 3), x.shape[dim])
    y = parity(torch, lambda L, a, i: L.gather(a, dim, i), x, index, grad=(0,))
    assert y.grad_fn.name() == "GatherBackward0"
    parity(torch, lambda L, a, i: a.t().gather(dim, i), x.T.copy(), index[:, :2] % 3, grad=(0,))


def test_gather_errors():
    assert "out of bounds" in errors_match(torch, lambda L, a: L.gather(a, 1, L.tensor([[5]])), r(3, 4))
    errors_match(torch, lambda L, a: L.gather(a, 1, L.tensor([[1.0]])), r(3, 4))
    errors_match(torch, lambda L, a: L.gather(a, 1, L.tensor([1])), r(3, 4))
    errors_match(torch, lambda L, a: L.gather(a, 1, L.tensor([[-1]])), r(3, 4))
    errors_match(torch, lambda L, a: L.gather(a, 1, L.zeros(4, 2, dtype=L.int64)), r(3, 4))


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_variants(dim):
    x, src = r(3, 5), r(3, 5)
    index = np.stack([rng.permutation(x.shape[dim])[:2] for _ in range(2)], 1 - dim if dim == 0 else 0)
    index = index.reshape((2, 2)) if dim == 0 else index.reshape((2, 2))
    index = np.array([[0, 1], [2, 0]]) if dim == 0 else np.array([[0, 4], [3, 1]])
    parity(torch, lambda L, a, i, s: L.scatter(a, dim, i, s), x, index, src, grad=(0,))
    parity(torch, lambda L, a, i, s: L.scatter(a, dim, i, s), x, index, src[:2, :2].copy(), grad=(0, 2))
    parity(torch, lambda L, a, i: a.scatter(dim, i, 2.5), x, index, grad=(0,))
    parity(torch, lambda L, a, i: a.scatter(dim, i, value=-1.0), x, index)
    parity(torch, lambda L, a, i, s: L.scatter_add(a, dim, i, s), x, index, src[:2, :2].copy(), grad=(0, 2))
    parity(torch, lambda L, a, i, s: a.clone().scatter_(dim, i, s), x, index, src)
    parity(torch, lambda L, a, i, s: a.clone().scatter_add_(dim, i, s), x, index, src)
    parity(torch, lambda L, a, i, s: a.clone().scatter_(dim, i, s, reduce="add"), x, index, src)
    parity(torch, lambda L, a, i, s: a.clone().scatter_(dim, i, s, reduce="multiply"), x, index, src)
    parity(torch, lambda L, a, i: a.clone().scatter_(dim, i, 2.0, reduce="multiply"), x, index)


def test_scatter_seed_examples():
    idx = ft.tensor([[0, 1, 2, 0], [1, 2, 3, 1]])
    src = ft.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    agg = ft.zeros(2, 5).scatter_add_(1, idx, src)
    assert agg.tolist() == [[5.0, 2.0, 3.0, 0.0, 0.0], [0.0, 13.0, 6.0, 7.0, 0.0]]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    x = r(3, 4, dtype=np.float64) + 3.0
    src = r(3, 4, dtype=np.float64) + 3.0
    x[0, 0] = src[1, 0]  # a tie between self and src for amax/amin
    index = np.array([[0, 1, 0, 2], [2, 2, 0, 1], [1, 1, 1, 0]])
    parity(torch, lambda L, a, i, s: a.scatter_reduce(0, i, s, reduce, include_self=include_self), x, index, src, grad=(0, 2))
    parity(torch, lambda L, a, i, s: a.clone().scatter_reduce_(1, i, s, reduce, include_self=include_self), x, index % 4, src)
    xi = np.arange(12, dtype=np.int64).reshape(3, 4)
    if reduce != "mean":
        parity(torch, lambda L, a, i, s: L.scatter_reduce(a, 0, i, s, reduce, include_self=include_self), xi, index, xi + 1)


def test_scatter_reduce_gradcheck():
    x = ft.rand(3, 4, dtype=ft.float64) + 1
    x.requires_grad_(True)
    s = (ft.rand(2, 4, dtype=ft.float64) + 1).requires_grad_(True)
    i = ft.tensor([[0, 1, 0, 2], [2, 2, 0, 1]])
    for red in ["sum", "mean", "amax", "amin", "prod"]:
        for inc in [True, False]:
            assert gradcheck(lambda a, b: a.scatter_reduce(0, i, b, red, include_self=inc), x, s)


# ----- index_* family -----------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_add_copy_fill(dim):
    x = r(3, 4)
    idx = np.array([2, 0]) if dim == 0 else np.array([3, 1, 1])
    uniq = np.array([2, 0]) if dim == 0 else np.array([3, 1])
    n = len(idx)
    src_shape = (n, 4) if dim == 0 else (3, n)
    y = parity(torch, lambda L, a, i: L.index_select(a, dim, i), x, idx, grad=(0,))
    assert y.grad_fn.name() == "IndexSelectBackward0"
    parity(torch, lambda L, a, i: a.index_select(dim, i.int()), x, idx)
    parity(torch, lambda L, a, i, s: L.index_add(a, dim, i, s, alpha=2.0), x, idx, r(*src_shape), grad=(0, 2))
    parity(torch, lambda L, a, i, s: a.clone().index_add_(dim, i, s), x, idx, r(*src_shape))
    usrc = r(*((len(uniq), 4) if dim == 0 else (3, len(uniq))))
    parity(torch, lambda L, a, i, s: L.index_copy(a, dim, i, s), x, uniq, usrc, grad=(0, 2))
    parity(torch, lambda L, a, i, s: a.clone().index_copy_(dim, i, s), x, uniq, usrc)
    parity(torch, lambda L, a, i: L.index_fill(a, dim, i, -2.0), x, idx, grad=(0,))
    parity(torch, lambda L, a, i, v: a.index_fill(dim, i, v), x, idx, np.array(3.0, np.float32), grad=(0, 2))
    parity(torch, lambda L, a, i: a.clone().index_fill_(dim, i, 1), x, idx)


def test_index_family_errors():
    errors_match(torch, lambda L, a: L.index_select(a, 1, L.tensor([1.0])), r(3, 4))
    errors_match(torch, lambda L, a: L.index_select(a, 0, L.tensor([5])), r(4))
    errors_match(torch, lambda L, a: a.index_add(1, L.tensor([5]), L.ones(3, 1)), r(3, 4))
    errors_match(torch, lambda L, a: a.index_fill(1, L.tensor([5]), 1.0), r(3, 4))
    errors_match(torch, lambda L, a: a.index_copy(1, L.tensor([5]), L.ones(3, 1, dtype=L.float32)), r(3, 4))
    errors_match(torch, lambda L, a: a.index_add(0, L.tensor([0, 1]), L.ones(3)), r(3))


def test_take_and_take_along_dim():
    x = r(3, 4)
    parity(torch, lambda L, a, i: L.take(a, i), x, np.array([[0, 11], [-1, 5]]), grad=(0,))
    parity(torch, lambda L, a, i: a.t().take(i), x, np.array([0, 1, 2, 2]), grad=(0,))
    assert "out of range" in errors_match(torch, lambda L, a: L.take(a, L.tensor([12])), x)
    idx = np.argsort(x, axis=1)
    parity(torch, lambda L, a, i: L.take_along_dim(a, i, dim=1), x, idx, grad=(0,))
    parity(torch, lambda L, a, i: L.take_along_dim(a, i), x, np.array([3, 0]), grad=(0,))
    parity(torch, lambda L, a, i: a.take_along_dim(i, 0), x, np.array([[2], [0]]), grad=(0,))


# ----- masked ops, where, nonzero -------------------------------------------------

def test_masked_fill_select_scatter():
    x = r(3, 4)
    m = rng.random((3, 4)) > 0.5
    mrow = rng.random(4) > 0.5
    y = parity(torch, lambda L, a, mm: L.masked_fill(a, mm, -1.5), x, m, grad=(0,))
    assert y.grad_fn.name() == "MaskedFillBackward0"
    parity(torch, lambda L, a, mm: a.masked_fill(mm, 2), x, mrow, grad=(0,))
    parity(torch, lambda L, a, mm, v: a.masked_fill(mm, v), x, m, np.array(4.0, np.float32), grad=(0, 2))
    parity(torch, lambda L, a, mm: a.clone().masked_fill_(mm, 0.5), x, mrow)
    sel = parity(torch, lambda L, a, mm: L.masked_select(a, mm), x, m, grad=(0,))
    assert sel.grad_fn.name() == "MaskedSelectBackward0"
    sc = parity(torch, lambda L, a, mm, s: L.masked_scatter(a, mm, s), x, mrow, r(5, 3), grad=(0, 2))
    assert sc.grad_fn.name() == "MaskedScatterBackward0"
    parity(torch, lambda L, a, mm: a.masked_select(mm), x, mrow, grad=(0,))
    parity(torch, lambda L, a, mm, s: L.masked_scatter(a, mm, s), x, m, r(12), grad=(0, 2))
    parity(torch, lambda L, a, mm, s: a.clone().masked_scatter_(mm, s), x, mrow, r(3, 4))
    parity(torch, lambda L, a, mm: L.masked_fill(a, mm, 7), np.arange(4), np.array([True, False, True, False]))


def test_masked_errors():
    errors_match(torch, lambda L, a: a.masked_fill(L.ones(3, 4), 1.0), r(3, 4))
    errors_match(torch, lambda L, a: a.masked_fill(L.ones(3, 5, dtype=L.bool), 1.0), r(3, 4))
    errors_match(torch, lambda L, a: a.masked_fill_(L.ones(2, 3, dtype=L.bool), 1.0), r(3))
    errors_match(torch, lambda L, a: a.masked_scatter(L.ones(3, dtype=L.bool), L.ones(2)), r(3))
    errors_match(torch, lambda L, a: a.masked_fill(L.ones(3, dtype=L.bool), L.ones(2)), r(3))


@pytest.mark.parametrize(
    "xs,ys",
    [
        (np.float32, np.float32),
        (np.float32, np.float64),
        (np.int64, np.float32),
        (np.int32, np.int64),
        (np.uint8, np.int8),
        (np.bool_, np.int16),
    ],
)
def test_where_promotion(xs, ys):
    c = rng.random((3, 4)) > 0.5
    x = (r(3, 4) * 5).astype(xs)
    y = (r(4) * 5).astype(ys)
    parity(torch, lambda L, cc, a, b: L.where(cc, a, b), c, x, y)


def test_where_scalars_and_grad():
    c = rng.random((3, 4)) > 0.5
    x, y = r(3, 1), r(4)
    out = parity(torch, lambda L, cc, a, b: L.where(cc, a, b), c, x, y, grad=(1, 2))
    assert out.grad_fn.name() == "WhereBackward0"
    parity(torch, lambda L, cc, a: L.where(cc, a, 0.0), c, x, grad=(1,))
    parity(torch, lambda L, cc, a: L.where(cc, 1, a), c, np.arange(4))
    parity(torch, lambda L, cc, a: L.where(cc, 1.5, a), c, np.arange(4))
    parity(torch, lambda L, cc: L.where(cc, 1, 0), c)
    parity(torch, lambda L, cc, a, b: L.where(cc, a, b), c, r(4, dtype=np.float16), np.array(2.0, np.float64))
    parity(torch, lambda L, cc, a, b: a.where(cc, b), c, x, y)
    parity(torch, lambda L, cc: L.where(cc), c)
    errors_match(torch, lambda L, a: L.where(L.ones(3), a, 0), r(3))
    errors_match(torch, lambda L, a: L.where(L.ones(2, dtype=L.bool), a, 0), r(3))


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.bool_, np.uint8])
def test_nonzero(dt):
    x = (rng.random((3, 4, 2)) > 0.6).astype(dt)
    parity(torch, lambda L, a: L.nonzero(a), x)
    parity(torch, lambda L, a: a.nonzero(as_tuple=True), x)
    parity(torch, lambda L, a: L.argwhere(a), x)
    parity(torch, lambda L, a: L.nonzero(a), np.array(3.0, np.float32))
    parity(torch, lambda L, a: L.nonzero(a), np.array([np.nan, 0.0, -0.0], np.float32))


def test_gradcheck_indexing_ops():
    x = ft.randn(3, 4, dtype=ft.float64, requires_grad=True)
    src = ft.randn(3, 4, dtype=ft.float64, requires_grad=True)
    i = ft.tensor([[0, 1, 2, 0], [2, 1, 0, 1]])
    m = ft.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
    assert gradcheck(lambda a: a[[0, 2]][:, [1, 1, 3]], x)
    assert gradcheck(lambda a: a[m], x)
    assert gradcheck(lambda a: a.gather(1, i[:, :3] % 4), x)
    iu = ft.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])  # no duplicates per column: scatter's grad is defined
    assert gradcheck(lambda a, s: a.scatter(0, iu, s[:2]), x, src)
    assert gradcheck(lambda a, s: a.scatter_add(0, i, s), x, src)
    assert gradcheck(lambda a: a.index_select(1, ft.tensor([3, 0, 3])), x)
    assert gradcheck(lambda a, s: a.index_add(1, ft.tensor([3, 0, 3, 1]), s, alpha=0.5), x, src)
    assert gradcheck(lambda a: a.masked_fill(m, 2.0), x)
    assert gradcheck(lambda a, s: a.masked_scatter(m, s), x, src)
    assert gradcheck(lambda a, s: ft.where(m, a, s), x, src)
    assert gradcheck(lambda a: a.take(ft.tensor([0, 5, 5, -1])), x)

    def put(a, s):
        y = a * 1
        y[ft.tensor([0, 2])] = s[:2]
        return y

    assert gradcheck(put, x, src)


def test_double_backward_through_indexing():
    x = ft.randn(4, dtype=ft.float64, requires_grad=True)
    y = (x[[0, 0, 3]] ** 3).sum()
    (g,) = ft.autograd.grad(y, x, create_graph=True)
    (gg,) = ft.autograd.grad(g.sum(), x)
    xt = torch.from_numpy(x.detach().numpy()).requires_grad_(True)
    yt = (xt[[0, 0, 3]] ** 3).sum()
    (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    assert_same(g.detach(), gt.detach())
    assert_same(gg, ggt)


# ----- hypothesis: advanced indexing and broadcasting against NumPy -------------

@st.composite
def array_and_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    items = []
    n_adv = 0
    for d, size in enumerate(shape):
        kind = draw(st.sampled_from(["slice", "full", "int_array", "skip_rest", "none"]))
        if kind == "skip_rest":
            break
        if kind == "slice":
            start = draw(st.integers(-size, size))
            stop = draw(st.integers(-size, size))
            step = draw(st.integers(1, 3))
            items.append(slice(start, stop, step))
        elif kind == "full":
            items.append(slice(None))
        elif kind == "none":
            items.append(None)
            items.append(slice(None))
        else:
            n_adv += 1
            ishape = draw(st.sampled_from([(2,), (1,), (2, 1), (3,)]))
            items.append(draw(hnp.arrays(np.int64, ishape, elements=st.integers(-size, size - 1))))
    # index arrays must broadcast together
    arrs = [a for a in items if isinstance(a, np.ndarray)]
    try:
        np.broadcast_shapes(*[a.shape for a in arrs])
    except ValueError:
        items = [a if not isinstance(a, np.ndarray) else a.reshape(-1)[:1] for a in items]
    return x, tuple(items)


@settings(max_examples=150, deadline=None)
@given(array_and_index())
def test_hypothesis_getitem_matches_numpy(case):
    x, idx = case
    expected = x[idx]
    ft_idx = tuple(ft.from_numpy(i) if isinstance(i, np.ndarray) else i for i in idx)
    got = ft.from_numpy(x)[ft_idx]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(array_and_index(), st.floats(-5, 5))
def test_hypothesis_setitem_matches_numpy(case, value):
    x, idx = case
    expected = x.copy()
    expected[idx] = value
    ft_idx = tuple(ft.from_numpy(i) if isinstance(i, np.ndarray) else i for i in idx)
    got = ft.from_numpy(x.copy())
    got[ft_idx] = value
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
def test_hypothesis_broadcasting_matches_numpy(shapes):
    a = np.arange(int(np.prod(shapes.input_shapes[0])), dtype=np.float64).reshape(shapes.input_shapes[0])
    b = np.asarray(np.arange(int(np.prod(shapes.input_shapes[1])), dtype=np.float64).reshape(shapes.input_shapes[1]) * 10)
    fa, fb = ft.from_numpy(a), ft.from_numpy(b)
    assert tuple(ft.broadcast_shapes(a.shape, b.shape)) == shapes.result_shape
    ea, eb = np.broadcast_arrays(a, b)
    ga, gb = ft.broadcast_tensors(fa, fb)
    np.testing.assert_array_equal(ga.numpy(), ea)
    np.testing.assert_array_equal(gb.numpy(), eb)
    np.testing.assert_array_equal((fa + fb).numpy(), a + b)
    c = np.asarray(a > 3)
    np.testing.assert_array_equal(ft.where(ft.tensor(c.tolist()), fa, fb).numpy(), np.where(c, a, b))


@settings(max_examples=80, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), st.data())
def test_hypothesis_bool_mask_matches_numpy(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    k = data.draw(st.integers(1, len(shape)))
    m = data.draw(hnp.arrays(np.bool_, shape[:k]))
    np.testing.assert_array_equal(ft.from_numpy(x)[ft.from_numpy(m)].numpy(), x[m])
    y = x.copy()
    y[m] = -1
    fy = ft.from_numpy(x.copy())
    fy[ft.from_numpy(m)] = -1
    np.testing.assert_array_equal(fy.numpy(), y)


# ----- edge cases: ints mixed with advanced indices, 0-d and empty tensors -----

EDGE = [
    lambda L, x: x[..., None, [0, 3]],
    lambda L, x: x[[0, 1], None],
    lambda L, x: x[None, [0, 1], :, [1, 2]],
    lambda L, x: x[0, :, [1, 2]],
    lambda L, x: x[[1, 0], 0],
    lambda L, x: x[:, [1, 0], 0],
    lambda L, x: x[L.tensor([[True, False, True], [False, True, False]]), L.tensor([0, 1, 3])],
    lambda L, x: x[L.tensor([1, 0], dtype=L.int32)],
    lambda L, x: x[L.zeros(0, 3, dtype=L.bool)[:0]] if False else x[[]],
    lambda L, x: x.reshape(-1)[L.tensor(5)],
]


@pytest.mark.parametrize("case", range(len(EDGE)))
def test_getitem_edge_cases(case):
    parity(torch, EDGE[case], np.arange(24, dtype=np.float32).reshape(2, 3, 4), grad=(0,))


def test_zero_dim_and_empty_ops():
    s = np.array(3.0, np.float32)
    parity(torch, lambda L, a: a.gather(0, L.tensor(0)), s, grad=(0,))
    parity(torch, lambda L, a: a.flip(0), s)
    parity(torch, lambda L, a: a.roll(1), s)
    parity(torch, lambda L, a: a.repeat(2, 3), s, grad=(0,))
    parity(torch, lambda L, a: L.take(a, L.tensor(0)), s)
    parity(torch, lambda L, a: L.where(L.ones(0, dtype=L.bool), a, 1.0), np.zeros(0, np.float32))
    parity(torch, lambda L, a: a.nonzero(), np.zeros((0, 3), np.float32))
    parity(torch, lambda L, a: a[L.ones(0, 2, dtype=L.bool)], np.zeros((0, 2), np.float32))
    errors_match(torch, lambda L, a: a.index_select(0, L.tensor([0, 0])), s)
