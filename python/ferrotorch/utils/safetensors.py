"""Safetensors files, with the API of the ``safetensors`` package's ``torch``
module (``save_file``/``load_file``/``save``/``load``).

The format is read and written by the ``safetensors`` Rust crate inside the
engine (``ferrotorch::io::safetensors`` for Rust users), so files are
interchangeable with the Python package's: a JSON header names each tensor's
dtype, shape and byte range, and the data follows, little-endian and
contiguous. ``load_file`` memory-maps the file while it copies each tensor
out once.
"""

import os

from .. import _C

__all__ = ["save_file", "load_file", "save", "load"]


def _overlap(a, b):
    """Whether the bytes of two contiguous tensors on one storage overlap."""
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    lo_a, lo_b = a.data_ptr(), b.data_ptr()
    hi_a, hi_b = lo_a + a.numel() * a.element_size(), lo_b + b.numel() * b.element_size()
    return lo_a < hi_b and lo_b < hi_a


def _items(tensors, metadata):
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(t, _C.TensorBase):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(t)}")
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended to "
                "save only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor"
                " to pack it before saving.")
    names = list(tensors)
    shared = [{x, y} for i, x in enumerate(names) for y in names[i + 1:]
              if tensors[x].numel() and tensors[y].numel() and _overlap(tensors[x], tensors[y])]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences when "
            f"loading them again: {shared}.")
    if metadata is not None:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"argument 'metadata': '{type(v).__name__}' object is not an instance of 'str'")
    return [(name, t.detach()) for name, t in tensors.items()]


def save(tensors, metadata=None):
    """Saves a dict of tensors to safetensors bytes.

    Args:
        tensors (Dict[str, Tensor]): contiguous tensors that do not share memory.
        metadata (Dict[str, str], optional): strings stored in the header.

    Returns:
        bytes: the file's contents.
    """
    return _C._safetensors_serialize(_items(tensors, metadata), metadata)


def save_file(tensors, filename, metadata=None):
    """Saves a dict of tensors to the safetensors file ``filename``.

    Args:
        tensors (Dict[str, Tensor]): contiguous tensors that do not share memory.
        filename (str or os.PathLike): the file to write.
        metadata (Dict[str, str], optional): strings stored in the header.
    """
    _C._safetensors_save_file(_items(tensors, metadata), os.fspath(filename), metadata)


def load(data):
    """Loads a dict of tensors from safetensors bytes."""
    return dict(_C._safetensors_deserialize(bytes(data)))


def load_file(filename, device="cpu"):
    """Loads a dict of tensors from the safetensors file ``filename``.

    Args:
        filename (str or os.PathLike): the file to read.
        device (str or int): where the tensors go; only ``"cpu"`` is available.
    """
    out = dict(_C._safetensors_load_file(os.fspath(filename)))
    if str(device) != "cpu":
        out = {k: v.to(device) for k, v in out.items()}
    return out
