"""The native conv2d kernel (im2col + GEMM) and its ConvolutionBackward0 rule,
against PyTorch: values, gradients of input/weight/bias, double backward."""
import itertools

import zlib

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


# -- the one N-d op: 1/2/3-d, plain and transposed ------------------------------------------------

def _cfgs():
    out = []
    for nd in (1, 2, 3):
        sizes = {1: (11,), 2: (7, 6), 3: (5, 4, 6)}[nd]
        kern = {1: (3,), 2: (3, 2), 3: (2, 3, 1)}[nd]
        for transposed in (False, True):
            for stride, padding, dilation, groups, op, batch in [
                (1, 0, 1, 1, 0, 2),
                (2, 1, 1, 2, 1, 1),
                (1, 2, 2, 1, 1, 3),     # output_padding < dilation with stride 1
                (3, 1, 2, 4, 2, 2),     # depthwise-like, output_padding < stride
                (2, 0, 1, 1, 0, 0),     # empty batch
            ]:
                if not transposed:
                    op = 0
                out.append((nd, sizes, kern, transposed, stride, padding, dilation, groups, op, batch))
    return out


def _run_pair(lib, x, w, b, cfg):
    nd, _, _, transposed, stride, padding, dilation, groups, op, _ = cfg
    F_ = lib.nn.functional
    if transposed:
        return getattr(F_, f"conv_transpose{nd}d")(x, w, b, stride, padding, op, groups, dilation)
    return getattr(F_, f"conv{nd}d")(x, w, b, stride, padding, dilation, groups)


@pytest.mark.parametrize("cfg", _cfgs(), ids=lambda c: f"{c[0]}d-T{int(c[3])}-s{c[4]}p{c[5]}d{c[6]}g{c[7]}op{c[8]}n{c[9]}")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_convolution_nd_matches_torch(cfg, dtype):
    nd, sizes, kern, transposed, stride, padding, dilation, groups, op, batch = cfg
    # crc32, not hash(): str hashes change with PYTHONHASHSEED, so the data did too.
    rng = np.random.default_rng(zlib.crc32(repr(cfg).encode()))
    cin, cout = 4, 8
    x = rng.standard_normal((batch, cin, *sizes)).astype(dtype)
    wshape = (cin, cout // groups, *kern) if transposed else (cout, cin // groups, *kern)
    w = rng.standard_normal(wshape).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    fx, fw, fb = (ft.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = _run_pair(torch, tx, tw, tb, cfg)
    fy = _run_pair(ft, fx, fw, fb, cfg)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "ConvolutionBackward0"
    assert tuple(fy.shape) == tuple(ty.shape)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), **tol)
    gy = rng.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(gy))
    fy.backward(ft.tensor(gy))
    for ours, theirs in ((fx, tx), (fw, tw), (fb, tb)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **tol)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_nd_gradcheck_and_gradgradcheck(nd, transposed):
    ft.manual_seed(nd + 3 * transposed)
    sizes = {1: (6,), 2: (4, 5), 3: (3, 4, 3)}[nd]
    x = ft.randn(2, 2, *sizes, dtype=ft.float64, requires_grad=True)
    kern = (2,) * nd
    w = ft.randn(*((2, 2) if transposed else (4, 1)), *kern, dtype=ft.float64, requires_grad=True)
    b = ft.randn(4, dtype=ft.float64, requires_grad=True)
    F_ = F
    if transposed:
        f = lambda x, w, b: getattr(F_, f"conv_transpose{nd}d")(x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    else:
        f = lambda x, w, b: getattr(F_, f"conv{nd}d")(x, w, b, stride=2, padding=1, dilation=1, groups=2)
    assert ft.autograd.gradcheck(f, (x, w, b))
    assert ft.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_double_backward_matches_torch(nd, transposed):
    rng = np.random.default_rng(10 * nd + transposed)
    sizes = {1: (7,), 2: (5, 4), 3: (3, 4, 3)}[nd]
    x = rng.standard_normal((2, 2, *sizes))
    w = rng.standard_normal((2, 3, *(2,) * nd) if transposed else (3, 2, *(2,) * nd))
    res = []
    for lib in (torch, ft):
        tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
        y = getattr(lib.nn.functional, name)(tx, tw, None, stride=2)
        gx, gw = lib.autograd.grad((y * y).sum(), (tx, tw), create_graph=True)
        assert type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"
        hx, hw = lib.autograd.grad((gx * gx).sum() + (gw ** 3).sum(), (tx, tw))
        res.append([t.detach().numpy() for t in (gx, gw, hx, hw)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("nd", [1, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_unbatched_and_non_contiguous(nd, transposed):
    rng = np.random.default_rng(nd)
    sizes = {1: (9,), 3: (4, 5, 6)}[nd]
    x = rng.standard_normal((3, *sizes[::-1]))
    w = rng.standard_normal((3, 2, *(3,) * nd))
    outs = []
    for lib in (torch, ft):
        # the spatial dims reversed: a non-contiguous view
        tx = lib.tensor(x).permute(0, *range(nd, 0, -1)).requires_grad_(True)
        tw = lib.tensor(w).requires_grad_(True)
        name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
        if transposed:
            y = getattr(lib.nn.functional, name)(tx, tw, None, 1, 1)
        else:
            y = getattr(lib.nn.functional, name)(tx, tw.transpose(0, 1), None, 1, 1)
        y.sum().backward()
        outs.append((y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), type(y.grad_fn).__name__))
    (ty, tgx, tgw, tn), (fy, fgx, fgw, fn) = outs
    assert fn == tn
    for a, b in ((fy, ty), (fgx, tgx), (fgw, tgw)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("nd,transposed", [(1, False), (2, True), (3, False)])
def test_convolution_half_types_match_torch(dtype, nd, transposed):
    rng = np.random.default_rng(5)
    sizes = {1: (9,), 2: (5, 6), 3: (3, 4, 5)}[nd]
    x = rng.standard_normal((2, 2, *sizes)).astype("float32")
    w = rng.standard_normal((2, 4, *(2,) * nd) if transposed else (4, 2, *(2,) * nd)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    res = []
    for lib in (torch, ft):
        dt = getattr(lib, dtype)
        tx, tw, tb = (lib.tensor(a).to(dt).requires_grad_(True) for a in (x, w, b))
        name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
        y = getattr(lib.nn.functional, name)(tx, tw, tb, 2, 1)
        assert y.dtype == dt and type(y.grad_fn).__name__ == "ConvolutionBackward0"
        y.float().sum().backward()
        res.append([t.detach().float().numpy() for t in (y, tx.grad, tw.grad, tb.grad)])
    tol = 1e-2 if dtype == "float16" else 5e-2
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def test_convolution_integer_dtype_keeps_composed_path():
    x = np.arange(2 * 3 * 7).reshape(2, 3, 7) % 5
    w = np.arange(4 * 3 * 2).reshape(4, 3, 2) % 3
    for name in ("conv1d", "conv_transpose1d"):
        ww = w if name == "conv1d" else w.reshape(3, 4, 2)
        ours = getattr(F, name)(ft.tensor(x), ft.tensor(ww), None, 2)
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(ww), None, 2)
        assert ours.dtype == ft.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call", [
    "F.conv3d(z(1, 3, 5, 5, 5), z(2, 3, 2, 2))",
    "F.conv1d(z(1, 3, 5), z(2, 3, 2, 2))",
    "F.conv2d(z(1, 3, 5, 5), z(2, 3, 2, 2), stride=0)",
    "F.conv2d(z(1, 3, 5, 5), z(2, 3, 2, 2), dilation=0)",
    "F.conv2d(z(1, 3, 5, 5), z(2, 3, 2, 2), padding=-1)",
    "F.conv2d(z(1, 3, 5, 5), z(2, 3, 2, 2), groups=0)",
    "F.conv3d(z(1, 3, 2, 2, 2), z(2, 3, 3, 3, 3))",
    "F.conv1d(z(1, 3, 5), z(2, 3, 0))",
    "F.conv_transpose2d(z(1, 3, 1, 1), z(3, 2, 2, 2), padding=2)",
    "F.conv_transpose2d(z(1, 3, 2, 2), z(3, 2, 2, 2), stride=0)",
    "F.conv_transpose2d(z(1, 3, 2, 2), z(3, 2, 2, 2), output_padding=2, stride=2)",
    "F.conv_transpose3d(z(1, 4, 2, 2, 2), z(3, 2, 2, 2, 2), groups=2)",
    "F.conv_transpose1d(z(1, 4, 2), z(4, 2, 2), padding=-1)",
    "F.conv_transpose2d(z(1, 3, 2, 2), z(3, 2, 2, 2), padding='same')",
    "F.conv2d(z(1, 3, 5, 5), z(2, 3, 2, 2), stride=(1, 1, 1))",
    "F.conv1d(z(1, 3, 5), z(2, 3, 2), padding=(1, 1))",
    "F.conv2d(z(1, 3, 5, 5, dtype=lib.float64), z(2, 3, 2, 2))",
    "F.conv3d(z(1, 3, 5, 5, 5), z(2, 3, 2, 2, 2), z(2, dtype=lib.float64))",
])
def test_convolution_errors_match_torch_class(call):
    errs = []
    for lib in (torch, ft):
        env = {"F": lib.nn.functional, "z": lib.zeros, "lib": lib}
        with pytest.raises(Exception) as e:
            eval(call, env)
        errs.append(type(e.value))
    assert errs[0] is errs[1]
