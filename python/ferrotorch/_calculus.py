"""Finite differences and numerical integration: ``diff``, ``gradient``,
``trapezoid``/``trapz`` and ``cumulative_trapezoid``, all slices and
arithmetic on whole tensors.
"""

import builtins

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = ["diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


@_args.signature('Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None')
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``, after optionally joining
    ``prepend`` and ``append``. Bool tensors use ``!=`` (logical xor).
    """
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap(dim, input.dim())
    parts = []
    for extra in (prepend, append):
        if extra is not None and not isinstance(extra, _C.TensorBase):
            shape = list(input.shape)
            shape[dim] = 1
            extra = _C.full(shape, extra, device=input.device).to(input.dtype)
        if extra is not None and extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append(extra)
    x = input
    if parts[0] is not None or parts[1] is not None:
        x = _C._cat([t for t in (parts[0], input, parts[1]) if t is not None], dim)
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        a, b = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = (a != b) if x.dtype == _C.bool else a - b
    return x


def _float_dtype(t):
    return t.dtype if t.is_floating_point() else _C.get_default_dtype()


@_args.signature('Tensor input, *, Any spacing=1, Any dim=None, int edge_order=1')
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the gradient of a function sampled at ``input`` by second-order
    central differences inside and first- or second-order (``edge_order``) one-sided
    differences at the boundaries. Returns one tensor per differentiated dim.

    ``spacing`` is a scalar (uniform step for every dim), a sequence of scalars
    (a step per dim) or a sequence of 1-d coordinate tensors (one per dim).
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [_wrap(d, input.dim()) for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments "
                f"to have the same length, but got a spacing argument of length {len(spacing)} and a dim argument "
                f"of length {len(dims)}."
            )
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    x = input if input.is_floating_point() else input.to(_C.get_default_dtype())
    return tuple(_gradient_1d(x, d, h, edge_order) for d, h in zip(dims, steps))


def _gradient_1d(x, dim, h, edge_order):
    n = x.shape[dim]

    def sl(start, stop):
        return x.narrow(dim, start, stop - start)

    if isinstance(h, _C.TensorBase):
        coords = h.to(x.dtype)
        shape = [1] * x.dim()
        shape[dim] = n
        dx = (coords[1:] - coords[:-1])
        ax = dx.reshape([n - 1 if i == dim else 1 for i in range(x.dim())])
        dx1, dx2 = ax.narrow(dim, 0, n - 2), ax.narrow(dim, 1, n - 2)
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = a * sl(0, n - 2) + b * sl(1, n - 1) + c * sl(2, n)
        d0, d1 = ax.narrow(dim, 0, 1), ax.narrow(dim, n - 2, 1)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / d0
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / d1
        else:
            e1, e2 = ax.narrow(dim, 0, 1), ax.narrow(dim, 1, 1)
            a0 = -(2 * e1 + e2) / (e1 * (e1 + e2))
            b0 = (e1 + e2) / (e1 * e2)
            c0 = -e1 / (e2 * (e1 + e2))
            first = a0 * sl(0, 1) + b0 * sl(1, 2) + c0 * sl(2, 3)
            f1, f2 = ax.narrow(dim, n - 3, 1), ax.narrow(dim, n - 2, 1)
            a1 = f2 / (f1 * (f1 + f2))
            b1 = -(f2 + f1) / (f1 * f2)
            c1 = (2 * f2 + f1) / (f2 * (f1 + f2))
            last = a1 * sl(n - 3, n - 2) + b1 * sl(n - 2, n - 1) + c1 * sl(n - 1, n)
    else:
        h = float(h)
        inner = (sl(2, n) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
            last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
    return _C._cat([first, inner, last], dim)


def _check_not_bool(name, y, x):
    if x is None and y.dtype == _C.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and _C.bool in (x.dtype, y.dtype):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")


def _pairs(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 1, builtins.max(n - 1, 0)), y.narrow(dim, 0, builtins.max(n - 1, 0))


def _x_steps(y, x, dim):
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        dx = x[1:] - x[:-1]
        return dx.reshape([dx.shape[0] if i == dim else 1 for i in range(y.dim())])
    return diff(x, dim=dim)


@_args.signature('Tensor y, Tensor x, *, int dim=-1', 'Tensor y, *, Scalar? dx=None, int dim=-1')
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integrates ``y`` along ``dim`` with the trapezoidal rule, at sample points
    ``x`` (a tensor) or with uniform spacing ``dx`` (default 1).
    """
    _check_not_bool("trapezoid", y, x)
    dim = _wrap(dim, y.dim())
    if y.shape[dim] == 0:
        return y.sum(dim).to(_float_dtype(y)) * 0
    if x is not None:
        right, left = _pairs(y, dim)
        return (_x_steps(y, x, dim) * (right + left)).sum(dim) / 2.0
    h = 1 if dx is None else dx
    # PyTorch's form: every sample weighs h except the two ends, which weigh h / 2
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * h


@_args.signature('Tensor y, Tensor x, *, int dim=-1', 'Tensor y, *, float? dx=None, int dim=-1')
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, dx=dx, dim=dim) if x is None else trapezoid(y, x, dim=dim)


@_args.signature('Tensor y, Tensor x, *, int dim=-1', 'Tensor y, *, Scalar? dx=None, int dim=-1')
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulative trapezoidal rule along ``dim``: one fewer element than ``y`` along it."""
    _check_not_bool("cumulative_trapezoid", y, x)
    dim = _wrap(dim, y.dim())
    right, left = _pairs(y, dim)
    if x is not None:
        return ((_x_steps(y, x, dim) * (right + left)) / 2.0).cumsum(dim)
    h = 1 if dx is None else dx
    return (h / 2.0 * (right + left)).cumsum(dim)


def _declare_methods():
    def diff_m(self, n=1, dim=-1, prepend=None, append=None):
        return diff(self, n, dim, prepend, append)

    diff_m.__name__ = "diff"
    diff_m.__doc__ = diff.__doc__
    _methods.define("diff", diff_m)


_declare_methods()
