"""Parity of creation, conversion and dtype/device/Size utilities with PyTorch.

Every expected value comes from running the same call in PyTorch (or NumPy).
Random streams differ from PyTorch's by design, so random factories are
compared by shape, dtype, range, statistics and reproducibility.
"""

import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the reference implementation")
np = pytest.importorskip("numpy", reason="NumPy arrays are creation inputs")
import ferrotorch as ft  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def fdt(name):
    return getattr(ft, name)


def tdt(name):
    return getattr(torch, name)


def same(f, t, *, strides=True, approx=None):
    """Same values (exactly, or within ``approx`` relative), dtype, shape and strides."""
    assert str(f.dtype) == str(t.dtype), (f.dtype, t.dtype)
    assert tuple(f.shape) == tuple(t.shape)
    if strides:
        assert f.stride() == t.stride(), (f.stride(), t.stride())
    if approx is None:
        fl, tl = f.tolist(), t.tolist()
        assert fl == tl or _nan_equal(fl, tl), (fl, tl)
    else:
        np.testing.assert_allclose(np.array(f.double().tolist()), np.array(t.double().tolist()), rtol=approx, atol=approx)


def _nan_equal(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_nan_equal(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def both(fn):
    """Runs ``fn(lib)`` on both libraries, silencing PyTorch's warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(ft), fn(torch)


# ----------------------------------------------------------------------------
# tensor()
# ----------------------------------------------------------------------------

DATA = [
    ("scalar_int", 3),
    ("scalar_float", 2.5),
    ("scalar_bool", True),
    ("scalar_neg", -7),
    ("big_int", 2**62),
    ("list_int", [1, 2, 3]),
    ("list_float", [1.0, 2.5, -3.25]),
    ("list_bool", [True, False, True]),
    ("mixed_int_float", [1, 2.5, 3]),
    ("mixed_bool_int", [True, 2, 3]),
    ("mixed_bool_float", [True, 2.5]),
    ("nested", [[1, 2, 3], [4, 5, 6]]),
    ("nested_float_late", [[1, 2], [3, 4.0]]),
    ("nested_3d", [[[1], [2]], [[3], [4]]]),
    ("tuple", (1, 2, 3)),
    ("nested_tuple", ((1.0, 2.0), (3.0, 4.0))),
    ("mixed_list_tuple", [(1, 2), [3, 4]]),
    ("empty", []),
    ("empty_nested", [[], []]),
    ("empty_nested_2", [[[]]]),
    ("single", [5]),
    ("inf_nan", [float("inf"), float("-inf")]),
    ("numpy_scalars", [np.float64(1.5), np.int64(2)]),
]


@pytest.mark.parametrize("name,data", DATA, ids=[d[0] for d in DATA])
def test_tensor_from_python_data(name, data):
    f, t = both(lambda L: L.tensor(data))
    same(f, t)
    assert f._base is None
    assert f.requires_grad is False


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,data", [
    ("ints", [[0, 1, 2], [3, 4, 5]]),
    ("floats", [0.0, 1.5, 2.75, 100.25]),
    ("bools", [True, False]),
    ("scalar", 7),
], ids=lambda x: x if isinstance(x, str) else None)
def test_tensor_with_dtype(dtype, name, data):
    f, t = both(lambda L: L.tensor(data, dtype=getattr(L, dtype)))
    same(f, t)


def test_tensor_dtype_inference_follows_default_dtype():
    old_f, old_t = ft.get_default_dtype(), torch.get_default_dtype()
    try:
        ft.set_default_dtype(ft.float64)
        torch.set_default_dtype(torch.float64)
        same(ft.tensor([1.5, 2]), torch.tensor([1.5, 2]))
        same(ft.tensor(1), torch.tensor(1))
        same(ft.arange(0.0, 1.0, 0.5), torch.arange(0.0, 1.0, 0.5))
        same(ft.zeros(2), torch.zeros(2))
        assert str(ft.get_default_dtype()) == str(torch.get_default_dtype())
    finally:
        ft.set_default_dtype(old_f)
        torch.set_default_dtype(old_t)
    assert str(ft.get_default_dtype()) == "torch.float32"


NP_ARRAYS = [
    ("f64", lambda: np.arange(6, dtype=np.float64).reshape(2, 3)),
    ("f32", lambda: np.array([1.5, -2.0], dtype=np.float32)),
    ("f16", lambda: np.array([1.5, -2.0], dtype=np.float16)),
    ("i64", lambda: np.arange(4, dtype=np.int64)),
    ("i32", lambda: np.arange(4, dtype=np.int32)),
    ("i16", lambda: np.arange(4, dtype=np.int16)),
    ("i8", lambda: np.arange(-2, 2, dtype=np.int8)),
    ("u8", lambda: np.arange(250, 256, dtype=np.uint8)),
    ("bool", lambda: np.array([True, False])),
    ("transposed", lambda: np.arange(6.0).reshape(2, 3).T),
    ("strided", lambda: np.arange(10.0)[::3]),
    ("0d", lambda: np.array(3.5)),
    ("empty", lambda: np.zeros((0, 3))),
]


@pytest.mark.parametrize("name,make", NP_ARRAYS, ids=[a[0] for a in NP_ARRAYS])
def test_tensor_from_numpy_copies(name, make):
    a = make()
    f, t = ft.tensor(a), torch.tensor(a)
    same(f, t)
    # tensor() always copies.
    if a.size:
        assert f.data_ptr() != a.ctypes.data
    for dtype in ["float32", "int64", "float64"]:
        same(ft.tensor(a, dtype=fdt(dtype)), torch.tensor(a, dtype=tdt(dtype)))
    # as_tensor shares when no conversion is needed.
    fa, ta = ft.as_tensor(a), torch.as_tensor(a)
    same(fa, ta)
    assert (fa.data_ptr() == a.ctypes.data) == (ta.data_ptr() == a.ctypes.data)


def test_tensor_from_tensors():
    for src in [lambda L: L.arange(6.0).view(2, 3), lambda L: L.arange(6).view(2, 3).t(), lambda L: L.tensor(True)]:
        f, t = both(lambda L: L.tensor(src(L)))
        same(f, t)
        f2, t2 = both(lambda L: L.tensor(src(L), dtype=L.float64))
        same(f2, t2)
    # A copy, never an alias.
    x = ft.arange(3.0)
    y = ft.tensor(x)
    y.fill_(9)
    assert x.tolist() == [0.0, 1.0, 2.0]
    # Lists of 0-d / one-element tensors.
    f, t = both(lambda L: L.tensor([L.tensor(1.5), L.tensor(2.0)]))
    same(f, t)
    f, t = both(lambda L: L.tensor([L.tensor(1), L.tensor(2)]))
    same(f, t)
    f, t = both(lambda L: L.tensor([[L.tensor(1, dtype=L.int32)], [L.tensor(2, dtype=L.int32)]]))
    same(f, t)


def test_as_tensor():
    x, tx = ft.arange(4.0), torch.arange(4.0)
    assert ft.as_tensor(x) is x
    assert torch.as_tensor(tx) is tx
    f, t = ft.as_tensor(x, dtype=ft.int64), torch.as_tensor(tx, dtype=torch.int64)
    same(f, t)
    same(ft.as_tensor([1, 2.5]), torch.as_tensor([1, 2.5]))
    same(ft.as_tensor(3), torch.as_tensor(3))


def test_tensor_requires_grad_and_device():
    f, t = both(lambda L: L.tensor([1.0, 2.0], requires_grad=True, device="cpu"))
    assert f.requires_grad == t.requires_grad
    assert str(f.device) == str(t.device)
    f, t = both(lambda L: L.tensor([1.0], device=L.device("cpu")))
    assert f.device == ft.device("cpu")


# ----------------------------------------------------------------------------
# zeros / ones / full / empty / *_like
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1)])
def test_constant_factories(fn, shape):
    if shape:
        f, t = both(lambda L: getattr(L, fn)(*shape))
        assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()
        assert str(f.dtype) == str(t.dtype)
        if fn != "empty":
            same(f, t)
    else:
        # ``zeros()`` with no size at all is an error in PyTorch.
        with pytest.raises(TypeError):
            getattr(torch, fn)()
        with pytest.raises(TypeError):
            getattr(ft, fn)()
    f, t = both(lambda L: getattr(L, fn)(shape))
    assert f._version == t._version == 0
    assert tuple(f.shape) == tuple(t.shape)
    f, t = both(lambda L: getattr(L, fn)(L.Size(shape)))
    assert tuple(f.shape) == tuple(t.shape)
    for dtype in DTYPES:
        f, t = both(lambda L: getattr(L, fn)(shape, dtype=getattr(L, dtype)))
        assert str(f.dtype) == str(t.dtype)
        assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()
        if fn != "empty":
            same(f, t)
    f, t = both(lambda L: getattr(L, fn)(2, 3, requires_grad=True))
    assert f.requires_grad and t.requires_grad


FILLS = [1, -3, 2.5, True, False, 0, float("inf"), float("nan"), 2**40]


@pytest.mark.parametrize("value", FILLS, ids=repr)
def test_full_infers_dtype(value):
    f, t = both(lambda L: L.full((2, 3), value))
    same(f, t)
    for dtype in ["float32", "float64", "int64", "int32", "bool", "float16"]:
        if isinstance(value, float) and not math.isfinite(value) and dtype in ("int64", "int32"):
            continue  # float -> int conversion of inf/nan is undefined
        try:
            t = torch.full([2], value, dtype=tdt(dtype))
        except RuntimeError:
            # e.g. 2**40 does not fit an int32: PyTorch refuses, so must we.
            with pytest.raises(RuntimeError, match="overflow"):
                ft.full([2], value, dtype=fdt(dtype))
            continue
        same(ft.full([2], value, dtype=fdt(dtype)), t)


def test_full_with_tensor_fill_value():
    f, t = both(lambda L: L.full((2,), L.tensor(3)))
    same(f, t)


@pytest.mark.parametrize("src", [
    lambda L: L.arange(6.0).view(2, 3),
    lambda L: L.arange(6).view(2, 3),
    lambda L: L.arange(6.0).view(2, 3).t(),
    lambda L: L.arange(24.0).view(2, 3, 4).permute(2, 0, 1),
    lambda L: L.arange(12.0).view(3, 4)[:, ::2],
    lambda L: L.arange(3.0).view(3, 1).expand(3, 4),
    lambda L: L.tensor(2.5),
    lambda L: L.zeros(0, 3),
], ids=["contig", "int", "transposed", "permuted", "strided", "expanded", "0d", "empty"])
def test_like_factories(src):
    fx, tx = both(src)
    for fn in ["zeros_like", "ones_like", "empty_like"]:
        f, t = getattr(ft, fn)(fx), getattr(torch, fn)(tx)
        assert tuple(f.shape) == tuple(t.shape)
        assert f.stride() == t.stride(), (fn, f.stride(), t.stride())
        assert str(f.dtype) == str(t.dtype)
        if fn != "empty_like":
            same(f, t)
        f, t = getattr(ft, fn)(fx, dtype=ft.int32), getattr(torch, fn)(tx, dtype=torch.int32)
        assert str(f.dtype) == str(t.dtype)
        assert f.stride() == t.stride()
    same(ft.full_like(fx, 7), torch.full_like(tx, 7))
    same(ft.full_like(fx, 7.5, dtype=ft.float64), torch.full_like(tx, 7.5, dtype=torch.float64))
    if fx.is_floating_point():
        for fn in ["rand_like", "randn_like"]:
            f, t = getattr(ft, fn)(fx), getattr(torch, fn)(tx)
            assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()
            assert str(f.dtype) == str(t.dtype)


# ----------------------------------------------------------------------------
# arange / linspace / logspace / eye
# ----------------------------------------------------------------------------

ARANGES = [
    (5,), (0,), (1, 4), (2, 11, 3), (10, 0, -3), (10, 0, -1), (-5, 5, 2), (0, 10, 20),
    (1.0, 2.5, 0.5), (0, 1, 0.1), (-1.5, 1), (0.5,), (0, -1, -0.25), (1, 2, 0.3),
    (0, 5, 1.5), (3, 3), (3, 3, -1), (2.5, 0.5, -0.5), (0, 1e-3, 1e-4), (-3, 3.0),
    (True, 5), (0, 2**40, 2**38),
]


@pytest.mark.parametrize("args", ARANGES, ids=repr)
def test_arange(args):
    f, t = both(lambda L: L.arange(*args))
    is_float = any(isinstance(a, float) for a in args)
    same(f, t, approx=1e-6 if is_float else None)
    for dtype in ["float64", "int64", "int32", "int16", "uint8", "float32", "float16", "bfloat16"]:
        try:
            t = torch.arange(*args, dtype=tdt(dtype))
        except Exception as e:
            # int64 truncates the step first: 0.5 becomes 0, a ValueError.
            with pytest.raises(type(e)):
                ft.arange(*args, dtype=fdt(dtype))
            continue
        f = ft.arange(*args, dtype=fdt(dtype))
        approx = None if not dtype.startswith(("float", "bfloat")) else (1e-6 if dtype in ("float32", "float64") else 1e-2)
        same(f, t, approx=approx)


def test_arange_length_rule():
    # PyTorch's length is ceil((end - start) / step), computed in double.
    for start, end, step in [(0, 1, 0.1), (0, 0.3, 0.1), (1, 1.3, 0.1), (0, 10, 3), (0, 10, 2.5), (-1, 1, 0.4)]:
        f, t = both(lambda L: L.arange(start, end, step))
        assert f.shape == t.shape


def test_arange_errors():
    for args, kw in [((0, 1, 0), {}), ((0.0, 1.0, 0.0), {}), ((0, 10, -1), {}), ((10, 0), {}), ((0, float("inf")), {}),
                     ((3,), {"dtype": "bool"}), ((0, 1, 0.5), {"dtype": "int64"}), ((0, 10, -1), {"dtype": "int32"})]:
        tkw = {k: tdt(v) for k, v in kw.items()}
        fkw = {k: fdt(v) for k, v in kw.items()}
        with pytest.raises(Exception) as te:
            torch.arange(*args, **tkw)
        with pytest.raises(Exception) as fe:
            ft.arange(*args, **fkw)
        assert type(fe.value) is type(te.value), (args, kw, fe.value, te.value)
        assert str(fe.value).split(":")[0] == str(te.value).split(":")[0]


def test_arange_keywords_and_tensors():
    same(ft.arange(start=1, end=4), torch.arange(start=1, end=4))
    same(ft.arange(0, 6, step=2), torch.arange(0, 6, step=2))
    same(ft.arange(ft.tensor(4)), torch.arange(torch.tensor(4)))


LINSPACES = [
    (0, 1, 5), (0, 1, 1), (0, 1, 0), (-3, 7, 6), (1, 0, 4), (0, 10, 11), (2.5, -2.5, 3), (0, 1, 2),
]


@pytest.mark.parametrize("args", LINSPACES, ids=repr)
def test_linspace(args):
    for dtype in [None, "float64", "float32"]:
        kw = {} if dtype is None else {"dtype": dtype}
        f, t = both(lambda L: L.linspace(*args, **{k: getattr(L, v) for k, v in kw.items()}))
        same(f, t, approx=1e-6)


def test_linspace_integer_dtypes():
    for args in [(0, 10, 6), (-4, 4, 5), (0, 100, 11)]:
        f, t = both(lambda L: L.linspace(*args, dtype=L.int64))
        same(f, t)


@pytest.mark.parametrize("args,kw", [
    ((0, 2, 3), {}), ((0, 3, 4), {"base": 2}), ((-1, 1, 5), {}), ((1, 0, 3), {"base": 3.0}), ((0, 1, 1), {}),
], ids=repr)
def test_logspace(args, kw):
    f, t = both(lambda L: L.logspace(*args, **kw))
    same(f, t, approx=1e-6)
    f, t = both(lambda L: L.logspace(*args, **kw, dtype=L.float64))
    same(f, t, approx=1e-12)


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (1,), (3, 0)], ids=repr)
def test_eye(args):
    f, t = both(lambda L: L.eye(*args))
    same(f, t)
    for dtype in ["int64", "bool", "float64"]:
        f, t = both(lambda L: L.eye(*args, dtype=getattr(L, dtype)))
        same(f, t)


# ----------------------------------------------------------------------------
# random factories
# ----------------------------------------------------------------------------

def test_rand_shapes_dtypes_and_range():
    for shape in [(), (0,), (5,), (2, 3)]:
        f, t = both(lambda L: L.rand(shape))
        assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype) and f.stride() == t.stride()
    for dtype in FLOATS:
        f, t = both(lambda L: L.rand(1000, dtype=getattr(L, dtype)))
        assert str(f.dtype) == str(t.dtype)
        v = np.array(f.double().tolist())
        assert v.min() >= 0.0 and v.max() <= 1.0
    v = np.array(ft.rand(100000, dtype=ft.float64).tolist())
    assert v.min() >= 0.0 and v.max() < 1.0
    assert abs(v.mean() - 0.5) < 0.01
    assert abs(v.var() - 1 / 12) < 0.005
    assert len(np.unique(v)) > 99000


def test_randn_statistics():
    for dtype in FLOATS:
        f, t = both(lambda L: L.randn(2, 3, dtype=getattr(L, dtype)))
        assert str(f.dtype) == str(t.dtype) and tuple(f.shape) == tuple(t.shape)
    v = np.array(ft.randn(200000, dtype=ft.float64).tolist())
    assert abs(v.mean()) < 0.01
    assert abs(v.std() - 1) < 0.01
    # Roughly normal tails: about 4.55% beyond 2 sigma.
    assert abs((np.abs(v) > 2).mean() - 0.0455) < 0.003


def test_normal():
    f, t = both(lambda L: L.normal(2.0, 3.0, size=(4, 5)))
    assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype)
    v = np.array(ft.normal(2.0, 3.0, (100000,)).tolist())
    assert abs(v.mean() - 2) < 0.05
    assert abs(v.std() - 3) < 0.05
    assert set(ft.normal(1.5, 0.0, (10,)).tolist()) == {1.5}


def test_randint():
    for args in [(10, (3, 4)), (-5, 5, (1000,)), (0, 1, (5,)), (3, 4, ())]:
        f, t = both(lambda L: L.randint(*args))
        assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype)
        lo, hi = (0, args[0]) if len(args) == 2 else args[:2]
        v = np.array(f.tolist()).ravel()
        assert ((v >= lo) & (v < hi)).all()
    v = np.array(ft.randint(-5, 5, (20000,)).tolist())
    assert set(v.tolist()) == set(range(-5, 5))
    counts = np.bincount(v + 5)
    assert counts.min() > 1700 and counts.max() < 2300
    for dtype in ["int32", "int16", "uint8", "float32", "float64"]:
        f, t = both(lambda L: L.randint(0, 100, (50,), dtype=getattr(L, dtype)))
        assert str(f.dtype) == str(t.dtype)
        assert all(0 <= x < 100 and x == int(x) for x in f.tolist())
    f, t = both(lambda L: L.randint(5, size=(2, 2)))
    assert tuple(f.shape) == tuple(t.shape)


def test_randperm():
    for n in [0, 1, 5, 100]:
        f, t = both(lambda L: L.randperm(n))
        assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype)
        assert sorted(f.tolist()) == list(range(n))
    f, t = both(lambda L: L.randperm(6, dtype=L.float32))
    assert str(f.dtype) == str(t.dtype) and sorted(f.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # Not the identity (with overwhelming probability).
    assert ft.randperm(50).tolist() != list(range(50))


def test_manual_seed_reproducibility():
    for make in [lambda: ft.rand(7), lambda: ft.randn(3, 2), lambda: ft.randint(0, 1000, (9,)),
                 lambda: ft.randperm(20), lambda: ft.normal(0.0, 1.0, (5,)), lambda: ft.rand(4, dtype=ft.float64)]:
        ft.manual_seed(1234)
        a = make().tolist()
        ft.manual_seed(1234)
        b = make().tolist()
        assert a == b
        ft.manual_seed(4321)
        c = make().tolist()
        assert a != c
    # Successive draws differ; the seed fixes the whole sequence.
    ft.manual_seed(0)
    a1, a2 = ft.rand(5).tolist(), ft.rand(5).tolist()
    assert a1 != a2
    ft.manual_seed(0)
    assert [ft.rand(5).tolist(), ft.rand(5).tolist()] == [a1, a2]
    g = ft.manual_seed(42)
    tg = torch.manual_seed(42)
    assert type(g).__name__ == type(tg).__name__ == "Generator"
    assert ft.initial_seed() == torch.initial_seed() == 42


def test_generator_objects():
    g1 = ft.Generator().manual_seed(7)
    tg = torch.Generator().manual_seed(7)
    assert isinstance(g1, ft.Generator) and isinstance(tg, torch.Generator)
    assert g1.initial_seed() == tg.initial_seed() == 7
    assert str(g1.device) == str(tg.device)
    a = ft.rand(6, generator=g1).tolist()
    ft.manual_seed(99)
    g2 = ft.Generator().manual_seed(7)
    # The default generator is not disturbed by an explicit one, and vice versa.
    ft.manual_seed(5)
    ref = ft.rand(3).tolist()
    ft.manual_seed(5)
    b = ft.rand(6, generator=g2).tolist()
    assert a == b
    assert ft.rand(3).tolist() == ref
    # get_state / set_state replay a stream.
    g = ft.Generator().manual_seed(3)
    state = g.get_state()
    tstate = torch.Generator().manual_seed(3).get_state()
    assert str(state.dtype) == str(tstate.dtype) == "torch.uint8"
    x = ft.randn(4, generator=g).tolist()
    g.set_state(state)
    assert ft.randn(4, generator=g).tolist() == x
    # Global state round trip.
    s = ft.get_rng_state()
    y = ft.randint(0, 100, (10,)).tolist()
    ft.set_rng_state(s)
    assert ft.randint(0, 100, (10,)).tolist() == y
    for fn in [lambda gen: ft.randint(0, 10, (5,), generator=gen), lambda gen: ft.randperm(10, generator=gen),
               lambda gen: ft.normal(0.0, 1.0, (5,), generator=gen), lambda gen: ft.randn(5, generator=gen)]:
        assert fn(ft.Generator().manual_seed(11)).tolist() == fn(ft.Generator().manual_seed(11)).tolist()


def test_random_errors_match():
    calls = [
        lambda L: L.rand(2, dtype=L.int64),
        lambda L: L.randn(2, dtype=L.int32),
        lambda L: L.randint(5, 2, (3,)),
        lambda L: L.randperm(-1),
        lambda L: L.normal(0.0, -1.0, (2,)),
        lambda L: L.rand(-1),
    ]
    for call in calls:
        with pytest.raises(Exception) as te:
            call(torch)
        with pytest.raises(Exception) as fe:
            call(ft)
        assert type(fe.value) is type(te.value), (fe.value, te.value)


# ----------------------------------------------------------------------------
# tolist / item
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_tolist_and_item_types(dtype):
    data = [[0, 1], [1, 0]] if dtype == "bool" else [[0, 1], [2, 3]]
    f, t = both(lambda L: L.tensor(data, dtype=getattr(L, dtype)))
    fl, tl = f.tolist(), t.tolist()
    assert fl == tl
    assert [type(v) for row in fl for v in row] == [type(v) for row in tl for v in row]
    fi, ti = f[1, 1].item(), t[1, 1].item()
    assert fi == ti and type(fi) is type(ti)
    fs, ts = f[0, 1].tolist(), t[0, 1].tolist()
    assert fs == ts and type(fs) is type(ts)
    assert type(float(f[0, 1])) is float and type(int(f[0, 1])) is int
    assert bool(f[0, 1]) == bool(t[0, 1])


def test_tolist_of_views_and_empty():
    for make in [lambda L: L.arange(12).view(3, 4).t()[::2], lambda L: L.zeros(2, 0), lambda L: L.zeros(0, 2),
                 lambda L: L.arange(6.0).view(1, 2, 3).expand(2, 2, 3)]:
        f, t = both(make)
        assert f.tolist() == t.tolist()


def test_item_values():
    for v in [1.5, -2, True, 2**62, 1e-30]:
        f, t = both(lambda L: L.tensor([v]))
        assert f.item() == t.item() and type(f.item()) is type(t.item())
    f, t = both(lambda L: L.tensor([[3.25]]))
    assert f.item() == t.item()
    assert ft.tensor(0.1).item() == torch.tensor(0.1).item()  # float32 rounding kept


# ----------------------------------------------------------------------------
# to(dtype), type(), float()...
# ----------------------------------------------------------------------------

def source_values(src, dst):
    """Values whose conversion from ``src`` to ``dst`` PyTorch defines."""
    if src == "bool":
        return [True, False, True]
    vals = [0, 1, 2, 7, 100, 127]
    if src.startswith("float") or src == "bfloat16":
        vals += [0.5, 1.75, 99.5, 126.9]
        if dst not in ("uint8", "bool"):
            vals += [-1.75, -0.5, -100.5]
        if dst in FLOATS or dst == "bool":
            vals += [3.14159, -2.7, 1e-3]
    if src not in ("uint8",) and dst not in ("uint8",) and src != "bool":
        vals += [-1, -128]
    if src in ("int16", "int32", "int64", "float32", "float64") and dst in ("int16", "int32", "int64", "float32", "float64"):
        vals += [1000, -30000, 32767]
    if src in ("int32", "int64", "float64") and dst in ("int32", "int64", "float64", "float32"):
        vals += [2**31 - 1, -(2**31), 123456789]
    if src == "int64" and dst in ("int64", "float64", "float32", "float16", "bfloat16"):
        vals += [2**53 + 1, 2**40 + 3] if dst != "float16" else []
    if dst == "uint8" and src in ("int16", "int32", "int64", "float32", "float64", "float16"):
        vals += [200, 255]
    return vals


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_to_dtype_every_pair(src, dst):
    vals = source_values(src, dst)
    f = ft.tensor(vals, dtype=fdt(src))
    t = torch.tensor(vals, dtype=tdt(src))
    assert f.tolist() == t.tolist()
    fr, tr = f.to(fdt(dst)), t.to(tdt(dst))
    same(fr, tr)
    assert (fr is f) == (tr is t)
    # Keyword form and the non-contiguous path.
    same(f.to(dtype=fdt(dst)), t.to(dtype=tdt(dst)))
    fv, tv = f.view(1, -1).expand(2, -1).t()[::2], t.view(1, -1).expand(2, -1).t()[::2]
    same(fv.to(fdt(dst)), tv.to(tdt(dst)))


def test_to_returns_self_or_copy():
    f, t = ft.arange(4.0), torch.arange(4.0)
    assert (f.to(ft.float32) is f) and (t.to(torch.float32) is t)
    assert (f.to("cpu") is f) and (t.to("cpu") is t)
    assert (f.to(ft.device("cpu"), ft.float32) is f)
    fc, tc = f.to(ft.float32, copy=True), t.to(torch.float32, copy=True)
    assert (fc is f) == (tc is t) == False  # noqa: E712
    assert fc.data_ptr() != f.data_ptr()
    same(f.to(ft.zeros(1, dtype=ft.int32)), t.to(torch.zeros(1, dtype=torch.int32)))
    same(f.to("cpu", ft.float64), t.to("cpu", torch.float64))
    same(f.to(device="cpu", dtype=ft.int16), t.to(device="cpu", dtype=torch.int16))
    assert f.cpu() is f and t.cpu() is t


def test_to_preserves_strides():
    for make in [lambda L: L.arange(6.0).view(2, 3).t(), lambda L: L.arange(24.0).view(2, 3, 4).permute(1, 2, 0),
                 lambda L: L.arange(12.0).view(3, 4)[:, ::2], lambda L: L.arange(3.0).view(3, 1).expand(3, 4)]:
        f, t = both(make)
        for dst in ["float64", "int32", "float16"]:
            same(f.to(fdt(dst)), t.to(tdt(dst)))


@pytest.mark.parametrize("method,dst", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
    ("long", "int64"), ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
])
def test_conversion_methods(method, dst):
    for src in ["float32", "int64", "bool", "float64"]:
        vals = [0, 1, 1] if src == "bool" else [0, 1, 2, 7]
        f = ft.tensor(vals, dtype=fdt(src))
        t = torch.tensor(vals, dtype=tdt(src))
        fr, tr = getattr(f, method)(), getattr(t, method)()
        same(fr, tr)
        assert (fr is f) == (tr is t)


def test_type_method():
    for dtype in DTYPES:
        f, t = both(lambda L: L.zeros(2, dtype=getattr(L, dtype)))
        assert f.type() == t.type()
    f, t = ft.tensor([1.5, 2.5]), torch.tensor([1.5, 2.5])
    for name in ["torch.IntTensor", "torch.DoubleTensor", "torch.FloatTensor", "torch.ByteTensor",
                 "torch.BoolTensor", "torch.LongTensor", "torch.HalfTensor", "torch.BFloat16Tensor",
                 "torch.ShortTensor", "torch.CharTensor"]:
        same(f.type(name), t.type(name))
    same(f.type(ft.int64), t.type(torch.int64))
    assert (f.type(ft.float32) is f) == (t.type(torch.float32) is t)
    assert (f.type("torch.FloatTensor") is f) == (t.type("torch.FloatTensor") is t)


# ----------------------------------------------------------------------------
# clone / copy_
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda L: L.arange(6.0).view(2, 3),
    lambda L: L.arange(6.0).view(2, 3).t(),
    lambda L: L.arange(24).view(2, 3, 4).permute(2, 0, 1),
    lambda L: L.arange(24).view(2, 3, 4).permute(2, 0, 1)[1:],
    lambda L: L.arange(12.0).view(3, 4)[:, ::2],
    lambda L: L.arange(12.0).view(3, 4)[::2, 1:3],
    lambda L: L.arange(3.0).view(3, 1).expand(3, 4),
    lambda L: L.arange(3.0).view(1, 3).expand(4, 3),
    lambda L: L.arange(6.0).view(2, 3)[:, :1],
    lambda L: L.tensor(1.5),
    lambda L: L.zeros(0, 3).t(),
    lambda L: L.arange(10.0).as_strided((3, 3), (1, 2)),
], ids=["contig", "t", "permute", "permute_slice", "step", "step2", "expand_col", "expand_row", "unit", "0d", "empty", "overlap"])
def test_clone(make):
    f, t = both(make)
    fc, tc = f.clone(), t.clone()
    same(fc, tc)
    assert fc._base is None and tc._base is None
    assert fc.untyped_storage().data_ptr() != f.untyped_storage().data_ptr() or f.numel() == 0
    assert fc.untyped_storage().nbytes() == tc.untyped_storage().nbytes()
    same(ft.clone(f), torch.clone(t))
    if fc.numel():
        fc.view(-1)[0] if fc.is_contiguous() else None
        fc.fill_(42)
        assert f.tolist() == t.tolist()


def test_copy_broadcast_and_convert():
    cases = [
        (lambda L: L.zeros(2, 3), lambda L: L.tensor([1.0, 2.0, 3.0])),
        (lambda L: L.zeros(2, 3), lambda L: L.tensor(5)),
        (lambda L: L.zeros(2, 3, dtype=L.int32), lambda L: L.tensor([[1.7], [-2.7]])),
        (lambda L: L.zeros(3, dtype=L.bool), lambda L: L.tensor([0.0, 0.5, -1.0])),
        (lambda L: L.zeros(3, dtype=L.float16), lambda L: L.tensor([1, 2, 3])),
        (lambda L: L.zeros(2, 2, dtype=L.float64), lambda L: L.tensor([[1, 2], [3, 4]], dtype=L.uint8)),
        (lambda L: L.zeros(3, 2).t(), lambda L: L.arange(6.0).view(2, 3)),
        (lambda L: L.zeros(4, 4)[::2, 1:3], lambda L: L.ones(2)),
        (lambda L: L.zeros(2, 3), lambda L: L.arange(6).view(3, 2).t()),
    ]
    for dst, src in cases:
        (fd, fs), (td, ts) = both(lambda L: (dst(L), src(L)))
        fr, tr = fd.copy_(fs), td.copy_(ts)
        assert fr is fd and tr is td
        same(fd, td)
        assert fd._version == td._version


def test_copy_into_view_writes_base():
    f, t = ft.zeros(3, 4), torch.zeros(3, 4)
    f[1].copy_(ft.arange(4.0))
    t[1].copy_(torch.arange(4.0))
    f[:, 2].copy_(ft.tensor([7.0, 8.0, 9.0]))
    t[:, 2].copy_(torch.tensor([7.0, 8.0, 9.0]))
    same(f, t)
    assert f._version == t._version


def test_copy_overlapping_self():
    f, t = ft.arange(6.0), torch.arange(6.0)
    f[1:].copy_(f[:-1].clone())
    t[1:].copy_(t[:-1].clone())
    same(f, t)
    f, t = ft.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
    f.copy_(f.flip(0) if hasattr(f, "flip") else ft.tensor(f.tolist()[::-1]))
    t.copy_(t.flip(0))
    same(f, t)


def test_copy_errors():
    for dst, src in [((2, 3), (3, 2)), ((2, 3), (4,)), ((3,), (2, 3))]:
        with pytest.raises(RuntimeError) as te:
            torch.zeros(*dst).copy_(torch.ones(*src))
        with pytest.raises(RuntimeError) as fe:
            ft.zeros(*dst).copy_(ft.ones(*src))
        assert type(fe.value) is type(te.value)


# ----------------------------------------------------------------------------
# promotion
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_can_cast_all_pairs(a):
    for b in DTYPES:
        assert str(ft.promote_types(fdt(a), fdt(b))) == str(torch.promote_types(tdt(a), tdt(b))), (a, b)
        assert ft.can_cast(fdt(a), fdt(b)) == torch.can_cast(tdt(a), tdt(b)), (a, b)


SCALARS = [True, 3, -2, 2.5, 2**40]


@pytest.mark.parametrize("a", DTYPES)
def test_result_type_all_pairs(a):
    for b in DTYPES:
        for fa_shape in [(2,), ()]:
            for fb_shape in [(2,), ()]:
                fa, ta = ft.zeros(fa_shape, dtype=fdt(a)), torch.zeros(fa_shape, dtype=tdt(a))
                fb, tb = ft.zeros(fb_shape, dtype=fdt(b)), torch.zeros(fb_shape, dtype=tdt(b))
                assert str(ft.result_type(fa, fb)) == str(torch.result_type(ta, tb)), (a, fa_shape, b, fb_shape)
    for s in SCALARS:
        for shape in [(2,), ()]:
            fa, ta = ft.zeros(shape, dtype=fdt(a)), torch.zeros(shape, dtype=tdt(a))
            assert str(ft.result_type(fa, s)) == str(torch.result_type(ta, s)), (a, shape, s)
            assert str(ft.result_type(s, fa)) == str(torch.result_type(s, ta)), (a, shape, s)


def test_result_type_scalars_only():
    for s1 in SCALARS:
        for s2 in SCALARS:
            assert str(ft.result_type(s1, s2)) == str(torch.result_type(s1, s2)), (s1, s2)


def test_arithmetic_follows_result_type():
    for a in DTYPES:
        for s in [2, 2.5, True]:
            fa, ta = ft.ones(2, dtype=fdt(a)), torch.ones(2, dtype=tdt(a))
            assert str((fa * s).dtype) == str((ta * s).dtype), (a, s)


# ----------------------------------------------------------------------------
# dtype, device, Size objects
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES + ["half", "float", "double", "short", "int", "long"])
def test_dtype_objects(name):
    f, t = fdt(name), tdt(name)
    assert repr(f) == repr(t)
    assert str(f) == str(t)
    assert f.is_floating_point == t.is_floating_point
    assert f.is_signed == t.is_signed
    assert f.is_complex == t.is_complex
    assert f.itemsize == t.itemsize
    assert f == f and hash(f) == hash(fdt(str(t).split(".")[1]))
    assert isinstance(f, ft.dtype)
    assert f is fdt(str(t).split(".")[1])
    assert ft.zeros(1, dtype=f).dtype is f if repr(f) == "torch." + name else True
    assert ft.zeros(1, dtype=f).element_size() == torch.zeros(1, dtype=t).element_size()


def test_dtype_aliases_and_inequality():
    assert ft.float is ft.float32 and ft.double is ft.float64 and ft.half is ft.float16
    assert ft.long is ft.int64 and ft.int is ft.int32 and ft.short is ft.int16
    assert ft.float32 != ft.float64
    assert len({fdt(d) for d in DTYPES}) == 10


def test_device_objects():
    for args in [("cpu",), ("cuda",), ("cuda:1",), ("cuda", 1), ("cuda", 0), ("cpu", 0), ("cpu:0",), ("cpu:1",), ("cpu", 1)]:
        f, t = ft.device(*args), torch.device(*args)
        assert str(f) == str(t), args
        assert repr(f) == repr(t), args
        assert f.type == t.type
        assert f.index == t.index
    assert ft.device("cuda:1") == ft.device("cuda", 1)
    assert ft.device("cpu") != ft.device("cuda")
    assert hash(ft.device("cuda:1")) == hash(ft.device("cuda", 1))
    assert ft.device(ft.device("cuda:2")) == ft.device("cuda:2")
    assert ft.zeros(1).device == ft.device("cpu")
    assert ft.zeros(1).device.type == "cpu" and ft.zeros(1).device.index is None
    assert ft.zeros(1).get_device() == torch.zeros(1).get_device()


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:01", "cuda:-1", "", "cuda:1:2", " cpu", "CPU", "cuda:", ":1", "cuda:+1", "cpu "])
def test_device_parse_errors(bad):
    with pytest.raises(Exception) as te:
        torch.device(bad)
    with pytest.raises(Exception) as fe:
        ft.device(bad)
    assert type(fe.value) is type(te.value)
    assert repr(bad.strip()) in str(fe.value) or bad in str(fe.value) or "empty" in str(fe.value)


def test_device_other_errors():
    # A bare int names an accelerator device, and this machine has none.
    for args in [(-1,), ("cuda", -1), ("cuda:1", 1), (1.5,), (3,), ("cuda:99999999999",)]:
        with pytest.raises(Exception) as te:
            torch.device(*args)
        with pytest.raises(Exception) as fe:
            ft.device(*args)
        assert type(fe.value) is type(te.value), (args, fe.value, te.value)


def test_cuda_device_unavailable():
    assert ft.cuda.is_available() is False
    with pytest.raises(RuntimeError):
        ft.zeros(2, device="cuda")
    with pytest.raises(RuntimeError):
        ft.tensor([1.0], device="cuda:0")
    with pytest.raises(RuntimeError):
        ft.ones(2).to("cuda")


def test_size_behaviour():
    fs, ts = ft.Size([2, 3, 4]), torch.Size([2, 3, 4])
    assert isinstance(fs, tuple)
    assert repr(fs) == repr(ts) and str(fs) == str(ts)
    assert repr(ft.Size([])) == repr(torch.Size([]))
    assert repr(ft.Size([5])) == repr(torch.Size([5]))
    assert fs == ts == (2, 3, 4)
    assert fs.numel() == ts.numel()
    assert ft.Size([]).numel() == torch.Size([]).numel() == 1
    assert ft.Size([3, 0]).numel() == 0
    assert type(fs[1:]) is ft.Size and type(ts[1:]) is torch.Size
    assert fs[1:] == ts[1:] and fs[::-1] == ts[::-1]
    assert fs[0] == ts[0] and type(fs[0]) is int
    assert type(fs + (5,)).__name__ == type(ts + (5,)).__name__ == "Size"
    assert type((5,) + fs).__name__ == type((5,) + ts).__name__
    assert fs + (5,) == ts + (5,)
    assert len(fs) == len(ts) and list(fs) == list(ts)
    assert hash(fs) == hash((2, 3, 4))
    assert ft.zeros(fs).shape == fs
    assert ft.zeros(2, 3).size() == ft.Size([2, 3])
    assert ft.Size((ft.tensor(2), 3)) == torch.Size((torch.tensor(2), 3))
    assert ft.Size(range(3)) == torch.Size(range(3))
    with pytest.raises(TypeError):
        torch.Size([2.5])
    with pytest.raises(TypeError):
        ft.Size([2.5])
    import pickle
    assert pickle.loads(pickle.dumps(fs)) == fs and type(pickle.loads(pickle.dumps(fs))) is ft.Size


def test_tensor_metadata_attributes():
    f, t = ft.zeros(2, 3, dtype=ft.float64), torch.zeros(2, 3, dtype=torch.float64)
    assert f.element_size() == t.element_size() and f.itemsize == t.itemsize and f.nbytes == t.nbytes
    assert f.is_leaf == t.is_leaf and f.requires_grad == t.requires_grad
    assert repr(f.layout) == repr(t.layout) == "torch.strided"
    assert f.is_floating_point() == t.is_floating_point()
    assert f.is_cuda == t.is_cuda and f.is_cpu == t.is_cpu
    assert f.ndim == t.ndim


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_double_to_half_rounds_through_float_as_torch(dtype):
    # PyTorch builds Half/BFloat16 from a float, so a double is rounded twice
    # (f64 -> f32 -> half). Values just above a half-way point tell the
    # difference from a single rounding; random data checks the bulk.
    ulp_half = 2.0 ** (-11 if dtype == "float16" else -8)
    special = [1 + ulp_half + 2.0 ** -40, -(1 + ulp_half + 2.0 ** -40), 3 + 3 * ulp_half + 2.0 ** -35]
    rng = np.random.default_rng(5)
    values = special + list(rng.standard_normal(2000) * 10)
    src = np.array(values, dtype=np.float64)
    got = ft.from_numpy(src.copy()).to(getattr(ft, dtype)).float().numpy()
    want = torch.from_numpy(src.copy()).to(getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(got, want)
    assert got[0] == 1.0  # the double rounding lands on the even neighbour
    got = ft.tensor(values, dtype=getattr(ft, dtype)).float().numpy()
    np.testing.assert_array_equal(got, want)
