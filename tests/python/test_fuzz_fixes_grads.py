"""Regression tests for the issue-15 fuzz classes owned here, against PyTorch:

* derivatives at singular points (PyTorch's masked formulas: a branch is picked,
  never `0 * inf`): pow/atan2/logit/elu family/hardswish/std/norm/clamp/extrema,
  bce and bce-with-logits, embedding's padding row, prelu at 0, addmm-family
  `beta=0` keeping the edge to `input`;
* nn.functional results: cross_entropy with label smoothing (probability and
  class targets, weights, ignore_index), unbatched and N-d nll/cross_entropy
  shapes, int64 avg_pool (truncating division), boolean GEMM in einsum;
* loss argument validation: the exception class PyTorch raises.

Values, dtypes and shapes are compared, and the gradients of a random-weighted
sum in float64 (float16/float32 where the class is about them)."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import errors_match, parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

F64 = "float64"


def arr(v, dtype=F64):
    return np.array(v, dtype=dtype)


def F(lib):
    return lib.nn.functional


# (id, fn(lib, *inputs), inputs, positions needing grad)
SINGULAR = [
    ("pow_x_0", lambda L, x: x ** 0, [arr([0.0, 1.0, -1.0])], (0,)),
    ("pow_x_0.0", lambda L, x: L.pow(x, 0.0), [arr([0.0, 2.0])], (0,)),
    ("pow_tensor_exp_at_0", lambda L, x, y: x ** y, [arr([0.0, 0.0, 0.0, 1.0, 2.0]), arr([0.0, 1.0, 2.0, 0.0, 0.5])], (0, 1)),
    ("pow_scalar_base_0", lambda L, y: 0.0 ** y, [arr([0.0, 1.0, 2.0, -1.0])], (0,)),
    ("pow_scalar_base_2", lambda L, y: 2.0 ** y, [arr([0.0, 1.0, -1.0])], (0,)),
    ("atan2_origin", lambda L, x, y: L.atan2(x, y), [arr([0.0, 1e-200, 1.0]), arr([0.0, 1e-200, 0.0])], (0, 1)),
    ("logit_eps_bounds", lambda L, x: L.logit(x, eps=0.1), [arr([0.0, 1.0, 0.5, 0.1, 0.9])], (0,)),
    ("hardswish_bounds", lambda L, x: F(L).hardswish(x), [arr([-3.0, 3.0, 0.0, -4.0, 4.0])], (0,)),
    ("hardsigmoid_bounds", lambda L, x: F(L).hardsigmoid(x), [arr([-3.0, 3.0, 0.0])], (0,)),
    ("hardtanh_bounds", lambda L, x: F(L).hardtanh(x), [arr([-1.0, 1.0, 0.0, 2.0])], (0,)),
    ("relu_0", lambda L, x: F(L).relu(x), [arr([0.0, 1.0, -1.0])], (0,)),
    ("prelu_0", lambda L, x, w: F(L).prelu(x, w), [arr([0.0, 1.0, -1.0]), arr([0.25])], (0, 1)),
    ("prelu_channels_0", lambda L, x, w: F(L).prelu(x, w), [arr([[0.0, 2.0], [-1.0, 0.0]]), arr([0.25, 0.5])], (0, 1)),
    ("abs_0", lambda L, x: x.abs(), [arr([0.0, -1.0, 2.0])], (0,)),
    ("sqrt_rsqrt_0", lambda L, x: x.sqrt() + x.rsqrt(), [arr([0.0, 4.0])], (0,)),
    ("clamp_bounds", lambda L, x: x.clamp(0.0, 1.0), [arr([0.0, 1.0, 0.5, -1.0, 2.0])], (0,)),
    ("clamp_tensor_bounds", lambda L, x, lo, hi: L.clamp(x, lo, hi), [arr([0.0, 1.0, 0.5, 2.0]), arr([0.0, 0.0, 0.0, 2.0]), arr([1.0, 1.0, 1.0, 3.0])], (0, 1, 2)),
    ("max_ties", lambda L, x: x.max(), [arr([1.0, 1.0, 0.0])], (0,)),
    ("amax_ties_dim", lambda L, x: x.amax(1), [arr([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]])], (0,)),
    ("median_ties", lambda L, x: x.median(), [arr([1.0, 1.0, 1.0, 0.0])], (0,)),
    ("maximum_ties", lambda L, x, y: L.maximum(x, y), [arr([1.0, 2.0]), arr([1.0, 1.0])], (0, 1)),
    ("std_constant", lambda L, x: x.std(), [arr([2.0, 2.0, 2.0])], (0,)),
    ("std_constant_rows", lambda L, x: x.std(1), [arr([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])], (0,)),
    ("std_biased_constant", lambda L, x: x.std(unbiased=False), [arr([3.0, 3.0])], (0,)),
    ("std_mean_constant", lambda L, x: L.std_mean(x)[0], [arr([2.0, 2.0])], (0,)),
    ("var_constant", lambda L, x: x.var(), [arr([2.0, 2.0, 2.0])], (0,)),
    ("norm3_zero", lambda L, x: x.norm(p=3), [arr([0.0, 0.0])], (0,)),
    ("norm3_partial_zero", lambda L, x: x.norm(p=3), [arr([0.0, 1.0, -2.0])], (0,)),
    ("norm1.5_zero", lambda L, x: x.norm(p=1.5), [arr([0.0, 0.0])], (0,)),
    ("norm2_zero", lambda L, x: x.norm(), [arr([0.0, 0.0])], (0,)),
    ("norm_inf_zero", lambda L, x: x.norm(p=float("inf")), [arr([0.0, 0.0])], (0,)),
    ("norm0.5_zero", lambda L, x: x.norm(p=0.5), [arr([0.0, 1.0])], (0,)),
    ("norm0.5_all_zero", lambda L, x: x.norm(p=0.5), [arr([0.0, 0.0])], (0,)),
    ("vector_norm3_rows_zero", lambda L, x: L.linalg.vector_norm(x, ord=3, dim=1), [arr([[0.0, 0.0], [1.0, 2.0]])], (0,)),
    ("addmm_beta0", lambda L, i, a, b: L.addmm(i, a, b, beta=0), [arr([[np.nan, 2.0], [3.0, 4.0]]), arr([[1.0, 2.0], [3.0, 4.0]]), arr([[1.0, 0.5], [2.0, 1.0]])], (0, 1, 2)),
    ("addmm_beta0_alpha2", lambda L, i, a, b: L.addmm(i, a, b, beta=0, alpha=2), [arr([1.0, 2.0]), arr([[1.0, 2.0], [3.0, 4.0]]), arr([[1.0, 0.5], [2.0, 1.0]])], (0, 1, 2)),
    ("addmm_method_beta0.5", lambda L, i, a, b: i.addmm(a, b, beta=0.5), [arr([[1.0, 2.0], [3.0, 4.0]]), arr([[1.0, 2.0], [3.0, 4.0]]), arr([[1.0, 0.5], [2.0, 1.0]])], (0, 1, 2)),
    ("addmv_beta0", lambda L, i, a, b: L.addmv(i, a, b, beta=0), [arr([1.0, 2.0]), arr([[1.0, 2.0], [3.0, 4.0]]), arr([1.0, 2.0])], (0, 1, 2)),
    ("baddbmm_beta0", lambda L, i, a, b: L.baddbmm(i, a, b, beta=0), [arr([[[1.0, 2.0], [3.0, 4.0]]]), arr([[[1.0, 2.0], [3.0, 4.0]]]), arr([[[1.0, 2.0], [3.0, 4.0]]])], (0, 1, 2)),
    ("addbmm_beta0", lambda L, i, a, b: L.addbmm(i, a, b, beta=0), [arr([[1.0, 2.0], [3.0, 4.0]]), arr([[[1.0, 2.0], [3.0, 4.0]]]), arr([[[1.0, 2.0], [3.0, 4.0]]])], (0, 1, 2)),
    ("bce_logits_at_0", lambda L, x, y: F(L).binary_cross_entropy_with_logits(x, y), [arr([0.0, 0.0, 1.0, -2.0]), arr([0.0, 1.0, 0.5, 1.0])], (0, 1)),
    ("bce_logits_none", lambda L, x, y: F(L).binary_cross_entropy_with_logits(x, y, reduction="none"), [arr([0.0, 0.0, 30.0, -800.0]), arr([0.0, 1.0, 0.5, 1.0])], (0, 1)),
    ("bce_logits_pos_weight", lambda L, x, y, p: F(L).binary_cross_entropy_with_logits(x, y, pos_weight=p, reduction="sum"), [arr([[0.0, 0.0], [1.0, -2.0]]), arr([[0.0, 1.0], [0.5, 1.0]]), arr([2.0, 3.0])], (0, 1)),
    ("bce_logits_weight", lambda L, x, y, w: F(L).binary_cross_entropy_with_logits(x, y, weight=w), [arr([[0.0, 0.0], [1.0, -2.0]]), arr([[0.0, 1.0], [0.5, 1.0]]), arr([2.0, 3.0])], (0, 1)),
    ("bce_at_0_and_1", lambda L, x, y: F(L).binary_cross_entropy(x, y), [arr([0.0, 1.0, 0.5, 0.0, 1.0]), arr([0.0, 1.0, 1.0, 1.0, 0.0])], (0,)),
    ("bce_target_grad", lambda L, x, y: F(L).binary_cross_entropy(x, y, reduction="sum"), [arr([0.2, 0.7, 0.5]), arr([0.0, 1.0, 0.3])], (0, 1)),
    ("bce_weight", lambda L, x, y, w: F(L).binary_cross_entropy(x, y, weight=w, reduction="none"), [arr([[0.2, 0.7]]), arr([[0.0, 1.0]]), arr([2.0, 0.5])], (0,)),
    ("embedding_padding_idx", lambda L, w: F(L).embedding(L.tensor([0, 1, 0, 2]), w, padding_idx=0), [arr([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])], (0,)),
    ("embedding_padding_idx_neg", lambda L, w: F(L).embedding(L.tensor([[0, 2], [2, 1]]), w, padding_idx=-1), [arr([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])], (0,)),
]


@pytest.mark.parametrize("fn,arrays,grad", [c[1:] for c in SINGULAR], ids=[c[0] for c in SINGULAR])
def test_singular_point_gradients(fn, arrays, grad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, fn, *arrays, grad=grad, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
@pytest.mark.parametrize("dtype,big", [("float16", [17.0, 20.0, 100.0]), ("float32", [89.0, 100.0, 200.0]), (F64, [710.0, 800.0])])
def test_elu_family_large_positive_inputs(name, dtype, big):
    # The negative branch's exp overflows there; it must not leak NaN into the positive one.
    x = arr([0.0, -1.0, -30.0] + big, dtype)
    tol = 1e-3 if dtype == "float16" else 1e-6
    parity(torch, lambda L, x: getattr(F(L), name)(x), x, grad=(0,), rtol=tol, atol=tol)


def test_norm_p0_leaves_gradient_undefined():
    # PyTorch's norm_backward returns an undefined gradient for p=0: x.grad stays None.
    for lib in (ft, torch):
        x = lib.tensor([0.0, 2.0], requires_grad=True)
        (x.norm(p=0) + x.sum()).backward()
        assert x.grad.tolist() == [1.0, 1.0]
    x = ft.tensor([0.0, 2.0], requires_grad=True)
    x.norm(p=0).backward()
    assert x.grad is None or not x.grad.any()


# -- nn.functional values --------------------------------------------------------------------------


LOGITS = arr([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.0, 0.0, 1.0]])
PROBS = arr([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8]])
WEIGHT = arr([1.0, 2.0, 0.5])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(reduction, smoothing, weighted):
    def fn(L, x, t, w):
        return F(L).cross_entropy(x, t, weight=w if weighted else None, reduction=reduction, label_smoothing=smoothing)

    parity(torch, fn, LOGITS, PROBS, WEIGHT, grad=(0, 1), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 0, 1])
def test_cross_entropy_class_targets(reduction, smoothing, weighted, ignore_index):
    def fn(L, x, w):
        return F(L).cross_entropy(x, L.tensor([2, 0, 1]), weight=w if weighted else None, reduction=reduction,
                                  label_smoothing=smoothing, ignore_index=ignore_index)

    parity(torch, fn, LOGITS, WEIGHT, grad=(0,), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("case", ["unbatched", "unbatched_ignored", "spatial3d", "spatial4d",
                                  "spatial5d", "empty", "spatial_probs"])
def test_cross_entropy_shapes(reduction, smoothing, case):
    rng = np.random.default_rng(1)
    x = {"spatial3d": rng.standard_normal((2, 3, 4)), "spatial4d": rng.standard_normal((2, 3, 2, 2)),
         "spatial5d": rng.standard_normal((2, 3, 2, 1, 2)), "empty": np.zeros((0, 3)),
         "spatial_probs": rng.standard_normal((2, 3, 2))}.get(case, rng.standard_normal(3))
    tgt = {"unbatched": lambda L: L.tensor(2), "unbatched_ignored": lambda L: L.tensor(2),
           "spatial3d": lambda L: L.tensor([[0, 1, 2, 1], [2, 2, 0, 1]]),
           "spatial4d": lambda L: L.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]),
           "spatial5d": lambda L: L.tensor([[[[0, 1]], [[2, 1]]], [[[1, 1]], [[0, 2]]]]),
           "empty": lambda L: L.zeros(0, dtype=L.int64),
           "spatial_probs": lambda L: L.softmax(L.arange(12.0, dtype=L.float64).reshape(2, 3, 2), 1)}[case]
    ii = 2 if case == "unbatched_ignored" else -100

    def ce(L, x):
        return F(L).cross_entropy(x, tgt(L), reduction=reduction, label_smoothing=smoothing, ignore_index=ii)

    parity(torch, ce, arr(x), grad=(0,) if x.size else (), rtol=1e-7, atol=1e-9)
    if case != "spatial_probs":
        def nll(L, x):
            return F(L).nll_loss(x, tgt(L), reduction=reduction, ignore_index=ii)

        parity(torch, nll, arr(x), grad=(0,) if x.size else (), rtol=1e-7, atol=1e-9)


def test_nll_loss_uint8_target_and_float32():
    parity(torch, lambda L, x: F(L).nll_loss(x, L.tensor([1, 0], dtype=L.uint8), reduction="none"),
           arr([[0.5, 0.2], [0.1, 0.3]], "float32"), grad=(0,))


@pytest.mark.parametrize("nd,shape", [(1, (1, 1, 5)), (2, (1, 1, 3, 3)), (3, (1, 1, 2, 2, 2))])
@pytest.mark.parametrize("kw", [{}, {"padding": 1}, {"padding": 1, "count_include_pad": False}, {"divisor_override": 3}])
def test_avg_pool_int64_truncates(nd, shape, kw):
    if nd == 1 and "divisor_override" in kw:
        return
    x = (np.arange(np.prod(shape)).reshape(shape) * 7 % 11 - 5).astype("int64")
    pool = {1: "avg_pool1d", 2: "avg_pool2d", 3: "avg_pool3d"}[nd]
    parity(torch, lambda L, x: getattr(F(L), pool)(x, 2, 1, **kw), x)


@pytest.mark.parametrize("fn", [
    lambda L, x: F(L).avg_pool2d(x, 2, 1),
    lambda L, x: F(L).avg_pool1d(x[0], 2, 1),
    lambda L, x: F(L).avg_pool3d(x[None], 1),
    lambda L, x: F(L).adaptive_avg_pool2d(x, 2),
    lambda L, x: F(L).adaptive_avg_pool2d(x, 1),
    lambda L, x: F(L).adaptive_avg_pool1d(x[0], 2),
    lambda L, x: F(L).adaptive_avg_pool3d(x[None], 2),
    lambda L, x: F(L).adaptive_max_pool2d(x, 1),
    lambda L, x: F(L).max_pool1d(x[0], 1),
])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "int64"])
def test_pooling_dtype_errors(fn, dtype):
    x = np.ones((1, 1, 3, 3)).astype(dtype)
    try:
        expected = fn(torch, torch.from_numpy(x))
    except Exception:  # noqa: BLE001 - then ferrotorch must raise the same class
        errors_match(torch, fn, x)
    else:
        parity(torch, fn, x)
        assert expected is not None


@pytest.mark.parametrize("eq,shapes", [("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]),
                                       ("ij,jk->ik", [(2, 3), (3, 2)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
                                       ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)])])
@pytest.mark.parametrize("dtype", ["bool", "int64", "int32", "uint8"])
def test_einsum_integer_and_bool_dtypes(eq, shapes, dtype):
    xs = [(np.arange(int(np.prod(s))).reshape(s) % 3).astype(dtype) for s in shapes]

    def fn(L, *xs):
        return L.einsum(eq, *xs)

    try:
        fn(torch, *[torch.from_numpy(x) for x in xs])
    except NotImplementedError:
        errors_match(torch, fn, *xs)
    else:
        parity(torch, fn, *xs)


@pytest.mark.parametrize("fn", [
    lambda L, a: L.mm(a, a), lambda L, a: L.bmm(a[None], a[None]), lambda L, a: a @ a, lambda L, a: L.mv(a, a[0]),
    lambda L, a: L.dot(a[0], a[0]), lambda L, a: L.tensordot(a, a, 1), lambda L, a: L.einsum("ij,jk", a, a),
])
def test_bool_matrix_products_raise(fn):
    errors_match(torch, fn, np.ones((2, 2), dtype=bool))


# -- loss argument validation ----------------------------------------------------------------------


def _T(L, v, dt=F64):
    return L.tensor(v, dtype=getattr(L, dt))


LOSS_ERRORS = [
    ("bce_input_above_1", lambda L: F(L).binary_cross_entropy(_T(L, [1.5, 0.5]), _T(L, [1.0, 0.0]))),
    ("bce_input_negative", lambda L: F(L).binary_cross_entropy(_T(L, [-0.5, 0.5]), _T(L, [1.0, 0.0]))),
    ("bce_input_nan", lambda L: F(L).binary_cross_entropy(_T(L, [float("nan"), 0.5]), _T(L, [1.0, 0.0]))),
    ("bce_target_out_of_range", lambda L: F(L).binary_cross_entropy(_T(L, [0.5, 0.5]), _T(L, [2.0, -1.0]))),
    ("bce_shape_mismatch", lambda L: F(L).binary_cross_entropy(_T(L, [0.5, 0.5]), _T(L, [1.0]))),
    ("bce_int_target", lambda L: F(L).binary_cross_entropy(_T(L, [0.5, 0.5]), _T(L, [1, 0], "int64"))),
    ("bce_float32_target", lambda L: F(L).binary_cross_entropy(_T(L, [0.5, 0.5]), _T(L, [1, 0], "float32"))),
    ("bce_bad_weight", lambda L: F(L).binary_cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [[1.0, 0.0]]), weight=_T(L, [1.0, 2.0, 3.0]))),
    ("bce_bad_reduction", lambda L: F(L).binary_cross_entropy(_T(L, [0.5]), _T(L, [1.0]), reduction="foo")),
    ("bcel_target_broadcast", lambda L: F(L).binary_cross_entropy_with_logits(_T(L, [0.5, 0.5]), _T(L, [1.0]))),
    ("bcel_target_broadcast2", lambda L: F(L).binary_cross_entropy_with_logits(_T(L, [[0.5, 0.5]]), _T(L, [1.0, 0.0]))),
    ("bcel_int_target", lambda L: F(L).binary_cross_entropy_with_logits(_T(L, [0.5, 0.5]), _T(L, [1, 0], "int64"))),
    ("bcel_bad_pos_weight", lambda L: F(L).binary_cross_entropy_with_logits(_T(L, [[0.5, 0.5]]), _T(L, [[1.0, 0.0]]), pos_weight=_T(L, [1.0, 2.0, 3.0]))),
    ("bcel_bad_reduction", lambda L: F(L).binary_cross_entropy_with_logits(_T(L, [0.5]), _T(L, [1.0]), reduction="avg")),
    ("mse_int", lambda L: F(L).mse_loss(_T(L, [1, 2], "int64"), _T(L, [1, 2], "int64"))),
    ("mse_bad_reduction", lambda L: F(L).mse_loss(_T(L, [1.0]), _T(L, [1.0]), reduction="foo")),
    ("l1_bad_shape", lambda L: F(L).l1_loss(_T(L, [0.5, 0.5]), _T(L, [1.0, 2.0, 3.0]))),
    ("nll_float_target", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [1.0]))),
    ("nll_int32_target", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [1], "int32"))),
    ("nll_out_of_range", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [2], "int64"))),
    ("nll_negative_class", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [-1], "int64"))),
    ("nll_batch_mismatch", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [0, 1], "int64"))),
    ("nll_0d_input", lambda L: F(L).nll_loss(_T(L, 0.5), _T(L, 0, "int64"))),
    ("nll_1d_input_long_target", lambda L: F(L).nll_loss(_T(L, [0.5, 0.2]), _T(L, [0, 1], "int64"))),
    ("nll_2d_target", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [[0]], "int64"))),
    ("nll_spatial_target_shape", lambda L: F(L).nll_loss(L.zeros(2, 3, 4, dtype=L.float64), L.zeros(2, 5, dtype=L.int64))),
    ("nll_4d_target_dims", lambda L: F(L).nll_loss(L.zeros(1, 3, 1, 1, dtype=L.float64), L.zeros(1, dtype=L.int64))),
    ("nll_weight_size", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [0], "int64"), weight=_T(L, [1.0]))),
    ("nll_weight_dtype", lambda L: F(L).nll_loss(_T(L, [[0.5, 0.5]]), _T(L, [0], "int64"), weight=_T(L, [1.0, 1.0], "float32"))),
    ("nll_int_input", lambda L: F(L).nll_loss(_T(L, [[1, 2]], "int64"), _T(L, [0], "int64"))),
    ("ce_soft_target_ignore_index", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [[1.0, 0.0]]), ignore_index=0)),
    ("ce_label_smoothing_above_1", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [1], "int64"), label_smoothing=1.5)),
    ("ce_soft_label_smoothing_above_1", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [[1.0, 0.0]]), label_smoothing=1.5)),
    ("ce_0d_input", lambda L: F(L).cross_entropy(_T(L, 0.5), _T(L, 0, "int64"))),
    ("ce_batch_mismatch", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [1.0, 0.0]))),
    ("ce_out_of_range_smoothing", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [2], "int64"), label_smoothing=0.1)),
    ("ce_weight_size", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [0], "int64"), weight=_T(L, [1.0]))),
    ("ce_soft_weight_size", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [[0.5, 0.5]]), weight=_T(L, [1.0]))),
    ("ce_int32_target", lambda L: F(L).cross_entropy(_T(L, [[0.5, 0.5]]), _T(L, [1], "int32"))),
    ("embedding_padding_idx_oob", lambda L: F(L).embedding(_T(L, [0], "int64"), _T(L, [[1.0, 2.0]]), padding_idx=3)),
    ("embedding_padding_idx_neg_oob", lambda L: F(L).embedding(_T(L, [0], "int64"), _T(L, [[1.0, 2.0]]), padding_idx=-3)),
    ("embedding_1d_weight", lambda L: F(L).embedding(_T(L, [0], "int64"), _T(L, [1.0, 2.0]))),
]


@pytest.mark.parametrize("fn", [c[1] for c in LOSS_ERRORS], ids=[c[0] for c in LOSS_ERRORS])
def test_loss_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors_match(torch, lambda L: fn(L))


def test_bce_messages():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F(ft).binary_cross_entropy(ft.tensor([1.5, 0.5]), ft.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"Target size \(torch.Size\(\[1\]\)\) must be the same as input size"):
        F(ft).binary_cross_entropy_with_logits(ft.tensor([0.5, 0.5]), ft.tensor([1.0]))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_pointwise_loss_broadcast_warning(name):
    for lib in (ft, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(F(lib), name)(lib.tensor([0.5, 0.5]), lib.tensor([1.0]))
        assert any("different to the input size" in str(x.message) for x in w), lib.__name__


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_pointwise_loss_weight(name, reduction):
    parity(torch, lambda L, x, y, w: getattr(F(L), name)(x, y, reduction=reduction, weight=w),
           arr([1.0, 2.0, 4.0]), arr([0.5, 2.0, 1.0]), arr([1.0, 0.5, 2.0]), grad=(0, 1), rtol=1e-7, atol=1e-9)


def test_bce_with_logits_keeps_target_dtype():
    # PyTorch computes `(1 - target).mul_(input)` in place: the result has target's dtype.
    parity(torch, lambda L, x, y: F(L).binary_cross_entropy_with_logits(x, y), arr([0.5, -1.0]), arr([1.0, 0.0], "float32"))


def test_legacy_reduction_flags():
    for lib in (ft, torch):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            r = F(lib).nll_loss(lib.tensor([[0.5, 0.2]]), lib.tensor([1]), reduce=False)
        assert tuple(r.shape) == (1,)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", ["smooth_l1_0", "smooth_l1_0.5", "smooth_l1_1", "huber_0.5", "huber_2", "soft_margin",
                                  "kl", "kl_log_target", "kl_batchmean"])
def test_other_losses(reduction, case):
    x, y = arr([1.0, 2.0, 5.0, 0.0, -0.5]), arr([1.0, 3.0, 4.0, -0.5, 0.0])
    name, _, par = case.partition("_")
    if case.startswith("smooth_l1"):
        fn, grad = (lambda L, x, y: F(L).smooth_l1_loss(x, y, beta=float(case.split("_")[-1]), reduction=reduction)), (0, 1)
    elif name == "huber":
        fn, grad = (lambda L, x, y: F(L).huber_loss(x, y, delta=float(par), reduction=reduction)), (0, 1)
    elif name == "soft":
        y = arr([1.0, -1.0, 1.0, -1.0, 1.0])
        fn, grad = (lambda L, x, y: F(L).soft_margin_loss(x, y, reduction=reduction)), (0,)
    else:
        x, y = arr([[-1.0, -2.0], [-0.5, -3.0]]), arr([[0.5, 1.0], [0.2, 0.0 if par != "log_target" else -0.3]])
        red = "batchmean" if par == "batchmean" else reduction
        fn, grad = (lambda L, x, y: F(L).kl_div(x, y, reduction=red, log_target=par == "log_target")), (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, fn, x, y, grad=grad, rtol=1e-7, atol=1e-9)
