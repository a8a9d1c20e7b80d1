"""Matrix products and norms against PyTorch (fuzz classes of issue 15): the
arithmetic of non-finite and overflowing terms in mm/bmm/mv/dot/matmul/addmm/
baddbmm, addmm/baddbmm/bmm/mv dtype, shape and empty-product rules, the
single-element and float-accumulated vector norms (norm, normalize,
pairwise_distance, cosine_similarity) and pdist."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


def _run(lib, fn):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)


def _vals(t):
    return np.asarray(t.detach().double().reshape(-1).tolist(), dtype=np.float64)


def _same(fn, rtol=1e-6, exact=False):
    ours, theirs = _run(ft, fn), _run(torch, fn)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        return
    a, b = ours[1], theirs[1]
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    x, y = _vals(a), _vals(b)
    assert np.array_equal(np.isnan(x), np.isnan(y)), (x, y)
    fin = np.isfinite(y)
    assert np.array_equal(x[~fin & ~np.isnan(y)], y[~fin & ~np.isnan(y)]), (x, y)
    if exact:
        assert np.array_equal(x[fin], y[fin]), (x, y)
    else:
        np.testing.assert_allclose(x[fin], y[fin], rtol=rtol, atol=1e-30)


# --- products: each term rounded to the dtype and added in order, so inf - inf is NaN

def test_bmm_overflowing_term_against_an_infinity_is_nan():
    a = [[[4.0, -2.0, -1.0], [-3.0, 4.0, 0.0], [-1.0, -3.0, 3.0], [3.0, 1.0, 4.0]]]
    b = [[[0.0, -inf, 0.14694787561893463, -0.2654110789299011],
          [1.794140338897705, 3.0000000054977558e+38, -1.2382166385650635, 710.0],
          [-0.0, -0.5, -1.0000000150474662e+30, nan]]]
    _same(lambda L: L.bmm(L.tensor(a), L.tensor(b)), rtol=1e-6)


def test_mv_and_matmul_with_infinities():
    m = [inf, 0.7368801832199097, 2.2139856815338135, -88.0, 3.0000000054977558e+38, -1.50772225856781,
         -0.3960758149623871]
    _same(lambda L: L.mv(L.tensor(m).as_strided([3, 3], [1, 2]), L.tensor([-3.0, -1.0, 2.0])))
    _same(lambda L: L.matmul(L.tensor(m).as_strided([3, 3], [1, 2]), L.tensor([-3.0, -1.0, 2.0])))
    big = [[3e38, 3e38, 1.0], [2.0, -3e38, 3e38]]
    for dt in ("float32", "bfloat16"):
        _same(lambda L: L.matmul(L.tensor([1.5, -2.0], dtype=getattr(L, dt)), L.tensor(big, dtype=getattr(L, dt))),
              rtol=1e-2)


def test_float16_dot_accumulates_in_float():
    # 1.18 * -62336 is past float16's range, but the sum is float: -inf, not NaN
    a = [-1.7861328125, 1.013671875, -1.1806640625, 1.361328125, -1.91015625, 0.4091796875, -4.50390625,
         -3.802734375, -0.052764892578125, 1.8056640625]
    b = [0.0, -62336.0, -0.0, inf, inf]
    _same(lambda L: L.dot(L.tensor(a, dtype=L.float16)[::2], L.tensor(b, dtype=L.float16)))


def test_mm_gradient_of_overflowing_terms():
    def fn(L):
        a = L.tensor([3.0000000054977558e+38]).as_strided([3, 4], [0, 0])
        b = L.tensor([[3.27, 0.157, 1.1, 3.04], [2.6, 3.97, 0.5, 0.91], [0.74, 2.57, 2.98, 3.9],
                      [0.82, 1.27, 3.35, 0.66]], requires_grad=True)
        w = L.tensor([[1.0, -2.0, 1.5, -1.0], [-1.5, 2.0, -2.0, 1.0], [2.0, 1.0, -1.0, 0.5]])
        (L.mm(a, b) * w).sum().backward()
        return b.grad
    _same(fn)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 1), (0.5, 1), (1, 0.5), (0, 0), (1, 0), (2, -1), (1, 2)])
def test_addmm_blas_order_and_scaling(beta, alpha):
    # BLAS starts from beta * input and adds the products (alpha * a) * b in order
    rng = np.random.default_rng(0)
    for trial in range(30):
        m, k, n = (int(v) for v in rng.integers(1, 5, 3))
        vals = np.array([inf, -inf, 3e38, -3e38, 2e38, 0.0, nan], dtype=np.float32)

        def gen(shape):
            x = rng.standard_normal(shape).astype(np.float32)
            sel = rng.random(shape) < 0.3
            x[sel] = rng.choice(vals, size=int(sel.sum()))
            return x.tolist()
        c, a, b = gen((m, n)), gen((m, k)), gen((k, n))
        _same(lambda L: L.addmm(L.tensor(c), L.tensor(a), L.tensor(b), beta=beta, alpha=alpha))


def test_addmm_beta_and_alpha_zero_ignore_nan():
    t2 = [[-0.5, -inf, -1.0, 1.0], [-inf, -1.0, -1.4, -1e30], [-0.0, -20.0, 0.5, 0.5], [2.4, -0.79, -1e30, 1e-30]]
    _same(lambda L: L.addmm(L.tensor([[0.0]]), L.tensor([[0.0, 4.0, 2.0, -3.0]]), L.tensor(t2).t(),
                            beta=0, alpha=0))
    _same(lambda L: L.addmm(L.tensor([[nan, 1.0]]), L.ones(1, 3), L.ones(3, 2), beta=0, alpha=1))
    # the bfloat16 kernel multiplies the product by alpha = 0 (NaN stays NaN)
    _same(lambda L: L.addmm(L.tensor([[2.0]], dtype=L.bfloat16),
                            L.tensor([[0.5, 0.25], [-inf, -0.5]], dtype=L.bfloat16),
                            L.tensor([[-4.0], [-2.0]], dtype=L.bfloat16), beta=0, alpha=0))


def test_baddbmm_computes_beta_input_plus_alpha_product():
    a = [[[3e38, -inf, -0.24]], [[1.0, 2.0, 3.0]]]
    b = [[[-0.35], [-1.88], [-0.7]], [[1.0], [1.0], [1.0]]]
    _same(lambda L: L.baddbmm(L.tensor([[[-3e38]], [[1.0]]]), L.tensor(a), L.tensor(b), beta=1, alpha=-2))
    _same(lambda L: L.baddbmm(L.tensor([[[-3e38]], [[1.0]]]), L.tensor(a), L.tensor(b), beta=0.5, alpha=0))


# --- dtype, shape and empty-product rules

CASES = {
    "addmm_bool_empty_inner_beta0": lambda L: L.addmm(L.tensor([False]), L.tensor([[False, True]]),
                                                      L.zeros(2, 0, dtype=L.bool), beta=0, alpha=1),
    "addmm_bool_empty_inner_beta1": lambda L: L.addmm(L.ones(2, 2, dtype=L.bool), L.ones(2, 0, dtype=L.bool),
                                                      L.ones(0, 2, dtype=L.bool)),
    "addmm_bool_empty_inner_beta_true": lambda L: L.addmm(L.ones(2, 2, dtype=L.bool), L.ones(2, 0, dtype=L.bool),
                                                          L.ones(0, 2, dtype=L.bool), beta=True),
    "addmm_int_empty_inner_half_beta": lambda L: L.addmm(L.ones(2, 2, dtype=L.int64), L.ones(2, 0, dtype=L.int64),
                                                         L.ones(0, 2, dtype=L.int64), beta=0.5),
    "addmm_int_half_beta_truncates": lambda L: L.addmm(L.ones(2, 2, dtype=L.int64), L.ones(2, 1, dtype=L.int64),
                                                       L.ones(1, 2, dtype=L.int64), beta=0.5),
    "addmm_bool_kernel": lambda L: L.addmm(L.ones(2, 2, dtype=L.bool), L.ones(2, 3, dtype=L.bool),
                                           L.ones(3, 2, dtype=L.bool)),
    "addmm_input_expands_bool": lambda L: L.addmm(L.ones(2, 3, dtype=L.bool), L.ones(1, 4, dtype=L.bool),
                                                  L.ones(4, 3, dtype=L.bool), beta=0),
    "addmm_input_expands_alpha0": lambda L: L.addmm(L.ones(2, 2), L.ones(1, 4), L.ones(4, 2), beta=1, alpha=0),
    "addmm_input_broadcast_ok": lambda L: L.addmm(L.ones(2), L.ones(3, 1), L.ones(1, 2), beta=0.5),
    "addmm_f16_empty_inner": lambda L: L.addmm(L.ones(2, 2, dtype=L.float16), L.ones(2, 0, dtype=L.float16),
                                               L.ones(0, 2, dtype=L.float16), beta=0.1),
    "baddbmm_bool_empty": lambda L: L.baddbmm(L.zeros(1, 1, 0, dtype=L.bool), L.ones(2, 4, 2, dtype=L.bool),
                                              L.zeros(2, 2, 0, dtype=L.bool), beta=0, alpha=1),
    "baddbmm_bool_int_kernel": lambda L: L.baddbmm(L.ones(2, 4, 4, dtype=L.bool), L.ones(2, 4, 1, dtype=L.bool),
                                                   L.ones(2, 1, 4, dtype=L.int64), beta=0, alpha=-2),
    "baddbmm_mixed_empty_batch": lambda L: L.baddbmm(L.zeros(0, 3, 1, dtype=L.float64),
                                                     L.zeros(0, 3, 3, dtype=L.float64),
                                                     L.zeros(0, 3, 1, dtype=L.int64), beta=0, alpha=-2),
    "baddbmm_mixed": lambda L: L.baddbmm(L.ones(2, 4, 4), L.ones(2, 4, 1), L.ones(2, 1, 4, dtype=L.int64)),
    "baddbmm_mixed_empty_inner": lambda L: L.baddbmm(L.ones(2, 4, 4), L.ones(2, 4, 0),
                                                     L.ones(2, 0, 4, dtype=L.int64), beta=1, alpha=-2),
    "baddbmm_bool_empty_inner_half_beta": lambda L: L.baddbmm(L.zeros(1, 1, 4, dtype=L.bool).expand(2, 1, 4),
                                                              L.ones(2, 1, 0, dtype=L.bool),
                                                              L.ones(2, 0, 4, dtype=L.bool), beta=0.5, alpha=-2),
    "baddbmm_input_dtype": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.int64),
                                               L.ones(2, 2, 2, dtype=L.int64)),
    "baddbmm_expand_first": lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.int64)),
    "baddbmm_batch2_2d": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 2), L.ones(2, 2)),
    "bmm_mixed_empty": lambda L: L.bmm(L.zeros(0, 0, 2, dtype=L.int64), L.zeros(0, 2, 2, dtype=L.int8)),
    "bmm_mixed_empty_inner": lambda L: L.bmm(L.zeros(1, 2, 0, dtype=L.int64), L.zeros(1, 0, 2, dtype=L.int8)),
    "bmm_mixed": lambda L: L.bmm(L.ones(1, 2, 1, dtype=L.int64), L.ones(1, 1, 2, dtype=L.int8)),
    "bmm_inner_mismatch": lambda L: L.bmm(L.ones(2, 2, 2), L.ones(2, 3, 2)),
    "mv_size_before_bool": lambda L: L.mv(L.zeros(1, 3, dtype=L.bool), L.zeros(4, dtype=L.bool)),
    "mv_dtype_message": lambda L: L.mv(L.zeros(2, 3, dtype=L.bool), L.zeros(3, dtype=L.int64)),
    "mv_bool_empty": lambda L: L.mv(L.ones(1, 0, dtype=L.bool), L.ones(0, dtype=L.bool)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_product_rules(name):
    fn = CASES[name]
    ours, theirs = _run(ft, fn), _run(torch, fn)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        _same(fn, exact=True)
    else:
        assert ours[1].split(".")[0] == theirs[1].split(".")[0] or ours[0] == "RuntimeError" and "expand" in ours[1]


def test_empty_products_record_history_and_cast_gradients():
    def fn(L):
        a = L.tensor([[[-3.0, -3.0]], [[1.0, 2.0]]], requires_grad=True)
        b = L.zeros(2, 2, 0, dtype=L.float64, requires_grad=True)
        out = L.bmm(a, b)
        out.sum().backward()
        return a.grad
    _same(fn, exact=True)

    def fn2(L):
        a = L.ones(3, 1, 2, dtype=L.float64, requires_grad=True)
        out = L.baddbmm(L.zeros(1, 1, 0, dtype=L.float64), a, L.zeros(3, 2, 0, dtype=L.float16), beta=1, alpha=-2)
        out.sum().backward()
        return a.grad
    _same(fn2, exact=True)
    # an integer result cannot carry a gradient
    assert _run(ft, lambda L: L.bmm(L.ones(2, 1, 3, dtype=L.float64, requires_grad=True),
                                    L.zeros(2, 3, 0, dtype=L.int16)))[0] == "RuntimeError"
    assert _run(torch, lambda L: L.bmm(L.ones(2, 1, 3, dtype=L.float64, requires_grad=True),
                                       L.zeros(2, 3, 0, dtype=L.int16)))[0] == "RuntimeError"


def test_addmm_gradients_are_scaled():
    def fn(L):
        i = L.tensor([1.0, 2.0], requires_grad=True)
        a = L.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]], requires_grad=True)
        b = L.tensor([[1.0, 4.0], [-1.0, 0.25]], requires_grad=True)
        out = L.addmm(i, a, b, beta=0.5, alpha=-2)
        (out * L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
        return L.cat([i.grad, a.grad.reshape(-1), b.grad.reshape(-1)])
    _same(fn, exact=True)


# --- vector norms

def test_norm_of_one_element_is_its_magnitude():
    x = [[[-0.5], [88.0]], [[-0.06336767971515656], [1.233292579650879]], [[-88.0], [-0.5]],
         [[-1.0000000150474662e+30], [-1.0324360132217407]]]
    for p in (3, 2, 0.5, -1, 1.5):
        _same(lambda L: L.norm(L.tensor(x), p=p, dim=-1, keepdim=True), exact=True)
    _same(lambda L: L.linalg.vector_norm(L.tensor([-1e30]), 3), exact=True)
    # a 0-d input with an explicit dim goes through the power and the root
    _same(lambda L: L.tensor(-1e30).norm(3, -1), exact=True)
    _same(lambda L: L.tensor(0.056602656841278076).norm(3, -1, keepdim=True), exact=True)


def test_norm_accumulates_short_float_rows_in_float():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((5, 4, 7)) * 3).astype(np.float32).tolist()
    for p in (2, 3, 1.5, 1):
        _same(lambda L: L.linalg.vector_norm(L.tensor(x), p, dim=1), exact=True)


def test_norm_inf_keeps_nan():
    x = [[nan, 0.58, -inf], [1.0, 2.0, 3.0]]
    _same(lambda L: L.norm(L.tensor(x, dtype=L.bfloat16), p=inf, dim=0, keepdim=True), exact=True)


def test_normalize_single_element_rows():
    x = [[[0.6381061673164368], [0.4317260682582855], [-1.0000000150474662e+30]]]
    _same(lambda L: L.nn.functional.normalize(L.tensor(x), p=3.0, dim=2), exact=True)

    def grad(L):
        x = L.tensor(0.056602656841278076, requires_grad=True)
        L.nn.functional.normalize(x.clone(), p=3.0, dim=-1).backward()
        return x.grad
    _same(grad, exact=True)


def test_pairwise_distance_and_cosine_similarity():
    _same(lambda L: L.pairwise_distance(L.tensor([[2.0]]), L.tensor([[-0.627], [-1.78], [-1.0000000150474662e+30],
                                                                      [-inf]])), exact=True)
    t1 = [[[0.8133933544158936], [0.27505895495414734]], [[-0.20603327453136444], [1.9496748447418213]],
          [[0.9042978286743164], [-4.420267105102539]], [[0.3063916862010956], [-1.1203311681747437]],
          [[0.6489602327346802], [1.0862126350402832]]]
    _same(lambda L: L.cosine_similarity(L.tensor([[[-4.0]]], dtype=L.float64), L.tensor(t1)), rtol=1e-12)


# --- pdist

@pytest.mark.parametrize("shape,dtype", [((3, 2), "int64"), ((0, 0), "int16"), ((3, 2), "bool"),
                                         ((3, 2), "bfloat16"), ((3, 2), "float16"), ((1, 2), "float16"),
                                         ((5, 0), "bfloat16")])
def test_pdist_dtypes(shape, dtype):
    ours = _run(ft, lambda L: L.pdist(L.ones(*shape, dtype=getattr(L, dtype))))
    theirs = _run(torch, lambda L: L.pdist(L.ones(*shape, dtype=getattr(L, dtype))))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        assert ours[1] == theirs[1]


def test_pdist_empty_result_keeps_history_and_zero_norm_gradient():
    for shape, p in (((1, 0), 2), ((1, 1), 0)):
        for L in (ft, torch):
            x = L.ones(*shape, requires_grad=True)
            assert L.pdist(x.clone(), p).requires_grad

    def grad(L, p):
        x = L.tensor([[-2.0], [3.0], [-1.0], [-1.0], [4.0]], dtype=L.float64, requires_grad=True)
        L.pdist(x, p).sum().backward()
        return x.grad
    for p in (0, 1, 2):
        _same(lambda L: grad(L, p), exact=True)
    _same(lambda L: L.pdist(L.tensor([[0.5], [nan], [1e-40], [inf]]), 0), exact=True)


def test_bfloat16_addmm_adds_beta_input_fused():
    # 2 * 1.99e38 alone overflows float32; oneDNN's fused beta * input + alpha * product does not
    def fn(L):
        return L.addmm(L.tensor([[1.9938419936773738e+38]], dtype=L.bfloat16),
                       L.tensor([[3.00405527047391e+38]], dtype=L.bfloat16),
                       L.tensor([[-0.66796875]], dtype=L.bfloat16), beta=2, alpha=0.5)
    _same(fn, rtol=1e-2)


def test_pdist_one_column_takes_power_and_root():
    # sqrt(d * d) of 1e30 overflows in float32: PyTorch's pdist has no single-element shortcut
    for p in (2, 1, inf):
        _same(lambda L: L.pdist(L.tensor([[710.0], [1.0000000150474662e+30], [-1.1357264518737793]]), p))
