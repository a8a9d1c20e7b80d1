"""Native pooling (Rust kernels in ferrotorch-cpu's pool module, nodes named
as PyTorch's) compared with PyTorch: max/avg/adaptive pooling in 1, 2 and 3
dims, values, indices and gradients bit for bit over random geometries
(padding, dilation, ceil_mode, count_include_pad, divisor_override), NaN/inf
inputs, float16/bfloat16, integer dtypes, non-contiguous inputs, double
backward, grad_fn names and argument errors."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

F = ft.nn.functional
TF = torch.nn.functional

DT = {
    "float32": (ft.float32, torch.float32),
    "float64": (ft.float64, torch.float64),
    "float16": (ft.float16, torch.float16),
    "bfloat16": (ft.bfloat16, torch.bfloat16),
}
INT = {"int64": (ft.int64, torch.int64), "int32": (ft.int32, torch.int32), "uint8": (ft.uint8, torch.uint8)}


def pair(a, dtype="float32", requires_grad=False):
    fdt, tdt = {**DT, **INT}[dtype]
    t = torch.tensor(a).to(tdt)
    f = ft.tensor(t.double().tolist(), dtype=ft.float64).to(fdt) if t.dtype.is_floating_point else ft.tensor(t.tolist(), dtype=fdt)
    f = f.reshape(*t.shape)  # an empty nested list loses its shape
    return f.requires_grad_(requires_grad), t.requires_grad_(requires_grad)


def np_of(x):
    if isinstance(x, ft.Tensor):
        x = x.detach()
        return np.array(x.to(ft.float64).tolist() if x.dtype.is_floating_point else x.tolist()).reshape(tuple(x.shape))
    x = x.detach()
    return x.double().numpy() if x.dtype.is_floating_point else x.numpy()


def same(a, b):
    """Bit-for-bit agreement (NaN matches NaN), shape and dtype included."""
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(np_of(a), np_of(b))


def data(rng, shape, specials=False):
    x = rng.standard_normal(shape).astype(np.float32) * 4
    if specials and x.size:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 8), replace=False)
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf], size=picks.size)
    return x


def geometry(rng, nd, dilated):
    k = [int(rng.integers(1, 4)) for _ in range(nd)]
    s = [int(rng.integers(1, 4)) for _ in range(nd)]
    d = [int(rng.integers(1, 3)) if dilated else 1 for _ in range(nd)]
    # Padding is bounded by half the undilated kernel (pool2d/3d_shape_check).
    p = [int(rng.integers(0, ki // 2 + 1)) for ki in k]
    sizes = [int(rng.integers(max(1, di * (ki - 1) + 1 - 2 * pi), 8)) for ki, di, pi in zip(k, d, p)]
    return k, s, p, d, sizes


def torch_or_same_error(tcall, fcall):
    """PyTorch's result, or None after checking we raise its exception."""
    try:
        return tcall()
    except (RuntimeError, NotImplementedError, IndexError, ValueError) as e:
        with pytest.raises(type(e)) as got:
            fcall()
        assert str(got.value) == str(e)
        return None


def lead(rng, nd):
    return [int(rng.integers(1, 3)), int(rng.integers(1, 4))] if rng.random() < 0.7 else [int(rng.integers(1, 4))]


CASES = [(nd, dtype, seed) for nd in (1, 2, 3) for dtype in DT for seed in range(6)]


@pytest.mark.parametrize("nd,dtype,seed", CASES)
def test_max_pool_values_indices_grads(nd, dtype, seed):
    rng = np.random.default_rng(100 * nd + seed)
    k, s, p, d, sizes = geometry(rng, nd, True)
    ceil = bool(rng.integers(0, 2))
    x = data(rng, lead(rng, nd) + sizes, specials=seed % 2 == 1)
    fx, tx = pair(x, dtype, True)
    fn, tfn = getattr(F, f"max_pool{nd}d"), getattr(TF, f"max_pool{nd}d")
    r = torch_or_same_error(lambda: tfn(tx, k, s, p, d, ceil_mode=ceil, return_indices=True),
                            lambda: fn(fx, k, s, p, d, ceil_mode=ceil, return_indices=True))
    if r is None:
        return
    ty, ti = r
    fy, fi = fn(fx, k, s, p, d, ceil_mode=ceil, return_indices=True)
    same(fy, ty)
    same(fi, ti)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    same(fx.grad, tx.grad)


@pytest.mark.parametrize("nd,dtype,seed", CASES)
def test_avg_pool_values_grads(nd, dtype, seed):
    rng = np.random.default_rng(1000 + 100 * nd + seed)
    k, s, p, _, sizes = geometry(rng, nd, False)
    ceil, cip = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    div = int(rng.integers(1, 7)) if nd > 1 and seed % 3 == 2 else None
    x = data(rng, lead(rng, nd) + sizes, specials=seed % 2 == 1)
    fx, tx = pair(x, dtype, True)
    kw = {} if nd == 1 else {"divisor_override": div}
    try:
        ty = getattr(TF, f"avg_pool{nd}d")(tx, k, s, p, ceil, cip, **kw)
    except (RuntimeError, NotImplementedError) as e:
        # float16/bfloat16 3-d pooling has no CPU kernel; a window wider
        # than the (unpadded) input is refused in 3-d: the same error here.
        with pytest.raises(type(e)) as got:
            getattr(F, f"avg_pool{nd}d")(fx, k, s, p, ceil, cip, **kw)
        assert str(got.value) == str(e)
        return
    fy = getattr(F, f"avg_pool{nd}d")(fx, k, s, p, ceil, cip, **kw)
    same(fy, ty)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    same(fx.grad, tx.grad)


@pytest.mark.parametrize("nd,dtype,seed", CASES)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool_values_indices_grads(nd, dtype, seed, kind):
    rng = np.random.default_rng(2000 + 100 * nd + seed)
    sizes = [int(rng.integers(1, 9)) for _ in range(nd)]
    outs = [int(rng.integers(1, 7)) for _ in range(nd)]  # larger than the input too: windows overlap
    x = data(rng, lead(rng, nd) + sizes, specials=seed % 2 == 1)
    fx, tx = pair(x, dtype, True)
    o = outs[0] if nd == 1 else outs
    if kind == "avg":
        fy = getattr(F, f"adaptive_avg_pool{nd}d")(fx, o)
        ty = getattr(TF, f"adaptive_avg_pool{nd}d")(tx, o)
    else:
        fy, fi = getattr(F, f"adaptive_max_pool{nd}d")(fx, o, return_indices=True)
        ty, ti = getattr(TF, f"adaptive_max_pool{nd}d")(tx, o, return_indices=True)
        same(fi, ti)
    if kind == "avg" and all(v == 1 for v in outs):
        # PyTorch computes the 1x1 case as a mean (MeanBackward1); the mean
        # reduction's summation order is not the pooling kernel's.
        np.testing.assert_allclose(np_of(fy), np_of(ty), rtol=1e-2, atol=1e-5)
    else:
        same(fy, ty)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    same(fx.grad, tx.grad)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.max_pool1d(x[0], 2),
        lambda F, x: F.max_pool1d(x[0], 2, return_indices=True)[0],
        lambda F, x: F.max_pool2d(x, 2),
        lambda F, x: F.max_pool2d(x[0], 2),
        lambda F, x: F.max_pool3d(x, 2),
        lambda F, x: F.avg_pool1d(x[0], 2),
        lambda F, x: F.avg_pool2d(x, 2),
        lambda F, x: F.avg_pool3d(x, 2),
        lambda F, x: F.adaptive_avg_pool1d(x[0], 3),
        lambda F, x: F.adaptive_avg_pool1d(x[0], 1),
        lambda F, x: F.adaptive_avg_pool2d(x, 3),
        lambda F, x: F.adaptive_avg_pool2d(x, 1),
        lambda F, x: F.adaptive_avg_pool3d(x, 3),
        lambda F, x: F.adaptive_avg_pool3d(x, (1, 1, 1)),
        lambda F, x: F.adaptive_max_pool1d(x[0], 3),
        lambda F, x: F.adaptive_max_pool2d(x, 3),
        lambda F, x: F.adaptive_max_pool3d(x, 3),
    ],
)
def test_grad_fn_names(call):
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    fx, tx = pair(x, "float32", True)
    fy, ty = call(F, fx), call(TF, tx)
    names = []
    for y in (fy, ty):
        node, chain = y.grad_fn, []
        while node is not None and type(node).__name__ != "AccumulateGrad":
            chain.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        names.append(chain)
    assert names[0] == names[1]


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool3d", "avg_pool3d"])
def test_double_backward(name):
    rng = np.random.default_rng(5)
    shape = (2, 3, 5, 6, 7) if name.endswith("3d") else (2, 3, 7, 6)
    x = data(rng, shape)
    fx, tx = pair(x, "float64", True)
    arg = (3,) if name.startswith("adaptive") else (2, 2, 1) if "3d" not in name else (2,)
    fy, ty = getattr(F, name)(fx, *arg), getattr(TF, name)(tx, *arg)
    gy = rng.standard_normal(tuple(ty.shape))
    fgo, tgo = pair(gy, "float64", True)
    (fg,) = ft.autograd.grad(fy, fx, fgo, create_graph=True)
    (tg,) = torch.autograd.grad(ty, tx, tgo, create_graph=True)
    assert type(fg.grad_fn).__name__ == type(tg.grad_fn).__name__
    w = rng.standard_normal(shape)
    fw, tw = pair(w, "float64")
    (fgg,) = ft.autograd.grad((fg * fw).sum(), fgo)
    (tgg,) = torch.autograd.grad((tg * tw).sum(), tgo)
    np.testing.assert_allclose(np_of(fgg), np_of(tgg), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", list(INT))
def test_integer_dtypes(dtype):
    x = np.random.default_rng(9).integers(0, 200, (2, 3, 7, 6))
    fx, tx = pair(x, dtype)
    for call in (
        lambda F, t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True),
        lambda F, t: F.max_pool3d(t, 2, return_indices=True),
        lambda F, t: F.max_pool1d(t[0], 2, return_indices=True),
        lambda F, t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True),
        lambda F, t: F.avg_pool2d(t, 2, divisor_override=3),
        lambda F, t: F.avg_pool3d(t, 2),
        lambda F, t: F.avg_pool1d(t[0], 2),
        lambda F, t: F.max_pool1d(t[0], 2),
        lambda F, t: F.adaptive_avg_pool2d(t, 3),
        lambda F, t: F.adaptive_max_pool2d(t, 3),
    ):
        try:
            want = call(TF, tx)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as got:
                call(F, fx)
            assert str(got.value) == str(e)
            continue
        got = call(F, fx)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            same(a, b)


def test_noncontiguous_and_unbatched_inputs():
    rng = np.random.default_rng(11)
    x = data(rng, (3, 2, 9, 8))
    fx, tx = pair(x, "float32", True)
    for call in (
        lambda F, t: F.max_pool2d(t, 3, 2, 1, return_indices=True)[1],
        lambda F, t: F.max_pool2d(t, 3, 2, 1),
        lambda F, t: F.avg_pool2d(t[0], 3, 2, 1, ceil_mode=True),
        lambda F, t: F.adaptive_max_pool2d(t[:, :, ::2], 3),
        lambda F, t: F.adaptive_avg_pool2d(t, (5, 2)),
    ):
        fy, ty = call(F, fx.transpose(0, 1).transpose(2, 3)), call(TF, tx.transpose(0, 1).transpose(2, 3))
        same(fy, ty)
        if fy.dtype.is_floating_point:
            fx.grad = None
            tx.grad = None
            fy.sum().backward()
            ty.sum().backward()
            same(fx.grad, tx.grad)


def test_empty_batch():
    for shape, call in (
        ((0, 3, 4, 4), lambda F, t: F.max_pool2d(t, 2, return_indices=True)[0]),
        ((0, 3, 4, 4), lambda F, t: F.avg_pool2d(t, 2)),
        ((0, 3, 4, 4), lambda F, t: F.adaptive_avg_pool2d(t, 3)),
        ((0, 3, 4, 4), lambda F, t: F.adaptive_max_pool2d(t, 3)),
        ((2, 3, 4, 4), lambda F, t: F.adaptive_avg_pool2d(t, (0, 2))),
    ):
        fx, tx = pair(np.zeros(shape, np.float32))
        same(call(F, fx), call(TF, tx))


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.max_pool2d(x, 2, 0),
        lambda F, x: F.max_pool2d(x, 2, 2, 2),
        lambda F, x: F.max_pool2d(x, 2, 2, -1),
        lambda F, x: F.max_pool2d(x, 2, 2, 0, 0),
        lambda F, x: F.max_pool2d(x[:, :, :1, :1], 2),
        lambda F, x: F.max_pool3d(x, 2, 2, 2),
        lambda F, x: F.max_pool3d(x[None], (1, 3, 3), 1, (0, 1, 2), 2),
        lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
        lambda F, x: F.avg_pool2d(x[:, :, :1, :1], 2),
        lambda F, x: F.adaptive_max_pool2d(x[:, :, :0], 2),
        lambda F, x: F.adaptive_avg_pool2d(x[0, 0], 2),
        lambda F, x: F.max_pool2d(x == x, 2),
        lambda F, x: F.adaptive_avg_pool3d(x.long(), 2),
        lambda F, x: F.adaptive_max_pool2d(x.long(), 2),
    ],
)
def test_errors_match_torch(call):
    x = np.random.default_rng(13).standard_normal((2, 3, 4, 4)).astype(np.float32)
    fx, tx = pair(x)
    with pytest.raises(Exception) as want:
        call(TF, tx)
    with pytest.raises(type(want.value)) as got:
        call(F, fx)
    assert str(got.value) == str(want.value)


class TestRustOpLayerErrors:
    """The op layer checks its arguments itself (for Rust users and direct
    `_C` calls): PyTorch's messages, no panics."""

    def test_direct_calls(self):
        C = ft._C
        x = ft.zeros(2, 3, 4, 4)
        cases = [
            (lambda: C._max_pool(x, 2, [2, 2], [0, 1], [0], [1], False, True), "stride should not be zero"),
            (lambda: C._max_pool(x, 2, [0, 2], [1, 1], [0], [1], False, False), "kernel size should be greater than zero, but got kH: 0 kW: 2"),
            (lambda: C._max_pool(x, 2, [2, 2], [-1, 1], [0], [1], False, True), "stride should be greater than zero, but got dH: -1 dW: 1"),
            (lambda: C._max_pool(x, 2, [2, 2, 2], [], [0], [1], False, False), "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
            (lambda: C._max_pool(x, 3, [2], [], [0], [0], False, True), "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 dilationW: 0"),
            (lambda: C._avg_pool(x, 2, [2], [], [0], False, True, 0), "divisor must be not zero"),
            (lambda: C._adaptive_max_pool(x, 2, [-1, 2]), "Trying to create tensor with negative dimension -1: [2, 3, -1, 2]"),
            (lambda: C._adaptive_avg_pool(x, 2, [1, 2, 3]), "adaptive_avg_pool2d: output_size must be 2"),
        ]
        for f, msg in cases:
            with pytest.raises(RuntimeError) as e:
                f()
            assert str(e.value) == msg
