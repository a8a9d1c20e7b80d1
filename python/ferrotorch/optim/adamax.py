"""Adamax (Adam on the infinity norm)."""

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import (_fused_step, _gather_group, _lerp_, _eval_closure, _get_value, _scalar_tensor, _to_scalar,
                      _use_grad_for_differentiable, _zeros_like)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm (a variant of Adam based on the infinity norm).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, differentiable, capturable: accepted for compatibility.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_non_negative(("learning rate", lr), ("epsilon value", eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, st = _gather_group(self, group, "Adamax", lambda p: {
                "step": _scalar_tensor(0.0), "exp_avg": _zeros_like(p), "exp_inf": _zeros_like(p)})
            exp_avgs, exp_infs, steps = st["exp_avg"], st["exp_inf"], st["step"]
            beta1, beta2 = group["betas"]
            adamax(params, grads, exp_avgs, exp_infs, steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                   lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr, weight_decay,
           maximize=False, **_unused):
    r"""Functional API that performs the Adamax computation (see :class:`~ferrotorch.optim.Adamax`)."""
    lr = _to_scalar(lr)
    if _fused_step("adamax", params, grads, [exp_avgs, exp_infs, state_steps], lr=lr, beta1=beta1, beta2=beta2,
                   eps=eps, weight_decay=weight_decay, maximize=maximize):
        return
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        _ft.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = _to_scalar(lr / (1 - beta1 ** _get_value(step_t)))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
