"""``backends.cudnn``: cuDNN switches (settable; cuDNN is not available)."""

import contextlib

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available():
    """Whether cuDNN can be used: never in ferrotorch."""
    return False


def version():
    """The cuDNN version, None when it is not available."""
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the cuDNN flags for a block and restores them after."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: g[n] for n in names}
    g.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
             deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        g.update(old)
