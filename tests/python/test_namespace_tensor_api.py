"""Tensor construction and bookkeeping against PyTorch: the new_* family,
asarray/frombuffer/scalar_tensor/range, predicates, compatibility methods,
in-place view ops, legacy typed tensors, process switches, window functions
and the backends flags."""

import inspect
import math
import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import assert_same, errors_match, parity, rnd

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

A = rnd(3, 4)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ----- factories -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
@pytest.mark.parametrize("fn", [
    lambda m, x: x.new_zeros(2, 3), lambda m, x: x.new_ones((1, 2)), lambda m, x: x.new_full((2,), 3),
    lambda m, x: x.new_empty(2, 3).shape, lambda m, x: x.new_tensor([1, 0, 1]),
    lambda m, x: x.new_zeros(2, dtype=m.int16), lambda m, x: x.new_tensor(m.tensor([1.5, 2.5])),
    lambda m, x: x.new(2, 3).shape, lambda m, x: x.new().shape, lambda m, x: x.new([1, 0]),
    lambda m, x: x.new(m.Size([2, 2])).shape, lambda m, x: x.type_as(m.ones(1, dtype=m.int64)),
    lambda m, x: x.type_as(x) is x,
])
def test_new_factories(dtype, fn):
    parity(torch, fn, (A > 0).astype(dtype) if dtype == "bool" else A.astype(dtype))


def test_new_factories_requires_grad_and_device():
    x = ft.ones(2)
    assert x.new_ones(2, requires_grad=True).requires_grad
    assert x.new_zeros(2, device="meta").device.type == "meta"
    assert ft.ones(2, device="meta").new_full((3,), 1.0).device.type == "meta"
    t = ft.ones(2, requires_grad=True)
    assert not x.new_tensor(t).requires_grad


def test_asarray():
    for obj in ([1, 2], [[1.5, 2.0]], 3.0, True, (1, 2)):
        assert_same(ft.asarray(obj), torch.asarray(obj))
    assert_same(ft.asarray([1, 2], dtype=ft.float64), torch.asarray([1, 2], dtype=torch.float64))
    x = ft.ones(3)
    assert ft.asarray(x) is x
    assert ft.asarray(x, copy=True).data_ptr() != x.data_ptr()
    assert ft.asarray(x, dtype=ft.float64).dtype == ft.float64
    a = np.arange(3.0)
    shared = ft.asarray(a)
    a[0] = 9
    assert shared[0].item() == 9
    copied = ft.asarray(a, copy=True)
    a[1] = 7
    assert copied[1].item() == 1
    with pytest.raises(ValueError):
        ft.asarray(x, dtype=ft.float64, copy=False)
    assert ft.asarray([1.0], requires_grad=True).requires_grad


def test_frombuffer():
    buf = bytearray(np.arange(6, dtype=np.int32).tobytes())
    t = ft.frombuffer(buf, dtype=ft.int32)
    assert_same(t, torch.frombuffer(bytearray(buf), dtype=torch.int32))
    t[0] = 42
    assert np.frombuffer(buf, dtype=np.int32)[0] == 42
    assert_same(ft.frombuffer(buf, dtype=ft.int16, count=3, offset=2),
                torch.frombuffer(bytearray(buf), dtype=torch.int16, count=3, offset=2))
    for kw in ({"dtype": "int32", "offset": 1}, {"dtype": "int32", "count": 9}):
        with pytest.raises(ValueError):
            ft.frombuffer(buf, **{**kw, "dtype": getattr(ft, kw["dtype"])})
        with pytest.raises(ValueError):
            torch.frombuffer(bytearray(buf), **{**kw, "dtype": getattr(torch, kw["dtype"])})


@pytest.mark.parametrize("v, dtype", [(3, None), (True, None), (2.5, "float64"), (7, "int32")])
def test_scalar_tensor(v, dtype):
    assert_same(ft.scalar_tensor(v, dtype=dtype and getattr(ft, dtype)),
                torch.scalar_tensor(v, dtype=dtype and getattr(torch, dtype)))


@pytest.mark.parametrize("args, kw", [((1, 4), {}), ((0, 1, 0.25), {}), ((1, 4), {"dtype": "int64"}),
                                      ((3, 0, -0.5), {"dtype": "float64"})])
def test_range(args, kw):
    kw_ft = {k: getattr(ft, v) for k, v in kw.items()}
    kw_t = {k: getattr(torch, v) for k, v in kw.items()}
    assert_same(ft.range(*args, **kw_ft), torch.range(*args, **kw_t))


def test_range_errors_and_warning():
    errors_match(torch, lambda m: m.range(0, 1, 0))
    errors_match(torch, lambda m: m.range(3, 1, 1))
    errors_match(torch, lambda m: m.range(5), same_message=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.range(0, 2)
    assert any("torch.range is deprecated" in str(x.message) for x in w)


def test_fill_zero_functions():
    parity(torch, lambda m, x: m.fill(x, 2.5), A)
    parity(torch, lambda m, x: m.fill(x, m.tensor(1.5)), A)
    parity(torch, lambda m, x: m.fill_(x.clone(), 3), A)
    parity(torch, lambda m, x: m.zero_(x.clone()), A)
    errors_match(torch, lambda m, x: m.fill(x, m.ones(2)), A)


# ----- predicates and compat -------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, x: m.is_nonzero(x[0, :1]), lambda m, x: m.is_nonzero(m.tensor([0.0])),
    lambda m, x: m.is_same_size(x, x.t()), lambda m, x: m.is_same_size(x, x * 2),
    lambda m, x: m.is_signed(x), lambda m, x: x.byte().is_signed(), lambda m, x: x.bool().is_signed(),
    lambda m, x: x.char().is_signed(), lambda m, x: m.is_inference(x), lambda m, x: m.is_conj(x),
    lambda m, x: x.is_neg(), lambda m, x: m.resolve_conj(x) is x, lambda m, x: x.resolve_neg() is x,
    lambda m, x: m.is_complex(x), lambda m, x: m.isreal(x), lambda m, x: x.is_set_to(x),
    lambda m, x: x.is_set_to(x.view(12)), lambda m, x: x.is_set_to(x[:]), lambda m, x: x.is_distributed(),
    lambda m, x: x.is_nested, lambda m, x: x.is_quantized, lambda m, x: x.dense_dim(),
    lambda m, x: x.to_dense() is x, lambda m, x: x.const_data_ptr() == x.data_ptr(), lambda m, x: x.is_pinned(),
    lambda m, x: m.is_distributed(x), lambda m, x: m.get_device(x),
])
def test_predicates(fn):
    assert fn(ft, ft.from_numpy(A.copy())) == fn(torch, torch.from_numpy(A.copy())) if not hasattr(
        fn(torch, torch.from_numpy(A.copy())), "shape") else True
    parity(torch, fn, A)


def test_is_nonzero_errors():
    errors_match(torch, lambda m, x: m.is_nonzero(x), A, same_message=True)
    errors_match(torch, lambda m, x: x[:0].is_nonzero(), A, same_message=True)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
def test_hermitian_views(shape):
    x = rnd(*shape)
    for fn in (lambda m, t: t.H, lambda m, t: t.mH, lambda m, t: t.adjoint(), lambda m, t: m.adjoint(t)):
        try:
            expected = fn(torch, torch.from_numpy(x.copy()))
        except RuntimeError:
            errors_match(torch, fn, x, same_message=True)
            continue
        out = parity(torch, fn, x, grad=(0,))
        assert out.stride() == expected.stride()


@pytest.mark.parametrize("size", [(1, 4), (4,), (3, 1), (1, 1), (3, 4), (2, 1, 4)])
def test_sum_to_size(size):
    try:
        torch.from_numpy(A.copy()).sum_to_size(*size)
    except RuntimeError:
        errors_match(torch, lambda m, x: x.sum_to_size(*size), A, same_message=True)
        return
    parity(torch, lambda m, x: x.sum_to_size(*size), A, grad=(0,))
    parity(torch, lambda m, x: x.sum_to_size(size), A)


def test_multiply_subtract_inplace():
    parity(torch, lambda m, x: x.clone().multiply_(2.5), A)
    parity(torch, lambda m, x: x.clone().subtract_(x[0], alpha=2), A)


def test_apply_map_map2():
    parity(torch, lambda m, x: x.clone().apply_(lambda v: v * 2 + 1), A)
    parity(torch, lambda m, x: x.clone().map_(x[0], lambda a, b: a * b), A)
    parity(torch, lambda m, x: x.clone().map2_(x, x[:, :1], lambda a, b, c: a + b - c), A)
    parity(torch, lambda m, x: x.int().apply_(lambda v: v + 7), A * 3)


def test_dim_order_resize_and_module_load():
    for fn in (lambda m, x: x.dim_order(), lambda m, x: x.t().dim_order(),
               lambda m, x: x.reshape(3, 2, 2).permute(2, 0, 1).dim_order()):
        assert fn(ft, ft.from_numpy(A.copy())) == fn(torch, torch.from_numpy(A.copy()))
    parity(torch, lambda m, x: x.resize(4, 3), A)
    parity(torch, lambda m, x: x.resize_as(x.t()), A)
    parity(torch, lambda m, x: x.clone().module_load(x * 2), A)
    parity(torch, lambda m, x: x.module_load(x * 3, assign=True), A)


def test_cpu_only_answers_and_removed_methods():
    for fn in (lambda m, x: x.pin_memory(),):
        errors_match(torch, fn, A, same_message=True)
    for name, args in (("reinforce", (1,)), ("symeig", ()), ("eig", ()), ("lstsq", ("x",)), ("solve", ("x",))):
        errors_match(torch, lambda m, x: getattr(x, name)(*[x if a == "x" else a for a in args]), A,
                     same_message=True)
    assert ft.ones(1).volatile is False


def test_inplace_function_aliases():
    parity(torch, lambda m, x: m.clamp_min_(x.clone(), 0.1), A)
    parity(torch, lambda m, x: m.clamp_max_(x.clone(), 0.1), A)
    parity(torch, lambda m, x: m.index_put_(x.clone(), (m.tensor([0, 2]),), m.tensor(5.0)), A)
    parity(torch, lambda m, x: m.index_put_(x.clone(), (m.tensor([0, 0]),), m.ones(4), True), A)
    x = ft.ones(2, requires_grad=True) * 2
    assert ft.detach_(x) is x and not x.requires_grad
    parity(torch, lambda m, x: m.resize_as_(x.clone(), m.empty(2, 6)).shape, A)


# ----- in-place views (native set_) ------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, x: x.t_(), lambda m, x: x.transpose_(0, 1), lambda m, x: x.swapdims_(1, 0),
    lambda m, x: x.swapaxes_(0, -1), lambda m, x: x.unsqueeze_(1), lambda m, x: x[:1].squeeze_(),
    lambda m, x: x.reshape(3, 1, 4).squeeze_(1), lambda m, x: x.as_strided_((2, 2), (1, 4), 1),
    lambda m, x: m.as_strided_(x, (3,), (5,)),
])
def test_inplace_view_ops(fn):
    got, want = fn(ft, ft.from_numpy(A.copy())), fn(torch, torch.from_numpy(A.copy()))
    assert_same(got, want)
    assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()


def test_inplace_view_shares_storage_and_autograd_guard():
    x = ft.from_numpy(A.copy())
    ptr = x.untyped_storage().data_ptr()
    assert x.t_() is x and x.unsqueeze_(0) is x and x.as_strided_((2,), (1,)) is x
    assert x.untyped_storage().data_ptr() == ptr
    y = ft.from_numpy(A.copy())
    yptr = y.untyped_storage().data_ptr()
    y.transpose_(0, 1)
    assert y.untyped_storage().data_ptr() == yptr and y.shape == (4, 3) and y.stride() == (1, 4)
    errors_match(torch, lambda m: m.ones(2, 3, requires_grad=True).t_(), same_message=True)


def test_set_():
    def run(lib):
        src = lib.arange(10.0)
        x = lib.ones(2, 3)
        x.set_(src)
        same = x.data_ptr() == src.data_ptr()
        y = lib.ones(1).set_(src, 2, (2, 2), (1, 2))
        z = lib.ones(3).set_()
        return x, same, y, z.shape, y.storage_offset()
    got, want = run(ft), run(torch)
    assert_same(got[0], want[0])
    assert got[1] and want[1]
    assert_same(got[2], want[2])
    assert tuple(got[3]) == tuple(want[3]) and got[4] == want[4]
    errors_match(torch, lambda m: m.ones(2).set_(m.ones(2, dtype=m.int64)), same_message=True)
    errors_match(torch, lambda m: m.ones(2, 3).as_strided_((2, 2), (1, 2), 10))


# ----- legacy typed tensors ---------------------------------------------------------------

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_types(name):
    F, T = getattr(ft, name), getattr(torch, name)
    assert_same(F([1, 0, 1]).float(), T([1, 0, 1]).float())
    assert str(F([1, 0]).dtype).split(".")[-1] == str(T([1, 0]).dtype).split(".")[-1]
    assert F(2, 3).shape == T(2, 3).shape and F(2, 3).dtype == F.dtype
    assert F().shape == T().shape
    assert F(ft.Size([2])).shape == (2,)
    assert str(F.dtype).split(".")[-1] == str(T.dtype).split(".")[-1]
    assert F.is_cuda is False and F.is_sparse is False and repr(F) == repr(T)
    x, y = ft.zeros(2, dtype=F.dtype), torch.zeros(2, dtype=T.dtype)
    assert isinstance(x, F) and isinstance(y, T)
    assert isinstance(x, ft.Tensor)
    assert x.type() == y.type() == f"torch.{name}" == ft.typename(x)
    assert ft.ones(2).type(F).type() == torch.ones(2).type(T).type()
    assert ft.ones(2).type(f"torch.{name}").type() == torch.ones(2).type(f"torch.{name}").type()
    other = "DoubleTensor" if name != "DoubleTensor" else "FloatTensor"
    assert not isinstance(x, getattr(ft, other)) and not isinstance(y, getattr(torch, other))
    assert not isinstance(ft.zeros(2, dtype=F.dtype, device="meta"), F)


def test_legacy_type_errors():
    errors_match(torch, lambda m: m.FloatTensor(2, device="meta"), same_message=True)
    errors_match(torch, lambda m: m.FloatTensor(2, 3.0), same_message=True)
    errors_match(torch, lambda m: m.FloatTensor(m.ones(2, dtype=m.float64)))
    assert ft.FloatTensor(ft.ones(2)) is not None


def test_typename_and_default_tensor_type():
    for obj in (1, "s", 2.5, [1]):
        assert ft.typename(obj) == torch.typename(obj)
    assert ft.typename(ft.ones(1, dtype=ft.float16)) == "torch.HalfTensor"
    try:
        ft.set_default_tensor_type(ft.DoubleTensor)
        assert ft.ones(1).dtype == ft.float64
        ft.set_default_tensor_type("torch.FloatTensor")
        assert ft.ones(1).dtype == ft.float32
    finally:
        ft.set_default_dtype(ft.float32)
    with pytest.raises(TypeError):
        ft.set_default_tensor_type(ft.LongTensor)


# ----- process switches ---------------------------------------------------------------------

def test_constants():
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        a, b = getattr(ft, name), getattr(torch, name)
        assert (a is None and b is None) or a == b or (math.isnan(a) and math.isnan(b))


def test_deterministic_switches():
    try:
        for mode in ("default", "warn", "error", 0, 1, 2):
            ft.set_deterministic_debug_mode(mode)
            torch.set_deterministic_debug_mode(mode)
            assert ft.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert ft.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
            assert (ft.is_deterministic_algorithms_warn_only_enabled()
                    == torch.is_deterministic_algorithms_warn_only_enabled())
        ft.use_deterministic_algorithms(True, warn_only=True)
        assert ft.is_deterministic_algorithms_warn_only_enabled()
        errors_match(torch, lambda m: m.set_deterministic_debug_mode("x"), same_message=True)
        errors_match(torch, lambda m: m.set_deterministic_debug_mode(5), same_message=True)
        errors_match(torch, lambda m: m.use_deterministic_algorithms(1), same_message=True)
    finally:
        ft.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


def test_matmul_precision_threads_and_flags():
    try:
        for p in ("high", "medium", "highest"):
            ft.set_float32_matmul_precision(p)
            assert ft.get_float32_matmul_precision() == p
        with pytest.warns(UserWarning):
            ft.set_float32_matmul_precision("foo")
        assert ft.get_float32_matmul_precision() == "highest"
    finally:
        ft.set_float32_matmul_precision("highest")
    assert ft.get_num_interop_threads() >= 1
    assert isinstance(ft.set_flush_denormal(False), bool)
    ft.set_warn_always(True)
    assert ft.is_warn_always_enabled()
    ft.set_warn_always(False)
    assert not ft.is_warn_always_enabled()
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert isinstance(getattr(ft, name), bool)
    ft.init_num_threads()


def test_compile_returns_the_model():
    f = lambda x: x * 2  # noqa: E731
    assert ft.compile(f) is f
    lin = ft.nn.Linear(2, 2)
    assert ft.compile(lin, mode="reduce-overhead") is lin
    deco = ft.compile(fullgraph=True)
    assert deco(f) is f
    with pytest.raises(RuntimeError):
        ft.compile(f, mode="default", options={})
    assert list(inspect.signature(ft.compile).parameters) == list(inspect.signature(torch.compile).parameters)


def test_autocast_switches():
    assert ft.get_autocast_dtype("cpu") == ft.bfloat16 and ft.get_autocast_cpu_dtype() == ft.bfloat16
    assert ft.get_autocast_gpu_dtype() == ft.float16
    assert ft.is_autocast_cache_enabled()
    try:
        ft.set_autocast_enabled("cpu", True)
        assert ft.is_autocast_enabled("cpu") and ft.is_autocast_cpu_enabled()
        ft.set_autocast_cpu_dtype(ft.float16)
        assert ft.get_autocast_dtype("cpu") == ft.float16
        with ft.autocast("cpu", enabled=False):
            assert not ft.is_autocast_enabled("cpu")
        assert ft.is_autocast_enabled("cpu")
        ft.set_autocast_cache_enabled(False)
        assert not ft.is_autocast_cache_enabled()
    finally:
        ft.set_autocast_cpu_enabled(False)
        ft.set_autocast_dtype("cpu", ft.bfloat16)
        ft.set_autocast_cache_enabled(True)
        ft.clear_autocast_cache()
    assert not ft.is_autocast_cpu_enabled()
    assert ft.GradScaler is ft.amp.GradScaler


def test_default_device():
    assert ft.get_default_device() == ft.device("cpu")
    try:
        ft.set_default_device("meta")
        assert ft.get_default_device() == ft.device("meta")
        for t in (ft.zeros(2), ft.ones(2, 3), ft.empty(1), ft.randn(2), ft.arange(3), ft.tensor([1, 2]),
                  ft.full((2,), 1.0)):
            assert t.device.type == "meta"
        assert ft.zeros(2, device="cpu").device.type == "cpu"
    finally:
        ft.set_default_device(None)
    assert ft.zeros(1).device.type == "cpu"
    with ft.device("meta"):
        assert ft.zeros(1).device.type == "meta"
        assert ft.nn.Linear(2, 3).weight.device.type == "meta"
        with ft.device("cpu"):
            assert ft.zeros(1).device.type == "cpu"
        assert ft.get_default_device().type == "meta"
    assert ft.zeros(1).device.type == "cpu" and ft.get_default_device().type == "cpu"


# ----- windows and backends ------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, n, periodic, dtype):
    got = getattr(ft, name)(n, periodic, dtype=getattr(ft, dtype))
    want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
    assert_same(got, want, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6 if dtype == "float32" else 1e-12)


def test_window_parameters_and_errors():
    assert_same(ft.hamming_window(7, False, 0.5, 0.4), torch.hamming_window(7, False, 0.5, 0.4))
    for beta in (0.0, 3.0, 30.0, 80.0):
        assert_same(ft.kaiser_window(9, True, beta, dtype=ft.float64),
                    torch.kaiser_window(9, True, beta, dtype=torch.float64), rtol=1e-10, atol=1e-14)
    assert ft.hann_window(4, requires_grad=True).requires_grad
    assert ft.hann_window(4, device="meta").device.type == "meta"
    for name in WINDOWS:
        errors_match(torch, lambda m: getattr(m, name)(-1), same_message=True)
        errors_match(torch, lambda m: getattr(m, name)(3, dtype=m.int64), same_message=True)


def test_backends_flags():
    b = ft.backends
    assert b.cudnn.is_available() is False and b.mps.is_available() is False
    assert isinstance(b.cudnn.enabled, bool) and isinstance(b.cuda.matmul.allow_tf32, bool)
    old = b.cudnn.benchmark
    b.cudnn.benchmark = True
    assert ft.backends.cudnn.benchmark is True
    b.cudnn.benchmark = old
    with b.cudnn.flags(enabled=False, deterministic=True):
        assert b.cudnn.deterministic is True and b.cudnn.enabled is False
    assert b.cudnn.deterministic is False
    for mod in ("mkl", "mkldnn", "openmp"):
        assert getattr(b, mod).is_available() is False
    assert isinstance(b.cpu.get_cpu_capability(), str)
    import ferrotorch.backends.cudnn as cudnn_mod
    assert cudnn_mod is b.cudnn


def test_functional_module_and_backcompat_flags():
    import ferrotorch.functional as F
    import torch.functional as TF
    assert set(F.__all__) <= set(TF.__all__)
    for name in ("atleast_1d", "block_diag", "cartesian_prod", "chain_matmul", "unravel_index", "unique_consecutive"):
        assert getattr(F, name) is getattr(ft, name)
    bc = ft.utils.backcompat
    assert bc.broadcast_warning.enabled is torch.utils.backcompat.broadcast_warning.enabled is False
    bc.keepdim_warning.enabled = True
    assert bc.keepdim_warning.enabled is True
    bc.keepdim_warning.enabled = False


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
def test_from_file(tmp_path, dtype):
    path = str(tmp_path / "data.bin")
    np.arange(12, dtype=np.float32).tofile(path)
    for size in (0, 3, 6):
        assert_same(ft.from_file(path, size=size, dtype=getattr(ft, dtype)),
                    torch.from_file(path, size=size, dtype=getattr(torch, dtype)))
    shared = ft.from_file(path, shared=True, size=4, dtype=ft.float32)
    shared[0] = 42.0
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0
    private = ft.from_file(path, shared=False, size=4, dtype=ft.float32)
    private[1] = -1.0
    assert np.fromfile(path, dtype=np.float32)[1] == 1.0
    errors_match(torch, lambda m: m.from_file(path, size=100, dtype=m.float32), same_message=True)
    errors_match(torch, lambda m: m.from_file(path + ".missing", size=2), same_message=True)
    created = ft.from_file(path + ".new", shared=True, size=4, dtype=ft.float32)
    assert created.shape == (4,) and (tmp_path / "data.bin.new").stat().st_size == 16


def test_accelerator_error_class():
    assert issubclass(ft.AcceleratorError, RuntimeError)
