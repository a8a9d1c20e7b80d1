"""The per-op fast paths (issue 9's overhead rows) against PyTorch and exact
references: float32 ``sin``/``cos`` accuracy (guarding any vector form),
``view`` as one dim, ``x[i]``,
full ``sum`` of dense tensors, binary ops without broadcasting, autograd state
of tensors autograd never touched, and the allocator's front cache for tiny
tensors (its statistics stay exact). Each fast path must give what the
general path and PyTorch give: values, shapes, strides, ``_base``, version
counters, ``grad_fn`` names, gradients and errors."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402


def _ulp_err_f32(y, ref):
    """Distance of float32 ``y`` from the float64 ``ref`` in float32 ulps at ``ref``."""
    y = y.astype(np.float64)
    a = np.abs(ref)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(divide="ignore"):
        ulp = np.where(a < tiny, 2.0 ** -149, 2.0 ** (np.floor(np.log2(np.maximum(a, tiny))) - 23))
    return np.abs(y - ref) / ulp


def _trig_inputs():
    rng = np.random.default_rng(20261129)
    parts = [
        np.linspace(-12.0, 12.0, 20_001, dtype=np.float32),
        rng.uniform(-70_000.0, 70_000.0, 20_000).astype(np.float32),
        (np.arange(1, 20_000, dtype=np.float64) * (np.pi / 2)).astype(np.float32),  # next to the zeros
        np.array([0.0, -0.0, 1e-30, -1e-30, 1e-45, 65536.0, 65537.0, -65536.5, 1e5, 3e38, np.inf, -np.inf, np.nan], dtype=np.float32),
    ]
    return np.concatenate(parts)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_within_two_and_a_half_ulp_of_the_exact_value(name):
    x = _trig_inputs()
    got = getattr(ft.from_numpy(x), name)().numpy()
    ref = getattr(np, name)(x.astype(np.float64))
    finite = np.isfinite(ref)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    err = _ulp_err_f32(got[finite], ref[finite])
    assert err.max() <= 2.5, f"{name}: {err.max():.2f} ulp at x = {x[finite][err.argmax()]!r}"
    # PyTorch's own float32 kernel is within a few ulp of the same values.
    want = getattr(torch.from_numpy(x), name)().numpy()
    np.testing.assert_allclose(got[finite], want[finite], rtol=4e-7, atol=2e-7)


def test_float32_sin_keeps_the_sign_of_zero_and_cos_of_zero_is_one():
    x = np.array([0.0, -0.0] * 9, dtype=np.float32)
    s, c = ft.from_numpy(x).sin().numpy(), ft.from_numpy(x).cos().numpy()
    ts = torch.from_numpy(x).sin().numpy()
    assert np.array_equal(np.signbit(s), np.signbit(ts))
    assert np.array_equal(np.signbit(s), np.signbit(x))
    assert (c == 1.0).all()


@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 33, 100])
def test_sin_cos_every_length_strided_and_in_place_agree(n):
    base = np.linspace(-40.0, 40.0, 2 * n, dtype=np.float32)
    x = ft.from_numpy(base.copy())
    strided = x[::2]
    for name in ("sin", "cos"):
        dense = getattr(strided.contiguous(), name)()
        # Strided and contiguous runs agree within an ulp or two.
        np.testing.assert_allclose(getattr(strided, name)().numpy(), dense.numpy(), rtol=3e-7, atol=1e-7)
        y = ft.from_numpy(base.copy())
        v = y._version
        getattr(y, name + "_")()
        assert y._version == v + 1
        np.testing.assert_array_equal(y.numpy(), getattr(ft.from_numpy(base.copy()), name)().numpy())


def test_sin_cos_gradients_and_other_dtypes_unchanged():
    xt = torch.linspace(-3, 3, 11, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.sin, (xt,))
    x = ft.linspace(-3, 3, 11, requires_grad=True)
    y = x.sin()
    assert y.grad_fn.name() == "SinBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.linspace(-3, 3, 11, dtype=np.float32)), rtol=1e-6, atol=1e-6)
    for dt, tdt in ((ft.float64, torch.float64), (ft.float16, torch.float16), (ft.bfloat16, torch.bfloat16)):
        a = ft.linspace(-5, 5, 21, dtype=dt).cos()
        b = torch.linspace(-5, 5, 21, dtype=tdt).cos()
        assert a.dtype == dt
        np.testing.assert_allclose(a.float().numpy(), b.float().numpy(), rtol=1e-2 if dt != ft.float64 else 1e-12, atol=1e-3 if dt != ft.float64 else 1e-12)


def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.arange(16.0).reshape(4, 4),
        lambda lib: lib.arange(24.0).reshape(2, 3, 4)[1],
        lambda lib: lib.arange(6.0).reshape(6, 1),
        lambda lib: lib.tensor(3.5),
        lambda lib: lib.arange(12.0).reshape(3, 4).t(),
        lambda lib: lib.zeros(0, 3),
    ],
)
@pytest.mark.parametrize("req", [-1, "numel", 5])
def test_view_as_one_dim_matches_pytorch(make, req):
    a, b = make(ft), make(torch)
    size = a.numel() if req == "numel" else req
    try:
        want = b.view(size)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            a.view(size)
        assert str(got.value) == str(e)
        return
    v = a.view(size)
    assert _layout(v) == _layout(want)
    assert v._base is (a if a._base is None else a._base)
    np.testing.assert_array_equal(v.numpy(), want.numpy())
    v.add_(1)
    assert v._version == a._version


def test_view_and_select_record_their_nodes_only_under_autograd():
    x = ft.arange(16.0).reshape(4, 4)
    assert x.view(-1).grad_fn is None and x[0].grad_fn is None
    x.requires_grad_(True)
    v, r = x.view(-1), x[1]
    assert v.grad_fn.name() == "ViewBackward0" and r.grad_fn.name() == "SelectBackward0"
    (v * ft.arange(16.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(16.0).reshape(4, 4))
    x.grad = None
    (r * 3).sum().backward()
    want = np.zeros((4, 4), dtype=np.float32)
    want[1] = 3
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with ft.no_grad():
        assert x[2].grad_fn is None and x.view(16).grad_fn is None


@pytest.mark.parametrize("i", [0, 3, -1, -4])
def test_int_index_is_a_view_like_pytorch(i):
    a, b = ft.arange(16.0).reshape(4, 4), torch.arange(16.0).reshape(4, 4)
    r, w = a[i], b[i]
    assert _layout(r) == _layout(w)
    # `_base` is the root of the view chain, as in PyTorch.
    assert r._base is a._base and w._base is b._base
    np.testing.assert_array_equal(r.numpy(), w.numpy())
    for bad in (4, -5):
        with pytest.raises(IndexError) as e:
            a[bad]
        with pytest.raises(IndexError) as t:
            b[bad]
        assert str(e.value) == str(t.value)


@pytest.mark.parametrize(
    "shape,perm",
    [((100,), None), ((4, 25), None), ((1, 100), None), ((100, 1), None), ((2, 1, 3, 1, 5), None), ((30, 40), (1, 0)), ((1,), None), ((0, 3), None)],
)
def test_full_sum_matches_pytorch(shape, perm):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape).astype(np.float32)
    x, y = ft.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if perm is not None:
        x, y = x.permute(*perm), y.permute(*perm)
    s, t = x.sum(), y.sum()
    assert tuple(s.shape) == () and s.dtype == ft.float32
    # Both sum float32 in PyTorch's cascade order: the same float.
    assert s.item() == t.item()


def test_binary_ops_same_shape_and_broadcast_match_pytorch():
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((1,), (1,), (5, 1)))
    for op in ("add", "sub", "mul", "div"):
        for p, q in ((a, b), (a, c), (c, a)):
            got = getattr(ft.from_numpy(p), op)(ft.from_numpy(q))
            want = getattr(torch.from_numpy(p), op)(torch.from_numpy(q))
            assert tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    z = ft.zeros(1, dtype=ft.complex64).conj()
    w = ft.ones(1, dtype=ft.complex64)
    assert (z + w).is_conj() is False


def test_autograd_state_of_untouched_tensors():
    x = ft.rand(3)
    assert x.requires_grad is False and x.is_leaf and x.grad_fn is None
    y = x + 1
    assert y.grad_fn is None and y.is_leaf
    x.requires_grad_(True)
    z = x + 1
    assert z.grad_fn.name() == "AddBackward0" and not z.is_leaf and z.requires_grad
    d = z.detach()
    assert d.requires_grad is False and d.is_leaf
    d.requires_grad_(True)
    assert (d * 2).grad_fn.name() == "MulBackward0"
    # A view made before its base required grad requires grad with it, as in PyTorch.
    for lib in (ft, torch):
        b = lib.rand(3)
        v = b[0]
        b.requires_grad_(True)
        assert v.requires_grad is True
        w = b[1]
        assert w.requires_grad is True and w.grad_fn.name() == "SelectBackward0"


def _fresh(body):
    code = "import json, ferrotorch as ft\nout = {}\n" + textwrap.dedent(body) + "\nprint(json.dumps(out))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_tiny_tensors_reuse_their_blocks_and_statistics_stay_exact():
    out = _fresh(
        """
        s0 = ft.memory_stats()
        x = ft.empty(100)
        out["after_one"] = ft.memory_allocated()
        p = x.data_ptr()
        del x
        out["after_free"] = ft.memory_allocated()
        ys = [ft.empty(100) for _ in range(3)]
        out["reused_first"] = ys[0].data_ptr() == p
        out["after_three"] = ft.memory_allocated()
        s = ft.memory_stats()
        out["count"] = s["allocation.all.allocated"] - s0["allocation.all.allocated"]
        out["freed"] = s["allocation.all.freed"] - s0["allocation.all.freed"]
        out["requested"] = s["requested_bytes.all.current"]
        del ys
        out["end"] = ft.memory_allocated()
        out["reserved"] = ft.memory_reserved()
        ft.empty_cache()
        out["reserved_after_empty"] = ft.memory_reserved()
        """
    )
    assert out["after_one"] == 512 and out["after_free"] == 0
    assert out["reused_first"]
    assert out["after_three"] == 3 * 512
    assert out["count"] == 4 and out["freed"] == 1
    assert out["requested"] == 3 * 400
    assert out["end"] == 0 and out["reserved"] == 2 * 1024 * 1024
    assert out["reserved_after_empty"] == 0


def test_a_front_cache_miss_merges_parked_blocks_before_growing():
    out = _fresh(
        """
        per_segment = 2 * 1024 * 1024 // 512
        xs = [ft.empty(100) for _ in range(per_segment)]
        out["segments_full"] = ft.memory_stats()["segment.all.current"]
        # Free two neighbours: parked (each a 512-byte block), not merged yet.
        a, b = xs[10], xs[11]
        pa = a.data_ptr()
        del a, b
        xs[10] = xs[11] = None
        # A 1 KiB request finds no parked block of its size: the parked
        # blocks merge and serve it in the full segment.
        y = ft.empty(200)
        out["same_place"] = y.data_ptr() == pa
        out["segments_after"] = ft.memory_stats()["segment.all.current"]
        """
    )
    assert out["segments_full"] == 1
    assert out["same_place"]
    assert out["segments_after"] == 1
