"""Reverse-mode transforms: ``grad``, ``grad_and_value`` and ``vjp``."""

import functools

from .. import _C
from ._levels import (GradOn, Level, assert_float_outputs, assert_non_empty_tensor_output,
                      differentiable_args, grads_or_zeros, split_aux)
from ._pytree import tree_flatten, tree_unflatten

_GV = "grad_and_value(f)(*args)"


def _grad_and_value_impl(func, argnums, has_aux, args, kwargs):
    level = Level()
    with GradOn():
        args, flat_diff, spec = differentiable_args(level, args, argnums)
        output = func(*args, **kwargs)
        aux = None
        if has_aux:
            output, aux = split_aux(output, _GV)
        if not isinstance(output, _C.TensorBase):
            raise RuntimeError(f"{_GV}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{_GV}: Expected f(*args) to return a scalar Tensor, got tensor with "
                               f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        keep = level.reaches_outside([output])
        grads = grads_or_zeros([output], flat_diff, create_graph=keep)
        grads = level.unwrap(tree_unflatten(grads, spec))
        output = level.unwrap(output)
        if has_aux:
            return grads, (output, level.unwrap(aux))
        return grads, output


def grad_and_value(func, argnums=0, has_aux=False):
    """
    Returns a function to compute a tuple of the gradient and primal, or
    forward, computation.

    Args:
        func (Callable): A Python function that takes one or more arguments.
            Must return a single-element Tensor. If specified ``has_aux``
            equals ``True``, function can return a tuple of single-element
            Tensor and other auxiliary objects: ``(output, aux)``.
        argnums (int or Tuple[int]): Specifies arguments to compute gradients
            with respect to. ``argnums`` can be single integer or tuple of
            integers. Default: 0.
        has_aux (bool): Flag indicating that ``func`` returns a tensor and
            other auxiliary objects: ``(output, aux)``. Default: False.

    Returns:
        Function to compute a tuple of gradients with respect to its inputs
        and the forward computation. By default, the output of the function is
        a tuple of the gradient tensor(s) with respect to the first argument
        and the primal computation. If specified ``has_aux`` equals
        ``True``, tuple of gradients and tuple of the forward computation with
        output auxiliary objects is returned. If ``argnums`` is a tuple of
        integers, a tuple of a tuple of the output gradients with respect to
        each ``argnums`` value and the forward computation is returned.

    Gradients are computed by ferrotorch's reverse-mode autograd, so ``func``
    may use any differentiable operation; nesting with the other transforms
    (``grad(grad(f))``, ``jacrev(grad(f))``, ``vmap(grad(f))``) works.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_impl(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``grad`` operator helps computing gradients of ``func`` with respect to the
    input(s) specified by ``argnums``. This operator can be nested to
    compute higher-order gradients.

    Args:
        func (Callable): A Python function that takes one or more arguments.
            Must return a single-element Tensor. If specified ``has_aux`` equals ``True``,
            function can return a tuple of single-element Tensor and other auxiliary objects:
            ``(output, aux)``.
        argnums (int or Tuple[int]): Specifies arguments to compute gradients with respect to.
            ``argnums`` can be single integer or tuple of integers. Default: 0.
        has_aux (bool): Flag indicating that ``func`` returns a tensor and other
            auxiliary objects: ``(output, aux)``. Default: False.

    Returns:
        Function to compute gradients with respect to its inputs. By default, the output of
        the function is the gradient tensor(s) with respect to the first argument.
        If specified ``has_aux`` equals ``True``, tuple of gradients and output auxiliary objects
        is returned. If ``argnums`` is a tuple of integers, a tuple of output gradients with
        respect to each ``argnums`` value is returned.

    Example of using ``grad``:

        >>> from torch.func import grad
        >>> x = torch.randn([])
        >>> cos_x = grad(lambda x: torch.sin(x))(x)
        >>> assert torch.allclose(cos_x, x.cos())
        >>>
        >>> # Second-order gradients
        >>> neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
        >>> assert torch.allclose(neg_sin_x, -x.sin())

    Like in PyTorch, ``grad`` differentiates even inside ``torch.no_grad()``, and inputs
    the output does not depend on get zero gradients.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        results = _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        if has_aux:
            g, (_, aux) = results
            return g, aux
        return results[0]

    return wrapper


def vjp(func, *primals, has_aux=False):
    """
    Standing for the vector-Jacobian product, returns a tuple containing the
    results of ``func`` applied to ``primals`` and a function that, when
    given ``cotangents``, computes the reverse-mode Jacobian of ``func`` with
    respect to ``primals`` times ``cotangents``.

    Args:
        func (Callable): A Python function that takes one or more arguments. Must
            return one or more Tensors.
        primals (Tensors): Positional arguments to ``func`` that must all be
            Tensors. The returned function will also be computing the
            derivative with respect to these arguments
        has_aux (bool): Flag indicating that ``func`` returns a
            ``(output, aux)`` tuple where the first element is the output of
            the function to be differentiated and the second element is
            other auxiliary objects that will not be differentiated.
            Default: False.

    Returns:
        Returns a ``(output, vjp_fn)`` tuple containing the output of ``func``
        applied to ``primals`` and a function that computes the vjp of
        ``func`` with respect to all ``primals`` using the cotangents passed
        to the returned function. If ``has_aux is True``, then instead returns a
        ``(output, vjp_fn, aux)`` tuple.
        The returned ``vjp_fn`` function will return a tuple of each VJP.

    ``vjp_fn`` may be called several times (the graph is retained); its
    ``create_graph`` argument defaults to whether grad mode is enabled.
    """
    level = Level()
    with GradOn():
        flat_primals, primals_spec = tree_flatten(primals)
        flat_diff = [level.make_differentiable(t) for t in flat_primals]
        primals_out = func(*tree_unflatten(flat_diff, primals_spec))
        aux = None
        if has_aux:
            primals_out, aux = split_aux(primals_out, "vjp(f, *primals)")
            aux = level.unwrap(aux)
        flat_out, out_spec = tree_flatten(primals_out)
        assert_non_empty_tensor_output(flat_out, "vjp(f, *primals)")
        assert_float_outputs(flat_out)
        results = level.unwrap(primals_out)

    def wrapper(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = _C.is_grad_enabled()
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to "
                f"the function. cotangents: {cot_spec}, primal output: {out_spec}")
        create = create_graph and (level.reaches_outside(flat_out)
                                   or any(isinstance(c, _C.TensorBase) and c.requires_grad for c in flat_cot))
        grads = grads_or_zeros(flat_out, flat_diff, flat_cot, retain_graph=retain_graph, create_graph=create)
        return level.unwrap(tree_unflatten(grads, primals_spec))

    if has_aux:
        return results, wrapper, aux
    return results, wrapper
