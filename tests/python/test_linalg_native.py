"""The native factorisations (LU, Cholesky, QR, eigh, triangular solves) and the
``torch.linalg`` functions built on them, against PyTorch: values, strides,
errors, batching/broadcasting, gradients and ``grad_fn`` names."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402

_DT = {torch.float32: ft.float32, torch.float64: ft.float64, torch.int64: ft.int64, torch.int32: ft.int32}


def _ft(a, requires_grad=False):
    x = ft.from_numpy(a.detach().numpy().copy())
    return x.requires_grad_(True) if requires_grad else x


def _np(x):
    if isinstance(x, np.ndarray):
        return x
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach().tolist()).reshape(tuple(x.shape))


def _close(a, b, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _rand(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=dtype)


def _spd(*shape, seed=0):
    a = _rand(*shape, seed=seed)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=a.dtype)


def _grads(fn_t, fn_f, *inputs):
    """Gradients of ``sum(out * w)`` (fixed random ``w`` per output) through
    PyTorch and ferrotorch, for the float64 ``inputs``."""
    ts = [x.clone().requires_grad_(True) for x in inputs]
    fs = [_ft(x, True) for x in inputs]
    outs_t, outs_f = fn_t(*ts), fn_f(*fs)
    if not isinstance(outs_t, (tuple, list)):
        outs_t, outs_f = (outs_t,), (outs_f,)
    loss_t, loss_f = 0, 0
    for i, (ot, of) in enumerate(zip(outs_t, outs_f)):
        if ot is None or not ot.dtype.is_floating_point:
            continue
        w = _rand(*ot.shape, seed=100 + i)
        loss_t = loss_t + (ot * w).sum()
        loss_f = loss_f + (of * _ft(w)).sum()
    gt = torch.autograd.grad(loss_t, ts)
    gf = ft.autograd.grad(loss_f, fs)
    return gt, gf


# ----- LU --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (6, 4), (4, 6), (2, 3, 7, 7), (1, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lu_factor_matches_lapack(shape, dtype):
    a = _rand(*shape, dtype=dtype)
    LU_t, piv_t, info_t = torch.linalg.lu_factor_ex(a)
    LU_f, piv_f, info_f = ft.linalg.lu_factor_ex(_ft(a))
    assert piv_f.dtype == ft.int32 and info_f.dtype == ft.int32
    np.testing.assert_array_equal(_np(piv_f), piv_t.numpy())
    np.testing.assert_array_equal(_np(info_f), info_t.numpy())
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    _close(LU_f, LU_t, rtol=tol, atol=tol)
    assert LU_f.stride() == LU_t.stride()
    P_t, L_t, U_t = torch.linalg.lu(a)
    P_f, L_f, U_f = ft.linalg.lu(_ft(a))
    for x, y in ((P_f, P_t), (L_f, L_t), (U_f, U_t)):
        assert tuple(x.shape) == tuple(y.shape)
        _close(x, y, rtol=tol, atol=tol)


def test_lu_factor_singular_info_and_error():
    a = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64)
    _, _, info_t = torch.linalg.lu_factor_ex(a)
    _, _, info_f = ft.linalg.lu_factor_ex(_ft(a))
    assert int(info_f) == int(info_t) == 2
    with pytest.raises(RuntimeError) as et:
        torch.linalg.lu_factor(a)
    with pytest.raises(RuntimeError) as ef:
        ft.linalg.lu_factor(_ft(a))
    assert str(ef.value) == str(et.value)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve(left, adjoint):
    a = _rand(2, 4, 4)
    b = _rand(2, 4, 3, seed=1) if left else _rand(2, 3, 4, seed=1)
    LU, piv = torch.linalg.lu_factor(a)
    x_t = torch.linalg.lu_solve(LU, piv, b, left=left, adjoint=adjoint)
    x_f = ft.linalg.lu_solve(_ft(LU), _ft(piv), _ft(b), left=left, adjoint=adjoint)
    _close(x_f, x_t)
    gt, gf = _grads(lambda L_, B: torch.linalg.lu_solve(L_, piv, B, left=left, adjoint=adjoint),
                    lambda L_, B: ft.linalg.lu_solve(L_, _ft(piv), B, left=left, adjoint=adjoint), LU, b)
    for x, y in zip(gf, gt):
        _close(x, y, rtol=1e-8, atol=1e-9)


def test_lu_factor_gradient():
    a = _rand(5, 5, seed=3)
    gt, gf = _grads(lambda A: torch.linalg.lu_factor(A)[0], lambda A: ft.linalg.lu_factor(A)[0], a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
    gt, gf = _grads(lambda A: torch.linalg.lu(A)[1:], lambda A: ft.linalg.lu(A)[1:], a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 6), (2, 6, 4), (1, 5), (5, 1)])
def test_lu_factor_gradient_of_wide_and_tall_matrices(shape):
    # The fuzzer's find: PyTorch differentiates LU of non-square matrices too.
    a = _rand(*shape, seed=4)
    gt, gf = _grads(lambda A: torch.linalg.lu_factor(A)[0], lambda A: ft.linalg.lu_factor(A)[0], a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
    gt, gf = _grads(lambda A: torch.linalg.lu(A)[1:], lambda A: ft.linalg.lu(A)[1:], a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
    x = ft.tensor(a.tolist(), dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradcheck(lambda t: ft.linalg.lu_factor(t)[0], (x,))


def test_lu_solve_bad_pivots():
    with pytest.raises(RuntimeError, match="Pivots given to lu_solve"):
        ft.linalg.lu_solve(ft.eye(2), ft.tensor([3, 3], dtype=ft.int32), ft.ones(2, 1))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type torch.int32"):
        ft.linalg.lu_solve(ft.eye(2), ft.tensor([1, 2]), ft.ones(2, 1))


# ----- solve / inv / det -------------------------------------------------------------------


@pytest.mark.parametrize("ashape,bshape", [((4, 4), (4, 2)), ((3, 4, 4), (4, 2)), ((4, 4), (3, 4, 2)),
                                           ((2, 1, 3, 3), (4, 3, 1)), ((3, 3), (3,)), ((2, 3, 3), (2, 3))])
def test_solve_broadcasting_and_grad(ashape, bshape):
    a, b = _rand(*ashape), _rand(*bshape, seed=1)
    _close(ft.linalg.solve(_ft(a), _ft(b)), torch.linalg.solve(a, b))
    gt, gf = _grads(torch.linalg.solve, ft.linalg.solve, a, b)
    for x, y in zip(gf, gt):
        assert tuple(x.shape) == tuple(y.shape)
        _close(x, y, rtol=1e-8, atol=1e-9)


def test_solve_left_false_and_strides():
    a, b = _rand(3, 3), _rand(2, 3, seed=1)
    _close(ft.linalg.solve(_ft(a), _ft(b), left=False), torch.linalg.solve(a, b, left=False))
    a, b = _rand(4, 3, 3), _rand(4, 3, 2, seed=1)
    assert ft.linalg.solve(_ft(a), _ft(b)).stride() == torch.linalg.solve(a, b).stride()


@pytest.mark.parametrize("fn", ["solve", "inv"])
@pytest.mark.parametrize("batched", [False, True])
def test_singular_errors(fn, batched):
    a = torch.zeros(3, 2, 2) if batched else torch.zeros(2, 2)
    args_t = (a, torch.ones(a.shape[:-1] + (1,))) if fn == "solve" else (a,)
    args_f = tuple(_ft(x) for x in args_t)
    with pytest.raises(torch.linalg.LinAlgError) as et:
        getattr(torch.linalg, fn)(*args_t)
    with pytest.raises(ft.linalg.LinAlgError) as ef:
        getattr(ft.linalg, fn)(*args_f)
    assert str(ef.value) == str(et.value)


@pytest.mark.parametrize("bad,kind", [
    (lambda L: L.inv(torch.zeros(2, 3)), RuntimeError),
    (lambda L: L.inv(torch.zeros(2, 2, dtype=torch.int64)), RuntimeError),
    (lambda L: L.det(torch.zeros(2, 3)), RuntimeError),
    (lambda L: L.solve(torch.eye(2), torch.ones(3, 1)), RuntimeError),
    (lambda L: L.solve(torch.eye(2), torch.ones(2, 1, dtype=torch.float64)), RuntimeError),
    (lambda L: L.cholesky(torch.ones(2, 3)), RuntimeError),
    (lambda L: L.cholesky(torch.ones(3)), RuntimeError),
    (lambda L: L.cholesky(torch.ones(2, 2, dtype=torch.float16)), NotImplementedError),
    (lambda L: L.eigh(torch.ones(2, 3)), RuntimeError),
    (lambda L: L.eigh(torch.eye(2), UPLO="X"), RuntimeError),
    (lambda L: L.qr(torch.eye(2), mode="foo"), RuntimeError),
    (lambda L: L.qr(torch.ones(2)), RuntimeError),
    (lambda L: L.solve_triangular(torch.eye(2), torch.ones(2), upper=True), RuntimeError),
    (lambda L: L.solve_triangular(torch.ones(2, 3), torch.ones(2, 1), upper=True), RuntimeError),
    (lambda L: L.solve_triangular(torch.eye(2), torch.ones(3, 1), upper=True), RuntimeError),
    (lambda L: L.lu_factor(torch.ones(2, 2, dtype=torch.int64)), NotImplementedError),
])
def test_error_messages_match(bad, kind):
    class Shim:
        def __getattr__(self, name):
            fn = getattr(ft.linalg, name)

            def call(*args, **kw):
                conv = [_ft(a) if isinstance(a, torch.Tensor) else a for a in args]
                return fn(*conv, **kw)
            return call
    with pytest.raises(kind) as et:
        bad(torch.linalg)
    with pytest.raises(kind) as ef:
        bad(Shim())
    assert str(ef.value) == str(et.value)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 2, 1, 1)])
def test_inv_det_slogdet(shape):
    a = _rand(*shape, seed=4)
    _close(ft.linalg.inv(_ft(a)), torch.linalg.inv(a))
    assert ft.linalg.inv(_ft(a)).stride() == torch.linalg.inv(a).stride()
    _close(ft.linalg.det(_ft(a)), torch.linalg.det(a))
    _close(ft.det(_ft(a)), torch.det(a))
    s_f, l_f = ft.linalg.slogdet(_ft(a))
    s_t, l_t = torch.linalg.slogdet(a)
    _close(s_f, s_t)
    _close(l_f, l_t)
    _close(ft.logdet(_ft(a)), torch.logdet(a))
    for fn in ("inv", "det"):
        gt, gf = _grads(getattr(torch.linalg, fn), getattr(ft.linalg, fn), a)
        _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
    gt, gf = _grads(lambda x: torch.linalg.slogdet(x)[1], lambda x: ft.linalg.slogdet(x)[1], a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("shape,dtype", [((130, 130), torch.float64), ((3, 70, 70), torch.float64),
                                         ((65, 65), torch.float32)])
def test_inv_past_the_blocking_sizes(shape, dtype):
    # inv solves against the identity, which the kernel inverts from the triangular factors;
    # solve(A, I) and a non-identity right-hand side take the dense solves: all agree with PyTorch
    a = _rand(*shape, seed=9, dtype=dtype)
    tol = dict(rtol=1e-8, atol=1e-9) if dtype == torch.float64 else dict(rtol=2e-3, atol=2e-4)
    eye = torch.eye(shape[-1], dtype=dtype).expand(shape)
    _close(ft.linalg.inv(_ft(a)), torch.linalg.inv(a), **tol)
    _close(ft.linalg.solve(_ft(a), _ft(eye)), torch.linalg.solve(a, eye), **tol)
    _close(ft.linalg.solve(_ft(a), _ft(2 * eye)), torch.linalg.solve(a, 2 * eye), **tol)
    res = (a @ torch.from_numpy(_np(ft.linalg.inv(_ft(a))).astype(a.numpy().dtype))).numpy()
    np.testing.assert_allclose(res, eye.numpy(), atol=1e-9 if dtype == torch.float64 else 2e-3)


def test_inv_ex_of_singular_matrix_reports_the_pivot():
    a = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]], dtype=torch.float64)
    inv_f, info_f = ft.linalg.inv_ex(_ft(a))
    inv_t, info_t = torch.linalg.inv_ex(a)
    assert int(info_f) == int(info_t) > 0
    assert not np.isfinite(_np(inv_f)).all() and not np.isfinite(_np(inv_t)).all()


def test_det_gradient_at_singular_matrix():
    # PyTorch 2.13 gives a zero gradient where the LU determinant is exactly zero
    for a in ([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]], [[1.0, 2.0], [2.0, 4.0]]):
        a = torch.tensor(a, dtype=torch.float64)
        gt, gf = _grads(torch.linalg.det, ft.linalg.det, a)
        _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)


def test_empty_matrices():
    assert float(ft.linalg.det(ft.zeros(0, 0))) == 1.0
    assert tuple(ft.linalg.inv(ft.zeros(2, 0, 0)).shape) == (2, 0, 0)
    assert tuple(ft.linalg.cholesky(ft.zeros(0, 0)).shape) == (0, 0)
    w, v = ft.linalg.eigh(ft.zeros(0, 0))
    assert tuple(w.shape) == (0,) and tuple(v.shape) == (0, 0)
    q, r = ft.linalg.qr(ft.zeros(3, 0))
    assert tuple(q.shape) == (3, 0) and tuple(r.shape) == (0, 0)


# ----- Cholesky ----------------------------------------------------------------------------


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5)])
def test_cholesky(upper, shape):
    a = _spd(*shape)
    L_t = torch.linalg.cholesky(a, upper=upper)
    L_f = ft.linalg.cholesky(_ft(a), upper=upper)
    _close(L_f, L_t)
    assert L_f.stride() == L_t.stride()
    gt, gf = _grads(lambda x: torch.linalg.cholesky(x, upper=upper), lambda x: ft.linalg.cholesky(x, upper=upper), a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
    # only one triangle is read
    junk = a.clone()
    junk[..., 0, -1] = 1e6 if not upper else junk[..., 0, -1]
    junk[..., -1, 0] = 1e6 if upper else junk[..., -1, 0]
    _close(ft.linalg.cholesky(_ft(junk), upper=upper), L_t)
    b = _rand(*shape[:-1], 2, seed=2)
    _close(ft.cholesky_solve(_ft(b), L_f, upper=upper), torch.cholesky_solve(b, L_t, upper=upper))
    _close(ft.cholesky_inverse(L_f if len(shape) == 2 else L_f[0], upper=upper),
           torch.cholesky_inverse(L_t if len(shape) == 2 else L_t[0], upper=upper))


def test_cholesky_not_positive_definite():
    a = torch.stack([torch.eye(3), -torch.eye(3)]).double()
    with pytest.raises(torch.linalg.LinAlgError) as et:
        torch.linalg.cholesky(a)
    with pytest.raises(ft.linalg.LinAlgError) as ef:
        ft.linalg.cholesky(_ft(a))
    assert str(ef.value) == str(et.value)
    np.testing.assert_array_equal(_np(ft.linalg.cholesky_ex(_ft(a)).info), torch.linalg.cholesky_ex(a).info.numpy())


# ----- QR ----------------------------------------------------------------------------------


def _normalise_qr(Q, R, lib):
    """Q D, D R with D = sign(diag(R)): the QR factors with a nonnegative diagonal
    (unique for full-rank input; Householder conventions differ in these signs)."""
    k = min(R.shape[-2], R.shape[-1])
    d = R.diagonal(0, -2, -1).sign()
    d = lib.where(d == 0, lib.ones_like(d), d).detach()
    Qn = Q[..., :, :k] * d.unsqueeze(-2) if Q.numel() else Q
    Rn = R[..., :k, :] * d.unsqueeze(-1)
    return Qn, Rn


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 6, 4), (2, 4, 6)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = _rand(*shape, seed=5)
    Q_t, R_t = torch.linalg.qr(a, mode=mode)
    Q_f, R_f = ft.linalg.qr(_ft(a), mode=mode)
    assert tuple(Q_f.shape) == tuple(Q_t.shape) and tuple(R_f.shape) == tuple(R_t.shape)
    assert R_f.stride() == R_t.stride()
    if mode != "r":
        assert Q_f.stride() == Q_t.stride()
        _close(Q_f @ R_f, _ft(a))
        _close(Q_f.mT @ Q_f, np.broadcast_to(np.eye(Q_f.shape[-1]), tuple(Q_f.shape[:-2]) + (Q_f.shape[-1],) * 2))
    Qn_t, Rn_t = _normalise_qr(Q_t, R_t, torch)
    Qn_f, Rn_f = _normalise_qr(Q_f, R_f, ft)
    _close(Rn_f, Rn_t)
    if mode == "reduced":
        _close(Qn_f, Qn_t)
        gt, gf = _grads(lambda x: _normalise_qr(*torch.linalg.qr(x), torch),
                        lambda x: _normalise_qr(*ft.linalg.qr(x), ft), a)
        _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)


def test_qr_backward_errors():
    a = ft.randn(4, 2, dtype=ft.float64, requires_grad=True)
    Q, R = ft.linalg.qr(a, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        Q.sum().backward()


# ----- eigh --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (3, 6, 6), (1, 1)])
@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh(shape, UPLO):
    a = _rand(*shape, seed=6)
    a = a + a.mT
    # only one triangle is read: spoil the other
    spoil = a.triu(1) * 7 if UPLO == "L" else a.tril(-1) * 7
    w_t, V_t = torch.linalg.eigh(a + spoil, UPLO=UPLO)
    w_f, V_f = ft.linalg.eigh(_ft(a + spoil), UPLO=UPLO)
    _close(w_f, w_t)
    assert V_f.stride() == V_t.stride()
    # eigenvectors are unique up to sign
    sgn = (_np(V_f) * V_t.numpy()).sum(-2, keepdims=True)
    np.testing.assert_allclose(_np(V_f) * np.sign(sgn), V_t.numpy(), rtol=1e-8, atol=1e-9)
    _close(ft.linalg.eigvalsh(_ft(a), UPLO=UPLO), torch.linalg.eigvalsh(a, UPLO=UPLO))
    gt, gf = _grads(lambda x: (torch.linalg.eigh(x)[0], torch.linalg.eigh(x)[1] ** 2),
                    lambda x: (ft.linalg.eigh(x)[0], ft.linalg.eigh(x)[1] ** 2), a)
    _close(gf[0], gt[0], rtol=1e-7, atol=1e-8)
    gt, gf = _grads(torch.linalg.eigvalsh, ft.linalg.eigvalsh, a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)


def test_eigh_nan_gives_nan():
    w, v = ft.linalg.eigh(ft.full((2, 2), float("nan")))
    assert np.isnan(_np(w)).all() and np.isnan(_np(v)).all()


# ----- triangular solves -------------------------------------------------------------------


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(upper, left, unit):
    a = _rand(2, 4, 4, seed=7) + 4 * torch.eye(4, dtype=torch.float64)
    b = _rand(2, 4, 3, seed=8) if left else _rand(2, 3, 4, seed=8)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    _close(ft.linalg.solve_triangular(_ft(a), _ft(b), **kw), torch.linalg.solve_triangular(a, b, **kw))
    gt, gf = _grads(lambda x, y: torch.linalg.solve_triangular(x, y, **kw),
                    lambda x, y: ft.linalg.solve_triangular(x, y, **kw), a, b)
    for x, y in zip(gf, gt):
        _close(x, y, rtol=1e-8, atol=1e-9)
    X_t, _ = torch.triangular_solve(b.mT if not left else b, a, upper=upper, unitriangular=unit)
    X_f, _ = ft.triangular_solve(_ft(b.mT if not left else b), _ft(a), upper=upper, unitriangular=unit)
    _close(X_f, X_t)


def test_solve_triangular_promotes_dtypes():
    a, b = torch.eye(2), torch.ones(2, 1, dtype=torch.float64)
    x = ft.linalg.solve_triangular(_ft(a), _ft(b), upper=True)
    assert x.dtype == ft.float64
    _close(x, torch.linalg.solve_triangular(a, b, upper=True))


# ----- matrix functions --------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.1, 1.0, 30.0])
def test_matrix_exp(scale):
    a = _rand(3, 4, 4, seed=9) * scale
    _close(ft.linalg.matrix_exp(_ft(a)), torch.linalg.matrix_exp(a), rtol=1e-8, atol=1e-8)
    gt, gf = _grads(torch.linalg.matrix_exp, ft.linalg.matrix_exp, a * (1.0 / scale))
    _close(gf[0], gt[0], rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = _rand(2, 3, 3, seed=10) + 2 * torch.eye(3, dtype=torch.float64)
    _close(ft.linalg.matrix_power(_ft(a), n), torch.linalg.matrix_power(a, n), rtol=1e-8, atol=1e-9)
    _close(_ft(a).matrix_power(n), a.matrix_power(n), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_rank_lstsq_cond(shape):
    a = _rand(*shape, seed=11)
    _close(ft.linalg.pinv(_ft(a)), torch.linalg.pinv(a), rtol=1e-8, atol=1e-9)
    np.testing.assert_array_equal(_np(ft.linalg.matrix_rank(_ft(a))), torch.linalg.matrix_rank(a).numpy())
    _close(ft.linalg.cond(_ft(a)), torch.linalg.cond(a), rtol=1e-8)
    if shape[-1] == shape[-2]:
        for p in (1, -1, float("inf"), "fro"):
            _close(ft.linalg.cond(_ft(a), p), torch.linalg.cond(a, p), rtol=1e-8)
    b = _rand(*shape[:-1], 2, seed=12)
    _close(ft.linalg.lstsq(_ft(a), _ft(b)).solution, torch.linalg.lstsq(a, b).solution, rtol=1e-8, atol=1e-9)
    np.testing.assert_array_equal(_np(ft.linalg.lstsq(_ft(a), _ft(b)).rank), torch.linalg.lstsq(a, b).rank.numpy())
    gt, gf = _grads(torch.linalg.pinv, ft.linalg.pinv, a)
    _close(gf[0], gt[0], rtol=1e-7, atol=1e-8)


def test_rank_deficient_pinv_and_rank():
    a = torch.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], dtype=torch.float64)
    _close(ft.linalg.pinv(_ft(a)), torch.linalg.pinv(a), rtol=1e-8, atol=1e-9)
    assert int(ft.linalg.matrix_rank(_ft(a))) == int(torch.linalg.matrix_rank(a)) == 1
    s = a @ a.mT
    _close(ft.linalg.pinv(_ft(s), hermitian=True), torch.linalg.pinv(s, hermitian=True), rtol=1e-7, atol=1e-9)
    assert int(ft.linalg.matrix_rank(_ft(s), hermitian=True)) == int(torch.linalg.matrix_rank(s, hermitian=True))


def test_cross_vecdot_multi_dot_vander():
    a, b = _rand(4, 3, seed=13), _rand(2, 1, 3, seed=14)
    _close(ft.linalg.cross(_ft(a).unsqueeze(0), _ft(b)), torch.linalg.cross(a.unsqueeze(0), b))
    _close(ft.linalg.vecdot(_ft(a), _ft(b)), torch.linalg.vecdot(a, b))
    ms = [_rand(3, seed=15), _rand(3, 4, seed=16), _rand(4, 2, seed=17), _rand(2, seed=18)]
    _close(ft.linalg.multi_dot([_ft(m) for m in ms]), torch.linalg.multi_dot(ms))
    x = _rand(2, 4, seed=19)
    _close(ft.linalg.vander(_ft(x)), torch.linalg.vander(x))
    _close(ft.linalg.vander(_ft(x), N=6), torch.linalg.vander(x, N=6))


def test_householder_product_inverts_geqrf():
    a = _rand(2, 5, 3, seed=20)
    h, tau = torch.geqrf(a)
    _close(ft.linalg.householder_product(_ft(h), _ft(tau)), torch.linalg.householder_product(h, tau))
    gt, gf = _grads(torch.linalg.householder_product, ft.linalg.householder_product, h, tau)
    for x, y in zip(gf, gt):
        _close(x, y, rtol=1e-8, atol=1e-9)


def test_tensorinv_tensorsolve():
    a = _rand(4, 6, 8, 3, seed=21)
    _close(ft.linalg.tensorinv(_ft(a), ind=2), torch.linalg.tensorinv(a, ind=2), rtol=1e-8, atol=1e-9)
    a = _rand(2, 3, 6, seed=22)
    b = _rand(2, 3, seed=23)
    _close(ft.linalg.tensorsolve(_ft(a), _ft(b)), torch.linalg.tensorsolve(a, b), rtol=1e-8, atol=1e-9)


# ----- names, meta -------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["inv", "det", "solve", "cholesky", "qr", "eigh", "slogdet", "lu_factor",
                                "solve_triangular", "matrix_exp", "eigvalsh", "lu_solve"])
def test_grad_fn_names(fn):
    def call(L, x, lib):
        s = x @ x.mT + 3 * lib.eye(3, dtype=x.dtype)
        if fn == "solve":
            return L.solve(s, lib.ones(3, 1, dtype=x.dtype))
        if fn == "solve_triangular":
            return L.solve_triangular(s, lib.ones(3, 1, dtype=x.dtype), upper=True)
        if fn == "lu_solve":
            LU, p = L.lu_factor(s)
            return L.lu_solve(LU, p, lib.ones(3, 1, dtype=x.dtype))
        r = getattr(L, fn)(s)
        return r[-1] if fn == "slogdet" else r[0] if isinstance(r, tuple) else r
    a = _rand(3, 3, seed=24)
    t = call(torch.linalg, a.clone().requires_grad_(True), torch)
    f = call(ft.linalg, _ft(a, True), ft)
    assert type(f.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("fn,shape", [("inv", (3, 4, 4)), ("det", (3, 4, 4)), ("cholesky", (2, 3, 3)),
                                      ("eigh", (2, 3, 3)), ("qr", (2, 5, 3)), ("lu_factor", (2, 4, 3)),
                                      ("matrix_exp", (3, 3))])
def test_meta_shapes_match_pytorch(fn, shape):
    rt = getattr(torch.linalg, fn)(torch.empty(shape, device="meta"))
    rf = getattr(ft.linalg, fn)(ft.empty(shape, device="meta"))
    rt = rt if isinstance(rt, tuple) else (rt,)
    rf = rf if isinstance(rf, tuple) else (rf,)
    for x, y in zip(rf, rt):
        assert x.device.type == "meta"
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype) == str(y.dtype)


def test_gradcheck_float64():
    from ferrotorch.autograd import gradcheck
    a = ft.randn(3, 3, dtype=ft.float64, requires_grad=True)
    eye = 3 * ft.eye(3, dtype=ft.float64)
    # the factorisations read one triangle: differentiate functions of a symmetric matrix
    assert gradcheck(lambda x: ft.linalg.cholesky(x @ x.mT + eye), (a,))
    assert gradcheck(lambda x: ft.linalg.inv(x + eye), (a,))
    assert gradcheck(lambda x: ft.linalg.eigvalsh(x + x.mT), (a,))
    assert gradcheck(lambda x: ft.linalg.eigh(x + x.mT)[1].abs(), (a,))
    assert gradcheck(lambda x: ft.linalg.det(x), (a,))
    assert gradcheck(lambda x: ft.linalg.matrix_exp(x), (a,))
    b = ft.randn(4, 3, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda x: ft.linalg.qr(x)[1].diagonal().abs(), (b,))


@pytest.mark.parametrize("shape", [(70, 50), (50, 70), (2, 48, 48)])
@pytest.mark.parametrize("full", [False, True])
def test_large_svd_through_faer(shape, full):
    # past 32 singular values the SVD runs faer's algorithm instead of Jacobi rotations
    a = _rand(*shape, seed=25)
    U, S, Vh = ft.linalg.svd(_ft(a), full_matrices=full)
    Ut, St, Vht = torch.linalg.svd(a, full_matrices=full)
    assert tuple(U.shape) == tuple(Ut.shape) and tuple(Vh.shape) == tuple(Vht.shape)
    _close(S, St, rtol=1e-12, atol=1e-12)
    k = S.shape[-1]
    _close((U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], a, rtol=1e-10, atol=1e-11)
    eye_u = np.broadcast_to(np.eye(U.shape[-1]), tuple(U.shape[:-2]) + (U.shape[-1],) * 2)
    _close(U.mT @ U, eye_u, rtol=1e-10, atol=1e-11)
    _close(ft.linalg.svdvals(_ft(a)), St, rtol=1e-12, atol=1e-12)
    gt, gf = _grads(torch.linalg.svdvals, ft.linalg.svdvals, a)
    _close(gf[0], gt[0], rtol=1e-8, atol=1e-9)
