"""The CPU FFT kernel's paths against PyTorch: ``fft2``/``fftn``/``ifft2``/
``ifftn`` of real input (the half spectrum and its Hermitian completion when
no graph is recorded, PyTorch's complex copy and C2C transform when one is),
complex transforms whose contiguous passes run in place in the output and
whose column passes go in wide blocks through reused per-thread scratch: odd,
prime and power-of-two sizes up to 1024², strided and offset views, float32
and float64, every norm, ``s=`` padding and trimming, several threads."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402

_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}
_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _rand(shape, dtype, seed, complex_=False):
    g = torch.Generator().manual_seed(seed)
    if complex_:
        dtype = torch.complex64 if dtype == torch.float32 else torch.complex128
    return torch.randn(shape, generator=g, dtype=dtype)


def _ft(t):
    return ft.from_numpy(t.detach().numpy().copy())


def _same(got, want, strides=True):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    if strides:
        # (PyTorch lays out some outputs in the order of their input's
        # strides or of `dim`, where ferrotorch's are contiguous: see the
        # README's differences)
        assert tuple(got.stride()) == tuple(want.stride())
    assert got.is_conj() == want.is_conj()
    w = want.detach().resolve_conj().numpy()
    # float32 transforms of length n carry ~log(n) roundings: scale by the spectrum's peak
    tol = dict(_TOL[_REAL.get(want.dtype, want.dtype)])
    tol["atol"] *= max(1.0, float(np.abs(w).max()))
    np.testing.assert_allclose(got.detach().resolve_conj().numpy(), w, **tol)


def _view(t, how):
    """``t`` itself, its transpose, or a strided, offset slice of a bigger buffer."""
    if how == "contiguous":
        return t
    if how == "transposed":
        return t.transpose(0, -1)
    big = torch.zeros([2 * s + 1 for s in t.shape], dtype=t.dtype)
    v = big[tuple(slice(1, None, 2) for _ in t.shape)]
    v.copy_(t)
    return v


def _pair(t, how):
    """The same view in both libraries (ferrotorch's over a copy of the buffer)."""
    if how == "contiguous":
        return t, _ft(t)
    if how == "transposed":
        return t.transpose(0, -1), _ft(t).transpose(0, -1)
    v = _view(t, how)
    base = _ft(v._base)
    fv = base[tuple(slice(1, None, 2) for _ in t.shape)]
    assert fv.stride() == v.stride() and fv.storage_offset() == v.storage_offset()
    return v, fv


_SHAPES_2D = [(1, 1), (2, 2), (1, 7), (7, 1), (5, 8), (9, 6), (17, 31), (97, 210), (135, 130), (256, 40), (64, 1024)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("how", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("name", ["fft2", "ifft2"])
def test_two_d_transforms_of_real_input_match_torch(name, how, dtype):
    for i, shape in enumerate(_SHAPES_2D):
        t, x = _pair(_rand(shape, dtype, seed=i), how)
        for norm in (None, "ortho", "forward"):
            _same(getattr(ft.fft, name)(x, norm=norm), getattr(torch.fft, name)(t, norm=norm), how == "contiguous")


_N_D_CASES = [
    # (shape, s, dim): the halved (last) dim first, in the middle, last; padding and trimming
    ((4, 6, 5), None, None), ((4, 6, 5), None, (2, 0)), ((4, 6, 5), None, (0, 2, 1)), ((3, 7, 9), None, (1, 0)),
    ((4, 6, 5), (5, 3), (0, 1)), ((4, 6, 5), (8, 2, 7), None), ((3, 2, 5, 4), None, (1, 3)), ((11,), None, None),
    ((6, 10), (-1, 13), None), ((2, 3, 64, 33), None, (2, 3)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["fftn", "ifftn"])
def test_n_d_transforms_of_real_input_match_torch(name, dtype):
    for i, (shape, s, dim) in enumerate(_N_D_CASES):
        for how in ("contiguous", "transposed", "strided"):
            t, x = _pair(_rand(shape, dtype, seed=20 + i), how)
            for norm in (None, "ortho"):
                want = getattr(torch.fft, name)(t, s=s, dim=dim, norm=norm)
                _same(getattr(ft.fft, name)(x, s=s, dim=dim, norm=norm), want, how == "contiguous" and dim is None)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_large_transforms_match_torch(dtype):
    # 1024²: rows transformed in place in the output, columns in 32-lane blocks
    # of 8 KiB (f32) or 16 KiB lanes; then a non-power-of-two 1000 x 768.
    for shape in ((1024, 1024), (1000, 768)):
        r = _rand(shape, dtype, seed=40)
        z = _rand(shape, dtype, seed=41, complex_=True)
        for name, t in (("fft2", r), ("ifft2", r), ("fft2", z), ("ifft2", z), ("rfft2", r), ("fftn", z)):
            _same(getattr(ft.fft, name)(_ft(t)), getattr(torch.fft, name)(t))
        h = torch.fft.rfft2(r)
        _same(ft.fft.irfft2(_ft(h), s=shape), torch.fft.irfft2(h, s=shape))
        # the column pass reads its input first when the rows are the strided dim
        _same(ft.fft.fft2(_ft(z).t()), torch.fft.fft2(z.t()), strides=False)


def test_real_input_with_a_graph_mirrors_torch():
    # Recording, fft2 of a real tensor is PyTorch's complex copy and C2C
    # transform (grad_fn chain and gradients); without, the same values.
    t = _rand((6, 10), torch.float64, seed=50).requires_grad_(True)
    x = _ft(t).requires_grad_(True)
    for name in ("fft2", "ifft2", "fftn", "ifftn"):
        want, got = getattr(torch.fft, name)(t), getattr(ft.fft, name)(x)
        assert got.grad_fn.name() == want.grad_fn.name() == "FftC2CBackward0"
        assert got.grad_fn.next_functions[0][0].name() == want.grad_fn.next_functions[0][0].name()
        up = _rand(tuple(want.shape), torch.float64, seed=51, complex_=True)
        (torch.view_as_real(want) * torch.view_as_real(up)).sum().backward()
        (ft.view_as_real(got) * ft.view_as_real(_ft(up))).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)
        t.grad, x.grad = None, None
        with ft.no_grad():
            plain = getattr(ft.fft, name)(x)
        assert plain.grad_fn is None and not plain.requires_grad
        np.testing.assert_allclose(plain.numpy(), got.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_integer_input_and_meta_tensors():
    t = torch.arange(35).reshape(5, 7)
    _same(ft.fft.fft2(ft.from_numpy(t.numpy().copy())), torch.fft.fft2(t))
    r = _rand((5, 8), torch.float32, seed=60)
    for name in ("fft2", "ifftn"):
        want = getattr(torch.fft, name)(r.to("meta"))
        got = getattr(ft.fft, name)(_ft(r).to("meta"))
        assert got.device.type == "meta" and tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype) == str(want.dtype)


def test_scratch_reuse_across_sizes_and_threads():
    # Alternating sizes and precisions reuse and regrow the per-thread
    # scratch; results must not depend on what it held before, nor on the
    # thread count.
    cases = [(_rand(shape, dt, seed=70 + i, complex_=c), name)
             for i, (shape, dt, c, name) in enumerate([
                 ((512, 300), torch.float64, True, "fft2"), ((33, 17), torch.float32, False, "fft2"),
                 ((300, 512), torch.float32, True, "ifft2"), ((1024, 64), torch.float64, False, "fftn"),
                 ((7, 5, 3), torch.float32, True, "fftn")])]
    wants = [getattr(torch.fft, name)(t) for t, name in cases]
    before = ft.get_num_threads()
    try:
        for threads in (1, 2):
            ft.set_num_threads(threads)
            for _ in range(2):
                for (t, name), want in zip(cases, wants):
                    _same(getattr(ft.fft, name)(_ft(t)), want)
    finally:
        ft.set_num_threads(before)
