"""Finite-difference gradient checks (``gradcheck``, ``gradgradcheck``).

The numerical Jacobian perturbs each input element in place through a
detached alias (so non-contiguous inputs are perturbed where they live) and
takes central differences; the analytical one runs one vector-Jacobian
product per output element. Both are assembled as float64 NumPy arrays.

A complex tensor counts as its real and imaginary parts (two real variables
per element), as in PyTorch: its parts are perturbed one at a time, and a
complex output's rows are the vector-Jacobian products with gradient 1 and
1j at each element, which in PyTorch's convention (``∂L/∂x + i ∂L/∂y``) give
the derivatives of the output's real and imaginary part.
"""


from .. import _C


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when a check fails (a ``RuntimeError``, as in PyTorch)."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _outputs(out):
    return [o for o in _as_tuple(out) if _is_tensor(o)]


def _parts(t):
    """``t`` (detached) as real numbers: a complex tensor's interleaved parts."""
    t = t.detach()
    return _C._view_as_real(t) if t.is_complex() else t


def _np(t):
    import numpy as np  # lazy: keeps `import ferrotorch` fast
    return np.asarray(_parts(t.resolve_conj()).to(_C.float64).numpy(), dtype=np.float64).reshape(-1)


def _differentiable(dtype):
    return dtype.is_floating_point or dtype.is_complex


class _Mode:
    def __init__(self, on):
        self.on = on

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.on)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


def _numerical(func, inputs, i, eps, n_outs):
    """Central differences of every output w.r.t. input ``i``: list of (n_out, n_in) arrays."""
    import numpy as np  # lazy: keeps `import ferrotorch` fast
    x = inputs[i]
    alias = _parts(x)
    n_in = alias.numel()
    cols = [[] for _ in range(n_outs)]
    for idx in np.ndindex(*tuple(alias.shape)):
        orig = alias[idx].item()
        with _Mode(False):
            alias[idx] = orig + eps
            plus = [_np(o) for o in _outputs(func(*inputs))]
            alias[idx] = orig - eps
            minus = [_np(o) for o in _outputs(func(*inputs))]
            alias[idx] = orig
        for j in range(n_outs):
            cols[j].append((plus[j] - minus[j]) / (2 * eps))
    return [np.stack(c, axis=1) if c else np.zeros((0, n_in)) for c in cols]


def _analytical(outputs, diff_inputs):
    """Rows of the Jacobian by one vector-Jacobian product per output element:
    ``jac[j][i]`` is (outputs[j].numel(), diff_inputs[i].numel())."""
    import numpy as np  # lazy: keeps `import ferrotorch` fast
    from . import grad as _grad
    jac = []
    for o in outputs:
        parts = 2 if o.is_complex() else 1
        per_in = [np.zeros((o.numel() * parts, x.numel() * (2 if x.is_complex() else 1))) for x in diff_inputs]
        if o.requires_grad and _differentiable(o.dtype):
            for r in range(o.numel() * parts):
                onehot = np.zeros(o.numel(), dtype=complex if parts == 2 else float)
                onehot[r // parts] = 1j if r % parts else 1.0
                go = _C.tensor(onehot.reshape(tuple(o.shape)), dtype=o.dtype)
                gs = _grad(o, diff_inputs, go, retain_graph=True, allow_unused=True)
                for k, g in enumerate(gs):
                    if g is not None:
                        if tuple(g.shape) != tuple(diff_inputs[k].shape):
                            raise GradcheckError(
                                f"Gradient has incorrect shape: {list(g.shape)} instead of {list(diff_inputs[k].shape)}"
                            )
                        per_in[k][r, :] = _np(g)
        jac.append(per_in)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Checks analytical gradients of ``func`` against central finite differences."""
    import numpy as np  # lazy: keeps `import ferrotorch` fast
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype not in (_C.float64, _C.complex128) and _differentiable(inputs[i].dtype):
            import warnings
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point. ",
                stacklevel=2,
            )
    with _Mode(True):
        outputs = _outputs(func(*inputs))
    diff_inputs = [inputs[i] for i in diff_idx]
    analytical = _analytical(outputs, diff_inputs)
    for k, i in enumerate(diff_idx):
        numerical = _numerical(func, inputs, i, eps, len(outputs))
        for j in range(len(outputs)):
            a, n = analytical[j][k], numerical[j]
            if not _differentiable(outputs[j].dtype):
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {j} with respect to input {i},\n"
                        f"numerical:{_C.tensor(n.T)}\nanalytical:{_C.tensor(a.T)}\n"
                    )
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks second derivatives: ``gradcheck`` of the vector-Jacobian product
    of ``func`` with (random, fixed) ``grad_outputs``."""
    import numpy as np  # lazy: keeps `import ferrotorch` fast
    from . import grad as _grad
    inputs = _as_tuple(inputs)
    with _Mode(True):
        outs = _outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _C.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in outs if o.requires_grad
        )
    else:
        grad_outputs = _as_tuple(grad_outputs)

    def first_grads(*xs):
        with _Mode(True):
            os_ = [o for o in _outputs(func(*xs)) if o.requires_grad]
            dx = [x for x in xs if _is_tensor(x) and x.requires_grad]
            gs = _grad(os_, dx, grad_outputs[: len(os_)], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
