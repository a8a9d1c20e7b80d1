"""RAdam (rectified Adam)."""

from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import (_fused_step, _gather_group, _lerp_, _eval_closure, _get_value, _scalar_tensor, _to_scalar,
                      _use_grad_for_differentiable, _zeros_like)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        decoupled_weight_decay (bool, optional): whether to decouple the weight
            decay as in AdamW to obtain RAdamW (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, capturable, differentiable: accepted for compatibility.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_non_negative(("learning rate", lr), ("epsilon value", eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
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
            params, grads, st = _gather_group(self, group, "RAdam", lambda p: {
                "step": _scalar_tensor(0.0), "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)})
            exp_avgs, exp_avg_sqs, steps = st["exp_avg"], st["exp_avg_sq"], st["step"]
            beta1, beta2 = group["betas"]
            radam(params, grads, exp_avgs, exp_avg_sqs, steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay=False, maximize=False, **_unused):
    r"""Functional API that performs the RAdam computation (see :class:`~ferrotorch.optim.RAdam`)."""
    lr = _to_scalar(lr)
    if _fused_step("radam", params, grads, [exp_avgs, exp_avg_sqs, state_steps], lr=lr, beta1=beta1, beta2=beta2,
                   eps=eps, weight_decay=weight_decay, decoupled_weight_decay=decoupled_weight_decay,
                   maximize=maximize):
        return
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        step = _get_value(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # Length of the approximated SMA; the variance is tractable only once it exceeds 5.
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
