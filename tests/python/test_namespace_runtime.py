"""Runtime names of the ``torch`` namespace against PyTorch's eager behaviour:
``cond``, ``fork``/``wait``/``Future``, ``Stream``/``Event`` and ``torch.cpu``,
``get_device_module``, the IPU/XLA autocast switches, ``slice_inverse``,
``thread_safe_generator``, ``FatalError`` and ``ThroughputBenchmark``."""

import threading
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e).split("\n")[0])
    return ("value", r.tolist() if hasattr(r, "tolist") else r)


# ----- cond --------------------------------------------------------------------------

COND = {
    "bool": lambda L, x: L.cond(True, lambda a: a + 1, lambda a: a - 1, (x,)),
    "tensor_false": lambda L, x: L.cond(L.tensor(False), lambda a: a + 1, lambda a: a - 1, [x]),
    "float_pred": lambda L, x: L.cond(0.5, lambda a: a + 1, lambda a: a - 1, (x,)),
    "int_tensor_pred": lambda L, x: L.cond(L.tensor(2), lambda a: a * 2, lambda a: a - 1, (x,)),
    "nested_pred": lambda L, x: L.cond(L.tensor([[True]]), lambda a: a + 1, lambda a: a - 1, (x,)),
    "no_operands": lambda L, x: L.cond(False, lambda: 3, lambda: 4),
    "two_operands": lambda L, x: L.cond(True, lambda a, b: a + b, lambda a, b: a - b, (x, 3)),
    "different_outputs": lambda L, x: L.cond(False, lambda a: a + 1, lambda a: a.sum(), (x,)),
    "multi_element_pred": lambda L, x: L.cond(L.tensor([True, False]), lambda a: a, lambda a: a, (x,)),
    "empty_pred": lambda L, x: L.cond(L.tensor([]), lambda a: a, lambda a: a, (x,)),
    "none_pred": lambda L, x: L.cond(None, lambda a: a, lambda a: a, (x,)),
    "str_pred": lambda L, x: L.cond("a", lambda a: a, lambda a: a, (x,)),
    "not_callable": lambda L, x: L.cond(True, 1, lambda a: a, (x,)),
}


@pytest.mark.parametrize("name", sorted(COND))
def test_cond(name):
    assert _outcome(lambda: COND[name](ft, ft.tensor([1., 2.]))) == \
        _outcome(lambda: COND[name](torch, torch.tensor([1., 2.])))


def test_cond_is_differentiable_through_the_taken_branch():
    x = ft.tensor([1., 2.], requires_grad=True)
    ft.cond(x.sum() > 0, lambda a: (a * a).sum(), lambda a: a.sum(), (x,)).backward()
    assert x.grad.tolist() == [2., 4.]


# ----- fork / wait / Future ----------------------------------------------------------


def test_fork_runs_now_and_wait_returns_the_value():
    for lib in (ft, torch):
        fut = lib.fork(lambda x, y=1: x * y, lib.tensor(3), y=2)
        assert isinstance(fut, lib.Future) and fut.done()
        assert int(fut.value()) == int(fut.wait()) == int(lib.wait(fut)) == 6


def test_fork_propagates_errors_and_wait_checks_its_argument():
    def boom():
        raise ValueError("bad")

    for lib in (ft, torch):
        with pytest.raises(ValueError, match="bad"):
            lib.fork(boom)
        with pytest.raises(TypeError, match="incompatible function arguments"):
            lib.wait(3)


def test_future_completion_callbacks_and_chaining():
    for lib, make in ((ft, lambda: ft.Future()), (torch, lambda: torch.Future([]))):
        f = make()
        seen = []
        f.add_done_callback(lambda fut: seen.append(fut.value()))
        child = f.then(lambda fut: fut.value() + 1)
        assert not f.done() and not child.done()
        f.set_result(5)
        assert f.done() and f.wait() == 5 and seen == [5] and child.wait() == 6
        with pytest.raises(RuntimeError, match="Attempting to mark a completed Future as complete again"):
            f.set_result(6)
        bad = f.then(lambda fut: 1 / 0)
        with pytest.raises(RuntimeError, match="Got the following error when running the callback: "
                                               "ZeroDivisionError: division by zero"):
            bad.wait()
    with pytest.raises(ValueError, match="Expected devices to have indices, got cpu"):
        ft.Future([ft.device("cpu")])


def test_future_wait_blocks_until_another_thread_completes_it():
    f = ft.Future()
    threading.Timer(0.05, lambda: f.set_result("late")).start()
    assert f.wait() == "late"
    g = ft.Future()
    g.set_exception(KeyError("k"))
    with pytest.raises(KeyError):
        g.wait()
    assert ft.futures.wait_all([f]) == ["late"]
    assert ft.futures.collect_all([f, ft.fork(lambda: 1)]).wait()[1].value() == 1


# ----- Stream / Event / torch.cpu / get_device_module -----------------------------------


def _surface(lib, make):
    try:
        obj = make(lib)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e))
    out = [repr(obj).replace("ferrotorch", "torch"), str(obj.device)]
    for call in ("query", "synchronize", "record", "wait", "record_event", "wait_stream", "is_capturing",
                 "native_handle", "elapsed_time", "ipc_handle"):
        if not hasattr(type(obj), call):
            continue
        try:
            attr = getattr(obj, call)
            r = attr(obj) if call in ("wait_stream", "elapsed_time") else attr() if callable(attr) else attr
            out.append((call, r))
        except Exception as e:  # noqa: BLE001
            out.append((call, type(e).__name__, str(e)))
    return out


STREAMS = {
    "stream": lambda L: L.Stream(),
    "stream_cpu_priority": lambda L: L.Stream("cpu", priority=-1),
    "stream_meta": lambda L: L.Stream("meta"),
    "stream_cuda": lambda L: L.Stream("cuda"),
    "stream_index": lambda L: L.Stream(1),
    "event": lambda L: L.Event(),
    "event_timing": lambda L: L.Event(enable_timing=True),
    "event_meta": lambda L: L.Event("meta"),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream_and_event(name):
    assert _surface(ft, STREAMS[name]) == _surface(torch, STREAMS[name])


def test_streams_compare_and_enter():
    for lib in (ft, torch):
        s = lib.Stream()
        assert s == lib.Stream() and hash(s) == hash(lib.Stream())
        with s:
            pass


def test_cpu_device_module():
    for name in ("is_available", "is_initialized", "current_device", "device_count"):
        assert getattr(ft.cpu, name)() == getattr(torch.cpu, name)()
    assert ft.cpu.synchronize() is None and ft.cpu.set_device("cpu") is None
    s = ft.cpu.Stream()
    assert ft.cpu.current_stream() is not s
    with ft.cpu.stream(s):
        assert ft.cpu.current_stream() is s
    assert ft.cpu.current_stream() is not s
    e = ft.cpu.Event()
    assert e.query() and e.record() is None and e.wait() is None and e.synchronize() is None


DEVICE_MODULES = {
    "none": lambda L: L.get_device_module().__name__,
    "cpu": lambda L: L.get_device_module("cpu").__name__,
    "device": lambda L: L.get_device_module(L.device("cpu")).__name__,
    "meta": lambda L: L.get_device_module(L.device("meta")),
    "int": lambda L: L.get_device_module(3),
    "bad_str": lambda L: L.get_device_module("foo"),
}


@pytest.mark.parametrize("name", sorted(DEVICE_MODULES))
def test_get_device_module(name):
    a = _outcome(lambda: DEVICE_MODULES[name](ft))
    b = _outcome(lambda: DEVICE_MODULES[name](torch))
    norm = (lambda o: tuple(str(x).replace("ferrotorch", "torch") for x in o))
    if name == "bad_str":
        assert a[:2] == b[:2] == ("raise", "RuntimeError")
    else:
        assert norm(a) == norm(b)


# ----- autocast switches ------------------------------------------------------------

AUTOCAST = [
    ("ipu", "enabled", True), ("ipu", "dtype", "float32"), ("xla", "enabled", True), ("xla", "dtype", "float16"),
    ("ipu", "enabled", 1), ("xla", "dtype", 1),
]


@pytest.mark.parametrize("dev,what,value", AUTOCAST)
def test_deprecated_autocast_switches(dev, what, value):
    def run(lib):
        get = getattr(lib, f"is_autocast_{dev}_enabled" if what == "enabled" else f"get_autocast_{dev}_dtype")
        put = getattr(lib, f"set_autocast_{dev}_{what}")
        v = getattr(lib, value) if isinstance(value, str) else value
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            before = str(get())
            try:
                put(v)
            except TypeError as e:
                return before, "TypeError", str(e)
            after = (str(get()), lib.is_autocast_enabled(dev) if what == "enabled" else str(lib.get_autocast_dtype(dev)))
            put(lib.is_autocast_enabled(dev) and False if what == "enabled" else getattr(lib, before.split(".")[-1]))
        cats = {c.category.__name__ for c in w}
        return before.split(".")[-1], after[0].split(".")[-1], str(after[1]).split(".")[-1], cats

    assert run(ft) == run(torch)


def test_autocast_region_for_xla_uses_the_set_dtype():
    for lib in (ft, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autocast("xla", dtype=lib.float16):
                assert lib.is_autocast_xla_enabled() and lib.get_autocast_xla_dtype() == lib.float16
            assert not lib.is_autocast_xla_enabled()


# ----- slice_inverse ------------------------------------------------------------------

SLICE_INVERSE = {
    "cols": lambda L, b: L.slice_inverse(b[:, 1:3], L.zeros(3, 4), 1, 1, 3, 1),
    "rows": lambda L, b: L.slice_inverse(b[1:], L.zeros(3, 4), 0, 1),
    "transposed_src": lambda L, b: L.slice_inverse(b[:, 1:3], L.zeros(3, 4).t(), 1, 1, 3),
    "neg_dim": lambda L, b: L.slice_inverse(b[:, 2:], L.zeros(3, 4), -1, -2),
    "too_small": lambda L, b: L.slice_inverse(L.zeros(3), L.zeros(3, 5), 0),
    "method": lambda L, b: b[1:].slice_inverse(L.zeros(3, 4), 0, 1),
}


@pytest.mark.parametrize("name", sorted(SLICE_INVERSE))
def test_slice_inverse(name):
    def run(lib):
        base = lib.arange(12.).view(3, 4)
        try:
            r = SLICE_INVERSE[name](lib, base)
        except RuntimeError as e:
            return "RuntimeError", str(e).split(" requiring")[0].replace(", ", ",")
        return r.tolist(), tuple(r.shape), tuple(r.stride()), r.storage_offset(), r.data_ptr() == base.data_ptr()

    assert run(ft) == run(torch)


# ----- misc ---------------------------------------------------------------------------


def test_thread_safe_generator_and_fatal_error():
    assert ft.thread_safe_generator() is None and torch.thread_safe_generator() is None
    assert issubclass(ft.FatalError, Exception) and not issubclass(ft.FatalError, RuntimeError)
    assert [c.__name__ for c in ft.FatalError.__mro__[1:]] == [c.__name__ for c in torch.FatalError.__mro__[1:]]


def test_throughput_benchmark_runs_the_module():
    calls = []

    def module(x, y=1):
        calls.append(threading.get_ident())
        return x * y

    for lib in (ft, torch):
        calls.clear()
        b = lib.ThroughputBenchmark(module)
        with pytest.raises(RuntimeError, match="Please provide benchmark inputs"):
            b.benchmark(lib.BenchmarkConfig())
        b.add_input(lib.ones(2), y=3)
        b.add_input(lib.ones(2))
        assert b.run_once(lib.ones(2), y=2).tolist() == [2., 2.]
        cfg = lib.BenchmarkConfig()
        assert (cfg.num_calling_threads, cfg.num_warmup_iters, cfg.num_iters, cfg.num_worker_threads,
                cfg.profiler_output_path) == (1, 1, 100, 1, "")
        cfg.num_calling_threads, cfg.num_warmup_iters, cfg.num_iters = 3, 2, 30
        calls.clear()
        stats = b.benchmark(cfg)
        assert isinstance(stats, lib.BenchmarkExecutionStats)
        assert stats.num_iters >= 30 and stats.latency_avg_ms > 0
        # warm-up calls per thread plus the shared timed calls, from three threads
        assert len(calls) >= 3 * 2 + 30 and len(set(calls)) == 3
    assert [m.name for m in ft.AggregationType] == ["SUM", "AVG"]
    assert (int(ft.AVG), int(ft.SUM)) == (int(torch.AVG), int(torch.SUM))


# ----- zip container records -------------------------------------------------------------


def test_file_writer_reader_round_trip_and_interop(tmp_path):
    import io
    import zipfile

    for w_lib in (ft, torch):
        for r_lib in (ft, torch):
            buf = io.BytesIO()
            w = w_lib.PyTorchFileWriter(buf)
            w.write_record("data.pkl", b"hello", 5)
            w.write_record("x/y", b"\x00\x01\x02", 2)
            assert w.archive_name() == "archive" and w.get_all_written_records() == {"data.pkl", "x/y"}
            w.set_min_version(5)
            w.write_end_of_file()
            buf.seek(0)
            r = r_lib.PyTorchFileReader(buf)
            assert r.get_all_records()[:2] == ["data.pkl", "x/y"]
            assert set(r.get_all_records()) == {"data.pkl", "x/y", "version", "byteorder", ".data/serialization_id"}
            assert r.get_record("data.pkl") == b"hello" and r.get_record("x/y") == b"\x00\x01"
            assert r.get_record("version") == b"5\n" and r.get_record_size("x/y") == 2
            assert r.has_record("x/y") and not r.has_record("nope")
            assert r.get_record_offset("data.pkl") % 64 == 0
            assert len(r.serialization_id()) == 40 and r.serialization_id() == w.serialization_id()
            with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file nope: file not found"):
                r.get_record("nope")
            buf.seek(0)
            assert zipfile.ZipFile(buf).namelist()[0] == "archive/data.pkl"
    p = tmp_path / "model.pt"
    w = ft.PyTorchFileWriter(str(p))
    assert w.archive_name() == "model"
    w.write_end_of_file()
    assert torch.PyTorchFileReader(str(p)).get_all_records() == ["version", "byteorder", ".data/serialization_id"]
    # a checkpoint saved by torch.save reads record by record
    buf = io.BytesIO()
    torch.save(torch.arange(4.), buf)
    buf.seek(0)
    r = ft.PyTorchFileReader(buf)
    assert r.get_all_records() == torch.PyTorchFileReader(io.BytesIO(buf.getvalue())).get_all_records()
    assert r.get_record("data/0") == torch.arange(4.).numpy().tobytes()
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
        ft.PyTorchFileReader(io.BytesIO(b"junk"))
    w = ft.PyTorchFileWriter(io.BytesIO())
    w.write_record("a", b"x", 1)
    with pytest.raises(RuntimeError, match="Tried to serialize file twice: a"):
        w.write_record("a", b"y", 1)
