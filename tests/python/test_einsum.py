"""einsum (explicit/implicit output, ellipsis, diagonals, several operands),
tensordot, outer/ger, vdot, addmv, addbmm, baddbmm against PyTorch, with
gradients and gradcheck."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import errors_match, gradcheck, parity

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

rng = np.random.default_rng(0)


def r(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 6, 8)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i->i", [(4,), (4,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i...->...", [(3, 2, 4)]),
    ("...,...->...", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 2), (2, 2)]),
    ("ijk,ikl->ijl", [(2, 1, 3), (2, 3, 4)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("Ab,bA->A", [(2, 3), (3, 2)]),
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ijj->i", [(2, 3, 3)]),
    ("", [()]),
    ("->", [()]),
    (",i->i", [(), (3,)]),
]


@pytest.mark.parametrize("eq,shapes", CASES)
def test_einsum_matches_torch(eq, shapes):
    arrays = [r(*s) for s in shapes]
    parity(torch, lambda L, *xs: L.einsum(eq, *xs), *arrays, grad=tuple(range(len(arrays))), rtol=1e-4, atol=1e-5)


def test_einsum_list_operands_and_float64():
    a, b = r(2, 3, dtype=np.float64), r(3, dtype=np.float64)
    parity(torch, lambda L, x, y: L.einsum("ij,j->i", [x, y]), a, b, grad=(0, 1))


def test_einsum_noncontiguous_inputs():
    parity(torch, lambda L, x, y: L.einsum("ij,jk->ik", x.t(), y[:, ::2]), r(3, 2), r(3, 8), grad=(0, 1), rtol=1e-4, atol=1e-5)


ERRORS = [
    ("ij,jk", [(2, 3)], "fewer operands"),
    ("ij", [(2, 3), (3, 4)], "more operands"),
    ("ij,j1->ik", [(2, 3), (3, 4)], "invalid subscript given at index 4"),
    ("ijk,jk->ik", [(2, 3), (3, 4)], "does not match the number of dimensions"),
    ("ij,jk->iz", [(2, 3), (3, 4)], "output subscript z does not appear"),
    ("ij,jk->ii", [(2, 3), (3, 4)], "appears more than once in the output"),
    ("ij,ik->jk", [(2, 3), (3, 4)], "subscript i has size 3 for operand 1"),
    ("i...,j...->ij..", [(2, 3), (3, 4)], "found '.' for output"),
    ("ii", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match"),
]


@pytest.mark.parametrize("eq,shapes,msg", ERRORS)
def test_einsum_errors(eq, shapes, msg):
    got = errors_match(torch, lambda L, *xs: L.einsum(eq, *xs), *[r(*s) for s in shapes])
    assert msg in got


def test_einsum_gradcheck_and_double_backward():
    a = ft.randn(2, 3, dtype=ft.float64, requires_grad=True)
    b = ft.randn(3, 3, dtype=ft.float64, requires_grad=True)
    assert gradcheck(lambda x, y: ft.einsum("ij,jk->ik", x, y), a, b)
    assert gradcheck(lambda x, y: ft.einsum("ij,jj->i", x, y), a, b)
    assert gradcheck(lambda x, y: ft.einsum("ij,kj,jj->ik", x, x, y), a, b)
    y = (ft.einsum("ij,jk->ik", a, b) ** 2).sum()
    (g,) = ft.autograd.grad(y, b, create_graph=True)
    (gg,) = ft.autograd.grad(g.sum(), b)
    at = torch.from_numpy(a.detach().numpy())
    bt = torch.from_numpy(b.detach().numpy()).requires_grad_(True)
    yt = (torch.einsum("ij,jk->ik", at, bt) ** 2).sum()
    (gt,) = torch.autograd.grad(yt, bt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), bt)
    np.testing.assert_allclose(gg.numpy(), ggt.numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "sa,sb,dims",
    [((3, 4, 5), (4, 5, 6), 2), ((3, 4), (4, 5), 1), ((2, 3), (4,), 0), ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])), ((2, 3), (3, 2), [[1], [0]])],
)
def test_tensordot(sa, sb, dims):
    parity(torch, lambda L, a, b: L.tensordot(a, b, dims=dims), r(*sa), r(*sb), grad=(0, 1), rtol=1e-4, atol=1e-5)


def test_tensordot_errors():
    assert "contracted dimensions need to match" in errors_match(torch, lambda L, a, b: L.tensordot(a, b, ([0], [0])), r(2, 3), r(3, 2))


def test_outer_ger_vdot():
    parity(torch, lambda L, a, b: L.outer(a, b), r(3), r(4), grad=(0, 1))
    parity(torch, lambda L, a, b: a.ger(b), r(3), r(4), grad=(0, 1))
    parity(torch, lambda L, a, b: L.outer(a, b), np.arange(3), r(2))
    parity(torch, lambda L, a, b: L.vdot(a, b), r(5), r(5), grad=(0, 1), rtol=1e-5, atol=1e-5)
    errors_match(torch, lambda L, a, b: L.outer(a, b), r(2, 2), r(3))
    errors_match(torch, lambda L, a, b: L.vdot(a, b), r(3), r(3, dtype=np.float64))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmv_addbmm_baddbmm(beta, alpha):
    tol = dict(rtol=1e-4, atol=1e-5)
    parity(torch, lambda L, i, m, v: L.addmv(i, m, v, beta=beta, alpha=alpha), r(3), r(3, 4), r(4), grad=(0, 1, 2), **tol)
    parity(torch, lambda L, i, m, v: i.addmv(m, v, beta=beta, alpha=alpha), r(1), r(3, 4), r(4), **tol)
    parity(torch, lambda L, i, a, b: L.addbmm(i, a, b, beta=beta, alpha=alpha), r(2, 5), r(3, 2, 4), r(3, 4, 5), grad=(0, 1, 2), **tol)
    parity(torch, lambda L, i, a, b: L.baddbmm(i, a, b, beta=beta, alpha=alpha), r(3, 2, 5), r(3, 2, 4), r(3, 4, 5), grad=(0, 1, 2), **tol)
    parity(torch, lambda L, i, a, b: i.baddbmm(a, b, beta=beta, alpha=alpha), r(5), r(3, 2, 4), r(3, 4, 5), **tol)


def test_beta_zero_ignores_nan():
    nan = np.full(3, np.nan, np.float32)
    parity(torch, lambda L, i, m, v: L.addmv(i, m, v, beta=0), nan, r(3, 4), r(4), rtol=1e-4, atol=1e-5)


def test_trace():
    parity(torch, lambda L, a: L.trace(a), r(3, 4), grad=(0,))
