"""Regression tests for the gradient classes of the 10k-case fuzz run, against PyTorch:

* elu family at NaN (PyTorch's `x <= 0` picks the negative branch, NaN is positive);
* acosh below 1 and at 1 (`g * (x^2 - 1).rsqrt()`);
* div's `other` gradient without `b * b` (`-g * ((a / b) / b)`);
* maximum/minimum/fmax/fmin at ties, NaN and infinite gradients;
* remainder/fmod's `other` gradient through the rounding division (inf // b is NaN);
* pow with a Python bool exponent;
* amax/amin over a NaN slice (NaN gradient), max()/min() over all;
* var/std with no degrees of freedom left;
* clamp with tensor min and max (`min < max` / `max < min` terms);
* hardswish at NaN (vectorized kernel vs scalar tail);
* in-place elu/celu with a negative alpha raising in backward.

Values, dtypes and shapes are compared, and the gradients of a random-weighted
sum in float64 (float32 where the class is about it)."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

F64 = "float64"
nan, inf = float("nan"), float("inf")


def arr(v, dtype=F64):
    return np.array(v, dtype=dtype)


def F(lib):
    return lib.nn.functional


def check(fn, *arrays, grad=(0,), rtol=1e-7, atol=1e-9):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, fn, *arrays, grad=grad, rtol=rtol, atol=atol)


CASES = [
    # 1. elu family at NaN
    ("selu_nan", lambda L, x: F(L).selu(x), [arr([nan, -1.0, 0.0, 2.0])], (0,)),
    ("elu_nan", lambda L, x: F(L).elu(x, 0.5), [arr([nan, -1.0, 0.0, 2.0])], (0,)),
    ("celu_nan", lambda L, x: F(L).celu(x, 2.0), [arr([nan, -1.0, 0.0, 2.0])], (0,)),
    ("selu_nan_f32", lambda L, x: F(L).selu(x), [arr(nan, "float32")], (0,)),
    # 2. acosh
    ("acosh_below_1", lambda L, x: L.acosh(x), [arr([2.0, -1.0, 3.0, 1.0, -3.0, 0.5, 1e200])], (0,)),
    ("arccosh_method", lambda L, x: x.arccosh(), [arr([[-2.0]])], (0,)),
    # 3. div's other
    ("div_other_tiny", lambda L, a, b: L.div(a, b), [arr([0.0, 1.0, -3.0, 2.0]), arr([1e-200, 1e-170, 1e200, 0.0])], (0, 1)),
    ("div_other_mode_none", lambda L, a, b: L.div(a, b, rounding_mode=None), [arr([3.0, 4.0, 1.0]), arr([1e-160, -1e-200, 2.0])], (0, 1)),
    ("div_other_f32", lambda L, a, b: a / b, [arr([3.0, 4.0, 0.0], "float32"), arr([1e-20, -1e-25, 1e-30], "float32")], (1,)),
    ("rdiv_scalar", lambda L, b: 2.0 / b, [arr([1e-200, 3.0])], (0,)),
    # 4. maximum/minimum/fmax/fmin
    ("maximum_ties_nan", lambda L, a, b: L.maximum(a, b), [arr([1.0, 2.0, nan, 1.0, 0.0]), arr([1.0, 1.0, 1.0, nan, 3.0])], (0, 1)),
    ("minimum_ties_nan", lambda L, a, b: L.minimum(a, b), [arr([1.0, 2.0, nan, 1.0, 0.0]), arr([1.0, 1.0, 1.0, nan, 3.0])], (0, 1)),
    ("maximum_broadcast", lambda L, a, b: L.maximum(a, b), [arr([[2.0, 3.0, -4.0], [1.0, 2.0, 4.0]]), arr([[2.0], [nan]])], (0, 1)),
    ("max_binary", lambda L, a, b: L.max(a, b), [arr([1.0, 2.0, nan]), arr([1.0, 3.0, 0.0])], (0, 1)),
    ("min_binary", lambda L, a, b: L.min(a, b), [arr([1.0, 2.0, nan]), arr([1.0, 3.0, 0.0])], (0, 1)),
    ("fmax_nan", lambda L, a, b: L.fmax(a, b), [arr([1.0, 2.0, nan, 1.0, nan]), arr([1.0, 3.0, 1.0, nan, nan])], (0, 1)),
    ("fmin_nan", lambda L, a, b: L.fmin(a, b), [arr([1.0, 2.0, nan, 1.0, nan]), arr([1.0, 3.0, 1.0, nan, nan])], (0, 1)),
    # 5. remainder/fmod other
    ("remainder_other_inf", lambda L, a, b: L.remainder(a, b), [arr([-0.43, 2.0, inf, -inf, nan, 5.0]), arr([-3.0])], (1,)),
    ("fmod_other_inf", lambda L, a, b: L.fmod(a, b), [arr([-0.43, 2.0, inf, -inf, 5.0]), arr([-3.0])], (1,)),
    # 7. amax/amin
    ("amax_nan_slice", lambda L, x: L.amax(x, dim=1), [arr([[1.0, nan, 3.0], [2.0, 2.0, 1.0]])], (0,)),
    ("amin_nan_slice", lambda L, x: L.amin(x, dim=(0, 1), keepdim=True), [arr([[1.0, nan], [0.0, 1.0]])], (0,)),
    ("amax_all_nan", lambda L, x: L.amax(x), [arr([1.0, nan, 3.0])], (0,)),
    ("amax_ties", lambda L, x: x.amax(-1), [arr([[3.0, 3.0, 1.0], [0.0, -1.0, 0.0]])], (0,)),
    ("max_all_nan", lambda L, x: x.max(), [arr([1.0, nan, 3.0, nan])], (0,)),
    ("max_dim_nan", lambda L, x: x.max(1)[0], [arr([[1.0, nan, 3.0], [2.0, 2.0, 1.0]])], (0,)),
    # 8. var/std without degrees of freedom
    ("var_0d_corr2", lambda L, x: L.var(x, dim=None, correction=2, keepdim=True), [arr(-4.0)], (0,)),
    ("var_0d_corr2_f32", lambda L, x: L.var(x, dim=None, correction=2, keepdim=True), [arr(-4.0, "float32")], (0,)),
    ("var_all_dof0", lambda L, x: L.var(x, correction=3), [arr([0.0, 1.0, 2.0])], (0,)),
    ("var_all_dof_neg", lambda L, x: L.var(x, correction=5), [arr([1.0, 3.0, 7.0])], (0,)),
    ("var_1_elem", lambda L, x: x.var(), [arr([5.0])], (0,)),
    ("var_dim_dof0", lambda L, x: L.var(x, dim=1, correction=3), [arr([[1.0, 3.0, 7.0], [2.0, 2.0, 5.0]])], (0,)),
    ("var_dim_dof_neg", lambda L, x: L.var(x, dim=1, correction=4), [arr([[1.0, 3.0, 7.0], [2.0, 2.0, 5.0]])], (0,)),
    ("std_all_dof0", lambda L, x: L.std(x, correction=2), [arr([3.0, 1.0])], (0,)),
    ("std_all_dof_neg", lambda L, x: L.std(x, correction=3), [arr([3.0, 1.0])], (0,)),
    ("std_dim_dof0", lambda L, x: L.std(x, dim=1, correction=3), [arr([[1.0, 3.0, 7.0], [2.0, 2.0, 5.0]])], (0,)),
    ("std_dim_dof_neg", lambda L, x: L.std(x, dim=1, correction=4), [arr([[1.0, 3.0, 7.0], [2.0, 2.0, 5.0]])], (0,)),
    ("var_mean_all_dof_neg", lambda L, x: L.var_mean(x, correction=6)[0], [arr([[1.0, 3.0, 7.0], [2.0, 2.0, 5.0]])], (0,)),
    ("std_mean_all_dof0", lambda L, x: L.std_mean(x, correction=2)[0], [arr([3.0, 1.0])], (0,)),
    # 9. clamp with tensor bounds
    ("clamp_t_min_gt_max", lambda L, x, lo, hi: L.clamp(x, min=lo, max=hi),
     [arr([[2.0, -1.0, 1.0, 1.0]]), arr([[3.0, -4.0, -3.0, -4.0], [0.0, 0.0, 0.0, 0.0]]), arr([[-16999.0], [5443.0]])], (0, 1, 2)),
    ("clamp_t_ties", lambda L, x, lo, hi: L.clamp(x, min=lo, max=hi),
     [arr([0.0, 1.0, 0.5, 2.0, -1.0, 5.0]), arr([0.0, 0.0, 0.0, 3.0, 0.0, 1.0]), arr([1.0, 1.0, 1.0, 1.0, 0.0, 1.0])], (0, 1, 2)),
    ("clamp_t_min_only", lambda L, x, lo: L.clamp(x, min=lo), [arr([0.0, 1.0, -2.0]), arr([0.0, 0.0, 0.0])], (0, 1)),
    ("clamp_t_max_only", lambda L, x, hi: L.clamp(x, max=hi), [arr([0.0, 1.0, -2.0]), arr([0.0, 0.0, 0.0])], (0, 1)),
]


@pytest.mark.parametrize("fn,arrays,grad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fuzz_gradient_classes(fn, arrays, grad):
    check(fn, *arrays, grad=grad)


def test_clamp_tensor_bounds_expanded_int_max():
    # The fuzz reproducer: an expanded min that requires grad, an int16 max.
    def fn(L, x, lo):
        hi = L.tensor([[-16999], [5443], [-14551], [24071]], dtype=L.int16).expand(4, 4)
        return L.clamp(x, min=lo.expand(4, 4), max=hi)

    check(fn, arr([[2.0, -1.0, 1.0, 1.0]], "float32"), arr([[3.0, -4.0, -3.0, -4.0]], "float32"), grad=(1,), rtol=1e-6, atol=1e-6)


def test_clamp_infinite_gradient_is_masked():
    for lib in (ft, torch):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        lo = lib.tensor([0.0, 0.0, 0.0], dtype=lib.float64, requires_grad=True)
        hi = lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64, requires_grad=True)
        lib.clamp(x, lo, hi).backward(lib.tensor([inf, inf, inf], dtype=lib.float64))
        assert x.grad.tolist() == [0.0, inf, 0.0]
        assert lo.grad.tolist() == [inf, 0.0, 0.0]
        assert hi.grad.tolist() == [0.0, 0.0, inf]


def test_maximum_infinite_gradient_is_masked():
    out = []
    for lib in (ft, torch):
        a = lib.tensor([1.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        lib.maximum(a, b).backward(lib.tensor([inf, inf], dtype=lib.float64))
        out.append((a.grad.tolist(), b.grad.tolist()))
    assert out[0] == out[1] == ([0.0, inf], [inf, inf])


def test_remainder_inplace_other_gradient():
    # remainder_ on a bfloat16 inf: the other's gradient is NaN (inf // b is NaN).
    grads = []
    for lib in (ft, torch):
        a = lib.tensor([inf, 5.0], dtype=lib.bfloat16)
        b = lib.tensor([-1.0, 2.0], requires_grad=True)
        a.remainder_(b.clone())
        a.float().sum().backward()
        grads.append(np.asarray(b.grad.tolist()))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_floor_division_of_infinities():
    x = arr([inf, -inf, nan, 5.0, -5.0, 0.0])
    for mode in ("floor", "trunc"):
        parity(torch, lambda L, x: L.div(x, -3.0, rounding_mode=mode), x)


@pytest.mark.parametrize("exp", [True, False])
def test_pow_bool_exponent(exp):
    check(lambda L, x: L.pow(x, exp), arr([[3.0, 0.0, -2.0]]))
    check(lambda L, x: x ** exp, arr([[3.0, 0.0, -2.0]]))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hardswish_huge_and_nan(dtype):
    # The fuzz reproducer's values: inputs of the vectorized part of PyTorch's
    # kernel take the middle branch at NaN (NaN gradient); the scalar tail
    # (the last n % chunk elements) takes `g`. 3e38 is on the `x >= 3` side.
    vals = [-20.0, 0.57, 3e38, 3e38, 1.0, -inf, inf, nan, 88.0, -1e30, 1e-30, 0.0, -3.0, 3.0, nan, 2.5]
    x = arr(vals * 5 + [nan, 3e38, -4.0], dtype)
    check(lambda L, x: F(L).hardswish(x), x, rtol=1e-6, atol=1e-6)
    check(lambda L, x: F(L).hardswish(x), arr([nan, 1.0, 3e38], dtype), rtol=1e-6, atol=1e-6)


def test_hardswish_fuzz_reproducer():
    x = arr([[[[-20.0, 0.5705192519892429, -0.3894396043620873, 0.1250620072215876, -0.9492626171215134],
               [20.0, -1.0, 3e38, 3e38, 1.0],
               [1.1354563024713278, -inf, 0.20845457473973714, 1.5775862255104276, -0.9184457128547198]],
              [[1.2492373360134572, 0.06850458279902694, 0.140744893138157, -0.23289096303128065, -0.06264225806553803],
               [0.9471441276187089, 0.6564798985692152, -1.1621697254104502, 0.5701991198670755, nan],
               [88.0, -1.045814130829774, -1e30, inf, nan]],
              [[-1e30, 20.0, 20.0, 1e30, 1e-30],
               [1.3068519358881525, 88.0, 1.1383197150096531, 20.0, 1.8176775073559963],
               [1.5519925285827203, 0.3594786628458259, -1e-40, 0.0, 1.0782806859309457]]]])
    check(lambda L, x: F(L).hardswish(x.clone()), x)


@pytest.mark.parametrize("name,alpha", [("celu_", -2.0), ("elu_", -1.0)])
def test_inplace_elu_negative_alpha_raises_in_backward(name, alpha):
    msgs = []
    for lib in (ft, torch):
        x = lib.tensor(0.176881343126297, requires_grad=True)
        y = x.clone()
        fn = getattr(lib, name, None) or getattr(F(lib), name)
        fn(y, alpha)  # the forward succeeds
        with pytest.raises(RuntimeError) as e:
            y.backward()
        msgs.append(str(e.value))
    assert "negative slope" in msgs[0]


@pytest.mark.parametrize("name,alpha", [("celu_", 2.0), ("elu_", 0.5)])
def test_inplace_elu_positive_alpha_gradient(name, alpha):
    def fn(L, x):
        y = x.clone()
        f = getattr(L, name, None) or getattr(F(L), name)
        return f(y, alpha)

    check(fn, arr([0.5, -1.0, 0.0, nan]))


# -- backward errors and integer operands of addcmul/addcdiv/atan2 ----------------------------


def _backward_outcome(lib, build):
    try:
        out, leaves = build(lib)
        out.sum().backward()
        return "ok", [None if l.grad is None else np.asarray(l.grad.tolist()) for l in leaves]
    except RuntimeError as e:
        return "raises", str(e)


def _same_outcome(build):
    ours, ref = _backward_outcome(ft, build), _backward_outcome(torch, build)
    assert ours[0] == ref[0], (ours, ref)
    if ours[0] == "raises":
        assert ours[1] == ref[1]
    else:
        for a, b in zip(ours[1], ref[1]):
            np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dt", ["uint8", "int64", "bool", "float32"])
def test_addcdiv_integer_tensor2_backward(dt):
    # PyTorch's tensor1 gradient `value / tensor2` cannot be written in an integer tensor2's dtype.
    def build(L):
        t1 = L.tensor([3.5, 2.0], requires_grad=True)
        t2 = L.tensor(5 if dt != "bool" else True, dtype=getattr(L, dt))
        return L.addcdiv(L.zeros(2, dtype=L.float64), t1, t2, value=1.314), [t1]

    _same_outcome(build)


def test_addcdiv_integer_tensor2_self_only():
    def build(L):
        s = L.tensor([1.0, 2.0], requires_grad=True)
        return L.addcdiv(s, L.tensor([3.5, 2.0]), L.tensor([5, 1], dtype=L.int32)), [s]

    _same_outcome(build)


@pytest.mark.parametrize("value", [-1, 2, 1.5])
def test_addcmul_integer_tensor2_value_wraps(value):
    # tensor1's gradient is g * (tensor2 * value) in tensor2's dtype: uint8 3 * -1 is 253.
    def build(L):
        t1 = L.tensor(0.0, requires_grad=True)
        t2 = L.tensor(3, dtype=L.uint8)
        return L.addcmul(L.tensor(-1.0), t1, t2, value=value), [t1]

    _same_outcome(build)


def test_atan2_bool_self_other_gradient_raises():
    def build(L):
        other = L.tensor([[2.2], [0.4]], requires_grad=True)
        return L.atan2(L.tensor([[True], [True]]), other), [other]

    _same_outcome(build)


def test_atan2_bool_other_self_gradient():
    def build(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return L.atan2(x, L.tensor([True, False])), [x]

    _same_outcome(build)


def test_clamp_tensor_bounds_inplace_mask_broadcast_raises():
    # PyTorch combines clamp's masks in place (`(self >= min).logical_and_(self <= max)`):
    # when max broadcasts them to a larger shape the backward raises.
    def build(L):
        x = L.tensor([[-1.5]], requires_grad=True)
        lo = L.tensor([[4]], dtype=L.uint8)
        hi = L.tensor([5, 7])
        return L.clamp(x.clone(), min=lo, max=hi), [x]

    _same_outcome(build)

    def build_ok(L):
        x = L.tensor([[-1.5, 5.0]], requires_grad=True)
        lo = L.tensor([[4.0, 1.0]], requires_grad=True)
        hi = L.tensor([5.0, 7.0], requires_grad=True)
        return L.clamp(x, min=lo, max=hi), [x, lo, hi]

    _same_outcome(build_ok)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_elu_family_nan_vectorized_and_tail(name, dtype):
    # PyTorch's vectorized elu_backward (blendv on x > 0) sends NaN to the
    # negative branch (NaN); its scalar tail (x <= 0 ? neg : pos) to the positive one.
    x = arr(([nan, -1.0, 0.5, 2.0, -0.0, 700.0] * 12) + [nan, -1.0, nan], dtype)
    check(lambda L, x: getattr(F(L), name)(x), x, rtol=1e-6, atol=1e-6)


def test_hardswish_nan_strided_input_runs_scalar():
    # A permuted input: PyTorch's loop is strided (scalar lambda), NaN takes `g`.
    x = arr([[[[0.5, 0.43, 0.33, 1.14, -0.64]]], [[[88.0, 0.15, -20.0, -0.62, -0.98]]],
             [[[0.1, nan, 3e38, 2.0, 1.2]]], [[[-1.85, -0.97, -0.0, 2.0, 0.86]]]])
    check(lambda L, x: F(L).hardswish(x.clone().permute(2, 1, 3, 0)), x)
    check(lambda L, x: F(L).elu(x.clone().permute(2, 1, 3, 0)), x)


@pytest.mark.parametrize("dt", ["uint8", "int16", "int64"])
def test_atan2_integer_self_other_gradient(dt):
    # PyTorch's `g * -self * recip` negates self in its own dtype (uint8 -2 is 254).
    def build(L):
        other = L.tensor([[3.0], [-1.5]], requires_grad=True)
        return L.atan2(L.tensor([[2], [5]], dtype=getattr(L, dt)), other), [other]

    _same_outcome(build)
