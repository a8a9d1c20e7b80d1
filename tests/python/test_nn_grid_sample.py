"""affine_grid and grid_sample against PyTorch: every mode (bilinear, nearest, bicubic), padding
mode (zeros, border, reflection) and align_corners, 4-d and 5-d, outputs and gradients for the
input and the grid; the GRID_SAMPLE_* tables; warnings and errors (class and message)."""

import itertools
import warnings

import numpy as np
import pytest

import ferrotorch as ft
from _parity import parity, rnd, errors_match, from_np

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def same_error(fn, match_message=True):
    errors_match(torch, fn, same_message=match_message)


T = from_np


def grid(*shape, seed=1, dtype="float32", spread=1.5):
    # Points inside and outside [-1, 1], so every padding rule is exercised.
    return (np.random.default_rng(seed).random(shape) * 2 * spread - spread).astype(dtype)


def test_tables():
    assert ft.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES == torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert ft.nn.functional.GRID_SAMPLE_PADDING_MODES == torch.nn.functional.GRID_SAMPLE_PADDING_MODES


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid(align, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    parity(torch, lambda l, th: l.nn.functional.affine_grid(th, [2, 3, 4, 5], align_corners=align),
           rnd(2, 2, 3, dtype=dtype), grad=(0,), **tol)
    parity(torch, lambda l, th: l.nn.functional.affine_grid(th, (3, 1, 4, 5, 6), align_corners=align),
           rnd(3, 3, 4, dtype=dtype), grad=(0,), **tol)
    # A 1-pixel side gives the centre coordinate 0.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(torch, lambda l, th: l.nn.functional.affine_grid(th, [2, 3, 1, 5], align_corners=align),
               rnd(2, 2, 3, dtype=dtype), grad=(0,), **tol)


def test_affine_grid_warnings_and_errors():
    th = rnd(2, 2, 3)
    for lib in (ft, torch):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
            lib.nn.functional.affine_grid(T(lib, th), [2, 3, 4, 5])
        with pytest.warns(UserWarning, match="unit-size grids when align_corners=True"):
            lib.nn.functional.affine_grid(T(lib, th), [2, 3, 1, 5], align_corners=True)
    ag = lambda l, t, s: l.nn.functional.affine_grid(T(l, t), s, align_corners=False)  # noqa: E731
    same_error(lambda l: ag(l, rnd(2, 3, 3), [2, 3, 4, 5]))
    same_error(lambda l: ag(l, rnd(2, 2, 3), [2, 3, 4, 5, 6]))
    same_error(lambda l: ag(l, rnd(2, 2, 3), [2, 3, 4]))
    same_error(lambda l: ag(l, rnd(2, 2, 3).astype("int64"), [2, 3, 4, 5]))
    same_error(lambda l: ag(l, rnd(2, 2, 3), [2, 3, 0, 5]))
    same_error(lambda l: ag(l, rnd(3, 2, 3), [2, 3, 4, 5]))


CASES = list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_grid_sample_4d(mode, padding, align):
    x, g = rnd(2, 3, 5, 6, dtype="float64"), grid(2, 4, 7, 2, dtype="float64")
    parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, align), x, g, grad=(0, 1),
           rtol=1e-10, atol=1e-10)
    # float32 too, with a tolerance for the different summation orders.
    parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, align), x.astype("float32"),
           g.astype("float32"), grad=(0, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode,padding,align", [c for c in CASES if c[0] != "bicubic"])
def test_grid_sample_5d(mode, padding, align):
    x, g = rnd(2, 3, 4, 5, 6, dtype="float64"), grid(2, 2, 3, 4, 3, dtype="float64")
    parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, align), x, g, grad=(0, 1),
           rtol=1e-10, atol=1e-10)


def test_grid_sample_far_outside_and_identity():
    # Reflection folds coordinates many spans away; identity affine grid reproduces the input.
    x, g = rnd(1, 2, 4, 5, dtype="float64"), grid(1, 3, 3, 2, dtype="float64", spread=7.0)
    for mode, padding in itertools.product(["bilinear", "nearest", "bicubic"], ["border", "reflection"]):
        parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, False), x, g, grad=(0, 1),
               rtol=1e-10, atol=1e-10)
    th = np.array([[[1, 0, 0], [0, 1, 0]]], "float64")
    gi = ft.nn.functional.affine_grid(ft.from_numpy(th), [1, 2, 4, 5], align_corners=False)
    out = ft.nn.functional.grid_sample(ft.from_numpy(x), gi, align_corners=False)
    np.testing.assert_allclose(out.numpy(), x, rtol=1e-12, atol=1e-12)


def test_grid_sample_spatial_transformer_step():
    # affine_grid + grid_sample end to end, gradients reaching theta.
    parity(torch, lambda l, a, th: l.nn.functional.grid_sample(
        a, l.nn.functional.affine_grid(th, [2, 3, 6, 5], align_corners=False), align_corners=False),
        rnd(2, 3, 8, 7), rnd(2, 2, 3, seed=3) * 0.5, grad=(0, 1), rtol=1e-4, atol=1e-5)


def test_grid_sample_warning_and_errors():
    x, g = rnd(2, 3, 5, 6), grid(2, 4, 7, 2)
    for lib in (ft, torch):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
            lib.nn.functional.grid_sample(T(lib, x), T(lib, g))
    gs = lambda l, a, gg, *r, **k: l.nn.functional.grid_sample(T(l, a), T(l, gg), *r, **k)  # noqa: E731
    same_error(lambda l: gs(l, x, g, mode="foo"))
    same_error(lambda l: gs(l, x, g, padding_mode="foo"))
    same_error(lambda l: gs(l, x, g.astype("float64"), align_corners=False))
    same_error(lambda l: gs(l, x, g[:1], align_corners=False))
    same_error(lambda l: gs(l, x, g[..., :1], align_corners=False))
    same_error(lambda l: gs(l, x[0], g, align_corners=False))
    same_error(lambda l: gs(l, x, g[0], align_corners=False))
    same_error(lambda l: gs(l, rnd(2, 3, 4, 5, 6), grid(2, 2, 3, 4, 3), mode="bicubic", align_corners=False))
    same_error(lambda l: gs(l, rnd(2, 3, 4, 5, 6), grid(2, 2, 3, 4, 2), align_corners=False))
    same_error(lambda l: gs(l, rnd(2, 3, 5), grid(2, 3, 1), align_corners=False))
    same_error(lambda l: gs(l, np.zeros((2, 3, 0, 6), "float32"), g, align_corners=False))
    same_error(lambda l: gs(l, x.astype("int64"), g.astype("int64"), align_corners=False))
    parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, align_corners=False),
           np.zeros((0, 3, 5, 6), "float32"), np.zeros((0, 4, 7, 2), "float32"))


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_grid_sample_non_finite_grid(mode, padding, align):
    # NaN / inf coordinates: PyTorch's 2-d (vectorised) and 3-d (scalar) kernels
    # treat them differently; both are mirrored.
    x = np.arange(1, 21, dtype="float32").reshape(1, 1, 4, 5)
    g = np.array([[[[np.nan, 0.1], [0.2, np.inf], [-np.inf, 0.3], [0.5, 0.5], [-7.3, 2.9]]]], "float32")
    parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, align), x, g)
    if mode != "bicubic":
        x3 = np.arange(1, 61, dtype="float32").reshape(1, 1, 3, 4, 5)
        g3 = np.array([[[[[np.nan, 0.1, 0.0], [0.2, np.inf, 0.0], [-np.inf, 0.3, 0.0], [0.0, 0.0, np.nan],
                          [0.1, 0.2, 0.3]]]]], "float32")
        parity(torch, lambda l, a, gg: l.nn.functional.grid_sample(a, gg, mode, padding, align), x3, g3)
