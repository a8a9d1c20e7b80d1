"""The vectorised fast paths of issue 9's slow rows, compared with PyTorch:
prod's float32 row kernel (AVX2 registers: blocks of 32, a lane tail and a
scalar tail, bit for bit including where the product overflows), the max
pooling kernel's eight-window float32 path (interior windows of any stride
and dilation, edges, NaN/inf and ties, values, indices and gradients bit for
bit), layer_norm's affine pass (row lengths around the vector widths, each
weight/bias combination) and binary ops writing straight into ``out=``
(the same values, dtype, identity and version bump as PyTorch; outputs that
need a cast, a resize or overlap an operand still go through a copy)."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

F = ft.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(9)


def both(a):
    a = np.ascontiguousarray(a)
    return ft.from_numpy(a.copy()), torch.from_numpy(a.copy())


def np_of(t):
    t = t.detach()
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def same(a, b):
    """Bit-for-bit agreement (NaN matches NaN), shape and dtype included."""
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    np.testing.assert_array_equal(np_of(a), np_of(b))


# --------------------------------------------------------------------- prod


@pytest.mark.parametrize("n", [1, 7, 31, 32, 33, 63, 64, 95, 96, 97, 1000, 4101])
@pytest.mark.parametrize("kind", ["overflow", "near_one", "signs"])
def test_prod_rows_match_torch_bit_for_bit(n, kind):
    if kind == "overflow":
        # Partial products leave float32's range one way or the other
        # depending on the order: inf * 0 = NaN only in the wrong order.
        x = RNG.choice([1e20, 1e-20, 3.0, 1e15, 1e-12], size=(3, n)).astype(np.float32)
    elif kind == "near_one":
        x = (1.0 + 0.01 * RNG.standard_normal((3, n))).astype(np.float32)
    else:
        x = RNG.choice([-1.5, 0.75, -0.5, 2.0, -1.25], size=(3, n)).astype(np.float32)
    fx, tx = both(x)
    same(fx.prod(1), tx.prod(1))
    same(fx.prod(-1, keepdim=True), tx.prod(-1, keepdim=True))
    same(fx[1].prod(), tx[1].prod())


def test_prod_strided_rows_keep_the_sequential_order():
    x = RNG.choice([1e20, 1e-20, 3.0, -2.0], size=(70, 40)).astype(np.float32)
    fx, tx = both(x)
    same(fx.t().prod(1), tx.t().prod(1))
    same(fx[:, ::3].prod(1), tx[:, ::3].prod(1))


def test_prod_float64_rows_unchanged():
    x = RNG.choice([1e200, 1e-200, 3.0, -2.0], size=(4, 77))
    fx, tx = both(x)
    same(fx.prod(1), tx.prod(1))


# ------------------------------------------------------------- max pooling

# (input spatial shape, kernel, stride, padding, dilation, ceil_mode)
GEOMS_2D = [
    ((56, 56), 3, 2, 1, 1, False),      # ResNet's stem
    ((13, 40), 3, 1, 1, 1, False),      # stride 1: overlapping windows
    ((11, 45), (2, 3), (1, 3), (0, 1), 1, False),
    ((10, 50), 3, 2, 1, 2, False),      # dilated
    ((9, 41), (3, 2), 2, (1, 0), (1, 3), True),
    ((7, 29), 2, 2, 0, 1, True),        # ceil_mode: a clipped last window
    ((5, 70), (1, 5), (1, 4), (0, 2), 1, False),
]


def pool_input(shape, kind):
    if kind == "ties":
        # Few distinct values: a window's first maximum must win.
        return RNG.integers(-2, 3, size=shape).astype(np.float32)
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    if kind == "specials":
        flat = x.reshape(-1)
        picks = RNG.choice(flat.size, size=flat.size // 7, replace=False)
        flat[picks] = RNG.choice([np.nan, np.inf, -np.inf], size=picks.size)
    elif kind == "neg_inf":
        x[...] = -np.inf
        x.reshape(-1)[:: 5] = np.nan
    return x


@pytest.mark.parametrize("geom", GEOMS_2D)
@pytest.mark.parametrize("kind", ["normal", "ties", "specials", "neg_inf"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool2d_values_indices_and_grad(geom, kind, dtype):
    size, k, s, p, d, ceil = geom
    x = pool_input((2, 3) + size, kind).astype(dtype)
    fx, tx = both(x)
    fx.requires_grad_()
    tx.requires_grad_()
    args = dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
    fy, fi = F.max_pool2d(fx, return_indices=True, **args)
    ty, ti = TF.max_pool2d(tx, return_indices=True, **args)
    same(fy, ty)
    same(fi, ti)
    with ft.no_grad(), torch.no_grad():
        same(F.max_pool2d(fx, **args), TF.max_pool2d(tx, **args))
    g = np.cos(np.arange(ty.numel(), dtype=dtype)).reshape(tuple(ty.shape))
    fg, tg = both(g)
    fy.backward(fg)
    ty.backward(tg)
    same(fx.grad, tx.grad)


@pytest.mark.parametrize("stride,dilation", [(1, 1), (2, 1), (3, 2)])
def test_max_pool1d_and_3d(stride, dilation):
    x1 = pool_input((2, 4, 67), "specials")
    f1, t1 = both(x1)
    args = dict(kernel_size=3, stride=stride, padding=1, dilation=dilation, return_indices=True)
    for a, b in zip(F.max_pool1d(f1, **args), TF.max_pool1d(t1, **args)):
        same(a, b)
    x3 = pool_input((1, 2, 5, 6, 40), "ties")
    f3, t3 = both(x3)
    args = dict(kernel_size=(2, 3, 3), stride=(1, 2, stride), padding=(0, 1, 1), dilation=(1, 1, dilation), return_indices=True)
    for a, b in zip(F.max_pool3d(f3, **args), TF.max_pool3d(t3, **args)):
        same(a, b)


@pytest.mark.parametrize("view", ["channels_last", "sliced", "transposed"])
def test_max_pool2d_non_contiguous_inputs(view):
    base = pool_input((2, 3, 30, 44), "specials")
    fb, tb = both(base)

    def make(t, lib):
        if view == "channels_last":
            return t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        if view == "sliced":
            return t[:, :, 1::2, 3:]
        return t.transpose(2, 3)

    fx, tx = make(fb, ft), make(tb, torch)
    fy, fi = F.max_pool2d(fx, 3, 2, 1, return_indices=True)
    ty, ti = TF.max_pool2d(tx, 3, 2, 1, return_indices=True)
    same(fy, ty)
    same(fi, ti)


# ---------------------------------------------------------------- layer_norm


@pytest.mark.parametrize("n", [1, 7, 8, 15, 16, 17, 33, 1024, 1031])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_affine_pass(n, affine):
    x = (RNG.standard_normal((5, n)) * 3 + 1).astype(np.float32)
    fx, tx = both(x)
    fw, tw = both(RNG.standard_normal(n).astype(np.float32)) if affine in ("weight", "both") else (None, None)
    fb, tb = both(RNG.standard_normal(n).astype(np.float32)) if affine in ("bias", "both") else (None, None)
    fy = F.layer_norm(fx, (n,), fw, fb)
    ty = TF.layer_norm(tx, (n,), tw, tb)
    assert fy.dtype == ft.float32 and tuple(fy.shape) == tuple(ty.shape)
    # float64 closed form of the same expression as the reference's tolerance check
    mu = x.astype(np.float64).mean(1, keepdims=True)
    var = x.astype(np.float64).var(1, keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-5)
    if fw is not None:
        ref = ref * np_of(tw).astype(np.float64)
    if fb is not None:
        ref = ref + np_of(tb).astype(np.float64)
    np.testing.assert_allclose(np_of(fy), np_of(ty), rtol=1e-6, atol=2e-6)
    np.testing.assert_allclose(np_of(fy), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1031, 1031), (2, 523, 1031)])
@pytest.mark.parametrize("affine", ["none", "both"])
def test_layer_norm_streamed_output(shape, affine):
    # Outputs of 4 MiB and more are written with streaming stores from each
    # row's first aligned element: odd rows start at every alignment.
    n = shape[-1]
    x = (RNG.standard_normal(shape) * 2 - 0.5).astype(np.float32)
    fx, tx = both(x)
    fw, tw = both(RNG.standard_normal(n).astype(np.float32)) if affine == "both" else (None, None)
    fb, tb = both(RNG.standard_normal(n).astype(np.float32)) if affine == "both" else (None, None)
    fy, ty = F.layer_norm(fx, (n,), fw, fb), TF.layer_norm(tx, (n,), tw, tb)
    assert fy.stride() == ty.stride()
    np.testing.assert_allclose(np_of(fy), np_of(ty), rtol=1e-5, atol=1e-5)
    fx.requires_grad_()
    tx.requires_grad_()
    g = np.sin(np.arange(x.size, dtype=np.float32)).reshape(shape)
    fg, tg = both(g)
    F.layer_norm(fx, (n,), fw, fb).backward(fg)
    TF.layer_norm(tx, (n,), tw, tb).backward(tg)
    np.testing.assert_allclose(np_of(fx.grad), np_of(tx.grad), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,groups", [((2, 6, 299, 301), 3), ((4, 8, 181, 183), 8), ((3, 4, 7, 13), 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_affine_pass(shape, groups, affine):
    # the first two write more than 4 MiB (streamed); planes of odd sizes
    # start at every alignment
    x = (RNG.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    fx, tx = both(x)
    c = shape[1]
    fw, tw = both(RNG.standard_normal(c).astype(np.float32)) if affine else (None, None)
    fb, tb = both(RNG.standard_normal(c).astype(np.float32)) if affine else (None, None)
    fy, ty = F.group_norm(fx, groups, fw, fb), TF.group_norm(tx, groups, tw, tb)
    assert tuple(fy.shape) == tuple(ty.shape) and fy.dtype == ft.float32
    np.testing.assert_allclose(np_of(fy), np_of(ty), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------- out=


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "fmod"])
@pytest.mark.parametrize("shapes", [((1000,), (1000,)), ((7, 33), (33,)), ((4, 1, 5), (3, 1))])
def test_out_is_written_in_place(name, shapes):
    a, b = (RNG.standard_normal(s).astype(np.float32) for s in shapes)
    fa, ta = both(a)
    fb, tb = both(b)
    shape = np.broadcast_shapes(*shapes)
    fo, to = ft.empty(shape), torch.empty(shape)
    ptr, v0 = fo.data_ptr(), fo._version
    tv0 = to._version
    r = getattr(ft, name)(fa, fb, out=fo)
    getattr(torch, name)(ta, tb, out=to)
    assert r is fo and fo.data_ptr() == ptr
    same(fo, to)
    assert fo._version - v0 == to._version - tv0


def test_out_strided_and_aliasing_outputs():
    a, b = RNG.standard_normal((6, 8)).astype(np.float32), RNG.standard_normal((6, 8)).astype(np.float32)
    fa, ta = both(a)
    fb, tb = both(b)
    # a transposed out: written through its strides
    fo, to = ft.empty(8, 6).t(), torch.empty(8, 6).t()
    ft.add(fa, fb, out=fo)
    torch.add(ta, tb, out=to)
    same(fo, to)
    assert fo.stride() == to.stride()
    # out is an operand
    ft.mul(fa, fb, out=fa)
    torch.mul(ta, tb, out=ta)
    same(fa, ta)
    # out is the other operand, broadcast
    fr, tr = both(RNG.standard_normal(8).astype(np.float32))
    fo, to = both(np.zeros((6, 8), dtype=np.float32))
    ft.sub(fa, fr, out=fo)
    torch.sub(ta, tr, out=to)
    same(fo, to)
    ft.add(fo, fr, out=fo)
    torch.add(to, tr, out=to)
    same(fo, to)


def test_out_that_needs_a_cast_or_resize_still_works():
    a, b = RNG.standard_normal(5).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
    fa, ta = both(a)
    fb, tb = both(b)
    fo, to = ft.empty(5, dtype=ft.float64), torch.empty(5, dtype=torch.float64)
    ft.add(fa, fb, out=fo)
    torch.add(ta, tb, out=to)
    same(fo, to)
    fo, to = ft.empty(0), torch.empty(0)
    ft.sub(fa, fb, out=fo)
    torch.sub(ta, tb, out=to)
    same(fo, to)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fo = ft.empty(3)
        ft.mul(fa, fb, out=fo)
    assert any("resized" in str(x.message) for x in w)
    same(fo, ta * tb)
    fo, to = ft.empty(5, dtype=ft.bool), torch.empty(5, dtype=torch.bool)
    ft.eq(fa, fb, out=fo)
    torch.eq(ta, tb, out=to)
    same(fo, to)
    fo, to = ft.empty(5), torch.empty(5)
    ft.add(fa, 2.5, out=fo)
    torch.add(ta, 2.5, out=to)
    same(fo, to)


def test_out_errors_match_torch():
    fa, ta = both(np.ones(4, dtype=np.float32))
    fo, to = ft.empty(4, dtype=ft.int64), torch.empty(4, dtype=torch.int64)
    with pytest.raises(RuntimeError) as e:
        torch.add(ta, ta, out=to)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ft.add(fa, fa, out=fo)
    assert "can't be cast" in str(e.value)
    fg, tg = both(np.ones(4, dtype=np.float32))
    fg.requires_grad_()
    tg.requires_grad_()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.add(tg, tg, out=torch.empty(4))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ft.add(fg, fg, out=ft.empty(4))
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        ft.sub(ft.ones(3, dtype=ft.bool), ft.ones(3, dtype=ft.bool), out=ft.empty(3, dtype=ft.bool))
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        torch.sub(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool), out=torch.empty(3, dtype=torch.bool))
    with pytest.raises(RuntimeError):
        torch.add(torch.ones(3), torch.ones(4), out=torch.empty(3))
    with pytest.raises(RuntimeError, match="must match the size"):
        ft.add(ft.ones(3), ft.ones(4), out=ft.empty(3))


# ------------------------------------------------- strided (un)fold of conv


@pytest.mark.parametrize("stride,padding,dilation,width", [
    (2, 1, 1, 28), (3, 0, 1, 17), (2, 3, 2, 9), (4, 2, 1, 5), (3, 4, 1, 3), (2, 0, 3, 31),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_strided_convolutions_and_transposes(stride, padding, dilation, width, dtype):
    x = RNG.standard_normal((2, 4, 6, width)).astype(dtype)
    w = RNG.standard_normal((5, 4, 3, 3)).astype(dtype)
    fx, tx = both(x)
    fw, tw = both(w)
    for t in (fx, tx, fw, tw):
        t.requires_grad_()
    tol = 1e-12 if dtype == "float64" else 2e-5
    args = dict(stride=(1, stride), padding=(1, padding), dilation=(1, dilation))
    try:
        ty = TF.conv2d(tx, tw, **args)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.conv2d(fx, fw, **args)
        return
    fy = F.conv2d(fx, fw, **args)
    np.testing.assert_allclose(np_of(fy), np_of(ty), rtol=tol, atol=tol)
    g = np.cos(np.arange(ty.numel())).reshape(tuple(ty.shape)).astype(dtype)
    fg, tg = both(g)
    fy.backward(fg)
    ty.backward(tg)
    np.testing.assert_allclose(np_of(fx.grad), np_of(tx.grad), rtol=tol, atol=tol)
    np.testing.assert_allclose(np_of(fw.grad), np_of(tw.grad), rtol=tol, atol=tol)
    # the transposed convolution (the input gradient's col2vol) on its own
    wt = RNG.standard_normal((4, 3, 3, 4)).astype(dtype)
    fwt, twt = both(wt)
    targs = dict(stride=(1, stride), padding=(0, min(padding, 3 * dilation - 1)), dilation=(1, dilation))
    np.testing.assert_allclose(np_of(F.conv_transpose2d(fx.detach(), fwt, **targs)),
                               np_of(TF.conv_transpose2d(tx.detach(), twt, **targs)), rtol=tol, atol=tol)
