"""``ferrotorch.cuda``: device queries. This build reports no CUDA device."""


def is_available():
    """True when a CUDA device can be used (never raises)."""
    return False


def device_count():
    """Number of usable CUDA devices."""
    return 0


def _no_cuda(*args, **kwargs):
    raise RuntimeError("CUDA is not available: ferrotorch found no NVIDIA driver or device")


get_device_name = _no_cuda
current_device = _no_cuda
set_device = _no_cuda
synchronize = _no_cuda
memory_allocated = _no_cuda
memory_reserved = _no_cuda
max_memory_allocated = _no_cuda
reset_peak_memory_stats = _no_cuda


def empty_cache():
    """Releases cached CUDA memory (nothing to do without a device)."""


def manual_seed(seed):
    """Seeds CUDA generators (none without a device)."""


def manual_seed_all(seed):
    """Seeds all CUDA generators (none without a device)."""
