"""Complex dtypes (``complex64``/``complex128``) against PyTorch and NumPy:
dtype objects and promotion tables, creation and conversion, printing, the
part views (strides, offsets, sharing) and their errors, elementwise math,
reductions, matrix products, the meta device, and gradients in PyTorch's
conjugate-Wirtinger convention (values against torch, ``gradcheck``)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402

from _parity import dtype_name  # noqa: E402
from _parity import both as _both, complex_data as _cdata  # noqa: E402

REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
ALL = REAL + ["complex64", "complex128"]


def _np(x):
    return np.asarray(x.detach().resolve_conj().numpy())


def _same(f, t, rtol=1e-6, atol=1e-7):
    assert tuple(f.shape) == tuple(t.shape)
    assert dtype_name(f.dtype) == dtype_name(t.dtype), (f.dtype, t.dtype)
    np.testing.assert_allclose(_np(f), _np(t), rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("name", ["complex64", "complex128", "cfloat", "cdouble"])
def test_dtype_objects(name):
    d, t = getattr(ft, name), getattr(torch, name)
    assert repr(d) == repr(t) and str(d) == str(t)
    assert d.is_complex == t.is_complex
    assert d.is_floating_point == t.is_floating_point
    assert d.is_signed == t.is_signed
    assert d.itemsize == t.itemsize
    assert repr(d.to_real()) == repr(t.to_real())
    assert repr(d.to_complex()) == repr(t.to_complex())
    assert ft.complex64 is ft.cfloat and ft.complex128 is ft.cdouble


@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16", "int64", "bool"])
def test_to_complex_of_real_dtypes(name):
    d, t = getattr(ft, name), getattr(torch, name)
    try:
        want = repr(t.to_complex())
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)):
            d.to_complex()
    else:
        assert repr(d.to_complex()) == want
    assert repr(d.to_real()) == repr(t.to_real())


def test_promote_types_table():
    for a in ALL:
        for b in ALL:
            got = ft.promote_types(getattr(ft, a), getattr(ft, b))
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert repr(got) == repr(want), (a, b)


def test_can_cast_table():
    for a in ALL:
        for b in ALL:
            got = ft.can_cast(getattr(ft, a), getattr(ft, b))
            assert got == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


# float16 with a complex number is complex32 in PyTorch, which ferrotorch does not provide.
@pytest.mark.parametrize("name", [n for n in ALL if n != "float16"])
@pytest.mark.parametrize("other", [1j, "c64_0d", "c128_0d", "c128_1d"])
def test_result_type_with_complex_operands(name, other):
    def run(lib):
        x = lib.ones(3, dtype=getattr(lib, name))
        o = {
            "c64_0d": lambda: lib.tensor(1j, dtype=lib.complex64),
            "c128_0d": lambda: lib.tensor(1j, dtype=lib.complex128),
            "c128_1d": lambda: lib.ones(3, dtype=lib.complex128),
        }.get(other, lambda: other)()
        return lib.result_type(x, o), (x + o).dtype

    assert [repr(v) for v in run(ft)] == [repr(v) for v in run(torch)]


def test_python_complex_follows_default_dtype():
    for lib in (ft, torch):
        prev = lib.get_default_dtype()
        try:
            lib.set_default_dtype(lib.float64)
            assert repr(lib.tensor([1j]).dtype) == "torch.complex128"
            assert repr((lib.ones(2, dtype=lib.int32) + 1j).dtype) == "torch.complex128"
        finally:
            lib.set_default_dtype(prev)
    assert ft.tensor([1 + 2j, 3]).dtype is ft.complex64
    assert (ft.ones(2) + 1j).dtype is ft.complex64


# ---------------------------------------------------------------- creation


@pytest.mark.parametrize("data", [[1 + 2j, 3], [[1j, 2.5], [-1 - 1j, 0]], 2 - 3j, [True, 1j]])
def test_tensor_from_python_data(data):
    f, t = ft.tensor(data), torch.tensor(data)
    _same(f, t, 0, 0)
    assert f.tolist() == t.tolist()


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_factories(dt):
    for name in ("zeros", "ones"):
        _same(getattr(ft, name)(2, 3, dtype=getattr(ft, dt)), getattr(torch, name)(2, 3, dtype=getattr(torch, dt)), 0, 0)
    _same(ft.full((2,), 1 - 2j, dtype=getattr(ft, dt)), torch.full((2,), 1 - 2j, dtype=getattr(torch, dt)), 0, 0)
    _same(ft.full((2, 2), 1.5 + 1j), torch.full((2, 2), 1.5 + 1j), 0, 0)
    _same(ft.tensor([1, 2], dtype=getattr(ft, dt)), torch.tensor([1, 2], dtype=getattr(torch, dt)), 0, 0)
    e = ft.empty(4, dtype=getattr(ft, dt))
    assert e.dtype is getattr(ft, dt) and e.element_size() == torch.empty(4, dtype=getattr(torch, dt)).element_size()


def test_randn_has_unit_variance_split_between_parts():
    ft.manual_seed(0)
    z = ft.randn(200000, dtype=ft.cfloat)
    assert z.dtype is ft.complex64
    a = z.numpy()
    # PyTorch's convention: E|z|^2 = 1, each part N(0, 1/2).
    assert abs(np.mean(np.abs(a) ** 2) - 1) < 0.02
    assert abs(np.var(a.real) - 0.5) < 0.01 and abs(np.var(a.imag) - 0.5) < 0.01
    u = ft.rand(1000, dtype=ft.cdouble).numpy()
    assert (u.real >= 0).all() and (u.real < 1).all() and (u.imag >= 0).all() and (u.imag < 1).all()
    assert np.std(u.imag) > 0.2


@pytest.mark.parametrize("npdt", [np.complex64, np.complex128])
def test_numpy_round_trip_shares_memory(npdt):
    a = _cdata((3, 4), dtype=npdt)
    f = ft.from_numpy(a)
    assert repr(f.dtype) == repr(torch.from_numpy(a).dtype)
    a[0, 0] = 7 + 7j
    assert f[0, 0].item() == 7 + 7j
    back = f.numpy()
    assert back.dtype == npdt and np.shares_memory(back, a)
    np.testing.assert_array_equal(ft.as_tensor(a).numpy(), a)
    np.testing.assert_array_equal(np.asarray(ft.tensor(a)), a)


def test_item_tolist_and_python_conversions():
    f, t = _both(_cdata((2, 2)))
    assert f.tolist() == t.tolist()
    assert f[1, 0].item() == t[1, 0].item() and isinstance(f[1, 0].item(), complex)
    assert complex(f[0, 1]) == complex(t[0, 1])


@pytest.mark.parametrize("src", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("dst", ["complex64", "complex128"])
def test_casts_into_complex(src, dst):
    a = np.array([0.0, 1.5, -2.0, 3.25])
    f = ft.tensor(a).to(getattr(ft, src)).to(getattr(ft, dst))
    t = torch.tensor(a).to(getattr(torch, src)).to(getattr(torch, dst))
    _same(f, t, 0, 0)


@pytest.mark.parametrize("dst", ["float32", "float64", "int64", "bool", "float16"])
def test_casts_from_complex_drop_the_imaginary_part_with_a_warning(dst):
    a = np.array([0j, 1.5 - 2j, -2.7 + 0j, 1j])
    f, t = _both(a)
    for lib, x in ((ft, f), (torch, t)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = x.to(getattr(lib, dst))
        # PyTorch warns once per process (TORCH_WARN_ONCE); Python's filters decide here.
        assert lib is torch or any("Casting complex values to real discards the imaginary part" in str(m.message) for m in w)
        assert all(issubclass(m.category, UserWarning) for m in w)
        if lib is ft:
            rf = r
        else:
            rt = r
    _same(rf, rt, 0, 0)


def test_complex_and_polar():
    re, im = np.random.default_rng(1).standard_normal((2, 3, 4))
    fr, tr = _both(re)
    fi, ti = _both(im)
    _same(ft.complex(fr, fi), torch.complex(tr, ti), 0, 0)
    _same(ft.complex(fr.float(), fi.float()), torch.complex(tr.float(), ti.float()), 0, 0)
    _same(ft.complex(fr[:, :1], fi), torch.complex(tr[:, :1], ti), 0, 0)
    _same(ft.polar(fr.abs(), fi), torch.polar(tr.abs(), ti), 1e-12, 1e-14)
    for a, b in [(fr.long(), fi.long()), (fr, fi.float()), (fr[:2, :2], fi[:, :3])]:
        ta, tb = torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy())
        with pytest.raises(RuntimeError) as e_t:
            torch.complex(ta, tb)
        with pytest.raises(RuntimeError) as e_f:
            ft.complex(a, b)
        assert str(e_f.value) == str(e_t.value)


# ---------------------------------------------------------------- printing


@pytest.mark.parametrize("case", [
    lambda L: L.tensor([1 + 2j, -3.5 - 0.25j]),
    lambda L: L.tensor([[1e-5 + 1j, 2], [3j, 1e5]]),
    lambda L: L.tensor(2 - 1j),
    lambda L: L.tensor([1 + 1j, 2], dtype=L.complex128),
    lambda L: L.tensor([float("nan") + 1j, float("inf") - 2j]),
    lambda L: L.zeros(2, 3, dtype=L.cfloat),
    lambda L: L.arange(2000).to(L.complex64),
    lambda L: L.tensor([1 + 2j], requires_grad=True),
])
def test_repr_matches_torch(case):
    assert repr(case(ft)) == repr(case(torch))


# ---------------------------------------------------------------- views


def _layout(x):
    return tuple(x.shape), tuple(x.stride()), x.storage_offset(), repr(x.dtype)


@pytest.mark.parametrize("view", [
    lambda x: x,
    lambda x: x.t(),
    lambda x: x[1:, ::2],
    lambda x: x[:, 1],
])
def test_part_views_layouts_match_torch(view):
    a = _cdata((3, 4))
    f, t = _both(a)
    fv, tv = view(f), view(t)
    for op in (torch.view_as_real, lambda x: x.real, lambda x: x.imag):
        fo = {torch.view_as_real: ft.view_as_real}.get(op, op)
        assert _layout(fo(fv)) == _layout(op(tv))
        np.testing.assert_array_equal(_np(fo(fv)), _np(op(tv)))


def test_views_share_storage_and_write_through():
    f = ft.zeros(2, 3, dtype=ft.complex64)
    r = ft.view_as_real(f)
    r[0, 1, 1] = 5.0
    assert f[0, 1].item() == 5j
    f.real[1] = 2.0
    f.imag[1, 2] = -1.0
    t = torch.zeros(2, 3, dtype=torch.complex64)
    torch.view_as_real(t)[0, 1, 1] = 5.0
    t.real[1] = 2.0
    t.imag[1, 2] = -1.0
    _same(f, t, 0, 0)
    back = ft.view_as_complex(r)
    assert _layout(back) == _layout(f) and back._base is not None
    x = ft.tensor([1.0, 2.0])
    assert ft.real(x) is x and x.real is x


@pytest.mark.parametrize("make", [
    lambda L: L.randn(3, 3)[:, :2],
    lambda L: L.randn(3),
    lambda L: L.randn(4)[1:3].view(1, 2),
    lambda L: L.tensor(1.0),
    lambda L: L.randn(2, 4)[:, ::2],
    lambda L: L.ones(3, 2, dtype=L.long),
    lambda L: L.ones(3, 2, dtype=L.bfloat16),
])
def test_view_as_complex_errors(make):
    with pytest.raises(RuntimeError) as et:
        torch.view_as_complex(make(torch))
    with pytest.raises(RuntimeError) as ef:
        ft.view_as_complex(make(ft))
    assert str(ef.value) == str(et.value)


def test_part_errors():
    for fn in (lambda L, x: L.view_as_real(x), lambda L, x: x.imag):
        with pytest.raises(RuntimeError) as et:
            fn(torch, torch.ones(2))
        with pytest.raises(RuntimeError) as ef:
            fn(ft, ft.ones(2))
        assert str(ef.value) == str(et.value)


def test_view_as_copies_own_their_memory():
    f = ft.tensor([1 + 2j, 3 - 4j])
    r = ft.view_as_real_copy(f)
    assert r.data_ptr() != f.data_ptr()
    _same(r, torch.view_as_real_copy(torch.tensor([1 + 2j, 3 - 4j])), 0, 0)
    c = ft.view_as_complex_copy(r)
    _same(c, torch.tensor([1 + 2j, 3 - 4j]), 0, 0)


def test_conj():
    a = _cdata((2, 3))
    f, t = _both(a)
    _same(f.conj(), t.conj(), 0, 0)
    _same(ft.conj_physical(f), torch.conj_physical(t), 0, 0)
    _same(f.H, t.H.resolve_conj(), 0, 0)
    _same(f.mH, t.mH.resolve_conj(), 0, 0)
    _same(f.adjoint(), t.adjoint().resolve_conj(), 0, 0)
    assert f.conj().is_conj() and f.resolve_conj() is f  # the lazy bit: see test_conj_bit.py
    x = ft.ones(2)
    assert x.conj() is x and ft.conj_physical(x) is x
    g = f.clone()
    g.conj_physical_()
    _same(g, t.conj_physical(), 0, 0)
    _same(ft.isreal(ft.tensor([1 + 0j, 1j])), torch.isreal(torch.tensor([1 + 0j, 1j])), 0, 0)


# ---------------------------------------------------------------- math

UNARY = ["neg", "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal",
         "rsqrt", "log2", "log10", "log1p", "expm1", "asin", "acos", "atan", "asinh", "acosh", "atanh", "abs",
         "angle", "sgn", "isnan", "isfinite", "isinf"]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_match_torch(op, dt):
    a = _cdata((4, 5), seed=3, dtype=dt)
    a[0, :3] = [0, 1e-3j, -2.0]
    f, t = _both(a)
    tol = (2e-5, 2e-6) if dt == np.complex64 else (1e-12, 1e-14)
    _same(getattr(ft, op)(f), getattr(torch, op)(t), *tol)
    _same(getattr(f.t(), op)(), getattr(t.t(), op)(), *tol)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "ne"])
@pytest.mark.parametrize("other", ["complex", "real_tensor", "int_tensor", "py_complex", "py_float", "c64_0d"])
def test_binary_ops_match_torch(op, other):
    a = _cdata((3, 4), seed=4)
    b = _cdata((4,), seed=5)
    f, t = _both(a)

    def operand(lib):
        return {
            "complex": lambda: lib.from_numpy(b.copy()),
            "real_tensor": lambda: lib.from_numpy(b.real.astype(np.float32).copy()),
            "int_tensor": lambda: lib.tensor([1, 2, -3, 4]),
            "py_complex": lambda: 0.5 - 2j,
            "py_float": lambda: 1.5,
            "c64_0d": lambda: lib.tensor(2 + 1j, dtype=lib.complex64),
        }[other]()

    _same(getattr(ft, op)(f, operand(ft)), getattr(torch, op)(t, operand(torch)), 1e-12, 1e-12)
    _same(getattr(ft, op)(f.float() if False else f[:, :1], operand(ft)), getattr(torch, op)(t[:, :1], operand(torch)), 1e-12, 1e-12)


def test_operators_and_division_edge_cases():
    big = np.array([1e300 + 1e300j, 1e-300 + 2e-300j, 1 + 0j, 0j])
    den = np.array([1e300 - 1e300j, 3e-300 - 1e-300j, 0j, 0j])
    f1, t1 = _both(big)
    f2, t2 = _both(den)
    _same(f1 / f2, t1 / t2, 1e-14, 0)
    _same(-f1 + 2 * f2 - 1j, -t1 + 2 * t2 - 1j, 1e-14, 0)
    _same(1j * f1, 1j * t1, 1e-14, 0)
    _same(f1 == f1.clone(), t1 == t1.clone(), 0, 0)


def test_isclose_allclose_and_equal():
    a = _cdata((5,))
    f, t = _both(a)
    g = f + 1e-9j
    tg = t + 1e-9j
    _same(ft.isclose(f, g), torch.isclose(t, tg), 0, 0)
    assert ft.allclose(f, g) == torch.allclose(t, tg)
    assert ft.equal(f, f.clone()) and not ft.equal(f, g)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_reductions(dt):
    a = _cdata((3, 4, 5), seed=6, dtype=dt)
    f, t = _both(a)
    tol = (1e-5, 1e-6) if dt == np.complex64 else (1e-13, 1e-14)
    _same(f.sum(), t.sum(), *tol)
    _same(f.sum(1), t.sum(1), *tol)
    _same(f.sum((0, 2), keepdim=True), t.sum((0, 2), keepdim=True), *tol)
    _same(f.mean(), t.mean(), *tol)
    _same(f.mean(-1), t.mean(-1), *tol)
    _same(f.prod(1), t.prod(1), *tol)
    _same(f.transpose(0, 2).sum(0), t.transpose(0, 2).sum(0), *tol)
    _same(f.cumsum(1), t.cumsum(1), *tol)
    _same(f.prod(), t.prod(), *tol)
    _same(ft.ones(3, dtype=ft.int64).sum(dtype=ft.complex64), torch.ones(3, dtype=torch.int64).sum(dtype=torch.complex64))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_matrix_products(dt):
    a, b = _cdata((2, 3, 4), seed=7, dtype=dt), _cdata((2, 4, 5), seed=8, dtype=dt)
    (fa, ta), (fb, tb) = _both(a), _both(b)
    tol = (1e-5, 1e-5) if dt == np.complex64 else (1e-12, 1e-12)
    _same(fa @ fb, ta @ tb, *tol)
    _same(ft.bmm(fa, fb), torch.bmm(ta, tb), *tol)
    _same(ft.mm(fa[0], fb[1]), torch.mm(ta[0], tb[1]), *tol)
    _same(fa[0].t() @ fa[1], ta[0].t() @ ta[1], *tol)
    _same(ft.matmul(fa[0], fb[0, :, 0]), torch.matmul(ta[0], tb[0, :, 0]), *tol)
    np.testing.assert_allclose((fa @ fb).numpy(), a @ b, *tol)


def test_real_only_ops_raise_like_torch():
    f, t = _both(_cdata((4,)))
    for fn in (lambda x: x.max(), lambda x: x.argmax(), lambda x: x < x, lambda x: x.clamp(0, 1), lambda x: x.amax()):
        with pytest.raises(Exception) as et:
            fn(t)
        with pytest.raises(Exception) as ef:
            fn(f)
        assert type(ef.value).__name__ == type(et.value).__name__, (ef.value, et.value)


def test_meta_device():
    x = ft.empty(2, 3, dtype=ft.complex64, device="meta")
    tx = torch.empty(2, 3, dtype=torch.complex64, device="meta")
    for fn in (lambda L, v: v * v + 1j, lambda L, v: v.abs(), lambda L, v: L.view_as_real(v), lambda L, v: v.real,
               lambda L, v: v.sum(0), lambda L, v: v @ v.t()):
        a, b = fn(ft, x), fn(torch, tx)
        assert tuple(a.shape) == tuple(b.shape) and repr(a.dtype) == repr(b.dtype) and a.device.type == "meta"


# ---------------------------------------------------------------- autograd


def _grad_pair(fn, *arrays):
    """Gradients of ``fn(lib, *inputs)`` (a real scalar) w.r.t. every input, for both libraries."""
    out = []
    for lib in (ft, torch):
        xs = [lib.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
        fn(lib, *xs).backward()
        out.append([x.grad for x in xs])
    return out


GRAD_CASES = {
    "abs_of_product": lambda L, z, w: (z * w).abs().sum(),
    "sum_of_parts": lambda L, z, w: (z / w).real.sum() + 2 * (z - w).imag.sum(),
    "exp_log": lambda L, z, w: (z.exp() * w.log()).abs().sum(),
    "sqrt_tanh": lambda L, z, w: (z.sqrt() + w.tanh()).abs().pow(2).sum(),
    "trig": lambda L, z, w: (z.sin() * w.cos() + z.tan()).real.sum(),
    "angle": lambda L, z, w: (z * w).angle().sum(),
    "conj": lambda L, z, w: (z.conj() * w).imag.sum(),
    "view_as_real": lambda L, z, w: (L.view_as_real(z) ** 2).sum() + L.view_as_real(w)[..., 1].sum(),
    "matmul": lambda L, z, w: (z @ w.t()).abs().sum(),
    "mean_sum": lambda L, z, w: (z.mean(0) * w.sum(0)).real.sum(),
    "reciprocal_sigmoid": lambda L, z, w: (z.reciprocal() + w.sigmoid()).abs().sum(),
    "sgn": lambda L, z, w: (z.sgn() * w).real.sum(),
    "pow_scalar": lambda L, z, w: (z ** 2 + w ** 0.5).abs().sum(),
    "mixed_real": lambda L, z, w: (z * w.real + w.imag).abs().sum(),
}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients_match_torch(case):
    z, w = _cdata((3, 4), seed=10), _cdata((3, 4), seed=11)
    (gf, gt) = _grad_pair(GRAD_CASES[case], z, w)
    for a, b in zip(gf, gt):
        _same(a, b, 1e-10, 1e-12)


def test_gradient_of_real_input_through_complex_ops_is_real():
    r = np.random.default_rng(2).standard_normal((2, 3))
    i = np.random.default_rng(3).standard_normal((2, 3))
    fn = lambda L, a, b: (L.complex(a, b) * (1 + 2j)).exp().abs().sum() + L.polar(a.abs() + 1, b).real.sum()
    gf, gt = _grad_pair(fn, r, i)
    for a, b in zip(gf, gt):
        _same(a, b, 1e-10, 1e-12)


def test_grad_fn_names():
    for lib in (ft, torch):
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        r = lib.randn(2, 2, requires_grad=True)
        names = [type(v.grad_fn).__name__ for v in (
            lib.view_as_real(z), z.real, z.imag, z.conj(), lib.view_as_complex(r), z.abs(), z.angle(),
            lib.complex(r, r), lib.polar(r, r), z.conj_physical(), z * z, z.sum(),
        )]
        if lib is ft:
            got = names
        else:
            want = names
    assert got == want


@pytest.mark.parametrize("fn", [
    lambda z, w: z * w,
    lambda z, w: (z / w).exp(),
    lambda z, w: z.abs() + w.angle(),
    lambda z, w: ft.view_as_real(z * w.conj()),
    lambda z, w: (z @ w.t()).sqrt(),
    lambda z, w: z.sgn() * w.sin(),
    lambda z, w: (z.real * w).log(),
    lambda z, w: (z.sum(0) * w.mean(0)).reciprocal(),
])
def test_gradcheck_on_complex_inputs(fn):
    z = ft.from_numpy(_cdata((2, 3), seed=12)).requires_grad_(True)
    w = ft.from_numpy(_cdata((2, 3), seed=13)).requires_grad_(True)
    assert ft.autograd.gradcheck(fn, (z, w))


def test_backward_of_a_complex_scalar_needs_a_gradient():
    msgs = []
    for lib in (ft, torch):
        z = lib.tensor([1 + 2j], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            z.sum().backward()
        msgs.append(str(e.value))
        (z * z).sum().backward(lib.tensor(1 - 1j))
        assert z.grad.tolist() == [(2 - 4j) * (1 - 1j)]
    assert msgs[0] == msgs[1]


def test_gradcheck_detects_a_wrong_complex_gradient():
    class Bad(ft.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return 2 * g * z  # the conjugate is missing

    z = ft.from_numpy(_cdata((3,))).requires_grad_(True)
    assert not ft.autograd.gradcheck(Bad.apply, (z,), raise_exception=False)


# ---- var / std of complex tensors (real-valued, as PyTorch) ---------------------------------------


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("dim,correction,keepdim", [(None, 1, False), (1, 0, True), ((0, 1), 1, False), (0, 2, False)])
def test_var_std_of_complex(fn, dim, correction, keepdim):
    kw = {"correction": correction, "keepdim": keepdim}
    if dim is not None:
        kw["dim"] = dim
    for dt in (np.complex64, np.complex128):
        f, t = _both(_cdata((3, 4), 30, dt))
        tol = 1e-5 if dt == np.complex64 else 1e-12
        _same(getattr(f, fn)(**kw), getattr(t, fn)(**kw), tol, tol)
        # through a conjugate view too: the same values
        _same(getattr(f.conj(), fn)(**kw), getattr(t.conj(), fn)(**kw), tol, tol)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_var_mean_std_mean_of_complex(fn):
    f, t = _both(_cdata((3, 4), 31))
    for a, b in zip(getattr(ft, fn)(f, 1), getattr(torch, fn)(t, 1)):
        _same(a, b, 1e-12, 1e-12)


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_var_std_gradients_of_complex(fn):
    grads, names = [], []
    for lib, z in zip((ft, torch), _both(_cdata((3, 4), 32))):
        z.requires_grad_(True)
        out = getattr(lib, fn)(z, 1)
        out = out if isinstance(out, tuple) else (out,)
        names.append(type(out[0].grad_fn).__name__)
        loss = (out[0] * lib.arange(3.0, dtype=lib.float64)).sum()
        if len(out) > 1:
            loss = loss + (out[1] * (1 - 2j)).real.sum()
        loss.backward()
        grads.append(z.grad)
    assert names[0] == names[1]
    _same(grads[0], grads[1], 1e-10, 1e-12)
    z = ft.from_numpy(_cdata((2, 3), 33)).requires_grad_(True)
    assert ft.autograd.gradcheck(lambda x: getattr(ft, fn)(x, 0), (z,))
