"""``ferrotorch.autograd``: the backward engine (in Rust) as seen from Python."""

from .. import _C
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from . import graph  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from . import functional  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _C.TensorBase):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Computes the sum of gradients of ``tensors`` w.r.t. graph leaves, accumulating into ``.grad``."""
    if grad_tensors is None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors)
    _C._run_backward(tensors, grads, retain_graph, create_graph, _as_tuple(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of ``outputs`` w.r.t. ``inputs`` without touching ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    allow = bool(allow_unused) or materialize_grads
    res = _C._run_grad(outputs, inputs_t, _as_tuple(grad_outputs), retain_graph, create_graph, allow)
    if materialize_grads:
        res = tuple(_C.zeros_like(i) if g is None else g for g, i in zip(res, inputs_t))
    return res
