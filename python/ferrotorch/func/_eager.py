"""``functionalize`` and ``debug_unwrap``: transforms whose effect is invisible in eager ferrotorch.

In PyTorch both act on functorch's wrapper tensors and on graph capture. ferrotorch's
transforms work on plain tensors (see ``_levels``) and it has no graph capture, so running the
function eagerly is exactly the program ``functionalize`` describes, and there is nothing to
unwrap.
"""

import functools


def functionalize(func, *, remove="mutations"):
    """
    functionalize is a transform that can be used to remove (intermediate)
    mutations and aliasing from a function, while preserving the function's
    semantics.

    ``functionalize(func)`` returns a new function with the same semantics
    as ``func``, but with all intermediate mutations removed. Every inplace
    operation performed on an intermediate tensor ``intermediate.foo_()`` gets
    replaced by its out-of-place equivalent ``intermediate_updated = intermediate.foo()``.
    Mutations to the function's inputs are applied back to them, as in PyTorch.

    Args:
        func (Callable): A Python function that takes one or more arguments.
        remove (str): An optional string argument, that takes on either
            the value 'mutations' or 'mutations_and_views'.

    Returns:
        Returns a new "functionalized" function. It takes the same inputs as
        ``func``, and has the same behavior, but any mutations
        (and optionally aliasing) performed on intermediate tensors
        in the function will be removed.

    .. note::
        The functionalized program only differs from ``func`` in the graph a
        tracer would capture; its values, and the updates of mutated inputs,
        are those of ``func`` run eagerly. ferrotorch has no tracer, so the
        returned function runs ``func`` eagerly.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    """Unwraps a functorch tensor (e.g. BatchedTensor, GradTrackingTensor) to its underlying tensor.

    This function should only be used in a debug setting (e.g. trying to print the
    value of a Tensor in a debugger). Otherwise, using it on function
    transforms will lead to undefined behavior.

    ferrotorch's transforms never wrap tensors, so every tensor is already unwrapped
    and is returned as is.
    """
    return tensor
