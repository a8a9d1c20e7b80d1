"""Fuzz classes of issue 15 (campaign of session 7), each checked against PyTorch or
closed-form facts: logit on float16/bfloat16 computes in the input's own type (the clamp
bounds, ``1 - x`` and the quotient each rounded), and a large ``zeros`` comes from fresh,
already-zero pages while a reused cached block is still zeroed."""

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
