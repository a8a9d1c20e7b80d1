"""Fuzz classes of issue 15 from the seed-12 campaign, compared with PyTorch:
the elu family at x = 0 with an infinite or NaN alpha, the in-place forms' result-based
backward (EluBackward1/CeluBackward1), and out-of-memory creation under an address-space cap
(the fuzz worker's)."""

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

INF, NAN = math.inf, math.nan
VALUES = [0.0, -0.0, -1.0, -3.0, 2.0, -1e-30, NAN, INF, -INF]


def _same(a, b):
    a = a.detach().double().numpy()
    b = b.detach().double().numpy()
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True)
    # Signed zeros must match too (elu(-0.) is -0.).
    np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0]))


def _x(lib, n, dtype):
    vals = (VALUES * (n // len(VALUES) + 1))[:n]
    return lib.tensor(vals, dtype=getattr(lib, dtype))


# 1: scalar loop only; 9: the list once; 80: PyTorch's vectorized loop too.
@pytest.mark.parametrize("n", [1, 9, 80])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("alpha", [INF, -INF, NAN, 2.0])
@pytest.mark.parametrize("fn", ["celu", "elu", "celu_", "elu_"])
def test_elu_family_forward_special_alpha(fn, alpha, dtype, n):
    def run(lib):
        x = _x(lib, n, dtype)
        if fn == "celu":
            return lib.celu(x, alpha)
        if fn == "celu_":
            return lib.celu_(x, alpha)
        if fn == "elu":
            return lib.nn.functional.elu(x, alpha)
        return lib.nn.functional.elu_(x, alpha)

    _same(run(ft), run(torch))


@pytest.mark.parametrize("n", [1, 9, 80])
@pytest.mark.parametrize("alpha", [INF, 2.0, 0.5])
@pytest.mark.parametrize("fn", ["celu_", "elu_", "selu_"])
def test_inplace_elu_backward_from_result(fn, alpha, n):
    def run(lib):
        leaf = _x(lib, n, "float64").requires_grad_()
        x = leaf.clone()
        if fn == "celu_":
            y = lib.celu_(x, alpha)
        elif fn == "elu_":
            y = lib.nn.functional.elu_(x, alpha)
        else:
            y = lib.selu_(x)
        w = lib.linspace(-1.0, 1.5, n, dtype=lib.float64)
        (g,) = lib.autograd.grad((y * w).sum(), leaf)
        return y.grad_fn.name(), g

    name, g = run(ft)
    tname, tg = run(torch)
    assert name == tname
    _same(g, tg)


@pytest.mark.parametrize("alpha", [NAN, -1.0])
def test_inplace_celu_backward_refuses_alpha_not_nonnegative(alpha):
    for lib in (ft, torch):
        x = lib.tensor([-0.5, 1.0], requires_grad=True).clone()
        y = lib.celu_(x, alpha)  # the forward is accepted
        with pytest.raises(RuntimeError, match="negative slope"):
            y.sum().backward()


def test_creation_beyond_address_space_cap_raises_runtime_error():
    # The fuzz worker caps its address space; ones(2**31 - 1, 2) (17 GB) then
    # raises in both libraries instead of swapping past the hang limit.
    code = textwrap.dedent("""
        import resource
        cap = 4 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        import ferrotorch as ft, torch
        for lib in (torch, ft):
            try:
                lib.ones(2147483647, 2)
                print("no error")
            except RuntimeError as e:
                print("RuntimeError", "17179869176" in str(e))
        x = ft.ones(1000)  # still usable afterwards
        print(float(x.sum()))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["RuntimeError True", "RuntimeError True", "1000.0"]


@pytest.mark.parametrize("make", [
    lambda L: L.empty(0, 4, 3099147509852106517),
    lambda L: L.zeros(0, 2**62, 4),
    lambda L: L.ones(0, 2**63 - 1, 2, dtype=L.float64),
    lambda L: L.nn.functional.adaptive_max_pool1d(L.empty(3, 4, 0).permute(2, 1, 0), 3099147509852106517),
    lambda L: L.nn.functional.adaptive_avg_pool1d(L.empty(0, 4, 3), 3099147509852106517),
    lambda L: L.empty(2**62, 4),
    lambda L: L.empty(2**61, 4, dtype=L.float32),
], ids=["empty", "zeros", "ones", "adaptive_max_pool1d", "adaptive_avg_pool1d", "nonempty", "nonempty-bytes"])
def test_shapes_whose_contiguous_strides_overflow_raise(make):
    # PyTorch checks the byte count, then that each contiguous stride (the
    # product of the later sizes, 0 counted as 1) fits an int64: an empty
    # tensor can overflow the second check.
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(ft)
    msg = str(theirs.value)
    want = "Stride calculation overflowed" if "Stride" in msg else "Storage size calculation overflowed"
    assert want in str(ours.value)


@pytest.mark.parametrize("shape", [(2**62, 2, 0), (0, 2**60, 4), (3, 0, 2**62)])
def test_empty_shapes_whose_strides_fit_are_created(shape):
    t = torch.empty(*shape)
    f = ft.empty(*shape)
    assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()


def _layouts():
    # (base shape, permutation): unbatched (C, D, H, W) inputs in several stride orders.
    return [((4, 5, 3, 2), (3, 0, 1, 2)), ((2, 4, 5, 3), (0, 3, 1, 2)), ((3, 4, 5, 1), (0, 3, 1, 2)),
            ((2, 3, 4, 5), (0, 1, 2, 3)), ((2, 3, 4, 5), (1, 0, 2, 3)), ((1, 1, 1, 4), (3, 0, 1, 2)),
            ((2, 0, 4, 4), (0, 3, 1, 2))]


@pytest.mark.parametrize("base,perm", _layouts())
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool3d_unbatched_channels_last_layout(base, perm, return_indices):
    # PyTorch's max_pool3d raises for an unbatched input whose strides read as
    # a channels-last 4-d tensor; other layouts (and other pools) compute.
    data = np.arange(int(np.prod(base)), dtype=np.float32).reshape(base)
    outs = []
    for lib in (torch, ft):
        x = lib.tensor(data).permute(*perm)
        try:
            r = lib.nn.functional.max_pool3d(x, 1, return_indices=return_indices)
            outs.append(("ok", [t.tolist() for t in r] if return_indices else r.tolist()))
        except RuntimeError as e:
            outs.append(("error", str(e)))
    assert outs[0] == outs[1]


def test_group_norm_with_huge_group_count_raises_instead_of_aborting():
    # (1, 0) input and 2**31 - 2 groups: 2**31 per-group statistics. Under an
    # address-space cap the host allocation fails: an OutOfMemoryError, not an abort.
    code = textwrap.dedent("""
        import resource
        cap = 4 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        import ferrotorch as ft
        try:
            ft.group_norm(ft.zeros(1, 0), 2147483646)
            print("no error")
        except RuntimeError as e:
            print(type(e).__name__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OutOfMemoryError"
