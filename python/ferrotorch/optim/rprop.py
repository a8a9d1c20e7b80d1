"""Rprop (resilient backpropagation)."""

import ferrotorch as _ft
from .optimizer import Optimizer, _check_lr
from ._common import _fused_step, _check_sparse, _eval_closure, _scalar_tensor, _to_scalar, _use_grad_for_differentiable, _zeros_like

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize
            or iterable of dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2)
        etas (Tuple[float, float], optional): pair of (etaminus, etaplus), that
            are multiplicative increase and decrease factors (default: (0.5, 1.2))
        step_sizes (Tuple[float, float], optional): a pair of minimal and
            maximal allowed step sizes (default: (1e-6, 50))
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        capturable, foreach, differentiable: accepted for compatibility.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, prevs, sizes, steps = [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                _check_sparse(p, "Rprop")
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    state["prev"] = _zeros_like(p)
                    state["step_size"] = _ft.full_like(p.grad, float(_to_scalar(group["lr"]))).detach()
                prevs.append(state["prev"])
                sizes.append(state["step_size"])
                steps.append(state["step"])
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            rprop(params, grads, prevs, sizes, steps, step_size_min=step_size_min, step_size_max=step_size_max,
                  etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max, etaminus, etaplus,
          maximize=False, **_unused):
    r"""Functional API that performs the Rprop computation (see :class:`~ferrotorch.optim.Rprop`)."""
    if _fused_step("rprop", params, grads, [prevs, step_sizes, state_steps], etaminus=etaminus, etaplus=etaplus,
                   step_size_min=step_size_min, step_size_max=step_size_max, maximize=maximize):
        return
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size, step = prevs[i], step_sizes[i], state_steps[i]
        step.add_(1)
        sign = grad.mul(prev).sign()
        # Same sign: grow the step; sign flip: shrink it and skip this update; zero: keep it.
        pos, neg = sign.gt(0), sign.lt(0)
        factor = sign.masked_fill(pos, etaplus).masked_fill_(neg, etaminus).masked_fill_(sign.eq(0), 1)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        grad = grad.masked_fill(neg, 0)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
