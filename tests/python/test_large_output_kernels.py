"""Kernel paths that only large tensors take, compared with PyTorch: outputs of
4 MiB and more are written with streaming stores (binary ops, including the
``out=`` form, layer norm and group norm), and the norms' row passes prefetch
the rows ahead. Row lengths that are not a multiple of any vector width,
outputs that start off a vector boundary, broadcast operands, in-place ops,
and every float dtype with and without affine parameters."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

RNG = np.random.default_rng(16)

# Past the 4 MiB of float32 output at which kernels stream.
BIG = (1 << 20) + 37

BINARY = {
    "add": (ft.add, torch.add),
    "sub": (ft.sub, torch.sub),
    "mul": (ft.mul, torch.mul),
    "div": (ft.div, torch.div),
    "maximum": (ft.maximum, torch.maximum),
    "minimum": (ft.minimum, torch.minimum),
}


def both(a):
    """The same values as a ferrotorch and a torch tensor."""
    return ft.from_numpy(a.copy()), torch.from_numpy(a.copy())


def same_bits(f, t):
    assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype)
    np.testing.assert_array_equal(f.numpy(), t.numpy())


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_out_into_a_large_unaligned_output(op, dtype):
    fop, top = BINARY[op]
    a = RNG.standard_normal(BIG).astype(dtype)
    b = RNG.standard_normal(BIG).astype(dtype)
    b[::1001] = np.nan
    (fa, ta), (fb, tb) = both(a), both(b)
    # A contiguous output one element into its storage starts off every
    # vector boundary.
    fbuf, tbuf = ft.zeros(BIG + 1, dtype=getattr(ft, dtype)), torch.zeros(BIG + 1, dtype=getattr(torch, dtype))
    fc, tc = fbuf[1:], tbuf[1:]
    v0 = fc._version
    assert fop(fa, fb, out=fc) is fc
    top(ta, tb, out=tc)
    same_bits(fc, tc)
    same_bits(fbuf, tbuf)
    assert fc._version > v0


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_large_broadcast_rows_and_scalars(op):
    fop, top = BINARY[op]
    # Rows of 4099: past the length at which a broadcast's rows stream.
    x = RNG.standard_normal((257, 4099)).astype(np.float32)
    row = RNG.standard_normal(4099).astype(np.float32)
    (fx, tx), (fr, tr) = both(x), both(row)
    same_bits(fop(fx, fr), top(tx, tr))
    same_bits(fop(fx, ft.tensor(0.75)), top(tx, torch.tensor(0.75)))
    fo, to = ft.empty((257, 4099)), torch.empty((257, 4099))
    fop(fr, fx, out=fo)
    top(tr, tx, out=to)
    same_bits(fo, to)


def test_binary_large_in_place_and_alpha():
    x = RNG.standard_normal(BIG).astype(np.float32)
    y = RNG.standard_normal(BIG).astype(np.float32)
    (fx, tx), (fy, ty) = both(x), both(y)
    fx.mul_(fy)
    tx.mul_(ty)
    same_bits(fx, tx)
    fx += fy
    tx += ty
    same_bits(fx, tx)
    fo, to = ft.empty(BIG), torch.empty(BIG)
    ft.add(fx, fy, alpha=2.5, out=fo)
    torch.add(tx, ty, alpha=2.5, out=to)
    np.testing.assert_allclose(fo.numpy(), to.numpy(), rtol=1e-6, atol=1e-6)


DT = {
    "float32": (ft.float32, torch.float32, 1e-5),
    "float64": (ft.float64, torch.float64, 1e-12),
    "bfloat16": (ft.bfloat16, torch.bfloat16, 2e-2),
}


def pair(a, dtype):
    fdt, tdt, _ = DT[dtype]
    return ft.from_numpy(a).to(fdt), torch.from_numpy(a).to(tdt)


def close(f, t, tol):
    assert tuple(f.shape) == tuple(t.shape) and str(f.dtype) == str(t.dtype)
    np.testing.assert_allclose(f.to(ft.float64).numpy(), t.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("n", [1024, 1031, 3, 20000])
def test_layer_norm_large_rows_match_torch(dtype, affine, n):
    rows = (5 << 20) // (4 * n) + 3
    x = (RNG.standard_normal((rows, n)) * 2 + 0.5).astype(np.float64)
    w, b = RNG.standard_normal(n), RNG.standard_normal(n)
    fx, tx = pair(x, dtype)
    fw, tw = pair(w, dtype) if affine else (None, None)
    fb, tb = pair(b, dtype) if affine else (None, None)
    tol = DT[dtype][2]
    close(ft.nn.functional.layer_norm(fx, (n,), fw, fb), torch.nn.functional.layer_norm(tx, (n,), tw, tb), tol)
    fy, fm, fr = ft.native_layer_norm(fx, (n,), fw, fb, 1e-5)
    ty, tm, tr = torch.native_layer_norm(tx, (n,), tw, tb, 1e-5)
    close(fy, ty, tol)
    close(fm, tm, tol)
    close(fr, tr, tol)


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape,groups", [((12, 64, 56, 56), 32), ((700, 6, 31, 29), 3), ((17, 6, 101, 103), 3)])
def test_group_norm_large_rows_match_torch(dtype, affine, shape, groups):
    x = (RNG.standard_normal(shape) * 3 - 1).astype(np.float64)
    c = shape[1]
    fx, tx = pair(x, dtype)
    fw, tw = pair(RNG.standard_normal(c), dtype) if affine else (None, None)
    fb, tb = pair(RNG.standard_normal(c), dtype) if affine else (None, None)
    close(ft.nn.functional.group_norm(fx, groups, fw, fb), torch.nn.functional.group_norm(tx, groups, tw, tb), DT[dtype][2])



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("n", [3, 1031])
def test_layer_norm_as_accurate_as_torch_where_the_mean_dwarfs_the_spread(dtype, affine, n):
    # Rows near 1000 with a spread of about 1: x·rstd - mean·rstd would
    # cancel digits away that (x - mean)·rstd, PyTorch's rounding, keeps.
    # Error against the float64 result over every element, both libraries.
    rows = (4 << 20) // (4 * n) + 5
    x = (1000 + RNG.standard_normal((rows, n))).astype(dtype)
    w = RNG.standard_normal(n).astype(dtype) if affine in ("weight", "both") else None
    b = RNG.standard_normal(n).astype(dtype) if affine in ("bias", "both") else None
    x64 = x.astype(np.float64)
    mean = x64.mean(1, keepdims=True)
    exact = (x64 - mean) / np.sqrt(((x64 - mean) ** 2).mean(1, keepdims=True) + 1e-5)
    exact = exact * (1 if w is None else w.astype(np.float64)) + (0 if b is None else b.astype(np.float64))
    err = {}
    for lib in (ft, torch):
        t = lambda a: None if a is None else lib.from_numpy(a.copy())
        y = lib.nn.functional.layer_norm(t(x), (n,), t(w), t(b))
        assert str(y.dtype).endswith(dtype) and tuple(y.shape) == (rows, n)
        err[lib] = np.sqrt(np.mean((y.numpy().astype(np.float64) - exact) ** 2))
    assert err[ft] <= 1.1 * err[torch], (err[ft], err[torch])
