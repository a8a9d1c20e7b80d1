"""Flattening parameters into one vector and back."""

from ... import _C
from ...autograd.grad_mode import no_grad as _no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(obj):
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def parameters_to_vector(parameters):
    r"""Flattens an iterable of parameters into a single vector.

    Args:
        parameters (Iterable[Tensor]): an iterable of Tensors that are the
            parameters of a model.

    Returns:
        The parameters represented by a single vector
    """
    import ferrotorch

    return ferrotorch.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    r"""Copies slices of a vector into an iterable of parameters.

    Args:
        vec (Tensor): a single vector representing the parameters of a model.
        parameters (Iterable[Tensor]): an iterable of Tensors that are the
            parameters of a model.
    """
    if not isinstance(vec, _C.TensorBase):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    with _no_grad():
        for param in parameters:
            n = param.numel()
            # PyTorch rebinds ``param.data`` to a view of ``vec``; here the values are
            # copied in (tensors cannot change storage), which is the same for the model.
            param.copy_(vec[pointer:pointer + n].reshape(tuple(param.shape)))
            pointer += n
