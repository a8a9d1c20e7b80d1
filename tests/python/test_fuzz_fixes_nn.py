"""Regression tests for the nn.functional classes of the differential fuzz
campaign (issue 15): convolution input gradients with non-finite weights,
layer_norm gradients where its statistics are NaN."""

import math

import numpy as np
import pytest

from _parity import parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


@pytest.fixture(autouse=True)
def _one_thread():
    # PyTorch picks its CPU convolution backend partly by thread count.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_conv1d_input_grad_inf_tap_over_padding(dt):
    # The inf tap only ever meets padding or stride gaps: PyTorch's col2im
    # never multiplies those, so the input gradient is 0, not NaN.
    x = np.array([[[2.0]]], dt)
    w = np.array([[[inf]], [[1e-30]]], dt)
    parity(torch, lambda lib, a, b: lib.nn.functional.conv1d(a, b, None, stride=2, padding=1, dilation=2), x, w,
           grad=(0,))


def test_conv1d_input_grad_inf_weight_padding_bias():
    x = np.array([[[2.0], [2.0]]], np.float32)
    w = np.array([[[-inf, 0.0], [-1.7314059734344482, 0.7184076905250549]]], np.float32)
    b = np.array([1.424648486103548e18], np.float32)
    parity(torch, lambda lib, a, c, d: lib.nn.functional.conv1d(a, c, d, stride=2, padding=1), x, w, b, grad=(0, 2))


def test_conv2d_input_grad_strided_dilated_inf_weight():
    x = np.array([[[[-2.0, 4.0, -3.0, -4.0]], [[-4.0, -2.0, -1.0, 3.0]]]], np.float32)
    w = np.broadcast_to(np.array([[[[1e-30]]], [[[inf]]]], np.float32), (2, 2, 1, 1)).copy()
    b = np.array([3.194849729537964, 0.22939683496952057], np.float32)
    parity(torch, lambda lib, a, c, d: lib.nn.functional.conv2d(a, c, d, stride=2, dilation=2), x, w, b, grad=(0, 2))


@pytest.mark.parametrize("seed", range(6))
def test_conv2d_grads_random_geometry(seed):
    # Finite operands: input and weight gradients through the GEMM + col2im
    # kernel over strides, padding, dilation and groups.
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 3))
    x = rng.standard_normal((2, 2 * g, 7, 6)).astype(np.float64)
    w = rng.standard_normal((2 * g, 2, 3, 2)).astype(np.float64)
    s, p, d = (int(rng.integers(1, 4)), int(rng.integers(1, 3))), (int(rng.integers(0, 3)), 1), (int(rng.integers(1, 3)), 1)
    parity(torch, lambda lib, a, b: lib.nn.functional.conv2d(a, b, None, s, p, d, g), x, w, grad=(0, 1), seed=seed)


def test_conv2d_double_backward():
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    res = []
    import ferrotorch as ft
    for lib in (ft, torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        y = lib.nn.functional.conv2d(x, w, None, 2, 1)
        (gx,) = lib.autograd.grad((y * y).sum(), (x,), create_graph=True)
        gw, = lib.autograd.grad((gx * gx).sum(), (w,))
        res.append((gx.detach().numpy(), gw.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("w", [None, [9.481508911335368e-10, 3.1324725971691866e-21, -107317008.0]])
def test_layer_norm_grad_nan_statistics(w):
    # Float32 moments of [88, 1e30, ...] overflow: PyTorch's output row and
    # its backward (which multiplies by that NaN rstd) are NaN; other rows keep
    # their gradient.
    x = np.array([[88.0, -0.674983024597168], [1.069441556930542, 1.018868088722229], [1.0000000150474662e30, 0.0]],
                 np.float32).T.copy()
    if w is None:
        parity(torch, lambda lib, a: lib.nn.functional.layer_norm(a, [3], None, None, eps=1e-3), x, grad=(0,),
               rtol=1e-4, atol=1e-5)
    else:
        wt = np.array(w, np.float32)
        parity(torch, lambda lib, a, b: lib.nn.functional.layer_norm(a, [3], b, None, eps=1e-3), x, wt, grad=(0, 1),
               rtol=1e-4, atol=1e-5)


def test_layer_norm_grad_nan_row_only():
    x = np.array([[-0.7863448858261108, 0.4851490557193756], [-88.0, -1.0000000150474662e30]], np.float32)
    parity(torch, lambda lib, a: lib.nn.functional.layer_norm(a, [2]), x, grad=(0,), rtol=1e-4, atol=1e-6)
