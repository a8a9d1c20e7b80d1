"""Vector and matrix products not covered by the native matmul family:
``cross``, ``inner``, ``kron``, ``addr`` and ``chain_matmul``, composed from
broadcasting arithmetic, ``tensordot`` and ``matmul``.
"""

import builtins
import warnings

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _write_out

__all__ = ["cross", "inner", "kron", "addr", "chain_matmul"]


def _linalg_cross(input, other, dim):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and {other.shape[dim]}"
        )
    # sizes are checked before broadcasting, as in PyTorch
    input, other = _C._broadcast_tensors([input, other])
    a0, a1, a2 = (input.narrow(dim, i, 1) for i in range(3))
    b0, b1, b2 = (other.narrow(dim, i, 1) for i in range(3))
    return _C._cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


@_args.signature('Tensor input, Tensor other, int? dim=None, *, Tensor? out=None')
def cross(input, other, dim=None, *, out=None):
    """Cross product of vectors in dimension ``dim`` (of size 3) of ``input`` and ``other``.

    Without ``dim`` the first dimension of size 3 is used (deprecated in PyTorch,
    which warns; :func:`ferrotorch.linalg.cross` defaults to ``dim=-1``).
    """
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of linalg.cross in a future release.",
            UserWarning, stacklevel=2,
        )
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _write_out(_linalg_cross(input, other, dim), out)


@_args.signature('Tensor input, Tensor other, *, Tensor? out=None')
def inner(input, other, *, out=None):
    """Inner product of 1-d tensors; for higher dims a sum product over the last dims.

    A 0-d operand multiplies elementwise.
    """
    if input.dim() == 0 or other.dim() == 0:
        return _write_out(input * other, out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    from ._shape_ops import tensordot
    return _write_out(tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1])), out)


@_args.signature('Tensor input, Tensor other, *, Tensor? out=None')
def kron(input, other, *, out=None):
    """Kronecker product of ``input`` and ``other``.

    The operands are aligned on their trailing dims; result dim ``i`` has size
    ``input.shape[i] * other.shape[i]``.
    """
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    a_shape, b_shape = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    res = a.reshape(a_shape) * b.reshape(b_shape)
    return _write_out(res.reshape([sa * sb for sa, sb in zip(a.shape, b.shape)]), out)


def _check_scalars(input, beta, alpha):
    if not input.is_floating_point() and input.dtype != _C.bool:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")


def _addr(input, vec1, vec2, beta, alpha):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    _check_scalars(input, beta, alpha)
    prod = vec1.unsqueeze(1) * vec2.unsqueeze(0)
    if input.dtype == _C.bool:
        prod = prod & bool(alpha)
        return prod if not beta else (input & bool(beta)) | prod
    if alpha != 1:
        prod = prod * alpha
    # beta == 0 ignores input entirely (NaN and inf included), as in BLAS
    if beta == 0:
        # where() keeps input's NaN/inf out of the values while input still gets its (zero) gradient
        keep = _C.ones((), dtype=_C.bool, device=prod.device)
        return _C._where(keep, prod, input)
    return input * beta + prod if beta != 1 else input + prod


@_args.signature('Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None')
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _write_out(_addr(input, vec1, vec2, beta, alpha), out)


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place :func:`addr`."""
    res = _addr(self, vec1, vec2, beta, alpha)
    if tuple(res.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(res.shape)}"
        )
    return self.copy_(res)


def chain_matmul(*matrices, out=None):
    """Matrix product of the given 2-d tensors, left to right (deprecated in PyTorch
    in favour of :func:`ferrotorch.linalg.multi_dot`)."""
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
        "multiple parameters.", UserWarning, stacklevel=2,
    )
    from ._stacking import _tensor_elements
    _tensor_elements(matrices)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    res = matrices[0].clone() if len(matrices) == 1 else matrices[0]
    for m in matrices[1:]:
        res = res.matmul(m)
    return _write_out(res, out)


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (cross, inner, kron, addr):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))
    _methods.define("addr_", _addr_)


_declare_methods()
