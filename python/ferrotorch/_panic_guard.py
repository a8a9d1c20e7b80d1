"""The guard that keeps a Rust panic from reaching users as ``PanicException``.

pyo3 turns a panic inside a native call into ``pyo3_runtime.PanicException``, a
``BaseException`` that ordinary ``except Exception`` code does not catch.  A
panic in ferrotorch is always an engine bug (bad input must raise a proper
error), so it is shown as PyTorch shows its internal asserts: a
``RuntimeError`` whose message starts with ``internal error:``.  The class keeps
its name so tests and the fuzzer still count it as a bug.
"""

from . import _C


def install():
    panic = _C._PanicException
    if not issubclass(panic, RuntimeError):
        # Both classes share BaseException's instance layout, so Python allows
        # swapping the base of this heap type in place.
        panic.__bases__ = (RuntimeError,)
        panic.__str__ = lambda self: "internal error: " + BaseException.__str__(self)
