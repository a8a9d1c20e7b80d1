"""The fused optimizer steps (one Rust pass per parameter) against PyTorch's
single-tensor optimizers, and the cases where they must decline."""

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch import _C

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

CONFIGS = [
    ("Adam", dict()),
    ("Adam", dict(weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(weight_decay=0.1, maximize=True, betas=(0.5, 0.9))),
    ("AdamW", dict()),
    ("AdamW", dict(weight_decay=0.3, amsgrad=True, maximize=True)),
    ("SGD", dict()),
    ("SGD", dict(momentum=0.9)),
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(momentum=0.5, dampening=0.3, maximize=True)),
]


def _trajectory(lib, name, kw, dtype, shapes, steps, seed, make_param=None):
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ps = [make_param(lib, w) if make_param else lib.tensor(w, requires_grad=True) for w in ws]
    opt = getattr(lib.optim, name)(ps, lr=0.01, **kw)
    for _ in range(steps):
        for p, w in zip(ps, ws):
            p.grad = lib.tensor(rng.standard_normal(w.shape).astype(dtype))
        opt.step()
    return [p.detach().numpy().copy() for p in ps], opt


@pytest.mark.parametrize("name,kw", CONFIGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_trajectory_matches_torch(name, kw, dtype):
    # Shapes below and above the kernel's parallel threshold (2 * 2^15 elements).
    shapes = [(7,), (300, 70), (300, 300)]
    ours, _ = _trajectory(ft, name, kw, dtype, shapes, 20, 0)
    ref, _ = _trajectory(torch, name, kw, dtype, shapes, 20, 0)
    tol = 2e-6 if dtype == "float32" else 1e-14
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_fused_adam_state_matches_torch():
    _, fo = _trajectory(ft, "Adam", dict(amsgrad=True), "float32", [(40, 3)], 5, 1)
    _, to = _trajectory(torch, "Adam", dict(amsgrad=True), "float32", [(40, 3)], 5, 1)
    fs, ts = list(fo.state.values())[0], list(to.state.values())[0]
    assert float(fs["step"]) == float(ts["step"]) == 5.0
    for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        np.testing.assert_allclose(fs[k].numpy(), ts[k].numpy(), rtol=1e-5, atol=1e-7)


def test_fused_kernel_runs_and_bumps_versions():
    p = ft.zeros(5, requires_grad=True)
    g, m, v, step = ft.ones(5), ft.zeros(5), ft.zeros(5), ft.tensor(0.0)
    before = (p._version, m._version, v._version)
    with ft.no_grad():
        assert _C._fused_adam_([p], [g], [m], [v], [], [step], 0.1, 0.9, 0.999, 1e-8, 0.0,
                               False, False, False)
    # Closed form of Adam's first step: -lr * sign(g).
    np.testing.assert_allclose(p.detach().numpy(), -0.1 * np.ones(5), rtol=1e-6)
    assert float(step) == 1.0
    assert (p._version, m._version, v._version) > before


def test_fused_declines_without_writing():
    g, m, v = ft.ones(3, 2), ft.zeros(3, 2), ft.zeros(3, 2)
    # Non-contiguous parameter, bfloat16 parameter, state sharing storage with
    # the parameter, and grad mode on with a parameter requiring grad.
    p_t = ft.zeros(2, 3).t().detach().requires_grad_()
    p_bf = ft.zeros(3, 2, dtype=ft.bfloat16, requires_grad=True)
    p_alias = ft.zeros(3, 2, requires_grad=True)
    with ft.no_grad():
        assert not _C._fused_adam_([p_t], [g], [m], [v], [], [ft.tensor(0.0)], 0.1, 0.9, 0.999, 1e-8,
                                   0.0, False, False, False)
        assert not _C._fused_adam_([p_bf], [g], [m], [v], [], [ft.tensor(0.0)], 0.1, 0.9, 0.999, 1e-8,
                                   0.0, False, False, False)
        assert not _C._fused_adam_([p_alias], [g], [p_alias.detach()], [v], [], [ft.tensor(0.0)], 0.1,
                                   0.9, 0.999, 1e-8, 0.0, False, False, False)
    step = ft.tensor(0.0)
    assert not _C._fused_adam_([p_alias], [g], [m], [v], [], [step], 0.1, 0.9, 0.999, 1e-8, 0.0,
                               False, False, False)
    assert float(step) == 0.0 and float(m.abs().sum()) == 0.0 and float(p_alias.abs().sum()) == 0.0


def test_fused_length_mismatch_is_value_error():
    with pytest.raises(ValueError, match="expected 1 grads"):
        _C._fused_sgd_([ft.zeros(2)], [], [], [], 0.1, 0.0, 0.0, 0.0, False, False)


@pytest.mark.parametrize("name,kw", [("Adam", dict()), ("SGD", dict(momentum=0.9))])
def test_declined_groups_still_match_torch(name, kw):
    # Transposed (non-contiguous) parameters take the op-by-op path.
    make = lambda lib, w: lib.tensor(w.T.copy()).t().detach().requires_grad_()
    ours, _ = _trajectory(ft, name, kw, "float32", [(6, 4)], 10, 2, make)
    ref, _ = _trajectory(torch, name, kw, "float32", [(6, 4)], 10, 2, make)
    np.testing.assert_allclose(ours[0], ref[0], rtol=2e-6, atol=2e-6)
