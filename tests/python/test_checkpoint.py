"""utils.checkpoint: same values and gradients as PyTorch, activations recomputed, memory released."""

import gc

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch.utils.checkpoint import checkpoint

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def build(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.Tanh(), lib.nn.Linear(16, 6))


def test_checkpointed_gradients_match_torch():
    torch.manual_seed(0)
    tb = [build(torch) for _ in range(3)]
    fb = [build(ft) for _ in range(3)]
    for f, t in zip(fb, tb):
        f.load_state_dict({k: ft.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = torch.randn(4, 6, requires_grad=True)
    fx = ft.tensor(x.detach().numpy(), requires_grad=True)
    y, fy = x, fx
    for t, f in zip(tb, fb):
        y = torch.utils.checkpoint.checkpoint(t, y, use_reentrant=False)
        fy = checkpoint(f, fy, use_reentrant=False)
    (y ** 2).sum().backward()
    (fy ** 2).sum().backward()
    np.testing.assert_allclose(fy.tolist(), y.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(fx.grad.tolist(), x.grad.numpy(), atol=1e-5)
    for t, f in zip(tb, fb):
        for (n, p), (fn_, fp) in zip(t.named_parameters(), f.named_parameters()):
            np.testing.assert_allclose(fp.grad.tolist(), p.grad.numpy(), atol=1e-5, err_msg=n)


def test_recomputed_activations_are_released():
    ft.manual_seed(0)
    blocks = [build(ft) for _ in range(4)]
    gc.collect()
    base = ft.memory_allocated()
    x = ft.randn(64, 6, requires_grad=True)
    y = x
    for b in blocks:
        y = checkpoint(b, y, use_reentrant=False)
    y.sum().backward()
    del y, x
    for b in blocks:
        b.zero_grad()
    gc.collect()
    assert ft.memory_allocated() - base < 4096


def test_random_ops_replay_the_same_stream():
    def f(x):
        return ft.nn.functional.dropout(x, 0.5, training=True) * 2

    x = ft.ones(1000, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    y.sum().backward()
    # d/dx (mask * x / 0.5 * 2) = 4 * mask: the recompute must draw the same mask.
    assert (x.grad == (y != 0).to(ft.float32) * 4).all().item()
