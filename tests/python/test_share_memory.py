"""Tensor.share_memory_ / is_shared / Module.share_memory and tensors shared between
processes through ferrotorch.multiprocessing (compared with PyTorch's behaviour)."""

import multiprocessing as std_mp

import numpy as np
import pytest

import ferrotorch as ft
import ferrotorch.multiprocessing as mp

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "bool"])
def test_share_memory_keeps_values_and_reports_shared(dtype):
    x = np.arange(12).reshape(3, 4) % 5
    t = torch.tensor(x).to(getattr(torch, dtype))
    f = ft.tensor(x).to(getattr(ft, dtype))
    assert f.is_shared() == t.is_shared() is False
    assert f.share_memory_() is f and t.share_memory_() is t
    assert f.is_shared() == t.is_shared() is True
    assert f.dtype == getattr(ft, dtype) and list(f.shape) == [3, 4]
    np.testing.assert_array_equal(f.float().numpy(), t.float().numpy())
    # Idempotent, and in-place ops keep the storage shared.
    f.share_memory_()
    f.add_(1) if dtype != "bool" else f.logical_not_()
    assert f.is_shared()


def test_share_memory_of_a_view_and_of_an_empty_tensor():
    base = ft.arange(10.0)
    v = base[2:8:2]
    v.share_memory_()
    assert v.is_shared()
    np.testing.assert_array_equal(v.numpy(), [2.0, 4.0, 6.0])
    e = ft.empty(0, 3)
    e.share_memory_()
    assert e.is_shared() and list(e.shape) == [0, 3]


def test_module_share_memory_matches_torch():
    tm, fm = torch.nn.Linear(3, 2), ft.nn.Linear(3, 2)
    assert tm.share_memory() is tm and fm.share_memory() is fm
    assert [p.is_shared() for p in fm.parameters()] == [p.is_shared() for p in tm.parameters()] == [True, True]
    assert all(isinstance(p, ft.nn.Parameter) and p.requires_grad for p in fm.parameters())


def _child_adds(t, p, q):
    t.add_(10)
    with ft.no_grad():
        p.mul_(2)
    q.put((float(t.sum()), p.requires_grad, type(p).__name__))


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_child_process_writes_are_seen_by_the_parent(method):
    ctx = mp.get_context(method)
    t = ft.arange(6.0).reshape(2, 3).t()  # a non-contiguous layout travels too
    t.share_memory_()
    p = ft.nn.Parameter(ft.ones(4))
    p.share_memory_()
    q = ctx.Queue()
    proc = ctx.Process(target=_child_adds, args=(t, p, q))
    proc.start()
    total, rg, kind = q.get(timeout=60)
    proc.join(60)
    assert proc.exitcode == 0
    assert total == 15.0 + 60.0 and rg is True and kind == "Parameter"
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3).T + 10)
    np.testing.assert_array_equal(p.detach().numpy(), [2.0] * 4)


def _child_sends(q, received):
    s = ft.full((3,), 5.0)
    s.share_memory_()
    q.put(s)
    # As with PyTorch's file_descriptor strategy, the sender stays alive until the
    # receiver has taken the descriptor.
    received.wait(60)


def test_shared_tensor_sent_through_a_queue():
    ctx = mp.get_context("spawn")
    q, received = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_child_sends, args=(q, received))
    proc.start()
    got = q.get(timeout=60)
    received.set()
    proc.join(60)
    assert proc.exitcode == 0
    assert got.is_shared()
    np.testing.assert_array_equal(got.numpy(), [5.0] * 3)


def test_sharing_strategies():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("no_such_strategy")
    assert mp.Process is std_mp.Process
