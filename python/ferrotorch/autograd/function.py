"""Custom differentiable operations: ``ferrotorch.autograd.Function``.

``forward`` runs with grad mode off; if any tensor input requires grad, a node
named ``<ClassName>Backward`` is recorded whose backward calls the class's
``backward`` through the Rust engine.
"""

import functools

from .. import _C
from . import graph as _graph


class FunctionCtx:
    """The ``ctx`` object passed to ``forward``/``backward``."""

    def __init__(self):
        self._saved = ()
        self._saved_versions = ()
        self._packed = None
        self.needs_input_grad = ()
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self._released = False

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for ``backward``; in-place changes are detected."""
        hooks = _graph._current_hooks()
        if hooks is not None:
            self._packed = (hooks[1], tuple(None if t is None else hooks[0](t) for t in tensors))
            self._saved = ()
        else:
            self._saved = tensors
        self._saved_versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``."""
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward."
            )
        if self._packed is not None:
            unpack, packed = self._packed
            return tuple(None if p is None else unpack(p) for p in packed)
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}], which is output 0 of {type(self).__name__}, "
                    f"is at version {t._version}; expected version {v} instead."
                )
        return self._saved

    def mark_dirty(self, *tensors):
        """Marks inputs modified in place by ``forward``."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Marks outputs that get no gradient."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether ``None`` output gradients are passed to ``backward`` as zeros."""
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    """Gives each Function subclass its own backward-node name."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd operations (use ``MyFn.apply(...)``)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        return _SETUP_NOT_OVERRIDDEN

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(_is_tensor(a) and a.requires_grad for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        with _C_no_grad():
            if uses_setup:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, output)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        inputs = [a if _is_tensor(a) else None for a in args]
        non_diff = {id(t) for t in ctx._non_differentiable}
        dirty = {id(t) for t in ctx._dirty}
        # An input returned unchanged gets a fresh alias so that recording
        # history on it does not rewrite the input's own history.
        fixed = []
        for o in outputs:
            if _is_tensor(o) and any(o is a for a in args if _is_tensor(a)) and id(o) not in dirty:
                o = o.detach()
            fixed.append(o)
        outputs = tuple(fixed)
        diff_outputs = [o for o in outputs if _is_tensor(o) and id(o) not in non_diff]
        n_out = len(diff_outputs)
        out_meta = [(o.shape, o.dtype) for o in diff_outputs]

        def run_backward(*grads):
            if ctx.materialize_grads:
                grads = tuple(_C.zeros(*shape, dtype=dt) if g is None else g for g, (shape, dt) in zip(grads, out_meta))
            full = []
            it = iter(grads)
            for o in outputs:
                if _is_tensor(o) and id(o) not in non_diff:
                    full.append(next(it))
                else:
                    full.append(None)
            res = cls.backward(ctx, *full[:len(outputs)]) if n_out else ()
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) < len(args):
                raise RuntimeError(
                    f"function {cls._backward_name} returned an incorrect number of gradients (expected {len(args)}, got {len(res)})"
                )
            res = res[: len(args)]
            out = []
            for g, a in zip(res, args):
                if not _is_tensor(a):
                    out.append(None)
                    continue
                if g is not None and tuple(g.shape) != tuple(a.shape):
                    try:
                        g = g.expand(a.shape) if g.dim() <= a.dim() else g
                    except RuntimeError:
                        pass
                    if tuple(g.shape) != tuple(a.shape):
                        raise RuntimeError(
                            f"Function {cls._backward_name} returned an invalid gradient at index {len(out)} - got "
                            f"{list(g.shape)} but expected shape compatible with {list(a.shape)}"
                        )
                out.append(g)
            return tuple(out)

        node = _C._record_function(cls._backward_name, inputs, diff_outputs, run_backward)
        if node is not None:
            node.__dict__["_ctx"] = ctx
        return output if is_tuple else outputs[0]


class _C_no_grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


_SETUP_NOT_OVERRIDDEN = object()


def once_differentiable(fn):
    """Decorates a ``backward`` that is not itself differentiable: it runs under ``no_grad``."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _C_no_grad():
            return fn(ctx, *args)

    return wrapper
