"""Elementwise ops against PyTorch: values, result dtypes, NaN/inf, integer
wrap-around, empty and 0-d tensors, non-contiguous inputs, broadcasting,
in-place and out= forms, error types, and gradients (gradcheck in float64 and
torch's gradients)."""

import math

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch import _math_ops as fm

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")
F = torch.nn.functional

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
ALL = FLOATS + INTS + ["bool"]

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 0.3, -0.7, 3.7, -6.2, 10.0, 100.0, float("nan"), float("inf"), -float("inf")]


def make(values, dtype, shape=None):
    """The same tensor in both libraries (built from float64 values)."""
    a = np.asarray(values, dtype=np.float64)
    if shape is not None:
        a = a.reshape(shape)
    out = []
    for lib in (ft, torch):
        t = lib.from_numpy(a.copy())
        out.append(t.to(getattr(lib, dtype)))
    return out


def np_of(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def tol(dtype):
    return {"float16": (2e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (2e-6, 1e-6), "float64": (1e-11, 1e-12)}.get(dtype, (0, 0))


def same(a, b, rtol=None, atol=None):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"dtype {a.dtype} != {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} != {tuple(b.shape)}"
    x, y = np_of(a), np_of(b)
    if x.dtype.kind == "f":
        r, t = tol(str(b.dtype).split(".")[-1])
        np.testing.assert_allclose(x, y, rtol=rtol if rtol is not None else r, atol=atol if atol is not None else t, equal_nan=True)
    else:
        np.testing.assert_array_equal(x, y)


def both(fn_ft, fn_t, *pairs, rtol=None, atol=None):
    """Runs both; either both raise the same exception type or results match."""
    err = None
    try:
        expected = fn_t(*[p[1] for p in pairs])
    except Exception as e:  # noqa: BLE001 - comparing exception types
        err = e
    if err is not None:
        with pytest.raises(type(err)):
            fn_ft(*[p[0] for p in pairs])
        return None
    got = fn_ft(*[p[0] for p in pairs])
    if isinstance(expected, tuple):
        for g, e in zip(got, expected):
            same(g, e, rtol, atol)
    else:
        same(got, expected, rtol, atol)
    return got


def values_for(dtype):
    if dtype == "bool":
        return [0, 1, 1, 0, 1, 0]
    if dtype == "uint8":
        return [0, 1, 2, 7, 100, 255]
    if dtype in INTS:
        return [0, 1, -1, 7, -100, 127, -128, 3]
    return SPECIAL


UNARY = [
    "neg", "abs", "sign", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv",
    "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square", "relu", "logical_not", "bitwise_not", "isnan",
    "isinf", "isfinite", "nan_to_num", "logit",
]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name, dtype):
    p = make(values_for(dtype), dtype)
    both(getattr(ft, name), getattr(torch, name), p)


ACTS = {
    "relu6": {}, "hardtanh": {"min_val": -0.5, "max_val": 2.0}, "leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 1.5},
    "selu": {}, "celu": {"alpha": 0.7}, "gelu": {}, "silu": {}, "mish": {}, "softplus": {"beta": 2.0, "threshold": 5.0},
    "softsign": {}, "hardsigmoid": {}, "hardswish": {}, "logsigmoid": {},
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_matches_torch(name, dtype):
    p = make(values_for(dtype), dtype)
    kw = ACTS[name]
    ref = lambda x: getattr(F, name)(x, **kw)  # noqa: E731
    if name == "gelu" and dtype in ("float32", "float16", "bfloat16"):
        # torch's reduced-precision gelu depends on the CPU it runs on: its
        # AVX-512 kernel returns NaN for gelu(+inf) (its vectorised erf), its
        # AVX2 kernel inf. Compare against torch's float64 gelu, rounded.
        ref = lambda x: F.gelu(x.double(), **kw).to(x.dtype)  # noqa: E731
    both(lambda x: getattr(fm, name)(x, **kw), ref, p)


def test_gelu_tanh_and_round_decimals_and_logit_eps():
    p = make(np.linspace(-4, 4, 33), "float64")
    both(lambda x: fm.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), p)
    q = make([1234.5678, -0.125, 2.675, 0.5, 1.5, -2.5], "float64")
    for d in (0, 1, 2, -1, -2):
        both(lambda x: ft.round(x, decimals=d), lambda x: torch.round(x, decimals=d), q)
    r = make([0.0, 1e-4, 0.3, 0.9999, 1.0, -0.5, 1.5], "float32")
    both(lambda x: ft.logit(x, 1e-3), lambda x: torch.logit(x, 1e-3), r)
    both(lambda x: ft.nan_to_num(x, 1.0, 2.0, -3.0), lambda x: torch.nan_to_num(x, 1.0, 2.0, -3.0), make(SPECIAL, "float32"))


def test_unary_methods_inplace_and_out():
    p = make([[0.1, -2.0, 3.0], [4.0, -0.5, 0.0]], "float32")
    for name in ("exp", "sin", "floor", "sigmoid", "abs", "neg", "log1p", "erf"):
        a, b = p[0].clone(), p[1].clone()
        same(getattr(a, name + "_")(), getattr(b, name + "_")())
        same(a, b)
        same(getattr(p[0], name)(), getattr(p[1], name)())
        oa, ob = ft.empty(2, 3), torch.empty(2, 3)
        getattr(ft, name)(p[0], out=oa)
        getattr(torch, name)(p[1], out=ob)
        same(oa, ob)
    # in-place result type must fit: int tensor .sqrt_() fails in both
    with pytest.raises(RuntimeError):
        torch.tensor([4]).sqrt_()
    with pytest.raises(RuntimeError):
        ft.tensor([4]).sqrt_()


def test_unary_noncontiguous_empty_and_zero_dim():
    base = np.arange(24, dtype=np.float64).reshape(4, 6) / 7 - 1.5
    for lib_t in [(ft.from_numpy(base.copy()), torch.from_numpy(base.copy()))]:
        a, b = lib_t
        same(a.t().tanh(), b.t().tanh())
        same(a[:, ::2].exp2(), b[:, ::2].exp2())
        same(a[1:3, 1:].expand(2, 2, 5).erf(), b[1:3, 1:].expand(2, 2, 5).erf())
    same(ft.empty(0, 3).sin(), torch.empty(0, 3).sin())
    same(ft.tensor(0.25).atanh(), torch.tensor(0.25).atanh())
    same(ft.tensor(3).sign(), torch.tensor(3).sign())


BINARY = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "atan2", "maximum", "minimum", "fmax",
    "fmin", "hypot", "logaddexp", "copysign", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
]


def binary_values(dtype):
    if dtype == "bool":
        return [0, 1, 1, 0, 1, 0], [1, 1, 0, 0, 1, 1]
    if dtype == "uint8":
        return [0, 1, 200, 7, 100, 255], [3, 1, 2, 5, 9, 7]
    if dtype in INTS:
        return [0, 1, -1, 7, -100, 127, -128, 3], [3, -2, 5, -3, 7, 1, 2, 4]
    a = [0.0, 1.0, -1.0, 5.5, -7.25, 2.0, float("nan"), float("inf"), -float("inf"), 3.0, -0.0, 1e-3]
    b = [3.0, -2.0, 0.5, 2.0, 3.0, 0.0, 1.0, 2.0, float("inf"), float("nan"), -1.0, -0.0]
    return a, b


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_torch(name, dtype):
    a, b = binary_values(dtype)
    if "shift" in name and dtype in INTS:
        b = [abs(v) % 9 for v in b]
    pa, pb = make(a, dtype), make(b, dtype)
    both(getattr(ft, name), getattr(torch, name), pa, pb)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "atan2", "maximum", "fmax", "copysign", "bitwise_and", "logaddexp", "hypot", "lt"])
@pytest.mark.parametrize("combo", [("int32", "float32"), ("uint8", "int8"), ("float16", "bfloat16"), ("int64", "float64"), ("bool", "int16")])
def test_binary_promotion(name, combo):
    a, _ = binary_values("int32")
    b = [3, 2, 5, 3, 7, 1, 2, 4]
    if combo[0] == "bool" or combo[0] == "uint8":
        a = [abs(v) % 2 if combo[0] == "bool" else abs(v) for v in a]
    both(getattr(ft, name), getattr(torch, name), make(a, combo[0]), make(b, combo[1]))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "atan2", "fmax", "copysign", "bitwise_and", "bitwise_left_shift", "logical_or", "add", "div", "ge"])
@pytest.mark.parametrize("scalar", [2, -3, 2.5, True])
@pytest.mark.parametrize("dtype", ["int32", "float32", "uint8", "float16"])
def test_binary_with_python_scalar(name, scalar, dtype):
    a, _ = binary_values(dtype)
    p = make(a, dtype)
    both(lambda x: getattr(ft, name)(x, scalar), lambda x: getattr(torch, name)(x, scalar), p)


def test_binary_zero_dim_broadcast_noncontiguous_empty():
    a = np.arange(12, dtype=np.float64).reshape(3, 4) - 5.5
    b = np.array([[2.0], [-3.0], [0.5]])
    fa, ta = ft.from_numpy(a.copy()), torch.from_numpy(a.copy())
    fb, tb = ft.from_numpy(b.copy()), torch.from_numpy(b.copy())
    for name in ("remainder", "atan2", "hypot", "fmod", "logaddexp", "floor_divide"):
        same(getattr(ft, name)(fa, fb), getattr(torch, name)(ta, tb))
        same(getattr(ft, name)(fa.t(), fb[:, 0][:, None].t()), getattr(torch, name)(ta.t(), tb[:, 0][:, None].t()))
        same(getattr(ft, name)(fa, ft.tensor(2.0)), getattr(torch, name)(ta, torch.tensor(2.0)))
        same(getattr(ft, name)(ft.empty(0, 4), fa[:1]), getattr(torch, name)(torch.empty(0, 4), ta[:1]))
    # 0-d double does not promote a float32 tensor
    same(ft.atan2(fa.float(), ft.tensor(2.0, dtype=ft.float64)), torch.atan2(ta.float(), torch.tensor(2.0, dtype=torch.float64)))
    with pytest.raises(RuntimeError):
        ft.remainder(fa, ft.ones(4, 3))


def test_integer_overflow_wraps_and_zero_division():
    a = make([127, -128, 100], "int8")
    b = make([1, -1, 100], "int8")
    both(ft.add, torch.add, a, b)
    both(ft.mul, torch.mul, a, b)
    both(lambda x: x * 3, lambda x: x * 3, a)
    both(lambda x, y: x << y, lambda x, y: x << y, make([1, 64, -1], "int8"), make([7, 1, 3], "int8"))
    both(lambda x: x >> 9, lambda x: x >> 9, make([-128, 64, -1], "int8"))
    for name in ("floor_divide", "remainder", "fmod"):
        both(getattr(ft, name), getattr(torch, name), make([5, -7], "int64"), make([0, 2], "int64"))
    both(lambda x, y: x.div(y, rounding_mode="trunc"), lambda x, y: x.div(y, rounding_mode="trunc"), make([7, -7, 9], "int32"), make([2, 2, -4], "int32"))
    both(lambda x, y: x.div(y, rounding_mode="floor"), lambda x, y: x.div(y, rounding_mode="floor"), make([7.5, -7.0, 1.0, -1.0], "float32"), make([2.0, 2.0, 0.0, 0.0], "float32"))
    with pytest.raises(ValueError):
        ft.tensor([1.0]).div(2, rounding_mode="round")


def test_operators_and_inplace_binary():
    pa = make([5, -7, 3, 12], "int32")
    pb = make([2, 3, -2, 5], "int32")
    for op in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y,
               lambda x, y: x >> (y.abs()), lambda x, y: x << (y.abs()), lambda x, y: ~x, lambda x, y: 7 // x,
               lambda x, y: 7 % x, lambda x, y: 6 & x, lambda x, y: x % 2.5, lambda x, y: -7.5 // y):
        both(op, op, pa, pb)
    for name in ("remainder_", "fmod_", "bitwise_and_", "floor_divide_", "logical_or_", "eq_", "lt_"):
        a, b = pa[0].clone(), pa[1].clone()
        if hasattr(a, name):
            getattr(a, name)(pb[0])
            getattr(b, name)(pb[1])
            same(a, b)
    a, b = pa[0].clone(), pa[1].clone()
    a //= 2
    b //= 2
    a %= 3
    b %= 3
    a &= 6
    b &= 6
    same(a, b)
    with pytest.raises(RuntimeError):
        x = ft.tensor([1, 2])
        x.atan2_(ft.tensor([1, 1]))  # float result into an int tensor


def test_clamp_variants():
    p = make([[-3.0, 0.5, float("nan")], [2.0, 7.0, -0.25]], "float32")
    lo, hi = make([[0.0], [1.0]], "float32"), make([1.0, 5.0, 0.0], "float32")
    both(lambda x: x.clamp(0, 1), lambda x: x.clamp(0, 1), p)
    both(lambda x: x.clamp(min=0.1), lambda x: x.clamp(min=0.1), p)
    both(lambda x: x.clamp(max=0.1), lambda x: x.clamp(max=0.1), p)
    both(lambda x: x.clip(2, 1), lambda x: x.clip(2, 1), p)
    both(lambda x, a, b: torch_or_ft(x).clamp(x, a, b), lambda x, a, b: torch.clamp(x, a, b), p, lo, hi)
    both(lambda x, a: ft.clamp(x, min=a), lambda x, a: torch.clamp(x, min=a), p, lo)
    both(lambda x: ft.clamp_min(x, 0.0), lambda x: torch.clamp_min(x, 0.0), p)
    both(lambda x: x.clamp(0.5), lambda x: x.clamp(0.5), make([1, -2, 3], "int32"))
    both(lambda x: x.clamp(-1, 2), lambda x: x.clamp(-1, 2), make([1, -2, 3], "int64"))
    a, b = p[0].clone(), p[1].clone()
    a.clamp_(0, 1)
    b.clamp_(0, 1)
    same(a, b)
    with pytest.raises(RuntimeError):
        ft.tensor([1.0]).clamp()


def torch_or_ft(x):
    return ft if isinstance(x, ft.Tensor) else torch


def test_lerp_addcmul_addcdiv():
    s, e, w = make([0.0, 1.0, -2.0, 4.0], "float32"), make([1.0, 3.0, 2.0, -4.0], "float32"), make([0.2, 0.7, 0.5, 1.0], "float32")
    both(lambda a, b: a.lerp(b, 0.3), lambda a, b: a.lerp(b, 0.3), s, e)
    both(lambda a, b: a.lerp(b, 0.8), lambda a, b: a.lerp(b, 0.8), s, e)
    both(lambda a, b, c: a.lerp(b, c), lambda a, b, c: a.lerp(b, c), s, e, w)
    both(lambda a, b, c: torch_or_ft(a).addcmul(a, b, c, value=0.5), lambda a, b, c: torch.addcmul(a, b, c, value=0.5), s, e, w)
    both(lambda a, b, c: torch_or_ft(a).addcdiv(a, b, c, value=-2), lambda a, b, c: torch.addcdiv(a, b, c, value=-2), s, e, w)
    both(lambda a, b, c: a.addcmul(b, c), lambda a, b, c: a.addcmul(b, c), make([1, 2], "int32"), make([3, 4], "int32"), make([5, 6], "int32"))
    both(lambda a, b, c: a.addcdiv(b, c), lambda a, b, c: a.addcdiv(b, c), make([1, 2], "int32"), make([3, 4], "int32"), make([5, 6], "int32"))
    a, b = s[0].clone(), s[1].clone()
    a.addcmul_(e[0], w[0], value=2)
    b.addcmul_(e[1], w[1], value=2)
    same(a, b)


def test_isclose_allclose_equal():
    a = make([1.0, 1.0 + 1e-9, float("nan"), float("inf"), 0.0, 2.0], "float64")
    b = make([1.0, 1.0, float("nan"), float("inf"), 1e-9, 2.1], "float64")
    both(ft.isclose, torch.isclose, a, b)
    both(lambda x, y: ft.isclose(x, y, equal_nan=True), lambda x, y: torch.isclose(x, y, equal_nan=True), a, b)
    both(lambda x, y: ft.isclose(x, y, rtol=0.1, atol=0.0), lambda x, y: torch.isclose(x, y, rtol=0.1, atol=0.0), a, b)
    assert ft.allclose(a[0][:2], b[0][:2]) == torch.allclose(a[1][:2], b[1][:2])
    assert ft.allclose(a[0], b[0]) == torch.allclose(a[1], b[1])
    assert ft.equal(a[0][:2], a[0][:2]) and not ft.equal(a[0], b[0])
    both(ft.isclose, torch.isclose, make([1, 2, 3], "int32"), make([1, 3, 3], "int32"))


# ----- gradients ---------------------------------------------------------------------

GRAD_UNARY = {
    "sign": (-2, 2), "sqrt": (0.2, 3), "rsqrt": (0.2, 3), "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log": (0.2, 3),
    "log2": (0.2, 3), "log10": (0.2, 3), "log1p": (-0.5, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1, 1), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2), "asinh": (-3, 3), "acosh": (1.2, 3),
    "atanh": (-0.9, 0.9), "sigmoid": (-3, 3), "erf": (-2, 2), "erfc": (-2, 2), "erfinv": (-0.9, 0.9), "floor": (-3, 3),
    "ceil": (-3, 3), "round": (-3, 3), "trunc": (-3, 3), "frac": (-3, 3), "reciprocal": (0.3, 3), "square": (-2, 2),
    "relu": (-2, 2), "abs": (-2, 2), "neg": (-2, 2), "logit": (0.1, 0.9), "nan_to_num": (-2, 2),
}


def avoid_kinks(x):
    """Values away from the non-differentiable points of piecewise ops."""
    return np.where(np.abs(x - np.round(x)) < 0.1, x + 0.25, x)


@pytest.mark.parametrize("name", sorted(GRAD_UNARY))
def test_unary_gradients(name):
    lo, hi = GRAD_UNARY[name]
    rng = np.random.default_rng(len(name))
    x = avoid_kinks(rng.uniform(lo, hi, size=(2, 3)))
    x = np.clip(x, lo, hi)
    fx = ft.from_numpy(x.copy()).requires_grad_()
    assert ft.autograd.gradcheck(getattr(ft, name), (fx,))
    tx = torch.from_numpy(x.copy()).requires_grad_()
    fy, ty = getattr(ft, name)(fx), getattr(torch, name)(tx)
    assert fy.grad_fn.name() == ty.grad_fn.name()
    up = rng.standard_normal((2, 3))
    (fy * ft.from_numpy(up.copy())).sum().backward()
    (ty * torch.from_numpy(up.copy())).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


ACT_GRADS = ["relu6", "hardtanh", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign",
             "hardsigmoid", "hardswish", "logsigmoid"]


@pytest.mark.parametrize("name", ACT_GRADS)
def test_activation_gradients(name):
    rng = np.random.default_rng(7)
    x = rng.uniform(-5, 7, size=(3, 4))
    x = np.where(np.abs(x) < 0.1, 0.3, x)
    for k in (-3.0, 3.0, 6.0, -1.0, 1.0, -0.5, 2.0):
        x = np.where(np.abs(x - k) < 0.05, k + 0.2, x)
    kw = ACTS[name]
    fx = ft.from_numpy(x.copy()).requires_grad_()
    assert ft.autograd.gradcheck(lambda t: getattr(fm, name)(t, **kw), (fx,))
    tx = torch.from_numpy(x.copy()).requires_grad_()
    fy, ty = getattr(fm, name)(fx, **kw), getattr(F, name)(tx, **kw)
    assert fy.grad_fn.name() == ty.grad_fn.name()
    fy.sum().backward()
    ty.sum().backward()
    # PyTorch keeps some constants (1/6, 1/alpha) in float32 even for double tensors.
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-12)


GRAD_BINARY = ["remainder", "fmod", "atan2", "fmax", "fmin", "hypot", "logaddexp", "copysign", "maximum", "minimum", "floor_divide_div"]


@pytest.mark.parametrize("name", GRAD_BINARY)
def test_binary_gradients(name):
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 3, size=(2, 3))
    b = rng.uniform(0.5, 2, size=(3,)) * np.array([1, -1, 1])
    if name in ("remainder", "fmod"):
        a = np.where(np.abs(np.remainder(a, b) ) < 0.1, a + 0.3, a)
    fa, fb = ft.from_numpy(a.copy()).requires_grad_(), ft.from_numpy(b.copy()).requires_grad_()
    ta, tb = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(b.copy()).requires_grad_()
    if name == "floor_divide_div":
        fn_f = lambda x, y: x.div(y, rounding_mode="floor")  # noqa: E731
        fn_t = fn_f
    else:
        fn_f, fn_t = getattr(ft, name), getattr(torch, name)
    if name != "floor_divide_div":
        assert ft.autograd.gradcheck(fn_f, (fa, fb))
    fy, ty = fn_f(fa, fb), fn_t(ta, tb)
    assert fy.grad_fn.name() == ty.grad_fn.name()
    (fy * fy).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    # scalar other
    fa2, ta2 = ft.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    if name not in ("floor_divide_div", "maximum", "minimum", "fmax", "fmin", "hypot", "logaddexp", "atan2"):
        fy, ty = fn_f(fa2, 1.5), fn_t(ta2, 1.5)
        assert fy.grad_fn.name() == ty.grad_fn.name()
        fy.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(fa2.grad.numpy(), ta2.grad.numpy(), rtol=1e-10)


def test_ternary_gradients():
    rng = np.random.default_rng(11)
    a, b, c = (rng.uniform(0.5, 2, size=(2, 3)) for _ in range(3))
    lo, hi = rng.uniform(0.4, 1.0, size=(1, 3)), rng.uniform(1.2, 1.8, size=(2, 1))
    cases = [
        (lambda lib, x, y, z: lib.lerp(x, y, 0.3), "LerpBackward0"),
        (lambda lib, x, y, z: lib.lerp(x, y, z), "LerpBackward1"),
        (lambda lib, x, y, z: lib.addcmul(x, y, z, value=0.7), "AddcmulBackward0"),
        (lambda lib, x, y, z: lib.addcdiv(x, y, z, value=-1.3), "AddcdivBackward0"),
        (lambda lib, x, y, z: x.clamp(0.8, 1.5), "ClampBackward1"),
        (lambda lib, x, y, z: x.clamp(min=0.8), "ClampBackward1"),
        (lambda lib, x, y, z: lib.clamp(x, y * 0 + lib.from_numpy(lo.copy()), z * 0 + lib.from_numpy(hi.copy())), "ClampBackward0"),
    ]
    for fn, gname in cases:
        fi = [ft.from_numpy(v.copy()).requires_grad_() for v in (a, b, c)]
        ti = [torch.from_numpy(v.copy()).requires_grad_() for v in (a, b, c)]
        assert ft.autograd.gradcheck(lambda x, y, z: fn(ft, x, y, z), tuple(fi))
        fy, ty = fn(ft, *fi), fn(torch, *ti)
        assert fy.grad_fn.name() == gname == ty.grad_fn.name()
        same(fy, ty)
        (fy * fy).sum().backward()
        (ty * ty).sum().backward()
        for f, t in zip(fi, ti):
            if t.grad is None:
                assert f.grad is None or not f.grad.numpy().any()
            else:
                np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_double_backward_through_unary():
    x = ft.tensor([0.3, -1.2, 2.0], dtype=ft.float64, requires_grad=True)
    assert ft.autograd.gradgradcheck(lambda t: t.sin() * t.exp2() + ft.atan(t), (x,))
    assert ft.autograd.gradgradcheck(lambda t: fm.gelu(t) + fm.silu(t), (x,))


def test_integer_and_bool_outputs_never_require_grad():
    x = ft.tensor([0.5, -1.0], requires_grad=True)
    for r in (x.isnan(), x > 0, ft.logical_and(x, x), x.sign().bool(), x.floor().long()):
        assert not r.requires_grad
    assert x.floor().requires_grad


def test_inplace_on_tensor_requiring_grad_records_history():
    x = ft.tensor([0.5, -1.0, 2.0], dtype=ft.float64, requires_grad=True)
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y, ty = x * 2, tx * 2
    y.sin_()
    ty.sin_()
    y.clamp_(-0.5, 0.9)
    ty.clamp_(-0.5, 0.9)
    assert y.grad_fn.name() == ty.grad_fn.name()
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError):
        x.exp_()


def test_out_with_wrong_dtype_raises():
    with pytest.raises(RuntimeError):
        ft.sin(ft.tensor([1.0]), out=ft.empty(1, dtype=ft.int64))
    with pytest.raises(RuntimeError):
        torch.sin(torch.tensor([1.0]), out=torch.empty(1, dtype=torch.int64))


def test_errors_name_values():
    with pytest.raises(RuntimeError, match="size"):
        ft.atan2(ft.ones(2, 3), ft.ones(4))
    with pytest.raises(NotImplementedError, match="Long"):
        ft.frac(ft.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="Float"):
        ft.bitwise_and(ft.tensor([1.0]), ft.tensor([2.0]))
    assert math.isnan(ft.tensor(float("nan")).sign().item()) is False


# ----- property tests: broadcasting and strides against PyTorch -----------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def broadcast_pair(draw):
    nd = draw(st.integers(0, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(nd)]
    other = [s if draw(st.booleans()) else 1 for s in shape]
    drop = draw(st.integers(0, nd))
    return tuple(shape), tuple(other[drop:])


@settings(max_examples=60, deadline=None)
@given(broadcast_pair(), st.sampled_from(["remainder", "atan2", "fmax", "hypot", "copysign", "floor_divide", "logaddexp", "bitwise_xor"]),
       st.sampled_from(["float32", "float64", "int32"]), st.booleans())
def test_binary_broadcasting_property(shapes, name, dtype, transpose):
    sa, sb = shapes
    rng = np.random.default_rng(0)
    a = np.round(rng.standard_normal(sa) * 5, 1)
    b = np.round(rng.standard_normal(sb) * 5, 1)
    if dtype == "int32" or name in ("floor_divide", "remainder"):
        b = np.where(b == 0, 1.5, b)
    pa, pb = make(a, dtype), make(b, dtype)
    if transpose and len(sa) >= 2:
        pa = [t.transpose(0, 1).contiguous().transpose(0, 1) for t in pa]
    if name == "bitwise_xor" and dtype != "int32":
        return
    if dtype == "int32":
        pb = [t.abs() + 1 for t in pb]
    both(getattr(ft, name), getattr(torch, name), pa, pb)
