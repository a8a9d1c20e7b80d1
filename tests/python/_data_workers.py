"""Datasets and hooks for DataLoader worker tests: module-level (so worker processes can
unpickle them) and free of a PyTorch import (so workers start quickly)."""

import os
import time

import numpy as np

import ferrotorch as ft
from ferrotorch.utils.data import Dataset, IterableDataset, get_worker_info


class Squares(Dataset):
    """Sample i: (tensor [i, i*i], i, {"worker": id}); optional failure and slowness."""

    def __init__(self, n=23, fail_at=None, sleep=0.0, crash_at=None):
        self.n, self.fail_at, self.sleep, self.crash_at = n, fail_at, sleep, crash_at
        self.tag = "main"

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.sleep:
            time.sleep(self.sleep)
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        if i == self.crash_at:
            os._exit(3)
        info = get_worker_info()
        return ft.tensor([i, i * i]), i, {"worker": -1 if info is None else info.id, "tag": self.tag}


class Typed(Dataset):
    """Tensors of several dtypes, to check they cross the process boundary intact."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        x = rng.standard_normal(5)
        return {
            "f32": ft.from_numpy(x.astype(np.float32)),
            "f64": ft.from_numpy(x),
            "bf16": ft.from_numpy(x.astype(np.float32)).to(ft.bfloat16),
            "bool": ft.from_numpy(x > 0),
            "i64": ft.arange(i, i + 3),
            "np": x.astype(np.float32),
            "s": f"item{i}",
        }


class Shards(IterableDataset):
    """0..n-1, split between workers by stride."""

    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        k, m = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(k, self.n, m))

    def __len__(self):
        return self.n


def tag_worker(worker_id):
    info = get_worker_info()
    info.dataset.tag = f"init{worker_id}/{info.num_workers}"


def failing_init(worker_id):
    raise KeyError("init failed")


def seed_probe_collate(batch):
    info = get_worker_info()
    return [info.seed, int(ft.randint(0, 2**30, ()).item()), int(np.random.randint(0, 2**30))]


class Big(Dataset):
    """Samples large enough that batches take the /dev/shm route."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        x = np.random.default_rng(i).standard_normal((64, 64)).astype(np.float32)
        return ft.from_numpy(x), ft.from_numpy(x.astype(np.float64)).to(ft.bfloat16)


class Slow(Dataset):
    """Sample 0 is slow, so with in_order=False later batches overtake it."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 0:
            time.sleep(1.0)
        return i


def ids_collate(batch):
    return list(batch)


class Holder(Dataset):
    """Holds one big tensor, so the dataset itself goes to the workers through /dev/shm."""

    def __init__(self):
        self.x = ft.from_numpy(np.arange(64 * 1024, dtype=np.float32).reshape(256, 256))

    def __len__(self):
        return 256

    def __getitem__(self, i):
        return self.x[i]
