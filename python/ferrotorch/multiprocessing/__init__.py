"""``ferrotorch.multiprocessing``: Python's :mod:`multiprocessing` with tensors that can be
shared between processes.

Tensors moved to shared memory with :meth:`Tensor.share_memory_` (or
:meth:`nn.Module.share_memory`) are sent to other processes as a handle to the same pages,
so in-place updates in one process are seen by all (as PyTorch's ``file_descriptor``
strategy, the only one offered here).
"""

import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from . import reductions  # noqa: F401  (registers the Tensor pickler)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

_STRATEGIES = {"file_descriptor"}


def get_all_sharing_strategies():
    """Returns the set of sharing strategies supported here."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """Returns the current strategy for sharing CPU tensors."""
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors.

    Args:
        new_strategy (str): name of the selected strategy; only ``"file_descriptor"`` exists here.
    """
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}; supported: {sorted(_STRATEGIES)}")
