"""``ferrotorch.autograd.graph``: graph nodes and saved-tensor hooks."""

import threading

from .. import _C

Node = _C.Node

_state = threading.local()


def _disabled_message():
    return getattr(_state, "disabled", None)


class saved_tensors_hooks:
    """Context manager installing ``pack_hook``/``unpack_hook`` for every tensor
    saved for backward inside the block, by built-in ops and custom Functions
    alike (thread-local, innermost wins)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = _disabled_message()
        if msg is not None:
            raise RuntimeError(msg)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors stay where they are: ferrotorch only has the CPU device."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Inside the block, installing saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _disabled_message()
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.disabled = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)

        return wrapper


def get_gradient_edge(tensor):
    """``(grad_fn or AccumulateGrad node, output_nr)`` of ``tensor``."""
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor.output_nr if hasattr(tensor, "output_nr") else 0)
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    # The AccumulateGrad node of a leaf, as `expand_as(x).grad_fn.next_functions` shows it.
    return tensor.expand_as(tensor).grad_fn.next_functions[0]
