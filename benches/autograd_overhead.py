"""Autograd overhead: forward+backward of a tiny 3-op scalar graph,
``((x * y).sum() + 1).backward()``, ferrotorch vs PyTorch (median of many runs).

Run: ``PYTHONPATH=python python benches/autograd_overhead.py``. The ratio is
ferrotorch time / torch time (lower is better; the issue's target is <= 0.5).
"""

import statistics
import time


def _median_us(fn, runs=2000, inner=20):
    for _ in range(200):
        fn()
    samples = []
    for _ in range(runs // inner):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner * 1e6)
    return statistics.median(samples)


def three_op_scalar_graph(lib):
    """Median microseconds of one forward+backward of ``((x * y).sum() + 1)``."""
    x = lib.randn(4, requires_grad=True)
    y = lib.randn(4, requires_grad=True)

    def run():
        ((x * y).sum() + 1).backward()
        x.grad = None
        y.grad = None

    return _median_us(run)


def bench_autograd_overhead():
    """One benchmark row: (name, ferrotorch us, torch us or None, ratio or None)."""
    import ferrotorch
    ft = three_op_scalar_graph(ferrotorch)
    try:
        import torch
        torch.set_num_threads(1)
        th = three_op_scalar_graph(torch)
    except ImportError:
        th = None
    ratio = None if th is None else ft / th
    return ("autograd 3-op scalar fwd+bwd", ft, th, ratio)


if __name__ == "__main__":
    name, ft, th, ratio = bench_autograd_overhead()
    th_s = "n/a" if th is None else f"{th:.2f} us"
    r_s = "n/a" if ratio is None else f"{ratio:.2f}"
    print(f"{name}: ferrotorch {ft:.2f} us, torch {th_s}, ratio (ferrotorch/torch) {r_s}")
