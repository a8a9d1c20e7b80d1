"""Random sampling ops: reproducibility under manual_seed / Generator,
moments against closed forms (fixed seeds), shapes, dtypes and error classes
against PyTorch."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

N = 200_000


def _np(t):
    return np.asarray(t.double().numpy())


# ----- samplers, each a function (lib, generator) -> Tensor -------------------------

SAMPLERS = {
    "bernoulli": lambda L, g: L.bernoulli(L.full((50,), 0.3), generator=g),
    "bernoulli_p": lambda L, g: L.bernoulli(L.zeros(50), 0.7, generator=g),
    "Tensor.bernoulli": lambda L, g: L.full((50,), 0.3).bernoulli(generator=g),
    "bernoulli_": lambda L, g: L.zeros(50).bernoulli_(0.4, generator=g),
    "bernoulli_tensor_p": lambda L, g: L.zeros(5, 10).bernoulli_(L.full((10,), 0.4), generator=g),
    "multinomial": lambda L, g: L.multinomial(L.tensor([1.0, 2.0, 3.0, 4.0]), 3, generator=g),
    "multinomial_repl": lambda L, g: L.multinomial(L.tensor([[1.0, 2.0], [3.0, 4.0]]), 20, True, generator=g),
    "Tensor.multinomial": lambda L, g: L.tensor([1.0, 2.0, 3.0]).multinomial(2, generator=g),
    "normal_": lambda L, g: L.empty(50).normal_(1.0, 2.0, generator=g),
    "uniform_": lambda L, g: L.empty(50).uniform_(-1.0, 3.0, generator=g),
    "exponential_": lambda L, g: L.empty(50).exponential_(2.0, generator=g),
    "log_normal_": lambda L, g: L.empty(50).log_normal_(generator=g),
    "cauchy_": lambda L, g: L.empty(50).cauchy_(generator=g),
    "geometric_": lambda L, g: L.empty(50).geometric_(0.3, generator=g),
    "random_": lambda L, g: L.empty(50, dtype=L.int64).random_(0, 100, generator=g),
    "random_noargs": lambda L, g: L.empty(50).random_(generator=g),
    "normal_tt": lambda L, g: L.normal(L.zeros(50), L.ones(50), generator=g),
    "normal_tf": lambda L, g: L.normal(L.zeros(50), 2.0, generator=g),
    "normal_ft": lambda L, g: L.normal(1.0, L.ones(50), generator=g),
    "normal_ff": lambda L, g: L.normal(1.0, 2.0, (50,), generator=g),
    "poisson": lambda L, g: L.poisson(L.full((50,), 4.0), generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproducible(name):
    f = SAMPLERS[name]
    ft.manual_seed(1234)
    a = f(ft, None)
    ft.manual_seed(1234)
    b = f(ft, None)
    assert a.tolist() == b.tolist()
    ft.manual_seed(4321)
    c = f(ft, None)
    if name not in ("multinomial", "Tensor.multinomial"):  # few outcomes: a different seed may repeat them
        assert a.tolist() != c.tolist()


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generator_reproducible(name):
    f = SAMPLERS[name]
    ft.manual_seed(7)
    state = ft.get_rng_state()
    g1 = ft.Generator()
    g1.manual_seed(99)
    a = f(ft, g1)
    g2 = ft.Generator().manual_seed(99) if isinstance(ft.Generator().manual_seed(1), ft.Generator) else None
    if g2 is None:
        g2 = ft.Generator()
        g2.manual_seed(99)
    b = f(ft, g2)
    assert a.tolist() == b.tolist()
    # a private generator leaves the default one alone
    assert ft.get_rng_state().tolist() == state.tolist()


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_shape_dtype_like_torch(name):
    f = SAMPLERS[name]
    a, b = f(ft, None), f(torch, None)
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)


# ----- moments ----------------------------------------------------------------------


def _moments(t):
    x = _np(t)
    return x.mean(), x.var()


def _check(mean, var, m, v, n=N):
    # mean within 6 standard errors; variance within 5 %
    assert abs(mean - m) < 6 * math.sqrt(v / n), (mean, m)
    assert abs(var - v) < 0.05 * v, (var, v)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_moments(dtype):
    g = ft.Generator()
    g.manual_seed(0)
    x = ft.empty(N, dtype=getattr(ft, dtype)).uniform_(2.0, 5.0, generator=g)
    assert str(x.dtype) == f"torch.{dtype}"
    a = _np(x)
    assert a.min() >= 2.0 and a.max() < 5.0
    _check(*_moments(x), 3.5, 9 / 12)


def test_uniform_from_keyword():
    x = ft.empty(1000).uniform_(**{"from": -2.0, "to": -1.0})
    a = _np(x)
    assert a.min() >= -2 and a.max() < -1


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_normal_moments(dtype):
    ft.manual_seed(1)
    x = ft.empty(N, dtype=getattr(ft, dtype)).normal_(1.0, 2.0)
    assert str(x.dtype) == f"torch.{dtype}"
    m, v = _moments(x)
    tol = 0.05 if dtype in ("float32", "float64") else 0.1
    assert abs(m - 1.0) < 6 * math.sqrt(4 / N) + (0 if tol == 0.05 else 0.02)
    assert abs(v - 4.0) < tol * 4


def test_normal_function_forms():
    ft.manual_seed(2)
    mean = ft.arange(4, dtype=ft.float64).unsqueeze(1) * 10  # column of means, broadcast against std
    std = ft.tensor([1.0, 2.0, 3.0], dtype=ft.float64)
    # (4, 1) x (3,) -> (4, 3); draw many copies by stacking
    xs = ft.stack([ft.normal(mean, std) for _ in range(3000)])
    a = _np(xs)
    assert a.shape == (3000, 4, 3)
    np.testing.assert_allclose(a.mean(0), np.array([[0], [10], [20], [30]]) + np.zeros(3), atol=0.25)
    np.testing.assert_allclose(a.std(0), np.broadcast_to([1.0, 2.0, 3.0], (4, 3)), rtol=0.08)
    x = ft.normal(3.0, 0.5, (N,))
    _check(*_moments(x), 3.0, 0.25)
    x = ft.normal(ft.full((N,), -1.0), 0.5)
    _check(*_moments(x), -1.0, 0.25)
    x = ft.normal(2.0, ft.full((N,), 3.0))
    _check(*_moments(x), 2.0, 9.0)


def test_normal_grad_is_zero_like_torch():
    for L in (ft, torch):
        m = L.zeros(3, requires_grad=True)
        s = L.ones(3, requires_grad=True)
        L.normal(m, s).sum().backward()
        assert m.grad.tolist() == [0.0, 0.0, 0.0]
        assert s.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("lambd", [0.5, 2.0])
def test_exponential_moments(lambd):
    ft.manual_seed(3)
    x = ft.empty(N, dtype=ft.float64).exponential_(lambd)
    assert _np(x).min() >= 0
    _check(*_moments(x), 1 / lambd, 1 / lambd ** 2)


def test_log_normal_moments():
    ft.manual_seed(4)
    x = ft.empty(N, dtype=ft.float64).log_normal_(0.5, 0.25)
    a = _np(x)
    assert a.min() > 0
    _check(*_moments(x.log()), 0.5, 0.0625)


def test_cauchy_quartiles():
    ft.manual_seed(5)
    a = _np(ft.empty(N).cauchy_(1.0, 2.0))
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    assert abs(med - 1.0) < 0.05
    assert abs(q1 - (1.0 - 2.0)) < 0.08 and abs(q3 - (1.0 + 2.0)) < 0.08


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32"])
def test_geometric_moments(dtype):
    ft.manual_seed(6)
    p = 0.25
    x = ft.empty(N, dtype=getattr(ft, dtype)).geometric_(p)
    assert str(x.dtype) == f"torch.{dtype}"
    a = _np(x)
    assert a.min() >= 1 and np.all(a == np.round(a))
    _check(a.mean(), a.var(), 1 / p, (1 - p) / p ** 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "uint8"])
def test_random_range_and_moments(dtype):
    ft.manual_seed(7)
    x = ft.empty(N, dtype=getattr(ft, dtype)).random_(3, 13)
    a = _np(x)
    assert str(x.dtype) == f"torch.{dtype}"
    assert set(np.unique(a).tolist()) == set(range(3, 13))
    _check(a.mean(), a.var(), 7.5, (10 ** 2 - 1) / 12)
    y = ft.empty(N, dtype=getattr(ft, dtype)).random_(5)
    assert set(np.unique(_np(y)).tolist()) == set(range(5))


@pytest.mark.parametrize("dtype,hi", [("float32", 2 ** 24), ("float64", 2 ** 53), ("uint8", 255), ("int8", 127),
                                      ("int16", 2 ** 15 - 1), ("int64", 2 ** 63 - 1), ("float16", 2 ** 11)])
def test_random_default_range(dtype, hi):
    ft.manual_seed(8)
    x = ft.empty(20000, dtype=getattr(ft, dtype)).random_()
    vals = [int(v) for v in x.tolist()]
    assert min(vals) >= 0 and max(vals) <= hi
    assert max(vals) > hi // 2  # the whole range is used


def test_random_bool():
    ft.manual_seed(9)
    a = _np(ft.empty(N, dtype=ft.bool).random_())
    assert abs(a.mean() - 0.5) < 0.01


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_bernoulli_frequencies(p):
    ft.manual_seed(10)
    for x in (ft.bernoulli(ft.full((N,), p)), ft.empty(N).bernoulli_(p), ft.bernoulli(ft.zeros(N), p),
              ft.zeros(N, dtype=ft.int64).bernoulli_(ft.full((N,), p, dtype=ft.float64))):
        a = _np(x)
        assert set(np.unique(a).tolist()) <= {0.0, 1.0}
        assert abs(a.mean() - p) < 6 * math.sqrt(p * (1 - p) / N)


def test_bernoulli_per_element_probabilities():
    ft.manual_seed(11)
    probs = ft.tensor([0.0, 0.2, 0.5, 1.0], dtype=ft.float64)
    x = ft.bernoulli(probs.expand(50000, 4))
    a = _np(x).mean(0)
    np.testing.assert_allclose(a, [0.0, 0.2, 0.5, 1.0], atol=0.015)
    assert a[0] == 0.0 and a[3] == 1.0


def test_bernoulli_dtypes_like_torch():
    for dt in ("float16", "bfloat16", "float32", "float64"):
        a = ft.bernoulli(ft.full((3,), 0.5, dtype=getattr(ft, dt)))
        b = torch.bernoulli(torch.full((3,), 0.5, dtype=getattr(torch, dt)))
        assert str(a.dtype) == str(b.dtype)
    for dt in ("int64", "bool", "int32", "float64"):
        a = ft.zeros(3, dtype=getattr(ft, dt)).bernoulli_(0.5)
        assert str(a.dtype) == f"torch.{dt}"


# ----- multinomial ------------------------------------------------------------------


def test_multinomial_without_replacement_distinct():
    ft.manual_seed(12)
    probs = ft.rand(200, 10) + 0.01
    idx = ft.multinomial(probs, 10)
    assert idx.dtype == ft.int64 and tuple(idx.shape) == (200, 10)
    for row in idx.tolist():
        assert sorted(row) == list(range(10))
    idx = ft.multinomial(probs, 4)
    for row in idx.tolist():
        assert len(set(row)) == 4


def test_multinomial_zero_probability_never_drawn_first():
    ft.manual_seed(13)
    p = ft.tensor([0.0, 1.0, 0.0, 2.0, 0.0])
    idx = ft.multinomial(p.expand(2000, 5), 2)
    assert set(np.unique(_np(idx)).tolist()) == {1, 3}
    # with more samples than non-zero categories the zero ones follow (as in PyTorch)
    idx = ft.multinomial(p, 4)
    assert sorted(idx.tolist()[:2]) == [1, 3] and len(set(idx.tolist())) == 4


def _chi2(counts, probs):
    n = counts.sum()
    exp = n * probs
    mask = exp > 0
    return float(((counts[mask] - exp[mask]) ** 2 / exp[mask]).sum()), int(mask.sum()) - 1


def test_multinomial_with_replacement_frequencies():
    g = ft.Generator()
    g.manual_seed(14)
    w = np.array([1.0, 0.0, 3.0, 6.0, 10.0, 0.5])
    probs = w / w.sum()
    idx = ft.multinomial(ft.tensor(w.tolist()), N, replacement=True, generator=g)
    assert tuple(idx.shape) == (N,) and idx.dtype == ft.int64
    counts = np.bincount(_np(idx).astype(np.int64), minlength=len(w)).astype(float)
    assert counts[1] == 0
    stat, dof = _chi2(counts, probs)
    assert stat < dof + 6 * math.sqrt(2 * dof), stat  # far in the tail of chi2(dof)


def test_multinomial_2d_rows_independent_distributions():
    ft.manual_seed(15)
    w = ft.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 3.0]], dtype=ft.float64)
    idx = ft.multinomial(w, 40000, True)
    a = _np(idx).astype(np.int64)
    c0 = np.bincount(a[0], minlength=3) / 40000
    c1 = np.bincount(a[1], minlength=3) / 40000
    np.testing.assert_allclose(c0, [0.5, 0.5, 0.0], atol=0.01)
    np.testing.assert_allclose(c1, [0.0, 0.25, 0.75], atol=0.01)


def test_multinomial_without_replacement_first_draw_frequencies():
    ft.manual_seed(16)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    idx = ft.multinomial(ft.tensor(w.tolist()).expand(40000, 4), 2)
    first = np.bincount(_np(idx[:, 0]).astype(np.int64), minlength=4).astype(float)
    stat, dof = _chi2(first, w / w.sum())
    assert stat < dof + 6 * math.sqrt(2 * dof), stat
    # second draw given first = 3 (weight 4): remaining weights 1, 2, 3
    a = _np(idx).astype(np.int64)
    sec = a[a[:, 0] == 3, 1]
    c = np.bincount(sec, minlength=4).astype(float)
    assert c[3] == 0
    stat, dof = _chi2(c[:3], np.array([1.0, 2.0, 3.0]) / 6)
    assert stat < dof + 6 * math.sqrt(2 * dof), stat


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_multinomial_dtypes(dtype):
    a = ft.multinomial(ft.ones(5, dtype=getattr(ft, dtype)), 3)
    b = torch.multinomial(torch.ones(5, dtype=getattr(torch, dtype)), 3)
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)


def test_multinomial_noncontiguous_input():
    ft.manual_seed(17)
    w = ft.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]).t()  # rows: [1,0,1], [0,1,0]
    idx = ft.multinomial(w, 100, True)
    a = _np(idx)
    assert set(np.unique(a[0]).tolist()) == {0, 2}
    assert set(np.unique(a[1]).tolist()) == {1}


# ----- in-place behaviour -----------------------------------------------------------


INPLACE = {
    "normal_": lambda t: t.normal_(),
    "uniform_": lambda t: t.uniform_(),
    "exponential_": lambda t: t.exponential_(),
    "log_normal_": lambda t: t.log_normal_(),
    "cauchy_": lambda t: t.cauchy_(),
    "geometric_": lambda t: t.geometric_(0.5),
    "random_": lambda t: t.random_(1, 10),
    "bernoulli_": lambda t: t.bernoulli_(0.5),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_noncontiguous_view(name):
    base = ft.full((4, 6), -7.0, dtype=ft.float64)
    view = base[:, ::2].t()  # (3, 4), strided
    assert not view.is_contiguous()
    v0 = base._version
    r = INPLACE[name](view)
    assert r is view
    assert base._version > v0
    assert view.dtype == ft.float64
    a = _np(base)
    assert np.all(a[:, 1::2] == -7.0)  # untouched columns
    assert not np.any(a[:, ::2] == -7.0)  # every viewed element was written


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_leaf_requires_grad_errors_like_torch(name):
    for L in (ft, torch):
        x = L.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError):
            INPLACE[name](x)
        with L.no_grad():  # nn.init's pattern
            INPLACE[name](x)
        assert x.requires_grad


# ----- errors: the same exception class as torch -------------------------------------


ERRORS = {
    "mn_too_many": lambda L: L.multinomial(L.tensor([1.0, 2.0, 3.0]), 4),
    "mn_negative": lambda L: L.multinomial(L.tensor([1.0, -2.0, 3.0]), 2),
    "mn_inf": lambda L: L.multinomial(L.tensor([1.0, float("inf"), 3.0]), 2),
    "mn_nan": lambda L: L.multinomial(L.tensor([1.0, float("nan"), 3.0]), 2, True),
    "mn_zero_sum": lambda L: L.multinomial(L.tensor([0.0, 0.0, 0.0]), 2),
    "mn_zero_sum_row": lambda L: L.multinomial(L.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True),
    "mn_int": lambda L: L.multinomial(L.tensor([1, 2, 3]), 2),
    "mn_3d": lambda L: L.multinomial(L.ones(2, 2, 2), 2),
    "mn_0d": lambda L: L.multinomial(L.ones(()), 1),
    "mn_zero_samples": lambda L: L.multinomial(L.ones(3), 0),
    "mn_negative_samples": lambda L: L.multinomial(L.ones(3), -1, True),
    "bern_int": lambda L: L.bernoulli(L.tensor([1, 0])),
    "bern_bool": lambda L: L.bernoulli(L.tensor([True, False])),
    "bern_gt1": lambda L: L.bernoulli(L.tensor([1.5, 0.0])),
    "bern_neg": lambda L: L.bernoulli(L.tensor([-0.5, 0.0])),
    "bern_p_gt1": lambda L: L.bernoulli(L.tensor([0.5, 0.0]), 1.5),
    "bern__p": lambda L: L.zeros(3).bernoulli_(1.5),
    "bern__tensor_p": lambda L: L.zeros(3).bernoulli_(L.tensor([0.1, 0.2, 1.2])),
    "normal__int": lambda L: L.zeros(3, dtype=L.int64).normal_(),
    "normal__neg_std": lambda L: L.zeros(3).normal_(0, -1),
    "uniform__int": lambda L: L.zeros(3, dtype=L.int64).uniform_(),
    "uniform__reversed": lambda L: L.zeros(3).uniform_(1, 0),
    "exponential__int": lambda L: L.zeros(3, dtype=L.int64).exponential_(),
    "exponential__zero": lambda L: L.zeros(3).exponential_(0),
    "exponential__neg": lambda L: L.zeros(3).exponential_(-1),
    "cauchy__int": lambda L: L.zeros(3, dtype=L.int64).cauchy_(),
    "cauchy__sigma": lambda L: L.zeros(3).cauchy_(0, 0),
    "log_normal__int": lambda L: L.zeros(3, dtype=L.int64).log_normal_(),
    "log_normal__std": lambda L: L.zeros(3).log_normal_(0, 0),
    "geometric__zero": lambda L: L.zeros(3).geometric_(0),
    "geometric__one": lambda L: L.zeros(3).geometric_(1),
    "random__reversed": lambda L: L.zeros(3).random_(5, 2),
    "random__empty": lambda L: L.zeros(3).random_(0),
    "random__uint8_to": lambda L: L.zeros(3, dtype=L.uint8).random_(300),
    "random__uint8_from": lambda L: L.zeros(3, dtype=L.uint8).random_(-1, 3),
    "normal_neg_std_tensor": lambda L: L.normal(L.zeros(3), -L.ones(3)),
    "normal_neg_std_float": lambda L: L.normal(0.0, -1.0, (2, 3)),
    "normal_neg_std_mixed": lambda L: L.normal(L.zeros(3), -1.0),
    "normal_bad_broadcast": lambda L: L.normal(L.zeros(3), L.ones(4)),
    "normal_int_mean": lambda L: L.normal(L.zeros(3, dtype=L.int64), L.ones(3)),
    "poisson_negative": lambda L: L.poisson(-L.ones(3)),
    "poisson_int": lambda L: L.poisson(L.ones(3, dtype=L.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_class_like_torch(name):
    f = ERRORS[name]
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(Exception) as fe:
        f(ft)
    assert type(fe.value) is type(te.value), (fe.value, te.value)


@pytest.mark.parametrize("name", ["mn_too_many", "mn_negative", "mn_zero_sum", "mn_int", "mn_3d", "mn_zero_samples",
                                  "bern_p_gt1", "uniform__reversed", "exponential__zero", "geometric__one",
                                  "random__reversed", "normal_neg_std_float", "normal__int"])
def test_error_message_like_torch(name):
    f = ERRORS[name]
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(Exception) as fe:
        f(ft)
    assert str(fe.value).split("\n")[0] == str(te.value).split("\n")[0]


def test_poisson_moments():
    ft.manual_seed(18)
    x = ft.poisson(ft.full((N,), 4.0, dtype=ft.float64))
    a = _np(x)
    assert x.dtype == ft.float64 and np.all(a == np.round(a)) and a.min() >= 0
    _check(a.mean(), a.var(), 4.0, 4.0)
    assert ft.poisson(ft.zeros(5)).tolist() == [0.0] * 5
