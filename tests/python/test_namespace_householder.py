"""``geqrf``/``orgqr``/``ormqr`` (LAPACK's Householder form) against PyTorch: the
packed reflectors and ``tau``, strides, batching, products with ``Q``, errors and
``GeqrfBackward0``."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402
from _parity import error_of as _err  # noqa: E402


def _ft(t):
    return ft.from_numpy(t.detach().numpy().copy())


def _np(x):
    return x.detach().numpy()


MATS = {
    "tall": lambda: torch.tensor([[1., 2, 3], [4, 5, 6], [7, 8, 10], [1, 0, 1]], dtype=torch.float64),
    "wide": lambda: torch.randn(3, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64),
    "batched": lambda: torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64),
    "zero": lambda: torch.zeros(3, 2),
    "zero_below_diag_negative": lambda: torch.tensor([[-2.], [0.], [0.]]),
    "zero_alpha": lambda: torch.tensor([[0.], [3.], [4.]]),
    "float32": lambda: torch.randn(6, 4, generator=torch.Generator().manual_seed(3)),
}


@pytest.mark.parametrize("name", sorted(MATS))
def test_geqrf_matches_lapack(name):
    M = MATS[name]()
    a, tau = ft.geqrf(_ft(M))
    b, u = torch.geqrf(M)
    tol = 1e-5 if M.dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)
    np.testing.assert_allclose(_np(tau), _np(u), rtol=tol, atol=tol)
    assert tuple(a.stride()) == tuple(b.stride()) and tuple(tau.shape) == tuple(u.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


@pytest.mark.parametrize("left,transpose,shape", [(True, False, (4, 2)), (True, True, (4, 3)),
                                                   (False, False, (2, 4)), (False, True, (3, 4))])
def test_ormqr_and_orgqr(left, transpose, shape):
    A = MATS["tall"]()
    a, tau = torch.geqrf(A)
    C = torch.randn(*shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    got = ft.ormqr(_ft(a), _ft(tau), _ft(C), left, transpose)
    np.testing.assert_allclose(_np(got), _np(torch.ormqr(a, tau, C, left, transpose)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(ft.orgqr(_ft(a), _ft(tau))), _np(torch.orgqr(a, tau)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(_ft(a).ormqr(_ft(tau), _ft(C), left, transpose)), _np(got))


def test_methods_and_qr_reconstruction():
    A = MATS["batched"]()
    a, tau = _ft(A).geqrf()
    Q = a.orgqr(tau)
    R = a[..., :4, :].triu()
    np.testing.assert_allclose(_np(Q @ R), _np(A), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mk", [
    lambda L: L.geqrf(L.ones(3)),
    lambda L: L.geqrf(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.geqrf(L.ones(3, 3, dtype=L.float16)),
    lambda L: L.ormqr(*L.geqrf(L.ones(4, 3, dtype=L.float64)), L.ones(3, 2, dtype=L.float64)),
    lambda L: L.ormqr(L.geqrf(L.ones(4, 3, dtype=L.float64))[0], L.geqrf(L.ones(4, 3, dtype=L.float64))[1].float(),
                      L.ones(4, 2, dtype=L.float64)),
])
def test_errors_match(mk):
    assert _err(lambda: mk(ft)) == _err(lambda: mk(torch))


def test_geqrf_records_a_node_that_refuses_backward():
    for lib, x in ((torch, MATS["tall"]().requires_grad_()), (ft, _ft(MATS["tall"]()).requires_grad_())):
        a, tau = lib.geqrf(x)
        assert type(a.grad_fn).__name__ == "GeqrfBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented."):
            a.sum().backward()
