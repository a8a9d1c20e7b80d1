"""Jacobians and Hessians: ``jacrev``, ``jacfwd``, ``hessian``.

PyTorch vmaps a vjp (or jvp) over the standard basis. ferrotorch runs that basis as a loop of
backward passes, one per output element for ``jacrev`` and one per input element for
``jacfwd`` (after one shared linearization, see ``_forward``), and stacks the rows/columns.
"""

import functools

from .. import _C
from .._shape_ops import stack
from ._forward import Linearization
from ._levels import (GradOn, Level, assert_float_outputs, assert_non_empty_tensor_output,
                      differentiable_args, error_if_complex, split_aux)
from ._pytree import tree_flatten, tree_unflatten
from ._vmap import check_randomness_arg, random_state_guard


def _zeros_block(o, x):
    return _C.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)


def _reshape_block(stacked, o, x):
    return stacked.reshape(tuple(o.shape) + tuple(x.shape))


def _one_hot(n, k, like):
    e = _C.zeros(n, dtype=like.dtype)
    e[k] = 1
    return e.reshape(tuple(like.shape))


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """
    Computes the Jacobian of ``func`` with respect to the arg(s) at index
    ``argnum`` using reverse mode autodiff

    Args:
        func (function): A Python function that takes one or more arguments,
            one of which must be a Tensor, and returns one or more Tensors
        argnums (int or Tuple[int]): Optional, integer or tuple of integers,
            saying which arguments to get the Jacobian with respect to.
            Default: 0.
        has_aux (bool): Flag indicating that ``func`` returns a
            ``(output, aux)`` tuple where the first element is the output of
            the function to be differentiated and the second element is
            auxiliary objects that will not be differentiated.
            Default: False.
        chunk_size (None or int): If None (default), use the maximum chunk size
            (equivalent to doing a single vmap over vjp to compute the jacobian).
            If not None, then compute the jacobian :attr:`chunk_size` rows at a time.
            ferrotorch computes one row per backward pass whatever its value, so it is
            only validated, like PyTorch's.

    Returns:
        Returns a function that takes in the same inputs as ``func`` and
        returns the Jacobian of ``func`` with respect to the arg(s) at
        ``argnums``. If ``has_aux is True``, then the returned function
        instead returns a ``(jacobian, aux)`` tuple where ``jacobian``
        is the Jacobian and ``aux`` is auxiliary objects returned by ``func``.

    A basic usage with a pointwise, unary operation will give a diagonal array
    as the Jacobian

        >>> from torch.func import jacrev
        >>> x = torch.randn(5)
        >>> jacobian = jacrev(torch.sin)(x)
        >>> expected = torch.diag(torch.cos(x))
        >>> assert torch.allclose(jacobian, expected)
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args, **kwargs):
        from ..autograd import grad as _grad
        error_if_complex("jacrev", args, is_input=True)
        level = Level()
        with GradOn():
            args, xs, diff_spec = differentiable_args(level, args, argnums)
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                output, aux = split_aux(output, "vjp(f, *primals)")
                aux = level.unwrap(aux)
            flat_out, out_spec = tree_flatten(output)
            assert_non_empty_tensor_output(flat_out, "vjp(f, *primals)")
            error_if_complex("jacrev", flat_out, is_input=False)
            assert_float_outputs(flat_out)
            keep = level.reaches_outside(flat_out)
            per_output = []
            for o in flat_out:
                n = o.numel()
                if not o.requires_grad or n == 0:
                    blocks = [_zeros_block(o, x) for x in xs]
                else:
                    rows = [[] for _ in xs]
                    flat_o = o.reshape(-1)
                    for k in range(n):
                        gs = _grad(flat_o[k], xs, retain_graph=True, create_graph=keep, allow_unused=True)
                        for i, (g, x) in enumerate(zip(gs, xs)):
                            rows[i].append(_C.zeros_like(x) if g is None else g)
                    blocks = [_reshape_block(stack(r), o, x) for r, x in zip(rows, xs)]
                per_output.append(tree_unflatten([level.unwrap(b) for b in blocks], diff_spec))
            result = tree_unflatten(per_output, out_spec)
        return (result, aux) if has_aux else result

    return wrapper_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """
    Computes the Jacobian of ``func`` with respect to the arg(s) at index
    ``argnum`` using forward-mode autodiff

    Args:
        func (function): A Python function that takes one or more arguments,
            one of which must be a Tensor, and returns one or more Tensors
        argnums (int or Tuple[int]): Optional, integer or tuple of integers,
            saying which arguments to get the Jacobian with respect to.
            Default: 0.
        has_aux (bool): Flag indicating that ``func`` returns a
            ``(output, aux)`` tuple where the first element is the output of
            the function to be differentiated and the second element is
            auxiliary objects that will not be differentiated.
            Default: False.
        randomness(str): Flag indicating what type of randomness to use.
            See :func:`vmap` for more detail. Allowed: "different", "same", "error".
            Default: "error"

    Returns:
        Returns a function that takes in the same inputs as ``func`` and
        returns the Jacobian of ``func`` with respect to the arg(s) at
        ``argnums``. If ``has_aux is True``, then the returned function
        instead returns a ``(jacobian, aux)`` tuple where ``jacobian``
        is the Jacobian and ``aux`` is auxiliary objects returned by ``func``.

    .. note::
        ``func`` runs once; the columns come from the double-vjp trick (see
        :func:`jvp`), one backward pass per input element.

        >>> from torch.func import jacfwd
        >>> x = torch.randn(5)
        >>> jacobian = jacfwd(torch.sin)(x)
        >>> expected = torch.diag(torch.cos(x))
        >>> assert torch.allclose(jacobian, expected)
    """
    check_randomness_arg(randomness)

    @functools.wraps(func)
    def wrapper_fn(*args, **kwargs):
        error_if_complex("jacfwd", args, is_input=True)
        level = Level()
        with GradOn():
            args, xs, diff_spec = differentiable_args(level, args, argnums)
            with random_state_guard(randomness):
                output = func(*args, **kwargs)
            aux = None
            if has_aux:
                output, aux = split_aux(output, "jvp(f, primals, tangents)")
                aux = level.unwrap(aux)
            flat_out, out_spec = tree_flatten(output)
            assert_non_empty_tensor_output(flat_out, "jvp(f, primals, tangents)")
            error_if_complex("jacfwd", flat_out, is_input=False)
            lin = Linearization(level, flat_out, xs)
            blocks = [[None] * len(xs) for _ in flat_out]
            for i, x in enumerate(xs):
                n = x.numel()
                cols = [[] for _ in flat_out]
                for k in range(n):
                    tangents = [None] * len(xs)
                    tangents[i] = _one_hot(n, k, x)
                    for j, c in enumerate(lin(tangents)):
                        cols[j].append(c)
                for j, o in enumerate(flat_out):
                    blocks[j][i] = (_zeros_block(o, x) if n == 0
                                    else _reshape_block(stack(cols[j], dim=-1), o, x))
            per_output = [tree_unflatten(b, diff_spec) for b in blocks]
            result = tree_unflatten(per_output, out_spec)
        return (result, aux) if has_aux else result

    return wrapper_fn


def hessian(func, argnums=0):
    """
    Computes the Hessian of ``func`` with respect to the arg(s) at index
    ``argnum`` via a forward-over-reverse strategy.

    The forward-over-reverse strategy (composing ``jacfwd(jacrev(func))``) is
    a good default for good performance. It is possible to compute Hessians
    through other compositions of :func:`jacfwd` and :func:`jacrev` like
    ``jacfwd(jacfwd(func))`` or ``jacrev(jacrev(func))``.

    Args:
        func (function): A Python function that takes one or more arguments,
            one of which must be a Tensor, and returns one or more Tensors
        argnums (int or Tuple[int]): Optional, integer or tuple of integers,
            saying which arguments to get the Hessian with respect to.
            Default: 0.

    Returns:
        Returns a function that takes in the same inputs as ``func`` and
        returns the Hessian of ``func`` with respect to the arg(s) at
        ``argnums``.

    A basic usage with a R^N -> R^1 function gives a N x N Hessian:

        >>> from torch.func import hessian
        >>> def f(x):
        >>>   return x.sin().sum()
        >>>
        >>> x = torch.randn(5)
        >>> hess = hessian(f)(x)  # equivalent to jacfwd(jacrev(f))(x)
        >>> assert torch.allclose(hess, torch.diag(-x.sin()))
    """
    return jacfwd(jacrev(func, argnums), argnums)
