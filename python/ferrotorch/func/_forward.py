"""Forward-mode transforms (``jvp``, ``linearize``) by the double-vjp trick.

ferrotorch has no forward-mode autograd, so Jacobian-vector products come from reverse mode
twice: with ``u`` a dummy cotangent, ``g(u) = J^T u`` is computed once with a graph, and since
``g`` is linear in ``u``, the vjp of ``g`` with cotangent ``v`` is ``J v``. One linearization
serves any number of tangents, one backward pass each.
"""

import functools

from .. import _C
from ._levels import GradOn, Level, assert_non_empty_tensor_output, split_aux
from ._pytree import tree_flatten, tree_unflatten

_JVP = "jvp(f, primals, tangents)"


class Linearization:
    """``J v`` for the outputs ``outs`` of a function of this level's differentiable ``xs``."""

    def __init__(self, level, outs, xs):
        from ..autograd import grad as _grad
        self.level, self.outs, self.xs = level, outs, xs
        self.keep = level.reaches_outside(outs)
        self._diff_out = [i for i, o in enumerate(outs) if o.requires_grad]
        # u's value does not matter (g is linear in it); ones make a non-recorded backward visible below.
        self._us = [level.own(_C.ones_like(outs[i]).requires_grad_(True)) for i in self._diff_out]
        if self._us:
            gs = _grad([outs[i] for i in self._diff_out], list(xs), self._us, create_graph=True,
                       allow_unused=True)
        else:
            gs = [None] * len(xs)
        for g in gs:
            # g = J^T u without a graph to u is fine only when it is zero (sign, round, ...): otherwise
            # some backward ran without recording itself and J v cannot be read off it.
            if g is not None and not g.requires_grad and bool(g.ne(0).any()):
                raise RuntimeError(
                    "jvp: an operation in f has a backward that is not differentiable (e.g. an "
                    "autograd.Function marked once_differentiable), so forward-mode products, which "
                    "ferrotorch forms by differentiating the backward pass, are not available for f")
        self._gs = [(i, g) for i, g in enumerate(gs) if g is not None and g.requires_grad]

    def __call__(self, tangents, strict=False):
        """Returns ``[J_o v for each output o]``, ``tangents`` matching ``xs`` (None: a zero tangent)."""
        from ..autograd import grad as _grad
        pairs = [(g, tangents[i]) for i, g in self._gs if tangents[i] is not None]
        create = _C.is_grad_enabled() and (self.keep or any(v.requires_grad for _, v in pairs))
        if pairs:
            jv = _grad([g for g, _ in pairs], self._us, [v for _, v in pairs], retain_graph=True,
                       create_graph=create, allow_unused=True)
        else:
            jv = [None] * len(self._us)
        out = [None] * len(self.outs)
        for k, i in enumerate(self._diff_out):
            out[i] = jv[k]
        if strict and any(t is None for t in out):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                               "inputs. This is not allowed with strict=True.")
        out = [_C.zeros_like(o) if t is None else t for t, o in zip(out, self.outs)]
        return [self.level.unwrap(t) for t in out]


def _check_tangent(t, p):
    if tuple(t.shape) != tuple(p.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {list(p.shape)} while the given forward gradient is of "
            f"size {list(t.shape)}.")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """
    Standing for the Jacobian-vector product, returns a tuple containing
    the output of `func(*primals)` and the "Jacobian of ``func`` evaluated at
    ``primals``" times ``tangents``. This is also known as forward-mode autodiff.

    Args:
        func (function): A Python function that takes one or more arguments,
            one of which must be a Tensor, and returns one or more Tensors
        primals (Tensors): Positional arguments to ``func`` that must all be
            Tensors. The returned function will also be computing the
            derivative with respect to these arguments
        tangents (Tensors): The "vector" for which Jacobian-vector-product is
            computed. Must be the same structure and sizes as the inputs to
            ``func``.
        has_aux (bool): Flag indicating that ``func`` returns a
            ``(output, aux)`` tuple where the first element is the output of
            the function to be differentiated and the second element is
            other auxiliary objects that will not be differentiated.
            Default: False.

    Returns:
        Returns a ``(output, jvp_out)`` tuple containing the output of ``func``
        evaluated at ``primals`` and the Jacobian-vector product.
        If ``has_aux is True``, then instead returns a ``(output, jvp_out, aux)`` tuple.

    .. note::
        ferrotorch has no forward-mode autograd: the product is computed by two
        reverse-mode passes (the "double-vjp trick"), so ``func`` may use any
        operation whose backward is itself differentiable.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if primals "
            f"is a tuple of 3 tensors, tangents also must be. Got primals with structure {primals_spec} and "
            f"tangents with structure {tangents_spec}")
    _assert_non_empty_list_of_tensors(flat_primals, "primals")
    _assert_non_empty_list_of_tensors(flat_tangents, "tangents")
    for t, p in zip(flat_tangents, flat_primals):
        _check_tangent(t, p)
    level = Level()
    with GradOn():
        xs = [level.make_differentiable(p) for p in flat_primals]
        output = func(*tree_unflatten(xs, primals_spec))
        aux = None
        if has_aux:
            output, aux = split_aux(output, _JVP)
            aux = level.unwrap(aux)
        flat_out, out_spec = tree_flatten(output)
        assert_non_empty_tensor_output(flat_out, _JVP)
        tangents_out = Linearization(level, flat_out, xs)(flat_tangents, strict=strict)
        primals_out = [level.unwrap(o) for o in flat_out]
    result = (tree_unflatten(primals_out, out_spec), tree_unflatten(tangents_out, out_spec))
    return result + (aux,) if has_aux else result


def _assert_non_empty_list_of_tensors(output, argname):
    if len(output) == 0:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for out in output:
        if not isinstance(out, _C.TensorBase):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(out)}")


def linearize(func, *primals):
    """
    Returns the value of ``func`` at ``primals`` and linear approximation
    at ``primals``.

    Args:
        func (Callable[..., Union[Tensor, Tuple[Tensor, ...]]]): A Python function that takes one or more arguments.
        primals (Tensor): Positional arguments to ``func`` that must all be
            Tensors. These are the values at which the function is linearly approximated.

    Returns:
        Returns a ``(output, jvp_fn)`` tuple containing the output of ``func``
        applied to ``primals`` and a function that computes the jvp of
        ``func`` evaluated at ``primals``.

    ``jvp_fn`` reuses one reverse pass recorded here, so each call costs one
    backward pass (see :func:`jvp` for how the product is formed).
    """
    flat_primals, primals_spec = tree_flatten(primals)
    level = Level()
    with GradOn():
        xs = [level.make_differentiable(p) for p in flat_primals]
        output = func(*tree_unflatten(xs, primals_spec))
        flat_out, out_spec = tree_flatten(output)
        assert_non_empty_tensor_output(flat_out, _JVP)
        lin = Linearization(level, flat_out, xs)
        primals_out = tree_unflatten([level.unwrap(o) for o in flat_out], out_spec)

    @functools.wraps(func)
    def jvp_fn(*tangents):
        flat_tangents, tangent_spec = tree_flatten(tangents)
        if tangent_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangent_spec} to have the same argspec as the primals "
                               f"{primals_spec}")
        for idx, (t, p) in enumerate(zip(flat_tangents, flat_primals)):
            for what, a, b in (("shape", t.shape, p.shape), ("device", t.device, p.device),
                               ("dtype", t.dtype, p.dtype)):
                if a != b:
                    raise RuntimeError(f"tangent:{idx} with {what} {a} in flattened pytree doesn't match the "
                                       f"{what} {b} of the corresponding primal.")
        with GradOn():
            return tree_unflatten(lin(flat_tangents), out_spec)

    return primals_out, jvp_fn
