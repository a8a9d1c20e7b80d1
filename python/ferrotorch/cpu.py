"""``torch.cpu``: the CPU's device module, mirroring ``torch.cuda``'s functions
so device-generic code (``torch.get_device_module(x.device)``) runs on the CPU.
There is one CPU device and its work is synchronous, so streams and events are
trivially complete.
"""

__all__ = ["current_device", "current_stream", "device_count", "is_available", "is_initialized", "set_device",
           "stream", "synchronize", "Stream", "StreamContext", "Event"]


class Stream:
    """The CPU's stream (there is only one, always idle).

    N.B. This class only exists to facilitate device-agnostic code
    """

    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        """Nothing to wait for: CPU work is complete when it returns."""

    def wait_event(self, event):
        """Nothing to wait for: CPU work is complete when it returns."""

    def record_event(self):
        """Nothing to record on the synchronous CPU stream."""


class Event:
    """A CPU event: always complete.

    N.B. This class only exists to facilitate device-agnostic code
    """

    def query(self):
        """Always True: CPU work is complete when it returns."""
        return True

    def record(self, stream=None):
        """Nothing to record on the synchronous CPU stream."""

    def synchronize(self):
        """Returns at once: CPU work is complete."""

    def wait(self, stream=None):
        """Returns at once: CPU work is complete."""


_default_stream = Stream()
_current = [_default_stream]


def is_available():
    """Returns a bool indicating if CPU is currently available: always True."""
    return True


def is_initialized():
    """Returns True if the CPU is initialized. Always True."""
    return True


def synchronize(device=None):
    """Waits for all kernels in all streams on the CPU device to complete (they have:
    CPU ops finish before returning)."""


def current_device():
    """Returns current device for cpu. Always 'cpu'."""
    return "cpu"


def device_count():
    """Returns number of CPU devices (not cores). Always 1."""
    return 1


def set_device(device):
    """Sets the current device; there is one CPU, so nothing changes."""


def current_stream(device=None):
    """Returns the currently selected :class:`Stream` (``device`` is ignored)."""
    return _current[-1]


class StreamContext:
    """Context-manager that selects a given stream."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _current.append(self.stream)
        return self

    def __exit__(self, *exc):
        if self.stream is not None:
            _current.pop()
        return False


def stream(stream):
    """Wrapper around the Context-manager StreamContext that selects a given stream."""
    return StreamContext(stream)
