"""Process-wide switches and constants of the ``torch`` namespace: the
default device (also as ``with torch.device(...)``), deterministic-algorithm
flags, inter-op thread count, float32 matmul precision, ``compile``, warning
and denormal switches, build flags and the math constants.

ferrotorch's kernels are deterministic and have one float32 matmul precision,
so those switches are recorded and reported but change no result.
"""

import math
import os
import threading
import warnings

from . import _C, _args

__all__ = [
    "e", "pi", "inf", "nan", "newaxis", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
    "get_default_device", "set_default_device", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode", "get_num_interop_threads",
    "set_num_interop_threads", "init_num_threads", "AcceleratorError", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "compile", "set_flush_denormal", "set_warn_always",
    "is_warn_always_enabled", "set_anomaly_enabled", "get_device", "is_distributed",
    "FatalError", "get_device_module",
]

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

# build facts: no LAPACK/MKL/OpenMP/FFT library is linked (linear algebra runs on native Rust kernels)
has_lapack = False
has_mkl = False
has_openmp = False
has_spectral = False


class FatalError(Exception):
    """PyTorch's error for a failure it cannot recover from (raised by its C++ core
    on fatal conditions); it exists here for ``except`` clauses of portable code."""


class AcceleratorError(RuntimeError):
    """Raised by a failing accelerator runtime call; ferrotorch's CPU build has no
    accelerator, so it exists for ``except`` clauses of portable code."""


# ----- default device ---------------------------------------------------------------

def get_default_device():
    """The device factory functions use when no ``device=`` is given (CPU by default)."""
    return _C._get_default_device()


def set_default_device(device):
    """Sets the device factory functions (``zeros``, ``tensor``, ``randn``, ...) use
    when no ``device=`` is given; ``None`` restores the CPU. Like PyTorch, a
    ``ferrotorch.device`` is also a context manager doing this for a block.
    """
    _C._set_default_device(device)


_device_stack = threading.local()


def _device_enter(self):
    stack = _device_stack.__dict__.setdefault("stack", [])
    stack.append(get_default_device())
    set_default_device(self)
    return self


def _device_exit(self, *exc):
    set_default_device(_device_stack.stack.pop())
    return False


_C.device.__enter__ = _device_enter
_C.device.__exit__ = _device_exit


# ----- determinism ------------------------------------------------------------------

_deterministic = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks for deterministic algorithms (an error, or a warning with ``warn_only``,
    where only a nondeterministic one exists). Every ferrotorch kernel is
    deterministic, so this only records the setting."""
    if not isinstance(mode, bool):
        raise TypeError(
            f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not {type(mode).__name__}"
        )
    _deterministic["enabled"] = mode
    _deterministic["warn_only"] = bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    """True if :func:`use_deterministic_algorithms` turned deterministic mode on."""
    return _deterministic["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """True if deterministic mode is on in warn-only form."""
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """``"default"``/0 (off), ``"warn"``/1 (warn-only) or ``"error"``/2 (on)."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}"
            )
        debug_mode = names[debug_mode]
    elif isinstance(debug_mode, int):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2 as set by :func:`set_deterministic_debug_mode`."""
    if not _deterministic["enabled"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


# ----- threads ----------------------------------------------------------------------

_interop = {"threads": os.cpu_count() or 1, "set": False}


def get_num_interop_threads():
    """Number of threads used for inter-op parallelism."""
    return _interop["threads"]


def set_num_interop_threads(num):
    """Sets the number of inter-op threads; like PyTorch, only once per process."""
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _interop["set"]:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _interop.update(threads=int(num), set=True)


def init_num_threads():
    """Initialises the intra-op thread pool on this thread (ferrotorch's pool starts on first use)."""


# ----- precision, compile, warnings -------------------------------------------------

_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """Sets the internal precision of float32 matrix multiplications
    (``"highest"``, ``"high"`` or ``"medium"``). ferrotorch always computes in full
    float32, which every setting allows."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2,
        )
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    """The value last set by :func:`set_float32_matmul_precision` (``"highest"`` by default)."""
    return _matmul_precision[0]


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """Returns ``model`` (a function or module) unchanged: ferrotorch has no graph
    compiler, and eager execution gives the results a compiled model would.
    Without ``model`` it returns a decorator, as PyTorch does."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, name=name, disable=disable)
        return fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.".replace(
            "ferrotorch.", "torch."))
    return model


def set_flush_denormal(mode):
    """Asks the CPU to flush denormal floats to zero; returns whether that is supported.
    ferrotorch does not change the FPU mode, so it returns False."""
    return False


_warn_always = [False]


def set_warn_always(b):
    """When True, warnings PyTorch issues once per process are issued every time."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    """The flag set by :func:`set_warn_always`."""
    return _warn_always[0]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns autograd anomaly detection on or off (see ``autograd.set_detect_anomaly``)."""
    _C._set_anomaly_enabled(enabled, check_nan)


@_args.signature('Tensor input')
def get_device(input):
    """The device index of a CUDA tensor, -1 for a CPU tensor."""
    return input.get_device()


@_args.signature('Tensor input')
def is_distributed(input):
    """False: ferrotorch has no distributed tensors."""
    return False


# ----- device modules ---------------------------------------------------------------


def get_device_module(device=None):
    """
    Returns the module associated with a given device (e.g., torch.device('cuda'), "cpu", ...).
    If no device is given, return the module for the current accelerator or CPU if none is present.
    """
    import ferrotorch
    if isinstance(device, _C.device):
        name = device.type
    elif isinstance(device, str):
        name = _C.device(device).type
    elif device is None:
        # No accelerator is ever present: the CPU's module.
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(ferrotorch, name, None)
    if module is None or not hasattr(module, "is_available"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module
