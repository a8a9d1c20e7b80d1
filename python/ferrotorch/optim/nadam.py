"""NAdam (Adam with Nesterov momentum)."""

from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import (_fused_step, _gather_group, _lerp_, _eval_closure, _get_value, _scalar_tensor, _to_scalar,
                      _use_grad_for_differentiable, _zeros_like)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum_decay (float, optional): momentum momentum_decay (default: 4e-3)
        decoupled_weight_decay (bool, optional): whether to decouple the weight
            decay as in AdamW to obtain NAdamW (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, capturable, differentiable: accepted for compatibility.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_non_negative(("learning rate", lr), ("epsilon value", eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_non_negative(("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, st = _gather_group(self, group, "NAdam", lambda p: {
                "step": _scalar_tensor(0.0), "mu_product": _scalar_tensor(1.0), "exp_avg": _zeros_like(p),
                "exp_avg_sq": _zeros_like(p)})
            exp_avgs, exp_avg_sqs, mu_products, steps = st["exp_avg"], st["exp_avg_sq"], st["mu_product"], st["step"]
            beta1, beta2 = group["betas"]
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps, decoupled_weight_decay=False, maximize=False, **_unused):
    r"""Functional API that performs the NAdam computation (see :class:`~ferrotorch.optim.NAdam`)."""
    lr = _to_scalar(lr)
    if _fused_step("nadam", params, grads, [exp_avgs, exp_avg_sqs, mu_products, state_steps], lr=lr, beta1=beta1,
                   beta2=beta2, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                   decoupled_weight_decay=decoupled_weight_decay, maximize=maximize):
        return
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product, step_t = exp_avgs[i], exp_avg_sqs[i], mu_products[i], state_steps[i]
        step_t.add_(1)
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        # The momentum schedule of Dozat's paper, kept as a running product in the state.
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_v = _get_value(mu_product)
        mu_product_next = mu_product_v * mu_next
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_v)))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
