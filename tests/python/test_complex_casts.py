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


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", ["complex64", "complex128"])
@pytest.mark.parametrize("view", ["contiguous", "transposed", "sliced", "expanded", "scalar"])
def test_real_to_complex_of_any_layout_matches_torch(src, dst, view):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((5, 6))

    def run(lib):
        x = lib.tensor(a, dtype=getattr(lib, src))
        x = {"contiguous": x, "transposed": x.t(), "sliced": x[1:, ::2], "expanded": x[:1].expand(4, 6),
             "scalar": x[2, 3]}[view]
        return x.to(getattr(lib, dst))

    f, t = run(ft), run(torch)
    assert f.dtype == getattr(ft, dst) and f.shape == t.shape and f.stride() == t.stride()
    np.testing.assert_array_equal(np.array(f.tolist()), t.numpy())


@pytest.mark.parametrize("op", ["neg_", "exp_", "sqrt_"])
def test_in_place_complex_unary_on_contiguous_memory_matches_torch(op):
    a = np.random.default_rng(3).standard_normal(37) + 1j * np.random.default_rng(4).standard_normal(37)
    f, t = ft.tensor(a, dtype=ft.complex128), torch.tensor(a, dtype=torch.complex128)
    getattr(f, op)()
    getattr(t, op)()
    np.testing.assert_allclose(np.array(f.tolist()), t.numpy(), rtol=1e-14, atol=1e-300)
