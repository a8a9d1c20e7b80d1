"""``ferrotorch.autograd.functional``: jacobian, hessian, vjp, jvp."""

from .. import _C


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns ``(func(inputs), v^T J)``."""
    from . import grad
    single = not isinstance(inputs, tuple)
    xs = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    with _Grad():
        out = func(*xs)
    outs = _tuple(out)
    vs = _tuple(v) if v is not None else tuple(_C.ones_like(o) for o in outs)
    gs = grad(outs, xs, vs, create_graph=create_graph, allow_unused=True)
    gs = tuple(_C.zeros_like(x) if g is None else g for g, x in zip(gs, xs))
    res_out = out if create_graph else (tuple(o.detach() for o in outs) if isinstance(out, tuple) else out.detach())
    return res_out, (gs[0] if single else gs)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (one backward pass per output element)."""
    from . import grad
    single_in = not isinstance(inputs, tuple)
    xs = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    with _Grad():
        out = func(*xs)
    single_out = not isinstance(out, tuple)
    outs = _tuple(out)
    result = []
    for o in outs:
        flat = o.reshape(-1)
        per_input = [[] for _ in xs]
        for k in range(flat.numel()):
            gs = grad(flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True)
            for i, (g, x) in enumerate(zip(gs, xs)):
                per_input[i].append(_C.zeros_like(x) if g is None else g)
        blocks = []
        for i, x in enumerate(xs):
            rows = per_input[i]
            if rows:
                stacked = _stack(rows).reshape(tuple(o.shape) + tuple(x.shape))
            else:
                stacked = _C.zeros(*(tuple(o.shape) + tuple(x.shape)), dtype=x.dtype)
            blocks.append(stacked)
        result.append(blocks[0] if single_in else tuple(blocks))
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function (Jacobian of its gradient)."""
    from . import grad

    def gradient(*xs):
        with _Grad():
            out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        gs = tuple(_C.zeros_like(x) if g is None else g for g, x in zip(gs, xs))
        return gs[0] if len(gs) == 1 else gs

    return jacobian(gradient, inputs, create_graph=create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` via the double-backward trick."""
    from . import grad
    single = not isinstance(inputs, tuple)
    xs = tuple(x.detach().requires_grad_(True) for x in _tuple(inputs))
    vs = _tuple(v) if v is not None else tuple(_C.ones_like(x) for x in xs)
    with _Grad():
        out = func(*xs)
        outs = _tuple(out)
        us = tuple(_C.zeros_like(o).requires_grad_(True) for o in outs)
        gs = grad(outs, xs, us, create_graph=True, allow_unused=True)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
        total = None
        for g, vv in pairs:
            s = (g * vv).sum()
            total = s if total is None else total + s
        jv = grad(total, us, create_graph=create_graph, allow_unused=True)
    jv = tuple(_C.zeros_like(o) if j is None else j for j, o in zip(jv, outs))
    res_out = tuple(o.detach() for o in outs) if isinstance(out, tuple) else out.detach()
    return res_out, (jv if isinstance(out, tuple) else jv[0])


def _stack(ts):
    """Stacks equally-shaped tensors along a new dim 0, keeping the graph."""
    import ferrotorch
    return ferrotorch.stack(list(ts))


class _Grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
