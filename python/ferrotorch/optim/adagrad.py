"""Adagrad."""

import ferrotorch as _ft
from .optimizer import Optimizer, _check_fused_foreach, _check_lr, _check_non_negative
from ._common import _fused_step, _eval_closure, _get_value, _scalar_tensor, _to_scalar, _use_grad_for_differentiable

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the
            sum of squares of gradients (default: 0)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-10)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, differentiable, fused: accepted for compatibility.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_non_negative(
            ("learning rate", lr),
            ("lr_decay value", lr_decay),
            ("weight_decay value", weight_decay),
            ("initial_accumulator_value value", initial_accumulator_value),
            ("epsilon value", eps),
        )
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)
        # Adagrad builds its state eagerly, so a fresh optimizer already has a state dict.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_tensor(0.0)
                state["sum"] = _ft.full_like(p, float(group["initial_accumulator_value"])).detach()

    def share_memory(self):
        """Moves the accumulators to shared memory (a no-op where that is not available)."""
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state[p]["sum"]
                if hasattr(s, "share_memory_"):
                    s.share_memory_()

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, sums, steps = [], [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    params.append(p)
                    grads.append(p.grad)
                    st = self.state[p]
                    sums.append(st["sum"])
                    steps.append(st["step"])
            adagrad(params, grads, sums, steps, lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize=False,
            **_unused):
    r"""Functional API that performs the Adagrad computation (see :class:`~ferrotorch.optim.Adagrad`)."""
    lr = _to_scalar(lr)
    if _fused_step("adagrad", params, grads, [state_sums, state_steps], lr=lr, lr_decay=lr_decay,
                   weight_decay=weight_decay, eps=eps, maximize=maximize):
        return
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
