"""Module backward hooks: identity autograd functions around a module's inputs and outputs
that hand ``grad_input``/``grad_output`` to the hooks registered with
``register_full_backward_hook``/``register_full_backward_pre_hook``."""

from .. import _C
from ..autograd.function import Function


class _HookFunction(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        # Fresh aliases, so this node sits between the module and the rest of the graph.
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.state(grads))


class BackwardHook:
    """One module call's backward hooks: ``setup_input_hook`` wraps the tensor arguments,
    ``setup_output_hook`` the tensor outputs."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _wrap(self, args, fn):
        is_tuple = isinstance(args, tuple)
        seq = args if is_tuple else (args,)
        idx = [i for i, a in enumerate(seq) if isinstance(a, _C.TensorBase)]
        if not idx or not _C.is_grad_enabled() or not any(seq[i].requires_grad for i in idx):
            return args, None
        wrapped = _HookFunction.apply(fn, *[seq[i] for i in idx])
        out = list(seq)
        for i, w in zip(idx, wrapped):
            out[i] = w
        out = tuple(out)
        return (out if is_tuple else out[0]), idx

    def setup_input_hook(self, args):
        def fn(grads):
            masked = [g if self._inputs[i].requires_grad else None for i, g in enumerate(grads)]
            grad_inputs = self._pack_with_none(self.input_tensors_index, masked, self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is None:
                    continue
                if len(res) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(res)}, but expected {len(grad_inputs)}")
                grad_inputs = res
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, grad_inputs)

        self.n_inputs = len(args)
        self._inputs = [a for a in args if isinstance(a, _C.TensorBase)]
        if not self.user_hooks:
            return args
        new, idx = self._wrap(args, fn)
        self.input_tensors_index = idx
        return new

    def setup_output_hook(self, args):
        def fn(grads):
            grad_outputs = self._pack_with_none(self.output_tensors_index, list(grads), self.n_outputs)
            for hook in self.user_pre_hooks:
                res = hook(self.module, grad_outputs)
                if res is None:
                    continue
                if len(res) != len(grad_outputs):
                    raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                       f"got {len(res)}, but expected {len(grad_outputs)}")
                grad_outputs = res
            self.grad_outputs = grad_outputs
            # No input needs a gradient: the hooks run now, with grad_input all None.
            if self.input_tensors_index is None:
                grad_inputs = (None,) * self.n_inputs
                for hook in self.user_hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
                self.grad_outputs = None
            return self._unpack_none(self.output_tensors_index, grad_outputs)

        is_tuple = isinstance(args, tuple)
        self.n_outputs = len(args) if is_tuple else 1
        new, idx = self._wrap(args, fn)
        self.output_tensors_index = idx
        return new
