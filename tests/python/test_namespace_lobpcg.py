"""``torch.lobpcg`` against PyTorch and ``eigvalsh``: the k extreme eigenpairs of
standard and generalized problems, shapes, orders, batching and errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402


def _ft(t):
    return ft.from_numpy(t.detach().numpy().copy())


def _spd(m, seed, dtype=torch.float64, shift=1.0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, m, generator=g, dtype=dtype)
    return a @ a.mT + shift * m * torch.eye(m, dtype=dtype)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k,m", [(1, 12), (3, 30), (4, 80)])
def test_extreme_eigenpairs(largest, k, m):
    A = _spd(m, seed=k + m)
    ft.manual_seed(0)
    E, X = ft.lobpcg(_ft(A), k=k, largest=largest)
    Et, Xt = torch.lobpcg(A, k=k, largest=largest)
    w = torch.linalg.eigvalsh(A)
    want = w.flip(0)[:k] if largest else w[:k]
    np.testing.assert_allclose(E.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(E.numpy(), Et.numpy(), rtol=1e-6)
    assert tuple(X.shape) == tuple(Xt.shape) == (m, k) and tuple(X.stride()) == tuple(Xt.stride())
    # eigenvectors: unit residual small, orthonormal
    Xn = X.numpy()
    np.testing.assert_allclose(A.numpy() @ Xn, Xn * E.numpy(), atol=1e-5 * float(w.max()))
    np.testing.assert_allclose(Xn.T @ Xn, np.eye(k), atol=1e-6)


def test_generalized_problem_and_initial_block():
    A = _spd(30, seed=1)
    B = _spd(30, seed=2, shift=2.0)
    E, X = ft.lobpcg(_ft(A), k=2, B=_ft(B))
    Et, _ = torch.lobpcg(A, k=2, B=B)
    L = torch.linalg.cholesky(B)
    Li = torch.linalg.inv(L)
    w = torch.linalg.eigvalsh(Li @ A @ Li.mT)
    np.testing.assert_allclose(E.numpy(), w.flip(0)[:2].numpy(), rtol=1e-6)
    np.testing.assert_allclose(E.numpy(), Et.numpy(), rtol=1e-6)
    Xn = X.numpy()
    np.testing.assert_allclose(Xn.T @ B.numpy() @ Xn, np.eye(2), atol=1e-6)
    X0 = torch.randn(30, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    E4, X4 = ft.lobpcg(_ft(A), X=_ft(X0))
    assert tuple(E4.shape) == tuple(torch.lobpcg(A, X=X0)[0].shape) == (4,)
    np.testing.assert_allclose(E4.numpy(), torch.linalg.eigvalsh(A).flip(0)[:4].numpy(), rtol=1e-6)
    E2, X2 = ft.lobpcg(_ft(A), k=2, n=4)
    assert tuple(E2.shape) == (2,) and tuple(X2.shape) == (30, 2)


def test_batched_and_float32():
    A = torch.stack([_spd(20, seed=5), _spd(20, seed=6)])
    E, X = ft.lobpcg(_ft(A), k=2)
    assert tuple(E.shape) == (2, 2) and tuple(X.shape) == (2, 20, 2)
    np.testing.assert_allclose(E.numpy(), torch.linalg.eigvalsh(A).flip(-1)[:, :2].numpy(), rtol=1e-6)
    A32 = _spd(40, seed=7, dtype=torch.float32)
    E32, _ = ft.lobpcg(_ft(A32), k=2, largest=False)
    assert E32.dtype == ft.float32
    np.testing.assert_allclose(E32.numpy(), torch.linalg.eigvalsh(A32.double())[:2].numpy(), rtol=1e-3)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace("ferrotorch.Size", "torch.Size")
    return None


@pytest.mark.parametrize("mk", [
    lambda L: L.lobpcg(L.ones(3, 4)),
    lambda L: L.lobpcg(L.eye(20, dtype=L.float64), k=7),
    lambda L: L.lobpcg(L.eye(6, dtype=L.float64), B=L.eye(5, dtype=L.float64)),
])
def test_errors_match(mk):
    assert _err(lambda: mk(ft)) == _err(lambda: mk(torch))
