"""Custom differentiable operations: ``ferrotorch.autograd.Function``.

``forward`` runs with grad mode off; if any tensor input requires grad, a node
named ``<ClassName>Backward`` is recorded in the Rust engine, whose backward
calls the class's ``backward``.

Ownership, to keep the graph free of reference cycles: the node owns the
Python ``backward`` closure, the closure owns ``ctx``, and ``ctx`` reaches its
saved tensors through a handle that holds the node only weakly. Nothing here
keeps the forward outputs alive (they own the node).
"""

import functools

from .. import _C

_RELEASED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """The ``ctx`` object passed to ``forward``/``setup_context``/``backward``."""

    def __init__(self):
        self.to_save = ()
        self._handle = None
        self._plain = None
        self.needs_input_grad = ()
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for ``backward``; in-place changes are detected."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.TensorBase):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Accepted for compatibility (forward-mode AD is not implemented)."""
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, version-checked."""
        if self._handle is not None:
            return self._handle.unpack()
        if self._plain is not None:
            return self._plain
        return tuple(self.to_save)

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        """Marks inputs modified in place by ``forward`` (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Marks outputs that get no gradient."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether ``None`` output gradients are passed to ``backward`` as zeros."""
        self.materialize_grads = bool(value)


BackwardCFunction = FunctionCtx


def _node_getattr(node, name):
    """A custom Function's grad_fn exposes its ctx's attributes, as in PyTorch."""
    ctx = node._ctx
    if ctx is None or name.startswith("__"):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    return getattr(ctx, name)


_C.Node.__getattr__ = _node_getattr


class _FunctionMeta(type):
    """Gives each Function subclass its own backward-node name."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


class _SingleLevelFunction(metaclass=_FunctionMeta):
    pass


class Function(_SingleLevelFunction):
    """Base class of custom autograd operations (use ``MyFn.apply(...)``)."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        grad_on = _C.is_grad_enabled()
        ctx.needs_input_grad = tuple(grad_on and _is_tensor(a) and a.requires_grad for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            if uses_setup:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        if uses_setup:
            cls.setup_context(ctx, args, output)
        return _finish(cls, ctx, args, output)


def _finish(cls, ctx, args, output):
    """Records the node for ``output`` of ``cls.forward(*args)``."""
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    non_diff = {id(t) for t in ctx._non_differentiable}
    dirty_ids = {id(t) for t in ctx._dirty}
    tensor_args = [(i, a) for i, a in enumerate(args) if _is_tensor(a)]
    out_ids = {id(o) for o in outputs if _is_tensor(o)}
    if any(id(t) not in out_ids for t in ctx._dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output.")

    # An input returned unchanged gets a fresh alias so that recording history
    # on it does not rewrite the input's own history (PyTorch makes a view).
    fixed = []
    for o in outputs:
        if _is_tensor(o) and id(o) not in dirty_ids and any(o is a for _, a in tensor_args):
            alias = o.detach()
            if id(o) in non_diff:
                non_diff.add(id(alias))
            o = alias
        fixed.append(o)
    outputs = tuple(fixed)

    # Node outputs: every tensor output (non-differentiable ones get zero grads).
    tensor_pos = [k for k, o in enumerate(outputs) if _is_tensor(o)]
    node_outs = [outputs[k] for k in tensor_pos]
    diff_mask = [id(o) not in non_diff and (o.dtype.is_floating_point or o.dtype.is_complex) for o in node_outs]
    out_meta = [(tuple(o.shape), o.dtype) for o in node_outs]
    n_outputs = len(outputs)
    arg_meta = [(tuple(a.shape), a.dtype) if _is_tensor(a) else None for a in args]
    tensor_args_only = [a for a in args if _is_tensor(a)]
    dirty = [_input_index(o, tensor_args_only) if id(o) in dirty_ids else None for o in node_outs]
    name = cls._backward_name

    def run_backward(*grads):
        full = [None] * n_outputs
        for k, pos in enumerate(tensor_pos):
            g = grads[k] if k < len(grads) else None
            if g is None and (ctx.materialize_grads or not diff_mask[k]):
                shape, dt = out_meta[k]
                g = _C.zeros(shape, dtype=dt)
            full[pos] = g
        res = cls.backward(ctx, *full)
        return _check_grads(name, res, arg_meta)

    # Like PyTorch, only tensor arguments get an edge (next_functions).
    inputs = [a for a in args if _is_tensor(a)]
    rec = _C._record_function(name, inputs, node_outs, run_backward, tuple(ctx.to_save), dirty, diff_mask, ctx)
    if rec is None:
        ctx._plain = tuple(ctx.to_save)
    else:
        _node, ctx._handle = rec
    ctx.to_save = ()
    return outputs if is_tuple else outputs[0]


def _input_index(t, args):
    for i, a in enumerate(args):
        if a is t:
            return i
    return None


def _check_grads(name, res, arg_meta):
    """PyTorch's validation of what ``backward`` returned."""
    if not isinstance(res, tuple):
        res = (res,)
    n = len(arg_meta)
    if len(res) != n:
        if len(res) > n and all(g is None for g in res[n:]):
            res = res[:n]
        else:
            raise RuntimeError(
                f"function {name} returned an incorrect number of gradients (expected {n}, got {len(res)})"
            )
    out = []
    for i, (g, meta) in enumerate(zip(res, arg_meta)):
        if meta is None:
            if g is not None:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position {i + 1}, "
                    "but the corresponding forward input was not a Variable"
                )
            # Non-tensor arguments have no edge.
            continue
        if g is None:
            out.append(None)
            continue
        if not _is_tensor(g):
            raise TypeError(f"function {name} returned a non-Tensor gradient of type {type(g).__name__}")
        shape, dt = meta
        if tuple(g.shape) != shape:
            if _expandable(shape, tuple(g.shape)):
                g = g.sum_to_size(shape)
            else:
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                )
        if g.dtype.is_complex and not dt.is_complex:
            g = g.real  # a real input takes the real part, as PyTorch's engine does
        if g.dtype != dt and (dt.is_floating_point or dt.is_complex):
            g = g.to(dt)
        out.append(g)
    return tuple(out)


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


class _DelayedError(Function):
    """Passes ``value`` through; differentiating it (through ``deps``) raises."""

    @staticmethod
    def forward(ctx, msg, value, *deps):
        ctx.msg = msg
        return value.detach()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """Decorates a ``backward`` that is not itself differentiable: it runs under
    ``no_grad``, and differentiating its result (double backward) raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        if not prev:
            return outputs
        requires = any(_is_tensor(a) and a.requires_grad for a in args)
        if not requires:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        wrapped = []
        for o in outs:
            if _is_tensor(o) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = _DelayedError.apply(
                    "trying to differentiate twice a function that was marked with @once_differentiable",
                    o,
                    *[a for a in args if _is_tensor(a) and a.requires_grad],
                )
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class InplaceFunction(Function):
    """Base for Functions with an ``inplace`` flag (kept for API compatibility)."""

    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    """Not supported (legacy API)."""
