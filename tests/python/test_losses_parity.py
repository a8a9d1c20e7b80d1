"""Losses and distances of ``nn.functional`` and ``nn`` against PyTorch: values and input
gradients for every reduction in float32 and float64, module forms, and the exception
classes for bad shapes and arguments."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import errors_match, parity

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

REDUCTIONS = ("none", "mean", "sum")
DTYPES = ("float32", "float64")


def rnd(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def signs(*shape, seed=0, dtype="float32"):
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0).astype(dtype)


def F(lib):
    return lib.nn.functional


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)


def _multilabel_target(n, c, seed=3):
    rng = np.random.default_rng(seed)
    t = np.full((n, c), -1, dtype=np.int64)
    for i in range(n):
        k = rng.integers(0, c + 1)
        t[i, :k] = rng.permutation(c)[:k]
        if k < c and rng.random() < 0.5:
            t[i, k + 1:] = rng.integers(0, c, size=c - k - 1)  # ignored after the first -1
    return t


# (id, builder(dtype) -> arrays, fn(lib, reduction, *inputs), positions that need grad)
CASES = [
    ("smooth_l1", lambda d: (rnd(4, 5, dtype=d), rnd(4, 5, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).smooth_l1_loss(x, y, reduction=r, beta=0.7), (0, 1)),
    ("smooth_l1_beta0", lambda d: (rnd(4, 5, dtype=d), rnd(4, 5, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).smooth_l1_loss(x, y, reduction=r, beta=0.0), (0, 1)),
    ("huber", lambda d: (rnd(4, 5, dtype=d), rnd(4, 5, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).huber_loss(x, y, reduction=r, delta=0.6), (0, 1)),
    ("kl_div", lambda d: (np.log(np.random.default_rng(0).random((3, 6)).astype(d) + 0.1),
                          np.random.default_rng(1).random((3, 6)).astype(d)),
     lambda m, r, x, y: F(m).kl_div(x, y, reduction=r), (0, 1)),
    ("kl_div_log_target", lambda d: (rnd(3, 6, dtype=d), rnd(3, 6, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).kl_div(x, y, reduction=r, log_target=True), (0, 1)),
    ("soft_margin", lambda d: (rnd(4, 5, dtype=d), signs(4, 5, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).soft_margin_loss(x, y, reduction=r), (0,)),
    ("cosine_embedding", lambda d: (rnd(6, 5, dtype=d), rnd(6, 5, seed=1, dtype=d), signs(6, seed=2, dtype=d)),
     lambda m, r, a, b, y: F(m).cosine_embedding_loss(a, b, y, margin=0.1, reduction=r), (0, 1)),
    ("cosine_embedding_1d", lambda d: (rnd(5, dtype=d), rnd(5, seed=1, dtype=d), np.array(-1.0, dtype=d)),
     lambda m, r, a, b, y: F(m).cosine_embedding_loss(a, b, y, margin=-0.5, reduction=r), (0, 1)),
    ("margin_ranking", lambda d: (rnd(7, dtype=d), rnd(7, seed=1, dtype=d), signs(7, seed=2, dtype=d)),
     lambda m, r, a, b, y: F(m).margin_ranking_loss(a, b, y, margin=0.3, reduction=r), (0, 1)),
    ("hinge_embedding", lambda d: (rnd(4, 5, dtype=d), signs(4, 5, seed=1, dtype=d)),
     lambda m, r, x, y: F(m).hinge_embedding_loss(x, y, margin=0.8, reduction=r), (0,)),
    ("triplet", lambda d: (rnd(6, 4, dtype=d), rnd(6, 4, seed=1, dtype=d), rnd(6, 4, seed=2, dtype=d)),
     lambda m, r, a, p, n: F(m).triplet_margin_loss(a, p, n, margin=2.0, reduction=r), (0, 1, 2)),
    ("triplet_p1_swap", lambda d: (rnd(6, 4, dtype=d), rnd(6, 4, seed=1, dtype=d), rnd(6, 4, seed=2, dtype=d)),
     lambda m, r, a, p, n: F(m).triplet_margin_loss(a, p, n, margin=1.5, p=1, swap=True, reduction=r), (0, 1, 2)),
    ("triplet_with_distance", lambda d: (rnd(6, 4, dtype=d), rnd(6, 4, seed=1, dtype=d), rnd(6, 4, seed=2, dtype=d)),
     lambda m, r, a, p, n: F(m).triplet_margin_with_distance_loss(a, p, n, margin=1.2, swap=True, reduction=r),
     (0, 1, 2)),
    ("triplet_with_cosine_distance", lambda d: (rnd(6, 4, dtype=d), rnd(6, 4, seed=1, dtype=d), rnd(6, 4, seed=2, dtype=d)),
     lambda m, r, a, p, n: F(m).triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda u, v: 1.0 - F(m).cosine_similarity(u, v), margin=0.5, reduction=r),
     (0, 1, 2)),
    ("poisson_log_input", lambda d: (rnd(4, 5, dtype=d), np.random.default_rng(1).poisson(2.0, (4, 5)).astype(d)),
     lambda m, r, x, y: F(m).poisson_nll_loss(x, y, reduction=r), (0,)),
    ("poisson_full", lambda d: (np.random.default_rng(0).random((4, 5)).astype(d) + 0.2,
                                np.random.default_rng(1).poisson(2.0, (4, 5)).astype(d)),
     lambda m, r, x, y: F(m).poisson_nll_loss(x, y, log_input=False, full=True, reduction=r), (0,)),
    ("gaussian_nll", lambda d: (rnd(4, 3, dtype=d), rnd(4, 3, seed=1, dtype=d),
                                np.random.default_rng(2).random((4, 3)).astype(d)),
     lambda m, r, x, y, v: F(m).gaussian_nll_loss(x, y, v, reduction=r), (0, 1, 2)),
    ("gaussian_nll_homoscedastic_full", lambda d: (rnd(4, 3, dtype=d), rnd(4, 3, seed=1, dtype=d),
                                                   np.random.default_rng(2).random(4).astype(d) * 1e-6),
     lambda m, r, x, y, v: F(m).gaussian_nll_loss(x, y, v, full=True, eps=1e-3, reduction=r), (0, 1, 2)),
    ("multi_margin", lambda d: (rnd(5, 4, dtype=d), np.array([0, 3, 1, 1, 2])),
     lambda m, r, x, y: F(m).multi_margin_loss(x, y, reduction=r), (0,)),
    ("multi_margin_p2_weight", lambda d: (rnd(5, 4, dtype=d), np.array([0, 3, 1, 1, 2]),
                                          np.random.default_rng(2).random(4).astype(d)),
     lambda m, r, x, y, w: F(m).multi_margin_loss(x, y, p=2, margin=0.7, weight=w, reduction=r), (0,)),
    ("multi_margin_1d", lambda d: (rnd(4, dtype=d), np.array([2])),
     lambda m, r, x, y: F(m).multi_margin_loss(x, y, reduction=r), (0,)),
    ("multilabel_margin", lambda d: (rnd(6, 5, dtype=d), _multilabel_target(6, 5)),
     lambda m, r, x, y: F(m).multilabel_margin_loss(x, y, reduction=r), (0,)),
    ("multilabel_margin_1d", lambda d: (rnd(4, dtype=d), np.array([3, 0, -1, 1])),
     lambda m, r, x, y: F(m).multilabel_margin_loss(x, y, reduction=r), (0,)),
    ("multilabel_soft_margin", lambda d: (rnd(4, 5, dtype=d),
                                          (np.random.default_rng(1).random((4, 5)) < 0.5).astype(d)),
     lambda m, r, x, y: F(m).multilabel_soft_margin_loss(x, y, reduction=r), (0, 1)),
    ("multilabel_soft_margin_weight", lambda d: (rnd(4, 5, dtype=d),
                                                 (np.random.default_rng(1).random((4, 5)) < 0.5).astype(d),
                                                 np.random.default_rng(2).random(5).astype(d)),
     lambda m, r, x, y, w: F(m).multilabel_soft_margin_loss(x, y, weight=w, reduction=r), (0,)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_torch(case, reduction, dtype):
    _, build, fn, grad = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, lambda m, *a: fn(m, reduction, *a), *build(dtype), grad=grad, **tol(dtype))


def test_kl_div_batchmean_matches_torch():
    x = np.log(np.random.default_rng(0).random((3, 6)).astype("float64") + 0.1)
    y = np.random.default_rng(1).random((3, 6))
    y[0, 0] = 0.0  # xlogy's zero case
    parity(torch, lambda m, x, y: F(m).kl_div(x, y, reduction="batchmean"), x, y, grad=(0, 1), rtol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_distances_match_torch(dtype):
    a, b = rnd(5, 6, dtype=dtype), rnd(5, 6, seed=1, dtype=dtype)
    b[0] = 0.0  # a zero vector: the norm is clamped to eps
    for kw in ({}, {"dim": 0}, {"dim": -1, "eps": 1e-3}):
        parity(torch, lambda m, x, y: F(m).cosine_similarity(x, y, **kw), a, b, grad=(0, 1), **tol(dtype))
    parity(torch, lambda m, x, y: F(m).cosine_similarity(x, y), a, b[:1], grad=(0, 1), **tol(dtype))  # broadcast
    for kw in ({}, {"p": 1.0}, {"p": 3.0, "keepdim": True}, {"p": 2.0, "eps": 0.0}):
        parity(torch, lambda m, x, y: F(m).pairwise_distance(x, y, **kw), a, rnd(5, 6, seed=2, dtype=dtype),
               grad=(0, 1), **tol(dtype))
    parity(torch, lambda m, x, y: F(m).pairwise_distance(x, y), rnd(6, dtype=dtype), rnd(6, seed=1, dtype=dtype),
           grad=(0, 1), **tol(dtype))
    parity(torch, lambda m, x: F(m).pdist(x), a, grad=(0,), **tol(dtype))
    parity(torch, lambda m, x: F(m).pdist(x, p=1), a, grad=(0,), **tol(dtype))


MODULES = [
    ("SmoothL1Loss", dict(beta=0.5), lambda: (rnd(3, 4), rnd(3, 4, seed=1))),
    ("HuberLoss", dict(delta=0.5, reduction="sum"), lambda: (rnd(3, 4), rnd(3, 4, seed=1))),
    ("KLDivLoss", dict(reduction="batchmean", log_target=True), lambda: (rnd(3, 4), rnd(3, 4, seed=1))),
    ("SoftMarginLoss", dict(), lambda: (rnd(3, 4), signs(3, 4, seed=1))),
    ("CosineEmbeddingLoss", dict(margin=0.2), lambda: (rnd(3, 4), rnd(3, 4, seed=1), signs(3, seed=2))),
    ("MarginRankingLoss", dict(margin=0.2, reduction="none"), lambda: (rnd(5), rnd(5, seed=1), signs(5, seed=2))),
    ("HingeEmbeddingLoss", dict(margin=2.0), lambda: (rnd(3, 4), signs(3, 4, seed=1))),
    ("TripletMarginLoss", dict(p=1.0, swap=True), lambda: (rnd(3, 4), rnd(3, 4, seed=1), rnd(3, 4, seed=2))),
    ("TripletMarginWithDistanceLoss", dict(margin=0.5), lambda: (rnd(3, 4), rnd(3, 4, seed=1), rnd(3, 4, seed=2))),
    ("PoissonNLLLoss", dict(full=True), lambda: (rnd(3, 4), np.random.default_rng(1).poisson(3.0, (3, 4)).astype("float32"))),
    ("GaussianNLLLoss", dict(full=True), lambda: (rnd(3, 4), rnd(3, 4, seed=1), np.random.default_rng(2).random((3, 1)).astype("float32"))),
    ("MultiMarginLoss", dict(p=2, margin=0.5), lambda: (rnd(3, 4), np.array([1, 0, 3]))),
    ("MultiLabelMarginLoss", dict(), lambda: (rnd(3, 4), _multilabel_target(3, 4))),
    ("MultiLabelSoftMarginLoss", dict(), lambda: (rnd(3, 4), (rnd(3, 4, seed=1) > 0).astype("float32"))),
    ("CosineSimilarity", dict(dim=0, eps=1e-6), lambda: (rnd(3, 4), rnd(3, 4, seed=1))),
    ("PairwiseDistance", dict(p=3.0, keepdim=True), lambda: (rnd(3, 4), rnd(3, 4, seed=1))),
]


@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_loss_module_matches_torch(case):
    name, kw, build = case
    arrays = build()
    parity(torch, lambda m, *a: getattr(m.nn, name)(**kw)(*a), *arrays, grad=(0,), rtol=1e-4, atol=1e-5)
    assert repr(getattr(ft.nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))
    assert getattr(ft.nn, name)(**kw).__dict__.get("reduction") == getattr(torch.nn, name)(**kw).__dict__.get("reduction")


def test_loss_modules_weight_buffer_and_legacy_flags():
    w = rnd(4)
    for lib in (ft, torch):
        m = lib.nn.MultiMarginLoss(weight=lib.from_numpy(w))
        assert [k for k, _ in m.named_buffers()] == ["weight"]
        assert lib.nn.SmoothL1Loss(size_average=False).reduction == "sum"
        assert lib.nn.KLDivLoss(reduce=False).reduction == "none"
        assert lib.nn.MultiLabelSoftMarginLoss().weight is None


X = rnd(3, 4)
ERRORS = [
    ("cosine_embedding_2d_target", lambda m, x: F(m).cosine_embedding_loss(x, x, m.ones(3, 1)), (X,)),
    ("cosine_embedding_0d_target", lambda m, x: F(m).cosine_embedding_loss(x, x, m.ones(())), (X,)),
    ("cosine_embedding_bad_reduction", lambda m, x: F(m).cosine_embedding_loss(x, x, m.ones(3), reduction="x"), (X,)),
    ("margin_ranking_dims", lambda m, x: F(m).margin_ranking_loss(x, x, m.ones(3)), (X,)),
    ("hinge_broadcast", lambda m, x: F(m).hinge_embedding_loss(x, m.ones(4, 4)), (X,)),
    ("triplet_dims", lambda m, x: F(m).triplet_margin_loss(x, x, m.ones(4)), (X,)),
    ("triplet_margin", lambda m, x: F(m).triplet_margin_loss(x, x, x, margin=0.0), (X,)),
    ("triplet_distance_margin", lambda m, x: F(m).triplet_margin_with_distance_loss(x, x, x, margin=-1.0), (X,)),
    ("triplet_distance_reduction", lambda m, x: F(m).triplet_margin_with_distance_loss(x, x, x, reduction="x"), (X,)),
    ("triplet_module_margin", lambda m, x: m.nn.TripletMarginLoss(margin=-1.0), (X,)),
    ("poisson_reduction", lambda m, x: F(m).poisson_nll_loss(x, x, reduction="foo"), (X,)),
    ("gaussian_var_size", lambda m, x: F(m).gaussian_nll_loss(x, x, m.ones(2, 2)), (X,)),
    ("gaussian_negative_var", lambda m, x: F(m).gaussian_nll_loss(x, x, -m.ones(3, 4)), (X,)),
    ("gaussian_negative_float", lambda m, x: F(m).gaussian_nll_loss(x, x, -1.0), (X,)),
    ("gaussian_reduction", lambda m, x: F(m).gaussian_nll_loss(x, x, m.ones(3, 4), reduction="x"), (X,)),
    ("multi_margin_target_range", lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1, 5])), (X,)),
    ("multi_margin_target_size", lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1])), (X,)),
    ("multi_margin_p", lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1, 2]), p=3), (X,)),
    ("multi_margin_weight_2d", lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1, 2]), weight=m.ones(2, 2)), (X,)),
    ("multi_margin_weight_size", lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1, 2]), weight=m.ones(3)), (X,)),
    ("multi_margin_3d", lambda m, x: F(m).multi_margin_loss(m.ones(2, 3, 4), m.tensor([0, 1])), (X,)),
    ("multi_margin_module_p", lambda m, x: m.nn.MultiMarginLoss(p=3), (X,)),
    ("multilabel_margin_target_size", lambda m, x: F(m).multilabel_margin_loss(x, m.tensor([[0, 1, -1, 2]] * 2)), (X,)),
    ("multilabel_margin_target_range", lambda m, x: F(m).multilabel_margin_loss(x, m.tensor([[0, 9, -1, 2]] * 3)), (X,)),
    ("multilabel_soft_margin_reduction", lambda m, x: F(m).multilabel_soft_margin_loss(x, x, reduction="x"), (X,)),
    ("kl_div_reduction", lambda m, x: F(m).kl_div(x, x, reduction="foo"), (X,)),
    ("soft_margin_broadcast", lambda m, x: F(m).soft_margin_loss(x, m.ones(2, 4)), (X,)),
    ("smooth_l1_negative_beta", lambda m, x: F(m).smooth_l1_loss(x, x, beta=-1.0), (X,)),
    ("huber_zero_delta", lambda m, x: F(m).huber_loss(x, x, delta=0.0), (X,)),
    ("cosine_similarity_int", lambda m, x: F(m).cosine_similarity(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long), dim=0), (X,)),
    ("cosine_similarity_shapes", lambda m, x: F(m).cosine_similarity(m.ones(3, 4), m.ones(2, 4)), (X,)),
    ("pairwise_distance_shapes", lambda m, x: F(m).pairwise_distance(m.ones(3, 4), m.ones(2, 4)), (X,)),
    ("pdist_dims", lambda m, x: F(m).pdist(m.ones(3)), (X,)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_loss_errors_match_torch(case):
    _, fn, arrays = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors_match(torch, fn, *arrays)


def test_error_messages_match_torch():
    x = rnd(3, 4)
    for fn in (lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 1])),
               lambda m, x: F(m).cosine_embedding_loss(x, x, m.ones(())),
               lambda m, x: F(m).multilabel_margin_loss(x, m.tensor([[0, 1, -1, 2]] * 2)),
               lambda m, x: F(m).triplet_margin_loss(x, x, m.ones(4)),
               lambda m, x: F(m).gaussian_nll_loss(x, x, m.ones(2, 2))):
        msgs = []
        for lib in (ft, torch):
            with pytest.raises(Exception) as e:
                fn(lib, lib.from_numpy(x))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


# -- CTC -------------------------------------------------------------------------------------------

def _ctc_parity(dtype, targets, input_lengths, target_lengths, T=7, N=3, C=5, lengths_as_tensors=False,
                through_logits=False, **kw):
    x = np.random.default_rng(0).standard_normal((T, N, C)).astype(dtype)
    if N == 1 and kw.pop("unbatched", False):
        x = x[:, 0]
    outs, grads = [], []
    for lib in (ft, torch):
        leaf = lib.from_numpy(x.copy()).requires_grad_()
        lp = leaf.log_softmax(-1) if through_logits else leaf
        il, tl = input_lengths, target_lengths
        if lengths_as_tensors:
            il, tl = lib.tensor(il), lib.tensor(tl)
        out = lib.nn.functional.ctc_loss(lp, lib.from_numpy(targets), il, tl, **kw)
        up = lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(dtype))
        (out * up).sum().backward()
        outs.append(out)
        grads.append(leaf.grad)
    t = tol(dtype)
    np.testing.assert_allclose(as_np_(outs[0]), as_np_(outs[1]), **t)
    assert tuple(outs[0].shape) == tuple(outs[1].shape)
    np.testing.assert_allclose(as_np_(grads[0]), as_np_(grads[1]), **t)


def as_np_(t):
    return t.detach().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss_matches_torch(reduction, dtype):
    padded = np.array([[1, 2, 2, 0], [3, 1, 4, 4], [4, 4, 1, 2]])
    _ctc_parity(dtype, padded, [7, 6, 5], [3, 2, 4], reduction=reduction)
    _ctc_parity(dtype, padded, [7, 6, 5], [3, 0, 4], reduction=reduction, through_logits=True)
    _ctc_parity(dtype, padded, [7, 6, 5], [3, 2, 4], reduction=reduction, lengths_as_tensors=True, blank=4)
    concat = np.array([1, 2, 2, 3, 1, 4, 4, 1, 2])
    _ctc_parity(dtype, concat, [7, 6, 7], [3, 2, 4], reduction=reduction)
    _ctc_parity(dtype, np.array([1, 3, 3]), [6], [3], N=1, reduction=reduction, unbatched=True)
    # an impossible alignment: infinite loss, zeroed with its gradient
    _ctc_parity(dtype, np.array([[1, 1, 1], [2, 3, 2], [1, 2, 3]]), [7, 2, 6], [3, 3, 3],
                reduction=reduction, zero_infinity=True)


def test_ctc_loss_module_and_errors():
    assert repr(ft.nn.CTCLoss(blank=2)) == repr(torch.nn.CTCLoss(blank=2))
    x = np.random.default_rng(0).standard_normal((6, 2, 4)).astype("float32")
    tg = np.array([[1, 2, 2], [3, 1, 0]])
    parity(torch, lambda m, x, t: m.nn.CTCLoss(zero_infinity=True)(x.log_softmax(2), t, [6, 5], [3, 2]), x, tg,
           grad=(0,), rtol=1e-4, atol=1e-5)
    bad = [
        lambda m, x, t: F(m).ctc_loss(x, t, [7, 5], [3, 2]),
        lambda m, x, t: F(m).ctc_loss(x, t, [6, 5], [4, 2]),
        lambda m, x, t: F(m).ctc_loss(x, t, [6], [3, 2]),
        lambda m, x, t: F(m).ctc_loss(x, t, [6, 5], [3]),
        lambda m, x, t: F(m).ctc_loss(x, t, [6, 5], [3, 2], reduction="foo"),
        lambda m, x, t: F(m).ctc_loss(x, t, [6, 5], [3, 2], blank=4),
        lambda m, x, t: F(m).ctc_loss(x, t, m.tensor([6, 5]), [3, 2]),
        lambda m, x, t: F(m).ctc_loss(x[:, 0], t[0], 6, 3),
    ]
    for fn in bad:
        errors_match(torch, fn, x, tg)


# -- linear_cross_entropy and deprecated aliases ------------------------------------------------------

LCE = [
    ((5, 4), (6, 4), np.array([0, 5, 2, 2, 1]), {}),
    ((5, 4), (6, 4), np.array([0, 5, 2, 2, 1]), {"reduction": "sum", "ignore_index": 2, "label_smoothing": 0.1}),
    ((4,), (6, 4), np.array(3), {"reduction": "none"}),
    ((5, 4), (3, 2, 4), np.array([[0, 1], [2, 2], [1, 0], [0, 0], [2, 1]]), {}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(LCE)))
def test_linear_cross_entropy_matches_torch(case, dtype):
    xs, ws, target, kw = LCE[case]
    x, w = rnd(*xs, dtype=dtype), rnd(*ws, seed=1, dtype=dtype)
    b = rnd(*ws[:-1], seed=2, dtype=dtype)
    cw = np.random.default_rng(3).random(ws[0]).astype(dtype)
    parity(torch, lambda m, x, w, b, cw, t: F(m).linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, **kw),
           x, w, b, cw, target, grad=(0, 1, 2), **tol(dtype))
    parity(torch, lambda m, x, w, t: F(m).linear_cross_entropy(x, w, t, **kw), x, w, target, grad=(0, 1), **tol(dtype))


def test_linear_cross_entropy_module_options_and_errors():
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, ignore_index=1)
    fm = ft.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, ignore_index=1)
    assert repr(fm) == repr(tm)
    fm.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    x, t = rnd(5, 4), np.random.default_rng(1).integers(0, 3, (5, 2))
    np.testing.assert_allclose(fm(ft.from_numpy(x), ft.from_numpy(t)).item(),
                               tm(torch.from_numpy(x), torch.from_numpy(t)).item(), rtol=1e-5)
    opts = (ft.nn.LinearCrossEntropyOptions(batch_chunk_size=2), torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    assert repr(opts[0]).split("(", 1)[1] == repr(opts[1]).split("(", 1)[1]
    w = rnd(6, 4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, lambda m, x, w, t: F(m).linear_cross_entropy(
            x, w, t, options=m.nn.LinearCrossEntropyOptions(batch_chunk_size=2)), rnd(5, 4), w,
            np.array([0, 5, 2, 2, 1]), grad=(0, 1), rtol=1e-4, atol=1e-5)
    for fn in (lambda m: m.nn.LinearCrossEntropyOptions(acc_policy="x"),
               lambda m: m.nn.LinearCrossEntropyOptions(chunking_method="foo"),
               lambda m: m.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
               lambda m: F(m).linear_cross_entropy(m.ones(2, 3), m.ones(4, 2), m.zeros(2, dtype=m.long)),
               lambda m: F(m).linear_cross_entropy(m.ones(2, 2, 3), m.ones(4, 3), m.zeros(2, dtype=m.long)),
               lambda m: F(m).linear_cross_entropy(m.ones(3), m.ones(4, 2, 3), m.zeros(2, dtype=m.long)),
               lambda m: F(m).linear_cross_entropy(m.ones(2, 3), m.ones(4, 3), m.zeros(2, dtype=m.long),
                                                   linear_bias=m.ones(3)),
               lambda m: F(m).linear_cross_entropy(m.ones(2, 3), m.ones(4, 3), m.ones(2, 4), ignore_index=0),
               lambda m: m.nn.LinearCrossEntropyLoss(3, 4, weight=m.ones(3)),
               lambda m: m.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0)):
        errors_match(torch, fn)


def test_nll_loss_2d_deprecated_alias():
    x = np.log(np.random.default_rng(0).random((2, 3, 4, 4)).astype("float32"))
    t = np.random.default_rng(1).integers(0, 3, (2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, lambda m, x, t: m.nn.NLLLoss2d(reduction="sum")(x, t), x, t, grad=(0,), rtol=1e-4, atol=1e-4)
        assert repr(ft.nn.NLLLoss2d()) == repr(torch.nn.NLLLoss2d())
    with pytest.warns(UserWarning):
        ft.nn.NLLLoss2d()


def _asm_pair(head_bias=False):
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias)
    f = ft.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias)
    assert repr(f) == repr(t)
    assert [(k, tuple(v.shape)) for k, v in f.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
    f.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    return f, t


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_matches_torch(head_bias):
    f, t = _asm_pair(head_bias)
    x = rnd(9, 16)
    target = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    res = []
    for lib, m in ((ft, f), (torch, t)):
        xin = lib.from_numpy(x.copy()).requires_grad_()
        out, loss = m(xin, lib.from_numpy(target))
        (loss + out.sum() * 0.1).backward()
        res.append((as_np_(out), loss.item(), as_np_(xin.grad),
                    [as_np_(p.grad) for p in m.parameters()],
                    as_np_(m.log_prob(lib.from_numpy(x))), as_np_(m.predict(lib.from_numpy(x))),
                    as_np_(m(lib.from_numpy(x[1]), lib.tensor(5)).output)))
    a, b = res
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)
    np.testing.assert_allclose(a[2], b[2], rtol=1e-4, atol=1e-6)
    for g, h in zip(a[3], b[3]):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-6)
    for i in (4, 6):
        np.testing.assert_allclose(a[i], b[i], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(a[5], b[5])


def test_adaptive_log_softmax_errors():
    for fn in (lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
               lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
               lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10]),
               lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 3])):
        errors_match(torch, fn)
    for fn in (lambda m, a: a(m.ones(3, 16), m.tensor([0, 1])),
               lambda m, a: a(m.ones(3, 16), m.tensor([0, 1, 25])),
               lambda m, a: a(m.ones(3, 16), m.tensor([[0, 1, 2]])),
               lambda m, a: a(m.ones(16, 3, 1), m.tensor([0] * 16)),
               lambda m, a: a(m.ones(3, 16), m.tensor(1))):
        f, t = _asm_pair()
        errors_match(torch, lambda m: fn(m, f if m is ft else t))


def test_gumbel_softmax_distribution_and_straight_through():
    # The noise streams differ between the libraries, so compare distributions: by the
    # Gumbel-max trick the hard samples' class frequencies approach softmax(logits).
    logits = np.array([1.0, 0.0, -1.0, 2.0], dtype="float32")
    n = 20000
    freqs = []
    for lib in (ft, torch):
        lib.manual_seed(0)
        x = lib.from_numpy(np.tile(logits, (n, 1)))
        y = lib.nn.functional.gumbel_softmax(x, tau=0.7, hard=True)
        assert tuple(y.shape) == (n, 4) and str(y.dtype).endswith("float32")
        assert set(np.unique(as_np_(y)).tolist()) == {0.0, 1.0}
        np.testing.assert_allclose(as_np_(y).sum(1), 1.0)
        freqs.append(as_np_(y).mean(0))
    p = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(freqs[0], p, atol=0.015)
    np.testing.assert_allclose(freqs[0], freqs[1], atol=0.02)
    for lib in (ft, torch):
        x = lib.from_numpy(rnd(6, 5)).requires_grad_()
        soft = lib.nn.functional.gumbel_softmax(x, tau=0.5, dim=1)
        np.testing.assert_allclose(as_np_(soft).sum(1), 1.0, rtol=1e-5)
        hard = lib.nn.functional.gumbel_softmax(x, hard=True, dim=0)
        (hard * lib.from_numpy(rnd(6, 5, seed=1))).sum().backward()
        np.testing.assert_allclose(as_np_(x.grad).sum(0), 0.0, atol=1e-5)  # the soft sample's gradient
        with pytest.warns(UserWarning, match="deprecated"):
            lib.nn.functional.gumbel_softmax(x, eps=1e-5)
    assert ft.nn.functional.Tensor is ft.Tensor
