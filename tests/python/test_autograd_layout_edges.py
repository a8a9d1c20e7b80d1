"""Edges of autograd metadata and layouts, against PyTorch: views made before
their base required grad, the gradient layout contract of ``AccumulateGrad``,
and bool views of byte tensors."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(ft)


def test_view_made_before_base_requires_grad_has_no_history():
    def run(m):
        b = m.rand(3)
        v = b[0]
        w = b.view(3, 1)
        b.requires_grad_()
        y = v * 2
        y.backward()  # the view has no history and no accumulator: nothing reaches b
        return (v.grad_fn is None, v.is_leaf, v.requires_grad, w.grad_fn is None, w.is_leaf,
                y.requires_grad, type(y.grad_fn).__name__, b.grad is None, v.grad is None)
    ref, got = _both(run)
    assert got == ref


def test_view_history_regenerates_after_in_place_on_its_base():
    def run(m):
        a = m.rand(3)
        b = a * 1  # non-leaf, no grad
        v = b[:2]
        w = m.ones(3, requires_grad=True)
        b.mul_(w)  # b now has history; v's version moved
        return (type(v.grad_fn).__name__, v.is_leaf, v.requires_grad)
    ref, got = _both(run)
    assert got == ref


@pytest.mark.parametrize("make", [
    lambda m: m.rand(4, 3).t(),                                           # transposed
    lambda m: m.rand(2, 3, 4, 5).contiguous(memory_format=m.channels_last),  # channels last
    lambda m: m.rand(3, 4, 5).permute(2, 0, 1),                           # permuted
    lambda m: m.rand(4, 6)[:, ::2],                                        # non-dense: contiguous grad
    lambda m: m.rand(5, 1, 3).expand(5, 1, 3),                             # size-1 dims
    lambda m: m.rand(6),
])
def test_leaf_gradient_layout_contract(make):
    def run(m):
        m.manual_seed(0)
        x = make(m).detach().requires_grad_()
        (x * 2).sum().backward()
        y = make(m).detach().requires_grad_()
        (y.sin() * 3).sum().backward()
        return x.stride(), x.grad.stride(), y.grad.stride()
    ref, got = _both(run)
    assert got == ref


def test_leaf_gradient_values_unchanged_by_layout():
    x0 = torch.rand(4, 3, dtype=torch.float64)
    x = x0.t().detach().requires_grad_()
    f = ft.tensor(x0.tolist(), dtype=ft.float64).t().detach().requires_grad_()
    assert f.stride() == x.stride() == (1, 3)
    (x.cos() * x).sum().backward()
    (f.cos() * f).sum().backward()
    assert f.grad.stride() == x.grad.stride()
    np.testing.assert_allclose(np.array(f.grad.tolist()), x.grad.numpy(), rtol=1e-12)


def test_bool_view_of_zero_one_bytes_matches_pytorch():
    for dt in ("uint8", "int8"):
        u_t = torch.tensor([0, 1, 1, 0], dtype=getattr(torch, dt))
        u_f = ft.tensor([0, 1, 1, 0], dtype=getattr(ft, dt))
        b_t, b_f = u_t.view(torch.bool), u_f.view(ft.bool)
        assert b_f.tolist() == b_t.tolist()
        assert (~b_f).tolist() == (~b_t).tolist()
        assert b_f.sum().item() == b_t.sum().item()
        b_t[0] = True
        b_f[0] = True
        assert u_f.tolist() == u_t.tolist()  # a view: the write reaches the bytes


def test_bool_view_of_other_bytes_is_an_error_not_wrong_values():
    # PyTorch reads such bytes as True; ferrotorch's kernels read bool bytes as 0/1,
    # so it refuses the view rather than give wrong sums and negations.
    assert torch.tensor([0, 2], dtype=torch.uint8).view(torch.bool).tolist() == [False, True]
    for dt, vals in (("uint8", [0, 1, 2, 255]), ("int8", [0, 1, -1, 5])):
        u = ft.tensor(vals, dtype=getattr(ft, dt))
        with pytest.raises(RuntimeError, match=r"2 of the 4 elements .* bytes other than 0 and 1"):
            u.view(ft.bool)
    assert ft.tensor([3, 4], dtype=ft.uint8).view(ft.int8).tolist() == [3, 4]
    assert ft.empty(3, dtype=ft.uint8, device="meta").view(ft.bool).dtype == ft.bool
