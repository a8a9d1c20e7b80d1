"""``ferrotorch.nn``: modules and parameters (the full set is the nn issue)."""

from .parameter import Parameter  # noqa: F401
from .modules import Module, Linear, Sequential, ReLU  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
