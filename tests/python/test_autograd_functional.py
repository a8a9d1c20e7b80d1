"""``autograd.functional`` (jacobian, hessian, vjp, jvp) against
``torch.autograd.functional`` on a few functions of one and two inputs."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def f_single(L):
    return lambda x: (x.exp() * x.tanh()).reshape(2, 2)


def f_pair(L):
    return lambda x, y: ((x @ y).relu() + x.sum() * y.mean(), (x * x).sum())


def f_scalar(L):
    return lambda x: (x.pow(3) * x.sigmoid()).sum() + (x.reshape(2, 2) @ x.reshape(2, 2)).sum()


def data(seed, *shapes):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in shapes]
    return (tuple(ft.tensor(a, dtype=ft.float64) for a in arrs), tuple(torch.tensor(a, dtype=torch.float64) for a in arrs))


def check(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            check(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_jacobian_single_input():
    (xf,), (xt,) = data(0, (4,))
    check(ft.autograd.functional.jacobian(f_single(ft), xf), torch.autograd.functional.jacobian(f_single(torch), xt))


def test_jacobian_two_inputs_two_outputs():
    (xf, yf), (xt, yt) = data(1, (2, 3), (3, 2))
    check(ft.autograd.functional.jacobian(f_pair(ft), (xf, yf)),
          torch.autograd.functional.jacobian(f_pair(torch), (xt, yt)))


def test_hessian():
    (xf,), (xt,) = data(2, (4,))
    check(ft.autograd.functional.hessian(f_scalar(ft), xf), torch.autograd.functional.hessian(f_scalar(torch), xt))


def test_vjp_and_jvp():
    (xf, vf), (xt, vt) = data(3, (4,), (2, 2))
    check(ft.autograd.functional.vjp(f_single(ft), xf, vf), torch.autograd.functional.vjp(f_single(torch), xt, vt))
    (xf, uf), (xt, ut) = data(4, (4,), (4,))
    check(ft.autograd.functional.jvp(f_single(ft), xf, uf), torch.autograd.functional.jvp(f_single(torch), xt, ut))


def test_vjp_scalar_output_default_v():
    (xf,), (xt,) = data(5, (4,))
    check(ft.autograd.functional.vjp(f_scalar(ft), xf), torch.autograd.functional.vjp(f_scalar(torch), xt))
