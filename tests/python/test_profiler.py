"""ferrotorch.profiler: events, key_averages and the summary table, against PyTorch where installed."""

import json

import pytest

import ferrotorch as ft
import ferrotorch.nn as ftnn
import ferrotorch.nn.functional as ftF
from ferrotorch.profiler import ProfilerActivity, profile, record_function


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is optional: parity reference")


def _profile_model(lib, nn, iters=3, record_shapes=True):
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))
    x = lib.randn(4, 10)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], record_shapes=record_shapes) as prof:
        for _ in range(iters):
            with lib.profiler.record_function("step"):
                model(x)
    return prof


def _top_level_tree(prof, keep):
    """Event names as nested tuples, keeping only names in ``keep`` (PyTorch also
    records the kernels inside ops, e.g. aten::transpose inside aten::t)."""
    def node(e):
        return (e.name, tuple(node(c) for c in e.cpu_children if c.name in keep))
    return [node(e) for e in prof.events() if e.cpu_parent is None and e.name in keep]


def test_event_tree_matches_torch():
    torch = _torch()
    import torch.nn as tnn

    keep = {"step", "aten::linear", "aten::t", "aten::addmm", "aten::relu"}
    expected = _top_level_tree(_profile_model(torch, tnn), keep)
    got = _top_level_tree(_profile_model(ft, ftnn), keep)
    assert got == expected
    assert got[0] == ("step", (("aten::linear", (("aten::t", ()), ("aten::addmm", ()))), ("aten::relu", ()),
                               ("aten::linear", (("aten::t", ()), ("aten::addmm", ())))))


def test_counts_and_input_shapes_match_torch():
    torch = _torch()
    import torch.nn as tnn

    keys = ("step", "aten::linear", "aten::t", "aten::addmm", "aten::relu")
    results = []
    for lib, nn in ((torch, tnn), (ft, ftnn)):
        prof = _profile_model(lib, nn)
        counts = {e.key: e.count for e in prof.key_averages() if e.key in keys}
        shapes = sorted((e.key, str(e.input_shapes), e.count)
                        for e in prof.key_averages(group_by_input_shape=True) if e.key in ("aten::linear", "aten::relu"))
        results.append((counts, shapes))
    assert results[1] == results[0]
    assert results[1][0] == {"step": 3, "aten::linear": 6, "aten::t": 6, "aten::addmm": 6, "aten::relu": 3}


def test_times_are_consistent():
    prof = _profile_model(ft, ftnn)
    events = prof.events()
    for e in events:
        assert e.cpu_time_total >= 0
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children), abs=1e-6)
        assert e.self_cpu_time_total >= -1e-6
        assert e.device_time_total == 0
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
    averages = prof.key_averages()
    by_key = {e.key: e for e in averages}
    linear = by_key["aten::linear"]
    assert linear.cpu_time_total >= linear.self_cpu_time_total > 0
    assert linear.cpu_time == pytest.approx(linear.cpu_time_total / linear.count)
    # self times partition the profiled time: they sum to the top-level totals
    top = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert averages.self_cpu_time_total == pytest.approx(top, rel=1e-9)
    assert events.self_cpu_time_total == pytest.approx(top, rel=1e-9)


def test_table_sorting_and_row_limit():
    prof = _profile_model(ft, ftnn)
    averages = prof.key_averages()
    keys = {e.key for e in averages}
    for sort_by in ("cpu_time_total", "self_cpu_time_total", "count"):
        ranked = sorted(averages, key=lambda e: getattr(e, sort_by), reverse=True)
        table = averages.table(sort_by=sort_by, row_limit=3)
        rows = [line.split()[0] for line in table.splitlines() if line.split() and line.split()[0] in keys]
        assert rows == [e.key for e in ranked[:3]]
    table = averages.table(sort_by="cpu_time_total", row_limit=100)
    lines = table.splitlines()
    assert lines[1].split()[:4] == ["Name", "Self", "CPU", "%"]
    assert lines[-1].startswith("Self CPU time total: ")
    assert len([line for line in lines if line.split() and line.split()[0] in keys]) == len(keys)
    assert "Input Shapes" not in table
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()


def test_table_layout_matches_torch():
    torch = _torch()
    import torch.nn as tnn

    headers = []
    for lib, nn in ((torch, tnn), (ft, ftnn)):
        prof = _profile_model(lib, nn)
        for grouped in (False, True):
            table = prof.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=5)
            lines = table.splitlines()
            headers.append((lines[1].split("  "), len(lines), lines[-1].split(":")[0]))
    # same columns, same number of lines, same footer; column widths follow the names
    strip = [([h.strip() for h in cols if h.strip()], n, footer) for cols, n, footer in headers]
    assert strip[2:] == strip[:2]


def test_group_by_input_shape():
    prof = _profile_model(ft, ftnn)
    linear = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::linear"]
    assert sorted(e.input_shapes for e in linear) == [[[4, 10], [20, 10], [20]], [[4, 20], [5, 20], [5]]]
    assert [e.count for e in linear] == [3, 3]
    assert all(e.input_shapes == "" for e in prof.key_averages())


def test_without_record_shapes_no_shapes():
    prof = _profile_model(ft, ftnn, record_shapes=False)
    assert all(e.input_shapes == [] for e in prof.events())
    assert len([e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::linear"]) == 1


def test_ops_recorded_once_and_leaves_hide_their_internals():
    a = ft.tensor([-1.0, 0.5, 2.0])
    with profile() as prof:
        a.clamp(0.0, 1.0)
        ftF.softmax(a, dim=0)
        ft.mul(a, a)
    assert [e.name for e in prof.events()] == ["aten::clamp", "aten::softmax", "aten::mul"]


def test_record_function_outside_profiler_and_as_decorator():
    with record_function("idle"):
        ft.ones(2) + 1

    @record_function("decorated")
    def f(x):
        return x * 2

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        f(ft.ones(2))
    names = [e.name for e in prof.events()]
    assert names == ["decorated", "aten::mul"]
    assert prof.events()[1].cpu_parent is prof.events()[0]


def test_profiler_restores_originals_and_stops_recording():
    add, linear = ft.Tensor.__add__, ftF.linear
    with profile() as prof:
        assert ftF.linear is not linear
        ft.ones(2) + 1
    ft.ones(2) + 1
    assert [e.name for e in prof.events()] == ["aten::add"]
    assert ft.Tensor.__add__ is add and ftF.linear is linear


def test_profiler_and_mode_together():
    from ferrotorch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    add = ft.Tensor.__add__
    with profile() as prof:
        with Log() as log:
            ftF.linear(ft.ones(2, 3), ft.ones(4, 3), ft.ones(4))
        ft.ones(2) + 1
    assert log.names == ["aten.t.default", "aten.addmm.default"]
    assert [e.name for e in prof.events()] == ["aten::linear", "aten::t", "aten::addmm", "aten::add"]
    assert ft.Tensor.__add__ is add


def test_export_chrome_trace(tmp_path):
    prof = _profile_model(ft, ftnn, iters=1)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = [e["name"] for e in trace["traceEvents"]]
    assert names.count("aten::linear") == 2 and "step" in names
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace["traceEvents"])


def test_profiler_api_names():
    torch = _torch()
    assert {a.name for a in ProfilerActivity} == set(torch.profiler.ProfilerActivity.__members__)
    for name in ("profile", "record_function", "ProfilerActivity", "schedule", "supported_activities"):
        assert hasattr(ft.profiler, name) and hasattr(torch.profiler, name)
    prof = _profile_model(ft, ftnn, iters=1)
    avg = prof.key_averages()[0]
    for attr in ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_time", "input_shapes",
                 "device_time_total", "self_device_time_total", "cpu_time_total_str", "node_id"):
        assert hasattr(avg, attr), attr
    evt = prof.events()[0]
    for attr in ("name", "id", "cpu_parent", "cpu_children", "time_range", "input_shapes", "thread"):
        assert hasattr(evt, attr), attr
