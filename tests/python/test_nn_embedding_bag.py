"""F.embedding_bag and nn.EmbeddingBag against PyTorch: sum/mean/max, 1-d input with offsets
(empty bags, include_last_offset), 2-d input, per_sample_weights, padding_idx, max_norm,
outputs and weight / per-sample-weight gradients, printed forms, from_pretrained, errors."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import as_np, assert_same, parity, rnd, errors_match, from_np

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def same_error(fn, match_message=True):
    errors_match(torch, fn, same_message=match_message)


T = from_np


IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7], dtype="int64")

CASES = [
    # (mode, offsets, include_last_offset, padding_idx, per_sample_weights)
    ("sum", [0, 4], False, None, False),
    ("mean", [0, 4], False, None, False),
    ("max", [0, 4], False, None, False),
    ("sum", [0, 4, 4, 8], False, None, False),       # an empty bag
    ("mean", [0, 4, 4, 11], True, None, False),      # last offset closes the last bag
    ("max", [0, 0, 4, 4, 8], False, None, False),    # empty bags give zeros
    ("max", [0, 4, 4, 8], False, 4, False),
    ("mean", [0, 3, 4, 4], False, 0, False),         # a bag of only padding
    ("sum", [0, 3, 4, 4], False, 2, True),
    ("sum", [0, 2, 5, 11], True, -1, True),
    ("sum", [0, 5], False, None, True),
]


@pytest.mark.parametrize("mode,offsets,last,pad,psw", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag_1d(mode, offsets, last, pad, psw, dtype):
    w = rnd(10, 3, dtype=dtype)
    arrays = [IDX, w, np.array(offsets, dtype="int64")]
    grad = (1,)
    if psw:
        arrays.append(np.random.default_rng(3).random(len(IDX)).astype(dtype))
        grad = (1, 3)

    def fn(l, i, ww, o, p=None):
        return l.nn.functional.embedding_bag(i, ww, o, mode=mode, include_last_offset=last, padding_idx=pad,
                                             per_sample_weights=p)

    parity(torch, fn, *arrays, grad=grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_and_int32(mode):
    w = rnd(12, 4)
    i2 = np.random.default_rng(4).integers(0, 12, (3, 5))
    parity(torch, lambda l, i, ww: l.nn.functional.embedding_bag(i, ww, mode=mode), i2, w, grad=(1,))
    parity(torch, lambda l, i, ww: l.nn.functional.embedding_bag(i, ww, mode=mode, padding_idx=int(i2[0, 0])),
           i2, w, grad=(1,))
    parity(torch, lambda l, i, ww, o: l.nn.functional.embedding_bag(i, ww, o, mode=mode),
           i2.reshape(-1).astype("int32"), w, np.array([0, 7, 9], "int32"), grad=(1,))
    if mode == "sum":
        ps = np.random.default_rng(5).random((3, 5)).astype("float32")
        parity(torch, lambda l, i, ww, p: l.nn.functional.embedding_bag(i, ww, mode="sum", per_sample_weights=p),
               i2, w, ps, grad=(1, 2))


def test_embedding_bag_max_ties_take_first():
    # Equal rows: the gradient goes to the first maximal element of each column.
    w = np.array([[1.0, 2.0], [1.0, 0.0], [0.5, 2.0]], "float32")
    parity(torch, lambda l, i, ww, o: l.nn.functional.embedding_bag(i, ww, o, mode="max"),
           np.array([0, 1, 2, 2, 1], "int64"), w, np.array([0, 3], "int64"), grad=(1,))


def test_embedding_bag_max_norm_renorms_weight():
    w = rnd(10, 3) * 3
    outs = []
    for lib in (ft, torch):
        ww = T(lib, w)
        out = lib.nn.functional.embedding_bag(T(lib, IDX), ww, T(lib, np.array([0, 4])), max_norm=1.5, norm_type=2.0)
        outs.append((out, ww))
    assert_same(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    assert_same(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)  # the weight itself was renormalised in place


def test_module_parity_and_repr():
    cfgs = [dict(), dict(mode="sum"), dict(mode="max", padding_idx=0), dict(max_norm=1.0, norm_type=1.0),
            dict(scale_grad_by_freq=True, mode="sum", padding_idx=-2), dict(include_last_offset=True)]
    for cfg in cfgs:
        tm, fm = torch.nn.EmbeddingBag(10, 3, **cfg), ft.nn.EmbeddingBag(10, 3, **cfg)
        assert repr(fm) == repr(tm)
        assert fm.padding_idx == tm.padding_idx
        assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    tm = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=4)
    fm = ft.nn.EmbeddingBag(10, 3, mode="max", padding_idx=4)
    assert not as_np(fm.weight)[4].any()  # the padding row starts at zero
    fm.load_state_dict({"weight": ft.from_numpy(tm.weight.detach().numpy().copy())})
    outs, grads = [], []
    for lib, m in ((ft, fm), (torch, tm)):
        out = m(T(lib, IDX), T(lib, np.array([0, 4, 4, 8])))
        (out * T(lib, rnd(4, 3, seed=7))).sum().backward()
        outs.append(out)
        grads.append(m.weight.grad)
    assert_same(outs[0], outs[1])
    assert_same(grads[0], grads[1])


def test_from_pretrained_and_init():
    w = rnd(6, 2)
    tm = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(w.copy()), mode="sum")
    fm = ft.nn.EmbeddingBag.from_pretrained(ft.from_numpy(w.copy()), mode="sum")
    assert repr(fm) == repr(tm) and fm.weight.requires_grad is False
    assert ft.nn.EmbeddingBag.from_pretrained(ft.from_numpy(w.copy()), freeze=False).weight.requires_grad
    assert_same(fm(T(ft, IDX[:6] % 6).reshape(2, 3)), tm(T(torch, IDX[:6] % 6).reshape(2, 3)))
    # N(0, 1) initialisation.
    big = as_np(ft.nn.EmbeddingBag(2000, 50).weight)
    assert abs(big.mean()) < 0.02 and abs(big.std() - 1) < 0.02
    with pytest.raises(AssertionError):
        ft.nn.EmbeddingBag(3, 2, _weight=ft.zeros(2, 2))
    with pytest.raises(AssertionError):
        ft.nn.EmbeddingBag(3, 2, padding_idx=3)
    with pytest.raises(AssertionError):
        ft.nn.EmbeddingBag.from_pretrained(ft.zeros(3))


def test_embedding_bag_errors():
    w, o = rnd(10, 3), np.array([0, 4])

    def eb(l, i=IDX, ww=w, oo=o, **k):
        return l.nn.functional.embedding_bag(T(l, i), T(l, ww), T(l, oo) if oo is not None else None, **k)

    same_error(lambda l: eb(l, oo=np.array([0, 4, 12])))
    same_error(lambda l: eb(l, oo=np.array([1, 4])))
    same_error(lambda l: eb(l, i=IDX.astype("float32")))
    same_error(lambda l: eb(l, mode="foo"))
    same_error(lambda l: eb(l, mode="max", scale_grad_by_freq=True))
    same_error(lambda l: eb(l, mode="max", sparse=True))
    same_error(lambda l: l.nn.functional.embedding_bag(T(l, IDX), T(l, w), T(l, o), mode="mean",
                                                       per_sample_weights=T(l, rnd(11))))
    same_error(lambda l: l.nn.functional.embedding_bag(T(l, IDX), T(l, w), T(l, o), mode="sum",
                                                       per_sample_weights=T(l, rnd(7))))
    same_error(lambda l: l.nn.functional.embedding_bag(T(l, IDX), T(l, w), T(l, o), mode="sum",
                                                       per_sample_weights=T(l, rnd(11, dtype="float64"))))
    same_error(lambda l: eb(l, padding_idx=10))
    same_error(lambda l: eb(l, padding_idx=-11))
    same_error(lambda l: eb(l, i=IDX.reshape(1, 11)), match_message=False)  # names the Tensor class
    same_error(lambda l: eb(l, oo=None))
    same_error(lambda l: eb(l, i=IDX[:8].reshape(2, 2, 2), oo=None))
    same_error(lambda l: eb(l, ww=w[0]))
    same_error(lambda l: eb(l, oo=o.reshape(1, 2)))
    same_error(lambda l: eb(l, ww=w.astype("int64"), mode="sum"))
    same_error(lambda l: eb(l, i=IDX + 10), match_message=False)
    # Empty input and empty offsets.
    parity(torch, lambda l, i, ww, oo: l.nn.functional.embedding_bag(i, ww, oo), np.zeros(0, "int64"), w,
           np.array([0, 0]))
    parity(torch, lambda l, i, ww, oo: l.nn.functional.embedding_bag(i, ww, oo), IDX, w, np.zeros(0, "int64"))


def test_deprecated_argument_order_warns():
    w = rnd(10, 3)
    for lib in (ft, torch):
        with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag was changed"):
            lib.nn.functional.embedding_bag(T(lib, w), T(lib, IDX), T(lib, np.array([0, 4])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, lambda l, ww, i, o: l.nn.functional.embedding_bag(ww, i, o), w, IDX, np.array([0, 4]))


def test_scale_grad_by_freq_matches_embedding_rule():
    # PyTorch's embedding_bag CPU kernel mis-assigns the frequencies (reported as a
    # difference); the reference here is its own F.embedding(scale_grad_by_freq=True)
    # reduced per bag, which divides each row's gradient by its count in the batch.
    w = rnd(10, 3)
    offs = [0, 4, 7]
    ws = ft.from_numpy(w.copy()).requires_grad_()
    out = ft.nn.functional.embedding_bag(ft.from_numpy(IDX), ws, ft.tensor(offs), mode="mean",
                                         scale_grad_by_freq=True)
    up = rnd(3, 3, seed=2)
    (out * ft.from_numpy(up)).sum().backward()
    wt = torch.from_numpy(w.copy()).requires_grad_()
    rows = torch.nn.functional.embedding(torch.from_numpy(IDX), wt, scale_grad_by_freq=True)
    bounds = offs + [len(IDX)]
    ref = torch.stack([rows[bounds[b]:bounds[b + 1]].mean(0) for b in range(3)])
    (ref * torch.from_numpy(up)).sum().backward()
    assert_same(out, ref)
    assert_same(ws.grad, wt.grad)


# -- nn.Embedding's options (max_norm, scale_grad_by_freq, from_pretrained, padding row) -------------


@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=2), dict(padding_idx=-1, scale_grad_by_freq=True),
                                dict(max_norm=1.2), dict(max_norm=0.8, norm_type=1.0, scale_grad_by_freq=True)])
def test_embedding_module_options(kw):
    tm, fm = torch.nn.Embedding(10, 3, **kw), ft.nn.Embedding(10, 3, **kw)
    assert repr(fm) == repr(tm) and fm.padding_idx == tm.padding_idx
    if fm.padding_idx is not None:
        assert not as_np(fm.weight)[fm.padding_idx].any()
    with torch.no_grad():
        tm.weight.mul_(2)
    fm.load_state_dict({"weight": ft.from_numpy(tm.weight.detach().numpy().copy())})
    idx = IDX.reshape(1, 11)
    outs, grads = [], []
    for lib, m in ((ft, fm), (torch, tm)):
        out = m(T(lib, idx))
        (out * T(lib, rnd(1, 11, 3, seed=4))).sum().backward()
        outs.append(out)
        grads.append(m.weight.grad)
    assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    assert_same(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    # max_norm renormalises the looked-up rows of the weight itself.
    assert_same(fm.weight, tm.weight, rtol=1e-5, atol=1e-6)


def test_embedding_from_pretrained_and_errors():
    w = rnd(5, 4)
    tm = torch.nn.Embedding.from_pretrained(torch.from_numpy(w.copy()), padding_idx=1, max_norm=2.0)
    fm = ft.nn.Embedding.from_pretrained(ft.from_numpy(w.copy()), padding_idx=1, max_norm=2.0)
    assert repr(fm) == repr(tm) and fm.weight.requires_grad is tm.weight.requires_grad is False
    assert ft.nn.Embedding.from_pretrained(ft.from_numpy(w.copy()), freeze=False).weight.requires_grad
    assert_same(fm(T(ft, np.array([0, 1, 4]))), tm(T(torch, np.array([0, 1, 4]))))
    for bad in (dict(padding_idx=5), dict(padding_idx=-6)):
        same_error(lambda l: l.nn.Embedding(5, 2, **bad))
    same_error(lambda l: l.nn.Embedding(3, 2, _weight=l.zeros(2, 2)))
    same_error(lambda l: l.nn.Embedding.from_pretrained(l.zeros(3)))


@pytest.mark.parametrize("idx", [[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [1, 1, 2, 2]])
def test_embedding_bag_max_nan_rule(idx):
    # A NaN wins a column only when it is the bag's first element there.
    w = rnd(6, 3)
    w[1, 0] = np.nan
    w[2, 1] = np.nan
    parity(torch, lambda l, i, ww, o: l.nn.functional.embedding_bag(i, ww, o, mode="max"),
           np.array(idx, "int64"), w, np.array([0, 2], "int64"), grad=(1,))
