"""``torch.ThroughputBenchmark``: runs a module (any callable) under an
inference-server-like load — several calling threads, each calling it on inputs
picked at random from those added — and reports the average latency per call.

``BenchmarkConfig`` holds the run's parameters, ``BenchmarkExecutionStats`` its
result; ``AggregationType`` (``AVG``/``SUM``) is the enum PyTorch exposes with it.
"""

import enum
import random
import threading
import time

__all__ = ["ThroughputBenchmark", "BenchmarkConfig", "BenchmarkExecutionStats", "AggregationType", "AVG", "SUM"]


class AggregationType(enum.IntEnum):
    """How a statistic is aggregated across calls: summed or averaged."""

    SUM = 0
    AVG = 1


AVG = AggregationType.AVG
SUM = AggregationType.SUM


class BenchmarkConfig:
    """Parameters of :meth:`ThroughputBenchmark.benchmark`.

    Attributes:
        num_calling_threads (int): threads calling the module concurrently. Default: 1.
        num_warmup_iters (int): untimed calls each thread makes first. Default: 1.
        num_iters (int): timed calls, shared among the threads. Default: 100.
        num_worker_threads (int): intra-op threads (ferrotorch's pool is process-wide; kept for parity). Default: 1.
        profiler_output_path (str): where to write a profiler trace of the timed calls ("" for none).
    """

    def __init__(self):
        self.num_calling_threads = 1
        self.num_warmup_iters = 1
        self.num_iters = 100
        self.num_worker_threads = 1
        self.profiler_output_path = ""


class BenchmarkExecutionStats:
    """The result of a benchmark run: ``latency_avg_ms`` (mean wall time of one
    call) and ``num_iters`` (timed calls made, at least the configured number)."""

    def __init__(self, latency_avg_ms, num_iters):
        self.latency_avg_ms = latency_avg_ms
        self.num_iters = num_iters

    def __repr__(self):
        return f"BenchmarkExecutionStats(latency_avg_ms={self.latency_avg_ms}, num_iters={self.num_iters})"


class ThroughputBenchmark:
    """Benchmarks ``module`` (an ``nn.Module`` or any callable) with inputs added
    by :meth:`add_input`, from several calling threads."""

    def __init__(self, module):
        self._module = module
        self._inputs = []

    def add_input(self, *args, **kwargs):
        """Stores one input (positional and keyword arguments) for the benchmark to pick from."""
        self._inputs.append((args, kwargs))

    def run_once(self, *args, **kwargs):
        """Calls the module once on the given arguments and returns its output."""
        return self._module(*args, **kwargs)

    def benchmark(self, config):
        """Runs the benchmark described by ``config`` (a :class:`BenchmarkConfig`) and
        returns its :class:`BenchmarkExecutionStats`."""
        if not self._inputs:
            raise RuntimeError("Please provide benchmark inputs.Did you forget to call add_input()? ")
        lock = threading.Lock()
        done = [0]
        total_ns = [0]
        start = threading.Barrier(config.num_calling_threads)
        errors = []

        def call():
            args, kwargs = random.choice(self._inputs)
            self._module(*args, **kwargs)

        def worker():
            try:
                for _ in range(config.num_warmup_iters):
                    call()
                start.wait()
                while True:
                    with lock:
                        if done[0] >= config.num_iters:
                            return
                        done[0] += 1
                    t0 = time.perf_counter_ns()
                    call()
                    dt = time.perf_counter_ns() - t0
                    with lock:
                        total_ns[0] += dt
            except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
                errors.append(e)
                start.abort()

        def run():
            threads = [threading.Thread(target=worker) for _ in range(config.num_calling_threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        if config.profiler_output_path:
            from . import profiler
            with profiler.profile() as prof:
                run()
            prof.export_chrome_trace(config.profiler_output_path)
        else:
            run()
        real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
        if real:
            raise real[0]
        n = done[0]
        return BenchmarkExecutionStats(total_ns[0] / 1e6 / n if n else 0.0, n)
