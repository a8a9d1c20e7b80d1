"""``Tensor.cfloat()``/``Tensor.cdouble()`` against PyTorch: dtype, values, strides, identity, autograd."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("method", ["cfloat", "cdouble"])
@pytest.mark.parametrize("src", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
def test_complex_cast_methods_match_torch(method, src):
    a = np.arange(-3, 3).reshape(2, 3)
    f = ft.from_numpy(a).to(getattr(ft, src)).t()
    t = torch.from_numpy(a).to(getattr(torch, src)).t()
    fr, tr = getattr(f, method)(), getattr(t, method)()
    assert str(fr.dtype) == str(tr.dtype)
    assert fr.stride() == tr.stride()
    assert fr.tolist() == tr.tolist()
    # Already of the target dtype: the tensor itself, as `to` returns it.
    assert (fr is f) == (tr is t)
    fc = getattr(f, method)(memory_format=ft.contiguous_format)
    tc = getattr(t, method)(memory_format=torch.contiguous_format)
    assert fc.stride() == tc.stride() and fc.is_contiguous() == tc.is_contiguous()


def test_complex_cast_records_to_copy_and_passes_real_gradients_back():
    x = ft.tensor([1.0, -2.0, 3.0], dtype=ft.float64, requires_grad=True)
    y = x.cdouble()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y.conj()).real.sum().backward()
    tx = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    ty = tx.cdouble()
    (ty * ty.conj()).real.sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
