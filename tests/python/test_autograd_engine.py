"""Autograd engine parity with PyTorch: grad_fn names and next_functions
structure, gradients of small programs, in-place ops on views (CopySlices),
autograd.grad/backward options, and error types and messages for misuse."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def structure(fn, depth=6):
    """Nested (name, children) of a grad_fn graph, for comparing with torch."""
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return (type(fn).__name__, tuple((structure(n, depth - 1), i) for n, i in fn.next_functions))


def both(fn_ft, fn_th):
    return fn_ft(ft), fn_th(torch)


def pair(*shape, seed=0, requires_grad=True, dtype="float64"):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return (ft.tensor(a, dtype=getattr(ft, dtype), requires_grad=requires_grad),
            torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def close(a, b, tol=1e-6):
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------- structure


PROGRAMS = {
    "mul_sum_add": lambda L, x, y: (x * y).sum() + 1,
    "mlp": lambda L, x, y: (((x.reshape(2, 3) @ y.reshape(3, 2)).relu() - 1) * y[:4].reshape(2, 2)).mean(),
    "views": lambda L, x, y: (x.view(3, 2).t() * y.reshape(2, 3)).sum(),
    "clone_to": lambda L, x, y: (x.clone().to(L.float32) * 2).sum() + y.sum(),
    "unary_chain": lambda L, x, y: (x.exp().log().tanh().sigmoid() / y.abs().sqrt()).sum(),
    "broadcast": lambda L, x, y: (x.reshape(6, 1) + y.reshape(1, 6)).mean(),
    "select_slice": lambda L, x, y: x[1] * y[2:4].sum() + x[::2].sum(),
    "scalar_first": lambda L, x, y: (2 * x - 3 + 1 + y.abs() * 4).sum(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_structure_and_gradients_match_torch(name):
    f = PROGRAMS[name]
    xf, xt = pair(6, seed=1)
    yf, yt = pair(6, seed=2)
    of, ot = f(ft, xf, yf), f(torch, xt, yt)
    assert structure(of.grad_fn) == structure(ot.grad_fn)
    close(of, ot)
    of.backward()
    ot.backward()
    close(xf.grad, xt.grad)
    close(yf.grad, yt.grad)


def test_accumulate_grad_variable_is_the_leaf():
    x = ft.ones(2, requires_grad=True)
    y = x * 2
    acc, nr = y.grad_fn.next_functions[0]
    assert type(acc).__name__ == "AccumulateGrad" and nr == 0
    assert acc.variable is x
    assert (x * 3).grad_fn.next_functions[0][0] is acc


def test_grads_accumulate_across_calls_and_zero():
    xf, xt = pair(3)
    for lib, x in ((ft, xf), (torch, xt)):
        (x * x).sum().backward()
        (x * 3).sum().backward()
    close(xf.grad, xt.grad)
    xf.grad = None
    assert xf.grad is None


def test_diamond_and_reuse():
    xf, xt = pair(4)
    f = lambda x: ((x * x) + x.exp() * x).sum() * x.sum()  # noqa: E731
    f(xf).backward()
    f(xt).backward()
    close(xf.grad, xt.grad)


def test_int_outputs_do_not_require_grad():
    x = ft.randn(3, requires_grad=True)
    assert not (x > 0).requires_grad
    assert (x > 0).grad_fn is None


# ---------------------------------------------------------------- in-place / views


def inplace_programs(L, w, y):
    out = {}
    x = w.clone()
    x[0] = 5.0
    out["setitem_scalar"] = (x * w).sum()
    x = w.clone()
    x[1:3] = y[:2]
    out["setitem_tensor"] = (x * w).sum()
    x = w.clone()
    v = x[1:]
    v.mul_(2)
    out["mul_on_view"] = (x * L.arange(4, dtype=w.dtype)).sum() + v.sum()
    z = L.zeros(4, dtype=w.dtype)
    z[0:2] = y[1:3]
    out["setitem_into_plain"] = (z * z).sum()
    x = w.clone()
    x.copy_(y.sum())
    out["copy_broadcast"] = (x * w).sum()
    x = w.clone()
    v1, v2 = x[0:2], x[1:]
    v2.add_(y[:3])
    out["sibling_views"] = (v1 * 3).sum() + x.sum()
    x = w.clone()
    x.relu_() if hasattr(x, "relu_") else None
    x = (w * 1).t() if w.dim() == 2 else w * 1
    x[1].mul_(y[0])
    out["view_of_nonleaf_by_tensor"] = (x * x).sum()
    return out


@pytest.mark.parametrize("key", ["setitem_scalar", "setitem_tensor", "mul_on_view", "setitem_into_plain",
                                 "copy_broadcast", "sibling_views", "view_of_nonleaf_by_tensor"])
def test_inplace_on_views_match_torch(key):
    wf, wt = pair(4, seed=3)
    yf, yt = pair(4, seed=4)
    of, ot = inplace_programs(ft, wf, yf)[key], inplace_programs(torch, wt, yt)[key]
    assert structure(of.grad_fn) == structure(ot.grad_fn)
    close(of, ot)
    of.backward()
    ot.backward()
    close(wf.grad, wt.grad)
    if yt.grad is None:
        assert yf.grad is None
    else:
        close(yf.grad, yt.grad)


def test_view_grad_fn_after_inplace_is_as_strided():
    w = ft.randn(3, requires_grad=True)
    x = w.clone()
    v = x[1:]
    v.mul_(2)
    assert type(x.grad_fn).__name__ == "CopySlices"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is x.grad_fn
    v1 = x[0:2]
    x.add_(1)
    assert type(v1.grad_fn).__name__ == "AsStridedBackward0"


def test_inplace_on_view_of_unrelated_grad_source_2d():
    wf, wt = pair(3, 4, seed=5)
    yf, yt = pair(4, seed=6)
    for L, w, y in ((ft, wf, yf), (torch, wt, yt)):
        x = w * 1
        x[:, 1] = y[:3]
        x[2].mul_(y)
        x.t()[0].add_(1)
        (x * x).sum().backward()
    close(wf.grad, wt.grad)
    close(yf.grad, yt.grad)


def test_inplace_double_backward_through_copyslices():
    wf, wt = pair(3, seed=7)
    res = []
    for L, w in ((ft, wf), (torch, wt)):
        x = w * 1
        x[1:].mul_(w[:2])
        (g,) = L.autograd.grad((x * x).sum(), w, create_graph=True)
        (h,) = L.autograd.grad(g.sum(), w)
        res.append((g, h))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])


def test_inplace_errors_match_torch():
    def msgs(L):
        out = []
        w = L.randn(3, requires_grad=True)
        for f in (lambda: w.mul_(2), lambda: w[0].mul_(2), lambda: w.add_(1)):
            with pytest.raises(RuntimeError) as e:
                f()
            out.append(str(e.value))
        x = w.clone()
        with L.no_grad():
            v = x[0:1]
        with pytest.raises(RuntimeError) as e:
            v.mul_(2)
        out.append(str(e.value))
        return out

    assert msgs(ft) == msgs(torch)


def test_modified_saved_tensor_message_matches_torch():
    def run(L, case):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        if case == 0:
            b = a.exp()
            c = b.sum() * b
            b.add_(1)
            c.sum().backward()
        elif case == 1:
            x = L.tensor([1.0, 2.0, 3.0])
            y = a * x
            x.add_(1)
            y.sum().backward()
        else:
            b = a * 2
            y = b * b
            b.add_(1)
            y.sum().backward()

    for case in range(3):
        errs = []
        for L in (ft, torch):
            with pytest.raises(RuntimeError) as e:
                run(L, case)
            errs.append(str(e.value))
        assert errs[0] == errs[1]


def test_leaf_inplace_under_no_grad_is_allowed():
    w = ft.ones(3, requires_grad=True)
    with ft.no_grad():
        w.mul_(2)
    assert w.is_leaf and w._version == 1


# ---------------------------------------------------------------- backward / grad options


def test_second_backward_error_matches_torch():
    errs = []
    for L in (ft, torch):
        x = L.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        with pytest.raises(RuntimeError) as e:
            y.backward()
        errs.append(str(e.value))
    assert errs[0] == errs[1]


def test_retain_graph_allows_second_backward():
    xf, xt = pair(3)
    for x in (xf, xt):
        y = (x * x.exp()).sum()
        y.backward(retain_graph=True)
        y.backward()
    close(xf.grad, xt.grad)


def test_non_scalar_implicit_grad_error():
    for L in (ft, torch):
        x = L.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
            (x * 2).backward()


def test_backward_with_gradient_argument():
    xf, xt = pair(3)
    for L, x in ((ft, xf), (torch, xt)):
        (x * x).backward(L.tensor([1.0, 2.0, 3.0], dtype=L.float64))
    close(xf.grad, xt.grad)


def test_backward_gradient_shape_mismatch():
    x = ft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ft.ones(2))


def test_grad_non_leaf_inputs_and_grad_outputs():
    xf, xt = pair(3)
    res = []
    for L, x in ((ft, xf), (torch, xt)):
        h = x.exp()
        y = h * x
        go = L.tensor([1.0, -1.0, 2.0], dtype=L.float64)
        res.append(L.autograd.grad(y, (h, x), grad_outputs=go))
        assert x.grad is None
    for a, b in zip(*res):
        close(a, b)


def test_grad_allow_unused():
    for L in (ft, torch):
        x = L.ones(2, requires_grad=True)
        z = L.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            L.autograd.grad((x * 2).sum(), (x, z))
        gx, gz = L.autograd.grad((x * 2).sum(), (x, z), allow_unused=True)
        assert gz is None
        gx, gz = L.autograd.grad((x * 2).sum(), (x, z), materialize_grads=True)
        assert gz.tolist() == [0.0, 0.0]


def test_grad_input_not_requiring_grad():
    for L in (ft, torch):
        x = L.ones(2, requires_grad=True)
        z = L.ones(2)
        with pytest.raises(RuntimeError, match="does not require grad"):
            L.autograd.grad((x * 2).sum(), z)


def test_pow_scalar_and_reciprocal_gradients():
    # (Structure differs from torch today: PowBackward0 records a None edge for
    # the scalar exponent and 1 / y is DivBackward0; gradients agree.)
    xf, xt = pair(4, seed=8)
    for x in (xf, xt):
        (x.pow(2) + 1 / (x.abs() + 1)).sum().backward()
    close(xf.grad, xt.grad)


def test_third_order_create_graph():
    xf, xt = pair(3)
    res = []
    for L, x in ((ft, xf), (torch, xt)):
        y = (x.pow(4) * x.sin() if hasattr(x, "sin") and hasattr(ft.Tensor, "sin") else x.pow(4) * x.exp()).sum()
        (g1,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = L.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3))
    for a, b in zip(*res):
        close(a, b)


def test_backward_inputs_restricts_accumulation():
    xf, xt = pair(3, seed=1)
    yf, yt = pair(3, seed=2)
    for x, y in ((xf, yf), (xt, yt)):
        h = x * y
        (h * h).sum().backward(inputs=[x])
    close(xf.grad, xt.grad)
    assert yf.grad is None and yt.grad is None


def test_backward_inputs_non_leaf():
    res = []
    for L in (ft, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        (h * h).sum().backward(inputs=[h])
        res.append((h.grad, x.grad))
    close(res[0][0], res[1][0])
    assert res[0][1] is None and res[1][1] is None


def test_retain_grad_and_is_leaf_edge_cases():
    for L in (ft, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        assert h.retains_grad and not x.retains_grad
        (h * h).sum().backward()
        assert h.grad.tolist() == [4.0, 8.0]
        assert x.is_leaf and not h.is_leaf
        assert L.ones(2).is_leaf
        d = h.detach()
        assert d.is_leaf and not d.requires_grad
        assert h.data.is_leaf and not h.data.requires_grad
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
            h.requires_grad_(False)
        with pytest.raises(RuntimeError, match="only Tensors of floating point"):
            L.ones(2, dtype=L.int64).requires_grad_()


def test_detach_inplace():
    for L in (ft, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.detach_()
        assert h.is_leaf and not h.requires_grad and h.grad_fn is None
        v = (x * 2)[0:1]
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            v.detach_()


def test_data_shares_storage_but_not_history():
    for L in (ft, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        d.mul_(2)
        assert x.tolist() == [2.0, 4.0]
        assert x._version == 0


# ---------------------------------------------------------------- gradcheck over ops

UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "clone"]


def _positive(t):
    return t.abs() + 0.5


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("noncontig", [False, True])
def test_gradcheck_unary(op, noncontig):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 4))
    x = ft.tensor(a, dtype=ft.float64)
    if noncontig:
        x = x.t()
    x.requires_grad_()
    f = lambda t: getattr(_positive(t) if op in ("log", "sqrt") else t, op)()  # noqa: E731
    assert ft.autograd.gradcheck(f, (x,))
    assert ft.autograd.gradgradcheck(f, (x,))


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5),
    "pow": lambda a, b: (a.abs() + 0.5) ** b,
    "pow_scalar": lambda a, b: a ** 3 + b,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_gradcheck_binary_broadcast_noncontig(op):
    rng = np.random.default_rng(12)
    a = ft.tensor(rng.standard_normal((4, 3)), dtype=ft.float64).t().requires_grad_()  # (3, 4) non-contiguous
    b = ft.tensor(rng.standard_normal((1, 4)), dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradcheck(BINARY[op], (a, b))
    assert ft.autograd.gradgradcheck(BINARY[op], (a, b))


LINALG = {
    "mm": ((3, 4), (4, 2), lambda a, b: a.mm(b)),
    "bmm": ((2, 3, 4), (2, 4, 2), lambda a, b: a.bmm(b)),
    "matmul_bcast": ((2, 3, 4), (4, 5), lambda a, b: a @ b),
    "matmul_vec": ((3, 4), (4,), lambda a, b: a @ b),
    "matmul_vec_vec": ((4,), (4,), lambda a, b: a @ b),
}


@pytest.mark.parametrize("op", sorted(LINALG))
def test_gradcheck_linalg(op):
    sa, sb, f = LINALG[op]
    rng = np.random.default_rng(13)
    a = ft.tensor(rng.standard_normal(sa), dtype=ft.float64, requires_grad=True)
    b = ft.tensor(rng.standard_normal(sb), dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradcheck(f, (a, b))
    assert ft.autograd.gradgradcheck(f, (a, b))


REDUCE_VIEW = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "mean": lambda x: x.mean(),
    "mean_dim_keep": lambda x: x.mean(0, keepdim=True),
    "view_t": lambda x: x.reshape(4, 3).t() * 2,
    "permute_expand": lambda x: x.unsqueeze(0).expand(2, 3, 4).permute(2, 0, 1),
    "select_narrow": lambda x: x.select(1, 2) + x.narrow(1, 0, 1).squeeze(1),
    "slice_step": lambda x: x[:, ::2],
    "to_float32_back": lambda x: x.to(ft.float32).to(ft.float64) * 1,
}


@pytest.mark.parametrize("op", sorted(REDUCE_VIEW))
def test_gradcheck_reductions_and_views(op):
    rng = np.random.default_rng(14)
    x = ft.tensor(rng.standard_normal((4, 3)), dtype=ft.float64).t().requires_grad_()
    f = REDUCE_VIEW[op]
    if op == "to_float32_back":
        assert ft.autograd.gradcheck(f, (x,), atol=1e-3, rtol=1e-2, eps=1e-3)
        return
    assert ft.autograd.gradcheck(f, (x,))
    assert ft.autograd.gradgradcheck(f, (x,))


def test_gradcheck_detects_wrong_gradient():
    class Bad(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = ft.randn(3, dtype=ft.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        ft.autograd.gradcheck(Bad.apply, (x,))
    assert ft.autograd.gradcheck(Bad.apply, (x,), raise_exception=False) is False


def test_gradcheck_several_outputs():
    x = ft.randn(3, dtype=ft.float64, requires_grad=True)
    y = ft.randn(3, dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradcheck(lambda a, b: (a * b, a.exp() + b, (a + b).sum()), (x, y))
