"""The native conv2d kernel (im2col + GEMM) and its ConvolutionBackward0 rule,
against PyTorch: values, gradients of input/weight/bias, double backward."""
import itertools

import numpy as np
import pytest

import ferrotorch as ft
import ferrotorch.nn.functional as F

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

CASES = list(itertools.product(
    [(1, 1), (2, 3)],           # stride
    [(0, 0), (1, 2), (4, 3)],   # padding (4 > kernel reach: whole taps outside)
    [(1, 1), (2, 1)],           # dilation
    [1, 2],                     # groups
    [(3, 3), (1, 2)],           # kernel
))


@pytest.mark.parametrize("stride,padding,dilation,groups,kernel", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv2d_forward_backward_match_torch(stride, padding, dilation, groups, kernel, dtype):
    rng = np.random.default_rng(abs(hash((stride, padding, dilation, groups, kernel))) % 2**32)
    x = rng.standard_normal((2, 4, 9, 8)).astype(dtype)
    w = rng.standard_normal((6, 4 // groups, *kernel)).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    fx, fw, fb = (ft.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    fy = F.conv2d(fx, fw, fb, stride, padding, dilation, groups)
    assert fy.grad_fn.name() == "ConvolutionBackward0"
    assert tuple(fy.shape) == tuple(ty.shape)
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), **tol)
    gy = rng.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(gy))
    fy.backward(ft.tensor(gy))
    for ours, theirs in ((fx, tx), (fw, tw), (fb, tb)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol)


def test_conv2d_graph_structure_matches_torch():
    x = ft.randn(1, 2, 5, 5)
    w = ft.randn(3, 2, 3, 3, requires_grad=True)
    b = ft.randn(3, requires_grad=True)
    y = F.conv2d(x, w, b)
    names = [(n.name() if n is not None else None, i) for n, i in y.grad_fn.next_functions]
    tx, tw, tb = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, tb)
    want = [(n.name() if n is not None else None, i) for n, i in ty.grad_fn.next_functions]
    assert names == want


def test_conv2d_gradcheck_and_gradgradcheck():
    ft.manual_seed(0)
    x = ft.randn(2, 2, 6, 5, dtype=ft.float64, requires_grad=True)
    w = ft.randn(4, 1, 3, 2, dtype=ft.float64, requires_grad=True)
    b = ft.randn(4, dtype=ft.float64, requires_grad=True)
    f = lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    assert ft.autograd.gradcheck(f, (x, w, b))
    assert ft.autograd.gradgradcheck(f, (x, w, b))


def test_conv2d_same_padding_even_kernel_matches_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 7, 6))
    w = rng.standard_normal((3, 2, 2, 4))
    ours = F.conv2d(ft.tensor(x), ft.tensor(w), padding="same", dilation=(1, 1)).numpy()
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding="same").numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_conv2d_non_contiguous_input():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 8, 8))
    w = rng.standard_normal((4, 3, 3, 3))
    fx = ft.tensor(x).transpose(2, 3)
    tx = torch.tensor(x).transpose(2, 3)
    np.testing.assert_allclose(F.conv2d(fx, ft.tensor(w), padding=1).numpy(),
                               torch.nn.functional.conv2d(tx, torch.tensor(w), padding=1).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("xs,ws,kw", [
    ((1, 3, 5, 5), (2, 4, 3, 3), {}),                 # channels mismatch
    ((1, 4, 5, 5), (2, 3, 3, 3), {"groups": 2}),      # groups mismatch
    ((1, 3, 2, 2), (2, 3, 3, 3), {}),                 # kernel larger than input
])
def test_conv2d_bad_shapes_raise_like_torch(xs, ws, kw):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.conv2d(torch.zeros(xs), torch.zeros(ws), **kw)
    with pytest.raises(type(theirs.value)):
        F.conv2d(ft.zeros(xs), ft.zeros(ws), **kw)
