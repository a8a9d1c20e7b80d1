"""Sample statistics of observation matrices: ``cov`` and ``corrcoef``, and
the norm-based ``dist``, ``renorm`` and the deprecated ``frobenius_norm``/``nuclear_norm``.
"""

import warnings

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _pretty, _write_out

__all__ = ["cov", "corrcoef", "dist", "renorm", "frobenius_norm", "nuclear_norm"]


def _check_weights(name, w, num_obs, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} dimensions")
    if w.numel() != num_obs:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the input but got "
            f"{w.numel()} != {num_obs}"
        )
    if integral and (w.is_floating_point() or w.dtype == _C.bool):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with {_pretty(w.dtype)} dtype")
    if not integral and not w.is_floating_point():
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with {_pretty(w.dtype)} dtype"
        )
    if w.device.type != "meta" and w.numel() and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@_args.signature('Tensor input, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None')
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (observations in columns).

    ``correction`` is the difference between the number of samples and the degrees
    of freedom (1: Bessel's correction). ``fweights`` are integer frequency weights,
    ``aweights`` observation weights. A single variable gives a 0-d result.
    """
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if not x.is_floating_point():
        x = x.to(_C.get_default_dtype())
    num_obs = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, num_obs, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, num_obs, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = float(num_obs)
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm = w_sum - correction
    if (float(norm) if not isinstance(norm, _C.TensorBase) or norm.device.type != "meta" else 1.0) <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.",
            UserWarning, stacklevel=2,
        )
        norm = 0.0 if not isinstance(norm, _C.TensorBase) else norm.clamp(min=0)
    xm = x - avg.unsqueeze(1)
    c = xm.matmul((xm if w is None else xm * w).t())
    return (c / norm).squeeze()


@_args.signature('Tensor input')
def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``,
    clipped to ``[-1, 1]``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clamp(-1, 1)


@_args.signature('Tensor input, Tensor other, Scalar p=2')
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast)."""
    return (input - other).norm(p)


@_args.signature('Tensor input, int[1] dim, bool keepdim=False, *, Tensor? out=None')
def frobenius_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    """Deprecated in PyTorch (use ``linalg.vector_norm(A, 2, dim, keepdim)``): the
    2-norm over ``dim``."""
    warnings.warn(
        "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a future "
        "PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2,
    )
    from .linalg import vector_norm
    return _write_out(vector_norm(input, 2, dim, keepdim), out)


@_args.signature(
    'Tensor input, bool dim=False, *, Tensor? out=None',
    'Tensor input, int[2] dim, bool keepdim=False, *, Tensor? out=None',
)
def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    """Deprecated in PyTorch (use ``linalg.matrix_norm(A, 'nuc', dim, keepdim)``): the
    sum of the singular values of the matrices in ``dim``."""
    warnings.warn(
        "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a future "
        "PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning, stacklevel=2,
    )
    if isinstance(dim, bool):
        dim, keepdim = (-2, -1), dim
    elif isinstance(dim, int):
        dim = (dim, dim)  # an int fills PyTorch's int[2] argument
    for d in dim:
        if not -input.dim() <= d < max(input.dim(), 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got {d})")
    from .linalg import matrix_norm
    return _write_out(matrix_norm(input, "nuc", dim, keepdim), out)


@_args.signature('Tensor input, Scalar p, int dim, Scalar maxnorm, *, Tensor? out=None')
def renorm(input, p, dim, maxnorm, *, out=None):
    """Rescales each slice of ``input`` along ``dim`` whose ``p``-norm exceeds
    ``maxnorm`` to have norm ``maxnorm`` (up to a ``1e-7`` guard)."""
    return _write_out(_renorm(input, p, dim, maxnorm), out)


def _renorm(input, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    d = dim % nd
    others = [i for i in range(nd) if i != d]
    norms = input.norm(p, others, True)
    one = _C.ones((), dtype=input.dtype, device=input.device)
    factor = _C._where(norms > maxnorm, maxnorm / (norms + 1e-7), one)
    return input * factor


def _renorm_(self, p, dim, maxnorm):
    """In-place :func:`renorm`."""
    return self.copy_(_renorm(self, p, dim, maxnorm))


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (cov, corrcoef, dist, renorm):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))
    _methods.define("renorm_", _renorm_)


_declare_methods()
