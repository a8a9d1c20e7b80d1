"""Fuzz classes of issue 15 fixed in session 6, each against PyTorch:
reduced-float trunc division (quotient rounded to the dtype before
truncating unless the divisor is one broadcast value) and float32 sums in
PyTorch's cascade order (sum/mean/std/var and what is built on them)."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

inf, nan = math.inf, math.nan


def _np(t):
    """Values of a tensor of either library as a float64 array."""
    return np.asarray(t.detach().double().tolist(), dtype=float)


def _mirror(t):
    """ferrotorch copy of torch tensor `t` (same dtype, contiguous)."""
    return ft.tensor(t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()).to(
        getattr(ft, str(t.dtype).split(".")[1]))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shapes", [((1, 1), (1, 3)), ((1000,), (1000,)), ((1000,), (1,)), ((7, 3), (3,)), ((3,), ())])
def test_div_trunc_reduced_float_rounds_quotient_first(dtype, shapes):
    g = torch.Generator().manual_seed(len(shapes[0]) * 7 + shapes[0][-1])
    a = (torch.randn(shapes[0], generator=g) * 50).to(getattr(torch, dtype))
    b = torch.randn(shapes[1], generator=g).to(getattr(torch, dtype))
    want = torch.div(a, b, rounding_mode="trunc")
    got = ft.div(_mirror(a), _mirror(b), rounding_mode="trunc")
    np.testing.assert_array_equal(_np(got), _np(want))


def test_div_trunc_int_by_bfloat16():
    # -4 / 1.3359375 = -2.994..., which bfloat16 rounds to -3 before trunc.
    a = [[-4]]
    b = [[1.3359375, 0.99609375, -2.28125]]
    want = torch.div(torch.tensor(a), torch.tensor(b, dtype=torch.bfloat16), rounding_mode="trunc")
    got = ft.div(ft.tensor(a), ft.tensor(b, dtype=ft.bfloat16), rounding_mode="trunc")
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(_np(got), _np(want))


def _layouts():
    """(base values, view ops, reduction) cases covering PyTorch's kernel
    paths: contiguous inner and outer reductions, scalar paths, several 2-d
    pieces (permuted/sliced/expanded inputs), keepdim, size-1 dims."""
    rng = np.random.RandomState(0)
    cases = []
    for k in range(120):
        nd = rng.randint(1, 5)
        shape = [int(rng.choice([1, 2, 3, 5, 8, 9, 16, 17, 33, 70])) for _ in range(nd)]
        while np.prod(shape) > 20000:
            i = rng.randint(nd)
            shape[i] = max(1, shape[i] // 2)
        overflow = k % 3 == 0
        if overflow:
            base = rng.choice([3e38, -3e38, 1e30, 1.0, -2.5, 0.1, 65000.0, -65000.0], size=shape)
        else:
            base = rng.randn(*shape) * 100
        perm = list(rng.permutation(nd)) if nd >= 2 and k % 2 else None
        narrow = int(rng.randint(nd)) if k % 5 == 1 else None
        expand = k % 7 == 3
        dims = sorted(rng.choice(nd, size=rng.randint(1, nd + 1), replace=False).tolist()) if k % 4 else None
        cases.append((base, perm, narrow, expand, dims, bool(k % 2), overflow))
    return cases


def _view(lib, base, dtype, perm, narrow, expand):
    t = lib.tensor(base.tolist(), dtype=getattr(lib, dtype))
    if perm is not None:
        t = t.permute([int(p) for p in perm])
    if narrow is not None:
        t = t.narrow(narrow, 0, t.shape[narrow] // 2 + 1)
    if expand:
        t = t.unsqueeze(0).expand(3, *t.shape)
    return t


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", ["sum", "mean"])
def test_float_sum_matches_pytorch_bit_for_bit(dtype, fn):
    for base, perm, narrow, expand, dims, keep, overflow in _layouts():
        if dtype == "float64" and overflow:
            base = base * 1e270
        tt, ff = _view(torch, base, dtype, perm, narrow, expand), _view(ft, base, dtype, perm, narrow, expand)
        if dims is None:
            want, got = getattr(torch, fn)(tt), getattr(ft, fn)(ff)
        else:
            dims = [d + (1 if expand else 0) for d in dims]
            want, got = getattr(torch, fn)(tt, dims, keepdim=keep), getattr(ft, fn)(ff, dims, keepdim=keep)
        w, g = _np(want), _np(got)
        assert w.shape == g.shape
        np.testing.assert_array_equal(g, w, err_msg=f"{fn} {dtype} {list(tt.shape)} {tt.stride()} dims={dims}")


@pytest.mark.parametrize("n", [50000, 3 * 40000])
def test_large_single_output_sum_splits_like_pytorch(n):
    base = np.random.RandomState(n).randn(n) * 1e3
    for dtype in ("float32", "bfloat16"):
        want = torch.tensor(base, dtype=getattr(torch, dtype)).sum()
        got = ft.tensor(base.tolist(), dtype=getattr(ft, dtype)).sum()
        assert _np(got) == _np(want)


def test_sum_overflow_in_float32_partial_sums():
    v = [3e38, 3e38, -inf, 1.0]
    want = torch.tensor(v).sum()
    got = ft.tensor(v).sum()
    assert math.isnan(float(want)) and math.isnan(float(got))
    ints = [[1, 2147483647, -1, -2147483648], [2147483646, -1, 1, 0]]
    assert float(ft.sum(ft.tensor(ints, dtype=ft.int32), dtype=ft.float32)) == float(
        torch.sum(torch.tensor(ints, dtype=torch.int32), dtype=torch.float32))


def test_std_over_one_output_uses_pytorch_two_pass_mean():
    # PyTorch's std/var of one output element take the mean by mean() (a float32
    # sum, which overflows here) and then sum squared deviations in float64.
    vals = [[-0.14, 0.0, 710.0], [0.6, -1.26, 3e38], [-0.0, 0.61, 1.5], [0.07, 2.0, -0.65], [0.5, 0.0, -0.19]]
    for lib_fn in ("std", "var"):
        want = getattr(torch, lib_fn)(torch.tensor([vals]).expand(3, 5, 3), dim=None, correction=0, keepdim=True)
        got = getattr(ft, lib_fn)(ft.tensor([vals]).expand(3, 5, 3), dim=None, correction=0, keepdim=True)
        np.testing.assert_array_equal(_np(got), _np(want))


@pytest.mark.parametrize("fn", ["std", "var"])
def test_std_var_grad_of_equal_values_follows_pytorch_mean(fn):
    # The mean of five copies of 7.7e-19 is not exactly 7.7e-19 in PyTorch's
    # float64 sum, so std is a tiny positive number and its gradient is not 0.
    res = []
    for lib in (ft, torch):
        leaf = lib.tensor([7.707057148376399e-19], dtype=lib.float64).requires_grad_()
        out = getattr(lib, fn)(leaf.clone().expand(5), dim=-1, correction=2, keepdim=True)
        out.sum().backward()
        res.append((_np(out), _np(leaf.grad)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9)


def test_var_grad_keeps_float32_order_near_max():
    vals = [0.7623388171195984, 0.4979698359966278, -9.99994610111476e-41, 3.0000000054977558e+38,
            -2.033644914627075, -0.44931909441947937, 0.04288962110877037, 0.17843621969223022, 0.08260501176118851]
    res = []
    for lib in (ft, torch):
        leaf = lib.tensor(vals).requires_grad_()
        out = lib.var(leaf.clone().as_strided([5, 1, 3, 5], [1, 2, 2, 0]), dim=2, correction=0, keepdim=False)
        out.sum().backward()
        res.append(_np(leaf.grad))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5)


@pytest.mark.parametrize("fn,x,w", [
    ("conv2d", (1, 2, 4, 4), (3, 2, 0, 2)),
    ("conv2d", (1, 2, 4, 4), (3, 2, 2, 0)),
    ("conv1d", (1, 2, 4), (3, 2, 0)),
    ("conv3d", (1, 2, 4, 4, 4), (3, 2, 2, 0, 2)),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 0, 2)),
    ("conv_transpose1d", (1, 2, 4), (2, 3, 0)),
])
def test_conv_with_an_empty_kernel_dim_raises_like_pytorch(fn, x, w):
    # Used to reach an integer underflow (a Rust panic) in the output-size rule.
    with pytest.raises(RuntimeError) as want:
        getattr(torch.nn.functional, fn)(torch.randn(*x), torch.randn(*w))
    with pytest.raises(RuntimeError) as got:
        getattr(ft.nn.functional, fn)(ft.randn(*x), ft.randn(*w))
    assert "internal error" not in str(got.value)
    assert str(got.value).split(",")[0] == str(want.value).split(",")[0]


@pytest.mark.parametrize("shape,wshape", [((), (1,)), ((), ()), ((3,), (1,)), ((2, 3), (1,)), ((2, 3, 4), (3,))])
def test_prelu_keeps_the_input_shape(shape, wshape):
    res = []
    for lib in (ft, torch):
        x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).tolist(), dtype=lib.float32)
        w = lib.full(wshape, 0.25, requires_grad=True)
        out = lib.prelu(x, w)
        out.sum().backward()
        res.append((tuple(out.shape), _np(out), tuple(w.grad.shape), _np(w.grad)))
    assert res[0][0] == res[1][0] and res[0][2] == res[1][2]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-6)


@pytest.mark.parametrize("shape,dim", [((300, 300), 0), ((300, 300), 1), ((64, 1001), 0), ((1001, 70), 0),
                                       ((40, 50, 60), 1), ((2000, 33), 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_large_multi_output_sums_split_like_one_serial_call(shape, dim, dtype):
    # Large reductions with many outputs are split over the threads; every
    # output must still be summed exactly as PyTorch sums it.
    base = np.random.RandomState(sum(shape)).randn(*shape) * 1e3
    want = torch.tensor(base, dtype=getattr(torch, dtype)).sum(dim)
    got = ft.tensor(base.tolist(), dtype=getattr(ft, dtype)).sum(dim)
    np.testing.assert_array_equal(_np(got), _np(want))
    want_t = torch.tensor(base, dtype=getattr(torch, dtype)).transpose(0, -1).sum(dim)
    got_t = ft.tensor(base.tolist(), dtype=getattr(ft, dtype)).transpose(0, -1).sum(dim)
    np.testing.assert_array_equal(_np(got_t), _np(want_t))


def test_aten_group_norm_has_no_batch_size_check():
    # torch.group_norm (ATen) normalises a (1, C) input with C groups; only
    # F.group_norm refuses it ("Expected more than 1 value per channel").
    x = [[0.5, -1.0, 2.0]]
    np.testing.assert_array_equal(_np(ft.group_norm(ft.tensor(x), 3)), _np(torch.group_norm(torch.tensor(x), 3)))
    with pytest.raises(ValueError):
        ft.nn.functional.group_norm(ft.tensor(x), 3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("lambd", [70000.0, 1e39, inf, 0.5])
def test_hardshrink_lambda_range_check(dtype, lambd):
    def run(lib):
        try:
            return "ok", _np(lib.hardshrink(lib.ones(3, dtype=getattr(lib, dtype)), lambd))
        except RuntimeError as e:
            return "raise", str(e)
    (kt, vt), (kf, vf) = run(torch), run(ft)
    assert kt == kf
    if kt == "ok":
        np.testing.assert_array_equal(vf, vt)
    else:
        assert vf == vt
