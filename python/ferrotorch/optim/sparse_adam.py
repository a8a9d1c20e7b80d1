"""SparseAdam: Adam restricted to the entries a gradient actually touches."""

import math

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr
from ._common import _eval_closure, _to_scalar, _zeros_like, _use_grad_for_differentiable

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""SparseAdam implements a masked version of the Adam algorithm suitable for sparse gradients.

    The moments and the parameters are updated only where the gradient is non-zero;
    elsewhere they keep their values (Adam would decay the moments everywhere).

    There is no sparse tensor layout here, so gradients arrive dense and the mask is
    ``grad != 0``: the *semantics* PyTorch documents for this optimizer, which PyTorch
    implements with sparse-layout gradients (and which it rejects dense gradients for).
    An entry stored explicitly with value zero in a PyTorch sparse gradient is updated
    there and skipped here.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, g in enumerate(self.param_groups)
                          for j, p in enumerate(g["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support complex parameters"
            )

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                state["step"] += 1
                _sparse_adam_one(p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"], eps=group["eps"],
                                 beta1=beta1, beta2=beta2, lr=lr, maximize=group.get("maximize", False))
        return loss


def _sparse_adam_one(param, grad, exp_avg, exp_avg_sq, step, *, eps, beta1, beta2, lr, maximize):
    grad = grad if not maximize else -grad
    mask = grad != 0
    if not bool(mask.any()):
        return
    # Whole-tensor arithmetic, kept only where the mask is set: per entry the same
    # operations, in the same order, as PyTorch's update of the sparse values.
    exp_avg_update = grad.sub(exp_avg).mul_(1 - beta1)
    exp_avg_sq_update = grad.pow(2).sub_(exp_avg_sq).mul_(1 - beta2)
    new_exp_avg = exp_avg + exp_avg_update
    new_exp_avg_sq = exp_avg_sq + exp_avg_sq_update
    exp_avg.copy_(_ft.where(mask, new_exp_avg, exp_avg))
    exp_avg_sq.copy_(_ft.where(mask, new_exp_avg_sq, exp_avg_sq))
    denom = new_exp_avg_sq.sqrt_().add_(eps)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr * math.sqrt(bias_correction2) / bias_correction1
    update = -step_size * new_exp_avg.div_(denom)
    param.copy_(_ft.where(mask, param + update, param))
