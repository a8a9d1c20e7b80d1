"""Finite-difference gradient checks (``gradcheck``, ``gradgradcheck``) in float64."""

from .. import _C


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _numerical_jacobian(fn, inputs, idx, eps):
    x = inputs[idx]
    flat = x.detach().reshape(-1)
    cols = []
    for k in range(flat.numel()):
        orig = flat[k].item()
        flat[k] = orig + eps
        plus = [o.detach().reshape(-1).clone() for o in _as_tuple(fn(*inputs)) if isinstance(o, _C.Tensor)]
        flat[k] = orig - eps
        minus = [o.detach().reshape(-1).clone() for o in _as_tuple(fn(*inputs)) if isinstance(o, _C.Tensor)]
        flat[k] = orig
        cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return cols


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """Checks analytical gradients of ``func`` against central finite differences."""
    inputs = _as_tuple(inputs)
    with _C_grad():
        outputs = [o for o in _as_tuple(func(*inputs)) if isinstance(o, _C.Tensor)]
    for i, x in enumerate(inputs):
        if not (isinstance(x, _C.Tensor) and x.requires_grad):
            continue
        numeric = _numerical_jacobian(func, inputs, i, eps)
        for j, out in enumerate(outputs):
            if not out.requires_grad:
                continue
            flat_out = out.reshape(-1)
            for r in range(flat_out.numel()):
                from . import grad as _grad
                (g,) = _grad(flat_out[r], x, retain_graph=True, allow_unused=True)
                analytic = [0.0] * x.numel() if g is None else g.reshape(-1).tolist()
                num = [numeric[k][j][r].item() for k in range(x.numel())]
                for a, n in zip(analytic, num):
                    if abs(a - n) > atol + rtol * abs(n):
                        if raise_exception:
                            raise RuntimeError(
                                f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                f"numerical:{num}\nanalytical:{analytic}\n"
                            )
                        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """Checks second derivatives by running ``gradcheck`` on the first-order gradient function."""
    inputs = _as_tuple(inputs)
    diff = [x for x in inputs if isinstance(x, _C.Tensor) and x.requires_grad]

    def first_grads(*xs):
        from . import grad as _grad
        outs = [o for o in _as_tuple(func(*xs)) if isinstance(o, _C.Tensor)]
        total = None
        for o in outs:
            s = o.sum() if grad_outputs is None else (o * grad_outputs[outs.index(o)]).sum()
            total = s if total is None else total + s
        dx = [x for x in xs if isinstance(x, _C.Tensor) and x.requires_grad]
        return _grad(total, dx, create_graph=True, allow_unused=True)

    del diff
    return gradcheck(first_grads, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)


class _C_grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
