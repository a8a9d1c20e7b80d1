"""``ferrotorch.nn.parallel``: :class:`DataParallel` and :func:`data_parallel`.

ferrotorch runs one process on one device, so there is nothing to replicate
across: without an accelerator ``DataParallel`` just runs the wrapped module, as
PyTorch's does on a machine without GPUs; with one, the module and its inputs
go to ``device_ids[0]`` and the output to ``output_device`` (one replica, the
same result a multi-GPU split would gather).
"""

from ... import _C
from ..modules import Module

__all__ = ["DataParallel", "data_parallel"]


def _accelerator_available():
    from ... import cuda
    try:
        return bool(cuda.is_available()) and cuda.device_count() > 0
    except Exception:  # a build without the CUDA backend
        return False


def _device_index(d):
    if isinstance(d, int):
        return d
    idx = getattr(d, "index", None)
    return 0 if idx is None else idx


def _to_device(obj, device):
    if isinstance(obj, _C.TensorBase):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    r"""Implements data parallelism at the module level.

    On a machine without an accelerator the wrapped module simply runs (as
    PyTorch's ``DataParallel`` does there): ``device_ids`` is ``[]``, the state
    dict keys gain the ``module.`` prefix, and the printed tree shows the module.

    Args:
        module (Module): module to be parallelized
        device_ids (list of int or torch.device): CUDA devices (default: all devices)
        output_device (int or torch.device): device location of output (default: device_ids[0])
        dim (int): the batch dimension the inputs would be scattered along. Default: 0
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _accelerator_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            from ... import cuda
            device_ids = list(range(cuda.device_count()))
        if not device_ids:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(x) for x in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _C.device(f"cuda:{self.device_ids[0]}")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        out = self.module(*_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj))
        return _to_device(out, _C.device(f"cuda:{self.output_device}"))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    r"""Evaluate module(input) in parallel across the GPUs given in device_ids.

    This is the functional version of the DataParallel module. Without an
    accelerator it raises ``RuntimeError("device type could not be determined")``,
    as PyTorch's does.

    Args:
        module (Module): the module to evaluate in parallel
        inputs (Tensor): inputs to the module
        device_ids (list of int or torch.device): GPU ids on which to replicate module
        output_device (list of int or torch.device): GPU location of the output. Use -1 to indicate the CPU.
            (default: device_ids[0])
    Returns:
        a Tensor containing the result of module(input) located on output_device
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _accelerator_available():
        raise RuntimeError("device type could not be determined")
    from ... import cuda
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    src = _C.device(f"cuda:{_device_index(device_ids[0])}")
    for t in list(module.parameters()) + list(module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} (device_ids[0]) but "
                               f"found one of them on device: {t.device}")
    out = module(*_to_device(inputs, src), **_to_device(module_kwargs or {}, src))
    return _to_device(out, _C.device(f"cuda:{_device_index(output_device)}"))
