"""Regression tests for the classes of the 60k-case fuzz run (seed 7), against PyTorch:

* relu/relu_ at NaN (threshold_backward: `y <= 0 ? 0 : g`, NaN passes g);
* copysign's self gradient at NaN/inf (`g * (result / self)`, masked only at 0);
* logit at 0 and 1 (`g / 0`: the infinity takes g's sign, never -0.0's);
* kthvalue's gradient at ties (the index PyTorch's quickselect lands on);
* mse_loss's backward kernel (`norm * (x - y) * g`, overflowing as PyTorch's);
* cumprod/cumsum backward (flip-cumsum-flip, single factors pass g);
* pow's self gradient `g * (b * a^(b-1))` (order, integer `b - 1` wrapping,
  a Python exponent kept in double), rms_norm squaring with pow;
* layer_norm's `x * rstd - rstd * mean` and NaN for an overflowing variance.

Values, dtypes and shapes are compared, and the gradients of a random-weighted sum."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

nan, inf = float("nan"), float("inf")
SPECIAL = [nan, inf, -inf, 3e38, -3e38, 0.0, -0.0, 1.0, -2.0, 0.5]


def arr(v, dtype="float32"):
    return np.array(v, dtype=dtype)


def F(lib):
    return lib.nn.functional


def check(fn, *arrays, grad=(0,), rtol=1e-5, atol=1e-6, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, fn, *arrays, grad=grad, rtol=rtol, atol=atol, seed=seed)


CASES = [
    ("relu_nan", lambda L, x: L.relu(x), [arr(SPECIAL)], (0,)),
    ("F_relu_nan", lambda L, x: F(L).relu(x), [arr(SPECIAL, "float64")], (0,)),
    ("relu_inplace_nan", lambda L, x: x.clone().relu_(), [arr([[nan], [-1e30], [-0.17], [0.5]])], (0,)),
    ("copysign_scalar_nan_inf", lambda L, x: L.copysign(x, 0.5), [arr(SPECIAL)], (0,)),
    ("copysign_int_other", lambda L, x: L.copysign(x, L.tensor(-3, dtype=L.int8)), [arr(SPECIAL)], (0,)),
    ("copysign_inplace_inf", lambda L, x: x.clone().copysign_(L.tensor(-1, dtype=L.int32)), [arr([0.2, -inf, -0.9, nan])], (0,)),
    ("logit_signed_zero", lambda L, x: L.logit(x), [arr(SPECIAL + [1e-30, 0.25])], (0,)),
    ("logit_eps_zero", lambda L, x: L.logit(x, eps=0.0), [arr(SPECIAL + [1e-30, 0.25])], (0,)),
    # 40 float32 elements: the first 32 run PyTorch's vectorized lambda (no +0 division).
    ("logit_vectorized_ends", lambda L, x: L.logit(x), [arr([-0.0, 0.0, 1.0, -0.0, 0.5] * 8)], (0,)),
    ("logit_vectorized_ends_f64", lambda L, x: L.logit(x, eps=0.0), [arr([-0.0, 0.0, 1.0, -0.0, 0.5] * 4, "float64")], (0,)),
    ("logit_strided_ends", lambda L, x: L.logit(x[::2]), [arr([-0.0, 0.0, 1.0, -0.0, 0.5] * 8)], (0,)),
    ("cumprod_huge", lambda L, x: L.cumprod(x, dim=0, dtype=L.float32),
     [arr([[-5.2e-20, -9.3e14, 9.9e16, -0.02], [5.8e-14, 1.8e13, 2.6e12, -2e-9], [-6.2e-15, -1.1e12, -1.1e-20, -0.05]])], (0,)),
    ("cumprod_single_factor_f16", lambda L, x: L.cumprod(x, dim=0, dtype=L.float16).float(), [arr([[[1.1e13]]])], (0,)),
    ("cumprod_size1_dim", lambda L, x: L.cumprod(x, dim=1), [arr([[3e38], [inf]])], (0,)),
    ("pow_int16_exponent_wraps", lambda L, x: L.pow(x, L.tensor([[-32768, -1, 32767], [1, 0, -32768]], dtype=L.int16)),
     [arr([[2.0], [0.5]])], (0,)),
    ("pow_int8_exponent_overflow", lambda L, x: x ** L.tensor([[-96, 86, 59, 79, 15]], dtype=L.int8), [arr([0.0, -2.0, 0.0, -3.0, 2.0])], (0,)),
    ("rms_norm_huge", lambda L, x: F(L).rms_norm(x, [3], eps=0.001), [arr([[0.0, 3e38, -0.5], [-1.0, 0.49, 0.35]])], (0,)),
    ("rms_norm_huge_weight", lambda L, x, w: F(L).rms_norm(x, [3], w, eps=0.001), [arr([[[-1.0, -1.3, -1.0], [1.0, 3e38, 0.63]]]), arr([-0.28, 0.056, -0.43])], (0, 1)),
    ("layer_norm_single_huge", lambda L, x: F(L).layer_norm(x, [1]), [arr([[-1.39], [-inf], [inf], [3e38], [1.4]])], ()),
    ("layer_norm_var_overflow", lambda L, x: F(L).layer_norm(x, [2], eps=0.001), [arr([[-1.0, 3e38], [1e-30, inf], [20.0, -0.7]])], ()),
    ("cumsum_inf", lambda L, x: L.cumsum(x, dim=1), [arr([[3e38, 3e38, 1.0], [inf, -inf, 2.0]])], (0,)),
]


@pytest.mark.parametrize("fn,arrays,grad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_fuzz_gradient_classes(fn, arrays, grad, seed):
    check(fn, *arrays, grad=grad, seed=seed)


def test_kthvalue_ties_gradient_follows_pytorch_index():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 30))
        a = rng.integers(-3, 4, size=n).astype(np.float32)
        if rng.random() < 0.2:
            a[rng.integers(0, n)] = np.nan
        k = int(rng.integers(1, n + 1))
        check(lambda L, x: L.kthvalue(x, k)[0], a)
        assert ft.kthvalue(ft.from_numpy(a), k)[1].item() == torch.kthvalue(torch.from_numpy(a), k)[1].item()


def test_kthvalue_fuzz_reproducer():
    x = arr([[[[2.0, -2.0, 1.0, 0.0]]], [[[-4.0, -3.0, -2.0, 2.0]]], [[[2.0, -1.0, -1.0, 3.0]]], [[[2.0, 1.0, -1.0, -2.0]]]])
    check(lambda L, x: L.kthvalue(x, 3, dim=0)[0], x)
    check(lambda L, x: L.kthvalue(x, 1, dim=0, keepdim=True)[0], arr([2.0, -3.0, -3.0, 0.0, 1.0]).reshape(5, 1, 1, 1))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_mse_loss_backward_kernel(reduction, dtype):
    # PyTorch's backward is `norm * (x - y) * g` in the input dtype: 2 * 3e38
    # overflows to inf in float32 even with a small g.
    x = np.array([[-0.54, 3e38, 1.0, nan], [2.0, -3e38, 0.25, -1.0]], dtype=np.float32)
    y = np.array([[0.0, -1.0, 3.0, 1.0]], dtype=np.float32)
    if dtype == "bfloat16":
        def fn(L, a, b):
            return F(L).mse_loss(a.bfloat16(), b.bfloat16(), reduction=reduction).float()
        check(fn, x, y, grad=(0, 1), rtol=2e-2, atol=1e-2)
    else:
        check(lambda L, a, b: F(L).mse_loss(a, b, reduction=reduction), x.astype(dtype), y.astype(dtype), grad=(0, 1))


def test_mse_loss_bool_target_and_grad_fn():
    for lib in (ft, torch):
        x = lib.tensor(-0.589, dtype=lib.float64, requires_grad=True)
        out = F(lib).mse_loss(x, lib.tensor(False), reduction="none")
        out.backward()
        assert type(out.grad_fn).__name__ == "MseLossBackward0"
        assert x.grad.item() == pytest.approx(-1.178)


def test_cumsum_backward_infinite_gradient():
    grads = []
    for lib in (ft, torch):
        x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        lib.cumsum(x, dim=1).backward(lib.tensor([[inf, 1.0, 1.0]]))
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [[inf, 2.0, 1.0]]


def test_pow_python_exponent_gradient_in_double():
    # `exponent - 1` on a Python float stays a double (a 0-d tensor would be float32).
    check(lambda L, x: L.pow(x, 6.681), arr([3.0, 0.5, 7.0], "float64"), rtol=1e-13, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_norm_accumulates_in_float(dtype):
    # float32/reduced norms accumulate in float: the sum of squares overflows
    # to inf (PyTorch does not rescale); float64 does not.
    def fn(L, x):
        x = x.to(getattr(L, dtype))
        outs = [L.norm(x), L.linalg.vector_norm(x, 3), L.norm(x, p=2, dim=None, keepdim=True), L.norm(x[:1] / 2e19 * 1.5e19)]
        return [o.float() if o.dtype == L.bfloat16 else o for o in outs]

    check(fn, arr([2e19, 2e19, 1.0]), grad=(), rtol=2e-2 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("n,where", [(8, 0), (64, 0), (70, 66), (70, 3)])
@pytest.mark.parametrize("fn", ["hardtanh", "relu6"])
def test_hardtanh_family_gradient_at_nan(n, where, fn):
    # PyTorch's scalar loop passes g at NaN (x <= lo || x >= hi is false); its
    # vectorized loop over whole chunks gives 0: both are matched by position.
    def grad(L):
        vals = [round(-7.0 + 14.0 * i / (n - 1), 3) for i in range(n)]
        vals[where] = float("nan")
        x = L.tensor(vals)
        x.requires_grad_()
        getattr(L.nn.functional, fn)(x).sum().backward()
        return x.grad.tolist()
    assert grad(ft) == grad(torch)
