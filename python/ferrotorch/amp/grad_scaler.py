"""``GradScaler``: multiplies the loss by a scale so small gradients survive
low precision, unscales before the optimizer step, skips steps with inf/NaN
gradients and adapts the scale."""

import math

from .. import _C


class GradScaler:
    """Dynamic loss scaling (PyTorch's defaults: 2**16, growth 2, backoff 0.5, interval 2000)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer = {}

    def is_enabled(self):
        """Is scaling on?"""
        return self._enabled

    def get_scale(self):
        """The current scale factor."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """Multiplies ``outputs`` (a tensor or nested sequence of tensors) by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.TensorBase):
            return outputs * self._scale
        return type(outputs)(self.scale(o) for o in outputs)

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "found_inf": False})

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step) and looks for inf/NaN."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inv = 1.0 / self._scale
        found = False
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            for g in optimizer.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not bool(p.grad.isfinite().all()):
                        found = True
        finally:
            _C._set_grad_enabled(prev)
        st["unscaled"] = True
        st["found_inf"] = found

    def step(self, optimizer, *args, **kwargs):
        """Unscales if needed, then steps unless an inf/NaN gradient was found."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        st = self._state(optimizer)
        if not st["unscaled"]:
            self.unscale_(optimizer)
        if st["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Backs off after a skipped step, grows after ``growth_interval`` good ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, _C.TensorBase) else new_scale)
        else:
            found = any(s["found_inf"] for s in self._per_optimizer.values())
            if found:
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
            if not math.isfinite(self._scale):
                self._scale = float("inf")
        self._per_optimizer = {}

    def state_dict(self):
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state):
        self._scale = state["scale"]
        self._growth_factor = state["growth_factor"]
        self._backoff_factor = state["backoff_factor"]
        self._growth_interval = state["growth_interval"]
        self._growth_tracker = state["_growth_tracker"]
