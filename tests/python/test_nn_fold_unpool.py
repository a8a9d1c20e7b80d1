"""fold/unfold (im2col/col2im), conv_tbc, max_unpool*, lp_pool*, fractional_max_pool*,
max_pool3d_with_indices and adaptive_max_pool3d_with_indices, functional and module forms,
against PyTorch: outputs, input gradients, printed forms, and errors (class and message)."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import as_np, assert_same, parity, rnd, errors_match, from_np

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def same_error(fn, match_message=True):
    errors_match(torch, fn, same_message=match_message)


T = from_np


# -- unfold / fold ----------------------------------------------------------------------------------

UNFOLD_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=(2, 3)),
    dict(kernel_size=3, padding=1),
    dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 1)),
    dict(kernel_size=(3, 2), dilation=2, stride=3, padding=1),
]


@pytest.mark.parametrize("kw", UNFOLD_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unfold_parity(kw, dtype):
    x = rnd(2, 3, 7, 8, dtype=dtype)
    parity(torch, lambda l, a: l.nn.functional.unfold(a, **kw), x, grad=(0,))
    parity(torch, lambda l, a: l.nn.functional.unfold(a, **kw), x[0], grad=(0,))


@pytest.mark.parametrize("kw", UNFOLD_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fold_parity(kw, dtype):
    cols = torch.nn.functional.unfold(torch.zeros(2, 3, 7, 8), **kw)
    c = rnd(*cols.shape, seed=1, dtype=dtype)
    parity(torch, lambda l, a: l.nn.functional.fold(a, (7, 8), **kw), c, grad=(0,), rtol=1e-5, atol=1e-5)
    parity(torch, lambda l, a: l.nn.functional.fold(a, (7, 8), **kw), c[0], grad=(0,), rtol=1e-5, atol=1e-5)


def test_fold_unfold_modules():
    for tm, fm in ((torch.nn.Fold((4, 5), 2), ft.nn.Fold((4, 5), 2)),
                   (torch.nn.Fold(output_size=6, kernel_size=(2, 3), dilation=1, padding=1, stride=2),
                    ft.nn.Fold(output_size=6, kernel_size=(2, 3), dilation=1, padding=1, stride=2)),
                   (torch.nn.Unfold(3, padding=1), ft.nn.Unfold(3, padding=1)),
                   (torch.nn.Unfold((2, 3), dilation=2, stride=(1, 2)), ft.nn.Unfold((2, 3), dilation=2, stride=(1, 2)))):
        assert repr(fm) == repr(tm)
    x = rnd(2, 3, 6, 7)
    parity(torch, lambda l, a: l.nn.Unfold((2, 3), dilation=2, stride=(1, 2))(a), x, grad=(0,))
    c = rnd(2, 12, 18, seed=2)
    parity(torch, lambda l, a: l.nn.Fold((4, 5), 2, padding=(0, 1))(a), c, grad=(0,))
    # Round trip: fold(unfold(x)) multiplies each element by the number of blocks covering it.
    xx = ft.from_numpy(x)
    back = ft.nn.functional.fold(ft.nn.functional.unfold(xx, 2), (6, 7), 2)
    ones = ft.nn.functional.fold(ft.nn.functional.unfold(ft.ones(2, 3, 6, 7), 2), (6, 7), 2)
    np.testing.assert_allclose(as_np(back), x * as_np(ones), rtol=1e-6)


def test_fold_unfold_errors():
    def fn(lib):
        return getattr(lib, "nn").functional

    x, c = rnd(2, 3, 5, 5), rnd(2, 12, 16)
    same_error(lambda l: fn(l).unfold(T(l, x), 6))
    same_error(lambda l: fn(l).unfold(T(l, x), 0))
    same_error(lambda l: fn(l).unfold(T(l, x), 2, stride=0))
    same_error(lambda l: fn(l).unfold(T(l, x), 2, dilation=0))
    same_error(lambda l: fn(l).unfold(T(l, x), 2, padding=-1))
    same_error(lambda l: fn(l).unfold(T(l, x[0, 0]), 2))
    same_error(lambda l: fn(l).unfold(T(l, x.astype("int64")), 2))
    same_error(lambda l: fn(l).unfold(T(l, np.zeros((2, 0, 5, 5), "float32")), 2))
    same_error(lambda l: fn(l).fold(T(l, c), (4, 4), 2))
    same_error(lambda l: fn(l).fold(T(l, rnd(2, 13, 16)), (5, 5), 2))
    same_error(lambda l: fn(l).fold(T(l, c[0, 0]), (5, 5), 2))
    same_error(lambda l: fn(l).fold(T(l, c), (5, 5), 2, stride=0))
    same_error(lambda l: fn(l).fold(T(l, c.astype("int64")), (5, 5), 2))
    same_error(lambda l: fn(l).fold(T(l, c), (0, 5), 2))
    # Empty batch is fine in both.
    parity(torch, lambda l, a: l.nn.functional.unfold(a, 2), np.zeros((0, 3, 5, 5), "float32"))


# -- conv_tbc ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_parity(pad):
    x, w, b = rnd(7, 3, 4), rnd(3, 4, 5, seed=1), rnd(5, seed=2)
    parity(torch, lambda l, a, ww, bb: l.nn.functional.conv_tbc(a, ww, bb, pad), x, w, b, grad=(0, 1, 2),
           rtol=1e-5, atol=1e-5)
    # PyTorch's functional form is its torch.conv_tbc.
    parity(torch, lambda l, a, ww, bb: (torch.conv_tbc if l is torch else l.nn.functional.conv_tbc)(a, ww, bb, pad),
           x, w, b)


def test_conv_tbc_errors():
    def f(l, x, w, b, *a):
        return l.nn.functional.conv_tbc(T(l, x), T(l, w), T(l, b) if b is not None else None, *a)

    same_error(lambda l: f(l, rnd(5, 2, 3), rnd(2, 4, 4), rnd(4)))
    same_error(lambda l: f(l, rnd(5, 2), rnd(2, 3, 4), rnd(4)))
    same_error(lambda l: f(l, rnd(5, 2, 3), rnd(2, 3), rnd(4)))
    same_error(lambda l: f(l, rnd(5, 2, 3), rnd(2, 3, 4), rnd(5)))
    same_error(lambda l: f(l, rnd(5, 2, 3), rnd(2, 3, 4), rnd(4, 1)))
    same_error(lambda l: f(l, rnd(5, 2, 3), rnd(2, 3, 4), None))
    parity(torch, lambda l, a, w, b: l.nn.functional.conv_tbc(a, w, b), rnd(1, 2, 3), rnd(2, 3, 4), rnd(4))


# -- max_unpool -------------------------------------------------------------------------------------


def _pool_then_unpool(lib, nd, x, k, s, p, out_size=None, module=False):
    pool = getattr(lib.nn.functional, f"max_pool{nd}d")
    v, i = pool(x, k, s, p, return_indices=True)
    v = v.detach().requires_grad_()
    if module:
        m = getattr(lib.nn, f"MaxUnpool{nd}d")(k, s, p)
        return m(v, i, out_size), v
    return getattr(lib.nn.functional, f"max_unpool{nd}d")(v, i, k, s, p, out_size), v


@pytest.mark.parametrize("nd,shape,k,s,p,out", [
    (1, (2, 3, 10), 2, None, 0, None),
    (1, (3, 11), 3, 2, 1, [11]),
    (2, (2, 3, 6, 8), 2, None, 0, None),
    (2, (2, 3, 6, 7), 2, None, 0, (7, 7)),
    (2, (3, 8, 8), (3, 2), (2, 1), (1, 0), (8, 8)),
    (2, (2, 3, 6, 6), 2, 2, 0, [2, 3, 7, 7]),
    (3, (2, 2, 4, 6, 6), 2, None, 0, None),
    (3, (2, 4, 6, 6), (2, 3, 2), (2, 2, 1), (1, 1, 0), (4, 6, 6)),
])
@pytest.mark.parametrize("module", [False, True])
def test_max_unpool_parity(nd, shape, k, s, p, out, module):
    x = rnd(*shape)
    res, grads = [], []
    for lib in (ft, torch):
        o, v = _pool_then_unpool(lib, nd, T(lib, x), k, s, p, out, module)
        up = T(lib, rnd(*tuple(o.shape), seed=3))
        (o * up).sum().backward()
        res.append(o)
        grads.append(v.grad)
    assert_same(res[0], res[1])
    assert_same(grads[0], grads[1])


def test_max_unpool_modules_repr():
    for args in ((2,), (2, 1, 1), ((2, 3),), ((2, 2, 3),)):
        for nd in (1, 2, 3):
            if isinstance(args[0], tuple) and len(args[0]) != nd:
                continue
            name = f"MaxUnpool{nd}d"
            assert repr(getattr(ft.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_max_unpool_errors():
    x = rnd(2, 3, 6, 6)
    t_v, t_i = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    v, i = t_v.numpy(), t_i.numpy()

    def up2(l, vv, ii, *a, **k):
        return l.nn.functional.max_unpool2d(T(l, vv), T(l, ii), *a, **k)

    same_error(lambda l: up2(l, v, i, 2, output_size=(9, 7)))
    same_error(lambda l: up2(l, v, i, 2, output_size=(7,)))
    same_error(lambda l: up2(l, v, i, 2, output_size=[1, 1, 9, 7]))
    # Which invalid index PyTorch names depends on its kernel's (parallel) visiting order.
    same_error(lambda l: up2(l, v, i * 10, 2), match_message=False)
    same_error(lambda l: up2(l, v, -i - 1, 2), match_message=False)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: \d+ \(output volumes are of size 6x6\)"):
        up2(ft, v, i * 10, 2)
    same_error(lambda l: up2(l, v, i.astype("int32"), 2))
    same_error(lambda l: up2(l, v, i.astype("float32"), 2))
    same_error(lambda l: up2(l, v, i[:, :, :2], 2))
    same_error(lambda l: up2(l, v[0, 0], i[0, 0], 2))
    same_error(lambda l: up2(l, v.astype("int64"), i, 2))
    same_error(lambda l: l.nn.functional.max_unpool3d(T(l, v[0]), T(l, i[0]), 2))
    same_error(lambda l: l.nn.functional.max_unpool1d(T(l, v[0, 0, 0]), T(l, i[0, 0, 0]), 2))
    x3 = rnd(2, 2, 4, 4, 4)
    v3, i3 = (a.numpy() for a in torch.nn.functional.max_pool3d(torch.from_numpy(x3), 2, return_indices=True))
    same_error(lambda l: l.nn.functional.max_unpool3d(T(l, v3), T(l, i3 * 100), 2), match_message=False)
    same_error(lambda l: l.nn.functional.max_unpool3d(T(l, v3), T(l, i3), 2, stride=0))


# -- lp_pool ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", [2, 1.5, 3.0, 1, float("inf")])
def test_lp_pool_parity(norm):
    x = np.abs(rnd(2, 3, 9)) + 0.1
    parity(torch, lambda l, a: l.nn.functional.lp_pool1d(a, norm, 3), x, grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda l, a: l.nn.functional.lp_pool1d(a, norm, 2, stride=3, ceil_mode=True), x, grad=(0,),
           rtol=1e-4, atol=1e-5)
    x2 = rnd(2, 3, 7, 8)
    parity(torch, lambda l, a: l.nn.functional.lp_pool2d(a, norm, (2, 3)), x2, grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda l, a: l.nn.functional.lp_pool2d(a, norm, 3, stride=2, ceil_mode=True), x2, grad=(0,),
           rtol=1e-4, atol=1e-5)
    x3 = rnd(2, 2, 5, 6, 7)
    parity(torch, lambda l, a: l.nn.functional.lp_pool3d(a, norm, 2), x3, grad=(0,), rtol=1e-4, atol=1e-5)
    parity(torch, lambda l, a: l.nn.functional.lp_pool3d(a, norm, (2, 3, 2), stride=(1, 2, 3)), x3, grad=(0,),
           rtol=1e-4, atol=1e-5)


def test_lp_pool_modules():
    for name, args, x in (("LPPool1d", (2, 3), rnd(2, 3, 9)), ("LPPool2d", (1.5, (2, 3), 1, True), rnd(2, 2, 6, 7)),
                          ("LPPool3d", (2, 2), rnd(1, 2, 4, 4, 4))):
        assert repr(getattr(ft.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
        parity(torch, lambda l, a: getattr(l.nn, name)(*args)(a), x, grad=(0,), rtol=1e-4, atol=1e-5)


# -- fractional max pooling -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(kernel_size=3, output_size=(7, 9)), dict(kernel_size=(2, 3), output_size=(15, 5)),
                                dict(kernel_size=2, output_ratio=(0.5, 0.7)), dict(kernel_size=3, output_size=1),
                                dict(kernel_size=(1, 2), output_size=(19, 16))])
def test_fractional_max_pool2d_exact(dtype, kw):
    x = rnd(2, 3, 19, 17, dtype=dtype)
    s = np.random.default_rng(5).random((2, 3, 2)).astype(dtype)
    out = parity(torch, lambda l, a, r: l.nn.functional.fractional_max_pool2d(a, return_indices=True,
                                                                               _random_samples=r, **kw),
                 x, s, grad=(0,), rtol=0, atol=0)
    assert len(out) == 2
    # Unbatched input takes the first batch row of samples.
    parity(torch, lambda l, a, r: l.nn.functional.fractional_max_pool2d_with_indices(a, _random_samples=r, **kw),
           x[0], s[:1], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(kernel_size=(2, 3, 2), output_size=(4, 5, 6)), dict(kernel_size=2, output_ratio=0.5),
                                dict(kernel_size=3, output_size=(1, 2, 7))])
def test_fractional_max_pool3d_exact(dtype, kw):
    x = rnd(2, 3, 9, 11, 10, dtype=dtype)
    s = np.random.default_rng(6).random((2, 3, 3)).astype(dtype)
    parity(torch, lambda l, a, r: l.nn.functional.fractional_max_pool3d(a, return_indices=True, _random_samples=r,
                                                                         **kw), x, s, grad=(0,), rtol=0, atol=0)
    parity(torch, lambda l, a, r: l.nn.functional.fractional_max_pool3d_with_indices(a, _random_samples=r, **kw),
           x[1], s[:1], rtol=0, atol=0)


def test_fractional_modules_and_random_samples():
    x = rnd(2, 3, 12, 12)
    s = np.random.default_rng(7).random((2, 3, 2)).astype("float32")
    parity(torch, lambda l, a, r: l.nn.FractionalMaxPool2d(3, output_size=5, _random_samples=r)(a), x, s,
           grad=(0,), rtol=0, atol=0)
    parity(torch, lambda l, a, r: l.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True,
                                                           _random_samples=r)(a), x, s, rtol=0, atol=0)
    x3 = rnd(1, 2, 6, 6, 6)
    s3 = np.random.default_rng(8).random((1, 2, 3)).astype("float32")
    parity(torch, lambda l, a, r: l.nn.FractionalMaxPool3d(2, output_size=(3, 4, 4), _random_samples=r)(a), x3, s3,
           grad=(0,), rtol=0, atol=0)
    for args, kw in (((3,), dict(output_size=5)), ((3,), dict(output_ratio=0.5))):
        assert repr(ft.nn.FractionalMaxPool2d(*args, **kw)) == repr(torch.nn.FractionalMaxPool2d(*args, **kw))
    m = ft.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.25))
    assert m.kernel_size == (3, 3) and m.output_ratio == (0.5, 0.25) and m.output_size is None
    assert list(m.state_dict()) == []
    # Without given samples: the right shape, and every output is the max of some kH x kW window.
    xt = ft.from_numpy(x)
    out, idx = ft.nn.functional.fractional_max_pool2d(xt, 3, output_size=(5, 4), return_indices=True)
    assert tuple(out.shape) == (2, 3, 5, 4) and tuple(idx.shape) == (2, 3, 5, 4)
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, as_np(idx).reshape(2, 3, -1), 2).reshape(2, 3, 5, 4),
                                  as_np(out))
    # Consecutive outputs come from windows whose starts increase (monotone sequences).
    rows = as_np(idx) // 12
    assert (np.diff(rows, axis=2) >= 0).all()


def test_fractional_errors():
    x = rnd(2, 3, 9, 8)
    s = np.random.default_rng(5).random((2, 3, 2)).astype("float32")

    def fp(l, xx=x, ss=s, *a, **k):
        return l.nn.functional.fractional_max_pool2d(T(l, xx), *a, _random_samples=T(l, ss), **k)

    same_error(lambda l: fp(l, x, s, 3, output_size=7))
    same_error(lambda l: fp(l, x, s, 3, output_size=(8, 6)))
    same_error(lambda l: fp(l, x, s[:1], 3, output_size=5))
    same_error(lambda l: fp(l, x, s[:, :, :1], 3, output_size=5))
    same_error(lambda l: fp(l, x, s.astype("float64"), 3, output_size=5))
    same_error(lambda l: l.nn.functional.fractional_max_pool2d(T(l, x), 3))
    same_error(lambda l: l.nn.functional.fractional_max_pool2d(T(l, x), 3, output_ratio=(0.5, 0.5, 0.5)))
    same_error(lambda l: fp(l, x, s, (2, 3, 4), output_size=4))
    same_error(lambda l: l.nn.functional.fractional_max_pool3d(T(l, rnd(2, 3, 5, 5, 5)), 2, output_size=5))
    same_error(lambda l: l.nn.functional.fractional_max_pool3d(T(l, rnd(2, 3, 5, 6, 6)), 2, output_size=(3, 4, 5)))
    for lib_kw in (dict(), dict(output_size=3, output_ratio=0.5), dict(output_ratio=1.5)):
        same_error(lambda l: l.nn.FractionalMaxPool2d(3, **lib_kw))
        same_error(lambda l: l.nn.FractionalMaxPool3d(3, **lib_kw))
    same_error(lambda l: l.nn.FractionalMaxPool3d(0, output_size=3))


# -- *_with_indices spellings -----------------------------------------------------------------------


def test_3d_with_indices():
    x = rnd(2, 3, 6, 7, 8)
    parity(torch, lambda l, a: l.nn.functional.max_pool3d_with_indices(a, 2), x, grad=(0,))
    parity(torch, lambda l, a: l.nn.functional.max_pool3d_with_indices(a, (2, 3, 2), (1, 2, 2), 1, ceil_mode=True),
           x, grad=(0,))
    parity(torch, lambda l, a: l.nn.functional.adaptive_max_pool3d_with_indices(a, (3, 4, 5)), x, grad=(0,))
    parity(torch, lambda l, a: l.nn.functional.adaptive_max_pool3d_with_indices(a, 2), x[0], grad=(0,))
