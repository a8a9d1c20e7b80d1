"""``torch.fft`` against PyTorch: the native transforms (``_C._fft`` on real
views of complex signals) for every function, norm mode, ``n``/``s``
padding and trimming, dims, dtypes and errors; gradients against PyTorch's
and ``gradcheck``; ``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift``."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402
from ferrotorch import _C  # noqa: E402

_FT_DT = {torch.float32: ft.float32, torch.float64: ft.float64}
_TOL = {torch.float32: dict(rtol=2e-4, atol=2e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}

_C2C = ("fft", "ifft")
_REAL_IN = ("rfft", "ihfft")
_REAL_OUT = ("irfft", "hfft")
_BASES = _C2C + _REAL_IN + _REAL_OUT


def _rand(shape, dtype, seed=0, complex_=False):
    g = torch.Generator().manual_seed(seed)
    if complex_:
        cdt = torch.complex64 if dtype == torch.float32 else torch.complex128
        return torch.randn(shape, generator=g, dtype=cdt)
    return torch.randn(shape, generator=g, dtype=dtype)


def _to_ft(t, requires_grad=False):
    """The ferrotorch input for torch tensor ``t``: its real view when complex."""
    a = torch.view_as_real(t) if t.is_complex() else t
    x = ft.from_numpy(a.detach().numpy().copy())
    return x.requires_grad_(True) if requires_grad else x


def _np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach().tolist())


def _torch_rv(t):
    return torch.view_as_real(t) if t.is_complex() else t


def _native(name, t, s, dim, norm):
    """``_C._fft`` on ``t``'s ferrotorch counterpart, returning the real view."""
    rank_s = None if s is None else list(s)
    rank_d = None if dim is None else list(dim)
    return _C._fft(name, _to_ft(t), t.is_complex(), rank_s, rank_d, norm)


def _call_torch(name, t, s, dim, norm):
    f = getattr(torch.fft, name)
    if name[-1] not in "2n":
        kw = {} if s is None else {"n": s[0]}
        return f(t, dim=dim[0] if dim else -1, norm=norm, **kw)
    kw = {}
    if s is not None:
        kw["s"] = s
    if dim is not None:
        kw["dim"] = dim
    return f(t, norm=norm, **kw)


def _check(name, t, s=None, dim=None, norm=None):
    want = _call_torch(name, t, s, dim, norm)
    got = _native(name, t, s, dim, norm)
    want_rv = _torch_rv(want.resolve_conj())
    assert tuple(got.shape) == tuple(want_rv.shape), (name, tuple(got.shape), tuple(want_rv.shape))
    assert got.dtype == _FT_DT[want_rv.dtype]
    np.testing.assert_allclose(_np(got), _np(want_rv), **_TOL[want_rv.dtype])


# ---- values: every function, both precisions, real and complex inputs, every norm ----------

_ONE_D_CASES = [
    # (shape, n, dim)
    ((8,), None, -1), ((7,), None, 0), ((1,), None, -1), ((3, 17), None, 1), ((5, 4), None, 0),
    ((6,), 10, -1), ((9,), 4, -1), ((4, 6, 5), 3, 1), ((2, 97), None, -1), ((128,), 64, 0),
]


@pytest.mark.parametrize("name", _BASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_d_matches_torch(name, dtype, complex_, norm):
    if complex_ and name in _REAL_IN:
        pytest.skip("real-input transform")
    for i, (shape, n, dim) in enumerate(_ONE_D_CASES):
        if name in _REAL_OUT and n is None and shape[dim] == 1:
            continue  # the default output length 2 * (1 - 1) = 0 is an error, tested below
        t = _rand(shape, dtype, seed=i, complex_=complex_)
        _check(name, t, None if n is None else (n,), (dim,), norm)


_N_D_CASES = [
    # (shape, s, dim)
    ((4, 6), None, None), ((3, 5, 4), None, None), ((3, 5, 4), (4, 7), None), ((3, 5, 4), None, (0, 2)),
    ((3, 5, 4), (2, 6), (2, 0)), ((6, 5), (-1, 8), None), ((2, 3, 4, 5), None, (1, 2, 3)), ((8,), (5,), None),
    ((5, 9), (9,), (0,)),
]


@pytest.mark.parametrize("base", _BASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_n_d_matches_torch(base, dtype, complex_, norm):
    if complex_ and base in _REAL_IN:
        pytest.skip("real-input transform")
    for i, (shape, s, dim) in enumerate(_N_D_CASES):
        t = _rand(shape, dtype, seed=10 + i, complex_=complex_)
        _check(base + "n", t, s, dim, norm)
        if len(shape) >= 2 and (dim is None or len(dim) == 2) and (s is None or len(s) == 2):
            _check(base + "2", t, s, dim if dim is not None else None, norm)


def test_strided_and_offset_inputs():
    t = _rand((6, 10, 4), torch.float64, seed=3, complex_=True)
    view = t.transpose(0, 2)[1:, ::2]
    for name in ("fft", "ifftn", "irfft2", "hfftn"):
        want = _call_torch(name, view, None, None, None)
        got = _C._fft(name, _strided_view(view), True, None, None, None)
        np.testing.assert_allclose(_np(got), _np(_torch_rv(want)), rtol=1e-10, atol=1e-10)
    r = _rand((9, 12), torch.float64, seed=4).t()[::2]
    for name in ("rfft", "fft2", "ihfftn"):
        want = _call_torch(name, r, None, None, None)
        x = ft.from_numpy(_rand((9, 12), torch.float64, seed=4).numpy().copy()).t()[::2]
        np.testing.assert_allclose(_np(_C._fft(name, x, False, None, None, None)), _np(_torch_rv(want)), rtol=1e-10, atol=1e-10)


def _strided_view(view):
    """The ferrotorch real view of the complex torch view ``view``, with the same strides."""
    base = view
    while base._base is not None:
        base = base._base
    fb = ft.from_numpy(torch.view_as_real(base).numpy().copy())
    rv = torch.view_as_real(view)
    return fb.as_strided(tuple(rv.shape), tuple(rv.stride()), rv.storage_offset())


def test_integer_and_bool_inputs_promote_to_the_default_dtype():
    for dt, fdt in ((torch.int64, ft.int64), (torch.int32, ft.int32), (torch.bool, ft.bool)):
        t = torch.arange(6).to(dt)
        x = ft.from_numpy(t.numpy().copy())
        for name in ("fft", "rfft", "irfft", "hfftn"):
            want = _torch_rv(getattr(torch.fft, name)(t))
            got = _C._fft(name, x, False, None, None, None)
            assert got.dtype == _FT_DT[want.dtype]
            np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-5)
    torch.set_default_dtype(torch.float64)
    ft.set_default_dtype(ft.float64)
    try:
        got = _C._fft("fft", ft.arange(5), False, None, None, None)
        assert got.dtype == ft.float64
    finally:
        torch.set_default_dtype(torch.float32)
        ft.set_default_dtype(ft.float32)


def test_empty_dims_return_the_complex_input():
    t = _rand((3, 4), torch.float64, seed=2)
    want = _torch_rv(torch.fft.fftn(t, dim=()))
    np.testing.assert_array_equal(_np(_C._fft("fftn", _to_ft(t), False, None, [], None)), _np(want))


# ---- errors ---------------------------------------------------------------------------------

_ERRORS = [
    ("fft", (4,), False, None, None, "bogus"),
    ("fft", (4,), False, [0], None, None),
    ("fft", (4,), False, [-1], None, None),
    ("fft", (4,), False, None, [3], None),
    ("fft", (), False, None, None, None),
    ("irfft", (1,), True, None, None, None),
    ("rfft", (4,), True, None, None, None),
    ("ihfft", (4,), True, None, None, None),
    ("rfft2", (3, 4), True, None, None, None),
    ("ihfftn", (3, 4), True, None, None, None),
    ("rfftn", (3, 4), False, None, [], None),
    ("irfftn", (3, 4), True, None, [], None),
    ("hfftn", (3, 4), True, None, [], None),
    ("ihfftn", (3, 4), False, None, [], None),
    ("fftn", (3, 4), False, [2], [0, 1], None),
    ("fftn", (3, 4), False, [2, 2, 2], None, None),
    ("fftn", (3, 4), False, [-2, 3], None, None),
    ("fftn", (3, 4), False, None, [1, -1], None),
    ("fftn", (3, 4), False, None, [0, 5], None),
    ("fft2", (3,), False, None, None, None),
    ("fftn", (0, 3), False, None, None, None),
]


@pytest.mark.parametrize("name,shape,complex_,s,dim,norm", _ERRORS)
def test_errors_match_torch(name, shape, complex_, s, dim, norm):
    t = _rand(shape, torch.float32, complex_=complex_)
    with pytest.raises(Exception) as want:
        _call_torch(name, t, None if s is None else tuple(s), None if dim is None else tuple(dim), norm)
    with pytest.raises(Exception) as got:
        _C._fft(name, _to_ft(t), complex_, s, dim, norm)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dt", [ft.float16, ft.bfloat16])
def test_half_precision_is_unsupported_as_in_torch(dt):
    tdt = {ft.float16: torch.float16, ft.bfloat16: torch.bfloat16}[dt]
    for name in ("fft", "rfft", "hfft"):
        with pytest.raises(RuntimeError) as want:
            getattr(torch.fft, name)(torch.ones(4, dtype=tdt))
        with pytest.raises(RuntimeError, match=str(want.value)):
            _C._fft(name, ft.ones(4, dtype=dt), False, None, None, None)


# ---- gradients ------------------------------------------------------------------------------

_GRAD_CASES = [
    ("fft", (6,), True, None, None), ("fft", (7,), False, [9], None), ("ifft", (5,), False, None, None),
    ("ifft", (3, 4), True, [6], [0]), ("rfft", (8,), False, None, None), ("rfft", (7,), False, [5], None),
    ("irfft", (5,), True, None, None), ("irfft", (4,), True, [7], None), ("irfft", (3,), False, None, None),
    ("hfft", (5,), True, None, None), ("hfft", (4,), True, [5], None), ("ihfft", (7,), False, None, None),
    ("ihfft", (6,), False, None, None), ("fft2", (3, 4), False, None, None), ("fftn", (2, 3, 4), True, [3, 5], None),
    ("ifftn", (3, 5), True, None, [1, 0]), ("rfft2", (4, 6), False, None, None), ("rfftn", (3, 4, 5), False, [4, 3], None),
    ("irfft2", (4, 3), True, None, None), ("irfftn", (3, 4), True, [5, 5], None), ("hfft2", (3, 4), True, None, None),
    ("hfftn", (2, 3, 3), True, [2, 3, 4], None), ("ihfft2", (4, 5), False, None, None), ("ihfftn", (3, 4, 4), False, None, None),
]


@pytest.mark.parametrize("name,shape,complex_,s,dim", _GRAD_CASES)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_gradients_match_torch(name, shape, complex_, s, dim, norm):
    t = _rand(shape, torch.float64, seed=5, complex_=complex_).requires_grad_(True)
    want = _call_torch(name, t, None if s is None else tuple(s), None if dim is None else tuple(dim), norm)
    want_rv = _torch_rv(want)
    up = _rand(tuple(want_rv.shape), torch.float64, seed=6)
    (want_rv * up).sum().backward()
    x = _to_ft(t.detach(), requires_grad=True)
    got = _C._fft(name, x, complex_, s, dim, norm)
    (got * ft.from_numpy(up.numpy().copy())).sum().backward()
    np.testing.assert_allclose(_np(x.grad), _np(_torch_rv(t.grad)), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,shape,complex_,s,dim", _GRAD_CASES[::3])
def test_gradcheck_and_gradgradcheck(name, shape, complex_, s, dim):
    t = _rand(shape, torch.float64, seed=7, complex_=complex_)
    x = _to_ft(t, requires_grad=True)
    f = lambda v: _C._fft(name, v, complex_, s, dim, "ortho")  # noqa: E731
    assert ft.autograd.gradcheck(f, (x,))
    assert ft.autograd.gradgradcheck(f, (x,))


def test_primitive_grad_fn_names_match_torch():
    z = _rand((4, 6), torch.float64, complex_=True).requires_grad_(True)
    r = _rand((4, 6), torch.float64).requires_grad_(True)
    zf, rf = _to_ft(z.detach(), True), _to_ft(r.detach(), True)
    for name, t, x in (("fft", z, zf), ("rfft", r, rf), ("irfft", z, zf), ("fft", r, rf), ("fft2", z, zf),
                       ("rfftn", r, rf), ("irfft2", z, zf), ("hfft2", z, zf)):
        want = getattr(torch.fft, name)(t).grad_fn.name()
        got = _C._fft(name, x, t.is_complex(), None, None, None).grad_fn.name()
        assert got == want, (name, got, want)


def test_meta_tensors_get_the_output_shape():
    for name, shape, complex_ in (("fft", (3, 8), True), ("rfft2", (4, 6), False), ("irfftn", (3, 5), True)):
        t = _rand(shape, torch.float32, complex_=complex_)
        want = _torch_rv(getattr(torch.fft, name)(t.to("meta")))
        x = _to_ft(t).to("meta")
        got = _C._fft(name, x, complex_, None, None, None)
        assert got.device.type == "meta"
        assert tuple(got.shape) == tuple(want.shape)


# ---- fftfreq, rfftfreq, fftshift, ifftshift -------------------------------------------------

@pytest.mark.parametrize("n,d", [(1, 1.0), (5, 1.0), (8, 0.1), (9, 2.5), (0, 1.0)])
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.float32])
def test_fftfreq_and_rfftfreq_match_torch(n, d, dtype):
    fdt = None if dtype is None else _FT_DT[dtype]
    for name in ("fftfreq", "rfftfreq"):
        want = getattr(torch.fft, name)(n, d, dtype=dtype)
        got = getattr(ft.fft, name)(n, d, dtype=fdt)
        assert got.dtype == _FT_DT[want.dtype]
        np.testing.assert_array_equal(_np(got), _np(want))


def test_fftfreq_options_and_errors():
    got = ft.fft.fftfreq(4, requires_grad=True)
    assert got.requires_grad and got.is_leaf
    out = ft.empty(3)
    assert ft.fft.rfftfreq(5, out=out) is out
    np.testing.assert_array_equal(_np(out), _np(torch.fft.rfftfreq(5)))
    for name in ("fftfreq", "rfftfreq"):
        with pytest.raises(RuntimeError) as want:
            getattr(torch.fft, name)(4, dtype=torch.int64)
        with pytest.raises(RuntimeError, match=str(want.value)):
            getattr(ft.fft, name)(4, dtype=ft.int64)


@pytest.mark.parametrize("shape,dim", [((10,), None), ((4, 5), None), ((4, 5), 1), ((3, 4, 5), (0, 2)), ((3, 4, 5), -2),
                                       ((1, 7), None), ((), None)])
def test_shifts_match_torch(shape, dim):
    t = torch.arange(int(np.prod(shape))).reshape(shape)
    x = ft.from_numpy(t.numpy().copy())
    for name in ("fftshift", "ifftshift"):
        want = getattr(torch.fft, name)(t, dim=dim)
        got = getattr(ft.fft, name)(x, dim=dim)
        np.testing.assert_array_equal(_np(got), _np(want))
    np.testing.assert_array_equal(_np(ft.fft.ifftshift(ft.fft.fftshift(x, dim), dim)), t.numpy())


def test_fft_namespace():
    import importlib
    mod = importlib.import_module("ferrotorch.fft")
    assert mod is ft.fft
    for name in [n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))]:
        if name == "Tensor":
            continue
        assert callable(getattr(ft.fft, name)), name
    assert sorted(itertools.chain(*[[b, b + "2", b + "n"] for b in _BASES])) == sorted(
        n for n in ft.fft.__all__ if "freq" not in n and "shift" not in n)
