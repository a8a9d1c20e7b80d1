"""nn.functional layers against PyTorch: convolutions (plain and transposed),
pooling, normalisation, padding, interpolation, activations and dropout.
Values and gradients (inputs and weights) are compared with torch's; error
types too. Each case builds its NumPy inputs once and runs both libraries."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import errors_match, gradcheck, parity

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def rnd(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def F(lib):
    return lib.nn.functional


# -- convolution ---------------------------------------------------------------------------------

CONV1D = [
    # (x shape, w shape, kwargs)
    ((2, 4, 11), (6, 4, 3), {}),
    ((2, 4, 11), (6, 2, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
    ((2, 4, 10), (4, 1, 4), dict(padding="same", groups=4)),
    ((2, 4, 9), (6, 4, 2), dict(padding="valid", stride=3)),
    ((4, 7), (3, 4, 3), dict(padding=2)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CONV1D)
def test_conv1d_matches_torch(xs, ws, kw):
    x, w, b = rnd(*xs), rnd(*ws, seed=1), rnd(ws[0], seed=2)
    parity(torch, lambda m, x, w, b: F(m).conv1d(x, w, b, **kw), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)


CONV3D = [
    ((2, 4, 5, 6, 7), (6, 4, 3, 3, 3), {}),
    ((2, 4, 5, 6, 7), (6, 2, 2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2)),
    ((1, 2, 5, 4, 6), (4, 2, 2, 3, 2), dict(padding="same")),
    ((3, 4, 5, 6), (2, 3, 2, 2, 2), dict(stride=2)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CONV3D)
def test_conv3d_matches_torch(xs, ws, kw):
    x, w, b = rnd(*xs), rnd(*ws, seed=1), rnd(ws[0], seed=2)
    parity(torch, lambda m, x, w, b: F(m).conv3d(x, w, b, **kw), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-4)


CONVT1D = [
    ((2, 4, 7), (4, 3, 3), {}),
    ((2, 4, 7), (4, 3, 3), dict(stride=3, padding=2, output_padding=1, groups=2, dilation=2)),
    ((2, 4, 6), (4, 2, 4), dict(stride=2, padding=1)),
    ((4, 5), (4, 2, 2), dict(stride=2, output_padding=1)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CONVT1D)
def test_conv_transpose1d_matches_torch(xs, ws, kw):
    g = kw.get("groups", 1)
    x, w, b = rnd(*xs), rnd(*ws, seed=1), rnd(ws[1] * g, seed=2)
    parity(torch, lambda m, x, w, b: F(m).conv_transpose1d(x, w, b, **kw), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)


CONVT2D = [
    ((2, 4, 5, 6), (4, 3, 3, 3), {}),
    ((2, 4, 5, 6), (4, 3, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2))),
    ((1, 3, 4, 4), (3, 2, 4, 4), dict(stride=2, padding=1)),
    ((1, 2, 3, 3), (2, 1, 3, 3), dict(padding=2)),  # padding larger than dilation*(k-1): output is cropped
    ((3, 5, 4), (3, 2, 2, 3), dict(stride=2, output_padding=1)),  # unbatched
]


@pytest.mark.parametrize("xs,ws,kw", CONVT2D)
def test_conv_transpose2d_matches_torch(xs, ws, kw):
    g = kw.get("groups", 1)
    x, w, b = rnd(*xs), rnd(*ws, seed=1), rnd(ws[1] * g, seed=2)
    parity(torch, lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, **kw), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)


def test_conv_non_contiguous_inputs_and_weights():
    x, w = rnd(2, 9, 4), rnd(3, 5, 4, seed=1)  # both transposed in the function
    parity(torch, lambda m, x, w: F(m).conv1d(x.transpose(1, 2), w.transpose(1, 2)), x, w, grad=(0, 1), rtol=1e-4, atol=1e-5)
    x3 = rnd(1, 2, 7, 6, 5)
    parity(torch, lambda m, x: F(m).conv3d(x.transpose(2, 4), m.ones(2, 2, 2, 2, 2)), x3, grad=(0,), rtol=1e-4, atol=1e-4)
    xt = rnd(2, 6, 5, 3)
    parity(torch, lambda m, x, w: F(m).conv_transpose2d(x.permute(0, 3, 1, 2), w, stride=2), xt, rnd(3, 2, 3, 3, seed=2),
           grad=(0, 1), rtol=1e-4, atol=1e-5)


def test_conv_float64_gradcheck():
    ft.manual_seed(0)
    x = ft.randn(1, 2, 5, dtype=ft.float64, requires_grad=True)
    w = ft.randn(2, 2, 3, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda x, w: ft.nn.functional.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1, groups=2), x, w)
    x3 = ft.randn(1, 2, 3, 4, 3, dtype=ft.float64, requires_grad=True)
    w3 = ft.randn(2, 1, 2, 2, 2, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda x, w: ft.nn.functional.conv3d(x, w, stride=(1, 2, 1), padding=1, groups=2), x3, w3)


@pytest.mark.parametrize("fn,xs,ws,kw", [
    ("conv1d", (2, 3, 5, 5), (2, 3, 3), {}),                 # 4-D input
    ("conv1d", (2, 3, 5), (2, 4, 3), {}),                    # channels mismatch
    ("conv1d", (2, 3, 5), (2, 3, 3), dict(stride=2, padding="same")),
    ("conv1d", (2, 3, 5), (2, 3, 3), dict(padding="full")),
    ("conv1d", (2, 3, 2), (2, 3, 3), {}),                    # kernel larger than input
    ("conv3d", (2, 3, 5, 5), (2, 3, 3, 3, 3), {}),
    ("conv3d", (1, 4, 5, 5, 5), (2, 3, 3, 3, 3), dict(groups=2)),
    ("conv_transpose1d", (2, 3, 5), (4, 2, 3), {}),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), dict(groups=2)),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), dict(stride=2, output_padding=2)),
    ("conv_transpose2d", (2, 3, 5), (3, 2, 3, 3), dict(output_padding=1)),
])
def test_conv_errors_match_torch(fn, xs, ws, kw):
    errors_match(torch, lambda m, x, w: getattr(F(m), fn)(x, w, **kw), np.zeros(xs, "float32"), np.zeros(ws, "float32"))


# -- pooling -------------------------------------------------------------------------------------

MAXPOOL2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1)),
    dict(kernel_size=2, stride=3, ceil_mode=True),
    dict(kernel_size=(2, 3), dilation=2, ceil_mode=True),
]


@pytest.mark.parametrize("kw", MAXPOOL2D)
@pytest.mark.parametrize("shape", [(2, 3, 9, 8), (3, 7, 7)])
def test_max_pool2d_values_indices_and_grad(kw, shape):
    x = rnd(*shape)
    out = parity(torch, lambda m, x: F(m).max_pool2d(x, return_indices=True, **kw), x, grad=(0,))
    assert out[1].dtype == ft.int64
    parity(torch, lambda m, x: F(m).max_pool2d(x, **kw), x, grad=(0,))


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, dilation=3, padding=1), dict(kernel_size=4, stride=3, ceil_mode=True)])
def test_max_pool1d_matches_torch(kw):
    x = rnd(2, 3, 13)
    parity(torch, lambda m, x: F(m).max_pool1d(x, return_indices=True, **kw), x, grad=(0,))
    parity(torch, lambda m, x: F(m).max_pool1d(x[0].transpose(0, 1).contiguous().t(), **kw), x, grad=(0,))


def test_max_pool_overlapping_windows_grad_accumulates():
    # Duplicate maxima across overlapping windows: each window's gradient goes to the same element.
    x = np.array([[[1, 5, 2, 5, 0, 3, 9, 9]]], "float32")
    parity(torch, lambda m, x: F(m).max_pool1d(x, 3, 1, return_indices=True), x, grad=(0,))
    parity(torch, lambda m, x: F(m).max_pool3d(x.reshape(1, 1, 2, 2, 2), 2, 1), x, grad=(0,))


@pytest.mark.parametrize("kw", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True, divisor_override=4),
    dict(kernel_size=(2, 4), stride=(3, 1), padding=(1, 2), count_include_pad=False),
])
def test_avg_pool2d_matches_torch(kw):
    x = rnd(2, 3, 9, 8)
    parity(torch, lambda m, x: F(m).avg_pool2d(x, **kw), x, grad=(0,))
    parity(torch, lambda m, x: F(m).avg_pool2d(x[0].transpose(1, 2), **kw), x, grad=(0,))


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)])
def test_avg_pool1d_matches_torch(kw):
    parity(torch, lambda m, x: F(m).avg_pool1d(x, **kw), rnd(2, 3, 11), grad=(0,))


@pytest.mark.parametrize("size", [(4, 5), 3, (None, 2), (9, 8), (1, 1), (7, 11)])
def test_adaptive_pool2d_matches_torch(size):
    x = rnd(2, 3, 9, 8)
    parity(torch, lambda m, x: F(m).adaptive_avg_pool2d(x, size), x, grad=(0,))
    parity(torch, lambda m, x: F(m).adaptive_max_pool2d(x, size, return_indices=True), x, grad=(0,))
    parity(torch, lambda m, x: F(m).adaptive_max_pool2d(x[0].transpose(1, 2), size), x, grad=(0,))


@pytest.mark.parametrize("size", [1, 4, 5, 13])
def test_adaptive_pool1d_matches_torch(size):
    x = rnd(2, 3, 11)
    parity(torch, lambda m, x: F(m).adaptive_avg_pool1d(x, size), x, grad=(0,))
    parity(torch, lambda m, x: F(m).adaptive_max_pool1d(x, size, return_indices=True), x, grad=(0,))


def test_pool_float64_gradcheck():
    ft.manual_seed(1)
    x = ft.randn(1, 2, 5, 6, dtype=ft.float64, requires_grad=True)
    G = ft.nn.functional
    assert gradcheck(lambda x: G.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), x)
    assert gradcheck(lambda x: G.max_pool2d(x, 2, 1, 1, ceil_mode=True), x)
    assert gradcheck(lambda x: G.adaptive_avg_pool2d(x, (3, 4)), x)


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).max_pool2d(x, 3, padding=2),          # pad > half kernel
    lambda m, x: F(m).max_pool2d(x, 7),                     # output too small
    lambda m, x: F(m).max_pool2d(x[0, 0], 2),               # 2-D input
    lambda m, x: F(m).max_pool2d(x, 2, stride=0),
    lambda m, x: F(m).max_pool2d(x, 2, padding=-1),
    lambda m, x: F(m).max_pool1d(x, 2),                     # 4-D input
    lambda m, x: F(m).avg_pool2d(x, 3, padding=2),
    lambda m, x: F(m).avg_pool1d(x, 2),
    lambda m, x: F(m).adaptive_avg_pool2d(x[0, 0, 0], 2),
    lambda m, x: F(m).adaptive_max_pool2d(x[0, 0, 0], 2),
])
def test_pool_errors_match_torch(call):
    errors_match(torch, call, rnd(2, 3, 5, 5))


# -- normalisation -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((3, 4, 7), 1), ((2, 4), 4), ((2, 6, 3, 2, 2), 2)])
def test_group_norm_matches_torch(shape, groups):
    c = shape[1]
    x, w, b = rnd(*shape), rnd(c, seed=1), rnd(c, seed=2)
    parity(torch, lambda m, x, w, b: F(m).group_norm(x, groups, w, b, eps=1e-3), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)
    parity(torch, lambda m, x: F(m).group_norm(x, groups), x, grad=(0,), rtol=1e-4, atol=1e-5)


def test_instance_norm_matches_torch_including_running_stats():
    x, w, b = rnd(3, 4, 6, 5), rnd(4, seed=1), rnd(4, seed=2)
    parity(torch, lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b), x, w, b, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)
    stats = {}
    for m in (ft, torch):
        rm, rv = m.zeros(4) + 0.5, m.ones(4) * 2
        out = F(m).instance_norm(m.from_numpy(x), rm, rv, momentum=0.3)
        y = F(m).instance_norm(m.from_numpy(x), rm, rv, use_input_stats=False)
        stats[m.__name__] = (out, rm, rv, y)
    for a, t in zip(stats["ferrotorch"], stats["torch"]):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_batch_and_layer_norm_match_torch():
    x, w, b = rnd(5, 3, 4), rnd(3, seed=1), rnd(3, seed=2)
    parity(torch, lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, training=True), x, w, b, grad=(0, 1, 2),
           rtol=1e-4, atol=1e-5)
    rm, rv = rnd(3, seed=3), np.abs(rnd(3, seed=4)) + 0.5
    parity(torch, lambda m, x, rm, rv: F(m).batch_norm(x, rm, rv, training=False), x, rm, rv, grad=(0,))
    lw, lb = rnd(3, 4, seed=5), rnd(3, 4, seed=6)
    parity(torch, lambda m, x, w, b: F(m).layer_norm(x.transpose(0, 2), (5,), None, None),
           x, lw, lb, grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda m, x, w, b: F(m).layer_norm(x, (3, 4), w, b, 1e-3), x, lw, lb, grad=(0, 1, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).group_norm(x, 2),
    lambda m, x: F(m).batch_norm(x[:1, :, 0], None, None, training=True),
    lambda m, x: F(m).instance_norm(x[..., :1]),
    lambda m, x: F(m).layer_norm(x, (3,)),
])
def test_norm_errors_match_torch(call):
    errors_match(torch, call, rnd(2, 3, 4))


def test_norm_float64_gradcheck():
    ft.manual_seed(2)
    x = ft.randn(2, 4, 3, dtype=ft.float64, requires_grad=True)
    w = ft.randn(4, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda x, w: ft.nn.functional.group_norm(x, 2, w), x, w)
    assert gradcheck(lambda x, w: ft.nn.functional.instance_norm(x, weight=w), x, w)


# -- padding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", [
    ((2, 3, 7), (2, 3)),
    ((3, 7), (1, 0)),
    ((2, 3, 7), (-1, 2)),
    ((2, 3, 7), (2, -3)),
    ((2, 3, 5, 6), (1, 2, 3, 0)),
    ((3, 5, 6), (0, 2, -1, 3)),
    ((1, 2, 4, 5, 6), (1, 2, 3, 0, 2, 1)),
    ((2, 4, 5, 6), (1, 1, 0, 2, 3, 2)),
])
def test_pad_modes_match_torch(mode, shape, pads):
    x = rnd(*shape)
    parity(torch, lambda m, x: F(m).pad(x, pads, mode=mode), x, grad=(0,))
    if x.ndim - len(pads) // 2 >= 2:  # non-contiguous: swap two unpadded leading dims
        parity(torch, lambda m, x: F(m).pad(x.transpose(0, 1), pads, mode=mode), x, grad=(0,))


def test_constant_pad_value_negative_pads_and_ints():
    x = rnd(2, 3, 5, 4)
    parity(torch, lambda m, x: F(m).pad(x, (1, -2, -1, 3, 0, 1, 1, 0), value=2.5), x, grad=(0,))
    parity(torch, lambda m, x: F(m).pad(x, (-1, -1)), x, grad=(0,))
    xi = np.arange(12).reshape(3, 4)
    parity(torch, lambda m, x: F(m).pad(x, (2, 1), value=7), xi)
    parity(torch, lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), xi)


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).pad(x, (1,)),
    lambda m, x: F(m).pad(x, (1,) * 8),
    lambda m, x: F(m).pad(x, (1, 1), mode="foo"),
    lambda m, x: F(m).pad(x, (5, 0), mode="reflect"),
    lambda m, x: F(m).pad(x, (6, 0), mode="circular"),
    lambda m, x: F(m).pad(x, (1, 1), mode="reflect", value=1.0),
    lambda m, x: F(m).pad(x[0, 0], (1, 1, 1, 1), mode="replicate"),
    lambda m, x: F(m).pad(x, (-3, -3)),
])
def test_pad_errors_match_torch(call):
    errors_match(torch, call, rnd(2, 3, 5))


# -- interpolation -------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [
    dict(size=(5, 13)), dict(size=(18, 16)), dict(scale_factor=1.7), dict(scale_factor=(0.5, 2.5)),
    dict(scale_factor=1.7, recompute_scale_factor=True), dict(size=(4, 11), mode="nearest-exact"),
    dict(size=(5, 13), mode="bilinear"), dict(size=(5, 13), mode="bilinear", align_corners=True),
    dict(scale_factor=(2.3, 0.6), mode="bilinear"), dict(size=(1, 1), mode="bilinear", align_corners=True),
    dict(size=(9, 8), mode="bilinear"), dict(size=(4, 3), mode="area"),
])
def test_interpolate_2d_matches_torch(kw):
    x = rnd(2, 3, 9, 8)
    parity(torch, lambda m, x: F(m).interpolate(x, **kw), x, grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda m, x: F(m).interpolate(x.transpose(2, 3), **kw), x, grad=(0,), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kw", [dict(size=17, mode="linear"), dict(scale_factor=2.5, mode="linear", align_corners=True),
                                dict(size=4), dict(scale_factor=3)])
def test_interpolate_1d_and_3d_match_torch(kw):
    parity(torch, lambda m, x: F(m).interpolate(x, **kw), rnd(2, 3, 7), grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda m, x: F(m).interpolate(x, size=(3, 8, 5), mode="trilinear"), rnd(1, 2, 4, 5, 6), grad=(0,),
           rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).interpolate(x, size=3, scale_factor=2),
    lambda m, x: F(m).interpolate(x),
    lambda m, x: F(m).interpolate(x, size=3, align_corners=True),
    lambda m, x: F(m).interpolate(x[0], size=3, mode="bilinear"),
    lambda m, x: F(m).interpolate(x, size=3, mode="linear"),
    lambda m, x: F(m).interpolate(x, size=3, mode="foo"),
    lambda m, x: F(m).interpolate(x, size=(3, 3, 3)),
    lambda m, x: F(m).interpolate(x, scale_factor=(2, 2, 2)),
])
def test_interpolate_errors_match_torch(call):
    errors_match(torch, call, rnd(2, 3, 5, 5))


# -- activations ---------------------------------------------------------------------------------

ACTS = [
    lambda m, x: F(m).gelu(x), lambda m, x: F(m).gelu(x, approximate="tanh"), lambda m, x: F(m).silu(x),
    lambda m, x: F(m).mish(x), lambda m, x: F(m).elu(x, 0.7), lambda m, x: F(m).selu(x), lambda m, x: F(m).celu(x, 1.3),
    lambda m, x: F(m).leaky_relu(x, 0.2), lambda m, x: F(m).relu6(x * 4), lambda m, x: F(m).hardtanh(x, -0.5, 0.8),
    lambda m, x: F(m).hardsigmoid(x * 4), lambda m, x: F(m).hardswish(x * 4), lambda m, x: F(m).softplus(x, 2, 1),
    lambda m, x: F(m).softsign(x), lambda m, x: F(m).logsigmoid(x), lambda m, x: F(m).softmax(x, 1),
    lambda m, x: F(m).log_softmax(x, 0), lambda m, x: F(m).softmin(x, -1), lambda m, x: F(m).tanhshrink(x),
    lambda m, x: F(m).softshrink(x, 0.3), lambda m, x: F(m).hardshrink(x, 0.3), lambda m, x: F(m).threshold(x, 0.1, -2.0),
    lambda m, x: F(m).glu(x, 1), lambda m, x: F(m).relu(x), lambda m, x: F(m).sigmoid(x), lambda m, x: F(m).tanh(x),
    lambda m, x: F(m).normalize(x, 2.0, 0), lambda m, x: F(m).rrelu(x), lambda m, x: F(m).softmax(x, 1, dtype=m.float64),
    lambda m, x: F(m).prelu(x, m.linspace(0.1, 0.4, 4)), lambda m, x: F(m).rms_norm(x, (4,)),
    lambda m, x: F(m).pixel_shuffle(x.reshape(1, 4, 1, 3), 2), lambda m, x: F(m).local_response_norm(x.reshape(1, 3, 4), 2),
]


@pytest.mark.parametrize("i", range(len(ACTS)))
def test_activation_matches_torch(i):
    x = rnd(3, 4) * 2
    parity(torch, ACTS[i], x, grad=(0,), rtol=1e-5, atol=1e-6)
    parity(torch, lambda m, x: ACTS[i](m, x.t()), rnd(4, 3, seed=1), grad=(0,), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,args", [("relu", ()), ("elu", (0.5,)), ("leaky_relu", (0.3,)), ("hardtanh", (-0.2, 0.4)),
                                       ("celu", (1.5,)), ("selu", ()), ("silu", ()), ("relu6", ()), ("hardswish", ()),
                                       ("threshold", (0.0, 3.0))])
def test_inplace_activations_modify_input_like_torch(name, args):
    x = rnd(3, 5)
    res = []
    for m in (ft, torch):
        t = m.from_numpy(x.copy())
        out = getattr(F(m), name)(t, *args, inplace=True)
        assert out is t or out.data_ptr() == t.data_ptr()
        res.append(t.numpy().copy())
        u = m.from_numpy(x.copy())
        if hasattr(F(m), name + "_") and name not in ("silu", "relu6", "hardswish"):
            getattr(F(m), name + "_")(u, *args)
            res.append(u.numpy().copy())
    half = len(res) // 2
    for a, b in zip(res[:half], res[half:]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).gelu(x, approximate="foo"),
    lambda m, x: F(m).hardtanh(x, 2, 1),
    lambda m, x: F(m).softshrink(x, -1.0),
    lambda m, x: F(m).glu(x, 1),
])
def test_activation_errors_match_torch(call):
    errors_match(torch, call, rnd(3, 5))


# -- dropout ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn,shape", [("dropout", (40, 50)), ("dropout1d", (8, 30, 20)), ("dropout1d", (30, 20)),
                                      ("dropout2d", (8, 30, 4, 5)), ("dropout3d", (4, 30, 2, 3, 4)),
                                      ("dropout3d", (30, 2, 3, 4)), ("alpha_dropout", (40, 50)),
                                      ("feature_alpha_dropout", (8, 30, 4, 5))])
def test_dropout_variants_structure_and_seed(fn, shape):
    G = ft.nn.functional
    x = ft.ones(*shape)
    ft.manual_seed(7)
    a = getattr(G, fn)(x, 0.3, True)
    ft.manual_seed(7)
    b = getattr(G, fn)(x, 0.3, True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    an = a.numpy()
    # Same per-element semantics as torch's: one value for dropped, one for kept.
    t = getattr(torch.nn.functional, fn)(torch.ones(shape), 0.3, True).numpy()
    assert set(np.unique(an).round(5)) <= set(np.unique(t).round(5)) | set()
    assert len(np.unique(an)) == 2
    keep = an == an.max()
    draws = keep.size
    if fn in ("dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"):
        # whole channels share the draw
        unbatched = (fn == "dropout1d" and len(shape) == 2) or (fn == "dropout3d" and len(shape) == 4)
        lead = 1 if unbatched else 2
        per = keep.reshape(*shape[:lead], -1)
        assert (per.all(-1) | ~per.any(-1)).all()
        draws = int(np.prod(shape[:lead]))
    # keep rate 0.7 within 4.5 binomial standard deviations
    assert abs(keep.mean() - 0.7) < 4.5 * np.sqrt(0.21 / draws)
    # Outside training, and with p=0, the input comes back unchanged.
    np.testing.assert_array_equal(getattr(G, fn)(x, 0.3, False).numpy(), np.ones(shape, "float32"))
    # p=1 zeroes the (non-alpha) variants, as torch.
    if "alpha" not in fn:
        np.testing.assert_array_equal(getattr(G, fn)(x, 1.0, True).numpy(), np.zeros(shape, "float32"))


def test_dropout_gradient_uses_the_same_mask():
    ft.manual_seed(3)
    x = ft.ones(6, 20, 3, requires_grad=True)
    y = ft.nn.functional.dropout1d(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


@pytest.mark.parametrize("call", [
    lambda m, x: F(m).dropout(x, 1.5),
    lambda m, x: F(m).dropout2d(x, -0.1),
    lambda m, x: F(m).dropout1d(x.unsqueeze(0)),
])
def test_dropout_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors_match(torch, call, rnd(2, 3, 4, 5))


# -- modules -------------------------------------------------------------------------------------


def _copy(fm, tm):
    fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 9)),
    (lambda m: m.nn.Conv1d(4, 6, 3, padding=2, padding_mode="circular"), (2, 4, 9)),
    (lambda m: m.nn.Conv2d(4, 6, 3, padding="same", padding_mode="reflect"), (2, 4, 7, 6)),
    (lambda m: m.nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), bias=False), (1, 2, 4, 5, 4)),
    (lambda m: m.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), (2, 4, 7)),
    (lambda m: m.nn.ConvTranspose2d(4, 3, (3, 2), stride=2, dilation=(1, 2)), (2, 4, 5, 4)),
    (lambda m: m.nn.GroupNorm(2, 4), (2, 4, 5)),
    (lambda m: m.nn.InstanceNorm1d(4, affine=True, track_running_stats=True), (2, 4, 5)),
    (lambda m: m.nn.InstanceNorm2d(4), (4, 5, 3)),
    (lambda m: m.nn.BatchNorm3d(2), (3, 2, 2, 3, 2)),
    (lambda m: m.nn.MaxPool1d(3, 2, 1, ceil_mode=True), (2, 4, 9)),
    (lambda m: m.nn.MaxPool2d(3, 2, 1, dilation=1, ceil_mode=True), (2, 4, 9, 7)),
    (lambda m: m.nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 4, 9)),
    (lambda m: m.nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=3), (2, 4, 9, 7)),
    (lambda m: m.nn.AdaptiveAvgPool1d(4), (2, 4, 9)),
    (lambda m: m.nn.AdaptiveAvgPool2d((3, None)), (2, 4, 9, 7)),
    (lambda m: m.nn.AdaptiveMaxPool2d(3), (2, 4, 9, 7)),
    (lambda m: m.nn.Upsample(scale_factor=2, mode="bilinear"), (2, 4, 3, 5)),
    (lambda m: m.nn.UpsamplingNearest2d(size=(4, 7)), (2, 4, 3, 5)),
    (lambda m: m.nn.ReflectionPad2d((1, 2, 0, 1)), (2, 4, 3, 5)),
    (lambda m: m.nn.ReplicationPad1d(2), (2, 4, 3)),
    (lambda m: m.nn.ConstantPad2d(1, 3.5), (2, 4, 3)),
    (lambda m: m.nn.PReLU(4), (2, 4, 3)),
    (lambda m: m.nn.Sequential(m.nn.ELU(0.5), m.nn.CELU(), m.nn.SELU(), m.nn.GELU("tanh"), m.nn.Hardtanh(-2, 2),
                               m.nn.Softplus(2), m.nn.Mish(), m.nn.Hardswish(), m.nn.LeakyReLU(0.2), m.nn.Softshrink(),
                               m.nn.GLU(1), m.nn.Softmin(1)), (3, 8)),
])
def test_modules_match_torch(make, shape):
    torch.manual_seed(0)
    tm, fm = make(torch), make(ft)
    assert list(fm.state_dict().keys()) == list(tm.state_dict().keys())
    for (k, a), (_, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    _copy(fm, tm)
    x = rnd(*shape)
    tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    ty, fy = tm(tx), fm(fx)
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    up = rnd(*ty.shape, seed=9)
    (ty * torch.tensor(up)).sum().backward()
    (fy * ft.tensor(up)).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (k, p), (_, q) in zip(fm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=k)
    for (k, a), (_, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)


def test_conv_module_init_bounds_match_torch():
    for make in (lambda m: m.nn.Conv1d(6, 4, 5, groups=2), lambda m: m.nn.ConvTranspose2d(6, 4, 3, groups=2),
                 lambda m: m.nn.Conv3d(2, 3, 2)):
        t, f = make(torch), make(ft)
        fan_in = torch.nn.init._calculate_fan_in_and_fan_out(t.weight)[0]
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(f.weight.detach().numpy()).max() <= bound + 1e-6
        assert np.abs(f.bias.detach().numpy()).max() <= bound + 1e-6
        assert np.abs(f.weight.detach().numpy()).max() > bound / 3
