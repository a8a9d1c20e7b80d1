"""DataLoader throughput: ferrotorch vs PyTorch, batches per second.

The same in-memory dataset (CIFAR-sized images and labels as a TensorDataset, or the
same samples produced by a Python ``__getitem__``) goes through each library's
DataLoader, shuffled, batch 64, with 0 and 2 worker processes (persistent workers, so
start-up is measured separately). Rounds alternate between the libraries so that load
from other processes hits both alike; the table reports the median of the rounds.

Usage::

    python benches/dataloader.py            # full
    python benches/dataloader.py --quick
"""

import argparse
import importlib
import statistics
import time

import numpy as np


class PySamples:
    """Map-style dataset whose __getitem__ runs Python per sample (decoding-like work)."""

    def __init__(self, libname, images, labels):
        # the library by name: the dataset must pickle to reach ferrotorch's workers
        self.libname, self.images, self.labels = libname, images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        lib = importlib.import_module(self.libname)
        return lib.from_numpy((img - 0.5) * 2.0), int(self.labels[i])


def make(libname, kind, n):
    lib = importlib.import_module(libname)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    if kind == "tensors":
        return lib, lib.utils.data.TensorDataset(lib.from_numpy(images), lib.from_numpy(labels))
    return lib, _pysamples(libname, images, labels)


def _pysamples(libname, images, labels):
    return PySamples(libname, images, labels)


def batches_per_second(loader, n_batches):
    t = time.perf_counter()
    k = 0
    while k < n_batches:
        for _ in loader:
            k += 1
            if k >= n_batches:
                break
    return k / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n, n_batches, rounds = (4096, 60, 3) if args.quick else (10000, 200, 5)
    libs = ["ferrotorch"]
    try:
        import torch  # noqa: F401
        libs.append("torch")
    except ImportError:
        print("PyTorch not installed: only ferrotorch is measured")
    print(f"{'dataset':10} {'workers':>7} " + " ".join(f"{lib + ' b/s':>15}" for lib in libs) + "   ratio ft/torch")
    for kind in ("tensors", "python"):
        for workers in (0, 2):
            loaders, starts = {}, {}
            for libname in libs:
                lib, ds = make(libname, kind, n)
                t = time.perf_counter()
                loader = lib.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=workers,
                                                   persistent_workers=workers > 0)
                next(iter(loader))
                starts[libname] = time.perf_counter() - t
                loaders[libname] = loader
            res = {lib: [] for lib in libs}
            for _ in range(rounds):
                for libname in libs:
                    res[libname].append(batches_per_second(loaders[libname], n_batches))
            med = {lib: statistics.median(v) for lib, v in res.items()}
            ratio = f"{med['ferrotorch'] / med['torch']:.2f}" if "torch" in med else "-"
            print(f"{kind:10} {workers:>7} " + " ".join(f"{med[lib]:>15.1f}" for lib in libs) + f"   {ratio}"
                  + (f"   (first batch: " + ", ".join(f"{lib} {starts[lib]:.2f}s" for lib in libs) + ")"
                     if workers else ""))
            for loader in loaders.values():
                it = getattr(loader, "_iterator", None)
                if it is not None and hasattr(it, "_shutdown_workers"):
                    it._shutdown_workers()


if __name__ == "__main__":
    main()
