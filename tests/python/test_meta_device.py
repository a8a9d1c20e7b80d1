"""The `meta` device, the second backend behind the backend seam: tensors with shape, dtype
and strides but no data. Every op of the core elementwise vocabulary (`ferrotorch_core::op`:
unary and binary ops, their broadcasting and type promotion; reductions, arg-reductions,
cumulative ops and softmax), copies, fills, factories and views run on meta and must give PyTorch's meta results (shape, strides, dtype, device); reading values
raises PyTorch's errors; an op that has no meta kernel yet raises NotImplementedError, never an
internal error or a crash."""

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

# Every parameterless unary op of the op registry (`UnaryOp::REGISTRY`) that has a
# torch function, then the unary ops bound by hand with arguments.
UNARY = [name for name, function, *_ in ft._C._unary_registry() if function] + ["logit", "round", "nan_to_num"]
ACTIVATIONS = [
    ("hardtanh", {}), ("softshrink", {}), ("hardshrink", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}), ("celu", {}), ("selu", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
    ("mish", {}), ("softplus", {}), ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}),
]
BINARY = [
    "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "pow",
    "floor_divide", "remainder", "fmod", "atan2", "fmax", "fmin", "hypot", "logaddexp", "copysign",
    "logical_and", "logical_or", "logical_xor",
]
INT_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]


# The device `_meta` builds its tensors on (switched to the CPU only to ask
# PyTorch whether its CPU kernel refuses a dtype, see `_compare`).
_DEVICE = ["meta"]


def _meta(lib, shape, dtype):
    return lib.empty(shape, dtype=getattr(lib, dtype), device=_DEVICE[0])


def _same_meta(ours, ref, strides=False):
    """Shape, dtype and device of a meta result agree with PyTorch's; so do the
    strides where asked (views and copies: an elementwise result is dense
    row-major here, where PyTorch's iterator keeps the input's memory order)."""
    assert ours.device.type == "meta" and ref.device.type == "meta"
    assert tuple(ours.shape) == tuple(ref.shape)
    if strides:
        assert tuple(ours.stride()) == tuple(ref.stride())
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]


def _outcome(f):
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the class is compared
        return None, type(e).__name__


def _torch_on_cpu(call):
    _DEVICE[0] = "cpu"
    try:
        return _outcome(lambda: call(torch))[1]
    finally:
        _DEVICE[0] = "meta"


def _compare(call, strides=False):
    """Runs `call(lib)` on meta tensors in both libraries. Where PyTorch's meta
    path and its CPU kernel disagree on an input's validity (its meta kernels
    check structure, its CPU kernels also the dtypes they accept, and some of
    its Python meta decompositions raise errors of their own), ours must
    agree with one of the two: an error must be the class PyTorch raises on
    meta or on the CPU, and a result where PyTorch's meta path raises is
    accepted only when PyTorch's CPU kernel refuses the dtype
    (NotImplementedError), a check meta kernels do not run."""
    (r1, e1), (r2, e2) = _outcome(lambda: call(ft)), _outcome(lambda: call(torch))
    if e1 is not None:
        assert e1 == e2 or e1 == _torch_on_cpu(call), (e1, e2)
        return
    if e2 is not None:
        assert _torch_on_cpu(call) == "NotImplementedError", ("ours computes", e2)
        return
    _same_meta(r1, r2, strides)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_on_meta(name, dtype):
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (2, 3), dtype)))


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_on_meta_views(name):
    # A transposed, a stepped and an expanded input.
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (3, 4), "float32").t()))
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (4, 6), "float32")[:, ::2]))
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (1, 4), "float32").expand(3, 4)))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
@pytest.mark.parametrize("name,kw", ACTIVATIONS)
def test_activations_on_meta(name, kw, dtype):
    _compare(lambda lib: getattr(lib.nn.functional, name)(_meta(lib, (2, 3), dtype), **kw))


@pytest.mark.parametrize("b_dtype", DTYPES)
@pytest.mark.parametrize("a_dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("name", BINARY + INT_BINARY)
def test_binary_ops_on_meta_promote_and_broadcast(name, a_dtype, b_dtype):
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (2, 1, 3), a_dtype), _meta(lib, (4, 1), b_dtype)))


@pytest.mark.parametrize("name", BINARY + INT_BINARY)
def test_binary_ops_on_meta_with_numbers(name):
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (2, 3), "int64"), 2))
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (2, 3), "float16"), 2.5))



@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "eq", "lt", "maximum", "pow", "atan2"])
def test_binary_ops_on_meta_with_a_0d_cpu_tensor(name):
    # a 0-d CPU tensor counts as a number beside a meta tensor
    _compare(lambda lib: getattr(lib, name)(_meta(lib, (2, 3), "float32"), lib.tensor(3.0)))


@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_"])
def test_inplace_binary_on_meta(op):
    def call(lib):
        x = _meta(lib, (2, 3), "float32")
        r = getattr(x, op)(_meta(lib, (3,), "float32"))
        assert r is x
        return r
    _compare(call)


def test_operators_on_meta():
    for f in [lambda a, b: a + b, lambda a, b: a * 2 - b, lambda a, b: -a / b, lambda a, b: a ** 2,
              lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a < b]:
        _compare(lambda lib: f(_meta(lib, (2, 3), "float32"), _meta(lib, (3,), "float32")))


def test_mixing_meta_with_a_cpu_tensor_is_an_error():
    for lib in (ft, torch):
        with pytest.raises(RuntimeError, match="is not on the expected device meta"):
            _meta(lib, (2, 3), "float32") + lib.ones(2, 3)


def test_factories_and_printing():
    for make in [lambda lib: lib.empty(2, 3, device="meta"), lambda lib: lib.zeros(2, 3, device="meta"),
                 lambda lib: lib.ones(2, dtype=lib.int64, device="meta"), lambda lib: lib.full((2,), 7.0, device="meta"),
                 lambda lib: lib.empty((), device="meta"), lambda lib: lib.empty(0, device="meta"),
                 lambda lib: lib.tensor([1.0, 2.0], device="meta"), lambda lib: lib.arange(5, device="meta"),
                 lambda lib: lib.rand(2, 2, device="meta"), lambda lib: lib.zeros_like(lib.ones(3), device="meta"),
                 lambda lib: lib.empty(2, requires_grad=True, device=lib.device("meta"))]:
        ours, ref = make(ft), make(torch)
        _same_meta(ours, ref)
        assert repr(ours) == repr(ref)
        assert ours.is_meta and not ours.is_cpu and not ours.is_cuda
        assert ours.data_ptr() == 0


def test_to_meta_and_back():
    x = ft.arange(6.0).reshape(2, 3).t()
    m = x.to("meta")
    ref = torch.arange(6.0).reshape(2, 3).t().to("meta")
    _same_meta(m, ref, strides=True)
    assert m.to("meta") is m
    _same_meta(x.to(device="meta", dtype=ft.float64), ref.to(dtype=torch.float64))
    for f in [lambda t: t.cpu(), lambda t: t.to("cpu"), lambda t: t.tolist()]:
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            f(m)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        ft.ones(3, 2).copy_(m)


def test_reading_values_raises_pytorch_errors():
    m = ft.empty((), device="meta")
    for f in [lambda: m.item(), lambda: float(m), lambda: bool(m)]:
        with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
            f()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        ft.empty(2, device="meta").numpy()
    with pytest.raises(ValueError, match="Unknown device type meta for Dlpack"):
        ft.empty(2, device="meta").__dlpack_device__()


def test_copy_and_fill_into_meta():
    m = ft.empty(2, 3, device="meta")
    assert m.copy_(ft.ones(2, 3)) is m
    assert m.fill_(3.0) is m
    assert m.zero_() is m
    _same_meta(m.t().clone(), torch.empty(2, 3, device="meta").t().clone(), strides=True)
    _same_meta(m.t().contiguous(), torch.empty(2, 3, device="meta").t().contiguous(), strides=True)


def test_views_on_meta():
    for f in [lambda t: t.view(3, 2), lambda t: t.t(), lambda t: t[1], lambda t: t[:, 1:], lambda t: t.unsqueeze(0).expand(4, 2, 3),
              lambda t: t.permute(1, 0), lambda t: t.reshape(-1), lambda t: t.narrow(1, 1, 2), lambda t: t.transpose(0, 1).unsqueeze(2)]:
        _compare(lambda lib: f(_meta(lib, (2, 3), "float32")), strides=True)


def test_autograd_records_on_meta():
    x = ft.empty(2, 3, device="meta", requires_grad=True)
    y = (x.sin() * 2 + x).exp()
    assert y.is_meta and y.requires_grad and y.grad_fn is not None
    assert type(y.grad_fn).__name__ == type((torch.empty(2, 3, device="meta", requires_grad=True).sin() * 2).exp().grad_fn).__name__


def test_module_on_meta():
    lin = ft.nn.Linear(4, 5, device="meta")
    ref = torch.nn.Linear(4, 5, device="meta")
    _same_meta(lin.weight, ref.weight)
    _same_meta(lin.bias, ref.bias)
    assert repr(lin.weight) == repr(ref.weight)
    moved = ft.nn.Linear(4, 5).to("meta")
    assert moved.weight.is_meta and moved.bias.is_meta


def _flat(outs):
    """`(output, (h, c))` as `(output, h, c)`."""
    return (outs[0],) + tuple(outs[1])


@pytest.mark.parametrize("make", [
    lambda lib: (lib.nn.LSTMCell(3, 4), lambda m, x: m(x)),
    lambda lib: (lib.nn.GRUCell(3, 4), lambda m, x: (m(x),)),
    lambda lib: (lib.nn.LSTM(3, 4, num_layers=2), lambda m, x: _flat(m(x.unsqueeze(0).expand(5, 2, 3)))),
    lambda lib: (lib.nn.GRU(3, 4, batch_first=True, bidirectional=True), lambda m, x: m(x.unsqueeze(1).expand(2, 5, 3))),
])
def test_recurrent_layers_on_meta(make):
    # The fused cells are a kernel family of the backend (RnnKernels): on meta
    # every recurrent layer computes its outputs' metadata, forward and backward.
    def run(lib):
        lib.manual_seed(0)
        m, call = make(lib)
        m = m.to("meta")
        x = lib.empty(2, 3, device="meta", requires_grad=True)
        outs = call(m, x)
        sum(o.sum() for o in outs).backward()
        return list(outs) + [x.grad] + [p.grad for p in m.parameters()]

    r1, r2 = run(ft), run(torch)
    assert len(r1) == len(r2)
    for a, b in zip(r1, r2):
        _same_meta(a, b)


PRODUCTS = [
    lambda lib, d: lib.mm(_meta(lib, (2, 3), d), _meta(lib, (3, 4), d)),
    lambda lib, d: lib.bmm(_meta(lib, (5, 2, 3), d), _meta(lib, (5, 3, 4), d)),
    lambda lib, d: lib.matmul(_meta(lib, (3,), d), _meta(lib, (3,), d)),
    lambda lib, d: lib.matmul(_meta(lib, (2, 3), d), _meta(lib, (3,), d)),
    lambda lib, d: lib.matmul(_meta(lib, (3,), d), _meta(lib, (3, 4), d)),
    lambda lib, d: lib.matmul(_meta(lib, (6, 2, 3), d), _meta(lib, (3, 4), d)),
    lambda lib, d: lib.matmul(_meta(lib, (2, 3), d), _meta(lib, (6, 3, 4), d)),
    lambda lib, d: lib.matmul(_meta(lib, (2, 1, 2, 3), d), _meta(lib, (5, 3, 4), d)),
    lambda lib, d: lib.matmul(_meta(lib, (2, 3), d).t(), _meta(lib, (2, 4), d)),
    lambda lib, d: lib.addmm(_meta(lib, (4,), d), _meta(lib, (2, 3), d), _meta(lib, (3, 4), d), beta=0.5, alpha=2),
    lambda lib, d: lib.baddbmm(_meta(lib, (5, 2, 4), d), _meta(lib, (5, 2, 3), d), _meta(lib, (5, 3, 4), d)),
    lambda lib, d: lib.nn.functional.linear(_meta(lib, (7, 3), d), _meta(lib, (4, 3), d), _meta(lib, (4,), d)),
    lambda lib, d: lib.mm(_meta(lib, (2, 3), d), _meta(lib, (4, 4), d)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
@pytest.mark.parametrize("i", range(len(PRODUCTS)))
def test_matrix_products_on_meta(i, dtype):
    _compare(lambda lib: PRODUCTS[i](lib, dtype))


def test_model_forward_and_backward_on_meta():
    # Shape inference of a whole model: forward, loss, backward, all on meta.
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4)).to("meta")
        x = lib.empty(5, 8, device="meta")
        out = model(x)
        loss = (out.softmax(1) * out).sum()
        loss.backward()
        return out, [p.grad for p in model.parameters()]

    (o1, g1), (o2, g2) = run(ft), run(torch)
    _same_meta(o1, o2)
    assert len(g1) == len(g2)
    for a, b in zip(g1, g2):
        _same_meta(a, b)


REDUCTIONS = [
    lambda t: t.sum(), lambda t: t.sum(1), lambda t: t.sum((0, 2), keepdim=True), lambda t: t.sum(1, dtype=t.double().dtype),
    lambda t: t.mean(), lambda t: t.mean(0, keepdim=True), lambda t: t.prod(1), lambda t: t.amax(2), lambda t: t.amin((0, 1)),
    lambda t: t.max(), lambda t: t.max(1)[0], lambda t: t.max(1)[1], lambda t: t.min(2, keepdim=True)[1], lambda t: t.argmax(1),
    lambda t: t.argmin(), lambda t: t.var(1), lambda t: t.std(), lambda t: t.var(0, correction=0, keepdim=True),
    lambda t: t.logsumexp(1), lambda t: t.norm(), lambda t: t.norm(p=3, dim=1), lambda t: t.all(), lambda t: t.any(1),
    lambda t: t.count_nonzero(1), lambda t: t.cumsum(1), lambda t: t.cumprod(2), lambda t: t.softmax(1), lambda t: t.log_softmax(2),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("i", range(len(REDUCTIONS)))
def test_reductions_on_meta(i, dtype):
    _compare(lambda lib: REDUCTIONS[i](_meta(lib, (2, 3, 4), dtype)))


def test_reductions_on_meta_views():
    for f in REDUCTIONS:
        _compare(lambda lib: f(_meta(lib, (4, 3, 2), "float32").permute(2, 1, 0)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
@pytest.mark.parametrize("fn", ["add", "sub"])
def test_add_with_alpha_on_meta(fn, dtype):
    _compare(lambda lib: getattr(lib, fn)(_meta(lib, (2, 3), dtype), _meta(lib, (3,), dtype), alpha=2))


# Normalisation (`NormKernels` behind the seam): each call takes the input's dtype and
# the dtype of its parameters and running statistics.
def _bn(lib, d, p, shape=(4, 3, 5, 5), training=True, stats=True, params=True, **kw):
    c = shape[1] if len(shape) > 1 else 3
    rm, rv = (_meta(lib, (c,), p), _meta(lib, (c,), p)) if stats else (None, None)
    w, b = (_meta(lib, (c,), p), _meta(lib, (c,), p)) if params else (None, None)
    return lib.nn.functional.batch_norm(_meta(lib, shape, d), rm, rv, w, b, training=training, **kw)


NORMS = [
    lambda lib, d, p: _bn(lib, d, p),
    lambda lib, d, p: _bn(lib, d, p, training=False),
    lambda lib, d, p: _bn(lib, d, p, stats=False, params=False),
    lambda lib, d, p: _bn(lib, d, p, shape=(6, 3)),
    lambda lib, d, p: _bn(lib, d, p, shape=(2, 3, 7), momentum=0.5, eps=1e-3),
    lambda lib, d, p: _bn(lib, d, p, shape=(0, 3, 4)),
    lambda lib, d, p: lib.nn.functional.batch_norm(
        _meta(lib, (4, 5, 3), d).permute(0, 2, 1), _meta(lib, (3,), p), _meta(lib, (3,), p), training=True),
    lambda lib, d, p: lib.nn.functional.layer_norm(_meta(lib, (2, 3, 4), d), [4], _meta(lib, (4,), p), _meta(lib, (4,), p)),
    lambda lib, d, p: lib.nn.functional.layer_norm(_meta(lib, (2, 3, 4), d), [3, 4]),
    lambda lib, d, p: lib.nn.functional.layer_norm(_meta(lib, (4, 2), d).t(), [4], _meta(lib, (4,), p)),
    lambda lib, d, p: lib.nn.functional.group_norm(_meta(lib, (2, 6, 4, 4), d), 3, _meta(lib, (6,), p), _meta(lib, (6,), p)),
    lambda lib, d, p: lib.nn.functional.group_norm(_meta(lib, (2, 6, 5), d), 2),
    lambda lib, d, p: lib.nn.functional.group_norm(_meta(lib, (2, 4), d), 4, _meta(lib, (4,), p)),
    lambda lib, d, p: lib.nn.functional.instance_norm(_meta(lib, (2, 3, 5), d), _meta(lib, (3,), p), _meta(lib, (3,), p)),
]
NORM_DTYPES = [("float32", "float32"), ("float64", "float64"), ("bfloat16", "bfloat16"), ("float16", "float32"), ("int64", "float32")]


@pytest.mark.parametrize("dtype,param_dtype", NORM_DTYPES)
@pytest.mark.parametrize("i", range(len(NORMS)))
def test_normalisation_on_meta(i, dtype, param_dtype):
    _compare(lambda lib: NORMS[i](lib, dtype, param_dtype))


NORM_ERRORS = [
    lambda lib: lib.nn.functional.batch_norm(
        _meta(lib, (4, 3), "float32"), _meta(lib, (4,), "float32"), _meta(lib, (3,), "float32"), training=True),
    lambda lib: lib.nn.functional.batch_norm(
        _meta(lib, (4, 3), "float32"), None, None, _meta(lib, (5,), "float32"), training=True),
    lambda lib: lib.nn.functional.batch_norm(_meta(lib, (4, 3), "float32"), None, None, training=False),
    lambda lib: lib.nn.functional.batch_norm(_meta(lib, (3,), "float32"), _meta(lib, (3,), "float32"), _meta(lib, (3,), "float32")),
    lambda lib: lib.nn.functional.batch_norm(_meta(lib, (1, 3), "float32"), None, None, training=True),
    lambda lib: lib.nn.functional.layer_norm(_meta(lib, (2, 3, 4), "float32"), [3]),
    lambda lib: lib.nn.functional.layer_norm(_meta(lib, (2, 3, 4), "float32"), [4], _meta(lib, (3,), "float32")),
    lambda lib: lib.nn.functional.layer_norm(_meta(lib, (2, 3, 4), "float32"), []),
    lambda lib: lib.nn.functional.group_norm(_meta(lib, (2, 6, 4), "float32"), 4),
    lambda lib: lib.nn.functional.group_norm(_meta(lib, (2, 6, 4), "float32"), 3, _meta(lib, (5,), "float32")),
    lambda lib: lib.nn.functional.group_norm(_meta(lib, (6,), "float32"), 3),
    lambda lib: lib.nn.functional.group_norm(_meta(lib, (1, 3), "float32"), 3),
]


@pytest.mark.parametrize("i", range(len(NORM_ERRORS)))
def test_normalisation_errors_on_meta(i):
    (r1, e1), (r2, e2) = _outcome(lambda: NORM_ERRORS[i](ft)), _outcome(lambda: NORM_ERRORS[i](torch))
    assert e2 is not None and e1 == e2, (e1, e2)


@pytest.mark.parametrize("dtype,param_dtype", [("float32", "float32"), ("float64", "float64"), ("bfloat16", "bfloat16"), ("float16", "float32")])
def test_native_normalisation_statistics_on_meta(dtype, param_dtype):
    # The saved statistics follow PyTorch's meta kernels, which differ from its CPU kernels
    # (batch norm: always `[C]` in the compute dtype; group norm: the input's dtype).
    def calls(lib):
        x, p = (lambda *s: _meta(lib, s, dtype)), (lambda *s: _meta(lib, s, param_dtype))
        return [
            lib.native_batch_norm(x(4, 3, 5), p(3), p(3), p(3), p(3), True, 0.1, 1e-5),
            lib.native_batch_norm(x(4, 3, 5), None, None, p(3), p(3), False, 0.1, 1e-5),
            lib.native_batch_norm(x(4, 3, 5), None, None, None, None, True, 0.1, 1e-5),
            lib.native_batch_norm(x(0, 3, 5), None, None, None, None, True, 0.1, 1e-5),
            lib.native_group_norm(x(2, 6, 4), p(6), p(6), 2, 6, 4, 3, 1e-5),
            lib.native_group_norm(x(2, 6, 4), None, None, 2, 6, 4, 2, 1e-5),
        ]

    for ours, ref in zip(calls(ft), calls(torch)):
        assert len(ours) == len(ref) == 3
        for a, b in zip(ours, ref):
            _same_meta(a, b)


@pytest.mark.parametrize("make", [
    lambda lib: (lib.nn.BatchNorm2d(3, device="meta"), (4, 3, 5, 5)),
    lambda lib: (lib.nn.BatchNorm1d(3, affine=False, device="meta"), (4, 3)),
    lambda lib: (lib.nn.LayerNorm([5, 5], device="meta"), (4, 3, 5, 5)),
    lambda lib: (lib.nn.GroupNorm(3, 6, device="meta"), (2, 6, 4)),
    lambda lib: (lib.nn.InstanceNorm1d(3, affine=True, track_running_stats=True, device="meta"), (2, 3, 7)),
])
@pytest.mark.parametrize("training", [True, False])
def test_normalisation_modules_forward_and_backward_on_meta(make, training):
    def run(lib):
        module, shape = make(lib)
        module.train(training)
        x = lib.empty(shape, device="meta", requires_grad=True)
        out = module(x)
        out.sum().backward()
        tensors = list(module.parameters()) + [b for b in module.buffers() if b is not None]
        return out, x.grad, tensors, [p.grad for p in module.parameters()], type(out.grad_fn).__name__

    (o1, gx1, t1, g1, n1), (o2, gx2, t2, g2, n2) = run(ft), run(torch)
    _same_meta(o1, o2)
    _same_meta(gx1, gx2)
    # Instance norm is still a composite on meta (its ATen form repeats the parameters).
    assert n1 == n2 or n2 == "ViewBackward0"
    assert len(t1) == len(t2) and len(g1) == len(g2)
    for a, b in zip(t1 + g1, t2 + g2):
        _same_meta(a, b)


def test_native_layer_norm_on_meta():
    # float32/float64 only: for float16/bfloat16 PyTorch's meta kernel returns float32
    # statistics where its CPU kernel (which ferrotorch follows on every device) returns the
    # input's dtype.
    for dtype in ["float32", "float64"]:
        for ns, w in [([4], True), ([3, 4], False)]:
            def call(lib):
                p = _meta(lib, ns, dtype) if w else None
                return lib.native_layer_norm(_meta(lib, (2, 3, 4), dtype), ns, p, p, 1e-5)
            for a, b in zip(call(ft), call(torch)):
                _same_meta(a, b)


def _ix(lib, shape):
    return _meta(lib, shape, "int64")


def _mask(lib, shape):
    return _meta(lib, shape, "bool")


INDEXING = [
    lambda lib: _meta(lib, (3, 4), "float32").gather(0, _ix(lib, (2, 4))),
    lambda lib: _meta(lib, (3, 4), "float32").gather(1, _ix(lib, (3, 7))),
    lambda lib: _meta(lib, (3, 4), "float32").t().gather(1, _ix(lib, (4, 2))),
    lambda lib: _meta(lib, (3, 4), "float32").scatter(0, _ix(lib, (2, 4)), _meta(lib, (2, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").scatter(1, _ix(lib, (2, 2)), 1.5),
    lambda lib: _meta(lib, (3, 4), "int64").scatter_add(0, _ix(lib, (2, 4)), _meta(lib, (2, 4), "int64")),
    lambda lib: _meta(lib, (3, 4), "float32").scatter_reduce(0, _ix(lib, (2, 4)), _meta(lib, (2, 4), "float32"), "amax"),
    lambda lib: _meta(lib, (3, 4), "float32").scatter_reduce(0, _ix(lib, (2, 4)), _meta(lib, (2, 4), "float32"), "mean", include_self=False),
    lambda lib: _meta(lib, (3, 4), "float32").index_select(1, _ix(lib, (5,))),
    lambda lib: _meta(lib, (3, 4), "bfloat16").index_select(0, _ix(lib, (2,))),
    lambda lib: _meta(lib, (3, 4), "float32").index_add(0, _ix(lib, (2,)), _meta(lib, (2, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").index_add(1, _ix(lib, (2,)), _meta(lib, (3, 2), "float32"), alpha=2),
    lambda lib: _meta(lib, (3, 4), "float32").index_copy(0, _ix(lib, (2,)), _meta(lib, (2, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").index_fill(1, _ix(lib, (2,)), 2.0),
    lambda lib: _meta(lib, (3, 4), "float32").take(_ix(lib, (2, 5))),
    lambda lib: _meta(lib, (3, 4), "float32").take_along_dim(_ix(lib, (2, 4)), 0),
    lambda lib: _meta(lib, (3, 4), "float32")[_ix(lib, (2,))],
    lambda lib: _meta(lib, (3, 4), "float32")[:, _ix(lib, (2, 3))],
    lambda lib: _meta(lib, (3, 4, 5), "float32")[_ix(lib, (2,)), :, _ix(lib, (2,))],
    lambda lib: _meta(lib, (3, 4), "float32").index_put((_ix(lib, (2,)),), _meta(lib, (4,), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").index_put((_ix(lib, (2,)), _ix(lib, (2,))), _meta(lib, (), "float32"), accumulate=True),
    lambda lib: _meta(lib, (3, 4), "float32").masked_fill(_mask(lib, (3, 4)), 1.0),
    lambda lib: _meta(lib, (3, 4), "float32").masked_fill(_mask(lib, (4,)), _meta(lib, (), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").masked_scatter(_mask(lib, (3, 4)), _meta(lib, (12,), "float32")),
    lambda lib: _meta(lib, (3, 1), "float32").masked_scatter(_mask(lib, (4,)), _meta(lib, (2, 6), "float32")),
    # Errors: bad shapes, index dtypes, ranks.
    lambda lib: _meta(lib, (3, 4), "float32").gather(0, _ix(lib, (2, 5))),
    lambda lib: _meta(lib, (3, 4), "float32").gather(0, _meta(lib, (2, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").gather(0, _ix(lib, (2,))),
    lambda lib: _meta(lib, (3, 4), "float32").scatter(0, _ix(lib, (2, 5)), _meta(lib, (2, 5), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").index_select(0, _ix(lib, (2, 2))),
    lambda lib: _meta(lib, (3, 4), "float32").index_add(0, _ix(lib, (2,)), _meta(lib, (3, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").index_copy(0, _ix(lib, (2,)), _meta(lib, (3, 4), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").take(_meta(lib, (2,), "float32")),
    lambda lib: _meta(lib, (3, 4), "float32").masked_fill(_meta(lib, (3, 4), "float32"), 1.0),
    lambda lib: _meta(lib, (3, 4), "float32").masked_fill(_mask(lib, (5,)), 1.0),
    lambda lib: _meta(lib, (3, 4), "float32")[_ix(lib, (2,)), _ix(lib, (3,))],
]


@pytest.mark.parametrize("i", range(len(INDEXING)))
def test_indexing_ops_on_meta(i):
    _compare(INDEXING[i], strides=True)


def test_inplace_indexing_on_meta():
    def setitem(lib, idx, value):
        t = _meta(lib, (3, 4), "float32")
        t[idx(lib)] = value
        return t

    _compare(lambda lib: setitem(lib, lambda lib: _ix(lib, (2,)), 1.0), strides=True)
    _compare(lambda lib: setitem(lib, lambda lib: _mask(lib, (3, 4)), 1.0), strides=True)
    _compare(lambda lib: setitem(lib, lambda lib: (slice(None), _mask(lib, (4,))), 2.0), strides=True)
    for f in [
        lambda t, lib: t.scatter_(0, _ix(lib, (2, 4)), 1.0),
        lambda t, lib: t.index_fill_(0, _ix(lib, (2,)), 1.0),
        lambda t, lib: t.masked_fill_(_mask(lib, (4,)), 1.0),
        lambda t, lib: t.index_put_((_ix(lib, (2,)),), _meta(lib, (4,), "float32"), accumulate=True),
    ]:
        _compare(lambda lib: f(_meta(lib, (3, 4), "float32"), lib), strides=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: _meta(lib, (3, 4), "float32").nonzero(),
        lambda lib: lib.argwhere(_meta(lib, (3, 4), "float32")),
        lambda lib: _meta(lib, (3, 4), "float32")[_mask(lib, (3, 4))],
        lambda lib: _meta(lib, (3, 4), "float32")[_mask(lib, (3,))],
        lambda lib: _meta(lib, (3, 4), "float32").masked_select(_mask(lib, (3, 4))),
        lambda lib: lib.unique(_meta(lib, (3, 4), "float32")),
    ],
)
def test_data_dependent_sizes_raise_on_meta(call):
    # Their output size depends on the values: PyTorch has no meta kernel.
    _, e1 = _outcome(lambda: call(ft))
    _, e2 = _outcome(lambda: call(torch))
    assert e1 == e2 == "NotImplementedError"


def _pair(r):
    return r if isinstance(r, tuple) else (r,)


ORDER_STATS = [
    lambda t: t.sort(1), lambda t: t.sort(0, descending=True), lambda t: t.sort(stable=True, dim=-1), lambda t: t.argsort(0),
    lambda t: t.topk(2, 1), lambda t: t.topk(1, 0, largest=False), lambda t: t.kthvalue(2, 1),
    lambda t: t.kthvalue(1, 0, keepdim=True), lambda t: t.median(1), lambda t: t.median(), lambda t: t.mode(1),
    lambda t: t.topk(5, 1), lambda t: t.kthvalue(5, 1), lambda t: t.kthvalue(0, 1),
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
@pytest.mark.parametrize("i", range(len(ORDER_STATS)))
def test_order_statistics_on_meta(i, dtype):
    def call(lib):
        return _pair(ORDER_STATS[i](_meta(lib, (3, 4), dtype)))

    (r1, e1), (r2, e2) = _outcome(lambda: call(ft)), _outcome(lambda: call(torch))
    assert e1 == e2, (e1, e2)
    if e1 is None:
        assert len(r1) == len(r2)
        for a, b in zip(r1, r2):
            _same_meta(a, b, strides=True)
