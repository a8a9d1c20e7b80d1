"""Helpers shared by the distribution families."""

import math
import numbers

import ferrotorch as torch

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcasts tensors and Python numbers to one shape.

    Numbers become tensors of the dtype/device of the first tensor argument (or
    the default dtype when there is none).
    """
    if not all(isinstance(v, torch.Tensor) or isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, torch.Tensor)), None)
        dtype = like.dtype if like is not None else torch.get_default_dtype()
        device = like.device if like is not None else None
        values = [
            v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype, device=device)
            for v in values
        ]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return torch.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sums the rightmost ``dim`` dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Converts logits to probabilities (sigmoid when binary, else softmax over the last dim)."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into the open interval (0, 1) by the dtype's eps."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Converts probabilities to logits (log-odds when binary, else log-probs)."""
    ps = clamp_probs(probs)
    if is_binary:
        return torch.log(ps) - torch.log1p(-ps)
    return torch.log(ps)


class lazy_property:
    """A property computed once on first access and then stored on the instance.

    Accessed on the class it returns itself, which lets ``Distribution`` tell lazy
    parameters (``probs`` vs ``logits``) apart from ones set in ``__init__``.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = getattr(wrapped, "__doc__", None)
        self.__name__ = getattr(wrapped, "__name__", None)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_flat_indices(n, diag):
    return [r * n + c for r in range(n) for c in range(n) if c - r <= diag]


def tril_matrix_to_vec(mat, diag=0):
    """Flattens the lower triangle (offset ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    idx = torch.tensor(_tril_flat_indices(n, diag), dtype=torch.long, device=mat.device)
    return mat.flatten(-2).index_select(-1, idx)


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of :func:`tril_matrix_to_vec`: scatters a vector into a lower-triangular matrix."""
    k = vec.shape[-1]
    n_float = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1))) / 2
    n = int(round(n_float))
    if abs(n_float - n) > 1e-9:
        raise ValueError(
            f"The size of last dimension is {k} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    batch = tuple(vec.shape[:-1])
    flat = _tril_flat_indices(n, diag)
    out = torch.zeros(batch + (n * n,), dtype=vec.dtype, device=vec.device)
    idx = torch.tensor(flat, dtype=torch.long, device=vec.device).expand(batch + (len(flat),))
    return out.scatter(-1, idx, vec).reshape(batch + (n, n))
