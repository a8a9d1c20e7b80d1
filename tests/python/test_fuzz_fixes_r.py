"""Fuzz classes of issue 15 (campaign of session 5, helper r), each compared with PyTorch:
hardshrink with a bool lambd, leaky_relu/rrelu gradients for a huge slope, the activations'
scalar-range checks (celu's 1/alpha), softshrink's lambd check, pdist/cdist gradients with
PyTorch's per-pair formulas (masked zero distances, NaN signs, overflow order), cdist's empty
results and dtype checks, kl_div's target gradient through xlogy, the convolution's Empty
backend (no batch or no channels) and its check order, as_strided's backward order, and
max_pool1d's dtype check on an empty batch."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


def _np(t):
    return t.detach().double().numpy() if t.dtype != t.new_zeros(()).bool().dtype else t.numpy()


def _run(lib, build, weights_seed=0):
    """(value, grads, error) of `build(lib)` -> (out, leaves); grads of a random-weighted sum."""
    try:
        out, leaves = build(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, None, type(e).__name__
    grads = None
    if leaves and out.requires_grad:
        w = np.random.default_rng(weights_seed).standard_normal(tuple(out.shape))
        gs = lib.autograd.grad((out.double() * lib.from_numpy(w)).sum(), leaves, allow_unused=True)
        grads = [None if g is None else g.double().numpy() for g in gs]
    return out, grads, None


def _check(build, rtol=1e-5, atol=1e-6, seed=0):
    o1, g1, e1 = _run(ft, build, seed)
    o2, g2, e2 = _run(torch, build, seed)
    assert e1 == e2, (e1, e2)
    if e1:
        return
    assert tuple(o1.shape) == tuple(o2.shape)
    assert str(o1.dtype).split(".")[-1] == str(o2.dtype).split(".")[-1]
    if o2.dtype != torch.bool:
        np.testing.assert_allclose(o1.detach().double().numpy(), o2.detach().double().numpy(), rtol=rtol, atol=atol)
    assert (g1 is None) == (g2 is None)
    for a, b in zip(g1 or [], g2 or []):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_hardshrink_bool_lambd_nan_gradient():
    vals = [[0.31, -0.65, 20.0], [1e30, -0.39, 3e38], [710.0, 0.25, nan], [1.17, 2.26, 0.76], [-0.5, inf, 0.34]]

    def build(lib):
        leaf = lib.tensor(vals, requires_grad=True)
        return leaf.clone()[::2].hardshrink(lib.tensor(True)), [leaf]
    _check(build)


def test_leaky_relu_gradient_with_huge_slope():
    # rrelu in eval mode with lower = -9e8: slope (lower + upper) / 2; x > 0 keeps g
    def build(lib):
        leaf = lib.tensor([0.6378943920135498, -0.5, 2.0], requires_grad=True)
        return lib.rrelu(leaf.clone(), lib.tensor(-910217743, dtype=lib.int32)), [leaf]
    _check(build)

    def build2(lib):
        leaf = lib.tensor([0.5, -0.25, 3.0], requires_grad=True)
        return lib.nn.functional.leaky_relu(leaf, -4.5e8), [leaf]
    _check(build2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("call", [
    ("celu", (1e-39,)), ("celu", (1e39,)), ("celu", (-9.183549615799121e-41,)), ("elu", (1e39,)),
    ("leaky_relu", (1e39,)), ("softplus", (1e39,)), ("softplus", (1.0, 1e39)), ("hardtanh", (-1e39, 1.0)),
    ("hardtanh", (-70000.0, 1.0)), ("rrelu", (1e39, 1e39)), ("softshrink", (70000.0,)), ("softshrink", (-1,)),
    ("softshrink", (1e40,)), ("celu", (1e-310,)),
])
def test_activation_scalar_ranges(dtype, call):
    name, args = call

    def build(lib):
        x = lib.tensor([1.0, -1.0], dtype=getattr(lib, dtype))
        return getattr(lib.nn.functional, name)(x, *args), []
    _check(build, rtol=1e-2, atol=1e-3)


def test_celu_inplace_alpha_overflow():
    for lib_name in ("ft", "torch"):
        lib = ft if lib_name == "ft" else torch
        with pytest.raises(RuntimeError, match="without overflow"):
            lib.celu_(lib.tensor(2.7), lib.tensor(-9.183549615799121e-41, dtype=lib.bfloat16))


def test_softshrink_integer_input():
    for lib in (ft, torch):
        with pytest.raises(NotImplementedError, match="softshrink_check"):
            lib.nn.functional.softshrink(lib.ones(2, dtype=lib.int64), -1.5)


PDIST_ROWS = [[-1.58, 3e38, inf], [0.22, 3e38, -0.53], [0.80, 1.17, 0.72], [-1.67, 0.61, 1e-30],
              [-88.0, -0.80, -1.29], [inf, 1e-30, -1.23]]


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, inf])
def test_pdist_gradient_formulas(p):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    x[1] = x[3]  # a zero distance: masked to 0 (not 0/0)
    x[2, 1] = x[0, 1]
    x[4, 2] = nan  # a NaN coordinate: PyTorch's sign(NaN) is NaN

    def build(lib):
        leaf = lib.tensor(x, requires_grad=True)
        return lib.pdist(leaf, p), [leaf]
    _check(build, rtol=1e-4, atol=1e-5)


def test_pdist_gradient_overflow_order():
    # grad * diff / dist rounds grad * diff first: |g| > 1.13 times 3e38 overflows (inf / inf = NaN)
    for seed in range(4):
        def build(lib):
            leaf = lib.tensor(PDIST_ROWS, requires_grad=True)
            return lib.pdist(leaf.clone()[::2]), [leaf]
        _check(build, rtol=1e-5, atol=1e-6, seed=seed)

    def build1(lib):
        leaf = lib.tensor([[-2.8, 2.0, nan], [-0.99, 0.04, 20.0], [-1.59, 0.05, -0.5], [-88.0, -1.0, 88.0]],
                          requires_grad=True)
        return lib.pdist(leaf.clone(), 1), [leaf]
    _check(build1)


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, inf])
@pytest.mark.parametrize("shapes", [((5, 4), (3, 4)), ((2, 1, 5, 4), (3, 1, 4)), ((2, 0, 3), (4, 3)),
                                    ((2, 3, 0), (4, 0)), ((1, 1, 1, 2), (1, 4, 1, 2))])
def test_cdist_gradient_formulas(p, shapes):
    rng = np.random.default_rng(5)
    s1, s2 = shapes
    x = rng.standard_normal(s1).astype(np.float32)
    y = rng.standard_normal(s2).astype(np.float32)
    if x.size and y.size:
        y.reshape(-1, s2[-1])[0] = x.reshape(-1, s1[-1])[0]  # a zero distance

    def build(lib):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        return lib.cdist(a, b, p), [a, b]
    _check(build, rtol=1e-4, atol=1e-5)


def test_cdist_gradient_infinite_distance():
    def build(lib):
        x1 = lib.tensor([[[[1.0, -4.0]]]])
        leaf = lib.tensor([[[[3e38, 20.0]], [[1.0, -20.0]], [[-inf, -0.39]], [[-0.72, 1.97]]]], requires_grad=True)
        return lib.cdist(x1, leaf.clone()), [leaf]
    _check(build)


@pytest.mark.parametrize("d1", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("d2", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shapes", [((1, 5), (0, 0, 4, 5)), ((0, 5), (3, 5)), ((2, 0), (3, 0)), ((30, 5), (3, 5)),
                                    ((2, 5), (3, 5))])
def test_cdist_empty_results_and_dtype_checks(d1, d2, shapes):
    def build(lib):
        return lib.cdist(lib.ones(shapes[0], dtype=getattr(lib, d1)), lib.ones(shapes[1], dtype=getattr(lib, d2))), []
    _check(build, rtol=1e-2, atol=1e-2)


def test_cdist_batch_mismatch_message():
    msgs = []
    for lib in (ft, torch):
        with pytest.raises(RuntimeError) as e:
            lib.cdist(lib.ones(5, 2, 3, 5), lib.ones(4, 3, 5))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("reduction", ["none", "sum", "mean", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_target_gradient(reduction, log_target):
    t = [-1.0, 0.0, 2.0, nan, inf, 0.5, -0.0]

    def build(lib):
        tt = lib.tensor(t, dtype=lib.float64, requires_grad=True)
        xx = lib.tensor(np.linspace(-1, 1, 7), requires_grad=True)
        return lib.nn.functional.kl_div(xx, tt, reduction=reduction, log_target=log_target), [xx, tt]
    with pytest.warns() if reduction == "mean" else _nullcontext():
        _check(build)


def test_kl_div_empty_broadcast_gradient():
    def build(lib):
        leaf = lib.tensor([[-1.0]], requires_grad=True)
        return lib.kl_div(lib.zeros(1, 0, dtype=lib.float64), leaf.clone()), [leaf]
    _check(build)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


CONV_CASES = [
    ("conv1d", (1, 0, 1), (1, 0, 1), None, {}), ("conv1d", (2, 0, 5), (3, 0, 2), (3,), {}),
    ("conv1d", (0, 2, 5), (3, 2, 2), (3,), {}), ("conv1d", (0, 2, 2), (0, 2, 2), None, {}),
    ("conv1d", (5, 0, 1), (5, 0, 1), None, {}), ("conv1d", (2, 0, 1), (3, 0, 2), None, {}),
    ("conv1d", (2, 0, 1), (3, 0, 2), None, {"padding": 1}), ("conv1d", (0, 4, 5), (4, 2, 2), None, {"groups": 2}),
    ("conv1d", (0, 5), (3, 0, 2), None, {}), ("conv2d", (1, 0, 1, 1), (1, 0, 1, 1), None, {}),
    ("conv2d", (0, 0, 2, 5), (0, 0, 2, 5), None, {}), ("conv3d", (2, 0, 3, 3, 3), (4, 0, 2, 2, 2), None, {}),
    ("conv3d", (0, 2, 3, 3, 3), (4, 2, 2, 2, 2), None, {}), ("conv_transpose1d", (0, 0, 5), (0, 0, 1), None, {}),
    ("conv_transpose1d", (0, 2, 5), (2, 3, 2), None, {"stride": 2}), ("conv_transpose1d", (2, 0, 5), (0, 3, 2), None, {}),
    ("conv_transpose2d", (0, 0, 2, 5), (0, 0, 2, 5), None, {}), ("conv_transpose2d", (0, 2, 2, 5), (2, 3, 2, 2), None, {}),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("bool", "float32"), ("bool", "bool"), ("int8", "int16"),
                                    ("float64", "float32"), ("bool", "uint8")])
def test_conv_empty_backend(case, dtypes):
    fn, xs, ws, bias, kw = case
    xd, wd = dtypes

    def build(lib):
        x, w = lib.ones(xs, dtype=getattr(lib, xd)), lib.ones(ws, dtype=getattr(lib, wd))
        leaves = [t.requires_grad_() for t in (x, w) if t.is_floating_point()]
        b = lib.ones(bias) if bias else None
        return getattr(lib, fn)(x, w, b, **kw), leaves
    _check(build)


@pytest.mark.parametrize("xd", ["bfloat16", "float16", "float64", "float32", "int64"])
@pytest.mark.parametrize("bd", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 2, 5), (0, 2, 5)])
def test_conv_bias_dtype(xd, bd, shape):
    if xd == bd:
        return
    for fn in ("conv1d", "conv_transpose1d"):
        def build(lib):
            x, w = lib.ones(shape, dtype=getattr(lib, xd)), lib.ones(2, 3, 2, dtype=getattr(lib, xd))
            if fn == "conv1d":
                w = lib.ones(3, 2, 2, dtype=getattr(lib, xd))
            return getattr(lib, fn)(x, w, lib.ones(3, dtype=getattr(lib, bd))), []
        _check(build, rtol=1e-2)


def test_as_strided_backward_order():
    # grad of var through a stride-0 as_strided: PyTorch sums the stride-0 dim first, then
    # index_adds in row-major order; another order overflows float32 to inf
    vals = [0.7623388171195984, 0.4979698359966278, -9.99994610111476e-41, 3.0000000054977558e+38, -2.033644914627075,
            -0.44931909441947937, 0.04288962110877037, 0.17843621969223022, 0.08260501176118851]
    for seed in range(3):
        def build(lib):
            leaf = lib.tensor(vals, requires_grad=True)
            t = leaf.clone().as_strided([5, 1, 3, 5], [1, 2, 2, 0])
            return lib.var(t, dim=2, correction=0, keepdim=False), [leaf]
        _check(build, rtol=1e-5, seed=seed)


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "float16"])
@pytest.mark.parametrize("shape", [(0, 4, 5), (2, 4, 5)])
def test_max_pool1d_dtype_before_empty(dtype, shape):
    for name in ("max_pool1d", "max_pool1d_with_indices"):
        def build(lib):
            r = getattr(lib, name)(lib.zeros(shape, dtype=getattr(lib, dtype)), 1)
            return (r[0] if isinstance(r, tuple) else r), []
        _check(build)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_pdist_no_columns_gradient(p):
    def build(lib):
        leaf = lib.zeros(3, 0, requires_grad=True)
        return lib.pdist(leaf.clone(), p), [leaf]
    _check(build)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
@pytest.mark.parametrize("bounds", [(0.1, 0.3), (1e39, 1e39), (-1e39, 1.0)])
@pytest.mark.parametrize("generator", [False, True])
def test_rrelu_training_dtype_and_bound_checks(dtype, bounds, generator):
    outcomes = []
    for lib in (ft, torch):
        g = lib.Generator().manual_seed(0) if generator else None
        try:
            r = lib.rrelu(lib.tensor([1.0, -1.0], dtype=getattr(lib, dtype)), *bounds, training=True, generator=g)
            outcomes.append(("ok", str(r.dtype).split(".")[-1], tuple(r.shape)))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]
