"""Zero-copy interop: ``from_numpy``/``.numpy()``/``__array__`` with NumPy and
``__dlpack__``/``from_dlpack`` with PyTorch and NumPy.

Memory sharing is checked by writing through one side and reading the other,
and lifetimes by dropping one side (plus ``gc.collect()``) before reading.
PyTorch's own ``from_numpy``/``numpy`` are the reference for strides, offsets,
dtypes and error types.
"""

import gc
import warnings

import pytest

np = pytest.importorskip("numpy", reason="NumPy is the interop partner under test")
torch = pytest.importorskip("torch", reason="PyTorch is the reference implementation")
import ferrotorch as ft  # noqa: E402

NP_DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    return np.arange(n).astype(dtype).reshape(shape)


def one(dtype):
    return True if dtype == "bool" else 7


def addr(a):
    return a.__array_interface__["data"][0]


# ----------------------------------------------------------------------------
# from_numpy
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_from_numpy_shares_memory(dtype):
    a = sample(dtype)
    f, t = ft.from_numpy(a), torch.from_numpy(a.copy())
    assert str(f.dtype) == str(t.dtype)
    assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()
    assert f.storage_offset() == t.storage_offset() == 0
    assert f.tolist() == a.tolist()
    assert f.data_ptr() == addr(a)
    # Writes through the tensor are seen by the array and vice versa.
    f[1, 2] = one(dtype)
    assert a[1, 2] == one(dtype)
    a[2, 3] = one(dtype)
    assert f[2, 3].item() == one(dtype)
    f.zero_()
    assert not a.any()


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_from_numpy_keeps_array_alive(dtype):
    a = sample(dtype)
    expected = a.tolist()
    f = ft.from_numpy(a)
    del a
    gc.collect()
    _ = [np.ones(1000) for _ in range(10)]  # reuse freed memory if it were freed
    assert f.tolist() == expected
    v = f[1:, ::2]
    del f
    gc.collect()
    assert v.tolist() == [row[::2] for row in expected[1:]]


@pytest.mark.parametrize("make", [
    lambda: np.arange(12.0).reshape(3, 4).T,
    lambda: np.arange(12.0).reshape(3, 4)[:, ::2],
    lambda: np.arange(24.0).reshape(2, 3, 4)[1:, ::2, 1::3],
    lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 0, 1),
    lambda: np.arange(12.0).reshape(3, 4)[1:],
    lambda: np.arange(10.0)[3:8],
    lambda: np.broadcast_to(np.arange(3.0), (4, 3)),
    lambda: np.zeros((0, 3)),
    lambda: np.zeros((3, 0)),
    lambda: np.array(5.0),
    lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
], ids=["T", "step", "3d", "permuted", "rows", "slice", "broadcast", "empty", "empty2", "0d", "fortran"])
def test_from_numpy_non_contiguous(make):
    a = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, t = ft.from_numpy(a), torch.from_numpy(a)
    assert tuple(f.shape) == tuple(t.shape)
    assert f.stride() == t.stride()
    assert f.storage_offset() == t.storage_offset()
    assert f.is_contiguous() == t.is_contiguous()
    assert f.tolist() == t.tolist() == a.tolist()
    if a.size:
        assert f.data_ptr() == addr(a) == t.data_ptr()


def test_from_numpy_write_through_views():
    base = np.zeros((4, 5))
    a = base[1:, ::2]
    f = ft.from_numpy(a)
    f.fill_(3.0)
    expected = np.zeros((4, 5))
    expected[1:, ::2] = 3.0
    assert (base == expected).all()


def test_from_numpy_negative_strides():
    for a in [np.arange(5.0)[::-1], np.arange(12).reshape(3, 4)[:, ::-1]]:
        with pytest.raises(ValueError) as te:
            torch.from_numpy(a)
        with pytest.raises(ValueError) as fe:
            ft.from_numpy(a)
        assert "negative" in str(fe.value) and "negative" in str(te.value)
        # A copy works.
        assert ft.from_numpy(a.copy()).tolist() == a.tolist()


@pytest.mark.parametrize("make", [
    lambda: np.array(["a", "b"]),
    lambda: np.array([1, "x"], dtype=object),
    lambda: np.array(["2020-01-01"], dtype="datetime64[D]"),
], ids=["str", "object", "datetime"])
def test_from_numpy_unsupported_dtype(make):
    a = make()
    with pytest.raises(TypeError) as te:
        torch.from_numpy(a)
    with pytest.raises(TypeError) as fe:
        ft.from_numpy(a)
    # Both name the NumPy type.
    assert str(fe.value).split(".")[0] == str(te.value).split(".")[0]


def test_from_numpy_types_ferrotorch_lacks_raise_typeerror():
    # PyTorch has wide unsigned dtypes; ferrotorch does not yet (complex: see test_complex.py).
    for dt in [np.uint16, np.uint32, np.uint64]:
        with pytest.raises(TypeError, match="can't convert np.ndarray"):
            ft.from_numpy(np.zeros(2, dtype=dt))


def test_from_numpy_byte_order():
    a = np.arange(3, dtype=">i4")
    with pytest.raises(ValueError) as te:
        torch.from_numpy(a)
    with pytest.raises(ValueError) as fe:
        ft.from_numpy(a)
    assert str(fe.value) == str(te.value)


def test_from_numpy_not_an_array():
    for obj in [[1, 2], 3.0, ft.zeros(2)]:
        with pytest.raises(TypeError) as te:
            torch.from_numpy(obj if not isinstance(obj, ft.Tensor) else torch.zeros(2))
        with pytest.raises(TypeError) as fe:
            ft.from_numpy(obj)
        assert "expected np.ndarray" in str(fe.value) and "expected np.ndarray" in str(te.value)


def test_from_numpy_readonly_warns():
    a = np.arange(3.0)
    a.flags.writeable = False
    # PyTorch warns once per process (so its warning may already be spent);
    # ferrotorch warns like it, leaving repetition to Python's filters.
    with pytest.warns(UserWarning, match="not writable"):
        f = ft.from_numpy(a)
    assert f.tolist() == [0.0, 1.0, 2.0]


def test_as_tensor_shares_numpy_memory():
    a = np.arange(6.0).reshape(2, 3)
    f = ft.as_tensor(a)
    assert f.data_ptr() == addr(a)
    f[0, 0] = -1
    assert a[0, 0] == -1
    g = ft.as_tensor(a, dtype=ft.float32)
    assert g.data_ptr() != addr(a)
    g[0, 1] = 100
    assert a[0, 1] == 1.0


# ----------------------------------------------------------------------------
# .numpy() and __array__
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_shares_memory(dtype):
    f = ft.tensor(sample(dtype).tolist(), dtype=getattr(ft, dtype))
    t = torch.tensor(sample(dtype).tolist(), dtype=getattr(torch, dtype))
    a, ta = f.numpy(), t.numpy()
    assert a.dtype == ta.dtype
    assert a.shape == ta.shape and a.strides == ta.strides
    assert addr(a) == f.data_ptr()
    assert a.flags.writeable == ta.flags.writeable
    a[0, 1] = one(dtype)
    assert f[0, 1].item() == one(dtype)
    f[2, 2] = one(dtype)
    assert a[2, 2] == one(dtype)


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_keeps_tensor_alive(dtype):
    f = ft.tensor(sample(dtype).tolist(), dtype=getattr(ft, dtype))
    expected = f.tolist()
    a = f.numpy()
    del f
    gc.collect()
    _ = [ft.ones(1000) for _ in range(10)]
    assert a.tolist() == expected


@pytest.mark.parametrize("make", [
    lambda L: L.arange(12.0).view(3, 4).t(),
    lambda L: L.arange(12.0).view(3, 4)[1:, ::2],
    lambda L: L.arange(24).view(2, 3, 4).permute(2, 0, 1)[1:],
    lambda L: L.arange(3.0).view(3, 1).expand(3, 4),
    lambda L: L.arange(12.0).view(3, 4).diagonal(1),
    lambda L: L.tensor(2.5),
    lambda L: L.zeros(0, 3),
], ids=["t", "step", "permuted", "expanded", "diagonal", "0d", "empty"])
def test_numpy_of_views(make):
    f, t = make(ft), make(torch)
    a, ta = f.numpy(), t.numpy()
    assert a.shape == ta.shape and a.strides == ta.strides and a.dtype == ta.dtype
    assert a.tolist() == ta.tolist()
    if f.numel():
        assert addr(a) == f.data_ptr()
    # np.asarray goes through __array__ and shares too.
    b, tb = np.asarray(f), np.asarray(t)
    assert b.shape == tb.shape and b.strides == tb.strides
    if f.numel():
        assert addr(b) == f.data_ptr()


def test_numpy_writes_reach_base():
    f = ft.zeros(3, 4)
    a = f[1:, ::2].numpy()
    a[:] = 5
    t = torch.zeros(3, 4)
    t[1:, ::2].numpy()[:] = 5
    assert f.tolist() == t.tolist()


def test_array_protocol_dtype_and_copy():
    f = ft.arange(4.0)
    a = np.asarray(f, dtype=np.float64)
    assert a.dtype == np.float64 and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    c = np.array(f, copy=True)
    c[0] = 9
    assert f[0].item() == 0.0
    s = np.array(f, copy=False) if np.lib.NumpyVersion(np.__version__) < "2.0.0" else np.asarray(f)
    s[1] = 7
    assert f[1].item() == 7.0
    # NumPy ufuncs accept tensors.
    assert np.add(f, 1).tolist() == np.add(np.asarray(torch.tensor([0.0, 7.0, 2.0, 3.0])), 1).tolist()


def test_numpy_errors_match():
    f, t = ft.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as te:
        t.numpy()
    with pytest.raises(RuntimeError) as fe:
        f.numpy()
    assert str(fe.value) == str(te.value)
    assert f.detach().numpy().tolist() == [1.0, 1.0]
    assert f.numpy(force=True).tolist() == t.numpy(force=True).tolist()
    with pytest.raises(TypeError) as te:
        torch.ones(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(TypeError) as fe:
        ft.ones(2, dtype=ft.bfloat16).numpy()
    assert str(fe.value) == str(te.value)


def test_numpy_round_trip_identity_of_memory():
    a = np.arange(10.0)
    f = ft.from_numpy(a)
    b = f.numpy()
    assert addr(b) == addr(a)
    b[3] = -3
    assert a[3] == -3 and f[3].item() == -3


# ----------------------------------------------------------------------------
# DLPack
# ----------------------------------------------------------------------------

DL_DTYPES = NP_DTYPES + ["bfloat16"]


def make_ft(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    if dtype == "bool":
        return ft.tensor([i % 3 == 0 for i in range(n)]).view(shape)
    return ft.arange(n).to(getattr(ft, dtype)).view(shape)


def make_torch(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (torch.arange(n) % 3 == 0).view(shape)
    return torch.arange(n).to(getattr(torch, dtype)).view(shape)


@pytest.mark.parametrize("dtype", DL_DTYPES)
def test_torch_from_dlpack_of_ferrotorch(dtype):
    f = make_ft(dtype)
    t = torch.from_dlpack(f)
    assert str(t.dtype) == str(f.dtype)
    assert tuple(t.shape) == tuple(f.shape) and t.stride() == f.stride()
    assert t.tolist() == f.tolist()
    assert t.data_ptr() == f.data_ptr()
    t[0, 1] = one(dtype)
    assert f[0, 1].item() == one(dtype)
    f[2, 0] = one(dtype)
    assert t[2, 0].item() == one(dtype)


@pytest.mark.parametrize("dtype", DL_DTYPES)
def test_ferrotorch_from_dlpack_of_torch(dtype):
    t = make_torch(dtype)
    f = ft.from_dlpack(t)
    assert str(t.dtype) == str(f.dtype)
    assert tuple(t.shape) == tuple(f.shape) and t.stride() == f.stride()
    assert t.tolist() == f.tolist()
    assert t.data_ptr() == f.data_ptr()
    f[1, 1] = one(dtype)
    assert t[1, 1].item() == one(dtype)


@pytest.mark.parametrize("make", [
    lambda L: L.arange(12.0).view(3, 4).t(),
    lambda L: L.arange(12.0).view(3, 4)[1:, ::2],
    lambda L: L.arange(24.0).view(2, 3, 4).permute(1, 2, 0)[1:, 1:],
    lambda L: L.arange(12.0).view(3, 4)[2],
    lambda L: L.arange(12.0).view(3, 4).diagonal(1),
    lambda L: L.arange(3.0).view(3, 1).expand(3, 4),
    lambda L: L.tensor(1.5),
    lambda L: L.zeros(0, 3),
], ids=["t", "step", "permuted", "row_offset", "diagonal", "expanded", "0d", "empty"])
def test_dlpack_views_both_ways(make):
    f, t = make(ft), make(torch)
    # ferrotorch -> torch
    tt = torch.from_dlpack(f)
    assert tuple(tt.shape) == tuple(t.shape) and tt.tolist() == t.tolist()
    if f.numel():
        assert tt.data_ptr() == f.data_ptr()
        assert tt.stride() == f.stride() or f.numel() <= 1
    # torch -> ferrotorch
    ff = ft.from_dlpack(t)
    assert tuple(ff.shape) == tuple(t.shape) and ff.tolist() == t.tolist()
    if t.numel():
        assert ff.data_ptr() == t.data_ptr()
        assert ff.stride() == t.stride() or t.numel() <= 1


def test_dlpack_view_writes_reach_base():
    f = ft.zeros(4, 5)
    tv = torch.from_dlpack(f[1:, 1::2])
    tv.fill_(2.0)
    ref = torch.zeros(4, 5)
    ref[1:, 1::2] = 2.0
    assert f.tolist() == ref.tolist()
    t = torch.zeros(4, 5)
    fv = ft.from_dlpack(t[::2, 3])
    fv.fill_(-1.0)
    ref = torch.zeros(4, 5)
    ref[::2, 3] = -1.0
    assert t.tolist() == ref.tolist()


def test_dlpack_lifetimes():
    f = ft.arange(6.0)
    t = torch.from_dlpack(f)
    del f
    gc.collect()
    _ = [ft.ones(6) for _ in range(10)]
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    t2 = torch.arange(6.0)
    f2 = ft.from_dlpack(t2)
    del t2
    gc.collect()
    _ = [torch.ones(6) for _ in range(10)]
    assert f2.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_numpy_from_dlpack():
    f = ft.arange(12.0).view(3, 4)
    a = np.from_dlpack(f)
    assert a.shape == (3, 4) and a.strides == (16, 4) and a.dtype == np.float32
    assert addr(a) == f.data_ptr()
    f[0, 0] = 42
    assert a[0, 0] == 42
    v = f.t()[1:]
    b = np.from_dlpack(v)
    assert b.tolist() == v.tolist() and addr(b) == v.data_ptr()
    assert b.strides == np.from_dlpack(torch.arange(12.0).view(3, 4).t()[1:]).strides
    # And NumPy -> ferrotorch.
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)[:, 1:]
    g = ft.from_dlpack(arr)
    assert g.tolist() == arr.tolist() and g.data_ptr() == addr(arr)
    assert g.stride() == torch.from_dlpack(arr).stride()
    g[0, 0] = 99
    assert arr[0, 0] == 99


def test_dlpack_device_and_capsules():
    f, t = ft.ones(2), torch.ones(2)
    assert tuple(int(x) for x in f.__dlpack_device__()) == tuple(int(x) for x in t.__dlpack_device__())
    cap = f.__dlpack__()
    g = ft.from_dlpack(cap)
    assert g.data_ptr() == f.data_ptr()
    # A capsule is consumed once; reusing it is PyTorch's RuntimeError.
    with pytest.raises(RuntimeError):
        torch.from_dlpack(cap)
    tcap = t.__dlpack__()
    torch.from_dlpack(tcap)
    with pytest.raises(RuntimeError):
        torch.from_dlpack(tcap)
    cap2 = f.__dlpack__()
    ft.from_dlpack(cap2)
    with pytest.raises(RuntimeError):
        ft.from_dlpack(cap2)
    # An unconsumed capsule is freed without leaking or crashing.
    for _ in range(100):
        ft.ones(1000).__dlpack__()
    gc.collect()


def test_dlpack_refuses_requires_grad():
    with pytest.raises(Exception) as te:
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(Exception) as fe:
        ft.ones(2, requires_grad=True).__dlpack__()
    assert type(fe.value) is type(te.value)
    assert str(fe.value) == str(te.value)
    assert torch.from_dlpack(ft.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]


def test_dlpack_versioned_protocol_keywords():
    f = ft.arange(3.0)
    for kw in [{}, {"stream": None}, {"max_version": (1, 0)}, {"max_version": (0, 8)}, {"dl_device": (1, 0)}, {"copy": False}]:
        cap = f.__dlpack__(**kw)
        g = ft.from_dlpack(cap)
        assert g.tolist() == [0.0, 1.0, 2.0]
