"""Custom ``autograd.Function`` parity with PyTorch: both styles (ctx in
forward, setup_context), saved tensors (version checks, release), mark_dirty,
mark_non_differentiable, set_materialize_grads, once_differentiable,
non-tensor inputs/outputs, several outputs, needs_input_grad, double backward,
and the errors for malformed backward results."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def make(L):
    """The same Function classes built on either library."""

    class Exp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    class Cube(L.autograd.Function):
        # setup_context style; backward is differentiable (double backward works).
        @staticmethod
        def forward(x, k):
            return x * x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.k, None

    class Dirty(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Multi(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, flag):
            ctx.k = k
            ctx.flag = flag
            s = x.sum()
            ctx.mark_non_differentiable(s)
            return x * k, s, (x > 0).long(), "tag"

        @staticmethod
        def backward(ctx, g, gs, gi, gt):
            ctx.seen = (g is None, gs is None, gi is None, gt is None,
                        None if gs is None else gs.tolist(), None if gi is None else gi.dtype)
            return g * ctx.k, None, None

    class NoMat(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            total = None
            for g, k in ((g1, 2), (g2, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    class Needs(L.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.nig = ctx.needs_input_grad
            return a * b * c

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    class Once(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @L.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return dict(Exp=Exp, Cube=Cube, Dirty=Dirty, Multi=Multi, NoMat=NoMat, Needs=Needs, Once=Once)


F = {"ft": make(ft), "torch": make(torch)}


def pair(*shape, seed=0, requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (ft.tensor(a, dtype=ft.float64, requires_grad=requires_grad),
            torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad))


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_save_output_gradient_and_node_name():
    xf, xt = pair(4)
    yf, yt = F["ft"]["Exp"].apply(xf), F["torch"]["Exp"].apply(xt)
    assert type(yf.grad_fn).__name__ == type(yt.grad_fn).__name__ == "ExpBackward"
    assert type(yf.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    (yf * 2).sum().backward()
    (yt * 2).sum().backward()
    close(xf.grad, xt.grad)


def test_setup_context_double_and_triple_backward():
    xf, xt = pair(3, seed=1)
    res = []
    for L, x in (("ft", xf), ("torch", xt)):
        lib = ft if L == "ft" else torch
        y = F[L]["Cube"].apply(x, 2.0).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3))
    for a, b in zip(*res):
        close(a, b)


def test_gradcheck_and_gradgradcheck_custom_function():
    x = ft.randn(3, dtype=ft.float64, requires_grad=True)
    f = lambda t: F["ft"]["Cube"].apply(t, 1.5)  # noqa: E731
    assert ft.autograd.gradcheck(f, (x,))
    assert ft.autograd.gradgradcheck(f, (x,))


def test_mark_dirty_plain_and_view():
    af, at = pair(4, seed=2)
    for key in ("plain", "view"):
        outs = []
        for L, a in (("ft", af), ("torch", at)):
            b = a * 1
            if key == "plain":
                r = F[L]["Dirty"].apply(b)
                assert r is b
                names = (type(b.grad_fn).__name__,)
            else:
                v = b[1:]
                r = F[L]["Dirty"].apply(v)
                assert r is v
                names = (type(b.grad_fn).__name__, type(v.grad_fn).__name__)
            outs.append((names, b))
        assert outs[0][0] == outs[1][0]
        close(outs[0][1], outs[1][1])
        for _, b in outs:
            (b * b).sum().backward()
        close(af.grad, at.grad)


def test_mark_dirty_leaf_error():
    msgs = []
    for L in ("ft", "torch"):
        lib = ft if L == "ft" else torch
        with pytest.raises(RuntimeError) as e:
            F[L]["Dirty"].apply(lib.ones(2, requires_grad=True))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_non_differentiable_and_non_tensor_outputs():
    xf, xt = pair(3, seed=3)
    seen = []
    for L, x in (("ft", xf), ("torch", xt)):
        out = F[L]["Multi"].apply(x, 3.0, True)
        y, s, i, tag = out
        assert tag == "tag"
        assert y.requires_grad and not s.requires_grad and not i.requires_grad
        seen.append([None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions])
        y.sum().backward()
    assert seen[0] == seen[1]
    close(xf.grad, xt.grad)


def test_materialize_grads_false_passes_none():
    res = []
    for L, lib in (("ft", ft), ("torch", torch)):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        a, b = F[L]["NoMat"].apply(x)
        a.sum().backward()
        res.append(x.grad.tolist())
    assert res[0] == res[1]


def test_needs_input_grad():
    res = []
    for L, lib in (("ft", ft), ("torch", torch)):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2)
        out = F[L]["Needs"].apply(a, b, 2.0)
        out.sum().backward()
        res.append((a.grad.tolist(), b.grad))
        with lib.no_grad():
            F[L]["Needs"].apply(a, b, 2.0)
    assert res[0] == res[1]


def test_saved_tensor_modified_inplace_message_matches_torch():
    msgs = []
    for L, lib in (("ft", ft), ("torch", torch)):
        x = lib.ones(3, requires_grad=True)
        h = x * 1
        y = F[L]["Cube"].apply(h, 1.0)
        h.add_(1)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_saved_tensors_after_release():
    class Keep(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            Keep.ctx = ctx
            return x * 2

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            return g * 2

    x = ft.ones(2, requires_grad=True)
    y = Keep.apply(x)
    assert Keep.ctx.saved_tensors[0] is not None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        Keep.ctx.saved_tensors
    y2 = Keep.apply(x)
    y2.sum().backward(retain_graph=True)
    assert Keep.ctx.saved_tensors[0].tolist() == [1.0, 1.0]


def test_once_differentiable():
    res = []
    for L, lib in (("ft", ft), ("torch", torch)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(F[L]["Once"].apply(x).sum(), x, create_graph=True)
        res.append((g.tolist(), g.requires_grad))
        # With a grad_output that requires grad, differentiating again raises.
        go = lib.ones(2, requires_grad=True)
        (g2,) = lib.autograd.grad(F[L]["Once"].apply(x), x, go, create_graph=True)
        assert g2.requires_grad
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with @once_differentiable"):
            g2.sum().backward()
    assert res[0] == res[1]


def test_backward_result_errors_match_torch():
    def make_bad(L, kind):
        class Bad(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if kind == "count":
                    return (g,)
                if kind == "shape":
                    return g[:1], None
                return g, g

        return Bad

    for kind in ("count", "shape", "nontensor"):
        msgs = []
        for L in (ft, torch):
            x = L.ones(2, requires_grad=True)
            with pytest.raises(RuntimeError) as e:
                make_bad(L, kind).apply(x, 3).sum().backward()
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1], kind


def test_broadcastable_gradient_is_summed():
    class Wide(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.expand(2, 3)

    x = ft.ones(3, requires_grad=True)
    Wide.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_input_returned_unchanged_keeps_its_history():
    class Ident(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = ft.ones(2, requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_no_record_when_no_input_requires_grad():
    y = F["ft"]["Exp"].apply(ft.ones(2))
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("L", [ft, torch], ids=["ft", "torch"])
def test_grad_fn_exposes_ctx(L):
    class Scale(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = L.ones(2, requires_grad=True)
    y = Scale.apply(x, 4.0)
    assert y.grad_fn.k == 4.0
    assert y.grad_fn.saved_tensors[0].tolist() == [1.0, 1.0]
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
