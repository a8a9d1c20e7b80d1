"""Regression tests for the numeric classes of issue 15, each against PyTorch:
scalar arguments converted to the kernel's dtype (PyTorch's ``Scalar::to<T>()``),
float16/bfloat16 computing in float32, special values of unary math, integer
``scatter_reduce('mean')`` beyond 2^53."""

import math

import pytest

import ferrotorch as ft
from _parity import results

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _np(x):
    if x.dtype == ft.bfloat16:
        return torch.tensor(x.float().tolist()).bfloat16()
    return torch.tensor(x.tolist(), dtype=getattr(torch, str(x.dtype).split(".")[-1]))


def _run(fn):
    """(result, None) or (None, exception class name) for torch, then ferrotorch."""
    return results(torch, fn)


def assert_same(fn, exact=True, rtol=0.0):
    (a, ea), (b, eb) = _run(fn)
    assert ea == eb, f"torch raised {ea}, ferrotorch raised {eb}"
    if ea is not None:
        return
    assert str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1]
    assert tuple(b.shape) == tuple(a.shape)
    bt = _np(b)
    if exact and a.dtype.is_floating_point:
        # within a rounding step (PyTorch fuses multiply-adds)
        rtol = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 2e-7, torch.float64: 1e-15}[a.dtype]
        exact = False
    if exact:
        assert torch.equal(bt, a), (a, b)
    else:
        ad = a.double()
        scale = ad[ad.isfinite()].abs().max().item() if ad.isfinite().any() else 0.0
        torch.testing.assert_close(bt.double(), ad, rtol=rtol, atol=2 * rtol * scale, equal_nan=True)


# ----- scalar arguments take the kernel's dtype -----------------------------------------------

SCALARS = [1.864, -1.531, 0.5, 2, True]


@pytest.mark.parametrize("dt", INTS + ["bool"] + FLOATS)
@pytest.mark.parametrize("v", SCALARS)
def test_addcmul_addcdiv_value(dt, v):
    def t(m, x):
        return m.tensor(x, dtype=getattr(m, dt))

    assert_same(lambda m: m.addcmul(t(m, [3, 4, 0]), t(m, [2, 3, 1]), t(m, [5, 1, 1]), value=v))
    if dt not in INTS and dt != "bool":
        assert_same(lambda m: m.addcdiv(t(m, [3, 4, 0]), t(m, [2, 3, 1]), t(m, [5, 1, 3]), value=v))


@pytest.mark.parametrize("dt", INTS + ["bool"] + FLOATS)
@pytest.mark.parametrize("v", SCALARS + [1])
def test_add_sub_alpha(dt, v):
    # float alpha with integer results and bool alpha with non-bool ones raise, as PyTorch
    def t(m, x):
        return m.tensor(x, dtype=getattr(m, dt))

    assert_same(lambda m: m.add(t(m, [3, 4]), t(m, [2, 3]), alpha=v))
    assert_same(lambda m: m.sub(t(m, [3, 4]), t(m, [2, 1]), alpha=v))
    assert_same(lambda m: m.add(t(m, [3, 4]), 3, alpha=v))
    assert_same(lambda m: t(m, [3, 4]).add_(t(m, [2, 3]), alpha=v))
    assert_same(lambda m: m.rsub(t(m, [3, 4]), t(m, [2, 7]), alpha=v))


@pytest.mark.parametrize("dt", INTS + FLOATS)
@pytest.mark.parametrize("v", SCALARS)
def test_index_add_alpha_and_threshold(dt, v):
    def t(m, x):
        return m.tensor(x, dtype=getattr(m, dt))

    assert_same(lambda m: t(m, [0, 0, 1]).index_add(0, m.tensor([0, 1]), t(m, [5, 7]), alpha=v))
    assert_same(lambda m: m.nn.functional.threshold(t(m, [0, 1, 2, 3]), v, 7.9))
    assert_same(lambda m: m.nn.functional.threshold(t(m, [0, 1, 2, 3]), -0.5, v))


@pytest.mark.parametrize("dt", INTS + FLOATS)
@pytest.mark.parametrize("v", SCALARS)
def test_addmm_addmv_baddbmm_scalars(dt, v):
    def t(m, x):
        return m.tensor(x, dtype=getattr(m, dt))

    mat = [[1, 2], [3, 4]]
    assert_same(lambda m: m.addmm(t(m, mat), t(m, mat), t(m, mat), beta=v, alpha=v), exact=False, rtol=1e-2)
    assert_same(lambda m: m.addmv(t(m, [1, 2]), t(m, mat), t(m, [1, 2]), beta=v, alpha=v), exact=False, rtol=1e-2)
    assert_same(lambda m: m.baddbmm(t(m, [mat]), t(m, [mat]), t(m, [mat]), beta=v, alpha=v), exact=False, rtol=1e-2)


@pytest.mark.parametrize("fn", [
    lambda m: m.full((2,), -1.5, dtype=m.uint8),
    lambda m: m.zeros(3, dtype=m.uint8).fill_(-0.5),
    lambda m: m.zeros(3, dtype=m.uint8).masked_fill(m.tensor([True, False, True]), -1.531),
    lambda m: m.zeros(3, dtype=m.int64).masked_fill(m.tensor([True, False, True]), 1e30),
    lambda m: m.zeros(3, dtype=m.float16).masked_fill(m.tensor([True, False, True]), 1e30),
    lambda m: m.add(m.tensor([1], dtype=m.int8), m.tensor([1], dtype=m.int8), alpha=1000),
    lambda m: m.add(m.tensor([1.0], dtype=m.float16), m.tensor([1.0], dtype=m.float16), alpha=1e6),
    lambda m: m.addcmul(m.tensor([1], dtype=m.int8), m.tensor([1], dtype=m.int8), m.tensor([1], dtype=m.int8),
                        value=300.5),
    lambda m: m.zeros(2, dtype=m.int32).index_add(0, m.tensor([0]), m.tensor([3], dtype=m.int32), alpha=1e20),
    lambda m: m.nn.functional.threshold(m.tensor([1, 2], dtype=m.int8), 1000, 2),
])
def test_scalar_overflow_errors(fn):
    assert_same(fn)


def test_threshold_bool_not_implemented():
    with pytest.raises(NotImplementedError):
        torch.nn.functional.threshold(torch.tensor([True]), 0.5, 1)
    with pytest.raises(NotImplementedError):
        ft.nn.functional.threshold(ft.tensor([True]), 0.5, 1)


# ----- float16/bfloat16 compute in float32 ----------------------------------------------------


def _data(seed, shape, scale, shift):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).tolist()


REDUCED_CASES = {
    "mean": lambda m, x: x.mean(),
    "mean_dim": lambda m, x: x.mean(1),
    "mse_loss": lambda m, x: m.nn.functional.mse_loss(x, m.zeros_like(x)),
    "l1_loss": lambda m, x: m.nn.functional.l1_loss(x, m.zeros_like(x)),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (50,)),
    "layer_norm_affine": lambda m, x: m.nn.functional.layer_norm(
        x, (50,), m.ones(50, dtype=x.dtype) * 1.5, m.ones(50, dtype=x.dtype) * 0.25),
    "group_norm": lambda m, x: m.nn.functional.group_norm(x.reshape(4, 16, 50), 4),
    "rms_norm": lambda m, x: m.nn.functional.rms_norm(x, (50,)),
    "linear_3d": lambda m, x: m.nn.functional.linear(x.reshape(2, 32, 50), x[:7], x[0, :7]),
    "addmm": lambda m, x: m.addmm(x[0, :7], x[:, :10], x[:7, :10].T, beta=0.5, alpha=1.5),
    "lerp": lambda m, x: m.lerp(x, x * 2, 0.3),
}


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("scale,shift", [(1.0, 0.0), (200.0, 300.0)])
@pytest.mark.parametrize("case", sorted(REDUCED_CASES))
def test_reduced_precision_computes_in_float32(dt, scale, shift, case):
    vals = _data(0, (64, 50), scale, shift)
    fn = REDUCED_CASES[case]
    (a, ea), (b, eb) = _run(lambda m: fn(m, m.tensor(vals, dtype=getattr(m, dt))))
    assert ea is None and eb is None, (ea, eb)
    bt = _np(b).double()
    assert torch.isfinite(bt).all() == torch.isfinite(a.double()).all()
    # one rounding step apart at most (PyTorch's own accumulation order differs)
    ulp = 2.0 ** (-10 if dt == "float16" else -7)
    torch.testing.assert_close(bt, a.double(), rtol=ulp, atol=1e-3)


def test_mean_float16_does_not_overflow():
    # 1000 * 100.0 overflows a float16 sum; PyTorch sums in float32
    for m in (torch, ft):
        r = m.full((1000,), 100.0, dtype=m.float16).mean()
        assert r.item() == 100.0
    a = torch.nn.functional.mse_loss(torch.full((1000,), 10.0, dtype=torch.float16), torch.zeros(1000, dtype=torch.float16))
    b = ft.nn.functional.mse_loss(ft.full((1000,), 10.0, dtype=ft.float16), ft.zeros(1000, dtype=ft.float16))
    assert a.item() == b.item() == 100.0


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
def test_add_alpha_scales_in_the_common_dtype(dt):
    # add(f64, f16, alpha=) must not round alpha * other through float16
    x, y = _data(1, (20, 30), 3.0, 0.0), _data(2, (20, 30), 3.0, 0.0)
    assert_same(lambda m: m.add(m.tensor(x, dtype=m.float64), m.tensor(y, dtype=getattr(m, dt)), alpha=1.1))
    assert_same(lambda m: m.sub(m.tensor(x, dtype=m.float64), m.tensor(y, dtype=getattr(m, dt)), alpha=0.3))


def test_add_alpha_float16_rounds_once():
    # 576 elements: PyTorch's vectorised path only (its scalar tail rounds twice)
    x, y = _data(1, (576,), 3.0, 0.0), _data(2, (576,), 3.0, 0.0)
    assert_same(lambda m: m.add(m.tensor(x, dtype=m.float16), m.tensor(y, dtype=m.float16), alpha=1.1))


def test_lerp_float64_keeps_weight_precision():
    x, y = _data(3, (100,), 3.0, 0.0), _data(4, (100,), 3.0, 0.0)
    assert_same(lambda m: m.lerp(m.tensor(x, dtype=m.float64), m.tensor(y, dtype=m.float64), 0.7), exact=False,
                rtol=1e-13)


# ----- special values of unary math ----------------------------------------------------------

SPECIAL = [0.0, -0.0, 1e-30, 1e-8, 0.5, 1.0, 2.0, 20.0, 89.0, 1e10, 1e30, 3e38, 1e300, math.inf, math.nan]
SPECIAL = SPECIAL + [-v for v in SPECIAL]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh", "log1p", "expm1", "sinh", "cosh", "tanh", "exp",
                                  "log", "sqrt", "atan"])
def test_unary_special_values(dt, name):
    a = getattr(torch, name)(torch.tensor(SPECIAL, dtype=getattr(torch, dt))).double().tolist()
    b = getattr(ft, name)(ft.tensor(SPECIAL, dtype=getattr(ft, dt))).double().tolist()
    for v, x, y in zip(SPECIAL, a, b):
        if math.isnan(x):
            assert math.isnan(y), (v, x, y)
            continue
        assert math.copysign(1, x) == math.copysign(1, y), (v, x, y)
        assert y == pytest.approx(x, rel=1e-2 if dt in ("float16", "bfloat16") else 1e-6, abs=1e-300), (v, x, y)


def test_asinh_near_float32_max_is_finite():
    for m in (torch, ft):
        r = m.asinh(m.tensor([3e38, -3e38]))
        assert r.tolist() == pytest.approx([89.29, -89.29], rel=1e-4)


# ----- integers beyond 2^53 -------------------------------------------------------------------


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_mean_integers(dt, include_self):
    big = {"int64": 2 ** 60, "int32": 2 ** 30}.get(dt, 100)
    src = [big + 1, big + 3, big + 4, -big - 7, 5, -3, 7, 2] if dt not in ("uint8",) else [200, 201, 203, 3, 5, 4, 7, 2]
    idx = [0, 0, 1, 1, 1, 2, 2, 2]
    self_ = [big, 3, -big] if dt != "uint8" else [100, 3, 7]
    assert_same(lambda m: m.tensor(self_, dtype=getattr(m, dt)).scatter_reduce(
        0, m.tensor(idx), m.tensor(src, dtype=getattr(m, dt)), "mean", include_self=include_self))


def test_scatter_reduce_mean_floors_negative_integers():
    assert_same(lambda m: m.zeros(2, dtype=m.int64).scatter_reduce(
        0, m.tensor([0, 0, 0, 1, 1, 1]), m.tensor([-3, -4, 0, 3, 4, 0]), "mean", include_self=False))


# ----- out= -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("fn", [
    lambda m, o: m.arange(3, out=o),
    lambda m, o: m.arange(0.5, 3.5, out=o),
    lambda m, o: m.full((3,), 2, out=o),
    lambda m, o: m.zeros(3, out=o),
    lambda m, o: m.ones(3, out=o),
    lambda m, o: m.linspace(0, 1, 3, out=o),
])
def test_factory_out_is_written(dt, fn):
    # factories used to ignore out= (arange(3, out=o) left o unchanged); PyTorch fills it in its dtype
    def run(m):
        o = m.full((3,), 7, dtype=getattr(m, dt))
        r = fn(m, o)
        assert r is o or m is ft and r.shape == (3,)
        return o

    assert_same(run)


@pytest.mark.parametrize("dt", ["int64", "float64", "float16"])
@pytest.mark.parametrize("fn", [
    lambda m, o: m.sum(m.ones(3, 2) * 1.5, 0, out=o),
    lambda m, o: m.prod(m.ones(3, 2) * 1.5, 0, out=o),
    lambda m, o: m.mean(m.ones(3, 2) * 1.5, 0, out=o),
])
def test_reduction_out_dtype_is_the_compute_dtype(dt, fn):
    def run(m):
        o = m.zeros(2, dtype=getattr(m, dt))
        fn(m, o)
        return o

    assert_same(run)


def test_out_dtype_that_cannot_hold_the_result_raises():
    for m in (torch, ft):
        with pytest.raises(RuntimeError):
            m.add(m.ones(3), m.ones(3), out=m.zeros(3, dtype=m.int64))
        with pytest.raises(RuntimeError):
            m.sqrt(m.ones(3), out=m.zeros(3, dtype=m.bool))


def _out_case(m, fn, out):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(m, out)
    assert r is out
    msgs = [str(x.message) for x in w if issubclass(x.category, UserWarning) and "resized" in str(x.message)]
    return out, msgs


@pytest.mark.parametrize("fn", [
    lambda m, o: m.add(m.ones(3), m.ones(3), out=o),
    lambda m, o: m.sum(m.ones(3, 2), 1, out=o),
    lambda m, o: m.sqrt(m.ones(3), out=o),
    lambda m, o: m.arange(3, out=o),
    lambda m, o: m.cat([m.ones(2), m.ones(1)], out=o),
    lambda m, o: m.mul(m.ones(0), 2, out=o),
])
@pytest.mark.parametrize("shape", [(2,), (5,), (0,), (2, 3), (3,)])
def test_out_of_another_shape_is_resized_with_pytorch_warning(fn, shape):
    a, wa = _out_case(torch, fn, torch.zeros(shape))
    b, wb = _out_case(ft, fn, ft.zeros(shape))
    assert tuple(b.shape) == tuple(a.shape) and b.is_contiguous() == a.is_contiguous()
    assert b.tolist() == a.tolist()
    assert len(wb) == len(wa)
    if wa and "An output with one or more elements" in wa[0]:  # (arange words its own warning)
        assert wb[0].split(" (Triggered")[0] == wa[0].split(" (Triggered")[0]


def test_out_view_is_resized_in_place_and_resize_method():
    for m in (torch, ft):
        base = m.zeros(2, 3)
        o = base[:, 1]
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.mul(m.ones(4), 2, out=o)
        assert o.tolist() == [2.0] * 4 and o.stride() == (1,)
        t = m.arange(6.0)
        t.resize_(2, 2)
        assert t.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        t.resize_(8)
        assert t[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        with pytest.raises(RuntimeError):
            m.add(m.ones(3), 1, out=m.zeros(2, requires_grad=True))
