"""Pieces shared by the optimizers: grad-mode handling for ``step`` and closures."""

import functools

from .. import _C
from .optimizer import _get_scalar_dtype, _scalar_tensor, _to_scalar, _get_value  # noqa: F401


def _use_grad_for_differentiable(func):
    """Runs ``step`` with autograd off unless the optimizer was built with ``differentiable=True``."""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        prev = _C.is_grad_enabled()
        try:
            _C._set_grad_enabled(bool(self.defaults.get("differentiable", False)))
            return func(self, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)

    return wrapper


def _eval_closure(closure):
    if closure is None:
        return None
    prev = _C.is_grad_enabled()
    try:
        _C._set_grad_enabled(True)
        return closure()
    finally:
        _C._set_grad_enabled(prev)


def _check_sparse(p, name):
    if getattr(p.grad, "is_sparse", False):
        raise RuntimeError(f"{name} does not support sparse gradients")


def _zeros_like(p):
    return _C.zeros_like(p).detach()


def _gather_group(optimizer, group, name, init):
    """The parameters of ``group`` that have a gradient, their gradients, and the
    state tensors of each: ``init(p)`` gives a new parameter's state (a dict, in
    PyTorch's key order) on its first step. Returns ``(params, grads, states)``
    with ``states[key]`` the list of that key's tensors (keys ``init`` left out,
    e.g. RMSprop's momentum buffer without momentum, get empty lists)."""
    params, grads, states = [], [], {}
    for p in group["params"]:
        if p.grad is None:
            continue
        _check_sparse(p, name)
        params.append(p)
        grads.append(p.grad)
        state = optimizer.state[p]
        if len(state) == 0:
            state.update(init(p))
        for k, v in state.items():
            states.setdefault(k, []).append(v)
    return params, grads, _Lists(states)


class _Lists(dict):
    """Per-key lists of state tensors; a key no parameter has reads as ``[]``."""

    def __missing__(self, key):
        return []


def _lerp_(self, end, weight):
    """``self.lerp_(end, weight)`` for a Python-number weight, as two vectorised passes.

    Bit-for-bit the formula of the native ``lerp`` (``self + w * (end - self)`` for
    ``|w| < 0.5``, else ``end - (end - self) * (1 - w)``), but the native scalar-weight lerp
    currently runs ~25x slower than ``sub``/``add_`` on large tensors, which dominated the
    Adam-family steps. Switch back to ``Tensor.lerp_`` once that kernel is vectorised.
    """
    # A 0-d tensor weight (tensor betas) is taken as the number it holds, as
    # PyTorch's argument parser takes a 0-d tensor for a Scalar.
    weight = _to_scalar(weight)
    diff = end - self
    if abs(weight) < 0.5:
        return self.add_(diff, alpha=weight)
    return self.copy_(end).sub_(diff, alpha=1 - weight)


def _fused_step(name, params, grads, states, **hyper):
    """One step of optimizer ``name`` over a group in Rust (one multi-tensor call).

    ``states`` are the per-parameter state lists in the kernel's order (see
    ``ferrotorch::ops::optim::fused_step_``). Returns False, having written nothing,
    when the group needs the op-by-op form: a hyper-parameter that is not a Python
    number (a tensor ``lr`` or betas), or tensors the kernel does not cover (autograd
    through the step with ``differentiable=True``, views, half types, complex, other
    devices); the caller then runs PyTorch's single-tensor algorithm op by op.
    """
    if not params:
        return True
    if not all(isinstance(v, (bool, int, float)) for v in hyper.values()):
        return False
    return _C._fused_step_(name, params, grads, states, hyper)
