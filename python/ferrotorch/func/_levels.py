"""One differentiation level of the function transforms, built on the tape autograd.

PyTorch's functorch wraps tensors per level. Here a level is instead a set of fresh leaves:
each differentiated input becomes a new leaf (or, when it already carries an outer graph,
an alias of it so outer levels still see through it), and the transform asks autograd for
gradients with respect to exactly those tensors. Partial derivatives with respect to a
specific tensor are what ``autograd.grad`` computes, so nested levels do not confuse their
perturbations. A result keeps its graph only when it reaches a leaf that is not this level's
own, i.e. when an enclosing transform or ordinary autograd may still differentiate it.
"""

from .. import _C
from ._pytree import tree_flatten, tree_unflatten


class GradOn:
    """Turns grad mode on for the body: transforms differentiate even under ``no_grad``."""

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class Level:
    def __init__(self):
        # Grad mode of the caller: with it off, nothing outside may record a graph through us.
        self.outer_grad = _C.is_grad_enabled()
        self._own = {}

    def own(self, t):
        """Registers ``t`` (a leaf this level made) so graph walks do not count it as outer."""
        self._own[id(t)] = t
        return t

    def make_differentiable(self, t):
        if not isinstance(t, _C.TensorBase):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if self.outer_grad and t.requires_grad:
            return t.view_as(t)
        return self.own(t.detach().requires_grad_(True))

    def reaches_outside(self, tensors):
        """True if the graph of any of ``tensors`` reaches a leaf that this level did not make."""
        if not self.outer_grad:
            return False
        seen = set()
        stack = []
        for t in tensors:
            if not isinstance(t, _C.TensorBase) or not t.requires_grad:
                continue
            fn = t.grad_fn
            if fn is None:
                if id(t) not in self._own:
                    return True
                continue
            stack.append(fn)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            var = getattr(node, "variable", None)
            if var is not None:
                if id(var) not in self._own:
                    return True
                continue
            for nxt, _ in getattr(node, "next_functions", ()):
                if nxt is not None and nxt not in seen:
                    stack.append(nxt)
        return False

    def unwrap(self, tree):
        """Detaches every tensor of ``tree`` whose graph only leads back to this level's leaves."""
        leaves, spec = tree_flatten(tree)
        out = [t.detach() if isinstance(t, _C.TensorBase) and t.requires_grad and not self.reaches_outside([t])
               else t for t in leaves]
        return tree_unflatten(out, spec)


def grads_or_zeros(outputs, inputs, grad_outputs=None, *, retain_graph=None, create_graph=False):
    """``autograd.grad`` where inputs that the outputs do not depend on get zeros, as in torch.func."""
    from ..autograd import grad as _grad
    pairs = [(o, None if grad_outputs is None else g)
             for o, g in zip(outputs, grad_outputs if grad_outputs is not None else outputs)
             if o.requires_grad]
    if pairs:
        outs = [o for o, _ in pairs]
        gos = None if grad_outputs is None else [g for _, g in pairs]
        res = _grad(outs, list(inputs), gos, retain_graph=retain_graph, create_graph=create_graph,
                    allow_unused=True)
    else:
        res = [None] * len(inputs)
    return [_C.zeros_like(x) if g is None else g for g, x in zip(res, inputs)]


# --- argnums ---------------------------------------------------------------------------------

def _validate_and_wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def slice_argnums(args, argnums):
    """The argument (int ``argnums``) or tuple of arguments selected by ``argnums``, and
    ``argnums`` made non-negative."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        argnums = _validate_and_wrap_argnum(argnums, len(args))
        return args[argnums], argnums
    argnums = tuple(_validate_and_wrap_argnum(a, len(args)) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(args[i] for i in argnums), argnums


def replace_args(args, new, argnums):
    """``args`` with the argument(s) at ``argnums`` replaced by ``new`` (one value or a tuple)."""
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def differentiable_args(level, args, argnums):
    """Replaces the ``argnums`` arguments (each a nest of tensors) by this level's differentiable
    versions; returns ``(args, flat_diff, diff_spec)``."""
    diff, argnums = slice_argnums(args, argnums)
    flat, spec = tree_flatten(diff)
    flat = [level.make_differentiable(t) for t in flat]
    diff = tree_unflatten(flat, spec)
    return replace_args(args, diff, argnums), flat, spec


# --- output checks shared by the transforms --------------------------------------------------

def assert_non_empty_tensor_output(output, api):
    if (len(output) == 1 and output[0] is None) or len(output) < 1:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {output})")
    for o in output:
        if not isinstance(o, _C.TensorBase):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def assert_float_outputs(flat_out):
    for o in flat_out:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                               f"got Tensor with dtype {o.dtype}")


def error_if_complex(func_name, args, is_input):
    leaves, _ = tree_flatten(args)
    for idx, arg in enumerate(leaves):
        if isinstance(arg, _C.TensorBase) and arg.is_complex():
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{func_name}: Expected all {which} to be real but received complex tensor "
                               f"at flattened input idx: {idx}")


def split_aux(output, api):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output
