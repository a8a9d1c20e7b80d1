"""Functional forms of tensor methods (``torch.sum(x)`` == ``x.sum()``); the arithmetic ones live with
their operators in ``_math_ops``."""

from . import _C
from . import _tensor_methods as _methods
from ._math_ops import _write_out, _pretty, _inplace_copy, _check_inplace_broadcast, _out_dtype, _OMITTED, _reduce_dim

__all__ = [
    "pow", "sum", "mean", "mm", "bmm", "matmul",
    "reshape", "flatten", "unflatten", "transpose", "swapaxes", "swapdims", "t", "permute", "squeeze",
    "unsqueeze", "narrow", "select", "unbind", "split", "chunk", "diagonal", "as_strided",
    "broadcast_to", "clone", "equal", "detach",
]



def pow(input, exponent, *, out=None):
    """``input ** exponent`` (either may be a number)."""
    if isinstance(input, _C.TensorBase):
        return _write_out(input.pow(exponent), out)
    return _write_out(exponent.__rpow__(input), out)


def _pow_(self, exponent):
    """In-place ``self ** exponent``."""
    _check_inplace_broadcast(self, exponent)
    return _C._math_binary("pow", self, exponent, inplace=True)


_methods.define("pow_", _pow_)
# ``x **= y`` is ``pow_`` (in place: same storage, version bump, autograd rebase).
_methods.define("__ipow__", _pow_)


def sum(input, dim=_OMITTED, keepdim=_OMITTED, *, dtype=None, out=None):
    """Sum over ``dim`` (all dims by default)."""
    dim, keepdim = _reduce_dim("sum", dim, keepdim)
    return _write_out(_native_sum(input, dim, keepdim, dtype=_out_dtype(dtype, out)), out)


def mean(input, dim=_OMITTED, keepdim=_OMITTED, *, dtype=None, out=None):
    """Mean over ``dim`` (all dims by default)."""
    dim, keepdim = _reduce_dim("mean", dim, keepdim)
    return _write_out(_native_mean(input, dim, keepdim, dtype=_out_dtype(dtype, out)), out)


_native_sum = _methods.lookup("sum")
_native_mean = _methods.lookup("mean")




def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors."""
    return _write_out(input.mm(mat2), out)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors."""
    return _write_out(input.bmm(mat2), out)


def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's broadcasting rules."""
    return _write_out(input.matmul(other), out)


def mv(input, vec, *, out=None):
    """Matrix-vector product: ``input`` is ``(n, m)``, ``vec`` is ``(m,)``, the result ``(n,)``."""
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    # PyTorch's order: addmv's shape check, then its dtype check (the result, made like `vec`, comes first in
    # the message), then the kernel's dtype dispatch, which an empty matrix never reaches
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if input.dtype != vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_pretty(vec.dtype)}, "
                           f"{_pretty(input.dtype)}, and {_pretty(vec.dtype)}")
    if input.dtype == _C.bool and input.numel() > 0:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    return _write_out(input.matmul(vec), out)


def dot(input, tensor, *, out=None):
    """Dot product of two 1-D tensors of the same size and dtype."""
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    if input.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_pretty(input.dtype)} "
                           f"and {_pretty(tensor.dtype)}")
    if input.shape[0] != tensor.shape[0]:
        n, m = input.shape[0], tensor.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
                           f"of elements, but got {n} and {m} elements respectively")
    if input.dtype == _C.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    return _write_out(_C._dot(input, tensor), out)


_methods.define("mv", lambda self, vec: mv(self, vec))
_methods.define("dot", lambda self, tensor: dot(self, tensor))


def reshape(input, shape):
    """A view when possible, otherwise a copy, with the given shape."""
    return input.reshape(shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dims ``start_dim..end_dim`` into one."""
    return input.flatten(start_dim, end_dim)


def unflatten(input, dim, sizes):
    """Splits ``dim`` into ``sizes``."""
    return input.unflatten(dim, sizes)


def transpose(input, dim0, dim1):
    """Swaps two dims (a view)."""
    return input.transpose(dim0, dim1)


swapaxes = transpose
swapdims = transpose


def t(input):
    """Transposes a tensor of at most 2 dims."""
    return input.t()


def permute(input, dims):
    """Reorders dims (a view)."""
    return input.permute(dims)


def squeeze(input, dim=None):
    """Removes size-1 dims."""
    return input.squeeze(dim)


def unsqueeze(input, dim):
    """Inserts a size-1 dim."""
    return input.unsqueeze(dim)


def narrow(input, dim, start, length):
    """A view of ``length`` elements of ``dim`` from ``start``."""
    return input.narrow(dim, start, length)


def select(input, dim, index):
    """A view at ``index`` along ``dim``, which is removed."""
    return input.select(dim, index)


def unbind(input, dim=0):
    """All slices along ``dim``."""
    return input.unbind(dim)


def split(tensor, split_size_or_sections, dim=0):
    """Splits into pieces of a size, or of the given sizes."""
    return tensor.split(split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    """Splits into ``chunks`` nearly equal pieces."""
    return input.chunk(chunks, dim)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of a diagonal."""
    return input.diagonal(offset, dim1, dim2)


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides and offset."""
    return input.as_strided(size, stride, storage_offset)


def broadcast_to(input, size):
    """A broadcast view with the given shape."""
    # A bare int stands for a one-element size only as a method's first
    # argument (PyTorch's parser rule for int lists); here it is position 2.
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"broadcast_to(): argument 'size' (position 2) must be tuple of ints, not {type(size).__name__}")
    return input.broadcast_to(size)


def clone(input, *, memory_format=None):
    """A copy with its own storage, laid out in ``memory_format`` (default: the input's layout)."""
    return input.clone(memory_format=memory_format)


def equal(input, other):
    """True if both have the same shape and elements."""
    return input.equal(other)


def detach(input):
    """A tensor sharing data with no autograd history."""
    return input.detach()


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; with ``beta=0`` ``input`` is ignored (NaNs included)."""
    return _write_out(_addmm(input, mat1, mat2, beta, alpha), out)


def _addmm(input, mat1, mat2, beta, alpha):
    # One op for every scale: PyTorch's checks in its order (input must expand to the product),
    # its early returns for empty products and its BLAS arithmetic (see add_product in ops/linalg.rs).
    return _C._addprod("addmm", input, mat1, mat2, beta, alpha)


def _addmm_method(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(self, mat1, mat2, beta, alpha)


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In-place ``addmm``."""
    return _inplace_copy(self, _addmm(self, mat1, mat2, beta, alpha))


_methods.define("addmm", _addmm_method)
_methods.define("addmm_", _addmm_)


__all__.extend(["addmm", "mv", "dot"])
