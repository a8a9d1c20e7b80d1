"""``ferrotorch.utils``."""

from . import checkpoint  # noqa: F401
from . import safetensors  # noqa: F401
from . import backcompat  # noqa: F401


def __getattr__(name):
    # ``data`` loads on first use: it needs NumPy and multiprocessing, which
    # ``import ferrotorch`` avoids.
    if name == "data":
        import importlib
        return importlib.import_module(".data", __name__)
    raise AttributeError(f"module 'ferrotorch.utils' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | {"data"})
