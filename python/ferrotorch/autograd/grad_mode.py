"""Grad-mode context managers, usable as decorators (with or without
parentheses), thread-local like PyTorch's: the state lives in the Rust engine
per thread, so another thread keeps its own mode."""

import functools
import inspect
import threading

from .. import _C

_inference = threading.local()


def is_inference_mode_enabled():
    """Is an ``inference_mode`` block active on this thread?"""
    return getattr(_inference, "depth", 0) > 0


def _wrap(ctx_factory, fn):
    """Decorates ``fn`` (plain or generator function) to run inside a fresh context."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            # The mode applies while the generator body runs, not while the caller does.
            try:
                with ctx_factory():
                    request = gen.send(None)
                while True:
                    try:
                        response = yield request
                    except GeneratorExit:
                        with ctx_factory():
                            gen.close()
                        raise
                    except BaseException as e:
                        with ctx_factory():
                            request = gen.throw(e)
                    else:
                        with ctx_factory():
                            request = gen.send(response)
            except StopIteration as e:
                return e.value

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with ctx_factory():
            return fn(*args, **kwargs)

    return wrapper


class _GradModeContext:
    """Base: sets grad mode to ``self.mode`` in the block."""

    mode = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        return _wrap(self.clone, fn)


class _NoParam(_GradModeContext):
    """Also usable bare as ``@no_grad`` (PyTorch accepts both forms)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParam):
    """Disables gradient recording inside the block."""

    mode = False

    def __init__(self):
        pass


class enable_grad(_NoParam):
    """Enables gradient recording inside the block."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode now (restored when used as a context manager and on exit)."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        # Construction already switched the mode: undo that for the decorator form.
        _C._set_grad_enabled(self._prev)
        return _wrap(self.clone, fn)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (ferrotorch has no separate inference tensors);
    ``inference_mode(False)`` is a no-op block. Usable bare as a decorator."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.enabled = bool(mode)

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        if self.enabled:
            _C._set_grad_enabled(False)
            _inference.depth = getattr(_inference, "depth", 0) + 1
        return None

    def __exit__(self, *exc):
        if self.enabled:
            _inference.depth -= 1
        _C._set_grad_enabled(self._prev)
        return False

    def clone(self):
        return self.__class__(self.enabled)


class set_multithreading_enabled:
    """Accepted for compatibility (the engine runs backward on the calling thread)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
