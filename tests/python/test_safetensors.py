"""Safetensors files (ferrotorch.utils.safetensors, through the Rust crate):
round trips of every dtype, files interchangeable with the ``safetensors``
package's, metadata, and PyTorch-package errors for bad input."""

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch.utils import safetensors as fst

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _sample(lib, dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = np.asarray(rng.standard_normal(shape) * 100, dtype=np.float64)
    return lib.from_numpy(a.reshape(shape)).to(getattr(lib, dtype))


def _bits(t):
    """The tensor's bytes (bfloat16 through an int16 view: NumPy has no bfloat16)."""
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.view(ft.int16 if isinstance(t, ft.Tensor) else __import__("torch").int16)
    return t.numpy().tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(tmp_path, dtype):
    t = _sample(ft, dtype)
    scalar = _sample(ft, dtype, ())
    empty = _sample(ft, dtype, (0, 3))
    fst.save_file({"t": t, "s": scalar, "e": empty}, tmp_path / "x.safetensors", metadata={"format": "pt"})
    back = fst.load_file(tmp_path / "x.safetensors")
    assert set(back) == {"t", "s", "e"}
    for k, v in (("t", t), ("s", scalar), ("e", empty)):
        assert back[k].dtype == v.dtype and tuple(back[k].shape) == tuple(v.shape)
        assert _bits(back[k]) == _bits(v)
    again = fst.load(fst.save({"t": t}))
    assert _bits(again["t"]) == _bits(t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_files_interchange_with_the_safetensors_package(tmp_path, dtype):
    torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
    st = pytest.importorskip("safetensors.torch", reason="safetensors package not installed")
    ours = {"w": _sample(ft, dtype, (2, 5), 1), "b": _sample(ft, dtype, (5,), 2)}
    fst.save_file(ours, tmp_path / "ours.safetensors", metadata={"who": "ferrotorch"})
    theirs = st.load_file(tmp_path / "ours.safetensors")
    for k in ours:
        assert _bits(theirs[k]) == _bits(ours[k]) and str(theirs[k].dtype) == str(ours[k].dtype)
    ref = {"w": _sample(torch, dtype, (4, 3), 3), "x": _sample(torch, dtype, (1,), 4)}
    st.save_file(ref, tmp_path / "theirs.safetensors")
    back = fst.load_file(tmp_path / "theirs.safetensors")
    for k in ref:
        assert _bits(back[k]) == _bits(ref[k]) and str(back[k].dtype) == str(ref[k].dtype)
    # bytes both ways, metadata kept
    assert _bits(fst.load(st.save({"w": ref["w"]}))["w"]) == _bits(ref["w"])
    from safetensors import safe_open
    with safe_open(tmp_path / "ours.safetensors", framework="pt") as f:
        assert f.metadata() == {"who": "ferrotorch"}


def test_errors_as_the_safetensors_package():
    a = ft.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="non contiguous"):
        fst.save({"a": a.t()})
    with pytest.raises(RuntimeError, match="share memory"):
        fst.save({"a": a, "b": a})
    fst.save({"a": a[0], "b": a[1]})  # disjoint slices of one storage are fine
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        fst.save({"a": [1.0]})
    with pytest.raises(TypeError):
        fst.save({"a": a}, metadata={"x": 1})
    with pytest.raises(RuntimeError, match="safetensors"):
        fst.load(b"garbage")
    good = fst.save({"a": a})
    with pytest.raises(RuntimeError, match="safetensors"):
        fst.load(good[:-5])  # truncated data
    with pytest.raises(RuntimeError, match="cannot open"):
        fst.load_file("/nonexistent/x.safetensors")
