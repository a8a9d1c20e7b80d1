"""RMSprop."""

from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import _fused_step, _gather_group, _lerp_, _eval_closure, _scalar_tensor, _to_scalar, _use_grad_for_differentiable, _zeros_like

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional): if ``True``, compute the centered RMSProp,
            the gradient is normalized by an estimation of its variance
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        capturable, foreach, differentiable: accepted for compatibility.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_non_negative(
            ("learning rate", lr),
            ("epsilon value", eps),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
            ("alpha value", alpha),
        )
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            def init(p, group=group):
                state = {"step": _scalar_tensor(0.0), "square_avg": _zeros_like(p)}
                if group["momentum"] > 0:
                    state["momentum_buffer"] = _zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = _zeros_like(p)
                return state
            params, grads, st = _gather_group(self, group, "RMSprop", init)
            sq, gavg, bufs, steps = st["square_avg"], st["grad_avg"], st["momentum_buffer"], st["step"]
            rmsprop(params, grads, sq, gavg, bufs, steps, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"],
                    maximize=group["maximize"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize=False, **_unused):
    r"""Functional API that performs the RMSprop computation (see :class:`~ferrotorch.optim.RMSprop`)."""
    lr = _to_scalar(lr)
    if _fused_step("rmsprop", params, grads,
                   [square_avgs, grad_avgs if centered else [], momentum_buffer_list if momentum > 0 else [],
                    state_steps],
                   lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered,
                   maximize=maximize):
        return
    for i, param in enumerate(params):
        step = state_steps[i]
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        step.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            _lerp_(grad_avg, grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
