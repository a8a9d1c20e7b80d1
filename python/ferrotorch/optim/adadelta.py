"""Adadelta."""

from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import _fused_step, _gather_group, _eval_closure, _scalar_tensor, _to_scalar, _use_grad_for_differentiable, _zeros_like

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): coefficient that scales delta before it is applied
            to the parameters (default: 1.0)
        rho (float, optional): coefficient used for computing a running average
            of squared gradients (default: 0.9)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, capturable, differentiable: accepted for compatibility.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(("epsilon value", eps), ("weight_decay value", weight_decay))
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, st = _gather_group(self, group, "Adadelta", lambda p: {
                "step": _scalar_tensor(0.0), "square_avg": _zeros_like(p), "acc_delta": _zeros_like(p)})
            sq, acc, steps = st["square_avg"], st["acc_delta"], st["step"]
            adadelta(params, grads, sq, acc, steps, lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps, weight_decay, maximize,
             **_unused):
    r"""Functional API that performs the Adadelta computation (see :class:`~ferrotorch.optim.Adadelta`)."""
    lr = _to_scalar(lr)
    if _fused_step("adadelta", params, grads, [square_avgs, acc_deltas, state_steps], lr=lr, rho=rho, eps=eps,
                   weight_decay=weight_decay, maximize=maximize):
        return
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step.add_(1)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
