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


def test_batch_norm_float32_statistics_overflow_as_pytorch():
    # PyTorch's float32 kernel stores its variance sum in float32, which
    # overflows here (the output is 0 where the exact values are +-1); the
    # native kernel takes the same statistics (tests/test_norm_native.py).
    x = np.array([[0.2319706827402115, 3e38], [1e30, 3e38]], dtype=np.float32).reshape(2, 1, 2)
    ours = ft.nn.functional.batch_norm(ft.tensor(x), None, None, training=True).numpy()
    ref = torch.nn.functional.batch_norm(torch.tensor(x), None, None, training=True).numpy()
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_batch_norm_reduced_precision_statistics_in_float32(dtype):
    # The variance (~9.5e4) is beyond float16's range; PyTorch's statistics are float32.
    x = np.array([710.0, -0.75830078125, -0.048583984375, -0.018768310546875]).reshape(2, 1, 2)
    t = getattr(torch, dtype)
    ours = ft.nn.functional.batch_norm(ft.tensor(x).to(getattr(ft, dtype)), None, None, training=True)
    ref = torch.nn.functional.batch_norm(torch.tensor(x).to(t), None, None, training=True)
    np.testing.assert_allclose(ours.float().numpy(), ref.float().numpy(), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("divisor_override", [None, 2])
def test_avg_pool_sums_reduced_precision_windows_in_float32(dtype, divisor_override):
    scale = 56672.0 if dtype == "float16" else 3e38
    x = np.array([[[0.0, scale, scale, scale, -1.0, 2.0]]])
    for nd, f in ((1, "avg_pool1d"), (2, "avg_pool2d")):
        a = x if nd == 1 else np.repeat(x[:, :, None, :], 3, axis=2)
        kw = {} if nd == 1 or divisor_override is None else {"divisor_override": divisor_override}
        res = []
        for lib in (ft, torch):
            t = lib.tensor(a).to(getattr(lib, dtype))
            res.append(getattr(lib.nn.functional, f)(t, 2, stride=1, **kw).float().numpy())
        np.testing.assert_allclose(res[0], res[1], rtol=1e-2)


@pytest.mark.parametrize("return_indices", [False, True])
def test_adaptive_max_pool_last_nan_wins(return_indices):
    nan = float("nan")
    x = np.array([[1.0, -0.0, 0.0, 88.0, 1.95], [0.22, -1.9, np.inf, -20.0, 0.72],
                  [-1.6, -0.15, 1.03, nan, nan], [2.18, 2.72, -88.0, 88.0, 5.0]]).reshape(1, 1, 4, 5)
    w = np.random.default_rng(3).standard_normal((1, 1, 3, 3))
    res = []
    for lib in (ft, torch):
        leaf = lib.tensor(x).requires_grad_()
        out = lib.nn.functional.adaptive_max_pool2d(leaf.clone(), 3, return_indices=return_indices)
        vals = out[0] if return_indices else out
        (vals * lib.tensor(w)).sum().backward()
        res.append((vals.detach().numpy(), out[1].numpy() if return_indices else None, leaf.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], equal_nan=True)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-6)
    if return_indices:
        np.testing.assert_array_equal(res[0][1], res[1][1])
    a = np.array([[[1.0, nan, 5.0, nan, 5.0, 2.0], [1.0, 5.0, 5.0, 2.0, 0.0, 0.0]]])
    o = ft.nn.functional.adaptive_max_pool1d(ft.tensor(a), 1, return_indices=True)
    r = torch.nn.functional.adaptive_max_pool1d(torch.tensor(a), 1, return_indices=True)
    np.testing.assert_array_equal(o[1].numpy(), r[1].numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_glu_reduced_precision_in_float32(dtype):
    x = np.array([[np.inf, 1.0, 3e4, -np.inf], [-88.0, 2.0, -12.0, 88.0]])
    res = []
    for lib in (ft, torch):
        leaf = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        out = lib.nn.functional.glu(leaf, 0)
        res.append(out.float().detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-2, equal_nan=True)


@pytest.mark.parametrize("name", ["softshrink", "hardshrink"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [4, 20, 40])
def test_shrink_gradient_at_nan_follows_kernel_position(name, dtype, n):
    # PyTorch's vectorized lambda gives 0 at NaN, its scalar tail passes g.
    x = np.linspace(-1.0, 1.0, n).astype(dtype)
    x[[0, n // 2, n - 1]] = np.nan
    w = np.random.default_rng(4).standard_normal(n).astype(dtype)
    res = []
    for lib in (ft, torch):
        leaf = lib.tensor(x).requires_grad_()
        out = getattr(lib.nn.functional, name)(leaf, 0.3)
        assert out.grad_fn.name() == name.capitalize() + "Backward0"
        (out * lib.tensor(w)).sum().backward()
        res.append((out.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], equal_nan=True)
    np.testing.assert_allclose(res[0][1], res[1][1], equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_shrink_reduced_precision_lambd(dtype):
    x = np.array([-0.7, -0.5, -0.3, -0.2, 0.0, 0.3, 0.5, 0.6])
    for name in ("softshrink", "hardshrink"):
        o = getattr(ft.nn.functional, name)(ft.tensor(x).to(getattr(ft, dtype)), 0.3)
        r = getattr(torch.nn.functional, name)(torch.tensor(x).to(getattr(torch, dtype)), 0.3)
        np.testing.assert_array_equal(o.float().numpy(), r.float().numpy())
