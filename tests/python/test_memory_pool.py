"""The CPU caching allocator: ``ferrotorch.memory_allocated`` and friends.

PyTorch has no caching allocator for host memory, so the reference is the
algorithm of its CUDA caching allocator (``c10/cuda/CUDACachingAllocator.cpp``),
restated below: requests round up to 512 bytes; rounded sizes up to 1 MiB come
from 2 MiB "small" segments; larger ones from 20 MiB segments when under
10 MiB, else from a segment of the request rounded up to 2 MiB; freed blocks
stay cached (reserved) until ``empty_cache``; neighbours merge.

Each scenario runs in a fresh interpreter so that the process-wide pool starts
empty and the numbers are exact. PyTorch is still imported at module level:
the stats' key names follow ``torch.cuda.memory_stats``.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="PyTorch defines the statistics being mirrored")

KB, MB = 1024, 1024 * 1024
MIN_BLOCK = 512          # kMinBlockSize
SMALL_SIZE = 1 * MB      # kSmallSize
SMALL_BUFFER = 2 * MB    # kSmallBuffer
LARGE_BUFFER = 20 * MB   # kLargeBuffer
MIN_LARGE_ALLOC = 10 * MB  # kMinLargeAlloc
ROUND_LARGE = 2 * MB     # kRoundLarge


def round_size(n):
    """PyTorch's ``round_size``: at least 512 bytes, a multiple of 512."""
    return MIN_BLOCK if n < MIN_BLOCK else MIN_BLOCK * ((n + MIN_BLOCK - 1) // MIN_BLOCK)


def segment_size(n):
    """PyTorch's ``get_allocation_size`` for a rounded request ``n``."""
    if n <= SMALL_SIZE:
        return SMALL_BUFFER
    if n < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((n + ROUND_LARGE - 1) // ROUND_LARGE)


def block_size(n):
    """Bytes a request of ``n`` takes (what ``memory_allocated`` counts): the
    rounded size, or the whole segment when the large-pool remainder would be
    1 MiB or less (PyTorch's ``should_split``)."""
    r = round_size(n)
    seg = segment_size(r)
    if r <= SMALL_SIZE:
        return r
    return r if seg - r > SMALL_SIZE else seg


def run(body):
    """Runs ``body`` in a fresh interpreter; it fills the dict ``out``."""
    script = "import gc, json\nimport ferrotorch as ft\nout = {}\n" + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_fresh_pool_is_empty():
    out = run("""
        out["alloc"] = ft.memory_allocated()
        out["reserved"] = ft.memory_reserved()
        out["alloc_cpu"] = ft.memory_allocated(device="cpu")
        out["alloc_dev"] = ft.memory_allocated(ft.device("cpu"))
    """)
    assert out == {"alloc": 0, "reserved": 0, "alloc_cpu": 0, "alloc_dev": 0}


def test_large_tensor_rounding_and_segment():
    out = run("""
        x = ft.empty(1000, 1000)
        out["alloc"] = ft.memory_allocated()
        out["reserved"] = ft.memory_reserved()
        out["stats"] = ft.memory_stats()
    """)
    n = 1000 * 1000 * 4
    assert out["alloc"] == round_size(n) == 4000256
    assert out["reserved"] == segment_size(round_size(n)) == LARGE_BUFFER
    s = out["stats"]
    assert s["allocated_bytes.all.current"] == out["alloc"]
    assert s["reserved_bytes.all.current"] == out["reserved"]
    assert s["requested_bytes.all.current"] == n
    assert s["active_bytes.all.current"] == out["alloc"]
    assert s["segment.all.current"] == 1
    assert s["allocation.all.allocated"] == 1


@pytest.mark.parametrize("nbytes", [1, 4, 40, 511, 512, 513, 4096, 100_000, SMALL_SIZE - 1, SMALL_SIZE,
                                    SMALL_SIZE + 1, 5 * MB, MIN_LARGE_ALLOC - 1, MIN_LARGE_ALLOC, 12_000_000, 25 * MB + 3])
def test_rounding_and_segment_sizes(nbytes):
    out = run(f"""
        x = ft.empty({nbytes}, dtype=ft.uint8)
        out["alloc"] = ft.memory_allocated()
        out["reserved"] = ft.memory_reserved()
        out["requested"] = ft.memory_stats()["requested_bytes.all.current"]
        out["storage"] = x.untyped_storage().nbytes()
    """)
    assert out["alloc"] == block_size(nbytes)
    assert out["reserved"] == segment_size(round_size(nbytes))
    assert out["requested"] == nbytes
    # The storage reports the bytes asked for, as PyTorch's does.
    assert out["storage"] == torch.empty(nbytes, dtype=torch.uint8).untyped_storage().nbytes()


def test_small_tensors_are_carved_from_one_segment():
    per_segment = SMALL_BUFFER // MIN_BLOCK
    out = run(f"""
        xs = [ft.empty(10) for _ in range({per_segment})]
        out["alloc_full"] = ft.memory_allocated()
        out["reserved_full"] = ft.memory_reserved()
        out["segments_full"] = ft.memory_stats()["segment.all.current"]
        ptrs = sorted(x.data_ptr() for x in xs)
        out["span"] = ptrs[-1] - ptrs[0]
        xs.append(ft.empty(10))
        out["reserved_more"] = ft.memory_reserved()
        out["segments_more"] = ft.memory_stats()["segment.all.current"]
    """)
    # 4096 blocks of 512 bytes exactly fill one 2 MiB segment...
    assert out["alloc_full"] == per_segment * MIN_BLOCK
    assert out["reserved_full"] == SMALL_BUFFER
    assert out["segments_full"] == 1
    assert out["span"] == SMALL_BUFFER - MIN_BLOCK
    # ...and one more needs a second segment.
    assert out["reserved_more"] == 2 * SMALL_BUFFER
    assert out["segments_more"] == 2


def test_two_one_mib_tensors_share_a_small_segment():
    out = run(f"""
        a = ft.empty({SMALL_SIZE}, dtype=ft.uint8)
        b = ft.empty({SMALL_SIZE}, dtype=ft.uint8)
        out["reserved"] = ft.memory_reserved()
        out["gap"] = abs(a.data_ptr() - b.data_ptr())
        c = ft.empty({SMALL_SIZE}, dtype=ft.uint8)
        out["reserved3"] = ft.memory_reserved()
    """)
    assert out["reserved"] == SMALL_BUFFER
    assert out["gap"] == SMALL_SIZE
    assert out["reserved3"] == 2 * SMALL_BUFFER


def test_reserved_stays_after_del_and_block_is_reused():
    out = run("""
        x = ft.empty(1000, 1000)
        p = x.data_ptr()
        del x
        gc.collect()
        out["alloc_after_del"] = ft.memory_allocated()
        out["reserved_after_del"] = ft.memory_reserved()
        y = ft.empty(1000, 1000)
        out["reused"] = y.data_ptr() == p
        out["reserved_after_realloc"] = ft.memory_reserved()
        out["segments"] = ft.memory_stats()["segment.all.current"]
    """)
    assert out["alloc_after_del"] == 0
    assert out["reserved_after_del"] == LARGE_BUFFER
    assert out["reused"] is True
    assert out["reserved_after_realloc"] == LARGE_BUFFER
    assert out["segments"] == 1


def test_empty_cache_releases_only_free_segments():
    out = run("""
        keep = ft.empty(1000, 1000)
        tmp = ft.empty(17 * 1024 * 1024, dtype=ft.uint8)  # too big for keep's segment
        small = ft.empty(10)
        out["reserved_all"] = ft.memory_reserved()
        del tmp, small
        gc.collect()
        out["reserved_cached"] = ft.memory_reserved()
        ft.empty_cache()
        out["reserved_emptied"] = ft.memory_reserved()
        out["alloc_emptied"] = ft.memory_allocated()
        out["keep_ok"] = keep.fill_(2.0).sum().item() == 2.0 * 1_000_000
        del keep
        gc.collect()
        ft.empty_cache(device="cpu")
        out["reserved_final"] = ft.memory_reserved()
        out["segments_final"] = ft.memory_stats()["segment.all.current"]
    """)
    big = segment_size(round_size(17 * MB))
    assert out["reserved_all"] == LARGE_BUFFER + big + SMALL_BUFFER
    assert out["reserved_cached"] == out["reserved_all"]
    assert out["reserved_emptied"] == LARGE_BUFFER
    assert out["alloc_emptied"] == block_size(4_000_000)
    assert out["keep_ok"] is True
    assert out["reserved_final"] == 0
    assert out["segments_final"] == 0


def test_views_allocate_nothing_copies_do():
    out = run("""
        x = ft.empty(200, 300)
        a0 = ft.memory_allocated()
        views = [x.t(), x[1:], x[:, ::2], x.view(300, 200), x.reshape(-1), x.unsqueeze(0).expand(4, 200, 300),
                 x.narrow(0, 5, 10), x.select(1, 3), x.diagonal(), x.unfold(0, 2, 2), x.as_strided((10,), (7,)),
                 x.detach(), x[...], x.flatten(), x.contiguous()]
        views += list(x.unbind(0)) + list(x.split(7)) + list(x.chunk(3, 1))
        out["delta_views"] = ft.memory_allocated() - a0
        c = x.t().contiguous()
        out["delta_copy"] = ft.memory_allocated() - a0
        r = x.t().reshape(-1)
        out["delta_reshape_copy"] = ft.memory_allocated() - a0
        out["n"] = x.numel() * x.element_size()
    """)
    assert out["delta_views"] == 0
    assert out["delta_copy"] == round_size(out["n"])
    assert out["delta_reshape_copy"] == 2 * round_size(out["n"])


def test_storage_freed_when_last_reference_goes():
    out = run("""
        x = ft.empty(1000, 1000)
        v = x[10:20]
        del x
        gc.collect()
        out["alive_through_view"] = ft.memory_allocated()
        a = v.numpy()
        del v
        gc.collect()
        out["alive_through_numpy"] = ft.memory_allocated()
        del a
        gc.collect()
        out["freed"] = ft.memory_allocated()
    """)
    assert out["alive_through_view"] == round_size(4_000_000)
    assert out["alive_through_numpy"] == round_size(4_000_000)
    assert out["freed"] == 0


def test_foreign_memory_is_not_counted():
    out = run("""
        import numpy as np
        import torch
        a = ft.from_numpy(np.zeros(1_000_000))
        b = ft.from_dlpack(torch.zeros(1_000_000))
        c = ft.as_tensor(np.ones(1000))
        out["alloc"] = ft.memory_allocated()
        d = ft.tensor(np.ones(1000))  # tensor() copies into the pool
        out["alloc_copy"] = ft.memory_allocated()
    """)
    assert out["alloc"] == 0
    assert out["alloc_copy"] == round_size(8000)


def test_peak_and_reset():
    out = run("""
        x = ft.empty(1000, 1000)
        y = ft.empty(500, 1000)
        del y
        gc.collect()
        out["alloc"] = ft.memory_allocated()
        out["peak"] = ft.max_memory_allocated()
        out["peak_reserved"] = ft.max_memory_reserved()
        ft.reset_peak_memory_stats()
        out["peak_after_reset"] = ft.max_memory_allocated()
        out["peak_reserved_after_reset"] = ft.max_memory_reserved()
        del x
        gc.collect()
        ft.empty_cache()
        out["peak_after_free"] = ft.max_memory_allocated()
        out["peak_reserved_after_free"] = ft.max_memory_reserved()
        s = ft.memory_stats()
        out["stats_peak"] = s["allocated_bytes.all.peak"]
    """)
    r1, r2 = round_size(4_000_000), round_size(2_000_000)
    assert out["alloc"] == r1
    assert out["peak"] == r1 + r2
    assert out["peak_reserved"] == LARGE_BUFFER  # both fit one 20 MiB segment
    assert out["peak_after_reset"] == r1
    assert out["peak_reserved_after_reset"] == LARGE_BUFFER
    assert out["peak_after_free"] == r1
    assert out["peak_reserved_after_free"] == LARGE_BUFFER
    assert out["stats_peak"] == r1


def test_freed_neighbours_merge():
    out = run("""
        a = ft.empty(1_000_000)
        b = ft.empty(1_000_000)
        c = ft.empty(1_000_000)
        out["one_segment"] = ft.memory_stats()["segment.all.current"]
        pa = a.data_ptr()
        del b
        gc.collect()
        out["inactive_split"] = ft.memory_stats()["inactive_split_bytes.all.current"]
        del a, c
        gc.collect()
        # Merged back into one free 20 MiB block: a 19 MiB request fits it.
        big = ft.empty(19 * 1024 * 1024, dtype=ft.uint8)
        out["reserved"] = ft.memory_reserved()
        out["segments"] = ft.memory_stats()["segment.all.current"]
        out["same_start"] = big.data_ptr() == pa
    """)
    assert out["one_segment"] == 1
    assert out["inactive_split"] > 0
    assert out["reserved"] == LARGE_BUFFER
    assert out["segments"] == 1
    assert out["same_start"] is True


def test_best_fit_prefers_smallest_cached_block():
    out = run("""
        a = ft.empty(6 * 1024 * 1024, dtype=ft.uint8)   # segment 1 (20 MiB)
        sep = ft.empty(13 * 1024 * 1024, dtype=ft.uint8)  # rest of segment 1
        b = ft.empty(3 * 1024 * 1024, dtype=ft.uint8)   # segment 2
        sep2 = ft.empty(16 * 1024 * 1024, dtype=ft.uint8)  # >= 10 MiB: segment 3 of its own
        pa, pb = a.data_ptr(), b.data_ptr()
        del a, b
        gc.collect()
        c = ft.empty(2 * 1024 * 1024, dtype=ft.uint8)
        out["picked_smaller"] = c.data_ptr() == pb
        out["reserved_unchanged"] = ft.memory_reserved()
    """)
    assert out["picked_smaller"] is True


def test_stats_keys_follow_torch_cuda_names():
    out = run("""
        x = ft.empty(10)
        out["keys"] = sorted(ft.memory_stats().keys())
        out["device_kw"] = ft.memory_stats(device="cpu")["allocated_bytes.all.current"]
    """)
    for key in ["allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
                "reserved_bytes.all.peak", "active_bytes.all.current", "requested_bytes.all.current",
                "num_alloc_retries", "num_ooms"]:
        assert key in out["keys"]
    assert out["device_kw"] == 512


def test_in_process_deltas_and_cuda_device_refused():
    import gc

    import ferrotorch as ft

    gc.collect()
    before = ft.memory_allocated()
    x = ft.empty(1000, 1000)
    assert ft.memory_allocated() - before == round_size(4_000_000)
    assert ft.max_memory_allocated() >= ft.memory_allocated()
    assert ft.memory_reserved() >= ft.memory_allocated()
    assert ft.max_memory_reserved() >= ft.memory_reserved()
    del x
    gc.collect()
    assert ft.memory_allocated() == before
    with pytest.raises(RuntimeError):
        ft.memory_allocated(device="cuda")
    with pytest.raises(RuntimeError):
        ft.empty_cache(device="cuda:0")
