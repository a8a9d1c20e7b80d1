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
    t = t.detach()
    if "bfloat16" in str(t.dtype) or "float16" in str(t.dtype):
        t = t.float()
    return np.asarray(t.tolist(), dtype=float)


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
