"""``ferrotorch.utils``."""

from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
