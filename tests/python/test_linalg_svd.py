"""linalg.svd / svdvals, the SVD-based matrix norms and unique(dim=...) against PyTorch."""

import math

import numpy as np
import pytest
import torch

import ferrotorch as ft
from ferrotorch.autograd import gradcheck

_DT = {torch.float32: ft.float32, torch.float64: ft.float64, torch.int64: ft.int64, torch.int32: ft.int32,
       torch.bool: ft.bool, torch.float16: ft.float16}


def _ft(a, requires_grad=False):
    x = ft.tensor(a.tolist(), dtype=_DT[a.dtype]).reshape(tuple(a.shape))
    if requires_grad:
        x.requires_grad_(True)
    return x


def _np(x):
    return np.asarray(x.detach().tolist(), dtype=np.float64).reshape(tuple(x.shape))


def _rand(shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-5)


SHAPES = [(1, 1), (3, 3), (5, 3), (3, 5), (8, 8), (2, 4, 3), (2, 3, 2, 5), (1, 7), (7, 1), (12, 9)]


# ----- svdvals / svd values --------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_svdvals_matches_torch(shape, dtype):
    a = _rand(shape, dtype, seed=len(shape) * 10 + shape[-1])
    got = ft.linalg.svdvals(_ft(a))
    exp = torch.linalg.svdvals(a)
    assert got.dtype == _DT[dtype]
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(_np(got), exp.double().numpy(), **_tol(dtype))


def test_svdvals_float64_relative_accuracy():
    # graded singular values over many orders of magnitude: Jacobi keeps them to high relative accuracy
    q1, _ = torch.linalg.qr(_rand((6, 6), seed=3))
    q2, _ = torch.linalg.qr(_rand((6, 6), seed=4))
    s = torch.tensor([1e3, 1e1, 1.0, 1e-2, 1e-4, 1e-6], dtype=torch.float64)
    a = q1 @ torch.diag(s) @ q2.T
    got = _np(ft.linalg.svdvals(_ft(a)))
    np.testing.assert_allclose(got, torch.linalg.svdvals(a).numpy(), rtol=1e-8)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4)])
def test_svd_reduced_reconstructs(shape):
    a = _rand(shape, seed=7)
    U, S, Vh = ft.linalg.svd(_ft(a), full_matrices=False)
    k = min(shape[-2:])
    assert tuple(U.shape) == shape[:-2] + (shape[-2], k)
    assert tuple(S.shape) == shape[:-2] + (k,)
    assert tuple(Vh.shape) == shape[:-2] + (k, shape[-1])
    u, s, vh = _np(U), _np(S), _np(Vh)
    np.testing.assert_allclose(u @ (s[..., :, None] * vh), a.numpy(), atol=1e-12)
    eye = np.eye(k)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(eye, u.shape[:-2] + (k, k)), atol=1e-12)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), np.broadcast_to(eye, u.shape[:-2] + (k, k)),
                               atol=1e-12)
    np.testing.assert_allclose(s, torch.linalg.svdvals(a).numpy(), rtol=1e-10)
    # singular vectors agree with torch up to the sign of each pair
    tu, _, tvh = torch.linalg.svd(a, full_matrices=False)
    signs = np.sign(np.sum(u * tu.numpy(), axis=-2))
    np.testing.assert_allclose(u * signs[..., None, :], tu.numpy(), atol=1e-9)
    np.testing.assert_allclose(vh * signs[..., :, None], tvh.numpy(), atol=1e-9)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 2)])
def test_svd_full_matrices(shape):
    a = _rand(shape, seed=11)
    U, S, Vh = ft.linalg.svd(_ft(a))
    tU, tS, tVh = torch.linalg.svd(a)
    assert tuple(U.shape) == tuple(tU.shape) and tuple(Vh.shape) == tuple(tVh.shape)
    u, s, vh = _np(U), _np(S), _np(Vh)
    m, n = shape[-2:]
    for q, d in ((u, m), (vh, n)):
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(d), q.shape), atol=1e-12)
    k = min(m, n)
    np.testing.assert_allclose(u[..., :, :k] @ (s[..., :, None] * vh[..., :k, :]), a.numpy(), atol=1e-12)


def test_svd_return_types_and_torch_svd():
    a = _rand((4, 3), seed=2)
    r = ft.linalg.svd(_ft(a), full_matrices=False)
    assert type(r).__name__ == "linalg_svd" and r._fields == ("U", "S", "Vh")
    r = ft.svd(_ft(a))
    t = torch.svd(a)
    assert r._fields == ("U", "S", "V")
    assert tuple(r.U.shape) == tuple(t.U.shape) and tuple(r.V.shape) == tuple(t.V.shape)
    np.testing.assert_allclose(_np(r.U) @ np.diag(_np(r.S)) @ _np(r.V).T, a.numpy(), atol=1e-12)
    r = _ft(a).svd(some=False)
    assert tuple(r.U.shape) == (4, 4)
    r = ft.svd(_ft(a), compute_uv=False)
    t = torch.svd(a, compute_uv=False)
    assert tuple(r.U.shape) == tuple(t.U.shape) and not _np(r.U).any() and not _np(r.V).any()
    np.testing.assert_allclose(_np(r.S), t.S.numpy(), rtol=1e-10)


def test_svd_rank_deficient():
    a = _rand((6, 2), seed=5) @ _rand((2, 5), seed=6)
    U, S, Vh = ft.linalg.svd(_ft(a), full_matrices=False)
    np.testing.assert_allclose(_np(S), torch.linalg.svdvals(a).numpy(), atol=1e-12)
    u = _np(U)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(u @ np.diag(_np(S)) @ _np(Vh), a.numpy(), atol=1e-12)
    z = ft.linalg.svd(ft.zeros(3, 2, dtype=ft.float64), full_matrices=False)
    assert not _np(z.S).any()
    np.testing.assert_allclose(_np(z.U).T @ _np(z.U), np.eye(2), atol=1e-15)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 2, 2)])
def test_svd_empty(shape):
    a = torch.zeros(shape)
    assert tuple(ft.linalg.svdvals(_ft(a)).shape) == tuple(torch.linalg.svdvals(a).shape)
    got = ft.linalg.svd(_ft(a), full_matrices=False)
    exp = torch.linalg.svd(a, full_matrices=False)
    for g, e in zip(got, exp):
        assert tuple(g.shape) == tuple(e.shape)


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.svdvals(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.svdvals(L.ones(3, dtype=L.float32)),
    lambda L: L.linalg.svdvals(L.ones(3, 3, dtype=L.float16)),
    lambda L: L.linalg.svdvals(L.tensor([[float("nan"), 1.0], [1.0, 2.0]])),
    lambda L: L.linalg.svd(L.tensor([[1.0, 2.0], [1.0, float("nan")]])),
    lambda L: L.linalg.svdvals(L.tensor([[[1.0, 2.0], [1.0, 3.0]], [[1.0, 2.0], [1.0, float("nan")]]])),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.int64), "nuc"),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.int64), "nuc", dtype=L.float64),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.float16), 2),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), "foo"),
    lambda L: L.linalg.matrix_norm(L.ones(3), "nuc"),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), "nuc", dim=(0, 0)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), 2, dim=(0, 2)),
    lambda L: L.linalg.matrix_norm(L.ones(0, 3), -2),
    lambda L: L.norm(L.ones(2, 3, 4), p="nuc"),
    lambda L: L.norm(L.ones(3, 4), p="nuc", dim=0),
    lambda L: L.norm(L.ones(3), p="nuc"),
])
def test_errors_match_torch(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as fe:
        fn(ft)
    assert isinstance(fe.value, type(te.value)) or type(fe.value).__name__ == type(te.value).__name__, \
        f"{fe.value!r} vs {te.value!r}"
    assert str(fe.value) == str(te.value)


# ----- matrix norms ----------------------------------------------------------------


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4), (2, 2, 3, 2)])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_matrix_norm_value_and_grad(ord, shape, dtype):
    a = _rand(shape, dtype, seed=sum(shape))
    ta = a.clone().requires_grad_()
    tr = torch.linalg.matrix_norm(ta, ord)
    (tr * torch.arange(1, tr.numel() + 1, dtype=dtype).reshape(tr.shape)).sum().backward()
    fa = _ft(a, requires_grad=True)
    fr = ft.linalg.matrix_norm(fa, ord)
    (fr * ft.arange(1, fr.numel() + 1, dtype=_DT[dtype]).reshape(tuple(fr.shape))).sum().backward()
    assert fr.dtype == _DT[dtype] and tuple(fr.shape) == tuple(tr.shape)
    np.testing.assert_allclose(_np(fr), tr.detach().double().numpy(), **_tol(dtype))
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(fa.grad), ta.grad.double().numpy(), **tol)


@pytest.mark.parametrize("ord", [2, -2, "nuc", "fro", 1, -math.inf])
@pytest.mark.parametrize("dim", [(0, 2), (2, 0), (-1, 1), (1, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_dims_keepdim(ord, dim, keepdim):
    a = _rand((3, 4, 5), seed=9)
    got = ft.linalg.matrix_norm(_ft(a), ord, dim=dim, keepdim=keepdim)
    exp = torch.linalg.matrix_norm(a, ord, dim=dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(_np(got), exp.numpy(), rtol=1e-10)


def test_matrix_norm_dtype_and_empty():
    a = _rand((3, 4), torch.float32, seed=1)
    for ord in (2, -2, "nuc"):
        got = ft.linalg.matrix_norm(_ft(a), ord, dtype=ft.float64)
        exp = torch.linalg.matrix_norm(a, ord, dtype=torch.float64)
        assert got.dtype == ft.float64
        np.testing.assert_allclose(_np(got), exp.numpy(), rtol=1e-10)
    for shape, ord in [((0, 3), 2), ((0, 3), "nuc"), ((2, 0, 3), 2), ((2, 0, 3), "nuc")]:
        got = ft.linalg.matrix_norm(ft.zeros(*shape), ord)
        exp = torch.linalg.matrix_norm(torch.zeros(*shape), ord)
        assert tuple(got.shape) == tuple(exp.shape)
        np.testing.assert_allclose(_np(got), exp.numpy())


def test_norm_nuc_and_linalg_norm():
    a = _rand((2, 3, 4), torch.float32, seed=4)
    fa = _ft(a)
    pairs = [
        (ft.norm(fa[0], p="nuc"), torch.norm(a[0], p="nuc")),
        (ft.norm(fa[0], p="nuc", keepdim=True), torch.norm(a[0], p="nuc", keepdim=True)),
        (ft.norm(fa, p="nuc", dim=(1, 2)), torch.norm(a, p="nuc", dim=(1, 2))),
        (ft.norm(fa, p="nuc", dim=(0, 2), keepdim=True), torch.norm(a, p="nuc", dim=(0, 2), keepdim=True)),
        (fa[0].norm(p="nuc"), a[0].norm(p="nuc")),
        (ft.norm(fa[0], p="nuc", dtype=ft.float64), torch.norm(a[0], p="nuc", dtype=torch.float64)),
        (ft.linalg.norm(fa[0], "nuc"), torch.linalg.norm(a[0], "nuc")),
        (ft.linalg.norm(fa[0], 2), torch.linalg.norm(a[0], 2)),
        (ft.linalg.norm(fa[0], -2), torch.linalg.norm(a[0], -2)),
        (ft.linalg.norm(fa, 2, dim=(2, 1)), torch.linalg.norm(a, 2, dim=(2, 1))),
    ]
    for got, exp in pairs:
        assert tuple(got.shape) == tuple(exp.shape)
        assert got.dtype == _DT[exp.dtype]
        np.testing.assert_allclose(_np(got), exp.double().numpy(), rtol=1e-5)


# ----- gradients -------------------------------------------------------------------


def _distinct(shape, seed):
    """A float64 matrix with well-separated singular values (gradcheck needs them distinct)."""
    m, n = shape[-2:]
    k = min(m, n)
    q1, _ = torch.linalg.qr(_rand(shape[:-2] + (m, m), seed=seed))
    q2, _ = torch.linalg.qr(_rand(shape[:-2] + (n, n), seed=seed + 1))
    s = torch.zeros(shape[:-2] + (m, n), dtype=torch.float64)
    s[..., range(k), range(k)] = torch.linspace(3.0, 1.0, k, dtype=torch.float64)
    return q1 @ s @ q2.mT


GRAD_SHAPES = [(3, 3), (4, 3), (3, 4), (2, 3, 2)]


@pytest.mark.parametrize("shape", GRAD_SHAPES)
@pytest.mark.parametrize("name", ["svdvals", "nuc", "2", "-2"])
def test_gradcheck_svd_norms(shape, name):
    f = {
        "svdvals": lambda A: ft.linalg.svdvals(A),
        "nuc": lambda A: ft.linalg.matrix_norm(A, "nuc"),
        "2": lambda A: ft.linalg.matrix_norm(A, 2),
        "-2": lambda A: ft.linalg.matrix_norm(A, -2),
    }[name]
    x = _ft(_distinct(shape, seed=3), requires_grad=True)
    assert gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("shape", GRAD_SHAPES)
def test_gradcheck_svd_full_decomposition(shape):
    # gauge-invariant functions of (U, S, Vh): the polar factor U Vh, S, and U diag(S^2) U^T
    def f(A):
        U, S, Vh = ft.linalg.svd(A, full_matrices=False)
        return U @ Vh, S, (U * (S * S).unsqueeze(-2)) @ U.transpose(-2, -1)

    x = _ft(_distinct(shape, seed=8), requires_grad=True)
    assert gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_svd_grad_matches_torch(shape):
    a = _rand(shape, seed=21)
    ta = a.clone().requires_grad_()
    U, S, Vh = torch.linalg.svd(ta, full_matrices=False)
    ((U @ Vh).sin().sum() + (S * S).sum() + (U.abs() * 0 + U * U).sum()).backward()
    fa = _ft(a, requires_grad=True)
    U, S, Vh = ft.linalg.svd(fa, full_matrices=False)
    ((U @ Vh).sin().sum() + (S * S).sum() + (U.abs() * 0 + U * U).sum()).backward()
    np.testing.assert_allclose(_np(fa.grad), ta.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_svd_only_s_used_grad():
    a = _rand((4, 4), seed=2)
    ta = a.clone().requires_grad_()
    torch.linalg.svd(ta)[1].sum().backward()
    fa = _ft(a, requires_grad=True)
    ft.linalg.svd(fa, full_matrices=False)[1].sum().backward()
    np.testing.assert_allclose(_np(fa.grad), ta.grad.numpy(), atol=1e-10)


# ----- unique(dim=...) -------------------------------------------------------------


def _unique_both(make, **kw):
    res = []
    for L in (torch, ft):
        try:
            out = L.unique(make(L), return_inverse=True, return_counts=True, **kw)
            res.append(("ok", [(o.tolist(), str(o.dtype), tuple(o.shape)) for o in out]))
        except Exception as e:  # noqa: BLE001
            res.append(("err", type(e).__name__, str(e)))
    return res


def _same(a, b):
    # NaN-aware list equality
    return np.array_equal(np.asarray(a, dtype=object).astype(str), np.asarray(b, dtype=object).astype(str))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64", "bool", "uint8"])
@pytest.mark.parametrize("shape", [(7,), (6, 3), (5, 3, 2), (3, 1, 4), (4, 2, 2, 2)])
def test_unique_dim_matches_torch(shape, dtype):
    g = torch.Generator().manual_seed(len(shape))
    base = torch.randint(0, 2, shape, generator=g).tolist()
    for dim in range(-len(shape), len(shape)):
        for flags in ({}, {"sorted": False}):
            t, f = _unique_both(lambda L: L.tensor(base, dtype=getattr(L, dtype)), dim=dim, **flags)
            assert t == f, f"dim={dim}: torch {t} vs ferrotorch {f}"


def test_unique_dim_return_forms():
    x = [[1, 2], [1, 2], [0, 1], [3, 0]]
    for ri in (False, True):
        for rc in (False, True):
            t = torch.unique(torch.tensor(x), dim=0, return_inverse=ri, return_counts=rc)
            f = ft.unique(ft.tensor(x), dim=0, return_inverse=ri, return_counts=rc)
            t = t if isinstance(t, tuple) else (t,)
            f = f if isinstance(f, tuple) else (f,)
            assert len(t) == len(f)
            for a, b in zip(t, f):
                assert a.tolist() == b.tolist() and str(a.dtype) == str(b.dtype)
    f = ft.tensor(x).unique(dim=1, return_counts=True)
    t = torch.tensor(x).unique(dim=1, return_counts=True)
    assert [v.tolist() for v in f] == [v.tolist() for v in t]


def test_unique_dim_random_floats():
    a = torch.randint(-3, 3, (40, 3)).double() / 2
    a = torch.cat([a, a[:10]])
    t, f = _unique_both(lambda L: L.tensor(a.tolist(), dtype=L.float64), dim=0)
    assert t == f
    t, f = _unique_both(lambda L: L.tensor(a.T.tolist(), dtype=L.float64), dim=1)
    assert t == f


def test_unique_dim_nan_and_signed_zero():
    for rows in ([[1.0, float("nan")], [1.0, float("nan")], [0.0, 1.0]], [[-0.0, 1.0], [0.0, 1.0]]):
        t, f = _unique_both(lambda L: L.tensor(rows), dim=0)
        assert t[0] == f[0] == "ok"
        for (tv, tdt, tsh), (fv, fdt, fsh) in zip(t[1], f[1]):
            assert _same(tv, fv) and tdt == fdt and tsh == fsh
    v = ft.unique(ft.tensor([[-0.0, 1.0], [0.0, 1.0]]), dim=0)
    assert math.copysign(1, v.tolist()[0][0]) == math.copysign(1, torch.unique(torch.tensor([[-0.0, 1.0], [0.0, 1.0]]),
                                                                                dim=0).tolist()[0][0])


@pytest.mark.parametrize("shape,dim", [((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((3, 0), 0), ((0,), 0),
                                       ((2, 0, 3), 1), ((2, 0, 3), 0), ((2, 3), 2), ((2, 3), -3), ((), 0)])
def test_unique_dim_edge_cases(shape, dim):
    t, f = _unique_both(lambda L: L.zeros(shape), dim=dim)
    assert t == f


def test_unique_dim_requires_grad_input():
    x = ft.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
    v = ft.unique(x, dim=0)
    assert v.tolist() == [[1.0, 2.0]] and not v.requires_grad


def test_svd_inf_gives_nan_like_torch():
    a = [[float("inf"), 1.0], [1.0, 2.0]]
    assert all(math.isnan(v) for v in ft.linalg.svdvals(ft.tensor(a)).tolist())
    assert all(math.isnan(v) for v in torch.linalg.svdvals(torch.tensor(a)).tolist())
    assert math.isnan(ft.linalg.matrix_norm(ft.tensor(a), "nuc").item())


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_svd_full_matrices_grad_through_s(shape):
    a = _rand(shape, seed=13)
    ta = a.clone().requires_grad_()
    torch.linalg.svd(ta)[1].pow(2).sum().backward()
    fa = _ft(a, requires_grad=True)
    U, S, Vh = ft.linalg.svd(fa)
    assert tuple(U.shape) == (shape[0], shape[0]) and tuple(Vh.shape) == (shape[1], shape[1])
    S.pow(2).sum().backward()
    np.testing.assert_allclose(_np(fa.grad), ta.grad.numpy(), atol=1e-10)
