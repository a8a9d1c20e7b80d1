"""``ferrotorch.utils._python_dispatch``: Python dispatch modes (``TorchDispatchMode``)."""

from .. import _dispatch

__all__ = ["TorchDispatchMode"]


class TorchDispatchMode:
    r"""A context manager that intercepts every operator call below autograd.

    Subclass it and override :meth:`__torch_dispatch__`; inside ``with
    Mode():`` each ATen-level operator (``aten.add.Tensor``,
    ``aten.addmm.default``...) is handed to it instead of running::

        class Logger(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                print(func)
                return func(*args, **(kwargs or {}))

    Modes stack: the innermost mode sees a call first, and while its handler
    runs it is disabled, so ``func(...)`` (and any other op it calls) goes to
    the enclosing mode, and to the kernel when no mode is left.  Autograd
    records above the modes, so results still carry ``grad_fn``.

    Composite operators (``F.linear``, ``matmul`` of batched inputs...) reach
    the mode as the ops they decompose into, as CompositeImplicitAutograd ops
    do in PyTorch.  Modes are thread-local.

    .. note:: ferrotorch intercepts the Python entry points of a fixed table
       of common operators (``ferrotorch._dispatch``); an operator missing
       from the table runs without reaching the mode.
    """

    def __init__(self, _dispatch_key=None):
        self._entered = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """Handles one operator call.

        Args:
            func (OpOverload): the operator, e.g. ``ferrotorch.ops.aten.add.Tensor``;
                call it to run the operator (through the enclosing modes).
            types (tuple): the tensor classes among the arguments.
            args (tuple): positional arguments.
            kwargs (dict): keyword arguments.
        """
        raise NotImplementedError()

    def __enter__(self):
        # __init__ may have been overridden without calling super().__init__().
        if not hasattr(self, "_entered"):
            self._entered = []
        _dispatch.push_mode(self)
        self._entered.append(True)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self._entered.pop()
        _dispatch.pop_mode(self)
        return None

    @classmethod
    def push(cls, *args, **kwargs):
        """Creates the mode (PyTorch's ``Mode.push(...)``); use it in a ``with``."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


def _get_current_dispatch_mode():
    """The innermost active dispatch mode of this thread, or None."""
    modes = _dispatch._state.modes
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack():
    """The active dispatch modes of this thread, outermost first."""
    return list(_dispatch._state.modes)


def _len_torch_dispatch_stack():
    return len(_dispatch._state.modes)


def is_in_torch_dispatch_mode(include_infra_modes=True):
    """True while a dispatch mode is active on this thread."""
    return bool(_dispatch._state.modes)
