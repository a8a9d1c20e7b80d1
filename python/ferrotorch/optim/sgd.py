"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from .optimizer import Optimizer, _NoGrad


class SGD(Optimizer):
    """``p -= lr * g`` (with PyTorch's momentum and weight-decay rules)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False, **kwargs):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    def step(self, closure=None):
        """Performs one update."""
        loss = closure() if closure is not None else None
        with _NoGrad():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    d = p.grad if not g["maximize"] else -p.grad
                    if g["weight_decay"]:
                        d = d + g["weight_decay"] * p
                    if g["momentum"]:
                        st = self.state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = d.clone()
                            st["momentum_buffer"] = buf
                        else:
                            buf.mul_(g["momentum"]).add_(d * (1 - g["dampening"]))
                        d = d + g["momentum"] * buf if g["nesterov"] else buf
                    p.sub_(d * g["lr"])
        return loss
