"""Fuzz classes of issue 15 left by session 8's campaign (seed 9), compared with PyTorch:
batch_norm in training on a float16/bfloat16 (N, C) input. PyTorch takes its channels-last
statistics kernel for an input with one element per (sample, channel): the squares are taken
around the mean already rounded to the statistics' dtype (their sum stays in float32, so float16
inputs of a few hundred do not overflow it), and a near-constant channel normalises differently
from the float32 computation."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

DTYPES = ["bfloat16", "float16"]


def _bn(lib, x, dtype, weight_dtype, rm, rv):
    dt = getattr(lib, dtype)
    t = lib.tensor(x, dtype=dt)
    w = b = None
    if weight_dtype is not None:
        wdt = getattr(lib, weight_dtype)
        w = lib.linspace(0.5, 1.5, x.shape[1], dtype=wdt)
        b = lib.linspace(-0.25, 0.25, x.shape[1], dtype=wdt)
    pdt = getattr(lib, weight_dtype) if weight_dtype is not None else dt
    running_mean = lib.tensor(rm, dtype=pdt)
    running_var = lib.tensor(rv, dtype=pdt)
    out = lib.nn.functional.batch_norm(t, running_mean, running_var, w, b, training=True, momentum=0.1)
    return out, running_mean, running_var


def _compare(x, dtype, weight_dtype, rm, rv):
    o1, m1, v1 = _bn(ft, x, dtype, weight_dtype, rm, rv)
    o2, m2, v2 = _bn(torch, x, dtype, weight_dtype, rm, rv)
    assert str(o1.dtype) == str(o2.dtype)
    tol = dict(rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(o1.float().numpy(), o2.float().numpy(), **tol)
    np.testing.assert_allclose(m1.float().numpy(), m2.float().numpy(), **tol)
    np.testing.assert_allclose(v1.float().numpy(), v2.float().numpy(), **tol)


def test_reproducer_from_campaign():
    # ours gave -1.8515625 at (0, 1) where PyTorch gives -1.359375: the
    # variance is taken around the mean rounded to bfloat16 (3.3125).
    x = np.array([[0.228515625, 3.296875], [0.16015625, 3.3125]])
    _compare(x, "bfloat16", None, [4.0, 3.0], [0.0, 0.0])
    out, _, _ = _bn(ft, x, "bfloat16", None, [4.0, 3.0], [0.0, 0.0])
    assert out[0, 1].item() == -1.359375


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weight_dtype", [None, "float32", "same"])
@pytest.mark.parametrize("seed", range(6))
def test_near_constant_channels_nc(dtype, weight_dtype, seed):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(2, 9)), int(rng.integers(1, 5))
    scale = [0.01, 1.0, 100.0][seed % 3]
    offset = [3.3, -50.0, 0.0][seed % 3]
    x = rng.standard_normal((n, c)) * scale + offset
    x = torch.tensor(x).to(getattr(torch, dtype)).double().numpy()  # exactly representable
    wd = dtype if weight_dtype == "same" else weight_dtype
    _compare(x, dtype, wd, rng.standard_normal(c).tolist(), rng.random(c).tolist())


@pytest.mark.parametrize("dtype", DTYPES)
def test_nc11_input_takes_the_same_kernel(dtype):
    # (N, C, 1, 1) has one element per (sample, channel) too.
    rng = np.random.default_rng(7)
    x = torch.tensor(rng.standard_normal((4, 3)) * 0.01 + 3.3).to(getattr(torch, dtype)).double().numpy()

    def run(lib):
        t = lib.tensor(x, dtype=getattr(lib, dtype)).reshape(4, 3, 1, 1)
        return lib.nn.functional.batch_norm(t, None, None, training=True)

    np.testing.assert_allclose(run(ft).float().numpy(), run(torch).float().numpy(), rtol=2e-2, atol=2e-2)


# --- seed 10 campaign: add/sub with alpha on float16/bfloat16 -------------------------------
# PyTorch's AddBackward0/SubBackward0 with alpha scale the gradient by alpha in the output's
# dtype (rounding each element) before summing it over the other operand's broadcast dims; ours
# had summed the float32 products of the fused float32 computation and rounded once at the end.

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["add", "sub"])
@pytest.mark.parametrize("seed", range(4))
def test_add_alpha_gradient_scaled_in_the_output_dtype(dtype, fn, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((4, 80))
    b = rng.standard_normal(()) if seed % 2 else rng.standard_normal((1, 80))
    w = rng.standard_normal((4, 80))

    def run(lib):
        ta = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        tb = lib.tensor(b, dtype=lib.float32, requires_grad=True)
        out = getattr(lib, fn)(ta, tb, alpha=2.51)
        (out.float() * lib.tensor(w, dtype=lib.float32)).sum().backward()
        return out, ta.grad, tb.grad, type(out.grad_fn).__name__

    (o1, ga1, gb1, n1), (o2, ga2, gb2, n2) = run(ft), run(torch)
    assert n1 == n2
    assert str(o1.dtype) == str(o2.dtype)
    np.testing.assert_array_equal(o1.detach().float().numpy(), o2.detach().float().numpy())
    np.testing.assert_array_equal(ga1.float().numpy(), ga2.float().numpy())
    # float32 sums of rounded products: equal up to float32 summation order
    np.testing.assert_allclose(gb1.numpy(), gb2.numpy(), rtol=1e-5, atol=1e-5)


def test_add_alpha_float32_gradient_unchanged():
    # float32/float64 keep the fused forward and PyTorch's alpha * g gradient.
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal(5)
    res = []
    for lib in (ft, torch):
        ta = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        tb = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        out = lib.sub(ta, tb, alpha=-1.5)
        out.backward(lib.ones_like(out))
        res.append((out.detach().numpy(), ta.grad.numpy(), tb.grad.numpy(), type(out.grad_fn).__name__))
    for x, y in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(x, y, rtol=1e-15, atol=0)
    assert res[0][3] == res[1][3]


# --- seed 11 campaign: float32 batch_norm of an (N, C) input ----------------------------------
# PyTorch's channels-last statistics kernel (one element per sample and channel): with more rows
# than threads each thread sums its block of rows in float32 (which can overflow to inf, giving
# NaN outputs), and the blocks add up in double.

@pytest.fixture
def threads():
    saved = (ft.get_num_threads(), torch.get_num_threads())

    def set_both(n):
        ft.set_num_threads(n)
        torch.set_num_threads(n)
    yield set_both
    ft.set_num_threads(saved[0])
    torch.set_num_threads(saved[1])


def _bn32(lib, x):
    t = lib.tensor(x, dtype=lib.float32)
    rm, rv = lib.zeros(x.shape[1]), lib.ones(x.shape[1])
    out = lib.nn.functional.batch_norm(t, rm, rv, training=True)
    return out.numpy(), rm.numpy(), rv.numpy()


def test_float32_nc_batch_norm_sums_rows_in_float32(threads):
    threads(1)
    x = np.array([[np.inf, 3e38, -0.5416], [0.4111, 3e38, -np.inf], [-np.inf, -1e-40, -0.9636]], dtype=np.float32)
    ours, ref = _bn32(ft, x), _bn32(torch, x)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-5)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_float32_nc_batch_norm_matches_per_thread_count(threads, n_threads, n):
    threads(n_threads)
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 4)) * np.array([1.0, 1e37, 1e38, 0.01])).astype(np.float32)
    x[0, 2] = x[1, 2] = 3e38  # a column whose float32 row sum overflows
    ours, ref = _bn32(ft, x), _bn32(torch, x)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-4, atol=1e-6)


# --- seed 11 campaign: rrelu_ bounds ------------------------------------------------------------
# PyTorch's in-place rrelu_ does not require finite bounds outside training (the slope is their
# mean); it checks `lower <= upper` (so a NaN bound fails that check), and an integer input fails
# its kernel's dtype check first.

RRELU_CASES = [
    ("float32", -np.inf, 0.3, False), ("float32", 0.1, np.inf, False), ("float32", np.nan, 0.3, False),
    ("float32", -np.inf, 0.3, True), ("float32", 0.1, np.inf, True), ("float32", 0.5, 0.1, False),
    ("int16", -np.inf, 0.3, False), ("int16", 0.1, 0.3, False), ("int16", 0.5, 0.1, False), ("float64", 0.1, 0.2, False),
]


@pytest.mark.parametrize("dtype,lower,upper,training", RRELU_CASES)
def test_rrelu_inplace_bounds(dtype, lower, upper, training):
    def run(lib):
        x = lib.tensor([1.5, -2.0, 0.0], dtype=getattr(lib, dtype))
        try:
            return lib.rrelu_(x, lower, upper, training), None
        except Exception as e:  # noqa: BLE001 - the class is compared
            return None, type(e).__name__
    (r1, e1), (r2, e2) = run(ft), run(torch)
    assert e1 == e2, (e1, e2)
    if e1 is None and not training:
        np.testing.assert_array_equal(r1.double().numpy(), r2.double().numpy())


def test_rrelu_function_still_requires_finite_bounds():
    for lib in (ft, torch):
        with pytest.raises(RuntimeError, match="lower bound must be finite"):
            lib.nn.functional.rrelu(lib.tensor([1.0, -1.0]), float("-inf"), 0.3)


@pytest.mark.parametrize("args", [(float("-inf"), 0.3, False, False), (0.5, 0.1, False, False), (0.1, float("inf"), False, False),
                                  (float("-inf"), 0.3, False, True), (float("nan"), 0.3, False, False), (float("-inf"), 0.3, True, False)])
def test_functional_rrelu_bounds(args):
    lower, upper, training, inplace = args

    def run(lib):
        try:
            return lib.nn.functional.rrelu(lib.tensor([1.0, -1.0]), lower, upper, training=training, inplace=inplace), None
        except Exception as e:  # noqa: BLE001 - the class is compared
            return None, type(e).__name__
    (r1, e1), (r2, e2) = run(ft), run(torch)
    assert e1 == e2, (e1, e2)
    if e1 is None:
        np.testing.assert_array_equal(r1.numpy(), r2.numpy())
