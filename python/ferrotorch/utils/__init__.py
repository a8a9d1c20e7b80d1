"""``ferrotorch.utils``."""

from . import checkpoint  # noqa: F401
