"""Muon (momentum orthogonalized by Newton-Schulz) for 2-D parameters."""

import math

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr
from ._common import _eval_closure, _lerp_, _to_scalar, _zeros_like
from .optimizer import _NoGrad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """Approximately orthogonalises ``grad`` with a quintic Newton-Schulz iteration in bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x.div(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = _ft.addmm(gram, gram, gram, beta=b, alpha=c)
        x = _ft.addmm(x, gram_update, x, beta=a)
    if tall:
        x = x.T
    return x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    r"""Implements the Muon algorithm (for 2-D parameters only).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        weight_decay (float, optional): weight decay (decoupled) (default: 0.1)
        momentum (float, optional): momentum factor (default: 0.95)
        nesterov (bool, optional): enables Nesterov momentum (default: True)
        ns_coefficients (tuple of three floats, optional): coefficients (a, b, c) of the
            Newton-Schulz orthogonalization polynomial (default: (3.4445, -4.775, 2.0315))
        eps (float, optional): term added to the norm for numerical stability (default: 1e-7)
        ns_steps (int, optional): number of Newton-Schulz iteration steps (default: 5)
        adjust_lr_fn (str, optional): ``"original"`` or ``"match_rms_adamw"`` (default: None)
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        with _NoGrad():
            for group in self.param_groups:
                lr = _to_scalar(group["lr"])
                momentum = group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    grad = p.grad
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = _zeros_like(grad)
                    buf = state["momentum_buffer"]
                    _lerp_(buf, grad, 1 - momentum)
                    update = _lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                         group["eps"])
                    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update.to(dtype=p.dtype), alpha=-adjusted_lr)
        return loss
