"""Fuzz classes of issue 15 (campaigns of sessions 7 and 8), each checked against PyTorch or
closed-form facts: logit on float16/bfloat16 computes in the input's own type (the clamp
bounds, ``1 - x`` and the quotient each rounded); a large ``zeros`` comes from fresh,
already-zero pages while a reused cached block is still zeroed; add/sub with ``alpha`` is one
fused multiply-add (float32/float64), as is a multi-dim ``index_add`` with ``alpha``; atanh is
accurate near +-1; prelu's backward selects rather than multiplying by a mask."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

_EPS = [None, -1.0, 0.0, 7.36579968361184e-05, 1e-3, 0.3, 0.5, 0.7]


def _inputs():
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.random(1000) * 1.2 - 0.1, [0.0, 1.0, 0.5, 1e-4, 0.9999, -0.0]])
    return xs.astype(np.float32)


def _same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("eps", _EPS)
def test_logit_half_types_round_like_pytorch(dtype, eps):
    xs = _inputs()
    ref = torch.tensor(xs).to(getattr(torch, dtype)).logit(eps).float().numpy()
    ours = ft.tensor(xs).to(getattr(ft, dtype)).logit(eps).float().numpy()
    assert _same(ours, ref)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_logit_inplace_with_tensor_eps(dtype):
    # The fuzz reproducer: 1 - eps rounds to 1 in float16, so 1.0 is not clamped: inf.
    ref = torch.tensor([1.0, 0.0], dtype=getattr(torch, dtype))
    ref.logit_(torch.tensor(7.36579968361184e-05))
    ours = ft.tensor([1.0, 0.0], dtype=getattr(ft, dtype))
    ours.logit_(ft.tensor(7.36579968361184e-05))
    assert _same(ours.float().numpy(), ref.float().numpy())
    if dtype == "float16":
        assert math.isinf(ours[0].item())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("eps", [None, 0.0, 1e-3, 0.3])
def test_logit_half_types_gradient(dtype, eps):
    xs = _inputs()
    g = np.random.default_rng(1).standard_normal(xs.size).astype(np.float32)
    grads = []
    for lib in (torch, ft):
        x = lib.tensor(xs).to(getattr(lib, dtype)).requires_grad_()
        x.logit(eps).backward(lib.tensor(g).to(getattr(lib, dtype)))
        grads.append(x.grad.float().numpy())
    assert _same(grads[1], grads[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logit_full_precision_unchanged(dtype):
    xs = _inputs().astype(np.float64)
    for eps in _EPS:
        ref = torch.tensor(xs, dtype=getattr(torch, dtype)).logit(eps).numpy()
        ours = ft.tensor(xs, dtype=getattr(ft, dtype)).logit(eps).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-6 if dtype == "float32" else 1e-14, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_large_zeros_read_zero_fresh_and_reused(dtype):
    n = (48 << 20) // 8  # 48 MiB of int64: a mapped segment of its own
    d = getattr(ft, dtype)
    x = ft.zeros(n, dtype=d)
    assert x.dtype == d and x.shape == (n,)
    assert not x.any().item()
    x.fill_(1)  # dirty the block, then give it back to the cache
    del x
    y = ft.zeros(n, dtype=d)  # the same cached block, zeroed again
    assert not y.any().item()
    z = ft.zeros((2, n // 2), dtype=d)
    assert not z.any().item() and z.shape == (2, n // 2)


def test_zeros_2_pow_31_elements_is_cheap_and_zero():
    # The fuzz "hang": 2**31 - 2 float32 zeros (8 GiB). Fresh pages are zero without being
    # written, so this neither takes seconds nor commits 8 GiB; only touched pages are read.
    x = ft.zeros(2**31 - 2)
    assert x.shape == (2**31 - 2,)
    for i in (0, 123_456_789, 2**31 - 3):
        assert x[i].item() == 0.0
    assert x[-4:].tolist() == [0.0, 0.0, 0.0, 0.0]


# ----- session 8 campaign ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 16, 33])
def test_add_sub_alpha_is_one_fused_multiply_add(dtype, n):
    big = 3e38 if dtype == "float32" else 1e308
    rng = np.random.default_rng(n)
    a = np.concatenate([[-math.inf, 4.0], rng.standard_normal(n)])
    b = np.concatenate([[big, big], rng.standard_normal(n)])
    for alpha in (3.506, -0.1, 1e-3):
        for op in ("add", "sub"):
            ref = getattr(torch, op)(torch.tensor(a, dtype=getattr(torch, dtype)),
                                     torch.tensor(b, dtype=getattr(torch, dtype)), alpha=alpha)
            ours = getattr(ft, op)(ft.tensor(a, dtype=getattr(ft, dtype)),
                                   ft.tensor(b, dtype=getattr(ft, dtype)), alpha=alpha)
            assert _same(ours.numpy(), ref.numpy()), (op, alpha)
    # -inf + 3.5 * 3e38 is -inf (the product does not overflow inside the fma), not NaN.
    assert ft.tensor([-math.inf]).add(ft.tensor([3e38]), alpha=3.506).item() == -math.inf


def test_add_alpha_gradients_unchanged():
    a = ft.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = ft.tensor([0.5, 0.25, -1.0], requires_grad=True)
    y = ft.sub(a, b, alpha=2.5)
    assert type(y.grad_fn).__name__ == "SubBackward0"
    y.backward(ft.tensor([1.0, 2.0, 3.0]))
    assert a.grad.tolist() == [1.0, 2.0, 3.0]
    assert b.grad.tolist() == [-2.5, -5.0, -7.5]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["1d", "rows", "cols", "fuzz"])
def test_index_add_alpha_matches_pytorch(dtype, case):
    big = 3e38 if dtype == "float32" else 1e308
    if case == "1d":
        x, dim, idx, src = [-math.inf, 2.0], 0, [0, 1], [big, 1.0]
    elif case == "rows":
        x, dim, idx, src = [[-math.inf, 2.0], [1.0, 1.0]], 0, [0, 0], [[big, 1.0], [0.5, big]]
    elif case == "cols":
        x, dim, idx, src = [[-math.inf, 2.0, 1.0]], 1, [0, 2], [[big, 0.3]]
    else:
        x = [[2.0, -1.0, 2.0, 3.0, -4.0], [2.0, 1.0, -2.0, -3.0, 4.0], [2.0, -2.0, 0.0, -1.0, -4.0]]
        dim, idx = -2, [1, 1, 1]
        src = [[-0.4586, 0.5, 20.0, -0.4496, 1e-30], [math.inf, 0.5, 0.2027, 1.0986, -math.inf],
               [0.0, -1.0, 0.9419, 0.7074, big]]
    res = []
    for lib in (torch, ft):
        d = getattr(lib, dtype)
        t = lib.tensor(x, dtype=d)
        r = t.index_add(dim, lib.tensor(idx), lib.tensor(src, dtype=d), alpha=3.506)
        t.index_add_(dim, lib.tensor(idx), lib.tensor(src, dtype=d), alpha=3.506)
        res.append((r.numpy(), t.numpy()))
    assert _same(res[1][0], res[0][0]) and _same(res[1][1], res[0][1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atanh_accurate_near_one(dtype):
    # Reference: math.atanh in float64 (correctly rounded to well below float32's ulp).
    xs = [-0.9999945759773254, 0.9999945759773254, -0.999999, 0.75, -0.5, 0.49, 1e-8, -0.0, 1.0, -1.0, 1.5]
    ours = ft.atanh(ft.tensor(xs, dtype=getattr(ft, dtype))).double().numpy()
    x_in = ft.tensor(xs, dtype=getattr(ft, dtype)).double().numpy()
    ref = np.array([math.atanh(v) if abs(v) < 1 else (math.copysign(math.inf, v) if abs(v) == 1 else math.nan)
                    for v in x_in])
    if dtype == "float32":
        np.testing.assert_array_equal(ours, ref.astype(np.float32).astype(np.float64))
    else:
        np.testing.assert_allclose(ours, ref, rtol=4e-16, atol=0)
    assert math.copysign(1.0, ours[7]) == -1.0  # atanh(-0.0) is -0.0
    t = torch.atanh(torch.tensor(xs, dtype=getattr(torch, dtype))).double().numpy()
    np.testing.assert_allclose(ours, t, rtol=2e-7 if dtype == "float32" else 1e-15, atol=0)


def test_prelu_infinite_weight_gradient_and_node():
    x = [[1.0, 0.0, 3.0, 3.0, -3.0]]
    w = [-math.inf, 1.0, math.inf, -1.3531593084335327, 0.6039239764213562]
    g = [[0.5, -1.0, 2.0, 0.3, 0.7]]
    out = []
    for lib in (torch, ft):
        a = lib.tensor(x, requires_grad=True)
        b = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.prelu(a, b)
        y.backward(lib.tensor(g))
        out.append((y.grad_fn.name(), y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    assert out[1][0] == out[0][0] == "PreluKernelBackward0"
    for o, r in zip(out[1][1:], out[0][1:]):
        assert _same(o, r)


@pytest.mark.parametrize("shape,wn", [((2, 3, 4), 3), ((5,), 1), ((2, 3), 1), ((), 1), ((2, 4, 3, 3), 4)])
def test_prelu_matches_pytorch_and_finite_differences(shape, wn):
    rng = np.random.default_rng(len(shape))
    xv = rng.standard_normal(shape)
    wv = rng.standard_normal(wn)
    gv = rng.standard_normal(shape)
    res = []
    for lib in (torch, ft):
        a = lib.tensor(xv, requires_grad=True)
        b = lib.tensor(wv, requires_grad=True)
        y = lib.nn.functional.prelu(a, b)
        y.backward(lib.tensor(gv))
        res.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for o, r in zip(res[1], res[0]):
        np.testing.assert_allclose(o, r, rtol=1e-13, atol=1e-15)
    a = ft.tensor(xv, requires_grad=True)
    b = ft.tensor(wv, requires_grad=True)
    assert ft.autograd.gradcheck(lambda p, q: ft.nn.functional.prelu(p, q), (a, b))


_MATMUL_CASES = [((2, 3, 4), (4, 5), (False, True)), ((2, 3, 4), (4, 5), (False, False)),
                 ((2, 3, 4), (4, 5), (True, False)), ((4, 2), (3, 3, 2, 3), (True, False)),
                 ((3, 4), (2, 4, 5), (False, False)), ((3, 4), (2, 4, 5), (False, True)),
                 ((2, 3, 4), (4,), (False, True)), ((4,), (2, 4, 3), (True, False)),
                 ((2, 3, 4), (1, 4, 5), (True, True)), ((3,), (2, 2, 3, 4), (False, False)),
                 ((2, 2, 3, 4), (4,), (True, True)), ((2, 0, 4), (4, 5), (False, True))]


@pytest.mark.parametrize("sa,sb,grads", _MATMUL_CASES)
def test_matmul_folds_like_pytorch(sa, sb, grads):
    # PyTorch's should_fold: the batch of the larger operand folds into one mm/mv, which shows in
    # the node (UnsafeViewBackward0, CloneBackward0 after a transposed fold), the strides, and the
    # smaller operand's gradient (one product over the whole batch).
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    av, bv = rng.standard_normal(sa), rng.standard_normal(sb)
    res = []
    for lib in (torch, ft):
        a = lib.tensor(av, requires_grad=grads[0])
        b = lib.tensor(bv, requires_grad=grads[1])
        y = lib.matmul(a, b)
        node = y.grad_fn.name() if y.grad_fn is not None else None
        if y.requires_grad:
            y.backward(lib.ones_like(y))
        res.append((tuple(y.shape), tuple(y.stride()), node, y.detach().numpy(),
                    None if a.grad is None else a.grad.numpy(), None if b.grad is None else b.grad.numpy()))
    assert res[1][:3] == res[0][:3]
    for o, r in zip(res[1][3:], res[0][3:]):
        assert (o is None) == (r is None)
        if o is not None:
            np.testing.assert_allclose(o, r, rtol=1e-12, atol=1e-12)


def test_matmul_fold_errors_name_the_folded_shapes():
    for sa, sb in (((2, 3, 4), (5, 6)), ((5, 6), (2, 4, 3))):
        msgs = []
        for lib in (torch, ft):
            a = lib.ones(sa, requires_grad=True)
            with pytest.raises(RuntimeError) as e:
                lib.matmul(a, lib.ones(sb))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_pointwise_losses_broadcast_before_promoting(name, reduction):
    # A 0-d float32 target broadcast against a bfloat16 input is a dimensioned float32 tensor:
    # l1/mse/smooth_l1 then compute in float32, as PyTorch's broadcast_tensors-first wrappers do.
    import warnings
    res = []
    for lib in (torch, ft):
        a = lib.tensor([-2.0, 0.5], dtype=lib.bfloat16)
        b = lib.tensor(-1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(lib.nn.functional, name)(a, b, reduction=reduction)
        res.append((str(y.dtype).split(".")[-1], y.float().tolist()))
    assert res[1] == res[0]
