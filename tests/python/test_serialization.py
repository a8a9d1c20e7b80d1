"""ferrotorch.save / ferrotorch.load against PyTorch's torch.save / torch.load, and the
malicious-file suite for the weights_only unpickler."""

import collections
import copy
import io
import os
import pickle
import random
import struct
import zipfile

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _raw(t):
    """The tensor's bytes, from either library (bfloat16 through its int16 bits)."""
    if str(t.dtype) == "torch.bfloat16":
        t = t.view(type(t.dtype).__module__ and (torch.int16 if isinstance(t, torch.Tensor) else ft.int16))
    return t.contiguous().numpy().tobytes()


def _torch_tensor(dtype, shape=(3, 4), seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 50
    return x.to(getattr(torch, dtype)) if dtype != "bool" else x > 0


def _ft_from_torch(t):
    if t.dtype == torch.bfloat16:
        return ft.from_numpy(t.view(torch.int16).numpy().copy()).view(ft.bfloat16)
    return ft.from_numpy(t.numpy().copy())


def _roundtrip_bytes(obj, saver):
    buf = io.BytesIO()
    saver(obj, buf)
    buf.seek(0)
    return buf


# ------------------------------------------------------------------------------------------------
# interchange
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_ferrotorch_to_torch_every_dtype(dtype):
    ref = _torch_tensor(dtype)
    x = _ft_from_torch(ref)
    got = torch.load(_roundtrip_bytes({"x": x, "row": x[1], "t": x.t()}, ft.save))
    assert got["x"].dtype == ref.dtype and got["x"].shape == ref.shape
    assert _raw(got["x"]) == _raw(ref)
    assert _raw(got["row"]) == _raw(ref[1])
    assert got["t"].stride() == ref.t().stride()
    # the views share the loaded storage, as they did when saved
    assert got["row"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    assert got["row"].storage_offset() == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_ferrotorch_every_dtype(dtype):
    ref = _torch_tensor(dtype, seed=1)
    got = ft.load(_roundtrip_bytes({"x": ref, "col": ref[:, 2], "t": ref.t()}, torch.save))
    assert str(got["x"].dtype) == str(ref.dtype)
    assert tuple(got["x"].shape) == tuple(ref.shape)
    assert _raw(got["x"]) == _raw(ref)
    assert _raw(got["col"]) == _raw(ref[:, 2])
    assert tuple(got["col"].stride()) == ref[:, 2].stride()
    assert tuple(got["t"].stride()) == ref.t().stride()


def test_loaded_views_share_memory():
    base = torch.arange(12.0)
    obj = {"base": base, "view": base[3:9].view(2, 3), "again": base}
    got = ft.load(_roundtrip_bytes(obj, torch.save))
    assert got["again"] is got["base"]
    got["base"][4] = -1.0
    assert got["view"][0, 1].item() == -1.0


def test_zero_size_and_scalars():
    obj = {"empty": torch.empty(0, 3), "scalar": torch.tensor(3.5), "i": torch.tensor(7)}
    got = ft.load(_roundtrip_bytes(obj, torch.save))
    assert tuple(got["empty"].shape) == (0, 3)
    assert got["scalar"].item() == 3.5 and got["scalar"].dim() == 0
    back = torch.load(_roundtrip_bytes(got, ft.save))
    assert back["empty"].shape == (0, 3) and back["scalar"].item() == 3.5 and back["i"].item() == 7


def test_nested_containers_roundtrip():
    obj = {
        "list": [1, 2.5, "s", None, True, b"bytes"],
        "tuple": (1, (2, 3), [4]),
        "od": collections.OrderedDict([("b", 1), ("a", 2)]),
        "set": {1, 2, 3},
        "big": 2**70,
        "neg": -(2**40),
        "float": 1e-300,
        "counter": collections.Counter("abca"),
    }
    for saver, loader in ((torch.save, ft.load), (ft.save, torch.load)):
        got = loader(_roundtrip_bytes(obj, saver))
        assert got == obj
        assert type(got["od"]) is collections.OrderedDict and list(got["od"]) == ["b", "a"]


def test_parameters_and_requires_grad():
    p = ft.nn.Parameter(ft.ones(3))
    frozen = ft.nn.Parameter(ft.zeros(2), requires_grad=False)
    leaf = ft.ones(2).requires_grad_()
    got = torch.load(_roundtrip_bytes({"p": p, "f": frozen, "l": leaf}, ft.save))
    assert isinstance(got["p"], torch.nn.Parameter) and got["p"].requires_grad
    assert isinstance(got["f"], torch.nn.Parameter) and not got["f"].requires_grad
    assert got["l"].requires_grad and not isinstance(got["l"], torch.nn.Parameter)
    back = ft.load(_roundtrip_bytes(got, torch.save))
    assert isinstance(back["p"], ft.nn.Parameter) and back["p"].requires_grad
    assert not back["f"].requires_grad and back["l"].requires_grad


def test_module_state_dict_both_ways():
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    fm = ft.nn.Sequential(ft.nn.Linear(4, 3), ft.nn.ReLU(), ft.nn.Linear(3, 2))
    sd = ft.load(_roundtrip_bytes(tm.state_dict(), torch.save))
    assert type(sd) is collections.OrderedDict
    assert list(sd) == list(tm.state_dict())
    fm.load_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(fm(ft.from_numpy(x)).detach().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    # and back: a fresh torch module takes ferrotorch's weights
    tm2 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    tm2.load_state_dict(torch.load(_roundtrip_bytes(fm.state_dict(), ft.save)))
    for a, b in zip(tm.parameters(), tm2.parameters()):
        assert torch.equal(a, b)


def test_optimizer_state_dict_from_torch():
    m = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    m(torch.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    got = ft.load(_roundtrip_bytes(sd, torch.save))
    assert got["param_groups"] == sd["param_groups"]
    assert set(got["state"]) == set(sd["state"])
    for k, st in sd["state"].items():
        assert set(got["state"][k]) == set(st)
        for name, v in st.items():
            assert _raw(got["state"][k][name]) == _raw(v)


def test_paths_mmap_and_archive_name(tmp_path):
    ref = torch.randn(5, 7)
    p = tmp_path / "ckpt.pt"
    torch.save({"w": ref, "wt": ref.t()}, p)
    got = ft.load(p, mmap=True)
    assert _raw(got["w"]) == _raw(ref) and _raw(got["wt"]) == _raw(ref.t())
    got["w"][0, 0] = 123.0  # copy-on-write: the file is not changed
    assert torch.load(p)["w"][0, 0].item() == ref[0, 0].item()
    q = tmp_path / "mine.pt"
    ft.save({"w": got["w"]}, str(q))
    names = zipfile.ZipFile(q).namelist()
    assert names[0] == "mine/data.pkl" and "mine/data/0" in names and "mine/byteorder" in names
    assert torch.load(q, mmap=True)["w"][0, 0].item() == 123.0
    with pytest.raises(ValueError, match="file path"):
        ft.load(io.BytesIO(p.read_bytes()), mmap=True)


def test_records_are_64_byte_aligned(tmp_path):
    p = tmp_path / "a.pt"
    ft.save({"a": ft.ones(3), "b": ft.zeros(5, dtype=ft.int64)}, p)
    raw = p.read_bytes()
    for info in zipfile.ZipFile(p).infolist():
        n, m = struct.unpack("<HH", raw[info.header_offset + 26: info.header_offset + 30])
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename


def test_legacy_stream_from_torch(tmp_path):
    ref = torch.randn(3, 4)
    p = tmp_path / "legacy.pt"
    torch.save({"x": ref, "row": ref[2], "n": 5}, p, _use_new_zipfile_serialization=False)
    for wo in (True, False):
        got = ft.load(p, weights_only=wo)
        assert _raw(got["x"]) == _raw(ref) and _raw(got["row"]) == _raw(ref[2]) and got["n"] == 5
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ft.load(p, mmap=True)


def test_map_location_forms():
    buf = _roundtrip_bytes({"x": torch.arange(4)}, torch.save).getvalue()
    seen = []

    def fn(storage, loc):
        seen.append(loc)
        return storage

    for ml in ("cpu", ft.device("cpu"), {"cpu": "cpu"}, fn, None):
        assert ft.load(io.BytesIO(buf), map_location=ml)["x"].tolist() == [0, 1, 2, 3]
    assert seen == ["cpu"]
    cuda = _rewrite_pickle(buf, lambda d: d.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    with pytest.raises(RuntimeError, match="CUDA device but torch.cuda.is_available"):
        ft.load(io.BytesIO(cuda))
    assert ft.load(io.BytesIO(cuda), map_location="cpu")["x"].tolist() == [0, 1, 2, 3]


class Point:
    def __init__(self, x=0, y=0):
        self.x, self.y = x, y


def test_safe_globals_extend_the_allow_list():
    buf = _roundtrip_bytes({"pt": Point(1, 2), "w": torch.ones(2)}, torch.save).getvalue()
    with pytest.raises(pickle.UnpicklingError, match=f"{__name__}.Point was not an allowed global"):
        ft.load(io.BytesIO(buf))
    assert ft.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf)) == [f"{__name__}.Point"]
    with ft.serialization.safe_globals([Point]):
        got = ft.load(io.BytesIO(buf))
    assert isinstance(got["pt"], Point) and (got["pt"].x, got["pt"].y) == (1, 2)
    with pytest.raises(pickle.UnpicklingError):
        ft.load(io.BytesIO(buf))  # the context manager removed it again
    ft.serialization.add_safe_globals([Point])
    try:
        assert Point in ft.serialization.get_safe_globals()
        assert ft.load(io.BytesIO(buf))["pt"].y == 2
    finally:
        ft.serialization.clear_safe_globals()
    assert ft.serialization.get_safe_globals() == []
    assert ft.load(io.BytesIO(buf), weights_only=False)["pt"].x == 1


def test_save_rejects_differently_typed_views_and_accepts_files():
    x = ft.ones(4, dtype=ft.int16)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        ft.save([x, x.view(ft.bfloat16)], io.BytesIO())


# ------------------------------------------------------------------------------------------------
# malicious and broken files
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "pwned"
    yield path
    assert not path.exists(), "a checkpoint ran code"


def _zip(records, prefix="archive", compress=None):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in records.items():
            zf.writestr(f"{prefix}/{name}", data, compress_type=(compress or {}).get(name, zipfile.ZIP_STORED))
    return out.getvalue()


def _records(buf):
    zf = zipfile.ZipFile(io.BytesIO(buf))
    return {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist()}


def _rewrite_pickle(buf, fn):
    recs = _records(buf)
    recs["data.pkl"] = fn(recs["data.pkl"])
    return _zip(recs)


def _as_checkpoint(pkl):
    return _zip({"data.pkl": pkl, "byteorder": b"little", "version": b"3\n"})


class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Eval:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


class _Exec:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


def _evil_objects(marker):
    touch = f"open({str(marker)!r}, 'w').close()"
    return {
        "os.system": _System(f"touch {marker}"),
        "eval": _Eval(touch),
        "exec": _Exec(touch),
    }


LOADERS = {"ferrotorch": ft.load, "torch": torch.load}


@pytest.mark.parametrize("which", ["os.system", "eval", "exec"])
@pytest.mark.parametrize("nesting", ["top", "in_state_dict", "deep"])
def test_reduce_payloads_never_run(marker, which, nesting):
    evil = _evil_objects(marker)[which]
    obj = {"top": evil,
           "in_state_dict": collections.OrderedDict([("w", torch.ones(2)), ("evil", evil)]),
           "deep": {"a": [1, (2, {"b": evil})]}}[nesting]
    buf = _roundtrip_bytes(obj, torch.save).getvalue()
    for name, loader in LOADERS.items():
        with pytest.raises(pickle.UnpicklingError) as e:
            loader(io.BytesIO(buf))
        msg = str(e.value)
        expected = {"os.system": "posix.system", "eval": "eval", "exec": "exec"}[which]
        assert expected in msg, (name, msg)
    if which == "os.system":
        assert "is blocked" in msg


@pytest.mark.parametrize("global_", [b"builtins\nexec\n", b"__builtin__\neval\n", b"posix\nsystem\n",
                                     b"os\nsystem\n", b"subprocess\ncall\n", b"builtins\ngetattr\n",
                                     b"torch\nload\n", b"ferrotorch.serialization\nload\n"])
def test_hand_written_global_payloads(marker, global_):
    pkl = (b"\x80\x02c" + global_ + b"X" + struct.pack("<I", len(f"touch {marker}"))
           + f"touch {marker}".encode() + b"\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL"):
        ft.load(io.BytesIO(_as_checkpoint(pkl)))


def test_payload_in_storage_record_id(marker):
    # The persistent id names os.system as its storage type.
    pkl = (b"\x80\x02(X\x07\x00\x00\x00storagecposix\nsystem\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ.")
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        ft.load(io.BytesIO(_as_checkpoint(pkl)))
    # An allowed but non-storage global as the storage type, and a non-storage persistent id.
    pkl = b"\x80\x02(X\x07\x00\x00\x00storageccollections\nOrderedDict\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ."
    with pytest.raises(pickle.UnpicklingError, match="not a storage type"):
        ft.load(io.BytesIO(_as_checkpoint(pkl)))
    pkl = b"\x80\x02(X\x06\x00\x00\x00moduleK\x01tQ."
    with pytest.raises(pickle.UnpicklingError, match="Only persistent_load of storage"):
        ft.load(io.BytesIO(_as_checkpoint(pkl)))


def test_full_unpickler_is_opt_in(marker):
    # weights_only=False is PyTorch's documented unsafe path: it does run code, which is why
    # it is not the default.
    buf = _roundtrip_bytes({"x": _System(f"touch {marker}")}, torch.save).getvalue()
    with pytest.raises(pickle.UnpicklingError):
        ft.load(io.BytesIO(buf))
    assert not marker.exists()


def test_zip_bomb_record_is_refused():
    ref = torch.zeros(16 * 1024 * 1024)  # 64 MiB of zeros deflates ~1000:1
    recs = _records(_roundtrip_bytes(ref, torch.save).getvalue())
    bomb = _zip(recs, compress={"data/0": zipfile.ZIP_DEFLATED})
    with pytest.raises(RuntimeError, match="zip bomb"):
        ft.load(io.BytesIO(bomb))
    # an honest compressed record still loads
    small = _zip(_records(_roundtrip_bytes(torch.arange(10.0), torch.save).getvalue()),
                 compress={"data/0": zipfile.ZIP_DEFLATED})
    assert ft.load(io.BytesIO(small)).tolist() == list(range(10))


def test_storage_record_shorter_than_tensor_needs():
    recs = _records(_roundtrip_bytes(torch.arange(100.0), torch.save).getvalue())
    recs["data/0"] = recs["data/0"][:40]
    with pytest.raises(RuntimeError, match="holds 40 bytes but the tensor needs 400"):
        ft.load(io.BytesIO(_zip(recs)))


def test_tensor_geometry_beyond_its_storage():
    buf = _roundtrip_bytes(torch.arange(6.0), torch.save).getvalue()
    # size 6 -> 60: the storage still holds 6 elements
    bad = _rewrite_pickle(buf, lambda d: d.replace(b"K\x06\x85", b"K\x3c\x85", 1))
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ft.load(io.BytesIO(bad))
    # a storage that claims 10**12 elements fails before allocating
    import re
    huge = _rewrite_pickle(buf, lambda d: re.sub(rb"(cpuq.)K\x06", lambda m: m.group(1) + b"\x8a\x06\x00\x10\xa5\xd4\xe8\x00", d, count=1))
    assert huge != buf
    with pytest.raises(RuntimeError, match="the tensor needs"):
        ft.load(io.BytesIO(huge))


def test_truncated_corrupted_and_foreign_files(tmp_path):
    good = _roundtrip_bytes({"w": torch.randn(50), "n": 3}, torch.save).getvalue()
    for cut in (10, len(good) // 3, len(good) // 2, len(good) - 30):
        with pytest.raises(RuntimeError, match="PytorchStreamReader"):
            ft.load(io.BytesIO(good[:cut]))
    with pytest.raises(EOFError):
        ft.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError, match="invalid load key"):
        ft.load(io.BytesIO(b"GIF89a not a checkpoint"))
    legacy_bad_magic = pickle.dumps(12345, protocol=2) + pickle.dumps(1001, protocol=2)
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        ft.load(io.BytesIO(legacy_bad_magic))
    with pytest.raises(RuntimeError, match="data.pkl"):
        ft.load(io.BytesIO(_zip({"other.txt": b"hi"})))
    # truncated pickle inside an intact archive
    trunc = _rewrite_pickle(good, lambda d: d[: len(d) // 2])
    with pytest.raises(pickle.UnpicklingError, match="truncated"):
        ft.load(io.BytesIO(trunc))
    # stack underflow and bad memo references
    for pkl in (b"\x80\x02\x85.", b"\x80\x02h\x07.", b"\x80\x02t.", b"\x80\x02.", b"\x80\x02\xff."):
        with pytest.raises(pickle.UnpicklingError):
            ft.load(io.BytesIO(_as_checkpoint(pkl)))


def test_random_corruption_never_crashes(marker):
    good = _roundtrip_bytes({"w": torch.randn(8, 8), "b": torch.arange(5), "o": [1, "x"]}, torch.save).getvalue()
    rng = random.Random(0)
    ok = (RuntimeError, pickle.UnpicklingError, ValueError, EOFError, TypeError, UnicodeDecodeError)
    for _ in range(300):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(bad))
            bad[i] = rng.randrange(256)
        try:
            ft.load(io.BytesIO(bytes(bad)))
        except ok as e:
            assert str(e)


def test_load_state_dict_assign_keeps_checkpoint_tensors():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    tm.train()(torch.randn(8, 3, dtype=torch.float64))  # move the running stats
    sd = ft.load(_roundtrip_bytes(tm.state_dict(), torch.save))
    fm = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4))
    fm.load_state_dict(sd, assign=True)
    assert isinstance(fm[0].weight, ft.nn.Parameter) and fm[0].weight.requires_grad
    assert fm[0].weight.dtype == ft.float64  # assign keeps the checkpoint's dtype, as in PyTorch
    assert fm[0].weight.untyped_storage().data_ptr() == sd["0.weight"].untyped_storage().data_ptr()
    for k, v in tm.state_dict().items():
        assert _raw(fm.state_dict()[k]) == _raw(v), k
    tm.eval()
    fm.eval()
    x = np.random.default_rng(1).standard_normal((5, 3))
    np.testing.assert_allclose(fm(ft.from_numpy(x)).detach().numpy(), tm(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    # without assign the module keeps its own float32 tensors
    fm2 = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4))
    w = fm2[0].weight
    fm2.load_state_dict(sd)
    assert fm2[0].weight is w and w.dtype == ft.float32


def test_legacy_stream_to_torch(tmp_path):
    x = ft.from_numpy(np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32))
    obj = {"x": x, "row": x[1], "b": ft.ones(2, dtype=ft.bfloat16), "i": ft.arange(3), "n": [1, "a"]}
    p = tmp_path / "legacy.pt"
    ft.save(obj, p, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(p)
    got = torch.load(p)
    assert _raw(got["x"]) == _raw(x) and _raw(got["row"]) == _raw(x[1]) and got["n"] == [1, "a"]
    assert got["row"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    assert got["b"].dtype == torch.bfloat16 and got["i"].tolist() == [0, 1, 2]
    back = ft.load(p)
    assert _raw(back["x"]) == _raw(x) and back["n"] == [1, "a"]


def test_corrupted_storage_bytes_fail_the_crc():
    ref = torch.arange(100.0)
    raw = bytearray(_roundtrip_bytes(ref, torch.save).getvalue())
    at = bytes(raw).find(ref.numpy().tobytes())
    assert at > 0
    raw[at + 17] ^= 0xFF
    with pytest.raises(RuntimeError, match="CRC-32"):
        ft.load(io.BytesIO(bytes(raw)))


def test_geometry_values_beyond_int64_are_refused():
    buf = _roundtrip_bytes(torch.arange(6.0), torch.save).getvalue()
    # stride 1 -> 2**64 (LONG1 with 9 bytes)
    bad = _rewrite_pickle(buf, lambda d: d.replace(b"K\x01\x85", b"\x8a\x09" + (1 << 64).to_bytes(9, "little") + b"\x85", 1))
    assert bad != buf
    with pytest.raises(RuntimeError, match="invalid tensor geometry"):
        ft.load(io.BytesIO(bad))


def test_whole_module_pickles_with_weights_only_false():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    buf = _roundtrip_bytes(tm, torch.save).getvalue()
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        ft.load(io.BytesIO(buf))
    fm = ft.load(io.BytesIO(buf), weights_only=False)
    assert isinstance(fm, ft.nn.Sequential) and isinstance(fm[0], ft.nn.Linear)
    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(fm(ft.from_numpy(x)).detach().numpy(), tm(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    again = ft.load(_roundtrip_bytes(fm, ft.save), weights_only=False)
    np.testing.assert_allclose(again(ft.from_numpy(x)).detach().numpy(), fm(ft.from_numpy(x)).detach().numpy())


def test_parameter_state_loads_but_cannot_reach_dunders():
    p = torch.nn.Parameter(torch.ones(2))
    p.foo = 7
    buf = _roundtrip_bytes({"p": p}, torch.save).getvalue()
    got = ft.load(io.BytesIO(buf))["p"]
    assert isinstance(got, ft.nn.Parameter) and got.foo == 7
    evil = _rewrite_pickle(buf, lambda d: d.replace(b"X\x03\x00\x00\x00foo", b"X\x09\x00\x00\x00__class__"))
    assert evil != buf
    with pytest.raises(pickle.UnpicklingError, match="refusing to set attribute '__class__'"):
        ft.load(io.BytesIO(evil))


def test_get_unsafe_globals_matches_torch(marker):
    objs = [{"w": torch.ones(2)}, _System(f"touch {marker}"), {"a": [_Eval("1"), Point(1, 2)]},
            collections.OrderedDict(x=torch.nn.Parameter(torch.zeros(1)))]
    for obj in objs:
        buf = _roundtrip_bytes(obj, torch.save).getvalue()
        assert ft.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf)) == \
            sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf)))


def test_byte_order_record_and_fallback():
    ref = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    recs = _records(_roundtrip_bytes(ref, torch.save).getvalue())
    # the same values written big-endian, with a "big" record: swapped on load
    big = dict(recs, byteorder=b"big")
    big["data/0"] = ref.numpy().astype(">i4").tobytes()
    assert ft.load(io.BytesIO(_zip(big))).tolist() == ref.tolist()
    assert torch.load(io.BytesIO(_zip(big))).tolist() == ref.tolist()
    # no record: the fallback decides, as in PyTorch
    norec = {k: v for k, v in big.items() if k != "byteorder"}
    try:
        for lib in (ft, torch):
            lib.serialization.set_default_load_endianness(lib.serialization.LoadEndianness.BIG)
        assert ft.load(io.BytesIO(_zip(norec))).tolist() == torch.load(io.BytesIO(_zip(norec))).tolist() \
            == ref.tolist()
    finally:
        for lib in (ft, torch):
            lib.serialization.set_default_load_endianness(None)
    assert ft.load(io.BytesIO(_zip(norec))).tolist() == torch.load(io.BytesIO(_zip(norec))).tolist()
    with pytest.raises(TypeError, match="Invalid argument type"):
        ft.serialization.set_default_load_endianness("big")
    bad = dict(recs, byteorder=b"middle")
    with pytest.raises(ValueError, match="Unknown endianness type: middle"):
        ft.load(io.BytesIO(_zip(bad)))


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(protocol):
    ref = {"w": torch.randn(3, 2), "meta": collections.OrderedDict(name="x" * 300, n=2**40, t=(1.5, None)),
           "b": b"\x00" * 300, "s": {1, 2}}
    buf = io.BytesIO()
    torch.save(ref, buf, pickle_protocol=protocol)
    buf.seek(0)
    got = ft.load(buf)
    assert _raw(got["w"]) == _raw(ref["w"])
    assert got["meta"] == ref["meta"] and got["b"] == ref["b"] and got["s"] == ref["s"]
    out = io.BytesIO()
    ft.save(got, out, pickle_protocol=protocol)
    out.seek(0)
    # PyTorch's own weights_only unpickler knows only protocol 2's opcodes (BINBYTES is 3+)
    back = torch.load(out, weights_only=protocol == 2)
    assert _raw(back["w"]) == _raw(ref["w"]) and back["meta"] == ref["meta"] and back["b"] == ref["b"]


@pytest.mark.parametrize("dtype", ["complex32", "uint16", "float8_e4m3fn"])
def test_dtypes_ferrotorch_lacks_give_a_clear_error(dtype):
    buf = _roundtrip_bytes({"x": torch.zeros(3, dtype=getattr(torch, dtype))}, torch.save)
    with pytest.raises(RuntimeError, match=f"ferrotorch (has no dtype|cannot rebuild a tensor of dtype) torch.{dtype}"):
        ft.load(buf)


# ------------------------------------------------------------------------------------------------
# copy.deepcopy and pickle of tensors
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lib", ["ferrotorch", "torch"])
def test_deepcopy_keeps_views_grads_and_parameters(lib):
    L = ft if lib == "ferrotorch" else torch
    x = L.arange(6.0).reshape(2, 3)
    a, b, t = copy.deepcopy((x, x[1], x.t()))
    a[1, 0] = 100.0
    assert b.tolist() == [100.0, 4.0, 5.0] and x[1].tolist() == [3.0, 4.0, 5.0]
    assert tuple(t.stride()) == (1, 3) and t[0, 1].item() == 100.0
    leaf = L.ones(2, requires_grad=True)
    leaf.grad = L.full((2,), 3.0)
    c = copy.deepcopy(leaf)
    assert c.requires_grad and c.is_leaf and c.grad.tolist() == [3.0, 3.0] and c.grad is not leaf.grad
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(leaf * 2)
    m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU())
    m2 = copy.deepcopy(m)
    assert isinstance(m2[0].weight, L.nn.Parameter) and m2[0].weight is not m[0].weight
    assert m2[0].weight.tolist() == m[0].weight.tolist() and m2[0].weight.requires_grad
    with L.no_grad():
        m2[0].weight.fill_(0.0)
    assert m[0].weight.abs().sum().item() > 0



def test_pickle_roundtrip_every_dtype():
    for dtype in DTYPES:
        x = _ft_from_torch(_torch_tensor(dtype, shape=(2, 3)))
        y = pickle.loads(pickle.dumps({"x": x, "t": x.t()}))
        assert str(y["x"].dtype) == str(x.dtype) and _raw(y["x"]) == _raw(x) and _raw(y["t"]) == _raw(x.t())
    p = ft.nn.Parameter(ft.ones(2))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, ft.nn.Parameter) and q.requires_grad
    m = pickle.loads(pickle.dumps(ft.nn.Linear(2, 2)))
    assert isinstance(m.weight, ft.nn.Parameter)
