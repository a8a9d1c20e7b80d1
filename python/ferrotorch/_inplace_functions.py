"""``torch.xxx_(input, ...)`` function forms of in-place Tensor methods that
PyTorch also exposes at the top level."""

from . import _args

__all__ = ["clamp_min_", "clamp_max_", "detach_", "index_put_", "resize_as_"]


@_args.signature('Tensor input, Scalar min', 'Tensor input, Tensor min')
def clamp_min_(input, min):
    """In-place :func:`clamp_min`."""
    return input.clamp_min_(min)


@_args.signature('Tensor input, Scalar max', 'Tensor input, Tensor max')
def clamp_max_(input, max):
    """In-place :func:`clamp_max`."""
    return input.clamp_max_(max)


@_args.signature('Tensor input')
def detach_(input):
    """Detaches ``input`` from the graph in place (see :meth:`Tensor.detach_`)."""
    return input.detach_()


@_args.signature('Tensor input, Any indices, Tensor values, bool accumulate=False')
def index_put_(input, indices, values, accumulate=False):
    """In-place :func:`index_put`."""
    return input.index_put_(indices, values, accumulate)


@_args.signature('Tensor input, Tensor the_template, *, MemoryFormat? memory_format=None')
def resize_as_(input, the_template, *, memory_format=None):
    """Resizes ``input`` in place to ``the_template``'s shape."""
    return input.resize_as_(the_template, memory_format=memory_format)
