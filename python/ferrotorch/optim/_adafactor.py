"""Adafactor (factored second moments)."""

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr
from ._common import _lerp_, _eval_closure, _scalar_tensor, _to_scalar, _use_grad_for_differentiable, _zeros_like

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    r"""Implements the Adafactor algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, Tensor, optional): unlike other optimizers, Adafactor does not require a
            learning rate, and Noam Shazeer and Mitchell Stern do not use lr at all.
            Here lr caps the relative step size (default: 1e-2)
        beta2_decay (float, optional): the decay rate of beta2 (default: -0.8)
        eps (Tuple[float, float], optional): epsilon1 is the term added to the denominator
            of the update calculation to improve numerical stability (``None`` means the
            machine epsilon of the parameter's dtype); epsilon2 is the term used to avoid
            having too small a weight update when applying parameter scaling.
            (default: (None, 1e-3))
        d (float, optional): the clipping threshold (default: 1.0)
        weight_decay (float, optional): weight decay coefficient (default: 0.0)
        foreach (bool, optional): accepted for compatibility.
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if getattr(p.grad, "is_sparse", False):
                    raise RuntimeError("Adafactor does not support sparse gradients")
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    if p.grad.dim() > 1:
                        row_shape = list(p.grad.shape)
                        row_shape[-1] = 1
                        state["row_var"] = _ft.zeros(row_shape, dtype=p.grad.dtype)
                        col_shape = list(p.grad.shape)
                        col_shape[-2] = 1
                        state["col_var"] = _ft.zeros(col_shape, dtype=p.grad.dtype)
                    else:
                        state["variance"] = _zeros_like(p.grad)
                row_vars.append(state.get("row_var"))
                col_vars.append(state.get("col_var"))
                variances.append(state.get("variance"))
                steps.append(state["step"])
            eps1, eps2 = group["eps"]
            adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"], lr=group["lr"],
                      beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1,
                      eps2=eps2, maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, *, d, lr, beta2_decay, weight_decay,
              eps1, eps2, maximize=False, **_unused):
    r"""Functional API that performs the Adafactor computation (see :class:`~ferrotorch.optim.Adafactor`)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t, row_var, col_var, variance = state_steps[i], row_vars[i], col_vars[i], variances[i]
        e1 = _ft.finfo(param.dtype).eps if eps1 is None else eps1
        step_t.add_(1)
        step_float = step_t.item()
        one_minus_beta2_t = step_float ** beta2_decay
        rho_t = min(lr, 1 / (step_float ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            # Factored second moment: per-row and per-column means of grad**2, outer product rebuilt.
            row_mean = _ft.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            _lerp_(row_var, row_mean, one_minus_beta2_t)
            col_mean = _ft.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            _lerp_(col_var, col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
        else:
            _lerp_(variance, grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=e1 * e1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
