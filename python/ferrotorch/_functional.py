"""Functional forms of tensor methods (``torch.add(x, y)`` == ``x.add(y)``)."""

from . import _C

__all__ = [
    "add", "sub", "mul", "div", "true_divide", "pow", "neg", "abs", "exp", "log", "sqrt",
    "tanh", "sigmoid", "relu", "maximum", "minimum", "eq", "sum", "mean", "mm", "bmm", "matmul",
    "reshape", "flatten", "unflatten", "transpose", "swapaxes", "t", "permute", "squeeze",
    "unsqueeze", "narrow", "select", "unbind", "split", "chunk", "diagonal", "as_strided",
    "broadcast_to", "clone", "equal", "detach", "numel",
]


def add(input, other, *, alpha=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    return input.add(other, alpha=alpha) if isinstance(input, _C.Tensor) else _C.tensor(input).add(other, alpha=alpha)


def sub(input, other, *, alpha=None):
    """``input - alpha * other``."""
    return input.sub(other, alpha=alpha)


def mul(input, other):
    """Elementwise product."""
    return input * other


def div(input, other):
    """True division."""
    return input / other


true_divide = div


def pow(input, exponent):
    """``input ** exponent``."""
    if isinstance(input, _C.Tensor):
        return input.pow(exponent)
    return exponent.__rpow__(input)


def neg(input):
    """``-input``."""
    return input.neg()


def abs(input):
    """Absolute value."""
    return input.abs()


def exp(input):
    """Exponential."""
    return input.exp()


def log(input):
    """Natural logarithm."""
    return input.log()


def sqrt(input):
    """Square root."""
    return input.sqrt()


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input):
    """Logistic sigmoid."""
    return input.sigmoid()


def relu(input):
    """``max(input, 0)``."""
    return input.relu()


def maximum(input, other):
    """Elementwise maximum (NaN-propagating)."""
    return input.maximum(other)


def minimum(input, other):
    """Elementwise minimum (NaN-propagating)."""
    return input.minimum(other)


def eq(input, other):
    """Elementwise ``==``."""
    return input.eq(other)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all dims by default)."""
    return input.sum(dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (all dims by default)."""
    return input.mean(dim, keepdim, dtype=dtype)


def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    return input.mm(mat2)


def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors."""
    return input.bmm(mat2)


def matmul(input, other):
    """Matrix product with PyTorch's broadcasting rules."""
    return input.matmul(other)


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
    return input.broadcast_to(size)


def clone(input, *, memory_format=None):
    """A copy with its own storage."""
    return input.clone()


def equal(input, other):
    """True if both have the same shape and elements."""
    return input.equal(other)


def detach(input):
    """A tensor sharing data with no autograd history."""
    return input.detach()


def numel(input):
    """Number of elements."""
    return input.numel()


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return input.addmm(mat1, mat2, beta=beta, alpha=alpha)


__all__.append("addmm")
