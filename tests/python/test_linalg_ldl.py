"""``linalg.ldl_factor(_ex)`` / ``ldl_solve`` (LAPACK's Bunch-Kaufman ``sytrf``/``sytrs``
on the native kernel) against PyTorch: the compact factors and pivots, solves,
reconstruction from the factors, batching, errors, ``info``, grad nodes and meta shapes."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402
from _parity import error_of as _err  # noqa: E402


def _ft(t):
    return ft.from_numpy(t.detach().numpy().copy())


def _np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.tolist()).reshape(tuple(x.shape))


def _sym(*shape, seed=0, dtype=torch.float64, diag=0.0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(tuple(shape), generator=g, dtype=dtype)
    a = a + a.mT
    if diag:
        a = a + diag * torch.eye(shape[-1], dtype=dtype)
    return a


def _rebuild(LD, piv):
    """A = P1 L1 P2 L2 ... D ... from LAPACK's compact lower form (NumPy, float64)."""
    LD, piv = np.asarray(LD, dtype=np.float64), np.asarray(piv)
    n = LD.shape[0]
    blocks, k = [], 0
    D = np.zeros((n, n))
    while k < n:
        s = 1 if piv[k] > 0 else 2
        D[k:k + s, k:k + s] = LD[k:k + s, k:k + s]
        if s == 2:
            D[k, k + 1] = LD[k + 1, k]
        blocks.append((k, s))
        k += s
    M = D
    for k, s in reversed(blocks):
        L = np.eye(n)
        L[k + s:, k:k + s] = LD[k + s:, k:k + s]
        M = L @ M @ L.T
        p, q = abs(int(piv[k + s - 1])) - 1, k + s - 1
        M[[p, q]] = M[[q, p]]
        M[:, [p, q]] = M[:, [q, p]]
    return M


# Matrices that exercise each Bunch-Kaufman branch: positive definite (1x1, no
# interchange), indefinite with small diagonal (2x2 blocks), zero diagonal.
_CASES = {
    "spd": lambda n, s: _sym(n, n, seed=s, diag=3.0 * n),
    "indefinite": lambda n, s: _sym(n, n, seed=s),
    "zero_diag": lambda n, s: _sym(n, n, seed=s) * (1 - torch.eye(n, dtype=torch.float64)),
    "fixed": lambda n, s: torch.tensor([[1., 2, 3], [2, -1, 4], [3, 4, 0.5]], dtype=torch.float64),
}


@pytest.mark.parametrize("case,n", [(c, n) for c in sorted(_CASES) for n in (1, 3, 6, 17) if c != "fixed"]
                         + [("fixed", 3)])
def test_factors_and_pivots_match_lapack(case, n):
    A = _CASES[case](n, n)
    n = A.shape[-1]
    LD_t, piv_t, info_t = torch.linalg.ldl_factor_ex(A)
    LD_f, piv_f, info_f = ft.linalg.ldl_factor_ex(_ft(A))
    np.testing.assert_array_equal(_np(piv_f), _np(piv_t))
    assert int(info_f) == int(info_t)
    np.testing.assert_allclose(_np(LD_f), _np(LD_t), rtol=1e-9, atol=1e-10)
    assert tuple(LD_f.stride()) == tuple(LD_t.stride()) and LD_f.dtype == ft.float64 and piv_f.dtype == ft.int32
    if int(info_t) == 0:
        np.testing.assert_allclose(_rebuild(_np(LD_f), _np(piv_f)), _np(A), rtol=1e-9, atol=1e-9)


def test_a_2x2_block_uses_negative_pivot_pairs():
    A = _CASES["fixed"](3, 0)
    LD, piv = ft.linalg.ldl_factor(_ft(A))
    assert _np(piv).tolist() == [-3, -3, 3] == torch.linalg.ldl_factor(A).pivots.tolist()
    # The upper triangle is zero and the block's off-diagonal element sits below the diagonal.
    assert np.all(np.triu(_np(LD), 1) == 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 4])
def test_solve_matches_torch_and_numpy(dtype, k):
    A = _sym(8, 8, seed=k).to(dtype)
    B = torch.randn(8, k, generator=torch.Generator().manual_seed(5), dtype=dtype)
    LD_t, piv_t = torch.linalg.ldl_factor(A)
    LD_f, piv_f = ft.linalg.ldl_factor(_ft(A))
    X_f = ft.linalg.ldl_solve(LD_f, piv_f, _ft(B))
    X_t = torch.linalg.ldl_solve(LD_t, piv_t, B)
    tol = 1e-3 if dtype == torch.float32 else 1e-9
    np.testing.assert_allclose(_np(X_f), _np(X_t), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(X_f), np.linalg.solve(_np(A).astype(np.float64), _np(B)), rtol=tol * 10, atol=tol)
    assert tuple(X_f.stride()) == tuple(X_t.stride()) and str(X_f.dtype) == str(X_t.dtype)


def test_batched_factor_and_broadcast_solve():
    A = _sym(2, 3, 5, 5, seed=1)
    LD_t, piv_t, info_t = torch.linalg.ldl_factor_ex(A)
    LD_f, piv_f, info_f = ft.linalg.ldl_factor_ex(_ft(A))
    np.testing.assert_array_equal(_np(piv_f), _np(piv_t))
    np.testing.assert_allclose(_np(LD_f), _np(LD_t), rtol=1e-9, atol=1e-10)
    assert tuple(LD_f.stride()) == tuple(LD_t.stride()) == (75, 25, 1, 5)
    assert tuple(info_f.shape) == (2, 3)
    B = torch.randn(3, 5, 2, dtype=torch.float64)  # batch dims broadcast against (2, 3)
    X_f = ft.linalg.ldl_solve(LD_f, piv_f, _ft(B))
    np.testing.assert_allclose(_np(X_f), np.linalg.solve(_np(A), _np(B)), rtol=1e-8, atol=1e-9)
    # int64 pivots are accepted, as by PyTorch
    X_l = ft.linalg.ldl_solve(LD_f, piv_f.long(), _ft(B))
    np.testing.assert_allclose(_np(X_l), _np(X_f))


def test_hermitian_flag_is_the_same_for_real_input():
    A = _sym(4, 4, seed=2)
    a = ft.linalg.ldl_factor(_ft(A), hermitian=True)
    b = torch.linalg.ldl_factor(A, hermitian=True)
    np.testing.assert_allclose(_np(a.LD), _np(b.LD), rtol=1e-9, atol=1e-10)
    B = torch.ones(4, 1, dtype=torch.float64)
    np.testing.assert_allclose(_np(ft.linalg.ldl_solve(a.LD, a.pivots, _ft(B), hermitian=True)),
                               _np(torch.linalg.ldl_solve(b.LD, b.pivots, B, hermitian=True)), rtol=1e-9)


def test_singular_d_sets_info_and_ldl_factor_raises():
    S = torch.zeros(2, 3, 3, dtype=torch.float64)
    S[0] = _CASES["fixed"](3, 0)
    _, piv_f, info_f = ft.linalg.ldl_factor_ex(_ft(S))
    _, piv_t, info_t = torch.linalg.ldl_factor_ex(S)
    assert _np(info_f).tolist() == _np(info_t).tolist() == [0, 1]
    np.testing.assert_array_equal(_np(piv_f), _np(piv_t))
    for lib, x in ((torch, S), (ft, _ft(S))):
        with pytest.raises(RuntimeError, match=r"torch\.linalg\.ldl_factor: Unknown error code: 1\."):
            lib.linalg.ldl_factor(x)
        with pytest.raises(RuntimeError, match=r"torch\.linalg\.ldl_factor_ex: Unknown error code: 1\."):
            lib.linalg.ldl_factor_ex(x, check_errors=True)
    nan = torch.tensor([[float("nan"), 1.], [1., 2.]])
    a, b = ft.linalg.ldl_factor_ex(_ft(nan)), torch.linalg.ldl_factor_ex(nan)
    assert int(a.info) == int(b.info) == 2 and _np(a.pivots).tolist() == _np(b.pivots).tolist()


_F = torch.ones(2, 2, dtype=torch.float64) + torch.eye(2, dtype=torch.float64)


@pytest.mark.parametrize("args", [
    lambda L: (L.ones(3, dtype=L.float64),),
    lambda L: (L.ones(2, 3, dtype=L.float64),),
    lambda L: (L.ones(2, 3, dtype=L.int64),),
    lambda L: (L.ones(2, 2, dtype=L.int64),),
    lambda L: (L.ones(2, 2, dtype=L.float16),),
])
def test_factor_errors_match(args):
    assert _err(lambda: ft.linalg.ldl_factor(*args(ft))) == _err(lambda: torch.linalg.ldl_factor(*args(torch)))


@pytest.mark.parametrize("mk", [
    lambda L, LD, p: (LD, p.double(), L.ones(2, 1, dtype=L.float64)),
    lambda L, LD, p: (LD, p, L.ones(2, 1, dtype=L.float32)),
    lambda L, LD, p: (LD, p, L.ones(2, dtype=L.float64)),
    lambda L, LD, p: (LD, p, L.ones(3, 3, dtype=L.float64)),
    lambda L, LD, p: (LD, p[:1], L.ones(2, 1, dtype=L.float64)),
    lambda L, LD, p: (LD[..., :1], p, L.ones(2, 1, dtype=L.float64)),
    lambda L, LD, p: (LD[0], p, L.ones(2, 1, dtype=L.float64)),
    lambda L, LD, p: (LD.long(), p, L.ones(2, 1, dtype=L.int64)),
    lambda L, LD, p: (LD.half(), p, L.ones(2, 1, dtype=L.float16)),
])
def test_solve_errors_match(mk):
    LD_t, p_t = torch.linalg.ldl_factor(_F)
    LD_f, p_f = ft.linalg.ldl_factor(_ft(_F))
    assert _err(lambda: ft.linalg.ldl_solve(*mk(ft, LD_f, p_f))) == _err(lambda: torch.linalg.ldl_solve(*mk(torch, LD_t, p_t)))


def test_invalid_pivots_raise_instead_of_reading_out_of_bounds():
    LD, _ = ft.linalg.ldl_factor(_ft(_F))
    for bad in ([0, 2], [3, 2], [-2, 1], [1, -2]):
        with pytest.raises(RuntimeError, match="invalid pivot"):
            ft.linalg.ldl_solve(LD, ft.tensor(bad, dtype=ft.int32), ft.ones(2, 1, dtype=ft.float64))


def test_no_derivative_node_as_pytorch():
    A = _sym(3, 3, seed=3)
    for lib, a in ((torch, A.clone().requires_grad_()), (ft, _ft(A).requires_grad_())):
        LD, piv, info = lib.linalg.ldl_factor_ex(a)
        assert type(LD.grad_fn).__name__ == "NotImplemented"
        assert not piv.requires_grad and not info.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        b = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        X = lib.linalg.ldl_solve(LD.detach(), piv, b)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            X.sum().backward()


def test_empty_and_meta_shapes():
    for shape in [(0, 3, 3), (0, 0)]:
        a, b = ft.linalg.ldl_factor_ex(ft.empty(*shape)), torch.linalg.ldl_factor_ex(torch.empty(*shape))
        assert [tuple(t.shape) for t in a] == [tuple(t.shape) for t in b]
    X = ft.linalg.ldl_solve(*ft.linalg.ldl_factor(ft.eye(3)), ft.ones(3, 0))
    assert tuple(X.shape) == (3, 0)
    m_f = ft.linalg.ldl_factor_ex(ft.empty(2, 4, 4, device="meta"))
    m_t = torch.linalg.ldl_factor_ex(torch.empty(2, 4, 4, device="meta"))
    for a, b in zip(m_f, m_t):
        assert a.device.type == "meta" and tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride())
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    X = ft.linalg.ldl_solve(m_f[0], m_f[1], ft.empty(4, 3, device="meta"))
    assert tuple(X.shape) == (2, 4, 3) and tuple(X.stride()) == (12, 1, 4)


def test_large_matrix_matches_numpy_solve():
    A = _sym(200, 200, seed=7)
    B = torch.randn(200, 3, dtype=torch.float64)
    LD, piv = ft.linalg.ldl_factor(_ft(A))
    np.testing.assert_allclose(_np(ft.linalg.ldl_solve(LD, piv, _ft(B))), np.linalg.solve(_np(A), _np(B)),
                               rtol=1e-7, atol=1e-8)
    np.testing.assert_array_equal(_np(piv), _np(torch.linalg.ldl_factor(A).pivots))
