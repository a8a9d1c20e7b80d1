"""``ferrotorch.autograd.graph``: graph nodes and saved-tensor hooks."""

from .. import _C

Node = _C.Node

_saved_tensors_hooks_stack = []


class saved_tensors_hooks:
    """Context manager installing ``pack_hook``/``unpack_hook`` for tensors saved
    by custom Functions inside the block (built-in ops keep their saved tensors
    in Rust and do not call these hooks yet)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_tensors_hooks_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_tensors_hooks_stack.pop()
        return False


def _current_hooks():
    return _saved_tensors_hooks_stack[-1] if _saved_tensors_hooks_stack else None
