"""Adam and AdamW (decoupled weight decay)."""

from .optimizer import Optimizer, _NoGrad


class Adam(Optimizer):
    """Adam with bias correction (``amsgrad`` supported)."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, maximize=False, **kwargs):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize))

    def step(self, closure=None):
        """Performs one update."""
        loss = closure() if closure is not None else None
        with _NoGrad():
            for g in self.param_groups:
                b1, b2 = g["betas"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not g["maximize"] else -p.grad
                    st = self.state[p]
                    if not st:
                        st["step"] = 0
                        st["exp_avg"] = p.detach().clone().zero_()
                        st["exp_avg_sq"] = p.detach().clone().zero_()
                        if g["amsgrad"]:
                            st["max_exp_avg_sq"] = p.detach().clone().zero_()
                    st["step"] += 1
                    t = st["step"]
                    if g["weight_decay"]:
                        if self._decoupled:
                            p.mul_(1 - g["lr"] * g["weight_decay"])
                        else:
                            grad = grad + g["weight_decay"] * p
                    m, v = st["exp_avg"], st["exp_avg_sq"]
                    m.mul_(b1).add_(grad * (1 - b1))
                    v.mul_(b2).add_(grad * grad * (1 - b2))
                    bc1 = 1 - b1 ** t
                    bc2 = 1 - b2 ** t
                    if g["amsgrad"]:
                        mx = st["max_exp_avg_sq"]
                        mx.copy_(mx.maximum(v))
                        denom = (mx / bc2).sqrt() + g["eps"]
                    else:
                        denom = (v / bc2).sqrt() + g["eps"]
                    p.sub_((m / denom) * (g["lr"] / bc1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, **kwargs):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, **kwargs)


