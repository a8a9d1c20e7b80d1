"""Hooks and modes, against PyTorch: tensor hooks (leaf / non-leaf, replacing
the gradient), post-accumulate hooks, node hooks and prehooks, metadata,
saved_tensors_hooks (built-in ops and custom Functions), anomaly mode, and
grad modes as context managers / decorators, thread-local."""

import threading
import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

LIBS = [ft, torch]


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_tensor_hooks_leaf_and_non_leaf(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    hx = x.register_hook(lambda g: seen.append(("x", g.tolist())) or g * 10)
    h = x * 2
    h.register_hook(lambda g: seen.append(("h", g.tolist())))
    h.register_hook(lambda g: g + 1)
    (h * h).sum().backward()
    assert seen == [("h", [4.0, 8.0, 12.0]), ("x", [10.0, 18.0, 26.0])]
    assert x.grad.tolist() == [100.0, 180.0, 260.0]
    hx.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        L.ones(2).register_hook(lambda g: g)


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_post_accumulate_grad_hook(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [(True, [3.0, 3.0]), (True, [6.0, 6.0])]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_node_hooks_prehooks_and_metadata(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.sum()
    seen = []

    def pre(grad_outputs):
        seen.append(("pre", [g.tolist() for g in grad_outputs]))
        return (grad_outputs[0] * 3,)

    def post(grad_inputs, grad_outputs):
        seen.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                     [g.tolist() for g in grad_outputs]))

    y.grad_fn.register_prehook(pre)
    handle = y.grad_fn.register_hook(post)
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata == {"tag": 7}
    z.backward(retain_graph=True)
    assert seen == [("pre", [[1.0, 1.0]]), ("post", [[6.0, 6.0], None], [[3.0, 3.0]])]
    assert x.grad.tolist() == [6.0, 6.0]
    handle.remove()
    seen.clear()
    z.backward()
    assert [s[0] for s in seen] == ["pre"]


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_saved_tensors_hooks_transform(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = L.tensor([4.0, 5.0, 6.0], requires_grad=True)
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()

    def unpack(a):
        unpacked.append(a.shape)
        return L.tensor(a)

    with L.autograd.graph.saved_tensors_hooks(pack, unpack):
        z = (x * y).sum()
    assert len(packed) >= 2
    z.backward()
    assert len(unpacked) >= 2
    assert x.grad.tolist() == [4.0, 5.0, 6.0] and y.grad.tolist() == [1.0, 2.0, 3.0]


def _packed_shapes(L, f):
    packed = []
    with L.autograd.graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t, lambda t: t):
        out = f(L)
    out.sum().backward()
    return sorted(packed)


@pytest.mark.parametrize("name", ["sum", "mm", "custom"])
def test_saved_tensors_hooks_see_what_torch_saves(name):
    def custom(L):
        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                r = a * a
                ctx.save_for_backward(a, r)
                return r

            @staticmethod
            def backward(ctx, g):
                a, r = ctx.saved_tensors
                return 2 * a * g

        return Sq.apply(L.ones(3, requires_grad=True))

    progs = {
        "sum": lambda L: L.ones(2, 3, requires_grad=True).sum(),
        "mm": lambda L: L.ones(2, 3, requires_grad=True) @ L.ones(3, 4, requires_grad=True),
        "custom": custom,
    }
    assert _packed_shapes(ft, progs[name]) == _packed_shapes(torch, progs[name])


def test_saved_tensors_hooks_not_called_without_recording():
    packed = []
    x = ft.ones(2)
    with ft.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        (x * x).exp()
        with ft.no_grad():
            (ft.ones(2, requires_grad=True) * 2).exp()
    assert packed == []


def test_saved_tensors_hooks_nesting_and_thread_locality():
    outer, inner, other = [], [], []
    x = ft.ones(2, requires_grad=True)

    def worker():
        (x.view(1, 2) @ ft.ones(2, 1)).sum()

    with ft.autograd.graph.saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with ft.autograd.graph.saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t):
            x.view(1, 2) @ ft.ones(2, 1)
            th = threading.Thread(target=worker)
            th.start()
            th.join()
    assert inner and not outer


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_disable_saved_tensors_hooks(L):
    with L.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


# ---------------------------------------------------------------- anomaly mode


def _nan_program(L):
    x = L.tensor([0.0, 1.0], requires_grad=True)
    z = (x * 0).sqrt()
    z.sum().backward()


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_detect_anomaly_names_node_and_forward(L):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=r"Function 'MulBackward0' returned nan values in its 0th output."):
                _nan_program(L)
    texts = [str(x.message) for x in w]
    assert any(t.startswith("Anomaly Detection has been enabled") for t in texts)
    err = [t for t in texts if t.startswith("Error detected in MulBackward0")]
    assert err and "z = (x * 0).sqrt()" in err[0]
    assert not L.is_anomaly_enabled()
    # Without anomaly mode the NaN gradient passes silently.
    _nan_program(L)


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_set_detect_anomaly(L):
    L.autograd.set_detect_anomaly(True)
    try:
        assert L.is_anomaly_enabled() and L.is_anomaly_check_nan_enabled()
    finally:
        L.autograd.set_detect_anomaly(False)
    assert not L.is_anomaly_enabled()
    with L.autograd.set_detect_anomaly(True, check_nan=False):
        assert L.is_anomaly_enabled() and not L.is_anomaly_check_nan_enabled()
        _nan_program(L)
    assert not L.is_anomaly_enabled()


# ---------------------------------------------------------------- grad modes


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_grad_modes_as_context_managers_and_decorators(L):
    x = L.ones(2, requires_grad=True)

    @L.no_grad()
    def f1():
        return x * 2

    @L.no_grad
    def f2():
        return x * 2

    @L.enable_grad()
    def f3():
        return x * 2

    @L.set_grad_enabled(False)
    def f4():
        return x * 2

    @L.inference_mode()
    def f5():
        return x * 2

    assert L.is_grad_enabled()
    assert not f1().requires_grad and not f2().requires_grad and not f4().requires_grad and not f5().requires_grad
    assert L.is_grad_enabled()
    with L.no_grad():
        assert f3().requires_grad
        assert not (x * 2).requires_grad
        with L.enable_grad():
            assert (x * 2).requires_grad
    with L.set_grad_enabled(False):
        assert not L.is_grad_enabled()
    assert L.is_grad_enabled()
    L.set_grad_enabled(False)
    assert not L.is_grad_enabled()
    L.set_grad_enabled(True)
    with L.inference_mode(False):
        assert (x * 2).requires_grad
    with L.inference_mode():
        assert not L.is_grad_enabled()


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_grad_mode_decorated_generator(L):
    x = L.ones(2, requires_grad=True)

    @L.no_grad()
    def gen():
        for _ in range(2):
            yield (x * 2).requires_grad, L.is_grad_enabled()

    got = []
    for item in gen():
        got.append((item, L.is_grad_enabled()))
    assert got == [((False, False), True), ((False, False), True)]


@pytest.mark.parametrize("L", LIBS, ids=["ft", "torch"])
def test_grad_mode_is_thread_local(L):
    seen = {}
    started, release = threading.Event(), threading.Event()

    def worker():
        seen["enabled"] = L.is_grad_enabled()
        seen["records"] = (L.ones(2, requires_grad=True) * 2).requires_grad
        started.set()
        release.wait(5)

    with L.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        started.wait(5)
        assert not L.is_grad_enabled()
        release.set()
        th.join()
    assert seen == {"enabled": True, "records": True}
