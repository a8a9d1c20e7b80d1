"""``linalg.eig``/``eigvals`` of real and complex matrices against PyTorch and
NumPy: eigenvalues (as multisets: the order is the algorithm's), eigenvectors
through ``A V = V diag(L)`` and their normalisation, dtypes, batching, errors,
``grad_fn`` names and phase-invariant gradients (values against PyTorch,
``gradcheck``)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402


def _mat(shape, complex_=False, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype if not complex_ else (np.complex64 if dtype == np.float32 else np.complex128))


def _sorted(w):
    w = np.asarray(w)
    return np.sort_complex(np.round(w.reshape(-1, w.shape[-1]), 8))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 2, 3, 3), (1, 1), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("kind", ["float64", "float32", "complex128", "complex64"])
def test_eig_values_and_vectors(shape, kind):
    a = _mat(shape, complex_=kind.startswith("complex"), seed=len(shape), dtype=np.float32 if kind in ("float32", "complex64") else np.float64)
    w, v = ft.linalg.eig(ft.from_numpy(a.copy()))
    tw, tv = torch.linalg.eig(torch.from_numpy(a.copy()))
    assert repr(w.dtype) == repr(tw.dtype) and repr(v.dtype) == repr(tv.dtype)
    assert tuple(w.shape) == tuple(tw.shape) and tuple(v.shape) == tuple(tv.shape)
    if a.size == 0:
        return
    tol = 1e-4 if kind in ("float32", "complex64") else 1e-9
    wn, vn = w.numpy(), v.numpy()
    for i in range(int(np.prod(shape[:-2]))):
        ww, tww = wn.reshape(-1, shape[-1])[i], tw.numpy().reshape(-1, shape[-1])[i]
        np.testing.assert_allclose(np.sort_complex(ww), np.sort_complex(tww), rtol=tol, atol=tol)
    an = a.astype(np.complex128)
    np.testing.assert_allclose(an @ vn, vn * wn[..., None, :], rtol=10 * tol, atol=10 * tol)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1, rtol=tol)
    # LAPACK's normalisation: the largest component of each vector is real and positive.
    big = np.take_along_axis(vn, np.abs(vn).argmax(-2)[..., None, :], -2)
    assert np.all(np.abs(big.imag) < tol) and np.all(big.real > 0)
    wv = ft.linalg.eigvals(ft.from_numpy(a.copy()))
    np.testing.assert_allclose(wv.numpy(), wn, rtol=tol, atol=tol)


def test_eig_of_symmetric_and_defective_matrices():
    s = _mat((5, 5), seed=3)
    s = s + s.T
    w = ft.linalg.eigvals(ft.from_numpy(s))
    np.testing.assert_allclose(np.sort(w.numpy().real), np.linalg.eigvalsh(s), atol=1e-10)
    assert np.abs(w.numpy().imag).max() < 1e-10
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(np.sort_complex(ft.linalg.eigvals(ft.from_numpy(rot)).numpy()), [-1j, 1j], atol=1e-12)
    w, v = ft.linalg.eig(ft.eye(3, dtype=ft.float64))
    np.testing.assert_allclose(w.numpy(), np.ones(3), atol=0)


def test_eig_non_finite_input_gives_nan():
    a = np.eye(3)
    a[1, 2] = np.nan
    w, v = ft.linalg.eig(ft.from_numpy(a))
    assert np.isnan(w.numpy()).all() and np.isnan(v.numpy()).all()


@pytest.mark.parametrize("make", [
    lambda L: L.ones(2, 3),
    lambda L: L.ones(3),
    lambda L: L.ones(2, 2, dtype=L.long),
])
def test_eig_errors(make):
    for fn in ("eig", "eigvals"):
        with pytest.raises(RuntimeError) as et:
            getattr(torch.linalg, fn)(make(torch))
        with pytest.raises(RuntimeError) as ef:
            getattr(ft.linalg, fn)(make(ft))
        assert str(ef.value) == str(et.value).replace("linalg.eig:", f"linalg.{fn}:") or str(ef.value) == str(et.value)


def test_eig_meta_and_grad_fn():
    w, v = ft.linalg.eig(ft.empty(2, 3, 3, device="meta"))
    assert w.device.type == "meta" and tuple(w.shape) == (2, 3) and w.dtype is ft.complex64 and tuple(v.shape) == (2, 3, 3)
    a = ft.from_numpy(_mat((3, 3))).requires_grad_()
    ta = torch.from_numpy(_mat((3, 3))).requires_grad_()
    assert type(ft.linalg.eig(a)[0].grad_fn).__name__ == type(torch.linalg.eig(ta)[0].grad_fn).__name__
    assert type(ft.linalg.eigvals(a).grad_fn).__name__ == type(torch.linalg.eigvals(ta).grad_fn).__name__


# Losses that do not depend on each eigenvector's phase (which is a choice) nor on the order.
LOSSES = {
    "values": lambda L, w, v: (w * w).real.sum() + w.imag.abs().sum(),
    # Row weights: invariant under the eigenpairs' order too (which is the algorithm's).
    "vector_moduli": lambda L, w, v: (v.abs() * L.arange(v.shape[-1], dtype=v.real.dtype).unsqueeze(-1)).sum(),
    "both": lambda L, w, v: (w.abs() ** 2).sum() + (v.abs() ** 3).sum(),
}


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("complex_", [False, True])
def test_eig_gradients_match_torch(loss, complex_):
    a = _mat((2, 4, 4), complex_=complex_, seed=9)
    grads = []
    for lib in (ft, torch):
        x = lib.from_numpy(a.copy()).requires_grad_()
        w, v = lib.linalg.eig(x)
        LOSSES[loss](lib, w, v).backward()
        grads.append(x.grad.detach().resolve_conj().numpy() if lib is torch else x.grad.numpy())
    assert grads[0].dtype == grads[1].dtype
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-9)


def test_eigvals_gradcheck():
    a = ft.from_numpy(_mat((3, 3), seed=4)).requires_grad_()
    assert ft.autograd.gradcheck(lambda x: ft.linalg.eigvals(x), (a,))
    c = ft.from_numpy(_mat((3, 3), complex_=True, seed=5)).requires_grad_()
    assert ft.autograd.gradcheck(lambda x: ft.linalg.eigvals(x), (c,))
    assert ft.autograd.gradcheck(lambda x: ft.linalg.eig(x)[1].abs(), (c,))
