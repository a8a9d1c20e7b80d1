"""Elementwise parity with PyTorch (fuzz classes of issue 15): integer pow
(PyTorch's powi), pow with a number exponent (its special kernels and the
exponent's conversion), pow/atan2/hypot_ gradients, operands cast to the
common dtype before opmath (add/sub alpha, mul, addcmul, addcdiv, lerp),
lerp's fused multiply-add, logit's eps conversion, float->uint8 and
float->bfloat16 NaN conversion, and error order (shapes before dtypes)."""

import math

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _run(lib, fn, grad_of=None):
    try:
        g = {}
        out = fn(lib, g)
        if grad_of is not None:
            (out.double() * 0.7).sum().backward()
            return "ok", out, g[grad_of].grad
        return "ok", out, None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, None, None


def _flat(t):
    return t.detach().double().reshape(-1).tolist()


def _close(a, b, rel):
    for x, y in zip(a, b):
        if math.isnan(y) or math.isinf(y):
            assert (math.isnan(x) and math.isnan(y)) or x == y, (a, b)
        else:
            assert x == pytest.approx(y, rel=rel, abs=rel * 1e-30), (a, b)


def same(fn, grad_of=None, rel=1e-6, signs=False):
    ours, theirs = _run(ft, fn, grad_of), _run(torch, fn, grad_of)
    assert ours[0] == theirs[0], (ours[0], theirs[0])
    if ours[0] != "ok":
        return
    a, b = ours[1], theirs[1]
    assert repr(a.dtype).split(".")[-1] == repr(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    if b.dtype.is_floating_point:
        _close(_flat(a), _flat(b), rel)
        if signs:
            sa = [math.copysign(1, v) for v in _flat(a)]
            sb = [math.copysign(1, v) for v in _flat(b)]
            assert sa == sb, (_flat(a), _flat(b))
    else:
        assert a.reshape(-1).tolist() == b.reshape(-1).tolist()
    if grad_of is not None:
        _close(_flat(ours[2]), _flat(theirs[2]), rel)


I64 = [-9223372036854775808, -9223372036854775807, -1, 0, 1, 2, 3, 63, 64, 65,
       9223372036854775806, 9223372036854775807, 6392085817187887001, -2439007596741610946]


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64"])
def test_integer_pow_wraps_over_the_whole_exponent(dt):
    base = [5, 3, -3, 2, -1, 1, 0, 6] if dt != "uint8" else [5, 3, 253, 2, 255, 1, 0, 6]
    same(lambda L, g: L.pow(L.tensor(base, dtype=getattr(L, dt)).reshape(-1, 1), L.tensor([I64])))
    same(lambda L, g: L.tensor(base, dtype=getattr(L, dt)) ** L.tensor(I64[:8]))


def test_integer_pow_in_place_and_reflected():
    def ip(L, g):
        t = L.tensor([[3632, 30751, -15353]], dtype=L.int16)
        t.pow_(L.tensor([[-2439007596741610946, 904909357268589219, -6148298425806268322]]))
        return t
    same(ip)

    def iop(L, g):
        t = L.tensor([[5, -3, 6, 6]], dtype=L.int8)
        t **= L.tensor([[-9223372036854775807, 1, 9223372036854775807, 9223372036854775806]])
        return t
    same(iop)
    same(lambda L, g: 3 ** L.tensor([[9223372036854775807]]))
    same(lambda L, g: 5 ** L.tensor(5984960189843037290))
    same(lambda L, g: -3 ** L.tensor([9223372036854775807, 63]))


@pytest.mark.parametrize("call", [
    lambda L: L.pow(L.tensor([True, False]), -3),
    lambda L: L.tensor([True, False]) ** -4,
    lambda L: L.pow(L.tensor([2, 3], dtype=L.int8), 300),
    lambda L: L.pow(L.tensor([2, 3], dtype=L.int8), 129),
    lambda L: L.pow(L.tensor([2.0, 3.0], dtype=L.float16), 1e6),
    lambda L: L.pow(L.tensor([2, 3], dtype=L.uint8), -2),
    lambda L: L.pow(L.tensor([True, False]), 2),
    lambda L: L.pow(L.tensor([True, False]), True),
    lambda L: L.pow(L.tensor([1.5, -2.0]), False),
])
def test_pow_number_exponent_checks_and_conversion(call):
    same(lambda L, g: call(L))


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("e", [0.5, -0.5, -1, 2, 3, -2, 2.3])
def test_pow_number_exponent_special_kernels(dt, e):
    vals = [-math.inf, -0.0, 0.0, 4.0, -2.0, math.inf, math.nan, 1e-30]
    same(lambda L, g: L.pow(L.tensor(vals, dtype=getattr(L, dt)), e), rel=1e-2 if dt in ("bfloat16", "float16") else 1e-6)


def test_pow_number_exponent_gradient_at_zero():
    def f(L, g):
        g["x"] = L.tensor([0.5, -0.0, 0.0, 0.99, -1e-40, 1e30]).requires_grad_()
        return L.pow(g["x"].clone(), 0.5)
    same(f, "x")

    def f2(L, g):
        g["x"] = L.tensor([0.5, -0.0, 0.0, 4.0]).requires_grad_()
        return L.pow(g["x"].clone(), -0.5)
    same(f2, "x")


def test_pow_exponent_gradient_overflows_as_pytorch():
    # grad * (result * log(base)): the product overflows before grad scales it.
    def f(L, g):
        g["e"] = L.tensor([[-3.0, 4.0, 4.0]]).requires_grad_()
        return L.tensor([[1902673957, 260620103, 2051055968]], dtype=L.int32) ** g["e"].clone()
    same(f, "e", rel=1e-4)

    def f2(L, g):
        g["e"] = L.tensor([[3.0], [4.0]]).requires_grad_()
        return L.pow(L.tensor([[-2147483647], [2147483646]], dtype=L.int32), g["e"].clone())
    same(f2, "e", rel=1e-4)

    def f3(L, g):
        g["e"] = L.tensor([-68419.6328125, 20.934206008911133, 1004.3556518554688]).requires_grad_()
        t = L.tensor([0.748046875, 3.439453125, 1.0390625], dtype=L.float16)
        t **= g["e"].clone()
        return t
    same(f3, "e", rel=1e-3)


@pytest.mark.parametrize("base", [True, False])
def test_bool_base_exponent_gradient_raises(base):
    def f(L, g):
        g["e"] = L.tensor([0.5, -2.0], dtype=L.float64).requires_grad_()
        return base ** g["e"].clone()
    same(f, "e")


def test_bool_pow_checks_shapes_before_dtype():
    def ip(L, g):
        t = L.tensor([True, False, True])
        t **= L.tensor([True, True])
        return t
    same(ip)
    same(lambda L, g: L.tensor([[True]] * 6).reshape(6, 1, 1) ** L.tensor([True] * 5).reshape(5, 1))
    same(lambda L, g: L.tensor([True, False]) ** L.tensor([True, True]))
    same(lambda L, g: L.addcmul(L.tensor([[True] * 4] * 3), L.tensor([[True] * 4] * 3), L.tensor([[True] * 4] * 5), value=3))
    same(lambda L, g: L.addcmul(L.tensor([True]), L.tensor([True]), L.tensor([False]), value=3))


def test_atan2_gradient_through_the_reciprocal():
    def f(L, g):
        g["a"] = L.tensor([1.2728965458695697e-20, 0.0, 0.0, 1.0, 1e-20]).requires_grad_()
        return L.atan2(g["a"].clone(), L.tensor([False, False, True, False, True]))
    same(f, "a")

    def f2(L, g):
        g["b"] = L.tensor([1e-20, 0.0, 0.0, 1.0, 3e38]).requires_grad_()
        return L.atan2(L.tensor([1e-20, 0.0, 1e-30, 0.0, 3e38]), g["b"].clone())
    same(f2, "b")


def test_hypot_inplace_gradient_sees_the_written_result():
    def f(L, g):
        g["b"] = L.tensor([-1.2219326268021146e+18, 3.0]).requires_grad_()
        t = L.tensor([-1.0, 4.0], dtype=L.float16)
        t.hypot_(g["b"].clone())
        return t
    same(f, "b", rel=1e-3)


def test_copysign_sees_bfloat16_nan_sign():
    def f(L, g):
        sign = L.tensor([float("nan"), 1.0, -1.0, 0.0]).to(L.bfloat16)
        return L.copysign(L.tensor([[6, 2, 5, 3]], dtype=L.uint8), sign), L.copysign(L.tensor([3.0]), sign)

    ours, theirs = f(ft, {}), f(torch, {})
    for a, b in zip(ours, theirs):
        assert [math.copysign(1, v) for v in _flat(a)] == [math.copysign(1, v) for v in _flat(b)]


@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_float_to_uint8_out_of_range(dt):
    vals = [-3077098913.0017257, 1301080007442552.2, 2147483653.0, 4294967303.0, 3e9, -1.5, 300.7, 1e20]
    same(lambda L, g: L.tensor(vals, dtype=getattr(L, dt)).byte())
    same(lambda L, g: L.tensor(vals, dtype=getattr(L, dt)).to(L.int8))


def test_operands_cast_to_common_dtype_before_opmath():
    same(lambda L, g: L.add(L.tensor(0.0, dtype=L.float16), L.tensor(-1515197632, dtype=L.int32), alpha=0))
    same(lambda L, g: L.add(L.tensor([-1560408469], dtype=L.int32), L.tensor([-0.0, math.inf], dtype=L.float16), alpha=0.063))
    same(lambda L, g: L.sub(L.tensor([math.inf, -math.inf, 0.0], dtype=L.float16), L.tensor([9223372036854775806]), alpha=5))
    same(lambda L, g: L.tensor([2.0, 0.0, -3.0, -2.0], dtype=L.float16) * L.tensor([9223372036854775807]).as_strided([4], [0]))
    same(lambda L, g: L.tensor([2.0, 0.0], dtype=L.float16) * L.tensor([9223372036854775807]))
    same(lambda L, g: L.addcdiv(L.tensor([0], dtype=L.uint8), L.tensor([-math.inf], dtype=L.float16),
                                L.tensor([2147483647], dtype=L.int32), value=-1.999))
    same(lambda L, g: L.addcdiv(L.tensor([[-4.0]], dtype=L.float16), L.tensor([[839275673]], dtype=L.int32),
                                L.tensor([-math.inf, -0.0, -920.5], dtype=L.float16), value=-1.593))
    same(lambda L, g: L.addcmul(L.tensor([[True]]), L.tensor([[2.0], [-4.0], [0.0]], dtype=L.float16),
                                L.tensor([[-1913393231, 653730452, 1235282098]], dtype=L.int32), value=-1))


@pytest.mark.parametrize("n", [1, 7, 17])
def test_lerp_fused_multiply_add(n):
    same(lambda L, g: L.lerp(L.tensor([[3.0]]), L.full((n,), 3.0000000054977558e+38), -0.951), rel=1e-5)
    same(lambda L, g: L.lerp(L.tensor([-1.0]), L.tensor([-0.0139, 3.0000000054977558e+38, math.inf, 0.0] * n),
                             L.tensor(-0.546875, dtype=L.float16)), rel=1e-5)
    same(lambda L, g: L.lerp(L.tensor([1.0, 2.0, -3.0] * n, dtype=L.bfloat16), L.tensor([5.0, -1.0, 3e38] * n, dtype=L.bfloat16), 0.3),
         rel=1e-2)
    same(lambda L, g: L.lerp(L.tensor([1.0, 2.0, -3.0] * n, dtype=L.float64), L.tensor([5.0, -1.0, 1e308] * n, dtype=L.float64),
                             L.tensor([0.3, 0.7, math.nan] * n, dtype=L.float64)))


def test_logit_eps_converted_to_the_tensor_dtype():
    def f(L, g):
        t = L.tensor([-1.568359375, 0.25, 1.5], dtype=L.float16)
        t.logit_(L.tensor(-4.4854355097888107e-17))
        return t
    same(f)

    def f2(L, g):
        t = L.tensor(-0.26416015625, dtype=L.float16)
        t.logit_(L.tensor(-4519617536.0))
        return t
    same(f2)

    def f3(L, g):
        g["x"] = L.tensor([-1.5, 0.25, 1.5], dtype=L.float16).requires_grad_()
        return L.logit(g["x"].clone(), -4.4854355097888107e-17)
    same(f3, "x", rel=1e-3)


def test_copysign_zero_dim_bfloat16_nan_from_float32():
    # PyTorch's 0-d float32 -> bfloat16 conversion keeps a positive NaN.
    def f(L, g):
        sign = L.tensor(float("nan")).to(L.bfloat16)
        return L.copysign(L.tensor(-1), sign), L.copysign(L.tensor([-1.0]), sign)

    ours, theirs = f(ft, {}), f(torch, {})
    for a, b in zip(ours, theirs):
        assert [math.copysign(1, v) for v in _flat(a)] == [math.copysign(1, v) for v in _flat(b)]
