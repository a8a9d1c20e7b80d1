"""Helpers shared by the DataLoader and its worker processes."""

from . import collate  # noqa: F401
from . import worker  # noqa: F401

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between checks, while waiting on a queue, that the other side is alive."""
