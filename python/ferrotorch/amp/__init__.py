"""``ferrotorch.amp``: autocast regions and gradient scaling."""

from .autocast_mode import autocast, is_autocast_enabled, get_autocast_dtype  # noqa: F401
from .autocast_mode import set_autocast_enabled, set_autocast_dtype  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
