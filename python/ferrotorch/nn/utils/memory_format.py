"""Convolution weight memory-format conversion.

ferrotorch stores every tensor in the contiguous (row-major) layout; a memory format is a
layout choice that does not change any value, so these conversions keep the weights as
they are and only walk the module tree, returning it as PyTorch does.
"""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format):
    # The weights are already in the only layout this backend has: nothing to rewrite.
    for child in module.children():
        _convert(child, memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    r"""Converts the ``memory_format`` of ``nn.Conv2d.weight`` (and ``ConvTranspose2d``) in ``module``.

    The conversion is applied recursively to nested modules. Values are unchanged; on this
    backend every weight stays contiguous, which is what the convolutions expect.

    Args:
        module (nn.Module): ``nn.Conv2d`` & ``nn.ConvTranspose2d`` or container ``nn.Module``
        memory_format: user specified ``memory_format``, e.g. ``torch.channels_last`` or
            ``torch.contiguous_format``

    Returns:
        The original module with updated ``nn.Conv2d``
    """
    return _convert(module, memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    r"""Converts the ``memory_format`` of ``nn.Conv3d.weight`` (and ``ConvTranspose3d``) in ``module``.

    The conversion is applied recursively to nested modules. Values are unchanged; on this
    backend every weight stays contiguous, which is what the convolutions expect.

    Args:
        module (nn.Module): ``nn.Conv3d`` & ``nn.ConvTranspose3d`` or container ``nn.Module``
        memory_format: user specified ``memory_format``, e.g. ``torch.channels_last_3d`` or
            ``torch.contiguous_format``

    Returns:
        The original module with updated ``nn.Conv3d``
    """
    return _convert(module, memory_format)
