"""``ferrotorch.autograd``: grad-mode switches (the backward engine is the autograd issue)."""

from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
