"""ASGD (averaged stochastic gradient descent)."""

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr, _check_non_negative
from ._common import (_fused_step, _gather_group, _eval_closure, _get_value, _scalar_tensor, _to_scalar,
                      _use_grad_for_differentiable, _zeros_like)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Implements Averaged Stochastic Gradient Descent.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lambd (float, optional): decay term (default: 1e-4)
        alpha (float, optional): power for eta update (default: 0.75)
        t0 (float, optional): point at which to start averaging (default: 1e6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, differentiable, capturable: accepted for compatibility.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_non_negative(("learning rate", lr), ("weight_decay value", weight_decay))
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
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
            params, grads, st = _gather_group(self, group, "ASGD", lambda p, group=group: {
                "step": _scalar_tensor(0.0), "eta": _scalar_tensor(_to_scalar(group["lr"])),
                "mu": _scalar_tensor(1.0), "ax": _zeros_like(p)})
            mus, axs, etas, steps = st["mu"], st["ax"], st["eta"], st["step"]
            asgd(params, grads, axs, mus, etas, steps, lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
                 alpha=group["alpha"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay, maximize=False,
         **_unused):
    r"""Functional API that performs the ASGD computation (see :class:`~ferrotorch.optim.ASGD`)."""
    lr = _to_scalar(lr)
    default = _ft.get_default_dtype()
    # The kernel rounds the new eta/mu through the default dtype as torch.as_tensor does;
    # it knows float32 and float64 defaults only.
    if default in (_ft.float32, _ft.float64) and _fused_step(
            "asgd", params, grads, [axs, etas, mus, state_steps], lr=lr, lambd=lambd, alpha=alpha, t0=t0,
            weight_decay=weight_decay, maximize=maximize, default_f32=default == _ft.float32):
        return
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = _get_value(step_t)
        # Through a default-dtype tensor, as PyTorch does: a float64 eta (after a state-dict
        # load casts it to the parameter's dtype) still gets a default-dtype-rounded value.
        eta.copy_(_ft.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(_ft.as_tensor(1 / max(1, step - t0)))
