"""``default_collate`` / ``default_convert``: how samples become batches."""

import collections.abc
import re

import numpy as np

from .... import _C
from ...._tensor_class import Tensor

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    r"""Converts each NumPy array element into a :class:`ferrotorch.Tensor`.

    Used when automatic batching is disabled (``batch_size=None``): tensors pass
    through, NumPy arrays and scalars become tensors, mappings, named tuples and
    sequences are converted element by element, everything else is returned as is.

    Example:
        >>> default_convert(np.array([0, 1]))
        tensor([0, 1])
        >>> default_convert([np.array([0, 1]), np.array([2, 3])])
        [tensor([0, 1]), tensor([2, 3])]
    """
    if isinstance(data, _C.TensorBase):
        return data
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        if isinstance(data, np.generic) and isinstance(data, (np.str_, np.bytes_, np.object_)):
            return data
        return _C.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = _shallow_copy(data)
                for k in data:
                    clone[k] = default_convert(data[k])
                return clone
            return type(data)({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = _shallow_copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _shallow_copy(obj):
    import copy
    return copy.copy(obj)


def _stack(batch):
    from .... import stack
    return stack(list(batch), 0)


def default_collate(batch):
    r"""Takes in a batch of data and puts the elements within the batch into a tensor
    with an additional outer dimension - batch size.

    The mapping, as in PyTorch:

        * :class:`ferrotorch.Tensor` -> stacked :class:`ferrotorch.Tensor`
        * NumPy arrays -> :class:`ferrotorch.Tensor`
        * ``float`` -> ``float64`` tensor, ``int`` -> ``int64`` tensor
        * ``str``, ``bytes`` -> unchanged (a list)
        * ``Mapping[K, V_i]`` -> ``Mapping[K, default_collate([V_1, V_2, ...])]``
        * ``NamedTuple[V1_i, V2_i, ...]`` -> ``NamedTuple[default_collate([V1_1, V1_2, ...]), ...]``
        * ``Sequence[V1_i, V2_i, ...]`` -> ``Sequence[default_collate([V1_1, V1_2, ...]), ...]``
          (tuples become lists)

    Example:
        >>> default_collate([0, 1, 2, 3])
        tensor([0, 1, 2, 3])
        >>> default_collate([(0, 'a'), (1, 'b')])
        [tensor([0, 1]), ('a', 'b')]
    """
    return collate(batch)


def collate(batch, *, collate_fn_map=None):
    r"""General collate: ``collate_fn_map`` maps element types to functions applied to
    whole batches of that type; containers are walked as :func:`default_collate` does."""
    if collate_fn_map is None:
        collate_fn_map = default_collate_fn_map
    elem = batch[0]
    elem_type = type(elem)
    if elem_type in collate_fn_map:
        return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
    for t in collate_fn_map:
        if isinstance(elem, t):
            return collate_fn_map[t](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = _shallow_copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
    if _is_namedtuple(elem):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = _shallow_copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _stack(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    # One copy into a contiguous array, then one tensor: no per-sample tensors.
    return _C.from_numpy(np.ascontiguousarray(np.stack(batch, 0)))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _C.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _C.tensor(list(batch), dtype=_C.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _C.tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    # before np.generic: NumPy's string scalars are str/bytes and stay as they are
    str: collate_str_fn,
    bytes: collate_str_fn,
    np.generic: collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
}
