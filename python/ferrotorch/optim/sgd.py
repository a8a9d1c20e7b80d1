"""Stochastic gradient descent (momentum, dampening, Nesterov, weight decay)."""

import ferrotorch as _ft
from ferrotorch import _C
from .optimizer import Optimizer, _check_fused_foreach, _check_lr
from ._common import _eval_closure, _to_scalar, _use_grad_for_differentiable

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, differentiable, fused: accepted for compatibility; the update is the same.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("nesterov", False), ("maximize", False), ("foreach", None),
                         ("differentiable", False), ("fused", False)):
                group.setdefault(k, v)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    bufs.append(self.state[p].get("momentum_buffer"))
                else:
                    bufs.append(None)
            sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"])
            if group["momentum"] != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
        **_unused):
    r"""Functional API that performs the SGD computation (see :class:`~ferrotorch.optim.SGD`)."""
    lr = _to_scalar(lr)
    if _sgd_fused(params, d_p_list, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov,
                  maximize):
        return
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


def _sgd_fused(params, grads, bufs, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """One pass per parameter in Rust; False (nothing written) when the group needs the op-by-op form."""
    if not all(isinstance(x, (int, float)) for x in (weight_decay, momentum, lr, dampening)):
        return False
    fresh = []
    if momentum != 0:
        fresh = [b is None for b in bufs]
        new = [_ft.empty_like(p) if b is None else b
               for p, b in zip(params, bufs)]
    else:
        new = []
    if not _C._fused_sgd_(params, grads, new, fresh, float(lr), float(momentum), float(dampening),
                          float(weight_decay), bool(nesterov), bool(maximize)):
        return False
    for i, b in enumerate(new):
        bufs[i] = b
    return True
