"""Grad-mode context managers, usable as decorators, thread-local like PyTorch's."""

import functools

from .. import _C


class _GradModeContext:
    """Base: subclasses set ``self.mode`` before entering."""

    mode = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__() if not isinstance(self, set_grad_enabled) else set_grad_enabled(self.mode):
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Disables gradient recording inside the block."""

    mode = False


class enable_grad(_GradModeContext):
    """Enables gradient recording inside the block."""

    mode = True


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (ferrotorch has no separate inference tensors)."""

    def __init__(self, mode=True):
        self.mode = not mode


class set_grad_enabled(_GradModeContext):
    """Sets grad mode now (also restorable as a context manager)."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
