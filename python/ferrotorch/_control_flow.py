"""Structured control flow and asynchronous calls of the ``torch`` namespace:
``cond``, and TorchScript's ``fork``/``wait`` over :class:`ferrotorch.futures.Future`.

PyTorch's ``cond`` is a higher-order operator that ``torch.compile``/``export``
capture with both branches; called eagerly it runs the branch ``pred`` picks,
which is what ferrotorch does (there is no graph capture, so neither branch is
traced and outputs aliasing inputs are not rejected). ``fork`` runs its function
at once on the calling thread, as TorchScript's interpreter does outside a
scripted graph, and returns a completed future.
"""

from . import _C
from .futures import Future

__all__ = ["cond", "fork", "wait", "Future"]


def _pred_value(pred):
    if isinstance(pred, _C.TensorBase):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")


def cond(pred, true_fn, false_fn, operands=()):
    r"""cond(pred, true_fn, false_fn, operands=()) -> Any

    Conditionally applies ``true_fn`` or ``false_fn``: eagerly, the same as::

        def cond(pred, true_branch, false_branch, operands):
            if pred:
                return true_branch(*operands)
            else:
                return false_branch(*operands)

    Args:
        pred (Union[bool, int, float, torch.Tensor]): a boolean expression or a
            tensor with one element, indicating which branch function to apply.
        true_fn (Callable): the function applied when ``pred`` is true.
        false_fn (Callable): the function applied when ``pred`` is false.
        operands (Tuple of possibly nested dict/list/tuple of torch.Tensor):
            the inputs of the branch functions.
    """
    branch = true_fn if _pred_value(pred) else false_fn
    return branch(*operands)


def fork(func, *args, **kwargs):
    r"""fork(func, *args, **kwargs) -> torch.Future

    Starts ``func(*args, **kwargs)`` asynchronously and returns a future of its
    result. ferrotorch runs it at once on the calling thread (TorchScript's
    eager behaviour): the returned future is completed, and an exception
    ``func`` raises propagates from ``fork``.
    """
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(fut):
    r"""wait(fut) -> object

    Waits for the future ``fut`` (from :func:`fork`) and returns its value.
    """
    if not isinstance(fut, Future):
        raise TypeError("wait(): incompatible function arguments. The following argument types are supported:\n"
                        "    1. (arg0: torch._C.Future) -> object\n\n"
                        f"Invoked with: {fut!r}")
    return fut.wait()
