"""TorchDispatchMode and ferrotorch.ops.aten, side by side with PyTorch where it is installed."""

import importlib
import threading

import pytest

import ferrotorch as ft
import ferrotorch.nn as ftnn
import ferrotorch.nn.functional as ftF
from ferrotorch.utils._python_dispatch import TorchDispatchMode


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is optional: parity reference")


def _logger_class(lib):
    base = importlib.import_module(lib.__name__ + ".utils._python_dispatch").TorchDispatchMode

    class Logger(base):
        def __init__(self):
            super().__init__()
            self.names = []
            self.shapes = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            self.shapes.append([tuple(a.shape) if hasattr(a, "shape") else None for a in args])
            return func(*args, **(kwargs or {}))

    return Logger


# Programs written once, run against either library: (lib, F) -> None.
PROGRAMS = {
    "add": lambda L, F, a, b, m, v: a + b,
    "add_scalar": lambda L, F, a, b, m, v: a + 2,
    "radd": lambda L, F, a, b, m, v: 2 + a,
    "torch_add_alpha": lambda L, F, a, b, m, v: L.add(a, b, alpha=2),
    "sub": lambda L, F, a, b, m, v: a - b,
    "rsub": lambda L, F, a, b, m, v: 2 - a,
    "mul": lambda L, F, a, b, m, v: L.mul(a, b),
    "rmul": lambda L, F, a, b, m, v: 2 * a,
    "div": lambda L, F, a, b, m, v: a / b,
    "floordiv": lambda L, F, a, b, m, v: a // b,
    "mod": lambda L, F, a, b, m, v: a % b,
    "pow_scalar": lambda L, F, a, b, m, v: a ** 2,
    "pow_tensor": lambda L, F, a, b, m, v: a ** b,
    "rpow": lambda L, F, a, b, m, v: 2 ** a,
    "neg_abs": lambda L, F, a, b, m, v: abs(-a),
    "inplace": lambda L, F, a, b, m, v: a.clone().add_(b).mul_(2),
    "iadd": lambda L, F, a, b, m, v: a.clone().__iadd__(b),
    "compare": lambda L, F, a, b, m, v: [a == b, a == 1, a < b, a > 0, a != b, a <= b, a >= b],
    "bitwise": lambda L, F, a, b, m, v: ~((a > 0) & (b > 0) | (a > 0) ^ (b > 0)),
    "unary": lambda L, F, a, b, m, v: [a.exp(), L.log(a), a.sqrt(), a.sin(), L.tanh(a), L.sigmoid(a)],
    "activations": lambda L, F, a, b, m, v: [F.relu(a), L.relu(a), F.gelu(a), F.silu(a), F.leaky_relu(a), F.elu(a)],
    "relu_inplace": lambda L, F, a, b, m, v: F.relu(a.clone(), inplace=True),
    "softmax": lambda L, F, a, b, m, v: [F.softmax(a, dim=1), F.log_softmax(a, 1), a.softmax(-1), L.softmax(a, 1)],
    "reductions": lambda L, F, a, b, m, v: [a.sum(), L.sum(a), a.sum(0), a.sum(dim=1, keepdim=True), a.mean(),
                                            a.mean(0), a.max(), a.max(0), a.max(b), a.min(), a.amax(0), a.argmax(),
                                            a.prod(), a.std(), a.var(0)],
    "matmul": lambda L, F, a, b, m, v: [a.mm(m), a @ m, L.matmul(a, m), a @ v, a.mv(v), v.dot(v), a.t()],
    "linear_no_bias": lambda L, F, a, b, m, v: F.linear(a, m.t()),
    "views": lambda L, F, a, b, m, v: [a.view(12), a.reshape(12), a.flatten(), a.transpose(0, 1),
                                       a.permute(1, 0), a.unsqueeze(0), v.expand(3, 4), a.contiguous(),
                                       a.clone(), a.detach(), a.split(2)],
    "misc": lambda L, F, a, b, m, v: [a.clamp(0, 1), L.maximum(a, b), L.where(a > 0, a, b),
                                      a.clone().fill_(1), a.clone().zero_(), L.zeros_like(a)],
}


def _run_logged(lib, F, program):
    lib.manual_seed(0)
    a, b = lib.rand(3, 4) + 0.5, lib.rand(3, 4) + 0.5
    m, v = lib.rand(4, 5), lib.rand(4)
    with _logger_class(lib)() as logger:
        program(lib, F, a, b, m, v)
    return logger.names


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_logged_op_names_match_torch(name):
    torch = _torch()
    import torch.nn.functional as tF

    expected = _run_logged(torch, tF, PROGRAMS[name])
    got = _run_logged(ft, ftF, PROGRAMS[name])
    assert got == expected


def _model(lib, nn):
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))


def test_sequential_forward_logs_like_torch():
    torch = _torch()
    import torch.nn as tnn

    logs = []
    for lib, nn in ((torch, tnn), (ft, ftnn)):
        model = _model(lib, nn)
        x = lib.randn(4, 10)
        with _logger_class(lib)() as logger:
            model(x)
        # PyTorch's autograd detaches relu's output to save it for backward,
        # which its modes see; ferrotorch saves it in Rust, below the modes.
        kept = [i for i, n in enumerate(logger.names) if n != "aten.detach.default"]
        logs.append(([logger.names[i] for i in kept], [logger.shapes[i] for i in kept]))
    assert logs[1][0] == logs[0][0] == [
        "aten.t.default", "aten.addmm.default", "aten.relu.default", "aten.t.default", "aten.addmm.default"
    ]
    assert logs[1][1] == logs[0][1]


def test_simple_ops_logged_with_overload_names():
    a, b = ft.ones(3), ft.full((3,), 2.0)
    with _logger_class(ft)() as logger:
        c = a + b
        d = ft.mul(a, b)
    assert logger.names == ["aten.add.Tensor", "aten.mul.Tensor"]
    assert logger.shapes[0] == [(3,), (3,)]
    assert c.tolist() == [3.0, 3.0, 3.0] and d.tolist() == [2.0, 2.0, 2.0]


def test_results_and_autograd_unchanged():
    model = _model(ft, ftnn)
    x = ft.randn(4, 10)
    expected = model(x)
    with _logger_class(ft)():
        got = model(x)
    assert got.tolist() == expected.tolist()
    assert got.grad_fn is not None
    got.sum().backward()
    assert model[0].weight.grad is not None


def test_mode_only_active_inside_block_and_originals_restored():
    tensor_add = ft.Tensor.__add__
    method_add = ft.Tensor.add
    relu = ftF.relu
    linear = ftF.linear
    a = ft.ones(3)
    logger = _logger_class(ft)()
    with logger:
        assert ft.Tensor.__add__ is not tensor_add  # intercepted while active
        a + a
    n = len(logger.names)
    a * a
    a - a
    assert len(logger.names) == n == 1
    assert ft.Tensor.__add__ is tensor_add
    assert ft.Tensor.add is method_add
    assert ftF.relu is relu and ftF.linear is linear
    # The native slot is reached through the base class again, not a leftover shadow.
    assert "__add__" not in ft.Tensor.__dict__
    assert type(ft._C.TensorBase.__dict__["__add__"]).__name__ == "wrapper_descriptor"


def test_originals_restored_after_exception():
    tensor_mul = ft.Tensor.__mul__
    with pytest.raises(ValueError):
        with _logger_class(ft)():
            ft.ones(2) * 2
            raise ValueError("boom")
    assert ft.Tensor.__mul__ is tensor_mul


def test_modes_stack_innermost_first():
    order = []

    class Tag(TorchDispatchMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            order.append((self.tag, str(func)))
            return func(*args, **(kwargs or {}))

    a = ft.ones(2)
    with Tag("outer"):
        with Tag("inner"):
            r = a + a
        s = a * a
    assert r.tolist() == [2.0, 2.0] and s.tolist() == [1.0, 1.0]
    assert order == [("inner", "aten.add.Tensor"), ("outer", "aten.add.Tensor"), ("outer", "aten.mul.Tensor")]


def test_ops_called_in_handler_go_to_the_enclosing_mode():
    torch = _torch()
    results = {}
    for lib in (torch, ft):
        base = importlib.import_module(lib.__name__ + ".utils._python_dispatch").TorchDispatchMode
        seen = []

        class Outer(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(("outer", str(func)))
                return func(*args, **(kwargs or {}))

        class Inner(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(("inner", str(func)))
                if str(func) == "aten.add.Tensor":
                    return lib.ops.aten.sub.Tensor(*args)
                return func(*args, **(kwargs or {}))

        a = lib.tensor([5.0, 7.0])
        b = lib.tensor([1.0, 2.0])
        with Outer():
            with Inner():
                c = a + b
        results[lib.__name__] = (seen, c.tolist())
    assert results["ferrotorch"] == results["torch"]
    assert results["ferrotorch"][1] == [4.0, 5.0]


def test_mode_is_thread_local():
    a = ft.ones(2)
    logger = _logger_class(ft)()
    with logger:
        worker = threading.Thread(target=lambda: a + a)
        worker.start()
        worker.join()
    assert logger.names == []


def test_nested_calls_inside_a_leaf_are_not_logged():
    # clamp, pow... are partly written in Python over other tensor ops; a mode
    # sees the op the user called, once.
    a = ft.tensor([-1.0, 0.5, 2.0])
    with _logger_class(ft)() as logger:
        a.clamp(0.0, 1.0)
        a.pow(2)
    assert logger.names == ["aten.clamp.default", "aten.pow.Tensor_Scalar"]


def test_ops_aten_objects():
    a, b = ft.tensor([1.0, 2.0]), ft.tensor([3.0, 4.0])
    aten = ft.ops.aten
    assert str(aten.add.Tensor) == "aten.add.Tensor"
    assert str(aten.relu.default) == "aten.relu.default"
    assert str(aten.add) == "aten.add"
    assert aten.add.Tensor.name() == "aten::add.Tensor"
    assert aten.add.Tensor.overloadpacket is aten.add
    assert aten.add.Tensor is aten.add.Tensor
    assert aten.add.Tensor(a, b).tolist() == [4.0, 6.0]
    assert aten.sub.Tensor(a, b).tolist() == [-2.0, -2.0]
    assert aten.mul.Tensor(a, b).tolist() == [3.0, 8.0]
    assert aten.relu.default(ft.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
    assert aten.sum.default(a).item() == 3.0
    assert aten.sum.dim_IntList(ft.ones(2, 3), [0]).tolist() == [2.0, 2.0, 2.0]
    assert aten.mm.default(ft.ones(2, 3), ft.ones(3, 1)).tolist() == [[3.0], [3.0]]
    assert aten.pow.Scalar(2.0, a).tolist() == [2.0, 4.0]
    assert aten._softmax.default(ft.zeros(2), 0, False).tolist() == [0.5, 0.5]
    assert aten.t.default(ft.ones(2, 3)).shape == (3, 2)
    with pytest.raises(AttributeError):
        aten.add.NoSuchOverload
    with pytest.raises(AttributeError):
        aten.no_such_op_xyz


def test_ops_names_exist_in_torch():
    torch = _torch()
    for name in ("add.Tensor", "add_.Tensor", "mul.Tensor", "sub.Tensor", "relu.default", "mm.default",
                 "addmm.default", "t.default", "sum.default", "sum.dim_IntList", "_softmax.default",
                 "view.default", "eq.Scalar", "pow.Tensor_Scalar", "where.self", "cat.default"):
        op, overload = name.split(".")
        assert str(getattr(getattr(ft.ops.aten, op), overload)) == str(getattr(getattr(torch.ops.aten, op), overload))


def test_ops_calls_go_through_modes():
    a = ft.ones(2)
    with _logger_class(ft)() as logger:
        ft.ops.aten.add.Tensor(a, a)
    assert logger.names == ["aten.add.Tensor"]


def test_import_is_lazy():
    import subprocess
    import sys

    code = ("import sys, ferrotorch; "
            "print(any(m in sys.modules for m in ('ferrotorch._dispatch', 'ferrotorch.profiler', 'numpy', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert importlib.import_module("ferrotorch.utils._python_dispatch").TorchDispatchMode is TorchDispatchMode
