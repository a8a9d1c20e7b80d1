"""``torch.fft`` against PyTorch: every transform in 1, 2 and n dims, for real
and complex inputs, norm modes, ``n``/``s`` padding and trimming, dims, strided
inputs, dtypes, ``out=`` and errors; gradients against PyTorch's, ``grad_fn``
names, ``gradcheck``/``gradgradcheck``; ``fftfreq``/``rfftfreq``/``fftshift``/
``ifftshift``; ``stft``/``istft``."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402

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
    x = ft.from_numpy(t.detach().resolve_conj().numpy().copy())
    return x.requires_grad_(True) if requires_grad else x


def _np(x):
    # both libraries return conjugate views (ifft/ihfft of real input)
    return x.detach().resolve_conj().numpy()


def _call(lib, name, t, s, dim, norm, **extra):
    f = getattr(lib.fft, name)
    if name[-1] not in "2n":
        kw = {} if s is None else {"n": s[0]}
        return f(t, dim=dim[0] if dim else -1, norm=norm, **kw, **extra)
    kw = {}
    if s is not None:
        kw["s"] = s
    if dim is not None:
        kw["dim"] = dim
    return f(t, norm=norm, **kw, **extra)


def _call_torch(name, t, s, dim, norm):
    return _call(torch, name, t, s, dim, norm)


def _same(got, want, tol=None):
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(want.dtype, want.dtype)
    np.testing.assert_allclose(_np(got), _np(want), **(tol or _TOL.get(real, _TOL[torch.float32])))


def _check(name, t, s=None, dim=None, norm=None):
    want = _call(torch, name, t, s, dim, norm)
    got = _call(ft, name, _to_ft(t), s, dim, norm)
    _same(got, want)


# ---- values: every function, both precisions, real and complex inputs, every norm ----------

_ONE_D_CASES = [
    # (shape, n, dim)
    ((8,), None, -1), ((7,), None, 0), ((1,), None, -1), ((3, 17), None, 1), ((5, 4), None, 0),
    ((6,), 10, -1), ((9,), 4, -1), ((4, 6, 5), 3, 1), ((2, 97), None, -1), ((128,), 64, 0),
]


_INPUT_KINDS = [(b, c) for b in _BASES for c in (False, True) if not (c and b in _REAL_IN)]


@pytest.mark.parametrize("name,complex_", _INPUT_KINDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_d_matches_torch(name, complex_, dtype, norm):
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


@pytest.mark.parametrize("base,complex_", _INPUT_KINDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_n_d_matches_torch(base, complex_, dtype, norm):
    for i, (shape, s, dim) in enumerate(_N_D_CASES):
        t = _rand(shape, dtype, seed=10 + i, complex_=complex_)
        _check(base + "n", t, s, dim, norm)
        if len(shape) >= 2 and (dim is None or len(dim) == 2) and (s is None or len(s) == 2):
            _check(base + "2", t, s, dim if dim is not None else None, norm)


def test_strided_and_offset_inputs():
    base = _rand((6, 10, 4), torch.float64, seed=3, complex_=True)
    fbase = _to_ft(base)
    view, fview = base.transpose(0, 2)[1:, ::2], fbase.transpose(0, 2)[1:, ::2]
    assert fview.stride() == view.stride() and fview.storage_offset() == view.storage_offset()
    for name in ("fft", "ifftn", "irfft2", "hfftn"):
        _same(_call(ft, name, fview, None, None, None), _call(torch, name, view, None, None, None))
    r = _rand((9, 12), torch.float64, seed=4)
    rv, fr = r.t()[::2], _to_ft(r).t()[::2]
    for name in ("rfft", "fft2", "ihfftn"):
        _same(_call(ft, name, fr, None, None, None), _call(torch, name, rv, None, None, None))


# Long lanes (KiBs each), whose gathers and scatters are transposes of
# strided blocks: power-of-two, odd and prime lengths, down strided columns
# and along transposed views, in both precisions.
_LONG_CASES = [((256, 40), None), ((135, 130), None), ((3, 257, 24), (0, 1)), ((512, 9), (0,))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", _LONG_CASES)
def test_long_strided_lanes_match_torch(dtype, shape, dim):
    for i, name in enumerate(("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "hfftn")):
        for complex_ in (False, True):
            if complex_ and name in ("rfft2", "rfftn"):
                continue
            t = _rand(shape, dtype, seed=30 + i, complex_=complex_)
            d = dim if dim is not None else ((0, 1) if len(shape) == 2 else None)
            if name.endswith("2") and (d is None or len(d) != 2):
                continue
            _same(_call(ft, name, _to_ft(t), None, d, "ortho"), _call(torch, name, t, None, d, "ortho"))
            # the transposed view: what were rows are now strided lanes, and back
            tt, ft_t = t.transpose(0, -1), _to_ft(t).transpose(0, -1)
            _same(_call(ft, name, ft_t, None, d, None), _call(torch, name, tt, None, d, None))


def test_integer_and_bool_inputs_promote_to_the_default_dtype():
    for dt, fdt in ((torch.int64, ft.int64), (torch.int32, ft.int32), (torch.bool, ft.bool)):
        t = torch.arange(6).to(dt)
        x = ft.from_numpy(t.numpy().copy())
        for name in ("fft", "rfft", "irfft", "hfftn"):
            _same(getattr(ft.fft, name)(x), getattr(torch.fft, name)(t))
    torch.set_default_dtype(torch.float64)
    ft.set_default_dtype(ft.float64)
    try:
        assert ft.fft.fft(ft.arange(5)).dtype == ft.complex128
    finally:
        torch.set_default_dtype(torch.float32)
        ft.set_default_dtype(ft.float32)


def test_empty_dims_return_the_complex_input():
    t = _rand((3, 4), torch.float64, seed=2)
    _same(ft.fft.fftn(_to_ft(t), dim=()), torch.fft.fftn(t, dim=()))


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
        _call(ft, name, _to_ft(t), None if s is None else tuple(s), None if dim is None else tuple(dim), norm)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dt", [ft.float16, ft.bfloat16])
def test_half_precision_is_unsupported_as_in_torch(dt):
    tdt = {ft.float16: torch.float16, ft.bfloat16: torch.bfloat16}[dt]
    for name in ("fft", "rfft", "hfft"):
        with pytest.raises(RuntimeError) as want:
            getattr(torch.fft, name)(torch.ones(4, dtype=tdt))
        with pytest.raises(RuntimeError, match=str(want.value)):
            getattr(ft.fft, name)(ft.ones(4, dtype=dt))


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
    s_, d_ = (None if s is None else tuple(s)), (None if dim is None else tuple(dim))
    want = _call(torch, name, t, s_, d_, norm)
    want_rv = torch.view_as_real(want.resolve_conj()) if want.is_complex() else want
    up = _rand(tuple(want_rv.shape), torch.float64, seed=6)
    (want_rv * up).sum().backward()
    x = _to_ft(t, requires_grad=True)
    got = _call(ft, name, x, s_, d_, norm)
    assert got.grad_fn.name() == want.grad_fn.name()
    got_rv = ft.view_as_real(got.resolve_conj()) if got.dtype.is_complex else got
    (got_rv * ft.from_numpy(up.numpy().copy())).sum().backward()
    _same(x.grad, t.grad, dict(rtol=1e-10, atol=1e-10))


@pytest.mark.parametrize("name,shape,complex_,s,dim", _GRAD_CASES[::3])
def test_gradcheck_and_gradgradcheck(name, shape, complex_, s, dim):
    t = _rand(shape, torch.float64, seed=7, complex_=complex_)
    x = _to_ft(t, requires_grad=True)
    s_, d_ = (None if s is None else tuple(s)), (None if dim is None else tuple(dim))
    f = lambda v: _call(ft, name, v, s_, d_, "ortho")  # noqa: E731
    assert ft.autograd.gradcheck(f, (x,))
    assert ft.autograd.gradgradcheck(f, (x,))


def test_grad_fn_names_match_torch():
    z = _rand((4, 6), torch.float64, complex_=True).requires_grad_(True)
    r = _rand((4, 6), torch.float64).requires_grad_(True)
    zf, rf = _to_ft(z, True), _to_ft(r, True)
    for name, t, x in (("fft", z, zf), ("rfft", r, rf), ("irfft", z, zf), ("fft", r, rf), ("ifft", r, rf),
                       ("fft2", z, zf), ("fft2", r, rf), ("rfftn", r, rf), ("irfft2", z, zf), ("hfft2", z, zf),
                       ("ihfft", r, rf), ("ihfft2", r, rf)):
        assert getattr(ft.fft, name)(x).grad_fn.name() == getattr(torch.fft, name)(t).grad_fn.name(), name


def test_out_argument():
    t = _rand((3, 8), torch.float64, seed=8)
    out = ft.empty(0, dtype=ft.complex128)
    r = ft.fft.rfft(_to_ft(t), out=out)
    assert r is out
    _same(out, torch.fft.rfft(t))
    out = ft.empty((3, 8), dtype=ft.float64)
    ft.fft.irfft(ft.fft.rfft(_to_ft(t)), n=8, out=out)
    _same(out, t, dict(rtol=1e-12, atol=1e-12))


def test_meta_tensors_get_the_output_shape():
    for name, shape, complex_ in (("fft", (3, 8), True), ("rfft2", (4, 6), False), ("irfftn", (3, 5), True),
                                  ("ihfft", (7,), False)):
        t = _rand(shape, torch.float32, complex_=complex_)
        want = getattr(torch.fft, name)(t.to("meta"))
        got = getattr(ft.fft, name)(_to_ft(t).to("meta"))
        assert got.device.type == "meta"
        assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)


# ---- fftfreq, rfftfreq, fftshift, ifftshift -------------------------------------------------

@pytest.mark.parametrize("n,d", [(1, 1.0), (5, 1.0), (8, 0.1), (9, 2.5), (0, 1.0)])
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.float32])
def test_fftfreq_and_rfftfreq_match_torch(n, d, dtype):
    fdt = None if dtype is None else _FT_DT[dtype]
    for name in ("fftfreq", "rfftfreq"):
        want = getattr(torch.fft, name)(n, d, dtype=dtype)
        got = getattr(ft.fft, name)(n, d, dtype=fdt)
        assert got.dtype == _FT_DT[want.dtype]
        np.testing.assert_array_equal(_np(got), _np(want))  # NaN where PyTorch's is (rfftfreq(0))


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
                                       ((1, 7), None)])
def test_shifts_match_torch(shape, dim):
    t = torch.arange(int(np.prod(shape))).reshape(shape)
    x = ft.from_numpy(t.numpy().copy())
    for name in ("fftshift", "ifftshift"):
        want = getattr(torch.fft, name)(t, dim=dim)
        got = getattr(ft.fft, name)(x, dim=dim)
        np.testing.assert_array_equal(_np(got), _np(want))
    np.testing.assert_array_equal(_np(ft.fft.ifftshift(ft.fft.fftshift(x, dim), dim)), t.numpy())


def test_shift_without_dims_is_an_error_as_in_torch():
    for t, x, dim in ((torch.tensor(3), ft.tensor(3), None), (torch.arange(4), ft.arange(4), ())):
        with pytest.raises(RuntimeError) as want:
            torch.fft.fftshift(t, dim=dim)
        with pytest.raises(RuntimeError, match=str(want.value)):
            ft.fft.fftshift(x, dim=dim)


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


# ---- stft / istft ---------------------------------------------------------------------------

def _window(lib, kind, n, dtype):
    if kind is None:
        return None
    return getattr(lib, kind)(n, dtype=dtype)


_STFT_CASES = [
    # (signal shape, n_fft, hop, win_length, window, center, pad_mode, normalized, onesided)
    ((100,), 16, None, None, "hann_window", True, "reflect", False, None),
    ((3, 100), 16, 5, None, "hann_window", True, "reflect", True, None),
    ((100,), 16, 4, 10, "hamming_window", True, "constant", False, None),
    ((2, 64), 8, 2, None, None, False, "reflect", False, False),
    ((97,), 15, 7, None, "hann_window", True, "reflect", False, True),
    ((80,), 16, 4, 12, None, False, "reflect", True, None),
]


@pytest.mark.parametrize("case", _STFT_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stft_matches_torch(case, dtype):
    shape, n_fft, hop, win, wkind, center, pad_mode, normalized, onesided = case
    t = _rand(shape, dtype, seed=11)
    fdt = _FT_DT[dtype]
    wl = win or n_fft
    kw = dict(hop_length=hop, win_length=win, center=center, pad_mode=pad_mode, normalized=normalized,
              onesided=onesided)
    want = torch.stft(t, n_fft, window=_window(torch, wkind, wl, dtype), return_complex=True, **kw)
    got = ft.stft(_to_ft(t), n_fft, window=_window(ft, wkind, wl, fdt), return_complex=True, **kw)
    _same(got, want)
    assert got.stride() == want.stride()
    legacy = _to_ft(t).stft(n_fft, window=_window(ft, wkind, wl, fdt), return_complex=False, **kw)
    _same(legacy, torch.view_as_real(want))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stft_of_complex_signals_and_gradients():
    z = _rand((2, 60), torch.float64, seed=12, complex_=True).requires_grad_(True)
    w = torch.hann_window(12, dtype=torch.float64)
    want = torch.stft(z, 12, 3, window=w)
    zf = _to_ft(z, True)
    got = ft.stft(zf, 12, 3, window=ft.hann_window(12, dtype=ft.float64))
    _same(got, want, dict(rtol=1e-10, atol=1e-10))
    up = _rand(tuple(torch.view_as_real(want).shape), torch.float64, seed=13)
    (torch.view_as_real(want) * up).sum().backward()
    (ft.view_as_real(got) * ft.from_numpy(up.numpy().copy())).sum().backward()
    _same(zf.grad, z.grad, dict(rtol=1e-10, atol=1e-10))


@pytest.mark.parametrize("kw", [dict(), dict(hop_length=0), dict(win_length=20), dict(window="ones10"),
                                dict(align_to_window=True), dict(onesided=True, complex_input=True),
                                dict(shape=(2, 3, 100)), dict(shape=(10,), center=False)])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stft_errors_match_torch(kw):
    kw = dict(kw)
    shape = kw.pop("shape", (100,))
    complex_input = kw.pop("complex_input", False)
    if kw.get("window") == "ones10":
        kw["window"] = "x"
    t = _rand(shape, torch.float32, complex_=complex_input)
    results = []
    for lib, x in ((torch, t), (ft, _to_ft(t))):
        args = dict(kw)
        if args.get("window") == "x":
            args["window"] = lib.ones(10)
        if kw and "return_complex" not in args:
            args["return_complex"] = True
        with pytest.raises(RuntimeError) as e:
            lib.stft(x, 16, **args)
        results.append(str(e.value))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", [_STFT_CASES[0], _STFT_CASES[1], _STFT_CASES[2], _STFT_CASES[4]])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_istft_inverts_and_matches_torch(case):
    shape, n_fft, hop, win, wkind, center, _, normalized, onesided = case
    t = _rand(shape, torch.float64, seed=14)
    wl = win or n_fft
    kw = dict(hop_length=hop, win_length=win, center=center, normalized=normalized, onesided=onesided)
    wt, wf = _window(torch, wkind, wl, torch.float64), _window(ft, wkind, wl, ft.float64)
    spec = torch.stft(t, n_fft, window=wt, return_complex=True, **kw)
    want = torch.istft(spec, n_fft, window=wt, **kw)
    got = ft.istft(_to_ft(spec), n_fft, window=wf, **kw)
    _same(got, want, dict(rtol=1e-9, atol=1e-9))
    for length in (shape[-1], shape[-1] - 3):
        _same(_to_ft(spec).istft(n_fft, window=wf, length=length, **kw),
              torch.istft(spec, n_fft, window=wt, length=length, **kw), dict(rtol=1e-9, atol=1e-9))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_istft_two_sided_and_complex_output():
    t = _rand((90,), torch.float64, seed=15)
    w = torch.hann_window(16, dtype=torch.float64)
    spec = torch.stft(t, 16, window=w, return_complex=True, onesided=False)
    wf = ft.hann_window(16, dtype=ft.float64)
    _same(ft.istft(_to_ft(spec), 16, window=wf), torch.istft(spec, 16, window=w), dict(rtol=1e-9, atol=1e-9))
    _same(ft.istft(_to_ft(spec), 16, window=wf, return_complex=True),
          torch.istft(spec, 16, window=w, return_complex=True), dict(rtol=1e-9, atol=1e-9))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_istft_errors_match_torch():
    t = _rand((100,), torch.float32, seed=16)
    spec = torch.stft(t, 16, window=torch.hann_window(16), return_complex=True)
    fspec = _to_ft(spec)
    cases = [
        (lambda lib, s: lib.istft(lib.view_as_real(s), 16)),
        (lambda lib, s: lib.istft(s, 16, window=lib.hann_window(16), center=False)),
        (lambda lib, s: lib.istft(s[None, None], 16)),
        (lambda lib, s: lib.istft(s, 20)),
        (lambda lib, s: lib.istft(s, 16, onesided=False)),
        (lambda lib, s: lib.istft(s, 16, window=lib.hann_window(16), return_complex=True)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as want:
            case(torch, spec)
        with pytest.raises(RuntimeError) as got:
            case(ft, fspec)
        assert str(got.value) == str(want.value)
