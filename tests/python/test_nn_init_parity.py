"""nn.init against PyTorch: gains and fans exactly, deterministic fills exactly, random
fills by their exact bounds and by sample statistics next to PyTorch's own samples."""

import math
import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _np(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None), ("conv_transpose1d", None),
         ("conv_transpose2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
         ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("leaky_relu", math.sqrt(5)),
         ("selu", None)]


@pytest.mark.parametrize("nl,param", GAINS)
def test_calculate_gain_exact(nl, param):
    ours = ft.nn.init.calculate_gain(nl, param)
    ref = torch.nn.init.calculate_gain(nl, param)
    assert ours == ref and type(ours) is type(ref)


@pytest.mark.parametrize("nl,param", [("softmax", None), ("leaky_relu", True), ("leaky_relu", "x")])
def test_calculate_gain_errors(nl, param):
    with pytest.raises(ValueError) as t:
        torch.nn.init.calculate_gain(nl, param)
    with pytest.raises(ValueError) as f:
        ft.nn.init.calculate_gain(nl, param)
    assert str(f.value) == str(t.value)


SHAPES = [(3, 4), (7, 2, 3), (8, 4, 3, 3), (2, 5, 1, 2, 3), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_exact(shape):
    ours = ft.nn.init._calculate_fan_in_and_fan_out(ft.empty(*shape))
    ref = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    assert ours == ref
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert ft.nn.init._calculate_correct_fan(ft.empty(*shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.empty(*shape), mode)


def test_fan_errors():
    for fn in ("xavier_uniform_", "kaiming_normal_", "xavier_normal_", "kaiming_uniform_"):
        with pytest.raises(ValueError) as t:
            getattr(torch.nn.init, fn)(torch.empty(5))
        with pytest.raises(ValueError) as f:
            getattr(ft.nn.init, fn)(ft.empty(5))
        assert str(f.value) == str(t.value)
    with pytest.raises(ValueError) as t:
        torch.nn.init.kaiming_uniform_(torch.empty(3, 4), mode="fan_avg")
    with pytest.raises(ValueError) as f:
        ft.nn.init.kaiming_uniform_(ft.empty(3, 4), mode="fan_avg")
    assert str(f.value) == str(t.value)


# (function, kwargs, shape, exact bound or None, expected std) — bounds and stds from the
# formulas in PyTorch's documentation; PyTorch's own samples are checked against them too.
def _xavier_std(shape, gain=1.0):
    fi, fo = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    return gain * math.sqrt(2.0 / (fi + fo))


RANDOM = [
    ("uniform_", dict(a=-0.3, b=0.7), (200, 300), (-0.3, 0.7), 1.0 / math.sqrt(12)),
    ("normal_", dict(mean=0.5, std=2.0), (200, 300), None, 2.0),
    ("xavier_uniform_", dict(), (256, 128, 3), "sym", _xavier_std((256, 128, 3))),
    ("xavier_uniform_", dict(gain=2.5), (300, 200), "sym", _xavier_std((300, 200), 2.5)),
    ("xavier_normal_", dict(gain=0.5), (300, 200), None, _xavier_std((300, 200), 0.5)),
    ("kaiming_uniform_", dict(), (200, 300), "sym", math.sqrt(2.0 / (1 + 0.0)) / math.sqrt(300)),
    ("kaiming_uniform_", dict(a=math.sqrt(5)), (128, 64, 3, 3), "sym",
     math.sqrt(2.0 / 6) / math.sqrt(64 * 9)),
    ("kaiming_uniform_", dict(mode="fan_out", nonlinearity="relu"), (128, 64, 3), "sym",
     math.sqrt(2.0) / math.sqrt(128 * 3)),
    ("kaiming_normal_", dict(a=0.1, mode="fan_out"), (250, 300), None,
     math.sqrt(2.0 / 1.01) / math.sqrt(250)),
    ("kaiming_normal_", dict(nonlinearity="tanh"), (250, 300), None, (5.0 / 3) / math.sqrt(300)),
]


@pytest.mark.parametrize("case", range(len(RANDOM)), ids=[f"{c[0]}-{i}" for i, c in enumerate(RANDOM)])
def test_random_fills_bounds_and_statistics(case):
    name, kwargs, shape, bound, std = RANDOM[case]
    ref = _np(getattr(torch.nn.init, name)(torch.empty(*shape), **kwargs))
    ours_t = ft.empty(*shape)
    out = getattr(ft.nn.init, name)(ours_t, **kwargs)
    assert out is ours_t, "fills in place and returns the tensor"
    ours = _np(ours_t)
    n = ours.size
    if bound is not None:
        lo, hi = (-math.sqrt(3.0) * std, math.sqrt(3.0) * std) if bound == "sym" else bound
        for x in (ref, ours):
            # float32 rounding of the bound itself is the only slack.
            assert x.min() >= lo - 1e-6 * abs(lo) and x.max() <= hi + 1e-6 * abs(hi)
            assert x.min() < lo + (hi - lo) * 0.01 and x.max() > hi - (hi - lo) * 0.01
    # Standard error of the sample std is ~ std / sqrt(2n); allow 6 of them.
    tol = 6 * std / math.sqrt(2 * n)
    assert abs(ref.std() - std) < tol
    assert abs(ours.std() - std) < tol
    mean = kwargs.get("mean", (sum(bound) / 2) if isinstance(bound, tuple) else 0.0)
    assert abs(ours.mean() - mean) < 6 * std / math.sqrt(n)
    assert abs(ref.mean() - mean) < 6 * std / math.sqrt(n)


@pytest.mark.parametrize("kwargs", [dict(), dict(mean=0.5, std=1.0, a=-0.5, b=1.0),
                                    dict(mean=0.0, std=1.0, a=1.5, b=3.0), dict(mean=1.0, std=0.1, a=0.95, b=0.97)])
def test_trunc_normal_within_bounds_and_like_torch(kwargs):
    shape = (300, 200)
    ref = _np(torch.nn.init.trunc_normal_(torch.empty(*shape), **kwargs))
    ours = _np(ft.nn.init.trunc_normal_(ft.empty(*shape), **kwargs))
    a, b = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
    assert ours.min() >= a and ours.max() <= b
    assert ref.min() >= np.float32(a) and ref.max() <= np.float32(b)
    width = b - a
    n = ours.size
    assert abs(ours.mean() - ref.mean()) < 8 * ref.std() / math.sqrt(n) + 1e-6 * width
    assert abs(ours.std() - ref.std()) < 8 * ref.std() / math.sqrt(n) + 1e-6 * width
    # The shape of the distribution too: compare deciles.
    np.testing.assert_allclose(np.quantile(ours, np.linspace(0.1, 0.9, 9)),
                               np.quantile(ref, np.linspace(0.1, 0.9, 9)), atol=0.02 * width)


def test_trunc_normal_warns_like_torch():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        torch.nn.init.trunc_normal_(torch.empty(10), mean=10.0, std=1.0, a=-1, b=1)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        ft.nn.init.trunc_normal_(ft.empty(10), mean=10.0, std=1.0, a=-1, b=1)


@pytest.mark.parametrize("shape,gain", [((6, 4), 1.0), ((4, 6), 2.0), ((5, 3, 2), 0.5), ((64, 64), 1.0),
                                         ((3, 40), 1.3)])
def test_orthogonal(shape, gain):
    ref = _np(torch.nn.init.orthogonal_(torch.empty(*shape), gain=gain)).reshape(shape[0], -1)
    ours = _np(ft.nn.init.orthogonal_(ft.empty(*shape), gain=gain)).reshape(shape[0], -1)
    rows, cols = ours.shape
    gram = ours.T @ ours if rows >= cols else ours @ ours.T
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=2e-5 * gain ** 2)
    ref_gram = ref.T @ ref if rows >= cols else ref @ ref.T
    np.testing.assert_allclose(ref_gram, gain ** 2 * np.eye(min(rows, cols)), atol=2e-5 * gain ** 2)
    # Same element scale: every entry has variance gain**2 / max(rows, cols).
    np.testing.assert_allclose((ours ** 2).mean(), (ref ** 2).mean(), rtol=1e-5)


def test_orthogonal_is_haar_distributed():
    # A Haar-random orthogonal matrix has no preferred sign: the mean of the diagonal
    # over many draws is ~0 (a QR without the sign fix would bias it).
    diag = np.stack([np.diag(_np(ft.nn.init.orthogonal_(ft.empty(8, 8)))) for _ in range(200)])
    assert abs(diag.mean()) < 0.06


def test_sparse_zero_counts_like_torch():
    for sparsity in (0.1, 0.35, 0.9):
        ref = _np(torch.nn.init.sparse_(torch.empty(40, 300), sparsity, std=0.5))
        ours = _np(ft.nn.init.sparse_(ft.empty(40, 300), sparsity, std=0.5))
        assert ((ours == 0).sum(0) == (ref == 0).sum(0)).all()
        assert abs(ours[ours != 0].std() - 0.5) < 0.03
        # Which rows are zeroed differs from column to column.
        assert len({tuple(np.flatnonzero(ours[:, j] == 0)) for j in range(300)}) > 200


DET = [
    ("constant_", (3, 4), dict(val=2.5)), ("ones_", (2, 3, 4), {}), ("zeros_", (5,), {}),
    ("eye_", (3, 5), {}), ("eye_", (6, 2), {}), ("dirac_", (4, 3, 5), {}), ("dirac_", (6, 4, 3, 3), dict(groups=2)),
    ("dirac_", (4, 6, 3, 4, 5), {}), ("dirac_", (6, 2, 2, 2), dict(groups=3)),
]


@pytest.mark.parametrize("name,shape,kwargs", DET, ids=[f"{d[0]}-{i}" for i, d in enumerate(DET)])
def test_deterministic_fills_exact(name, shape, kwargs):
    t = torch.randn(*shape, requires_grad=True)
    f = ft.randn(*shape, requires_grad=True)
    getattr(torch.nn.init, name)(t, **kwargs)
    out = getattr(ft.nn.init, name)(f, **kwargs)
    assert out is f and f.requires_grad and f.is_leaf
    np.testing.assert_array_equal(_np(f), _np(t))


@pytest.mark.parametrize("name,shape,kwargs", [("eye_", (2, 2, 2), {}), ("dirac_", (2, 2), {}),
                                               ("dirac_", (3, 2, 2), dict(groups=2)),
                                               ("orthogonal_", (3,), {}), ("sparse_", (2, 2, 2), dict(sparsity=0.1))])
def test_shape_errors_like_torch(name, shape, kwargs):
    with pytest.raises(ValueError) as t:
        getattr(torch.nn.init, name)(torch.empty(*shape), **kwargs)
    with pytest.raises(ValueError) as f:
        getattr(ft.nn.init, name)(ft.empty(*shape), **kwargs)
    assert str(f.value) == str(t.value)


def test_zero_element_kaiming_warns_like_torch():
    for lib in (torch, ft):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_normal_(lib.empty(3, 0))


DEPRECATED = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
              "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


@pytest.mark.parametrize("old", DEPRECATED)
def test_deprecated_aliases_warn_like_torch(old):
    args = {"constant": (1.5,), "sparse": (0.5,)}.get(old, ())
    shape = (3, 4, 3) if old == "dirac" else (4, 4)
    msgs = []
    for lib in (torch, ft):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, old)(lib.empty(*shape), *args)
        assert tuple(out.shape) == shape
        msgs.append([(x.category, str(x.message)) for x in w])
        assert getattr(lib.nn.init, old).__name__ == old
    assert msgs[1] == msgs[0]


def test_generator_makes_fills_reproducible():
    for name, args in [("uniform_", ()), ("normal_", ()), ("xavier_uniform_", ()), ("kaiming_normal_", ()),
                       ("trunc_normal_", ()), ("orthogonal_", ()), ("sparse_", (0.5,))]:
        outs = []
        for seed in (3, 3, 4):
            g = ft.Generator().manual_seed(seed)
            outs.append(_np(getattr(ft.nn.init, name)(ft.empty(6, 5), *args, generator=g)))
        np.testing.assert_array_equal(outs[0], outs[1])
        assert not np.array_equal(outs[0], outs[2]), name


def test_no_autograd_history():
    w = ft.nn.Parameter(ft.empty(4, 3))
    for name in ["uniform_", "normal_", "xavier_uniform_", "kaiming_uniform_", "orthogonal_", "trunc_normal_",
                 "ones_", "zeros_", "eye_"]:
        getattr(ft.nn.init, name)(w)
        assert w.is_leaf and w.grad_fn is None


def test_all_matches_torch():
    assert sorted(ft.nn.init.__all__) == sorted(torch.nn.init.__all__)
