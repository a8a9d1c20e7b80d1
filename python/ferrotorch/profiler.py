"""``ferrotorch.profiler``: operator-level CPU profiling with PyTorch's API.

``profile`` records one event per operator call (``aten::linear``,
``aten::addmm``...), nested as the calls nest, plus user ranges from
:class:`record_function`; ``key_averages()`` aggregates them and
``.table()`` prints PyTorch's summary table.  Times are wall-clock
microseconds from :func:`time.perf_counter_ns`.
"""

import enum
import json
import os
import threading
import time
from collections import OrderedDict
from contextlib import ContextDecorator

from . import _dispatch

__all__ = [
    "profile", "record_function", "ProfilerActivity", "ProfilerAction", "DeviceType",
    "supported_activities", "schedule", "EventList", "FunctionEvent", "FunctionEventAvg",
]


class ProfilerActivity(enum.Enum):
    """Activities a profiler can record.  ferrotorch records CPU operator
    events; device (CUDA) kernels are not traced, so device times stay 0."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"ProfilerActivity.{self.name}"

    __str__ = __repr__


class DeviceType(enum.Enum):
    """Device an event ran on."""

    CPU = 0
    CUDA = 1

    def __repr__(self):
        return f"DeviceType.{self.name}"

    __str__ = __repr__


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` asks the profiler to do at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities :class:`profile` accepts."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Returns PyTorch's step -> :class:`ProfilerAction` schedule function.

    .. note:: ferrotorch's :class:`profile` accepts a schedule but records every
       step; the function is provided for code that builds one.
    """
    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


class Interval:
    """Start and end of an event, in microseconds since the profiler started."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """Length of the interval in microseconds."""
        return self.end - self.start


def _time_str(attr):
    """A ``<attr>_str`` property: the time in ``attr`` as the tables print it."""
    return property(lambda self: _format_time(getattr(self, attr)))


class _FormattedTimes:
    cpu_time_str = _time_str("cpu_time")
    cpu_time_total_str = _time_str("cpu_time_total")
    self_cpu_time_total_str = _time_str("self_cpu_time_total")
    device_time_str = _time_str("device_time")
    device_time_total_str = _time_str("device_time_total")
    self_device_time_total_str = _time_str("self_device_time_total")

    @property
    def cpu_time(self):
        """Average CPU time per call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        """Average device time per call (always 0: device kernels are not traced)."""
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time


class FunctionEvent(_FormattedTimes):
    """One recorded call: an operator (``aten::addmm``) or a :class:`record_function` range.

    Times are in microseconds; ``self_cpu_time_total`` excludes the time of
    the events nested in this one (``cpu_children``).
    """

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, is_user_annotation=False,
                 use_device=None):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.fwd_thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.use_device = use_device
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.device_type = DeviceType.CPU
        self.device_index = 0
        self.overload_name = ""
        self.stack = []
        self.scope = 0
        self.sequence_nr = -1
        self.flops = 0
        self.kernels = []
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.device_time_total = 0
        self.self_device_time_total = 0

    @property
    def cpu_time_total(self):
        """Wall time of the call, children included, in microseconds."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        """:attr:`cpu_time_total` minus the time of the nested events."""
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
            f"cpu_children={[child.id for child in self.cpu_children]} input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg(_FormattedTimes):
    """Events with the same key (and input shapes, when grouped by them), summed.

    ``count`` is the number of calls; ``cpu_time`` the average per call.
    """

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.is_user_annotation = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.flops = 0

    def add(self, other):
        """Accumulates another event (or average) with the same key."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        self.flops += other.flops or 0
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        device = self.use_device or "cuda"
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{device}_time={self.self_device_time_total_str} "
            f"{device}_time={self.device_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} {device}_memory_usage={self.device_memory_usage}>"
        )


class EventList(list):
    """A list of :class:`FunctionEvent` or :class:`FunctionEventAvg` with summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        """Sum of the events' self CPU times, in microseconds."""
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """Averages the events over their keys.

        Args:
            group_by_input_shapes (bool): group by (key, input shapes) instead of
                by key alone (shapes are recorded with ``record_shapes=True``).
            group_by_stack_n (int): also group by the first n stack entries
                (ferrotorch records no stacks, so this changes nothing).
            group_by_overload_name (bool): also group by overload name.

        Returns:
            An :class:`EventList` of :class:`FunctionEventAvg`, in order of
            first occurrence.
        """
        stats = OrderedDict()
        for event in self:
            key = [event.key, str(event.node_id), str(event.device_type), str(event.is_legacy),
                   str(event.is_user_annotation)]
            if group_by_overload_name:
                key.append(event.overload_name)
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            key = tuple(key)
            if key not in stats:
                stats[key] = FunctionEventAvg()
            stats[key].add(event)
        averages = EventList(stats.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self):
        """All events summed into one :class:`FunctionEventAvg` keyed ``'Total'``."""
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
            total.key = None
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """PyTorch's summary table, one row per event.

        Args:
            sort_by (str, optional): attribute to sort rows by, descending
                (``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"count"``...;
                ``cuda`` reads as ``device``).
            row_limit (int): at most this many rows.
            header (str, optional): a line printed above the table.
            top_level_events_only (bool): only rows for events without a parent.
            time_unit (str, optional): ``"s"``, ``"ms"`` or ``"us"`` for every time.

        Returns:
            The table as a string.
        """
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace (``chrome://tracing``, Perfetto) JSON file."""
        pid = os.getpid()
        trace = []
        for event in self:
            if not isinstance(event, FunctionEvent):
                continue
            trace.append({
                "ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
                "name": event.name, "pid": pid, "tid": event.thread,
                "ts": event.time_range.start, "dur": event.time_range.elapsed_us(),
                "args": {"Input Dims": event.input_shapes} if event.input_shapes else {},
            })
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def __str__(self):
        return self.table()


def _build_table(events, sort_by=None, header=None, row_limit=100, max_name_column_width=55,
                 max_shapes_column_width=80, top_level_events_only=False, time_unit=None):
    if len(events) == 0:
        return ""
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt(time_us):
        if time_unit == "s":
            return f"{time_us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{time_us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{time_us:.3f}us"
        return _format_time(time_us)

    total_self = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [
            name,
            _format_time_share(e.self_cpu_time_total, total_self),
            fmt(e.self_cpu_time_total),
            _format_time_share(e.cpu_time_total, total_self),
            fmt(e.cpu_time_total),
            fmt(e.cpu_time),
            e.count,
        ]
        if has_input_shapes:
            shapes = str(e.input_shapes)
            if len(shapes) > shapes_width:
                shapes = shapes[: shapes_width - 3] + "..."
            row.append(shapes)
        lines.append(row_format.format(*row))
    lines.append(header_sep)
    lines.append(f"Self CPU time total: {fmt(total_self)}")
    return "\n".join(lines) + "\n"


class profile:
    r"""Profiles the operators run inside the context.

    Args:
        activities (iterable of ProfilerActivity, optional): what to record;
            default CPU (and CUDA when available).  Operators are recorded as
            CPU events either way; CUDA kernels are not traced.
        record_shapes (bool): remember each event's input shapes (a list per
            argument, ``[]`` for non-tensors), for
            ``key_averages(group_by_input_shape=True)``.
        on_trace_ready (callable, optional): called with the profiler when it stops.
        schedule, profile_memory, with_stack, with_flops, with_modules,
            experimental_config, execution_trace_observer, acc_events:
            accepted for compatibility; they do not change what is recorded.

    Example::

        with ferrotorch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
            model(x)
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

    .. note:: Backward passes run in ferrotorch's Rust autograd engine and are
       not recorded.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, custom_trace_id_callback=None):
        if activities is None:
            activities = supported_activities()
        self.activities = set(activities)
        if use_cuda:
            self.activities.add(ProfilerActivity.CUDA)
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self.use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self._recorder = None
        self._start_ns = None
        self._stop_ns = None
        self._events = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        """Starts recording."""
        self._events = None
        self._start_ns = time.perf_counter_ns()
        self._recorder = _dispatch.start_recording(self.record_shapes)

    def stop(self):
        """Stops recording (and calls ``on_trace_ready``)."""
        if self._recorder is None:
            return
        _dispatch.stop_recording(self._recorder)
        self._stop_ns = time.perf_counter_ns()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Marks the end of a training step (only counted: every step is recorded)."""
        self.step_num += 1

    def events(self):
        """All recorded events, in start order, as an :class:`EventList` of :class:`FunctionEvent`."""
        if self._recorder is None:
            raise AssertionError("Profiler must be started before calling events()")
        if self._recorder is _dispatch.active_recorder():
            return self._build_events()  # still recording: a snapshot
        if self._events is None:
            self._events = self._build_events()
        return self._events

    def _build_events(self):
        raw = self._recorder.events
        origin = self._start_ns
        stop = self._stop_ns if self._recorder is not _dispatch.active_recorder() else time.perf_counter_ns()
        made = {}
        out = EventList(use_device=self.use_device, profile_memory=self.profile_memory, with_flops=self.with_flops)
        for i, ev in enumerate(sorted(raw, key=lambda r: r.start)):
            end = ev.end if ev.end is not None else stop
            fe = FunctionEvent(i + 1, ev.name, ev.thread, (ev.start - origin) / 1000.0, (end - origin) / 1000.0,
                               input_shapes=ev.shapes, is_user_annotation=ev.user, use_device=self.use_device)
            made[id(ev)] = fe
            out.append(fe)
        for ev in raw:
            if ev.parent is not None and id(ev.parent) in made:
                child = made[id(ev)]
                child.cpu_parent = made[id(ev.parent)]
                child.cpu_parent.cpu_children.append(child)
        return out

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """Events averaged over their keys (see :meth:`EventList.key_averages`).

        Args:
            group_by_input_shape (bool): group by (key, input shapes).
        """
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace JSON file."""
        return self.events().export_chrome_trace(path)

    def add_metadata(self, key, value):
        """Accepted for compatibility (metadata is not exported)."""

    def add_metadata_json(self, key, value):
        """Accepted for compatibility (metadata is not exported)."""


class record_function(ContextDecorator):
    """Labels a block of code (or a function, as a decorator) with a name; under
    a :class:`profile` it shows up as an event enclosing the ops run inside::

        with record_function("attention"):
            ...

    Outside a profiler it does nothing.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._events = []

    def __enter__(self):
        rec = _dispatch.active_recorder()
        self._events.append((rec, rec.open(self.name, (), user=True) if rec is not None else None))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        rec, ev = self._events.pop()
        if ev is not None:
            rec.close(ev)
        return False
