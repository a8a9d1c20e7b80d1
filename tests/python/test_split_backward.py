"""unbind/split/chunk record one node for all their outputs, as PyTorch does
(`UnbindBackward0`, `SplitBackward0`, `SplitWithSizesBackward0`), whose
backward stacks/concatenates the outputs' gradients (zeros for the unused
ones). Compared with PyTorch: node names, shared node, gradients when some
outputs are unused, double backward, and the errors for bad arguments."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

RNG = np.random.default_rng(3)

OPS = [
    ("unbind0", lambda x: x.unbind(0), "UnbindBackward0"),
    ("unbind-1", lambda x: x.unbind(-1), "UnbindBackward0"),
    ("split2", lambda x: x.split(2), "SplitBackward0"),
    ("split3_dim1", lambda x: x.split(3, 1), "SplitBackward0"),
    ("split_big", lambda x: x.split(10, 0), "SplitBackward0"),
    ("split_sizes", lambda x: x.split([1, 3, 1], 0), "SplitWithSizesBackward0"),
    ("split_sizes_zero", lambda x: x.split([2, 0, 3], 0), "SplitWithSizesBackward0"),
    ("chunk2", lambda x: x.chunk(2, 0), "SplitBackward0"),
    ("chunk3_dim2", lambda x: x.chunk(3, 2), "SplitBackward0"),
    ("fn_split", lambda x: type(x).split(x, [4, 1], 0) if isinstance(x, torch.Tensor) else ft.split(x, [4, 1], 0), "SplitWithSizesBackward0"),
    ("fn_unbind", lambda x: (torch if isinstance(x, torch.Tensor) else ft).unbind(x, 1), "UnbindBackward0"),
]


def pair(a, requires_grad=True):
    return (ft.tensor(a.tolist(), dtype=ft.float64).requires_grad_(requires_grad),
            torch.tensor(a, dtype=torch.float64).requires_grad_(requires_grad))


def np_of(x):
    return np.array(x.tolist()).reshape(tuple(x.shape)) if isinstance(x, ft.Tensor) else x.detach().numpy()


@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("use", ["all", "even", "first", "last"])
def test_gradients_and_node_match_torch(op, use):
    _, f, name = op
    a = RNG.standard_normal((5, 4, 6))
    fx, tx = pair(a)
    fy, ty = f(fx * 1), f(tx * 1)
    assert len(fy) == len(ty)
    for p, q in zip(fy, ty):
        assert tuple(p.shape) == tuple(q.shape)
        np.testing.assert_array_equal(np_of(p.detach()), np_of(q))
        assert p.grad_fn.name() == q.grad_fn.name() == name
    # one node for all outputs, each output its own slot of it
    assert len({id(p.grad_fn) for p in fy}) == 1
    idx = {"all": range(len(ty)), "even": range(0, len(ty), 2), "first": [0], "last": [len(ty) - 1]}[use]
    ws = [RNG.standard_normal(tuple(q.shape)) for q in ty]
    fl = sum(((fy[i] * ft.from_numpy(ws[i].copy())).sum() for i in idx), ft.tensor(0.0, dtype=ft.float64))
    tl = sum(((ty[i] * torch.tensor(ws[i])).sum() for i in idx), torch.tensor(0.0, dtype=torch.float64))
    fl.backward()
    tl.backward()
    np.testing.assert_allclose(np_of(fx.grad), np_of(tx.grad), rtol=0, atol=1e-12)


def test_leaf_outputs_and_next_functions():
    fx, tx = pair(RNG.standard_normal((4, 3)))
    for f in (lambda x: x.unbind(0), lambda x: x.split(2), lambda x: x.chunk(3, 1)):
        fn, tn = f(fx)[0].grad_fn, f(tx)[0].grad_fn
        assert [type(n).__name__ for n, _ in fn.next_functions] == [type(n).__name__ for n, _ in tn.next_functions] == ["AccumulateGrad"]


def test_double_backward_through_split():
    a = RNG.standard_normal((6, 4))
    res = []
    for lib, x in zip((ft, torch), pair(a)):
        parts = x.split([2, 4], 0)
        y = (parts[1] ** 3).sum() + (x.unbind(1)[2] ** 2).sum()
        (g,) = lib.autograd.grad(y, (x,), create_graph=True)
        (g ** 2).sum().backward()
        res.append((g, x.grad))
    for f, t in zip(*res):
        np.testing.assert_allclose(np_of(f.detach()), np_of(t.detach()), rtol=1e-12, atol=1e-12)


def test_views_share_storage_and_version():
    x = ft.arange(12.0).reshape(3, 4).clone()
    parts = x.split(2, 1)
    x.add_(1)
    assert parts[1]._base is x and parts[1][0, 0].item() == 3.0
    assert parts[0]._version == x._version


def test_reduced_dtype_gradients():
    for dt, tdt in ((ft.float16, torch.float16), (ft.bfloat16, torch.bfloat16), (ft.float32, torch.float32)):
        a = RNG.standard_normal((4, 5))
        fx = ft.tensor(a.tolist()).to(dt).requires_grad_(True)
        tx = torch.tensor(a).to(tdt).requires_grad_(True)
        (fx.unbind(0)[1] * 2).sum().backward()
        (tx.unbind(0)[1] * 2).sum().backward()
        assert fx.grad.dtype == dt
        np.testing.assert_array_equal(np.array(fx.grad.float().tolist()), tx.grad.float().numpy())


def test_empty_pieces():
    for f in (lambda L, x: x.chunk(2, 0), lambda L, x: x.split(0, 0), lambda L, x: x.unbind(0)):
        fo = f(ft, ft.zeros(0, 3, requires_grad=True))
        to = f(torch, torch.zeros(0, 3, requires_grad=True))
        assert [tuple(p.shape) for p in fo] == [tuple(q.shape) for q in to]
        assert [p.grad_fn.name() for p in fo] == [q.grad_fn.name() for q in to]


BAD = [
    ("split negative", lambda x: x.split(-1)),
    ("split zero", lambda x: x.split(0)),
    ("split sizes sum", lambda x: x.split([1, 1])),
    ("split sizes negative", lambda x: x.split([5, -1])),
    ("split dim", lambda x: x.split(2, 3)),
    ("split scalar", lambda x: x.sum().split(1)),
    ("chunk zero", lambda x: x.chunk(0)),
    ("chunk negative", lambda x: x.chunk(-2)),
    ("chunk dim", lambda x: x.chunk(2, -4)),
    ("chunk scalar", lambda x: x.sum().chunk(1)),
    ("unbind dim", lambda x: x.unbind(2)),
    ("unbind scalar", lambda x: x.sum().unbind(0)),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(case):
    _, f = case
    with pytest.raises(Exception) as te:
        f(torch.randn(4, 3))
    with pytest.raises(Exception) as fe:
        f(ft.randn(4, 3))
    assert type(fe.value).__name__ == type(te.value).__name__
    assert str(fe.value) == str(te.value)
