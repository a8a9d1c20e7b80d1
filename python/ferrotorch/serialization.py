"""``ferrotorch.save`` / ``ferrotorch.load``: PyTorch's checkpoint formats.

Files are interchangeable with PyTorch's: ``save`` writes the zip layout that
``torch.save`` writes (``<archive>/data.pkl`` with persistent ids naming the
storages, one ``<archive>/data/<key>`` record per storage, byte order, version),
and the pickle names PyTorch's own globals (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage`` ...), so ``torch.load`` reads it. ``load`` reads what
``torch.save`` writes, zip or legacy non-zip stream.

With ``weights_only=True`` (the default) the pickle is read by a restricted
unpickler written here that resolves only the globals PyTorch allows
(``torch/_weights_only_unpickler.py``) plus those added with
:func:`add_safe_globals`; nothing is ever imported by name, so a checkpoint
cannot run code.
"""

import _compat_pickle
import collections
import contextlib
import enum
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib

import numpy as np

from . import _C
from ._tensor_class import Tensor

__all__ = [
    "save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
    "safe_globals", "get_unsafe_globals_in_checkpoint", "default_restore_location",
    "location_tag", "normalize_storage_type", "StorageType", "SourceChangeWarning",
    "DEFAULT_PROTOCOL", "LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_STORAGE_ALIGNMENT = 64

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
    "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)


class SourceChangeWarning(Warning):
    pass


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_default_load_endianness = None


def get_default_load_endianness():
    """The byte order assumed for checkpoints without a byte order record (``None``: little)."""
    return _default_load_endianness


def set_default_load_endianness(endianness):
    """Sets the byte order assumed for checkpoints without a byte order record.

    Args:
        endianness (LoadEndianness or None): the new fallback byte order
    """
    global _default_load_endianness
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _default_load_endianness = endianness


# ----------------------------------------------------------------------------------------------
# dtypes and storage types
# ----------------------------------------------------------------------------------------------

# (dtype name, legacy storage class name, numpy dtype used to move the bytes)
_DTYPES = [
    ("bool", "BoolStorage", np.bool_),
    ("uint8", "ByteStorage", np.uint8),
    ("int8", "CharStorage", np.int8),
    ("int16", "ShortStorage", np.int16),
    ("int32", "IntStorage", np.int32),
    ("int64", "LongStorage", np.int64),
    ("float16", "HalfStorage", np.float16),
    ("bfloat16", "BFloat16Storage", np.int16),  # numpy has no bfloat16: move the bits as int16
    ("float32", "FloatStorage", np.float32),
    ("float64", "DoubleStorage", np.float64),
    ("complex64", "ComplexFloatStorage", np.complex64),
    ("complex128", "ComplexDoubleStorage", np.complex128),
]
_DTYPE_BY_NAME = {n: getattr(_C, n) for n, _, _ in _DTYPES}
_NP_BY_DTYPE = {getattr(_C, n): npd for n, _, npd in _DTYPES}
_STORAGE_NAME_BY_DTYPE = {getattr(_C, n): s for n, s, _ in _DTYPES}
_DTYPE_BY_STORAGE_NAME = {s: getattr(_C, n) for n, s, _ in _DTYPES}

# PyTorch dtypes and storages ferrotorch has no counterpart for: allowed by PyTorch, so a
# file naming them is not malicious, but it cannot be loaded here.
_MISSING_DTYPES = [
    "complex32", "uint16", "uint32", "uint64", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
    "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2",
    "bits8", "bits16", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "int1",
    "int2", "int3", "int4", "int5", "int6", "int7",
]
_MISSING_STORAGES = {
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8", "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}


class StorageType:
    """Stands for a legacy storage class (``torch.FloatStorage`` ...) met in a pickle."""

    __slots__ = ("_dtype", "_name")

    def __init__(self, name):
        if name not in _DTYPE_BY_STORAGE_NAME:
            raise KeyError(name)
        self._name = name
        self._dtype = _DTYPE_BY_STORAGE_NAME[name]

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"

    __repr__ = __str__


_STORAGE_TYPES = {n: StorageType(n) for n in _DTYPE_BY_STORAGE_NAME}


class _UntypedStorageType:
    """Stands for ``torch.UntypedStorage`` in a pickle (bytes; the tensor names its dtype)."""

    dtype = _C.uint8

    def __repr__(self):
        return "torch.UntypedStorage"


_UNTYPED_STORAGE = _UntypedStorageType()


def normalize_storage_type(storage_type):
    """The storage class itself (kept for PyTorch's signature)."""
    return storage_type


def _element_size(dtype):
    return np.dtype(_NP_BY_DTYPE[dtype]).itemsize


def _unsupported_dtype(name):
    def fail(*args, **kwargs):
        raise RuntimeError(f"ferrotorch has no dtype {name}; this checkpoint cannot be loaded here")
    fail.__name__ = name
    return fail


# ----------------------------------------------------------------------------------------------
# loaded storages and the tensor rebuild functions
# ----------------------------------------------------------------------------------------------


class _LoadedStorage:
    """A storage read from a checkpoint: its bytes in one writable NumPy buffer.

    Every tensor built on it is a view of a flat tensor made from that buffer, so
    tensors that shared a storage when saved share memory again after loading.
    """

    __slots__ = ("_bytes", "dtype", "location", "_flat")

    def __init__(self, buffer, dtype, location):
        self._bytes = buffer
        self.dtype = dtype
        self.location = location
        self._flat = {}

    def nbytes(self):
        return int(self._bytes.nbytes)

    def size(self):
        return self.nbytes() // _element_size(self.dtype)

    __len__ = size

    @property
    def device(self):
        return _C.device(self.location if self.location.startswith("cuda") else "cpu")

    def _typed(self, dtype):
        flat = self._flat.get(dtype)
        if flat is None:
            if dtype not in _NP_BY_DTYPE:
                raise RuntimeError(f"ferrotorch cannot rebuild a tensor of dtype {dtype}")
            size = _element_size(dtype)
            usable = self.nbytes() // size * size
            arr = self._bytes[:usable].view(_NP_BY_DTYPE[dtype])
            flat = _C.from_numpy(arr)
            if dtype == _C.bfloat16:
                flat = flat.view(_C.bfloat16)
            self._flat[dtype] = flat
        return flat

    def __repr__(self):
        return f"ferrotorch.storage._LoadedStorage(dtype={self.dtype}, nbytes={self.nbytes()}, location={self.location!r})"


def _checked_int_tuple(x, what):
    if isinstance(x, int) and not isinstance(x, bool):
        return (x,)
    try:
        out = tuple(x)
    except TypeError:
        raise RuntimeError(f"tensor {what} must be a tuple of ints, got {type(x).__name__}") from None
    for v in out:
        if not isinstance(v, int) or isinstance(v, bool):
            raise RuntimeError(f"tensor {what} must be a tuple of ints, got an element of type {type(v).__name__}")
    return out


def _tensor_on(storage, storage_offset, size, stride, dtype=None):
    if not isinstance(storage, _LoadedStorage):
        raise RuntimeError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")
    dtype = storage.dtype if dtype is None else dtype
    size = _checked_int_tuple(size, "size")
    stride = _checked_int_tuple(stride, "stride")
    if not isinstance(storage_offset, int) or isinstance(storage_offset, bool):
        raise RuntimeError("storage offset must be an int")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, stride {list(stride)}")
    limit = 1 << 63
    if storage_offset < 0 or any(not 0 <= v < limit for v in size + stride) or storage_offset >= limit:
        raise RuntimeError(
            f"invalid tensor geometry in checkpoint: size {list(size)}, stride {list(stride)}, "
            f"storage offset {storage_offset}"
        )
    flat = storage._typed(dtype)
    numel = 1
    for s in size:
        numel *= s
    # Checked here rather than left to as_strided so that a crafted record shorter than the
    # tensor it backs gets PyTorch's message, whatever the geometry.
    if numel > 0:
        need = storage_offset + 1 + sum((sz - 1) * st for sz, st in zip(size, stride))
        have = flat.numel()
        if need > have:
            isz = _element_size(dtype)
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {storage_offset}, "
                f"and itemsize {isz} requiring a storage size of {need * isz} are out of bounds for storage "
                f"of size {have * isz}"
            )
    return flat.as_strided(size, stride, storage_offset)


def _set_requires_grad(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor_on(storage, storage_offset, size, stride)


def _with_metadata(t, metadata):
    """Applies PyTorch's saved tensor metadata: the conjugate bit (a
    detached conjugate view: the bit set, not a view)."""
    if isinstance(metadata, dict) and metadata.get("conj") and t.is_complex():
        t = t.conj().detach()
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    t = _with_metadata(_tensor_on(storage, storage_offset, size, stride), metadata)
    return _set_requires_grad(t, bool(requires_grad))


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    if getattr(dtype, "__name__", "").startswith("torch."):
        dtype()  # the marker of a PyTorch dtype ferrotorch lacks: raises naming it
    if dtype not in _NP_BY_DTYPE:
        raise RuntimeError(f"ferrotorch cannot rebuild a tensor of dtype {dtype}")
    t = _with_metadata(_tensor_on(storage, storage_offset, size, stride, dtype), metadata)
    return _set_requires_grad(t, bool(requires_grad))


def _parameter_class():
    from .nn.parameter import Parameter
    return Parameter


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, _C.TensorBase):
        raise RuntimeError(f"Parameter data must be a tensor, got {type(data).__name__}")
    return _parameter_class()(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    _apply_state(p, state)
    return p


def _apply_state(obj, state):
    if not state:
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is None:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"object state must be a dict, got {type(part).__name__}")
        for k, v in part.items():
            # Plain attribute names only: a checkpoint may not reach dunder machinery.
            if type(k) is not str or (k.startswith("__") and k.endswith("__")):
                raise pickle.UnpicklingError(f"refusing to set attribute {k!r} from a checkpoint")
            setattr(obj, k, v)


def _rebuild_from_type_v2(func, new_type, args, state):
    allowed = list(_get_allowed().values()) + list(_user_allowed().values())
    if not _in_values(func, allowed) or not _in_values(new_type, allowed) or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2 with a function or type that is not allowed: {func!r}")
    ret = func(*args)
    if new_type is _parameter_class() and not isinstance(ret, new_type):
        ret = new_type(ret, ret.requires_grad)
    _apply_state(ret, state)
    return ret


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    return _set_requires_grad(data.to(dtype=dtype), bool(requires_grad))


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    t = _C.from_numpy(np.ascontiguousarray(data))
    if t.dtype != dtype:
        t = t.to(dtype=dtype)
    return _set_requires_grad(t, bool(requires_grad))


def _get_layout(name):
    from ._dtypes import strided
    if name in ("torch.strided", "strided"):
        return strided
    raise RuntimeError(f"ferrotorch has only the strided layout, the checkpoint names {name}")


def _unsupported_rebuild(name):
    def fail(*args, **kwargs):
        raise RuntimeError(f"ferrotorch cannot load tensors rebuilt by torch._utils.{name} (sparse, quantized, "
                           "nested, meta and wrapper-subclass tensors are not supported)")
    fail.__name__ = name
    return fail


def _allowed_globals():
    """PyTorch's ``weights_only`` allow-list, mapped to ferrotorch's objects."""
    from . import _size
    rc = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": _parameter_class(),
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": _size.Size,
        "torch.Tensor": Tensor,
        "torch.device": _C.device,
        "_codecs.encode": _codecs_encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.UntypedStorage": _UNTYPED_STORAGE,
        "torch.storage.UntypedStorage": _UNTYPED_STORAGE,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.strided": _get_layout("strided"),
    }
    for name, dt in _DTYPE_BY_NAME.items():
        rc[f"torch.{name}"] = dt
    for name in _MISSING_DTYPES:
        rc[f"torch.{name}"] = _unsupported_dtype(f"torch.{name}")
    for name, st in _STORAGE_TYPES.items():
        rc[f"torch.{name}"] = st
    for name, dt in _MISSING_STORAGES.items():
        rc[f"torch.{name}"] = _unsupported_dtype(f"torch.{dt}")
    for name in ("_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_meta_tensor_no_storage",
                 "_rebuild_nested_tensor", "_rebuild_wrapper_subclass"):
        rc[f"torch._utils.{name}"] = _unsupported_rebuild(name)
    return rc


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    import codecs
    return codecs.encode(obj, encoding, errors)


_ALLOWED = None


def _get_allowed():
    global _ALLOWED
    if _ALLOWED is None:
        _ALLOWED = _allowed_globals()
    return _ALLOWED


# ----------------------------------------------------------------------------------------------
# user allow-list
# ----------------------------------------------------------------------------------------------

_user_safe_globals = set()
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load.

    Args:
        safe_globals (List[Union[Callable, Tuple[Callable, str]]]): globals to allow; a
            ``(global, "module.name")`` pair names a global saved under another path.

    Example:
        >>> ferrotorch.serialization.add_safe_globals([MyTensorSubclass])
    """
    global _user_safe_globals
    if not isinstance(safe_globals, (list, tuple, set)):
        raise TypeError(f"add_safe_globals expects a list of globals, got {type(safe_globals).__name__}")
    _user_safe_globals = _user_safe_globals | set(safe_globals)


def get_safe_globals():
    """The globals added with :func:`add_safe_globals`."""
    return list(_user_safe_globals)


def clear_safe_globals():
    """Forgets every global added with :func:`add_safe_globals`."""
    global _user_safe_globals
    _user_safe_globals = set()


class safe_globals:
    """Context manager that adds ``safe_globals`` to the ``weights_only`` allow-list while active.

    Example:
        >>> with ferrotorch.serialization.safe_globals([MyClass]):
        ...     ferrotorch.load(f)
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        global _user_safe_globals
        _user_safe_globals = _user_safe_globals - set(self.safe_globals)


def _user_allowed():
    rc = {}
    for g in _user_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(g)}"
                )
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}")
            rc[g[1]] = g[0]
        else:
            rc[f"{g.__module__}.{g.__qualname__}"] = g
    return rc


# ----------------------------------------------------------------------------------------------
# the restricted unpickler
# ----------------------------------------------------------------------------------------------


def _fix_name(module, name):
    # Protocol-2 pickles may carry Python 2 names (``__builtin__``, ``copy_reg``).
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return module, name


def _in_values(obj, values):
    return any(obj is v for v in values)


class _WeightsUnpickler:
    """A pickle virtual machine that resolves only allow-listed globals.

    Its own loop over the opcodes (nothing from ``pickle.Unpickler``'s ``find_class``
    path) so no module is ever imported; stack or memo misuse and short reads become
    ``UnpicklingError``.
    """

    def __init__(self, data, persistent_load, encoding="utf-8"):
        self._data = data
        self._pos = 0
        self._persistent_load = persistent_load
        self._encoding = encoding
        self.memo = {}

    def _read(self, n):
        if n < 0:
            raise pickle.UnpicklingError("negative length in pickle data")
        end = self._pos + n
        if end > len(self._data):
            raise pickle.UnpicklingError("pickle data was truncated")
        out = self._data[self._pos:end]
        self._pos = end
        return out

    def _readline(self):
        i = self._data.find(b"\n", self._pos)
        if i < 0:
            raise pickle.UnpicklingError("pickle data was truncated")
        out = self._data[self._pos:i]
        self._pos = i + 1
        return out

    def _resolve(self, module, name):
        module, name = _fix_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
            )
        allowed = _get_allowed()
        if full in allowed:
            return allowed[full]
        user = _user_allowed()
        if full in user:
            return user[full]
        shown = full[len("builtins."):] if full.startswith("builtins.") else full
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
            "if you trust this class/function."
        )

    def _allowed_values(self):
        return list(_get_allowed().values()) + list(_user_allowed().values())

    def load(self):
        try:
            return self._load()
        except (pickle.UnpicklingError, RuntimeError, TypeError, ValueError):
            raise
        except (IndexError, KeyError, struct.error, EOFError, AttributeError, OverflowError, MemoryError,
                RecursionError) as e:
            raise pickle.UnpicklingError(f"corrupted pickle data ({type(e).__name__}: {e})") from None

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _load(self):
        self.stack = []
        self.metastack = []
        P = pickle
        read = self._read
        while True:
            op = read(1)[0]
            stack = self.stack
            if op == P.PROTO[0]:
                read(1)
            elif op == P.FRAME[0]:
                read(8)
            elif op == P.STOP[0]:
                if not stack:
                    raise pickle.UnpicklingError("pickle data ends with an empty stack")
                return stack.pop()
            elif op == P.GLOBAL[0]:
                module = self._readline().decode("utf-8")
                name = self._readline().decode("utf-8")
                stack.append(self._resolve(module, name))
            elif op == P.STACK_GLOBAL[0]:
                name = stack.pop()
                module = stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise pickle.UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._resolve(module, name))
            elif op == P.NEWOBJ[0]:
                args = stack.pop()
                cls = stack.pop()
                if cls is _parameter_class():
                    stack.append(cls(*args))
                elif _in_values(cls, self._allowed_values()) and isinstance(cls, type):
                    stack.append(cls.__new__(cls, *args))
                else:
                    raise pickle.UnpicklingError(
                        "Can only create new object for nn.Parameter or classes allowlisted "
                        f"via `add_safe_globals` but got {cls}"
                    )
            elif op == P.REDUCE[0]:
                args = stack.pop()
                func = stack[-1]
                if not _in_values(func, self._allowed_values()):
                    raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function {func}")
                if type(args) is not tuple:
                    raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif op == P.BUILD[0]:
                state = stack.pop()
                inst = stack[-1]
                tp = type(inst)
                if tp is _parameter_class() or tp is Tensor:
                    _apply_state(inst, state if isinstance(state, (dict, tuple)) else None)
                elif tp is collections.OrderedDict:
                    if state:
                        inst.__dict__.update(state)
                elif _in_values(tp, self._allowed_values()):
                    if hasattr(inst, "__setstate__"):
                        inst.__setstate__(state)
                    else:
                        _apply_state(inst, state)
                else:
                    raise pickle.UnpicklingError(
                        "Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                        f"via `add_safe_globals`, but got {tp}"
                    )
            elif op == P.APPEND[0]:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
            elif op == P.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == P.SETITEM[0]:
                v = stack.pop()
                k = stack.pop()
                self._check_dict("SETITEM")
                stack[-1][k] = v
            elif op == P.SETITEMS[0]:
                items = self._pop_mark()
                self._check_dict("SETITEMS")
                if len(items) % 2:
                    raise pickle.UnpicklingError("odd number of items for SETITEMS")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == P.ADDITEMS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not set:
                    raise pickle.UnpicklingError(f"Can only add to sets, but got {type(self.stack[-1])}")
                self.stack[-1].update(items)
            elif op == P.FROZENSET[0]:
                items = self._pop_mark()
                self.stack.append(frozenset(items))
            elif op == P.MARK[0]:
                self.metastack.append(stack)
                self.stack = []
            elif op == P.POP[0]:
                if stack:
                    stack.pop()
                else:
                    self._pop_mark()
            elif op == P.POP_MARK[0]:
                self._pop_mark()
            elif op == P.DUP[0]:
                stack.append(stack[-1])
            elif op == P.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op == P.TUPLE1[0]:
                stack[-1] = (stack[-1],)
            elif op == P.TUPLE2[0]:
                if len(stack) < 2:
                    raise IndexError("stack underflow")
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == P.TUPLE3[0]:
                if len(stack) < 3:
                    raise IndexError("stack underflow")
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == P.NONE[0]:
                stack.append(None)
            elif op == P.NEWFALSE[0]:
                stack.append(False)
            elif op == P.NEWTRUE[0]:
                stack.append(True)
            elif op == P.EMPTY_TUPLE[0]:
                stack.append(())
            elif op == P.EMPTY_LIST[0]:
                stack.append([])
            elif op == P.EMPTY_DICT[0]:
                stack.append({})
            elif op == P.EMPTY_SET[0]:
                stack.append(set())
            elif op == P.BININT[0]:
                stack.append(struct.unpack("<i", read(4))[0])
            elif op == P.BININT1[0]:
                stack.append(read(1)[0])
            elif op == P.BININT2[0]:
                stack.append(struct.unpack("<H", read(2))[0])
            elif op == P.LONG1[0]:
                n = read(1)[0]
                stack.append(pickle.decode_long(read(n)))
            elif op == P.LONG4[0]:
                n = struct.unpack("<i", read(4))[0]
                stack.append(pickle.decode_long(read(n)))
            elif op == P.BINFLOAT[0]:
                stack.append(struct.unpack(">d", read(8))[0])
            elif op == P.BINUNICODE[0]:
                n = struct.unpack("<I", read(4))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == P.SHORT_BINUNICODE[0]:
                n = read(1)[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == P.BINUNICODE8[0]:
                n = struct.unpack("<Q", read(8))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == P.SHORT_BINSTRING[0]:
                n = read(1)[0]
                data = read(n)
                stack.append(data if self._encoding == "bytes" else data.decode(self._encoding, "strict"))
            elif op == P.BINSTRING[0]:
                n = struct.unpack("<i", read(4))[0]
                data = read(n)
                stack.append(data if self._encoding == "bytes" else data.decode(self._encoding, "strict"))
            elif op == P.SHORT_BINBYTES[0]:
                n = read(1)[0]
                stack.append(bytes(read(n)))
            elif op == P.BINBYTES[0]:
                n = struct.unpack("<I", read(4))[0]
                stack.append(bytes(read(n)))
            elif op == P.BINBYTES8[0]:
                n = struct.unpack("<Q", read(8))[0]
                stack.append(bytes(read(n)))
            elif op == P.BYTEARRAY8[0]:
                n = struct.unpack("<Q", read(8))[0]
                stack.append(bytearray(read(n)))
            elif op == P.BINPERSID[0]:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and (not pid or _decode_ascii(pid[0]) != "storage"):
                    raise pickle.UnpicklingError(
                        f"Only persistent_load of storage is allowed, but got {type(pid[0]) if pid else pid}"
                    )
                stack.append(self._persistent_load(pid))
            elif op in (P.BINGET[0], P.LONG_BINGET[0]):
                i = read(1)[0] if op == P.BINGET[0] else struct.unpack("<I", read(4))[0]
                if i not in self.memo:
                    raise pickle.UnpicklingError(f"Memo value not found at index {i}")
                stack.append(self.memo[i])
            elif op in (P.BINPUT[0], P.LONG_BINPUT[0]):
                i = read(1)[0] if op == P.BINPUT[0] else struct.unpack("<I", read(4))[0]
                self.memo[i] = stack[-1]
            elif op == P.MEMOIZE[0]:
                self.memo[len(self.memo)] = stack[-1]
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {op}")

    def _check_dict(self, opcode):
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, "
                f"collections.Counter, but got {type(self.stack[-1])}"
            )


def _decode_ascii(s):
    if isinstance(s, bytes):
        return s.decode("ascii")
    return s


def _globals_in_pickle(data):
    """Every ``module.name`` a pickle names, read with ``pickletools`` (nothing runs)."""
    import pickletools
    out = []
    stack_strs = []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            module, name = _fix_name(module, name)
            out.append(f"{module}.{name}")
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            stack_strs.append(arg)
        elif op.name == "STACK_GLOBAL" and len(stack_strs) >= 2:
            out.append(f"{stack_strs[-2]}.{stack_strs[-1]}")
    return out


# ----------------------------------------------------------------------------------------------
# the full unpickler (weights_only=False)
# ----------------------------------------------------------------------------------------------


def _full_unpickler_class(pickle_module):
    class _Unpickler(pickle_module.Unpickler):
        # Names PyTorch wrote resolve to ferrotorch's objects; other names import as usual.
        def find_class(self, module, name):
            full = f"{module}.{name}"
            if full in _REBUILD_ONLY_FULL:
                return _REBUILD_ONLY_FULL[full]
            allowed = _get_allowed()
            if full in allowed:
                return allowed[full]
            if module == "torch" and "Storage" in name and name in _MISSING_STORAGES:
                return allowed[f"torch.{name}"]
            if module == "torch" or module.startswith("torch."):
                found = _ferrotorch_counterpart(module, name)
                if found is not None:
                    return found
            return super().find_class(module, name)
    return _Unpickler


def _ferrotorch_counterpart(module, name):
    """ferrotorch's object for a PyTorch global: the same module path, else the nearest
    enclosing package that has the name (``torch.nn.modules.linear.Linear`` ->
    ``ferrotorch.nn.Linear``)."""
    import importlib
    parts = ("ferrotorch" + module[len("torch"):]).split(".")
    while parts:
        try:
            mod = importlib.import_module(".".join(parts))
        except ImportError:
            parts.pop()
            continue
        if hasattr(mod, name):
            return getattr(mod, name)
        parts.pop()
    return None


_REBUILD_ONLY_FULL = {
    "torch._utils._rebuild_device_tensor_from_numpy": _rebuild_device_tensor_from_numpy,
}


# ----------------------------------------------------------------------------------------------
# map_location
# ----------------------------------------------------------------------------------------------


def location_tag(storage):
    """The location string a storage is saved under (``'cpu'``, ``'cuda:0'`` ...)."""
    dev = storage.device
    if dev.type == "cpu":
        return "cpu"
    return f"{dev.type}:{dev.index or 0}"


def default_restore_location(storage, location):
    """Places a loaded storage on ``location``; ferrotorch tensors live on the CPU."""
    location = _decode_ascii(location)
    if location == "cpu" or location.startswith("cpu"):
        storage.location = "cpu"
        return storage
    if location.startswith("cuda"):
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU."
            )
        storage.location = location
        return storage
    if location == "meta":
        raise RuntimeError("ferrotorch cannot load storages onto the meta device")
    raise RuntimeError(
        f"don't know how to restore data location of {type(storage).__name__} (tagged with {location})"
    )


def _restore_fn(map_location):
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda s, loc: default_restore_location(s, map_location.get(loc, loc))
    if isinstance(map_location, (str, bytes)):
        return lambda s, loc: default_restore_location(s, _decode_ascii(map_location))
    if isinstance(map_location, _C.device):
        return lambda s, loc: default_restore_location(s, str(map_location))
    if callable(map_location):
        def restore(s, loc):
            r = map_location(s, loc)
            if r is None:
                r = default_restore_location(s, loc)
            if not isinstance(r, _LoadedStorage):
                raise RuntimeError(
                    f"map_location must return a storage or None, got {type(r).__name__}"
                )
            return r
        return restore
    raise TypeError(f"map_location should be a str, device, dict or callable, got {type(map_location).__name__}")


# ----------------------------------------------------------------------------------------------
# load
# ----------------------------------------------------------------------------------------------


def _wo_message(message):
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make "
                "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message


@contextlib.contextmanager
def _open_for_read(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            yield fh
    else:
        for attr in ("read", "seek", "tell"):
            if not hasattr(f, attr):
                raise AttributeError(
                    f"'{type(f).__name__}' object has no attribute '{attr}'. You can only torch.load from a "
                    "file that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to "
                    "load from it instead."
                )
        yield f


def _is_zip(fh):
    start = fh.tell()
    head = fh.read(4)
    fh.seek(start)
    return head == b"PK\x03\x04"


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None, **pickle_load_args)

    Loads an object saved with :func:`ferrotorch.save` or ``torch.save`` from a file.

    With ``weights_only=True`` (the default) only tensors, primitive types, dictionaries
    and the globals added with :func:`ferrotorch.serialization.add_safe_globals` can be
    loaded; any other global raises ``pickle.UnpicklingError`` naming it and nothing
    from the file runs. ``weights_only=False`` uses Python's full unpickler and can run
    arbitrary code: use it only on files you trust.

    Args:
        f: a file-like object (with ``read``, ``readline``, ``tell`` and ``seek``), or a
            string or ``os.PathLike`` naming a file
        map_location: a function, :class:`ferrotorch.device`, string or dict saying where
            to put the storages
        pickle_module: module used for unpickling (only with ``weights_only=False``)
        weights_only (bool): restrict unpickling to tensors, primitive types, dictionaries
            and allow-listed globals
        mmap (bool): map the file instead of reading the storages into memory (``f``
            must be a path)
        pickle_load_args: keyword arguments for the unpickler (``encoding=...``), only
            with ``weights_only=False``

    Example:
        >>> ferrotorch.load("tensors.pt", weights_only=True)
        >>> ferrotorch.load("tensors.pt", map_location="cpu")
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    truthy = ("1", "y", "yes", "true")
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force_wo and force_no_wo:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
            "should be set, but both were set."
        )
    if force_wo:
        weights_only = True
    elif force_no_wo and weights_only_not_set:
        weights_only = False
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            import warnings
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    encoding = pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restore_fn(map_location)

    with _open_for_read(f) as fh:
        if _is_zip(fh):
            mm = None
            if mmap:
                if not isinstance(f, (str, os.PathLike)):
                    raise ValueError("f must be a file path in order to use the mmap argument")
                mm = os.fspath(f)
            try:
                return _load_zip(fh, restore, weights_only, pickle_module, pickle_load_args, encoding, mm)
            except pickle.UnpicklingError as e:
                if weights_only:
                    raise pickle.UnpicklingError(_wo_message(str(e))) from None
                raise
        if mmap:
            f_name = "" if not isinstance(f, str) else f"{f}, "
            raise RuntimeError(
                "mmap can only be used with files saved with "
                f"`torch.save({f_name}_use_new_zipfile_serialization=True), "
                "please torch.save your checkpoint with this option in order to use mmap."
            )
        try:
            return _load_legacy(fh, restore, weights_only, pickle_module, pickle_load_args, encoding)
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
            raise


# Bound on how much larger than its compressed bytes a compressed record may claim to be:
# PyTorch never compresses records, so a high ratio is a zip bomb, not a checkpoint.
_MAX_COMPRESSION_RATIO = 100


def _record_reader(fh, mmap_path):
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as e:
        raise RuntimeError(
            f"PytorchStreamReader failed reading zip archive: failed finding central directory ({e})"
        ) from None
    except (OSError, ValueError, EOFError, struct.error) as e:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        if any(n.endswith("constants.pkl") for n in names):
            raise RuntimeError(
                "ferrotorch.load received a TorchScript archive; TorchScript is not supported"
            )
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]
    infos = {i.filename: i for i in zf.infolist()}
    total = fh.seek(0, 2)

    def has(name):
        return prefix + name in infos

    def info(name):
        i = infos.get(prefix + name)
        if i is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if i.compress_type != zipfile.ZIP_STORED:
            if i.file_size > _MAX_COMPRESSION_RATIO * max(i.compress_size, 1) + (1 << 20):
                raise RuntimeError(
                    f"record {name} claims {i.file_size} bytes from {i.compress_size} compressed bytes; "
                    "refusing to expand it (zip bomb?)"
                )
        elif i.header_offset + i.compress_size > total:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file is truncated")
        return i

    def read(name, nbytes=None):
        i = info(name)
        want = i.file_size if nbytes is None else nbytes
        if nbytes is not None and i.file_size < nbytes:
            raise RuntimeError(
                f"storage record {name} holds {i.file_size} bytes but the tensor needs {nbytes} bytes; "
                "the checkpoint is corrupted"
            )
        try:
            with zf.open(i) as r:
                data = r.read(want)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, NotImplementedError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}") from None
        if len(data) != want:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file is truncated")
        return data

    def read_array(name, nbytes):
        """The first ``nbytes`` of a record straight into a writable NumPy buffer (CRC checked)."""
        i = info(name)
        if i.compress_type != zipfile.ZIP_STORED or nbytes != i.file_size:
            return np.frombuffer(bytearray(read(name, nbytes)), dtype=np.uint8)
        off = data_offset(name, i)
        if off + nbytes > total:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file is truncated")
        buf = np.empty(nbytes, dtype=np.uint8)
        fh.seek(off)
        got = fh.readinto(memoryview(buf)) if nbytes else 0
        if got != nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file is truncated")
        if zlib.crc32(buf) != i.CRC:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid CRC-32 (the data is corrupted)")
        return buf

    def data_offset(name, i):
        fh.seek(i.header_offset)
        head = fh.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: bad local header")
        n, m = struct.unpack("<HH", head[26:30])
        return i.header_offset + 30 + n + m

    def mapped(name, nbytes):
        i = info(name)
        if i.compress_type != zipfile.ZIP_STORED or i.file_size < nbytes:
            return None
        off = data_offset(name, i)
        if off + nbytes > total:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file is truncated")
        if nbytes == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.memmap(mmap_path, dtype=np.uint8, mode="c", offset=off, shape=(nbytes,))

    return zf, has, read, mapped, read_array


def _load_zip(fh, restore, weights_only, pickle_module, pickle_load_args, encoding, mmap_path):
    zf, has, read, mapped, read_array = _record_reader(fh, mmap_path)
    with zf:
        if has("byteorder"):
            order = read("byteorder")
            if order not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + order.decode("utf-8", "replace"))
        else:
            fallback = get_default_load_endianness()
            if fallback is LoadEndianness.BIG:
                order = b"big"
            elif fallback is LoadEndianness.NATIVE:
                order = sys.byteorder.encode()
            else:
                order = b"little"
        swap = order.decode() != sys.byteorder
        loaded = {}

        def persistent_load(saved_id):
            if not isinstance(saved_id, tuple) or len(saved_id) != 5:
                raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r}")
            typename, storage_type, key, location, numel = saved_id
            if _decode_ascii(typename) != "storage":
                raise pickle.UnpicklingError(
                    f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'"
                )
            if isinstance(storage_type, (StorageType, _UntypedStorageType)):
                dtype = storage_type.dtype
            elif callable(storage_type):
                storage_type()  # an allow-listed storage ferrotorch lacks: raises its message
                raise pickle.UnpicklingError(f"not a storage type: {storage_type!r}")
            else:
                raise pickle.UnpicklingError(f"not a storage type: {storage_type!r}")
            key = _decode_ascii(key)
            if not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
                raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r}")
            if key in loaded:
                return loaded[key]
            nbytes = numel * _element_size(dtype)
            name = f"data/{key}"
            buf = mapped(name, nbytes) if mmap_path else None
            if buf is None:
                buf = read_array(name, nbytes)
            if swap and _element_size(dtype) > 1:
                buf = np.frombuffer(
                    bytearray(buf.view(_NP_BY_DTYPE[dtype]).byteswap().tobytes()), dtype=np.uint8
                )
            st = restore(_LoadedStorage(buf, dtype, _decode_ascii(location)), _decode_ascii(location))
            loaded[key] = st
            return st

        data = read("data.pkl")
        if weights_only:
            return _WeightsUnpickler(data, persistent_load, encoding).load()
        up = _full_unpickler_class(pickle_module)(io.BytesIO(data), **pickle_load_args)
        up.persistent_load = persistent_load
        return up.load()


def _load_legacy(fh, restore, weights_only, pickle_module, pickle_load_args, encoding):
    """The pre-1.6 stream: magic, version, sys info, the pickle, storage keys, raw storages."""
    rest = fh.read()
    if not rest:
        raise EOFError("Ran out of input")
    if rest[:1] != b"\x80":
        raise pickle.UnpicklingError(
            f"invalid load key, {rest[:1]!r}: the file is neither a zip checkpoint nor a legacy PyTorch stream"
        )
    pos = [0]

    def next_pickle(persistent_load=None, restricted=True):
        buf = io.BytesIO(rest)
        buf.seek(pos[0])
        if restricted:
            up = _WeightsUnpickler(rest[pos[0]:], persistent_load, encoding)
            obj = up.load()
            pos[0] += up._pos
            return obj
        u = _full_unpickler_class(pickle_module)(buf, **pickle_load_args)
        if persistent_load is not None:
            u.persistent_load = persistent_load
        obj = u.load()
        pos[0] = buf.tell()
        return obj

    restricted = weights_only
    magic = next_pickle(restricted=True)
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = next_pickle(restricted=True)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    next_pickle(restricted=True)  # sys info

    storages = {}
    views = {}
    budget = len(rest)

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple) or len(saved_id) != 6:
            raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r}")
        typename, storage_type, root_key, location, numel, view_metadata = saved_id
        if _decode_ascii(typename) != "storage":
            raise RuntimeError(f"Unknown saved id type: {typename}")
        if not isinstance(storage_type, StorageType):
            if callable(storage_type):
                storage_type()
            raise pickle.UnpicklingError(f"not a storage type: {storage_type!r}")
        if not isinstance(numel, int) or numel < 0:
            raise pickle.UnpicklingError(f"malformed storage persistent id {saved_id!r}")
        root_key = _decode_ascii(root_key)
        location = _decode_ascii(location)
        es = _element_size(storage_type.dtype)
        if root_key not in storages:
            # The bytes follow the pickle, so the storage is allocated now and filled in
            # place later; a size beyond the file's length cannot be honest.
            if numel * es > budget:
                raise RuntimeError(
                    f"storage {root_key} claims {numel * es} bytes, more than the whole file holds; "
                    "the checkpoint is corrupted"
                )
            buf = np.zeros(numel * es, dtype=np.uint8)
            storages[root_key] = restore(_LoadedStorage(buf, storage_type.dtype, location), location)
        root = storages[root_key]
        if view_metadata is None:
            return root
        view_key, offset, size = view_metadata
        if view_key not in views:
            if not (isinstance(offset, int) and isinstance(size, int)) or offset < 0 or size < 0 \
                    or (offset + size) * es > root.nbytes():
                raise RuntimeError(f"storage view {view_key} lies outside its storage; the checkpoint is corrupted")
            views[view_key] = _LoadedStorage(root._bytes[offset * es:(offset + size) * es], root.dtype, root.location)
        return views[view_key]

    result = next_pickle(persistent_load, restricted)
    keys = next_pickle(restricted=True)
    if not isinstance(keys, list):
        raise pickle.UnpicklingError("corrupted legacy checkpoint: storage key list missing")
    off = pos[0]
    for key in keys:
        key = _decode_ascii(key)
        if key not in storages:
            raise RuntimeError(f"storage key {key!r} not found in the checkpoint's pickle")
        st = storages[key]
        if off + 8 > len(rest):
            raise RuntimeError("legacy checkpoint is truncated")
        (numel,) = struct.unpack("<q", rest[off:off + 8])
        off += 8
        nbytes = numel * _element_size(st.dtype)
        if nbytes != st.nbytes() or off + nbytes > len(rest):
            raise RuntimeError(
                f"storage {key} holds {max(nbytes, 0)} bytes where the tensor needs {st.nbytes()}, "
                "or the file is truncated"
            )
        st._bytes[:] = np.frombuffer(rest, dtype=np.uint8, count=nbytes, offset=off)
        off += nbytes
    return result


# ----------------------------------------------------------------------------------------------
# save
# ----------------------------------------------------------------------------------------------


class _Global:
    """A PyTorch global written by name into the pickle (``torch._utils._rebuild_tensor_v2`` ...)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        # Callable only so that ``pickle`` accepts it as a reduce function; it is never called.
        raise RuntimeError(f"{self.module}.{self.name} is a name written into a checkpoint")


_G_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_G_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_G_REBUILD_PARAM_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_G_SIZE = _Global("torch", "Size")
_G_DEVICE = _Global("torch", "device")
_G_LAYOUT = _Global("torch.serialization", "_get_layout")
_G_STORAGE = {dt: _Global("torch", name) for dt, name in _STORAGE_NAME_BY_DTYPE.items()}
_G_DTYPE = {dt: _Global("torch", name) for name, dt in _DTYPE_BY_NAME.items()}


class _StorageRef:
    __slots__ = ("key", "dtype", "numel")

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel


class _Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes tensors the way ``torch.save`` does.

    The pure-Python pickler is used because PyTorch's globals must be written by
    name without importing ``torch``; ``data.pkl`` holds no tensor data, so its speed
    does not matter.
    """

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, storages, legacy=False):
        super().__init__(file, protocol)
        self._legacy = legacy
        self._storages = storages  # key -> flat tensor
        self._keys = {}  # storage identity -> _StorageRef
        self._dtypes = {}

    def _save_named_global(self, obj):
        g = obj if isinstance(obj, _Global) else _G_DTYPE[obj]
        self.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_named_global
    dispatch[type(_C.float32)] = _save_named_global

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            if self._legacy:  # the pre-1.6 stream adds view metadata (never a view here)
                return ("storage", _G_STORAGE[obj.dtype], obj.key, "cpu", obj.numel, None)
            return ("storage", _G_STORAGE[obj.dtype], obj.key, "cpu", obj.numel)
        return None

    def _storage_ref(self, t):
        st = t.untyped_storage()
        nbytes = st.nbytes()
        ident = st.data_ptr() if nbytes > 0 and st.data_ptr() != 0 else ("empty", id(t))
        if ident in self._dtypes and self._dtypes[ident] != t.dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same data as different types"
            )
        ref = self._keys.get(ident)
        if ref is None:
            es = t.element_size()
            stored = t.detach()
            if stored.is_conj():  # the storage's own values, not the conjugated view's
                stored = stored.conj()
            flat = stored.as_strided((nbytes // es,), (1,), 0)
            ref = _StorageRef(str(len(self._keys)), t.dtype, nbytes // es)
            self._keys[ident] = ref
            self._dtypes[ident] = t.dtype
            self._storages[ref.key] = flat
        return ref

    def reducer_override(self, obj):
        if isinstance(obj, _C.TensorBase):
            from .nn.parameter import Parameter
            if isinstance(obj, Parameter):
                state = {k: v for k, v in getattr(obj, "__dict__", {}).items()}
                data = obj.detach()
                if state:
                    return (_G_REBUILD_PARAM_STATE, (data, obj.requires_grad, collections.OrderedDict(), state))
                return (_G_REBUILD_PARAM, (data, obj.requires_grad, collections.OrderedDict()))
            if obj.dtype not in _G_STORAGE:
                raise RuntimeError(f"ferrotorch.save cannot write tensors of dtype {obj.dtype}")
            if obj.device.type != "cpu":
                obj = obj.cpu()
            ref = self._storage_ref(obj)
            args = (ref, obj.storage_offset(), tuple(obj.shape), tuple(obj.stride()),
                    obj.requires_grad, collections.OrderedDict())
            if obj.is_conj():  # PyTorch's tensor metadata: the conjugate bit
                args += ({"conj": True},)
            return (_G_REBUILD_V2, args)
        from ._size import Size
        if isinstance(obj, Size):
            return (_G_SIZE, (tuple(obj),))
        if isinstance(obj, _C.device):
            return (_G_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        from ._dtypes import layout
        if isinstance(obj, layout):
            return (_G_LAYOUT, (repr(obj),))
        return NotImplemented


def _storage_bytes(flat):
    if flat.dtype == _C.bfloat16:
        flat = flat.view(_C.int16)
    return flat.contiguous().numpy().tobytes()


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        base = os.path.basename(os.fspath(f))
        stem = os.path.splitext(base)[0]
        return stem or "archive"
    return "archive"


def _write_record(zf, name, data):
    # Records start on a 64-byte boundary, as PyTorch's writer places them, padded with
    # an extra field; ``mmap`` loading relies on it.
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_STORED
    zi.create_system = 0
    pos = zf.fp.tell()
    zip64 = len(data) * 1.05 > zipfile.ZIP64_LIMIT
    base = pos + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = (-base) % _STORAGE_ALIGNMENT
    zi.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(zi, data)


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves an object to a disk file in PyTorch's checkpoint format, readable by
    ``torch.load`` and :func:`ferrotorch.load`.

    Tensors that share a storage are written once and share it again after
    loading.

    Args:
        obj: saved object
        f: a file-like object (has to implement write and flush) or a string or
           os.PathLike object containing a file name
        pickle_module: module used for pickling metadata and objects (ignored: the
           PyTorch-compatible pickler is always used)
        pickle_protocol: can be specified to override the default protocol

    Example:
        >>> x = ferrotorch.tensor([0, 1, 2, 3, 4])
        >>> ferrotorch.save(x, "tensor.pt")
    """
    if isinstance(f, (str, os.PathLike)):
        d = os.path.dirname(os.fspath(f))
        if d and not os.path.isdir(d):
            raise RuntimeError(f"Parent directory {d} does not exist.")
    elif not hasattr(f, "write"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    storages = {}
    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, storages, legacy=not _use_new_zipfile_serialization).dump(obj)
    data_pkl = buf.getvalue()
    if not _use_new_zipfile_serialization:
        return _legacy_save(f, data_pkl, storages, pickle_protocol)
    name = _archive_name(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_zip(fh, name, data_pkl, storages, _disable_byteorder_record)
    else:
        _write_zip(f, name, data_pkl, storages, _disable_byteorder_record)


def _write_zip(fh, name, data_pkl, storages, disable_byteorder):
    # The zip is assembled in memory when the target cannot seek, as ``zipfile`` needs to.
    seekable = getattr(fh, "seekable", lambda: False)()
    target = fh if seekable else io.BytesIO()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, f"{name}/data.pkl", data_pkl)
        _write_record(zf, f"{name}/.format_version", b"1")
        _write_record(zf, f"{name}/.storage_alignment", str(_STORAGE_ALIGNMENT).encode())
        if not disable_byteorder:
            _write_record(zf, f"{name}/byteorder", sys.byteorder.encode())
        for key, flat in storages.items():
            _write_record(zf, f"{name}/data/{key}", _storage_bytes(flat))
        _write_record(zf, f"{name}/version", b"3\n")
        sid = "".join(str(b % 10) for b in os.urandom(40))
        _write_record(zf, f"{name}/.data/serialization_id", sid.encode())
    if target is not fh:
        fh.write(target.getvalue())
    if hasattr(fh, "flush"):
        fh.flush()


def _legacy_save(f, data_pkl, storages, protocol):
    # The pre-1.6 stream: magic number, protocol version, sys info, the object pickle,
    # the sorted storage keys, then each storage as an int64 element count and its bytes.
    out = io.BytesIO()
    pickle.dump(MAGIC_NUMBER, out, protocol=protocol)
    pickle.dump(PROTOCOL_VERSION, out, protocol=protocol)
    pickle.dump({"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                 "type_sizes": {"short": 2, "int": 4, "long": 4}}, out, protocol=protocol)
    out.write(data_pkl)
    keys = sorted(storages)
    pickle.dump(keys, out, protocol=protocol)
    for key in keys:
        flat = storages[key]
        out.write(struct.pack("<q", flat.numel()))
        out.write(_storage_bytes(flat))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(out.getvalue())
    else:
        f.write(out.getvalue())
        if hasattr(f, "flush"):
            f.flush()


def get_unsafe_globals_in_checkpoint(f):
    """The globals of a checkpoint's pickle that ``weights_only=True`` would reject.

    Nothing in the file is run to find them.
    """
    with _open_for_read(f) as fh:
        if not _is_zip(fh):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        zf, has, read, mapped, _ = _record_reader(fh, None)
        with zf:
            data = read("data.pkl")
    allowed = set(_get_allowed()) | set(_user_allowed())
    return sorted({g for g in _globals_in_pickle(data) if g not in allowed})
