"""Tests for ``ferrotorch/_tensor_str.py`` against PyTorch's own ``repr``.

The formatter module is loaded straight from its file so these tests do not
need the rest of ferrotorch (nor its compiled extension) to import.  PyTorch
is the reference implementation and is optional: without it the file is
skipped.  A second section compares ``repr`` of real ferrotorch tensors with
PyTorch's and runs only when ``import ferrotorch`` works.
"""

import contextlib
import importlib
import importlib.util
import math
import pathlib
import random
import time

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the (optional) reference")

_MODULE_PATH = (
    pathlib.Path(__file__).resolve().parents[2] / "python" / "ferrotorch" / "_tensor_str.py"
)


def _load_module():
    spec = importlib.util.spec_from_file_location(
        "_ferrotorch_tensor_str_under_test", _MODULE_PATH
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ts = _load_module()


# ---------------------------------------------------------------------------
# Case definitions (plain Python data, so both libraries can build them)
# ---------------------------------------------------------------------------


class Case:
    def __init__(
        self,
        id,
        data,
        dtype=None,
        shape=None,
        requires_grad=False,
        op=None,
        opts=None,
        default_dtype=None,
    ):
        self.id = id
        self.data = data
        self.dtype = dtype  # attribute name on the library module, or None
        self.shape = shape  # reshape target (used for empty tensors)
        self.requires_grad = requires_grad
        self.op = op  # None, "add1", "mul2", "sum", "neg"
        self.opts = opts  # kwargs for set_printoptions
        self.default_dtype = default_dtype  # e.g. "float64"

    def __repr__(self):
        return self.id


def nest(flat, shape):
    """Reshape a flat Python list into nested lists of the given shape."""
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


_rng = random.Random(1234)
_gauss = [_rng.gauss(0.0, 1.0) for _ in range(2000)]
_uniform = [_rng.uniform(-50.0, 50.0) for _ in range(2000)]
_ints = [_rng.randint(-1000, 1000) for _ in range(2000)]
_bools = [_rng.random() < 0.5 for _ in range(2000)]
_arange_f = [float(i) for i in range(2000)]
_arange_i = list(range(2000))
_mixed_mag = [(_rng.uniform(-1, 1) * 10.0 ** _rng.randint(-6, 6)) for _ in range(2000)]
_with_nan = list(_gauss)
_with_nan[1] = math.nan
_with_nan[-2] = math.inf
_with_nan[500] = -math.inf

CASES = [
    # --- 0-d ----------------------------------------------------------------
    Case("0d-float-int-valued", 3.0),
    Case("0d-float-pi", 3.14159265),
    Case("0d-int", 5),
    Case("0d-int-negative", -7),
    Case("0d-bool-true", True),
    Case("0d-bool-false", False),
    Case("0d-float64", 2.5, "float64"),
    Case("0d-float16", 0.1, "float16"),
    Case("0d-bfloat16", 0.1, "bfloat16"),
    Case("0d-nan", math.nan),
    Case("0d-neg-inf", -math.inf),
    Case("0d-neg-zero", -0.0),
    Case("0d-zero", 0.0),
    Case("0d-small", 1e-5),
    Case("0d-large", 123456789.0),
    Case("0d-int8-min", -128, "int8"),
    Case("0d-uint8-max", 255, "uint8"),
    Case("0d-int32", 42, "int32"),
    # --- 1-d floats -----------------------------------------------------------
    Case("1d-float-int-valued", [1.0, 2.0, 3.0]),
    Case("1d-float-fractions", [1.5, -2.25, 3.0]),
    Case("1d-float-tenths", [0.1, 0.2, 0.3]),
    Case("1d-float-single", [7.0]),
    Case("1d-small-forces-sci", [1e-5, 1.0]),
    Case("1d-large-forces-sci", [123456789.0, 1.0]),
    Case("1d-huge-range", [1e10, 1e-10, -3.0]),
    Case("1d-ratio-exactly-1000", [1.0, 1000.0]),
    Case("1d-ratio-above-1000", [1.0, 1001.0]),
    Case("1d-ratio-above-1000-frac", [0.5, 1000.0]),
    Case("1d-int-valued-sci", [1.0, 10000.0]),
    Case("1d-exactly-1e8", [100000000.0, 200000.0]),
    Case("1d-above-1e8", [1e9, 2e8]),
    Case("1d-exactly-1e-4", [0.0001, 0.0002]),
    Case("1d-below-1e-4", [0.00009, 0.00002]),
    Case("1d-nan-inf", [math.nan, 1.5, math.inf, -math.inf]),
    Case("1d-only-nonfinite", [math.nan, math.inf, -math.inf]),
    Case("1d-nonfinite-int-valued", [math.nan, 2.0, -math.inf]),
    Case("1d-neg-zero", [0.0, -0.0, 1.0]),
    Case("1d-neg-zero-frac", [-0.0, 0.5]),
    Case("1d-only-neg-zero", [-0.0]),
    Case("1d-all-zero", [0.0, 0.0, 0.0]),
    Case("1d-subnormal-f32", [1e-40, 1.0]),
    Case("1d-f32-extremes", [3.4e38, -3.4e38]),
    Case("1d-negative-mix", [-1.0, -22.5, 333.25]),
    Case("1d-rounding", [0.00005, 0.12345, 0.99995]),
    Case("1d-wrap-60", [1.0, 2.0] * 30),
    Case("1d-wrap-100-frac", [i * 1.1 for i in range(100)]),
    Case("1d-wrap-sci", [10.0 ** (i % 12 - 6) for i in range(40)]),
    Case("1d-float64", [1.0 / 3.0, 2.0 / 3.0], "float64"),
    Case("1d-float64-extreme", [1e300, 1e-300], "float64"),
    Case("1d-float64-int-valued", [1.0, -2.0], "float64"),
    Case("1d-float16", [0.1, 65504.0, -1.5], "float16"),
    Case("1d-float16-nonfinite", [math.inf, math.nan, 1e-4], "float16"),
    Case("1d-float16-int-valued", [1.0, 2.0, 2048.0], "float16"),
    Case("1d-bfloat16", [0.1, 1e30, 3.0], "bfloat16"),
    Case("1d-bfloat16-int-valued", [1.0, 2.0, 3.0], "bfloat16"),
    Case("1d-bfloat16-frac", [0.3333, -7.25, 100.5], "bfloat16"),
    # --- 1-d ints / bools ---------------------------------------------------
    Case("1d-int64", [1, 2, 3]),
    Case("1d-int64-negative", [-1, 0, 100000]),
    Case("1d-int64-big", [2**62, -(2**63)]),
    Case("1d-int64-wrap", list(range(-50, 50))),
    Case("1d-int32", [-5, 7], "int32"),
    Case("1d-int16", [32767, -32768], "int16"),
    Case("1d-int8", [-128, 127, 0], "int8"),
    Case("1d-uint8", [0, 255, 7], "uint8"),
    Case("1d-bool", [True, False, True]),
    Case("1d-bool-all-true", [True, True, True]),
    Case("1d-bool-wrap", [i % 3 == 0 for i in range(50)]),
    # --- 2-d ------------------------------------------------------------------
    Case("2d-float", [[1.0, 2.0], [3.0, 4.0]]),
    Case("2d-float-frac", [[1.5, -2.0], [3.25, 4.0]]),
    Case("2d-float-sci", [[-1e-5, 2e3], [3.0, 4.0]]),
    Case("2d-float-sci-large", [[1.5, -2.0], [3.0, 4e5]]),
    Case("2d-int", [[1, 2], [3, 4]]),
    Case("2d-int-negative", [[-100, 2], [3, -4]]),
    Case("2d-random-10x10", nest(_gauss[:100], (10, 10))),
    Case("2d-float64", [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "float64"),
    Case("2d-wrap-rows", nest(_uniform[:120], (3, 40))),
    Case("2d-int8", [[1, -2], [-3, 4]], "int8"),
    Case("2d-uint8", [[1, 2, 3], [250, 251, 252]], "uint8"),
    Case("2d-bool", [[True, False], [False, True]]),
    Case("2d-nan", [[math.nan, 1.0], [2.5, -math.inf]]),
    Case("2d-float16", [[0.5, 1.25], [-3.0, 1000.0]], "float16"),
    Case("2d-bfloat16", [[0.5, 1.25], [-3.0, 1000.0]], "bfloat16"),
    Case("2d-1x1", [[5.0]]),
    Case("2d-column", [[1.0], [2.0], [3.0]]),
    # --- 3-d / 4-d / 5-d ------------------------------------------------------
    Case("3d-float", nest(_gauss[:24], (2, 3, 4))),
    Case("3d-int", nest(_arange_i[:8], (2, 2, 2))),
    Case("3d-bool", nest(_bools[:12], (2, 3, 2))),
    Case("3d-float64", nest(_uniform[:18], (3, 3, 2)), "float64"),
    Case("3d-int16", nest(_ints[:12], (3, 2, 2)), "int16"),
    Case("4d-float", nest(_gauss[:16], (2, 2, 2, 2))),
    Case("4d-int", nest(_arange_i[:24], (1, 2, 3, 4))),
    Case("4d-sci", nest(_mixed_mag[:24], (2, 3, 2, 2))),
    Case("5d-single", nest([2.5], (1, 1, 1, 1, 1))),
    # --- empty ----------------------------------------------------------------
    Case("empty-1d-float", []),
    Case("empty-1d-float64", [], "float64"),
    Case("empty-1d-int64", [], "int64"),
    Case("empty-1d-bool", [], "bool"),
    Case("empty-0x3-float", [], shape=(0, 3)),
    Case("empty-2x0-int32", [], "int32", shape=(2, 0)),
    Case("empty-3x0x2-float64", [], "float64", shape=(3, 0, 2)),
    Case("empty-1x0-bool", [], "bool", shape=(1, 0)),
    Case("empty-0x0-uint8", [], "uint8", shape=(0, 0)),
    # --- summarised -----------------------------------------------------------
    Case("summ-1d-arange-float", _arange_f),
    Case("summ-1d-arange-int", _arange_i),
    Case("summ-1d-gauss", _gauss),
    Case("summ-1d-mixed-magnitude", _mixed_mag),
    Case("summ-1d-nan", _with_nan),
    Case("summ-1d-bool", _bools),
    Case("summ-1d-int8", [i % 256 - 128 for i in range(2000)], "int8"),
    Case("summ-2d-40x50", nest(_uniform, (40, 50))),
    Case("summ-2d-2x1000", nest(_gauss, (2, 1000))),
    Case("summ-2d-1000x2-int", nest(_ints, (1000, 2))),
    Case("summ-3d-10x10x20", nest(_arange_f, (10, 10, 20))),
    Case("summ-3d-int", nest(_ints, (20, 10, 10))),
    Case("summ-4d", nest(_gauss, (10, 5, 8, 5))),
    Case("summ-2d-float64", nest(_mixed_mag, (50, 40)), "float64"),
    Case("summ-2d-float16", nest(_uniform, (40, 50)), "float16"),
    # --- autograd -------------------------------------------------------------
    Case("grad-leaf-1d", [1.0, 2.0], requires_grad=True),
    Case("grad-leaf-0d", 1.5, requires_grad=True),
    Case("grad-leaf-2d-float64", [[1.0, 2.5], [3.0, 4.0]], "float64", requires_grad=True),
    Case("grad-leaf-suffix-wraps", [1.2345] * 9, "float64", requires_grad=True),
    Case("grad-leaf-multiline", [1.2345] * 20, requires_grad=True),
    Case("grad-nonleaf-add", [1.0, 2.0], requires_grad=True, op="add1"),
    Case("grad-nonleaf-mul-f64", [[1.0, 2.0], [3.0, 4.0]], "float64", requires_grad=True, op="mul2"),
    Case("grad-nonleaf-sum", [1.0, 2.0, 3.0], requires_grad=True, op="sum"),
    Case("grad-nonleaf-neg", [0.5, -1.5], requires_grad=True, op="neg"),
    Case("grad-summarised", _gauss, requires_grad=True),
    # --- print options --------------------------------------------------------
    Case("opt-precision-2", [1.12345, 2.5], opts=dict(precision=2)),
    Case("opt-precision-8-f64", [1.0 / 3.0, 2.0], "float64", opts=dict(precision=8)),
    Case("opt-precision-0", [1.5, 2.25], opts=dict(precision=0)),
    Case("opt-threshold-5", list(range(10)), opts=dict(threshold=5)),
    Case("opt-threshold-5-2d", nest(_arange_f[:40], (5, 8)), opts=dict(threshold=5)),
    Case("opt-threshold-0-0d", 2.5, opts=dict(threshold=0)),
    Case("opt-edgeitems-1", _gauss, opts=dict(edgeitems=1)),
    Case("opt-edgeitems-1-3d", nest(_arange_f, (10, 10, 20)), opts=dict(edgeitems=1)),
    Case("opt-edgeitems-0-summarised", _gauss, opts=dict(edgeitems=0)),
    Case("opt-edgeitems-0-summarised-2d", nest(_gauss, (40, 50)), opts=dict(edgeitems=0)),
    Case("opt-edgeitems-0-small", [1.0, 2.0], opts=dict(edgeitems=0)),
    Case("opt-linewidth-40", [1.5] * 30, opts=dict(linewidth=40)),
    Case("opt-linewidth-200", nest(_gauss[:120], (3, 40)), opts=dict(linewidth=200)),
    Case("opt-linewidth-10-grad", [1.5, 2.5], requires_grad=True, opts=dict(linewidth=10)),
    Case("opt-sci-true", [1.0, 2.0], opts=dict(sci_mode=True)),
    Case("opt-sci-true-frac", [[0.5, 1.25], [3.0, 4.0]], opts=dict(sci_mode=True)),
    Case("opt-sci-false", [1e-5, 1e10], opts=dict(sci_mode=False)),
    Case("opt-sci-false-int-valued", [1.0, 1e12], opts=dict(sci_mode=False)),
    Case("opt-sci-true-int", [1, 2], opts=dict(sci_mode=True)),
    Case("opt-profile-short", nest(_gauss, (40, 50)), opts=dict(profile="short")),
    Case("opt-profile-full", _arange_i[:1200], opts=dict(profile="full")),
    Case("opt-profile-default", _gauss, opts=dict(profile="default")),
    # --- default dtype changed to float64 -------------------------------------
    Case("default-f64-float64", [1.0, 2.5], "float64", default_dtype="float64"),
    Case("default-f64-float32", [1.0, 2.5], "float32", default_dtype="float64"),
    Case("default-f64-empty-float64", [], "float64", default_dtype="float64"),
    Case("default-f64-empty-float32", [], "float32", default_dtype="float64"),
    Case("default-f64-int64", [1, 2], default_dtype="float64"),
    # --- complex --------------------------------------------------------------
    Case("complex64", [1 + 2j, -3.5 - 0.5j], "complex64"),
    Case("complex128", [[1 + 2j, 0j], [-1e-5j, 3 + 0j]], "complex128"),
    Case("complex64-0d", 1.5 - 2j, "complex64"),
    Case("complex64-neg-zero-imag", [complex(1.0, -0.0)], "complex64"),
    Case("complex-default-f64", [1 + 1j], "complex128", default_dtype="float64"),
]


def _build(lib, case):
    """Construct ``case`` with ``lib`` (``torch`` or ``ferrotorch``)."""
    kwargs = {}
    if case.dtype is not None:
        kwargs["dtype"] = getattr(lib, case.dtype)
    t = lib.tensor(case.data, **kwargs)
    if case.shape is not None:
        t = t.reshape(case.shape)
    if case.requires_grad:
        t.requires_grad_(True)
    if case.op == "add1":
        t = t + 1
    elif case.op == "mul2":
        t = t * 2
    elif case.op == "sum":
        t = t.sum()
    elif case.op == "neg":
        t = -t
    return t


@contextlib.contextmanager
def _torch_context(case):
    """Apply the case's print options / default dtype to torch and ``ts``."""
    old_torch = dict(vars(torch._tensor_str.PRINT_OPTS))
    old_ts = ts.get_printoptions()
    old_default = torch.get_default_dtype()
    old_getter = ts._default_dtype_getter
    try:
        if case.opts is not None:
            torch.set_printoptions(**case.opts)
            ts.set_printoptions(**case.opts)
        if case.default_dtype is not None:
            torch.set_default_dtype(getattr(torch, case.default_dtype))
            ts._default_dtype_getter = torch.get_default_dtype
        yield
    finally:
        torch.set_printoptions(**old_torch)
        ts.set_printoptions(**old_ts)
        torch.set_default_dtype(old_default)
        ts._default_dtype_getter = old_getter


# ---------------------------------------------------------------------------
# A strictly duck-typed proxy: only the documented interface is available.
# ---------------------------------------------------------------------------


class _FakeDtype:
    def __init__(self, dtype):
        self._s = str(dtype)
        self.is_floating_point = dtype.is_floating_point

    def __str__(self):
        return self._s


class _FakeDevice:
    def __init__(self, s):
        self._s = s
        self.type = s.split(":")[0]

    def __str__(self):
        return self._s


class _FakeGradFn:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _Proxy:
    """Wraps a torch tensor, exposing only the duck-typed interface."""

    def __init__(self, t, log, device="cpu"):
        self._t = t
        self._log = log
        self._device = device

    def dim(self):
        return self._t.dim()

    @property
    def shape(self):
        return tuple(self._t.shape)

    def numel(self):
        return self._t.numel()

    @property
    def dtype(self):
        return _FakeDtype(self._t.dtype)

    @property
    def device(self):
        return _FakeDevice(self._device)

    @property
    def requires_grad(self):
        return self._t.requires_grad

    @property
    def is_leaf(self):
        return self._t.is_leaf

    @property
    def grad_fn(self):
        g = self._t.grad_fn
        return None if g is None else _FakeGradFn(g.name())

    def tolist(self):
        self._log.append(self._t.numel())
        return self._t.tolist()

    def __getitem__(self, idx):
        if not isinstance(idx, (int, slice)):
            raise TypeError(f"unsupported index {idx!r}")
        return _Proxy(self._t[idx], self._log, self._device)

    def detach(self):
        return _Proxy(self._t.detach(), self._log, self._device)


# ---------------------------------------------------------------------------
# Tests against torch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_repr_matches_torch(case):
    with _torch_context(case):
        t = _build(torch, case)
        expected = repr(t)
        assert ts.tensor_repr(t) == expected
        assert str(t) == expected


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_duck_typed_proxy_matches_torch(case):
    with _torch_context(case):
        t = _build(torch, case)
        log = []
        assert ts.tensor_repr(_Proxy(t, log)) == repr(t)
        # Summarised tensors must never be converted to a list as a whole.
        if t.numel() > ts.PRINT_OPTS.threshold and ts.PRINT_OPTS.edgeitems:
            limit = (2 * ts.PRINT_OPTS.edgeitems) ** t.dim()
            assert max(log) <= limit


def test_large_tensor_is_fast_and_only_edges_are_listed():
    for shape in [(16_000_000,), (4000, 4000), (250, 250, 256)]:
        t = torch.arange(16_000_000, dtype=torch.float32).reshape(shape)
        log = []
        start = time.perf_counter()
        out = ts.tensor_repr(_Proxy(t, log))
        elapsed = time.perf_counter() - start
        assert out == repr(t)
        assert elapsed < 2.0
        assert max(log) <= 6 ** len(shape)


def test_large_tensor_direct():
    t = torch.zeros(16_000_000)
    start = time.perf_counter()
    out = ts.tensor_repr(t)
    assert time.perf_counter() - start < 2.0
    assert out == repr(t) == "tensor([0., 0., 0.,  ..., 0., 0., 0.])"


def test_non_cpu_device_suffix():
    t = torch.tensor([1.0, 2.0])
    assert ts.tensor_repr(_Proxy(t, [], device="cuda:0")) == (
        "tensor([1., 2.], device='cuda:0')"
    )
    t64 = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    assert ts.tensor_repr(_Proxy(t64, [], device="cuda:1")) == (
        "tensor([1.5000], device='cuda:1', dtype=torch.float64, requires_grad=True)"
    )


def test_device_as_plain_string():
    class P(_Proxy):
        @property
        def device(self):
            return "cuda:0"

        def detach(self):
            return P(self._t.detach(), self._log)

    assert ts.tensor_repr(P(torch.tensor([3]), [])) == "tensor([3], device='cuda:0')"


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.empty(2, 3, device="meta"),
        lambda: torch.empty(4, dtype=torch.int32, device="meta"),
        lambda: torch.empty((), dtype=torch.float64, device="meta"),
    ],
    ids=["meta-2x3", "meta-int32", "meta-0d-f64"],
)
def test_meta_tensor(make):
    t = make()
    assert ts.tensor_repr(t) == repr(t)


def test_examples():
    assert ts.tensor_repr(torch.tensor(3.0)) == "tensor(3.)"
    assert ts.tensor_repr(torch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert ts.tensor_repr(torch.tensor([True, False])) == "tensor([ True, False])"
    assert ts.tensor_repr(torch.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert ts.tensor_repr(torch.tensor([], dtype=torch.int64)) == (
        "tensor([], dtype=torch.int64)"
    )
    x = torch.tensor([1.0], requires_grad=True)
    assert ts.tensor_repr(x) == "tensor([1.], requires_grad=True)"
    assert ts.tensor_repr(x + 1) == "tensor([2.], grad_fn=<AddBackward0>)"


def test_default_printoptions_match_torch():
    old_torch = dict(vars(torch._tensor_str.PRINT_OPTS))
    saved = ts.get_printoptions()
    try:
        torch.set_printoptions(profile="default")
        ts.set_printoptions(profile="default")
        assert ts.get_printoptions() == {
            "precision": 4,
            "threshold": 1000,
            "edgeitems": 3,
            "linewidth": 80,
            "sci_mode": None,
        }
        assert ts.get_printoptions() == dict(vars(torch._tensor_str.PRINT_OPTS))
        # A freshly loaded module starts from the same defaults.
        assert _load_module().get_printoptions() == ts.get_printoptions()
    finally:
        torch.set_printoptions(**old_torch)
        ts.set_printoptions(**saved)


def test_set_printoptions_semantics_match_torch():
    calls = [
        dict(precision=2),
        dict(threshold=10, edgeitems=1),
        dict(sci_mode=True),
        dict(linewidth=120),  # sci_mode resets to None on every call
        dict(profile="short"),
        dict(profile="full", precision=6),
        dict(profile="unknown"),
        dict(profile="default"),
    ]
    old_torch = dict(vars(torch._tensor_str.PRINT_OPTS))
    old_ts = ts.get_printoptions()
    try:
        torch.set_printoptions(profile="default")
        ts.set_printoptions(profile="default")
        for kwargs in calls:
            torch.set_printoptions(**kwargs)
            ts.set_printoptions(**kwargs)
            assert ts.get_printoptions() == dict(vars(torch._tensor_str.PRINT_OPTS))
    finally:
        torch.set_printoptions(**old_torch)
        ts.set_printoptions(**old_ts)


def test_printoptions_context_manager():
    before = ts.get_printoptions()
    t = torch.tensor([1.12345])
    with ts.printoptions(precision=2):
        assert ts.get_printoptions()["precision"] == 2
        assert ts.tensor_repr(t) == "tensor([1.12])"
    assert ts.get_printoptions() == before
    assert ts.tensor_repr(t) == "tensor([1.1235])"


_FUZZ_DTYPES = [
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
    "int8", "uint8", "bool", "complex64", "complex128",
]


def _fuzz_tensor(r):
    nd = r.randint(0, 4)
    shape = tuple(
        r.choice([0, 1, 2, 3, 5, 7, 9, 13]) if r.random() < 0.95 else r.randint(1, 60)
        for _ in range(nd)
    )
    dt = getattr(torch, r.choice(_FUZZ_DTYPES))
    n = math.prod(shape)
    int_like = r.random() < 0.3

    def fval():
        if int_like:
            return r.randint(-5000, 5000) * (1 if r.random() < 0.5 else 1e-3)
        x = r.random()
        if x < 0.05:
            return math.nan
        if x < 0.08:
            return r.choice([math.inf, -math.inf])
        if x < 0.12:
            return -0.0
        if x < 0.2:
            return 0.0
        v = r.uniform(-1, 1) * 10.0 ** r.randint(-12, 12)
        return float(round(v)) if x < 0.4 else v

    if dt.is_complex:
        data = [complex(fval(), fval()) for _ in range(n)]
    elif dt.is_floating_point:
        data = [fval() for _ in range(n)]
    elif dt == torch.bool:
        data = [r.random() < 0.5 for _ in range(n)]
    else:
        info = torch.iinfo(dt)
        data = [
            r.randint(info.min, info.max) if r.random() < 0.3 else r.randint(0, 30)
            for _ in range(n)
        ]
    wide = torch.complex128 if dt.is_complex else (
        torch.float64 if dt.is_floating_point else None
    )
    t = torch.tensor(data, dtype=wide or dt).to(dt).reshape(shape)
    if (dt.is_floating_point or dt.is_complex) and r.random() < 0.2:
        t.requires_grad_(True)
        if r.random() < 0.5:
            t = t * 2
    opts = None
    if r.random() < 0.3:
        opts = dict(
            precision=r.randint(0, 8),
            threshold=r.choice([0, 5, 50, 1000]),
            edgeitems=r.randint(0, 4),
            linewidth=r.choice([10, 40, 80, 150]),
            sci_mode=r.choice([None, True, False]),
        )
    return t, opts


@pytest.mark.parametrize("seed", range(10))
def test_randomized_against_torch(seed):
    r = random.Random(seed)
    old_torch = dict(vars(torch._tensor_str.PRINT_OPTS))
    old_ts = ts.get_printoptions()
    try:
        for _ in range(200):
            t, opts = _fuzz_tensor(r)
            torch.set_printoptions(**(opts or dict(profile="default")))
            ts.set_printoptions(**(opts or dict(profile="default")))
            expected = repr(t)
            got = ts.tensor_repr(t)
            assert got == expected, (tuple(t.shape), t.dtype, opts)
    finally:
        torch.set_printoptions(**old_torch)
        ts.set_printoptions(**old_ts)


# ---------------------------------------------------------------------------
# ferrotorch vs torch (only when ferrotorch itself imports)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ferrotorch():
    ft = pytest.importorskip("ferrotorch", reason="ferrotorch is not importable")
    if not hasattr(ft, "tensor"):
        pytest.skip("ferrotorch.tensor is not available")
    return ft


def _ft_set_printoptions(ft):
    fn = getattr(ft, "set_printoptions", None)
    if fn is None:
        fn = importlib.import_module("ferrotorch._tensor_str").set_printoptions
    return fn


def _ft_get_printoptions(ft):
    fn = getattr(ft, "get_printoptions", None)
    if fn is None:
        fn = importlib.import_module("ferrotorch._tensor_str").get_printoptions
    return fn


@contextlib.contextmanager
def _ferrotorch_context(ft, case):
    set_opts = _ft_set_printoptions(ft)
    old_ft = _ft_get_printoptions(ft)()
    old_torch = dict(vars(torch._tensor_str.PRINT_OPTS))
    old_torch_default = torch.get_default_dtype()
    old_ft_default = None
    try:
        if case.opts is not None:
            torch.set_printoptions(**case.opts)
            set_opts(**case.opts)
        if case.default_dtype is not None:
            if not hasattr(ft, "set_default_dtype") or not hasattr(ft, "get_default_dtype"):
                pytest.skip("ferrotorch.set_default_dtype is not available")
            old_ft_default = ft.get_default_dtype()
            torch.set_default_dtype(getattr(torch, case.default_dtype))
            ft.set_default_dtype(getattr(ft, case.default_dtype))
        yield
    finally:
        torch.set_printoptions(**old_torch)
        set_opts(**old_ft)
        torch.set_default_dtype(old_torch_default)
        if old_ft_default is not None:
            ft.set_default_dtype(old_ft_default)


# ferrotorch has no complex dtypes (README: differences from PyTorch); the
# formatter's complex cases are checked on torch tensors above.
FT_CASES = [c for c in CASES if not (c.dtype or "").startswith("complex")]


@pytest.mark.parametrize("case", FT_CASES, ids=[c.id for c in FT_CASES])
def test_ferrotorch_repr_matches_torch(ferrotorch, case):
    with _ferrotorch_context(ferrotorch, case):
        expected = repr(_build(torch, case))
        got = repr(_build(ferrotorch, case))
        assert got == expected
