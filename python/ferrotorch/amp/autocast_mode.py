"""Autocast: inside the region, matmul-class ops (linear, matmul, mm, bmm,
addmm, conv2d) run in a lower precision dtype; everything else keeps its dtype.

ferrotorch applies the policy in the Python wrappers of those ops
(``nn.functional.linear``/``conv2d`` and ``ferrotorch.matmul``-style functions);
the native ``@`` operator is not autocast yet.
"""

import functools
import threading
import warnings

from .. import _C

_state = threading.local()
# PyTorch's per-device defaults; ``ipu`` and ``xla`` have no ferrotorch device, but their
# switches exist (and are thread state) as in PyTorch, so portable code can set and read them.
_DEFAULTS = {"cpu": _C.bfloat16, "cuda": _C.float16, "ipu": _C.float16, "xla": _C.bfloat16}


def _stack():
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def _base():
    # the thread's settings outside any autocast region, changed by set_autocast_*
    if not hasattr(_state, "base"):
        _state.base = {dev: [False, dtype] for dev, dtype in _DEFAULTS.items()}
        _state.cache = True
    return _state.base


def is_autocast_enabled(device_type=None):
    """Is an autocast region active for ``device_type`` (CPU if not given... any if None)?"""
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    for dev, enabled, _ in reversed(_stack()):
        if device_type is None or dev == device_type:
            return enabled
    base = _base()
    if device_type is None:
        return any(on for on, _ in base.values())
    return base.get(device_type, [False])[0]


def get_autocast_dtype(device_type):
    """The dtype autocast uses for ``device_type``."""
    if not isinstance(device_type, str):
        raise TypeError(f"get_autocast_dtype(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    for dev, enabled, dtype in reversed(_stack()):
        if dev == device_type:
            return dtype
    return _base().get(device_type, [False, _C.bfloat16])[1]


def _check_device_type(device_type, fn):
    if device_type not in _DEFAULTS:
        raise RuntimeError(f"{fn}(): unsupported autocast device_type '{device_type}'")


def set_autocast_enabled(device_type, enabled=None):
    """Turns autocast on or off for ``device_type`` outside ``autocast`` regions.
    The deprecated one-argument form ``set_autocast_enabled(enabled)`` means CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _check_device_type(device_type, "set_autocast_enabled")
    _base()[device_type][0] = bool(enabled)


def set_autocast_dtype(device_type, dtype):
    """The dtype autocast uses for ``device_type`` outside ``autocast`` regions."""
    _check_device_type(device_type, "set_autocast_dtype")
    _base()[device_type][1] = dtype


def is_autocast_cpu_enabled():
    """Deprecated form of ``is_autocast_enabled('cpu')``."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated form of ``set_autocast_enabled('cpu', enabled)``."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated form of ``get_autocast_dtype('cpu')``."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated form of ``set_autocast_dtype('cpu', dtype)``."""
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated form of ``get_autocast_dtype('cuda')``."""
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Deprecated form of ``set_autocast_dtype('cuda', dtype)``."""
    set_autocast_dtype("cuda", dtype)


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _check_bool(v):
    if not isinstance(v, bool):
        raise TypeError(f"enabled must be a bool (got {type(v).__name__})")


def _check_dtype(v):
    if type(v).__name__ != "dtype":
        raise TypeError(f"dtype must be a torch.dtype (got {type(v).__name__})")


def is_autocast_ipu_enabled():
    """Deprecated form of ``is_autocast_enabled('ipu')``."""
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled):
    """Deprecated form of ``set_autocast_enabled('ipu', enabled)``."""
    _check_bool(enabled)
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    set_autocast_enabled("ipu", enabled)


def get_autocast_ipu_dtype():
    """Deprecated form of ``get_autocast_dtype('ipu')``."""
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype):
    """Deprecated form of ``set_autocast_dtype('ipu', dtype)``."""
    _check_dtype(dtype)
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)


def is_autocast_xla_enabled():
    """Deprecated form of ``is_autocast_enabled('xla')``."""
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled):
    """Deprecated form of ``set_autocast_enabled('xla', enabled)``."""
    _check_bool(enabled)
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    set_autocast_enabled("xla", enabled)


def get_autocast_xla_dtype():
    """Deprecated form of ``get_autocast_dtype('xla')``."""
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype):
    """Deprecated form of ``set_autocast_dtype('xla', dtype)``."""
    _check_dtype(dtype)
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)


def is_autocast_cache_enabled():
    """Whether autocast may cache casts of weights inside a region (on by default)."""
    _base()
    return _state.cache


def set_autocast_cache_enabled(enabled):
    """Allows or forbids caching casts inside autocast regions."""
    _base()
    _state.cache = bool(enabled)


def clear_autocast_cache():
    """Drops cached casts; ferrotorch casts per call and keeps none, so there is nothing to drop."""


def _cast_inputs(*tensors):
    """Casts floating tensors for a matmul-class op when autocast is on for their device."""
    if not _stack():
        return tensors
    out = []
    for t in tensors:
        if isinstance(t, _C.TensorBase) and t.is_floating_point():
            dev = t.device.type
            if is_autocast_enabled(dev):
                t = t.to(get_autocast_dtype(dev))
        out.append(t)
    return tuple(out)


class autocast:
    """Context manager / decorator enabling mixed precision for a region."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type not in _DEFAULTS:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type = device_type
        # As PyTorch: without ``dtype`` the region uses the device's current autocast dtype.
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(device_type)
        if device_type == "cpu" and self.fast_dtype not in (_C.bfloat16, _C.float16):
            raise RuntimeError("In CPU autocast, but the target dtype is not supported. Disabling autocast.")
        if device_type == "ipu" and self.fast_dtype not in (_C.bfloat16, _C.float16):
            warnings.warn("In IPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "IPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
            enabled = False
        self.enabled = enabled

    def __enter__(self):
        _stack().append((self.device_type, self.enabled, self.fast_dtype))
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)

        return wrapper
