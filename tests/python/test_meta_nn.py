"""Convolutions and poolings on the `meta` device: both are structured kernel families
of the backend seam (`ConvKernels`, `PoolKernels`), so on meta they compute only output
metadata. Shapes, dtypes, strides of the results and of the gradients, the autograd node
names, and the error classes for bad arguments must be PyTorch's meta results."""

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

from test_meta_device import _compare, _meta, _same_meta  # noqa: E402


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


CONVS = [
    ("conv1d", (2, 4, 9), (6, 4, 3), {}),
    ("conv1d", (4, 9), (6, 4, 3), {"padding": "same"}),
    ("conv2d", (2, 4, 9, 8), (6, 2, 3, 2), {"groups": 2, "stride": 2, "padding": 1}),
    ("conv2d", (1, 3, 7, 7), (5, 3, 3, 3), {"dilation": 2}),
    ("conv2d", (0, 3, 7, 7), (5, 3, 3, 3), {}),
    ("conv3d", (1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"stride": (1, 2, 1)}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), {"groups": 2, "padding": 1}),
    ("conv_transpose3d", (1, 2, 3, 4, 5), (2, 3, 2, 2, 2), {"dilation": 2}),
    # a kernel larger than the padded input: both raise RuntimeError
    ("conv2d", (1, 3, 2, 2), (5, 3, 3, 3), {}),
    # channel mismatch
    ("conv2d", (1, 4, 5, 5), (5, 3, 3, 3), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("i", range(len(CONVS)))
def test_convolutions_on_meta(i, dtype):
    name, xs, ws, kw = CONVS[i]
    _compare(lambda lib: getattr(lib.nn.functional, name)(_meta(lib, xs, dtype), _meta(lib, ws, dtype), **kw), strides=True)
    _compare(lambda lib: getattr(lib.nn.functional, name)(
        _meta(lib, xs, dtype), _meta(lib, ws, dtype), _meta(lib, (ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0],), dtype), **kw))


def _grads(lib, fn, shapes, **kw):
    ts = [lib.empty(s, device="meta", requires_grad=True) for s in shapes]
    out = fn(lib)(*ts, **kw)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return out, [t.grad for t in ts]


@pytest.mark.parametrize("name,shapes,kw", [
    ("conv2d", [(2, 4, 9, 8), (6, 2, 3, 2), (6,)], {"groups": 2, "stride": 2, "padding": 1}),
    ("conv1d", [(2, 4, 9), (6, 4, 3)], {}),
    ("conv3d", [(1, 2, 5, 6, 7), (3, 2, 2, 3, 2), (3,)], {}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 2, 3, 3), (2,)], {"stride": 2}),
])
def test_convolution_backward_on_meta(name, shapes, kw):
    fn = lambda lib: getattr(lib.nn.functional, name)  # noqa: E731
    (o1, g1), (o2, g2) = _grads(ft, fn, shapes, **kw), _grads(torch, fn, shapes, **kw)
    _same_meta(o1, o2, strides=True)
    assert _node(o1) == _node(o2) == "ConvolutionBackward0"
    for a, b in zip(g1, g2):
        _same_meta(a, b, strides=True)


def test_conv_module_on_meta():
    def run(lib):
        m = lib.nn.Conv2d(3, 8, 3, padding=1, device="meta")
        return m(lib.empty(2, 3, 10, 10, device="meta"))
    o1, o2 = run(ft), run(torch)
    _same_meta(o1, o2, strides=True)


POOLS = [
    ("max_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2}),
    ("max_pool2d", (2, 3, 9, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("max_pool2d", (3, 9, 8), {"kernel_size": 2, "dilation": 2}),
    ("max_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2}),
    ("avg_pool1d", (2, 3, 9), {"kernel_size": 3, "padding": 1}),
    ("avg_pool2d", (2, 3, 9, 8), {"kernel_size": 3, "stride": 2, "ceil_mode": True, "count_include_pad": False}),
    ("avg_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2, "divisor_override": 3}),
    ("adaptive_avg_pool1d", (2, 3, 9), {"output_size": 4}),
    ("adaptive_avg_pool2d", (2, 3, 9, 8), {"output_size": (3, 5)}),
    ("adaptive_avg_pool3d", (1, 2, 5, 6, 7), {"output_size": 2}),
    ("adaptive_max_pool1d", (2, 3, 9), {"output_size": 4}),
    ("adaptive_max_pool2d", (2, 3, 9, 8), {"output_size": (3, 5)}),
    ("adaptive_max_pool3d", (1, 2, 5, 6, 7), {"output_size": 2}),
    # bad arguments: a window larger than the input, padding over half the kernel
    ("max_pool2d", (1, 1, 2, 2), {"kernel_size": 3}),
    ("avg_pool2d", (1, 1, 5, 5), {"kernel_size": 2, "padding": 2}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
@pytest.mark.parametrize("i", range(len(POOLS)))
def test_poolings_on_meta(i, dtype):
    name, xs, kw = POOLS[i]
    _compare(lambda lib: getattr(lib.nn.functional, name)(_meta(lib, xs, dtype), **kw), strides=True)


@pytest.mark.parametrize("name,xs,kw", [
    ("max_pool2d", (2, 3, 9, 8), {"kernel_size": 3, "stride": 2, "return_indices": True}),
    ("adaptive_max_pool2d", (2, 3, 9, 8), {"output_size": 3, "return_indices": True}),
    ("max_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2, "return_indices": True}),
])
def test_max_pool_indices_on_meta(name, xs, kw):
    def run(lib):
        return getattr(lib.nn.functional, name)(_meta(lib, xs, "float32"), **kw)
    (v1, i1), (v2, i2) = run(ft), run(torch)
    _same_meta(v1, v2, strides=True)
    _same_meta(i1, i2, strides=True)


@pytest.mark.parametrize("name,xs,kw", [
    ("max_pool2d", (2, 3, 9, 8), {"kernel_size": 3, "stride": 2}),
    ("avg_pool2d", (2, 3, 9, 8), {"kernel_size": 2}),
    ("adaptive_avg_pool2d", (2, 3, 9, 8), {"output_size": 3}),
    ("adaptive_max_pool2d", (2, 3, 9, 8), {"output_size": 3}),
    ("max_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2}),
    ("avg_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2}),
])
def test_pooling_backward_on_meta(name, xs, kw):
    fn = lambda lib: getattr(lib.nn.functional, name)  # noqa: E731
    (o1, g1), (o2, g2) = _grads(ft, fn, [xs], **kw), _grads(torch, fn, [xs], **kw)
    _same_meta(o1, o2, strides=True)
    assert _node(o1) == _node(o2)
    _same_meta(g1[0], g2[0], strides=True)


def test_cnn_forward_and_backward_on_meta():
    # Shape inference through a small CNN: convolution, batch of poolings, linear head.
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
            lib.nn.Conv2d(8, 4, 3), lib.nn.AdaptiveAvgPool2d(2), lib.nn.Flatten(), lib.nn.Linear(16, 5),
        ).to("meta")
        out = model(lib.empty(2, 3, 12, 12, device="meta"))
        out.sum().backward()
        return out, [p.grad for p in model.parameters()]

    (o1, g1), (o2, g2) = run(ft), run(torch)
    _same_meta(o1, o2)
    assert len(g1) == len(g2)
    for a, b in zip(g1, g2):
        _same_meta(a, b, strides=True)


# Composite ops whose CPU path checks or reads values: on meta they skip the value checks
# (as PyTorch's meta kernels do) and give PyTorch's output metadata.
COMPOSITES = [
    lambda lib: lib.nn.functional.cross_entropy(lib.empty(3, 5, device="meta"), lib.empty(3, dtype=lib.long, device="meta")),
    lambda lib: lib.nn.functional.nll_loss(lib.empty(3, 5, device="meta"), lib.empty(3, dtype=lib.long, device="meta"), reduction="none"),
    lambda lib: lib.multinomial(lib.empty(3, 4, device="meta"), 2),
    lambda lib: lib.multinomial(lib.empty(4, device="meta"), 3, replacement=True),
    lambda lib: lib.bernoulli(lib.empty(3, 2, device="meta")),
    lambda lib: lib.nn.functional.embedding_bag(
        lib.empty(4, dtype=lib.long, device="meta"), lib.empty(5, 3, device="meta"), lib.empty(2, dtype=lib.long, device="meta")),
    lambda lib: lib.nn.functional.embedding_bag(
        lib.empty(4, dtype=lib.long, device="meta"), lib.empty(5, 3, device="meta"), lib.empty(2, dtype=lib.long, device="meta"),
        mode="max"),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.empty(5, 2, 4, device="meta"), lib.empty(2, 3, dtype=lib.long, device="meta"), [5, 5], [3, 3]),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.empty(5, 2, 4, device="meta"), lib.empty(2, 3, dtype=lib.long, device="meta"), [5, 5], [3, 3], reduction="none"),
    lambda lib: lib.linalg.svdvals(lib.empty(2, 3, 5, device="meta")),
    lambda lib: lib.nn.functional.instance_norm(lib.empty(2, 3, 5, device="meta")),
    lambda lib: lib.empty(2, 3, device="meta").repeat(2, 1, 2),
    lambda lib: lib.empty(3, 4, device="meta").prod(),
]


@pytest.mark.parametrize("i", range(len(COMPOSITES)))
def test_composites_on_meta(i):
    _compare(lambda lib: COMPOSITES[i](lib), strides=True)


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 5), (4, 2), (3, 3)])
def test_svd_on_meta(shape, full):
    (u1, s1, v1), (u2, s2, v2) = (lib.linalg.svd(lib.empty(*shape, device="meta"), full_matrices=full) for lib in (ft, torch))
    for a, b in ((u1, u2), (s1, s2), (v1, v2)):
        _same_meta(a, b, strides=True)


def test_cumprod_backward_on_meta():
    def run(lib):
        x = lib.empty(3, 4, device="meta", requires_grad=True)
        x.cumprod(1).sum().backward()
        return x.grad
    _same_meta(run(ft), run(torch), strides=True)


def test_meta_storage_has_no_bytes():
    s1, s2 = ft.empty(2, device="meta").untyped_storage(), torch.empty(2, device="meta").untyped_storage()
    assert s1.data_ptr() == s2.data_ptr() == 0
    with pytest.raises(NotImplementedError):
        s2[0]
    with pytest.raises(NotImplementedError):
        s1[0]
