"""Regression tests for nn.functional disagreements found by the differential fuzzer (second batch)."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _grad(lib, fn, base, view, w):
    leaf = lib.tensor(base).requires_grad_()
    x = view(leaf.clone())
    out = fn(lib, x)
    (out * lib.tensor(w)).sum().backward()
    return leaf.grad.detach().numpy()


def _nan_base(shape, nan_at):
    a = np.linspace(-2.0, 2.0, int(np.prod(shape))).reshape(shape)
    a.flat[[i % a.size for i in nan_at]] = np.nan
    return a


@pytest.mark.parametrize("name,fn", [
    ("celu", lambda lib, x: lib.nn.functional.celu(x)),
    ("elu", lambda lib, x: lib.nn.functional.elu(x, 0.5)),
    ("hardtanh", lambda lib, x: lib.nn.functional.hardtanh(x)),
    ("hardswish", lambda lib, x: lib.nn.functional.hardswish(x)),
    ("logit", lambda lib, x: lib.logit(x, 0.1)),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("view", ["step", "permute", "step_inner"])
def test_nan_gradient_position_follows_inner_loop_of_strided_views(name, fn, dtype, view):
    # PyTorch's vectorized and scalar lambdas give different gradients at NaN;
    # which one an element meets depends on the inner loop of its
    # TensorIterator (dims merged where every operand is contiguous), not on
    # the tensor being contiguous as a whole.
    if view == "step":
        shape, v = (6, 1, 4, 8), lambda t: t[::2]
    elif view == "permute":
        shape, v = (2, 2, 8, 4), lambda t: t.permute(3, 0, 2, 1)
    else:
        shape, v = (3, 64), lambda t: t[:, ::2]
    base = _nan_base(shape, [0, 9, 40, 77, 130]).astype(dtype)
    out_shape = tuple(v(torch.tensor(base)).shape)
    w = np.random.default_rng(0).standard_normal(out_shape).astype(dtype)
    ours = _grad(ft, fn, base, v, w)
    ref = _grad(torch, fn, base, v, w)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name,fn", [
    ("celu_", lambda lib, x: lib.celu_(x, 2.0)),
    ("selu_", lambda lib, x: lib.selu_(x)),
    ("elu_", lambda lib, x: lib.nn.functional.elu_(x)),
    ("hardtanh_", lambda lib, x: lib.nn.functional.hardtanh_(x)),
    ("hardswish_", lambda lib, x: lib.nn.functional.hardswish(x, inplace=True)),
    ("logit_", lambda lib, x: x.logit_(0.1)),
])
@pytest.mark.parametrize("view", ["step", "permute", "step_inner"])
def test_nan_gradient_position_of_inplace_ops_on_views(name, fn, view):
    # PyTorch's backward of elu_/celu_/selu_ reads the written view itself (its
    # strides), that of hardtanh_/hardswish_/logit_ a clone() of the old value
    # (dense); the incoming gradient is contiguous. The layout decides which
    # kernel lambda, and so which NaN gradient, each element gets.
    if view == "step":
        shape, v = (6, 1, 4, 8), lambda t: t[::2]
    elif view == "permute":
        shape, v = (2, 2, 4, 1), lambda t: t.permute(3, 0, 2, 1)
    else:
        shape, v = (3, 64), lambda t: t[:, ::2]
    base = _nan_base(shape, [0, 9, 11, 40, 77, 130])
    out_shape = tuple(v(torch.tensor(base)).shape)
    w = np.random.default_rng(1).standard_normal(out_shape)
    ours = _grad(ft, fn, base, v, w)
    ref = _grad(torch, fn, base, v, w)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("eps", [None, 0.1, 1.0, 2.0])
@pytest.mark.parametrize("n", [8, 40, 64])
def test_logit_inplace_gradient_at_nan_and_ends(eps, n):
    base = np.linspace(-0.5, 1.5, n).astype(np.float32)
    base[[0, 3, n - 1]] = [np.nan, 0.0, np.nan]
    base[5] = 1.0
    w = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    fn = lambda lib, x: x.logit_(eps)
    ours = _grad(ft, fn, base, lambda t: t, w)
    ref = _grad(torch, fn, base, lambda t: t, w)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6, equal_nan=True)
