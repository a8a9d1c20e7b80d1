"""``torch.Stream`` and ``torch.Event``: PyTorch's device-generic stream and
event handles.

ferrotorch's devices are the CPU and ``meta``, whose work is synchronous: a
stream is always idle (``query()`` is True, ``synchronize()`` returns at once)
and, as in PyTorch, the CPU backend has no events (recording one raises
``RuntimeError("cpu backend doesn't support events.")``). An accelerator
device type raises as PyTorch's CPU-only build does.
"""

from ._C import device as _device

__all__ = ["Stream", "Event"]

_HOST_TYPES = ("cpu", "meta")


def _resolve(device, what):
    if device is None:
        return _device("cpu")
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    d = device if isinstance(device, _device) else _device(device)
    if d.type not in _HOST_TYPES:
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


def _no_events(device_type):
    raise RuntimeError(f"{device_type} backend doesn't support events.")


class Stream:
    r"""Stream(device, *, priority) -> Stream

    An in-order queue of executing the respective tasks asynchronously in first
    in first out (FIFO) order. On the CPU (and ``meta``) every operation has
    finished when it returns, so the stream is always complete.

    Arguments:
        device (:class:`torch.device`, optional): the desired device for the Stream
            (default: the CPU, as there is no accelerator).
        priority (int, optional): priority of the stream, should be 0 or negative. Default: 0.
    """

    def __init__(self, device=None, *, priority=0):
        d = _resolve(device, "Stream")
        self.device_type = d.type
        self.device_index = -1 if d.index is None else d.index
        self.stream_id = 0
        self.priority = priority

    @property
    def device(self):
        """The stream's device."""
        return _device(self.device_type)

    def __repr__(self):
        return f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, stream_id={self.stream_id}"

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_type, self.device_index, self.stream_id) == (
            other.device_type, other.device_index, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def query(self):
        """Whether all work submitted to the stream has completed: always True here."""
        return True

    def synchronize(self):
        """Waits for all work on the stream to complete (it has)."""

    def wait_stream(self, stream):
        """Makes future work on this stream wait for ``stream``'s current work; the CPU
        backend does this through events, which it does not have."""
        _no_events(self.device_type)

    def wait_event(self, event):
        """Makes future work on this stream wait for ``event`` (a no-op: host work is complete)."""

    def record_event(self, event=None):
        """Records an event on the stream; the CPU backend has no events."""
        _no_events(self.device_type)

    def is_capturing(self):
        """Whether the stream is capturing a graph: never, on the CPU."""
        return False

    @property
    def native_handle(self):
        """The backend's stream handle; the CPU backend has none."""
        raise RuntimeError("Backend doesn't support getting stream native handle.")


class Event:
    r"""Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)

    Query and record Stream status to identify or control dependencies across
    Stream and measure timing. The CPU backend has no events: ``record`` raises,
    while ``query``/``wait``/``synchronize`` report the (always complete) host work.

    Arguments:
        device (:class:`torch.device`, optional): the desired device for the Event.
        enable_timing (bool, optional): indicates if the event should measure time (default: ``False``)
        blocking (bool, optional): if ``True``, :meth:`wait` will be blocking (default: ``False``)
        interprocess (bool): if ``True``, the event can be shared between processes (default: ``False``)
    """

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        d = _resolve(device, "Event")
        self.device_type = d.type
        self.device_index = -1 if d.index is None else d.index
        self.enable_timing = bool(enable_timing)
        self.event_flag = int(self.enable_timing)
        self.event_id = 0

    @property
    def device(self):
        """The event's device."""
        return _device(self.device_type)

    def __repr__(self):
        return (f"torch.Event device_type={self.device_type}, device_index={self.device_index}, "
                f"event_flag={self.event_flag}, event_id={self.event_id}")

    def record(self, stream=None):
        """Records the event on ``stream``; the CPU backend has no events."""
        _no_events(self.device_type)

    def query(self):
        """Whether the work the event captured has completed: always True here."""
        return True

    def wait(self, stream=None):
        """Makes ``stream`` wait for the event (a no-op: host work is complete)."""

    def synchronize(self):
        """Waits for the event to complete (it has)."""

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event``; needs two recorded timing
        events, and no event can be recorded on the CPU."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        """A handle to share the event with another process (not supported, as in PyTorch)."""
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        """An event from another process's handle (not supported, as in PyTorch)."""
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")
