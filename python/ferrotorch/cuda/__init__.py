"""``ferrotorch.cuda``: CUDA devices, streams, events and memory, as ``torch.cuda``.

The native CUDA backend (``crates/ferrotorch-cuda``) loads the NVIDIA driver
at run time, so the same build runs with and without a GPU. Without a
driver, :func:`is_available` is ``False`` and :func:`device_count` is 0 (they
never raise); everything that needs a device (``current_device``,
``synchronize``, ``torch.zeros(2, device='cuda')``, ...) raises the
``RuntimeError`` a CUDA build of PyTorch raises there: "Found no NVIDIA
driver on your system. ...". As in PyTorch, CUDA is initialised lazily: the
memory statistics read as empty/zero until then, and seeds set before are
applied at initialisation.

Kernels are compiled at run time by NVRTC, and matrix products run on cuBLAS;
both are found in NVIDIA's wheels (``nvidia-cuda-nvrtc``, ``nvidia-cublas``)
when they are installed, or through ``FERROTORCH_NVRTC_DIR`` /
``FERROTORCH_CUBLAS_DIR``.
"""

import collections
import importlib.util
import os
import threading
import time
import warnings

from .. import _C

__all__ = [
    "is_available", "device_count", "is_initialized", "init", "current_device", "set_device", "device",
    "device_of", "get_device_name", "get_device_capability", "get_device_properties", "synchronize",
    "mem_get_info", "Stream", "Event", "current_stream", "default_stream", "stream", "set_stream",
    "StreamContext", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "is_bf16_supported", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_stats", "memory_summary", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "reset_accumulated_memory_stats", "empty_cache", "OutOfMemoryError",
]

#: Raised when the caching allocator cannot serve a request (a ``RuntimeError``).
from .._C import OutOfMemoryError  # noqa: E402

# Where NVIDIA's PyPI wheels put the run-time libraries (CUDA 13 wheels share ``nvidia/cu13/lib``).
_RUNTIME_LIBS = (
    ("FERROTORCH_NVRTC_DIR", "libnvrtc.so.13", ("cu13", "cuda_nvrtc")),
    ("FERROTORCH_CUBLAS_DIR", "libcublas.so.13", ("cu13", "cublas")),
)


def _point_at_runtime_libs():
    """Tells the native side where the ``nvidia-*`` wheels' NVRTC and cuBLAS libraries are.

    Only paths are checked here; nothing is loaded until a kernel is compiled or a product runs.
    """
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or ()) if spec is not None else []
    for env, filename, subdirs in _RUNTIME_LIBS:
        if os.environ.get(env):
            continue
        for lib in (os.path.join(root, sub, "lib") for root in roots for sub in subdirs):
            if os.path.isfile(os.path.join(lib, filename)):
                os.environ[env] = lib
                break


_point_at_runtime_libs()

_init_lock = threading.Lock()
_queued_seed_calls = []


def _is_compiled():
    """Whether this build has the CUDA backend (always: it loads CUDA at run time)."""
    return True


def is_available():
    r"""Return a bool indicating if CUDA is currently available.

    Never raises: without an NVIDIA driver or GPU it returns ``False``.
    """
    return _C._cuda_is_available()


def device_count():
    r"""Return the number of GPUs available (0 without a driver)."""
    return _C._cuda_device_count()


def is_initialized():
    r"""Return whether ferrotorch's CUDA state has been initialized."""
    return _C._cuda_is_initialized()


def _lazy_init():
    if is_initialized():
        return
    with _init_lock:
        if is_initialized():
            return
        # Raises "Found no NVIDIA driver on your system..." without a driver.
        _C._cuda_init()
        calls, _queued_seed_calls[:] = list(_queued_seed_calls), []
        for call in calls:
            call()


def _lazy_call(fn):
    if is_initialized():
        fn()
    else:
        _queued_seed_calls.append(fn)


def init():
    r"""Initialize ferrotorch's CUDA state.

    Does nothing if the CUDA state is already initialized; raises
    ``RuntimeError`` when there is no usable device.
    """
    _lazy_init()


def _get_device_index(device, optional=False, allow_cpu=False):
    """The index named by ``device`` (an int, a ``'cuda:N'`` string or a device)."""
    from .. import device as _device

    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.type == "cpu":
            return -1
        idx = device.index
    elif isinstance(device, globals()["device"]):
        return device.idx
    elif device is None:
        idx = None
    else:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if idx is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return current_device() if is_available() else -1
    return idx


def current_device():
    r"""Return the index of a currently selected device."""
    _lazy_init()
    return _C._cuda_current_device()


def set_device(device):
    r"""Set the current device.

    Args:
        device (torch.device or int): selected device. This function is a no-op
            if this argument is negative.
    """
    idx = _get_device_index(device)
    if idx >= 0:
        _C._cuda_set_device(idx)


class device:
    r"""Context-manager that changes the selected device.

    Args:
        device (torch.device or int): device index to select. It's a no-op if
            this argument is a negative integer or ``None``.
    """

    def __init__(self, device):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _C._cuda_exchange_device(self.idx)

    def __exit__(self, type, value, traceback):
        if self.prev_idx >= 0:
            _C._cuda_exchange_device(self.prev_idx)
        return False


class device_of(device):
    r"""Context-manager that changes the current device to that of given object.

    You can use both tensors and storages as arguments. If a given object is
    not allocated on a GPU, this is a no-op.

    Args:
        obj (Tensor or Storage): object allocated on the selected device.
    """

    def __init__(self, obj):
        idx = obj.get_device() if obj.is_cuda else -1
        super().__init__(idx)


class _CudaDeviceProperties:
    """The properties of one CUDA device (``get_device_properties``)."""

    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name = name
        self.major = major
        self.minor = minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count

    def __repr__(self):
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device=None):
    r"""Get the properties of a device.

    Args:
        device (torch.device or int or str, optional): device for which to return the
            properties of the device. It uses the current device, given by
            :func:`~torch.cuda.current_device`, if :attr:`device` is ``None``
            (default).

    Returns:
        _CudaDeviceProperties: the properties of the device
    """
    _lazy_init()
    idx = _get_device_index(device, optional=True)
    if idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(*_C._cuda_device_properties(idx))


def get_device_name(device=None):
    r"""Get the name of a device.

    Args:
        device (torch.device or int or str, optional): device for which to return the
            name. It uses the current device if :attr:`device` is ``None`` (default).

    Returns:
        str: the name of the device
    """
    return get_device_properties(device).name


def get_device_capability(device=None):
    r"""Get the cuda capability of a device.

    Returns:
        tuple(int, int): the major and minor cuda capability of the device
    """
    prop = get_device_properties(device)
    return prop.major, prop.minor


def is_bf16_supported(including_emulation=True):
    r"""Return a bool indicating if the current CUDA device supports dtype bfloat16."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def synchronize(device=None):
    r"""Wait for all kernels in all streams on a CUDA device to complete.

    Args:
        device (torch.device or int, optional): device for which to synchronize.
            It uses the current device if :attr:`device` is ``None`` (default).
    """
    _lazy_init()
    _C._cuda_synchronize(_get_device_index(device, optional=True))


def mem_get_info(device=None):
    r"""Return the global free and total GPU memory for a given device.

    Returns:
        tuple(int, int): free and total bytes
    """
    _lazy_init()
    return _C._cuda_mem_get_info(_get_device_index(device, optional=True))


# ---- streams and events ---------------------------------------------------
#
# ferrotorch queues every kernel and copy of a device on one stream (the
# legacy default stream), so a Stream object names that stream: work on
# "different" streams is ordered as if on one, which is always correct, and
# waiting on a stream or event is the device synchronising.


class Stream:
    r"""Wrapper around a CUDA stream.

    Args:
        device (torch.device or int, optional): a device on which to allocate
            the stream. If :attr:`device` is ``None`` (default) or a negative
            integer, this will use the current device.
        priority (int, optional): priority of the stream (accepted; every
            stream of a device is its one queue).
    """

    def __init__(self, device=None, priority=0, **kwargs):
        _lazy_init()
        idx = _get_device_index(device, optional=True)
        self.device_index = idx if idx >= 0 else current_device()
        self.priority = priority
        self.cuda_stream = 0

    @property
    def device(self):
        from .. import device as _device

        return _device("cuda", self.device_index)

    def synchronize(self):
        r"""Wait for all the kernels in this stream to complete."""
        _C._cuda_synchronize(self.device_index)

    def query(self):
        r"""Check if all the work submitted has been completed (waits for it)."""
        self.synchronize()
        return True

    def wait_stream(self, stream):
        r"""Synchronize with another stream (work is already ordered on one queue)."""

    def wait_event(self, event):
        r"""Make all future work submitted to the stream wait for an event."""

    def record_event(self, event=None):
        r"""Record an event.

        Returns:
            Event: Recorded event.
        """
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self):
        return hash(("cuda", self.device_index))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream=0x0>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Event:
    r"""Wrapper around a CUDA event.

    Events are created lazily, as in PyTorch: constructing one needs no device,
    recording one does. Times are taken after the device finished the work
    queued before the event.

    Args:
        enable_timing (bool, optional): indicates if the event should measure time
            (default: ``False``)
        blocking (bool, optional): if ``True``, :meth:`wait` will be blocking (default: ``False``)
        interprocess (bool): if ``True``, the event can be shared between processes
            (default: ``False``)
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._device_index = None
        self._time = None

    def record(self, stream=None):
        r"""Record the event in a given stream (the current stream by default)."""
        _lazy_init()
        idx = stream.device_index if stream is not None else current_device()
        _C._cuda_synchronize(idx)
        self._device_index = idx
        self._time = time.perf_counter()

    def wait(self, stream=None):
        r"""Make all future work submitted to the given stream wait for this event."""

    def query(self):
        r"""Check if all work currently captured by event has completed."""
        return True

    def synchronize(self):
        r"""Wait for the event to complete."""
        if self._device_index is not None:
            _C._cuda_synchronize(self._device_index)

    def elapsed_time(self, end_event):
        r"""Return the time elapsed in milliseconds after the event was recorded and before the end_event was recorded."""
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return "<torch.cuda.Event uninitialized>" if self._time is None else "<torch.cuda.Event>"


_current_streams = {}


def current_stream(device=None):
    r"""Return the currently selected :class:`Stream` for a given device."""
    _lazy_init()
    idx = _get_device_index(device, optional=True)
    return _current_streams.get(idx) or default_stream(idx)


def default_stream(device=None):
    r"""Return the default :class:`Stream` for a given device."""
    _lazy_init()
    return Stream(_get_device_index(device, optional=True))


def set_stream(stream):
    r"""Set the current stream. A ``None`` stream is a no-op."""
    if stream is None:
        return
    _current_streams[stream.device_index] = stream


class StreamContext:
    r"""Context-manager that selects a given stream (a ``None`` stream is a no-op)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev = _current_streams.get(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            if self.prev is None:
                _current_streams.pop(self.stream.device_index, None)
            else:
                set_stream(self.prev)
        return False


def stream(stream):
    r"""Wrap around the Context-manager StreamContext that selects a given stream."""
    return StreamContext(stream)


# ---- random ---------------------------------------------------------------

_seed = [None]


def manual_seed(seed):
    r"""Set the seed for generating random numbers for the current GPU.

    It's safe to call this function if CUDA is not available; in that case,
    it is silently ignored.
    """
    seed = int(seed)
    _lazy_call(lambda: _seed.__setitem__(0, seed))


def manual_seed_all(seed):
    r"""Set the seed for generating random numbers on all GPUs (ignored without CUDA)."""
    manual_seed(seed)


def seed():
    r"""Set the seed for generating random numbers to a random number for the current GPU."""
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    _lazy_call(lambda: _seed.__setitem__(0, s))


def seed_all():
    r"""Set the seed for generating random numbers to a random number on all GPUs."""
    seed()


def initial_seed():
    r"""Return the current random seed of the current GPU."""
    _lazy_init()
    if _seed[0] is None:
        _seed[0] = 67280421310721
    return _seed[0]


# ---- memory ---------------------------------------------------------------


def memory_stats(device=None):
    r"""Return a dictionary of CUDA memory allocator statistics for a given device.

    Empty before CUDA is initialized, as in PyTorch. Keys follow
    ``torch.cuda.memory_stats`` (``"allocated_bytes.all.current"``, ...).
    """
    if not is_initialized():
        return collections.OrderedDict()
    idx = _get_device_index(device, optional=True)
    return collections.OrderedDict(sorted(_C._cuda_memory_stats(idx).items()))


def memory_allocated(device=None):
    r"""Return the current GPU memory occupied by tensors in bytes for a given device."""
    return memory_stats(device=device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    r"""Return the maximum GPU memory occupied by tensors in bytes for a given device."""
    return memory_stats(device=device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    r"""Return the current GPU memory managed by the caching allocator in bytes for a given device."""
    return memory_stats(device=device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    r"""Return the maximum GPU memory managed by the caching allocator in bytes for a given device."""
    return memory_stats(device=device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    r"""Reset the "peak" stats tracked by the CUDA memory allocator."""
    _lazy_init()
    _C._cuda_reset_peak_memory_stats(_get_device_index(device, optional=True))


def reset_max_memory_allocated(device=None):
    r"""Reset the starting point in tracking maximum GPU memory occupied by tensors for a given device."""
    warnings.warn(
        "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
    )
    return reset_peak_memory_stats(device=device)


def reset_accumulated_memory_stats(device=None):
    r"""Reset the "accumulated" (historical) stats tracked by the CUDA memory allocator."""
    _lazy_init()
    _C._cuda_reset_accumulated_memory_stats(_get_device_index(device, optional=True))


def empty_cache():
    r"""Release all unoccupied cached memory currently held by the caching allocator.

    Only segments with no live block are returned to the driver.
    """
    if is_initialized():
        _C._cuda_empty_cache()


def _format_size(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:7.2f} {unit}"
    return f"{n:7d} B  "


def memory_summary(device=None, abbreviated=False):
    r"""Return a human-readable printout of the current memory allocator statistics for a given device.

    Before CUDA is initialized the statistics are empty, and (as in PyTorch)
    this raises ``KeyError``.
    """
    stats = memory_stats(device=device)
    rows = [
        ("Allocated memory", "allocated_bytes"),
        ("Active memory", "active_bytes"),
        ("Requested memory", "requested_bytes"),
        ("GPU reserved memory", "reserved_bytes"),
    ]
    lines = [
        "|" + "=" * 75 + "|",
        "|" + " ferrotorch CUDA memory summary, device ID {:<31}".format(_get_device_index(device, optional=True)) + "|",
        "|" + "-" * 75 + "|",
        "|        Metric         | Cur Usage  | Peak Usage |" + " " * 25 + "|",
        "|" + "-" * 75 + "|",
    ]
    for label, key in rows:
        cur, peak = stats[f"{key}.all.current"], stats[f"{key}.all.peak"]
        lines.append(f"| {label:<21} | {_format_size(cur)} | {_format_size(peak)} |" + " " * 25 + "|")
    lines.append("|" + "-" * 75 + "|")
    lines.append(f"| Allocations: {stats['allocation.all.allocated']:<12} Frees: {stats['allocation.all.freed']:<12}"
                 f" Segments: {stats['segment.all.current']:<12} OOMs: {stats['num_ooms']:<5}|")
    lines.append("|" + "=" * 75 + "|")
    return "\n".join(lines) + "\n"
