"""Layers Unflatten, Bilinear, ChannelShuffle, Softmax2d, RMSNorm, LocalResponseNorm and their
functional forms against PyTorch: outputs and input/parameter gradients with weights copied
from a PyTorch module, printed forms, parameter names and shapes, and errors."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import as_np, assert_same, errors_match, parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def rnd(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def copy_from_torch(tm, fm):
    fm.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def module_parity(name, args, kwargs, inputs, rtol=1e-5, atol=1e-6):
    """Builds ``nn.<name>(*args, **kwargs)`` in both libraries, copies torch's weights,
    compares outputs, input gradients and parameter gradients."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    fm = getattr(ft.nn, name)(*args, **kwargs)
    assert repr(fm) == repr(tm)
    assert [(k, tuple(p.shape)) for k, p in fm.named_parameters()] == \
        [(k, tuple(p.shape)) for k, p in tm.named_parameters()]
    copy_from_torch(tm, fm)
    outs, grads = [], []
    for lib, m in ((ft, fm), (torch, tm)):
        ins = [lib.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in inputs]
        out = m(*ins)
        up = lib.from_numpy(np.random.default_rng(9).standard_normal(tuple(out.shape)).astype(as_np(out).dtype))
        (out * up).sum().backward()
        outs.append(out)
        grads.append([i.grad for i in ins if i.requires_grad] + [p.grad for _, p in m.named_parameters()])
    assert_same(outs[0], outs[1], rtol, atol)
    for a, b in zip(*grads):
        assert_same(a, b, rtol, atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bilinear_module(dtype):
    for bias in (True, False):
        tm = torch.nn.Bilinear(3, 4, 5, bias=bias)
        if dtype == "float64":
            tm = tm.double()
        module_parity_tm = (tm, ft.nn.Bilinear(3, 4, 5, bias=bias))
        fm = module_parity_tm[1]
        if dtype == "float64":
            fm = fm.double()
        assert repr(fm) == repr(tm)
        copy_from_torch(tm, fm)
        x1, x2 = rnd(2, 6, 3, dtype=dtype), rnd(2, 6, 4, seed=1, dtype=dtype)
        outs, grads = [], []
        for lib, m in ((ft, fm), (torch, tm)):
            a = lib.from_numpy(x1.copy()).requires_grad_()
            b = lib.from_numpy(x2.copy()).requires_grad_()
            out = m(a, b)
            (out * out).sum().backward()
            outs.append(out)
            grads.append([a.grad, b.grad] + [p.grad for p in m.parameters()])
        tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
        assert_same(outs[0], outs[1], **tol)
        for g, h in zip(*grads):
            assert_same(g, h, **tol)


def test_bilinear_init_bounds_and_functional():
    m = ft.nn.Bilinear(16, 3, 200)
    w = as_np(m.weight)
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2
    assert tuple(m.bias.shape) == (200,) and np.abs(as_np(m.bias)).max() <= 0.25
    parity(torch, lambda l, a, b, w, c: l.nn.functional.bilinear(a, b, w, c), rnd(4, 3), rnd(4, 2, seed=1),
           rnd(5, 3, 2, seed=2), rnd(5, seed=3), grad=(0, 1, 2, 3), rtol=1e-4, atol=1e-5)
    parity(torch, lambda l, a, b, w: l.nn.functional.bilinear(a, b, w), rnd(3), rnd(2, seed=1),
           rnd(5, 3, 2, seed=2), grad=(0, 1, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", [
    lambda l: l.nn.functional.bilinear(l.randn(2, 3), l.randn(2, 4), l.randn(5, 3, 3)),
    lambda l: l.nn.functional.bilinear(l.randn(2, 3), l.randn(3, 4), l.randn(5, 3, 4)),
    lambda l: l.nn.functional.bilinear(l.randn(2, 3), l.randn(2, 4), l.randn(5, 3, 4), l.randn(4)),
    lambda l: l.nn.functional.channel_shuffle(l.randn(2, 5, 3), 2),
    lambda l: l.nn.functional.channel_shuffle(l.randn(2, 6, 3), 0),
    lambda l: l.nn.functional.channel_shuffle(l.randn(2, 6), 2),
    lambda l: l.nn.functional.local_response_norm(l.randn(2, 3), 2),
    lambda l: l.nn.Unflatten(1, (2, 3))(l.randn(4, 5)),
    lambda l: l.nn.Unflatten(1, 6),
    lambda l: l.nn.Unflatten(1, (2, 3.0)),
    lambda l: l.nn.Softmax2d()(l.randn(4, 5)),
    lambda l: l.nn.RMSNorm(4)(l.randn(3, 5)),
])
def test_layer_errors_match_torch(fn):
    errors_match(torch, lambda l: fn(l))


def test_error_messages():
    for fn in (lambda l: l.nn.functional.bilinear(l.randn(2, 3), l.randn(3, 4), l.randn(5, 3, 4)),
               lambda l: l.nn.functional.channel_shuffle(l.randn(2, 5, 3), 2),
               lambda l: l.nn.Unflatten(1, (2, 3.0)),
               lambda l: l.nn.Softmax2d()(l.randn(4, 5))):
        msgs = []
        for lib in (ft, torch):
            with pytest.raises(Exception) as e:
                fn(lib)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((2, 6, 3, 4), 3), ((1, 8, 2, 2, 2), 4)])
def test_channel_shuffle(shape, groups):
    module_parity("ChannelShuffle", (groups,), {}, [rnd(*shape)])
    parity(torch, lambda l, x: l.nn.functional.channel_shuffle(x, groups), rnd(*shape), grad=(0,))
    parity(torch, lambda l, x: l.nn.functional.native_channel_shuffle(x, groups), rnd(*shape))


def test_unflatten_and_softmax2d():
    module_parity("Unflatten", (1, (2, 3)), {}, [rnd(4, 6, 2)])
    module_parity("Unflatten", (-1, [2, -1]), {}, [rnd(4, 6)])
    module_parity("Softmax2d", (), {}, [rnd(2, 3, 4, 5)])
    module_parity("Softmax2d", (), {}, [rnd(3, 4, 5)])


@pytest.mark.parametrize("args,kwargs,shape", [
    ((4,), {}, (3, 4)),
    (([3, 4],), {"eps": 1e-3}, (2, 3, 4)),
    ((4,), {"elementwise_affine": False}, (2, 5, 4)),
])
def test_rms_norm(args, kwargs, shape):
    module_parity("RMSNorm", args, kwargs, [rnd(*shape)], rtol=1e-4, atol=1e-5)
    tm = torch.nn.RMSNorm(*args, **kwargs)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.copy_(torch.randn(tm.weight.shape))
        fm = ft.nn.RMSNorm(*args, **kwargs)
        copy_from_torch(tm, fm)
        x = rnd(*shape, seed=4)
        assert_same(fm(ft.from_numpy(x)), tm(torch.from_numpy(x)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size,kwargs,shape", [
    (2, {}, (2, 5, 4)),
    (3, {"alpha": 0.5, "beta": 0.6, "k": 2.0}, (2, 6, 3, 3)),
    (4, {"alpha": 1.0}, (1, 3, 2, 2, 2)),
])
def test_local_response_norm(size, kwargs, shape):
    module_parity("LocalResponseNorm", (size,), kwargs, [rnd(*shape)], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_map_lrn2d(size, dtype):
    # PyTorch's legacy windows (channel 0 never leaves the sum) and its hand-written backward
    module_parity("CrossMapLRN2d", (size,), {"alpha": 0.3, "beta": 0.8, "k": 1.5}, [rnd(2, 7, 3, 3, dtype=dtype)],
                  rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-5 if dtype == "float32" else 1e-12)
    errors_match(torch, lambda l: l.nn.CrossMapLRN2d(3)(l.randn(2, 3, 4)))


def test_container_deprecated():
    import warnings

    for lib in (ft, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = lib.nn.Container(a=lib.nn.ReLU(), b=lib.nn.Linear(2, 2))
        assert any(issubclass(x.category, FutureWarning) for x in w)
        assert [n for n, _ in c.named_children()] == ["a", "b"]
        assert [n for n, _ in c.named_parameters()] == ["b.weight", "b.bias"]
    assert repr(ft.nn.Container(a=ft.nn.ReLU())) == repr(torch.nn.Container(a=torch.nn.ReLU()))


def test_top_level_aliases_match_torch():
    a, b = rnd(4, 5), rnd(4, 5, seed=1)
    parity(torch, lambda l, x, y: l.cosine_similarity(x, y, 0), a, b, grad=(0, 1), rtol=1e-5, atol=1e-6)
    parity(torch, lambda l, x, y: l.pairwise_distance(x, y, 3.0), a, b, grad=(0, 1), rtol=1e-5, atol=1e-6)
    parity(torch, lambda l, x: l.pdist(x), a, grad=(0,), rtol=1e-5, atol=1e-6)
    parity(torch, lambda l, x, y, w: l.bilinear(x, y, w), a, b, rnd(3, 5, 5, seed=2), grad=(0, 1, 2),
           rtol=1e-4, atol=1e-5)
    parity(torch, lambda l, x: l.channel_shuffle(x, 2), rnd(2, 4, 3), grad=(0,))
    parity(torch, lambda l, x: l.native_channel_shuffle(x, 2), rnd(2, 4, 3))
