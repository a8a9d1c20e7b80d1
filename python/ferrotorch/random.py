"""``ferrotorch.random``: the default CPU generator's seed and state, and ``fork_rng``."""

import contextlib

from . import _C

__all__ = [
    "set_rng_state",
    "get_rng_state",
    "manual_seed",
    "seed",
    "initial_seed",
    "fork_rng",
    "thread_safe_generator",
]

default_generator = _C._default_generator()


def set_rng_state(new_state):
    r"""Sets the random number generator state.

    .. note:: This function only works for CPU.

    Args:
        new_state (torch.ByteTensor): The desired state
    """
    default_generator.set_state(new_state)


def get_rng_state():
    r"""Returns the random number generator state as a `torch.ByteTensor`.

    .. note:: The returned state is for the default generator on CPU only.

    See also: :func:`torch.random.fork_rng`.
    """
    return default_generator.get_state()


def manual_seed(seed):
    r"""Sets the seed for generating random numbers on all devices. Returns a
    `torch.Generator` object.

    Args:
        seed (int): The desired seed. Value must be within the inclusive range
            `[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]`. Otherwise, a RuntimeError
            is raised. Negative inputs are remapped to positive values with the formula
            `0xffff_ffff_ffff_ffff + seed`.
    """
    seed = int(seed)
    # The generator takes a 64-bit seed; PyTorch rejects what fits neither int64 nor uint64.
    if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
        raise ValueError("Overflow when unpacking long long")
    return _C.manual_seed(seed)


def seed():
    r"""Sets the seed for generating random numbers to a non-deterministic
    random number on all devices. Returns a 64 bit number used to seed the RNG.
    """
    return default_generator.seed()


def initial_seed():
    r"""Returns the initial seed for generating random numbers as a
    Python `long`.

    .. note:: The returned seed is for the default generator on CPU only.
    """
    return default_generator.initial_seed()


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """
    Forks the RNG, so that when you return, the RNG is reset
    to the state that it was previously in.

    Args:
        devices (iterable of Device IDs): devices for which to fork
            the RNG. CPU RNG state is always forked. This build has no accelerator,
            so only the CPU state is saved and restored.
        enabled (bool): if ``False``, the RNG is not forked.  This is a convenience
            argument for easily disabling the context manager without having
            to delete it and unindent your Python code under it.
        device_type (str): device type str, default is ``None`` (``"cuda"``). Any
            accelerator type other than ``"meta"`` must have a module on ``torch``.
    """
    if device_type == "meta" or not enabled:
        yield
        return
    device_type = device_type or "cuda"
    import ferrotorch
    _C.device(device_type)  # an unknown device type raises PyTorch's device-string error
    if getattr(ferrotorch, device_type, None) is None:
        raise RuntimeError(
            f"torch has no module of `{device_type}`, you should register "
            "a module by `torch._register_device_module`."
        )
    # Consume ``devices`` once like PyTorch does (a generator must not be half-read later);
    # without an accelerator there are no device states to save beside the CPU one.
    if devices is not None:
        devices = list(devices)
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)


def thread_safe_generator():
    """Returns a thread-safe random number generator for use in DataLoader workers.

    When called in a DataLoader thread worker, returns the worker's thread-local
    :class:`torch.Generator`. When called in the main process or process workers,
    returns ``None`` (which causes PyTorch functions to use the default global RNG).

    Returns:
        Optional[torch.Generator]: Thread-local generator in thread workers, None otherwise.
    """
    # Imported here: the DataLoader machinery needs NumPy, which ``import ferrotorch`` avoids.
    from .utils.data import get_worker_info

    worker_info = get_worker_info()
    if worker_info is not None and worker_info.worker_method == "thread" and worker_info.rng is not None:
        return worker_info.rng.torch_generator
    return None
