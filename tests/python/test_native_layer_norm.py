"""layer_norm as one native op (Rust kernels, `NativeLayerNormBackward0`),
compared with PyTorch: values in every float dtype (mixed float16/bfloat16
input with float32 parameters too), gradients of input, weight and bias,
double backward, the graph's node names and the argument errors."""

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
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 2e-2}


def pair(a, dtype="float64", requires_grad=False):
    fdt, tdt = DT[dtype]
    f = ft.tensor(a.tolist(), dtype=ft.float64).to(fdt).requires_grad_(requires_grad)
    t = torch.tensor(a, dtype=torch.float64).to(tdt).requires_grad_(requires_grad)
    return f, t


def np_of(x):
    return np.array(x.detach().to(ft.float64).tolist()) if isinstance(x, ft.Tensor) else x.detach().double().numpy()


def close(a, b, tol):
    np.testing.assert_allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("shape,ns", [((6, 10), (10,)), ((3, 4, 17), (4, 17)), ((33,), (33,)), ((2, 3, 300), (300,))])
def test_forward_and_gradients_match_torch(dtype, affine, shape, ns):
    x = RNG.standard_normal(shape) * 3 + 1
    w = RNG.standard_normal(ns)
    b = RNG.standard_normal(ns)
    fx, tx = pair(x, dtype, True)
    fw, tw = pair(w, dtype, True) if affine in ("weight", "both") else (None, None)
    fb, tb = pair(b, dtype, True) if affine in ("bias", "both") else (None, None)
    fy = F.layer_norm(fx, ns, fw, fb, 1e-5)
    ty = TF.layer_norm(tx, ns, tw, tb, 1e-5)
    assert fy.dtype == DT[dtype][0] and tuple(fy.shape) == tuple(ty.shape)
    close(fy, ty, TOL[dtype])
    g = RNG.standard_normal(shape)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    # reduced dtypes: the weight gradient sums rounded products over all rows
    tol = TOL[dtype] * (20 if dtype in ("float16", "bfloat16") else 10)
    close(fx.grad, tx.grad, tol)
    for f, t in ((fw, tw), (fb, tb)):
        if f is not None:
            assert f.grad.dtype == f.dtype
            close(f.grad, t.grad, tol * max(1, shape[0]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_mixed_reduced_input_with_float_parameters(dtype):
    x = RNG.standard_normal((5, 24))
    fx, tx = pair(x, dtype, True)
    fw, tw = pair(RNG.standard_normal(24), "float32", True)
    fb, tb = pair(RNG.standard_normal(24), "float32", True)
    fy, ty = F.layer_norm(fx, (24,), fw, fb), TF.layer_norm(tx, (24,), tw, tb)
    assert fy.dtype == DT[dtype][0]
    close(fy, ty, TOL[dtype])
    fy.sum().backward()
    ty.sum().backward()
    assert fw.grad.dtype == ft.float32 and fx.grad.dtype == DT[dtype][0]
    close(fx.grad, tx.grad, 5 * TOL[dtype])
    close(fw.grad, tw.grad, 5 * TOL[dtype])
    close(fb.grad, tb.grad, 1e-5)


def test_float64_gradients_match_finite_differences():
    x = RNG.standard_normal((3, 5))
    w, b = RNG.standard_normal(5), RNG.standard_normal(5)
    g = RNG.standard_normal((3, 5))
    fx, _ = pair(x, requires_grad=True)
    fw, _ = pair(w, requires_grad=True)
    fb, _ = pair(b, requires_grad=True)
    (F.layer_norm(fx, (5,), fw, fb) * ft.tensor(g.tolist(), dtype=ft.float64)).sum().backward()

    def loss(xv, wv, bv):
        m = xv.mean(-1, keepdims=True)
        v = ((xv - m) ** 2).mean(-1, keepdims=True)
        return (((xv - m) / np.sqrt(v + 1e-5) * wv + bv) * g).sum()

    h = 1e-6
    for arr, got in ((x, fx.grad), (w, fw.grad), (b, fb.grad)):
        num = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            up, dn = arr.copy(), arr.copy()
            up[i] += h
            dn[i] -= h
            args = [up if arr is a else a for a in (x, w, b)], [dn if arr is a else a for a in (x, w, b)]
            num[i] = (loss(*args[0]) - loss(*args[1])) / (2 * h)
        np.testing.assert_allclose(np_of(got), num, rtol=1e-6, atol=1e-6)


def test_node_name_and_edges_match_torch():
    fx = ft.randn(4, 8, requires_grad=True)
    fw = ft.randn(8, requires_grad=True)
    fb = ft.randn(8, requires_grad=True)
    tx = torch.randn(4, 8, requires_grad=True)
    tw, tb = torch.randn(8, requires_grad=True), torch.randn(8, requires_grad=True)
    for args_f, args_t in (((fw, fb), (tw, tb)), ((None, None), (None, None)), ((fw, None), (tw, None))):
        fy = F.layer_norm(fx, (8,), *args_f)
        ty = TF.layer_norm(tx, (8,), *args_t)
        assert fy.grad_fn.name() == ty.grad_fn.name() == "NativeLayerNormBackward0"
        fe = [None if n is None else n.name() for n, _ in fy.grad_fn.next_functions]
        te = [None if n is None else n.name() for n, _ in ty.grad_fn.next_functions]
        assert fe == te


def test_only_parameters_require_grad():
    x = RNG.standard_normal((6, 7))
    fx, tx = pair(x)
    fw, tw = pair(RNG.standard_normal(7), requires_grad=True)
    fb, tb = pair(RNG.standard_normal(7))
    F.layer_norm(fx, (7,), fw, fb).pow(2).sum().backward()
    TF.layer_norm(tx, (7,), tw, tb).pow(2).sum().backward()
    close(fw.grad, tw.grad, 1e-10)
    assert fx.grad is None


def test_double_backward_matches_torch():
    x = RNG.standard_normal((3, 6))
    fx, tx = pair(x, requires_grad=True)
    fw, tw = pair(RNG.standard_normal(6), requires_grad=True)
    fb, tb = pair(RNG.standard_normal(6), requires_grad=True)
    g = RNG.standard_normal((3, 6))
    fg, tg = pair(g)
    outs = []
    for lib, xx, ww, bb, gg in ((ft, fx, fw, fb, fg), (torch, tx, tw, tb, tg)):
        y = lib.nn.functional.layer_norm(xx, (6,), ww, bb)
        gx, gw = lib.autograd.grad((y * gg).sum(), (xx, ww), create_graph=True)
        (gx.pow(2).sum() + gw.pow(3).sum()).backward()
        outs.append((gx, gw, xx.grad, ww.grad, bb.grad))
    for f, t in zip(*outs):
        if t is None:
            assert f is None or float(f.abs().sum()) == 0
        else:
            close(f, t, 1e-9)


def test_non_contiguous_input_and_empty_rows():
    x = RNG.standard_normal((8, 6))
    fx, tx = pair(x, "float32", True)
    fy = F.layer_norm(fx.t(), (8,))
    ty = TF.layer_norm(tx.t(), (8,))
    close(fy, ty, 1e-5)
    fy.sum().backward()
    ty.sum().backward()
    close(fx.grad, tx.grad, 1e-5)
    fe = F.layer_norm(ft.zeros(0, 5, requires_grad=True), (5,), ft.ones(5, requires_grad=True))
    te = TF.layer_norm(torch.zeros(0, 5, requires_grad=True), (5,), torch.ones(5, requires_grad=True))
    assert tuple(fe.shape) == tuple(te.shape) == (0, 5)


def test_kernel_statistics_on_overflowing_rows_match_torch():
    # values whose squares overflow float32: PyTorch's Welford order decides NaN vs finite
    x = np.array([[3e38, -3e38, 1.0, 2.0] * 4, [1e20, 1e20, 1e20, -1e20] * 4, [np.inf, 1, 2, 3] * 4])
    fx, tx = pair(x, "float32")
    a, b = np_of(F.layer_norm(fx, (16,))), np_of(TF.layer_norm(tx, (16,)))
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-5, atol=1e-5)


def test_saved_input_modified_in_place_fails_at_backward():
    for lib in (ft, torch):
        x = lib.randn(3, 4, requires_grad=True)
        y = x * 1
        z = lib.nn.functional.layer_norm(y, (4,))
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


BAD = [
    ("weight shape", lambda L, x: L.nn.functional.layer_norm(x, (8,), L.randn(3))),
    ("bias shape", lambda L, x: L.nn.functional.layer_norm(x, (8,), None, L.randn(2, 4))),
    ("input shape", lambda L, x: L.nn.functional.layer_norm(x, (3,))),
    ("negative shape", lambda L, x: L.nn.functional.layer_norm(x, (-1,))),
    ("empty shape", lambda L, x: L.nn.functional.layer_norm(x, ())),
    ("too many dims", lambda L, x: L.nn.functional.layer_norm(x, (2, 4, 8))),
    ("weight wrong order", lambda L, x: L.nn.functional.layer_norm(x, (3,), L.randn(2))),
    ("double weight", lambda L, x: L.nn.functional.layer_norm(x, (8,), L.randn(8, dtype=L.float64))),
    ("float weight, double input", lambda L, x: L.nn.functional.layer_norm(x.double(), (8,), L.randn(8))),
    ("bf16 weight, half input", lambda L, x: L.nn.functional.layer_norm(x.half(), (8,), L.randn(8).bfloat16())),
    ("half weight, float input", lambda L, x: L.nn.functional.layer_norm(x, (8,), L.randn(8).half())),
    ("mixed before shape", lambda L, x: L.nn.functional.layer_norm(x, (8,), L.randn(8, dtype=L.float64), L.randn(3))),
    ("int input", lambda L, x: L.nn.functional.layer_norm(x.long(), (8,))),
    ("int input, float weight", lambda L, x: L.nn.functional.layer_norm(x.int(), (8,), L.randn(8))),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(case):
    _, f = case
    with pytest.raises(Exception) as te:
        f(torch, torch.randn(4, 8))
    with pytest.raises(Exception) as fe:
        f(ft, ft.randn(4, 8))
    assert type(fe.value).__name__ == type(te.value).__name__
    assert str(fe.value) == str(te.value)


def test_module_uses_native_op():
    m = ft.nn.LayerNorm(16)
    y = m(ft.randn(2, 3, 16))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
