"""Shared helpers for parity tests: run one function on ferrotorch and on
PyTorch with the same NumPy inputs, compare values, dtypes, shapes, errors
and gradients."""

import numpy as np

import ferrotorch as ft


def dtype_name(dt):
    return repr(dt).split(".")[-1]


def to_lib(lib, a, requires_grad=False):
    if isinstance(a, np.ndarray):
        t = lib.from_numpy(a if a.flags.c_contiguous else a.copy()).clone()
        if requires_grad:
            t.requires_grad_(True)
        return t
    return a


def as_np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def assert_same(a, b, rtol=1e-5, atol=1e-6):
    """`a` from ferrotorch, `b` from torch (tensors or nested tuples/lists)."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)), f"expected a sequence, got {type(a)}"
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol)
        return
    if not hasattr(b, "shape"):
        assert a == b
        return
    assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} != {tuple(b.shape)}"
    assert dtype_name(a.dtype) == dtype_name(b.dtype), f"dtype {a.dtype} != {b.dtype}"
    x, y = as_np(a), as_np(b)
    if x.dtype.kind in "fc":
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(x, y)


def parity(torch, fn, *arrays, grad=(), rtol=1e-5, atol=1e-6, seed=0):
    """Runs `fn(lib, *inputs)` on both libraries; inputs at positions in `grad`
    require grad, and their gradients (for a random upstream gradient) are compared."""
    outs = []
    grads = []
    for lib in (ft, torch):
        ins = [to_lib(lib, a, i in grad) for i, a in enumerate(arrays)]
        out = fn(lib, *ins)
        outs.append(out)
        if grad:
            rng = np.random.default_rng(seed)
            o = out if hasattr(out, "shape") else out[0]
            up = lib.from_numpy(rng.standard_normal(tuple(o.shape)).astype(as_np(o).dtype))
            (o * up).sum().backward()
            grads.append([ins[i].grad for i in grad])
    assert_same(outs[0], outs[1], rtol, atol)
    if grad:
        for gf, gt in zip(*grads):
            if gt is None:
                assert gf is None or not as_np(gf).any()
            else:
                assert gf is not None, "ferrotorch produced no gradient"
                assert_same(gf, gt, rtol, atol)
    return outs[0]


def outcome(lib, fn):
    """``("ok", fn(lib))``, or the exception's class name and message."""
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)


def error_of(fn):
    """The class name and message of what ``fn()`` raises, or ``None`` when it returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, str(e)
    return None


def results(torch, fn):
    """``[(result, None) or (None, exception class name)]`` of ``fn(torch)`` then ``fn(ferrotorch)``."""
    out = []
    for m in (torch, ft):
        try:
            out.append((fn(m), None))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            out.append((None, type(e).__name__))
    return out


def errors_match(torch, fn, *arrays, same_message=False):
    """Both libraries raise, with the same exception type (and message when ``same_message``);
    returns ferrotorch's message."""
    caught = []
    for lib in (ft, torch):
        ins = [to_lib(lib, a) for a in arrays]
        try:
            fn(lib, *ins)
        except Exception as e:  # noqa: BLE001 - comparing types
            caught.append(e)
        else:
            caught.append(None)
    assert caught[1] is not None, "torch did not raise"
    assert caught[0] is not None, f"ferrotorch did not raise (torch: {caught[1]!r})"
    assert type(caught[0]).__name__ == type(caught[1]).__name__, f"{caught[0]!r} vs {caught[1]!r}"
    if same_message:
        assert str(caught[0]) == str(caught[1])
    return str(caught[0])


def rnd(*shape, seed=0, dtype="float32"):
    """Standard-normal NumPy data of ``shape`` from a fixed seed."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def from_np(lib, a, grad=False):
    """A fresh ``lib`` tensor holding a copy of NumPy array ``a`` (a leaf requiring grad if asked)."""
    t = lib.from_numpy(np.ascontiguousarray(a).copy())
    return t.requires_grad_() if grad else t


def gradcheck(fn, *xs):
    """ferrotorch's gradcheck in float64; inputs are cloned inside so saved
    views are not perturbed in place by the finite differences."""
    from ferrotorch.autograd import gradcheck as gc

    return gc(lambda *a: fn(*[x.clone() for x in a]), tuple(xs))


def complex_data(shape, seed=0, dtype=np.complex128):
    """Complex NumPy data with normal real and imaginary parts."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def both(a):
    """The same NumPy data as a ferrotorch and a torch tensor (each its own copy)."""
    import torch

    a = np.ascontiguousarray(a)
    return ft.from_numpy(a.copy()), torch.from_numpy(a.copy())
