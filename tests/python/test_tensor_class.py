"""``ferrotorch.Tensor`` is one Python subclass of the native ``_C.TensorBase``, as
``torch.Tensor`` is of ``torch._C.TensorBase``; every tensor the library returns is
of that class, and no Python code modifies the native class."""

import copy
import pickle
import types

import pytest

import ferrotorch as ft
from ferrotorch import _C, _tensor_methods

torch = pytest.importorskip("torch")


def _kinds(mro):
    return [c.__module__.split(".")[0] + "." + c.__name__ for c in mro]


def test_class_hierarchy_matches_pytorch():
    assert [c.__name__ for c in ft.Tensor.__mro__] == [c.__name__ for c in torch.Tensor.__mro__]
    assert ft.Tensor.__module__ == torch.Tensor.__module__.replace("torch", "ferrotorch")
    assert ft._C.TensorBase is ft.Tensor.__base__
    assert [c.__name__ for c in ft.nn.Parameter.__mro__] == [c.__name__ for c in torch.nn.Parameter.__mro__]


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(2, 3),
    lambda m: m.zeros(2, 3) + 1,
    lambda m: m.zeros(2, 3).t(),
    lambda m: m.zeros(2, 3)[0],
    lambda m: m.zeros(2, 3).sum(),
    lambda m: m.tensor([1.0, 2.0]).sin(),
    lambda m: m.cat([m.ones(2), m.ones(3)]),
    lambda m: m.zeros(4).split(2)[1],
    lambda m: m.zeros(2, 3).max(dim=1).indices,
    lambda m: m.from_numpy(__import__("numpy").ones(3)),
    lambda m: m.Tensor([1.0, 2.0]),
    lambda m: m.Tensor(2, 3),
    lambda m: m.nn.functional.relu(m.ones(3)),
    lambda m: m.linalg.inv(m.eye(2)),
    lambda m: m.fft.fft(m.ones(4)),
])
def test_every_result_is_exactly_tensor(make):
    assert type(make(torch)) is torch.Tensor
    assert type(make(ft)) is ft.Tensor


def test_autograd_results_and_grads_are_tensor():
    x = ft.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    assert type(y) is ft.Tensor and type(x.grad) is ft.Tensor
    assert type(ft.autograd.grad((x * x).sum(), x)[0]) is ft.Tensor


def test_parameter_identity_survives_the_native_layer():
    p = ft.nn.Parameter(ft.ones(2))
    assert type(p) is ft.nn.Parameter
    # The native layer hands back the registered object, not a new plain Tensor.
    lin = ft.nn.Linear(2, 2)
    assert all(type(q) is ft.nn.Parameter for q in lin.parameters())
    (lin(ft.ones(1, 2)).sum()).backward()
    assert type(lin.weight.grad) is ft.Tensor


def test_native_class_holds_only_native_attributes():
    # Nothing assigns Python functions onto the native class: every attribute of
    # TensorBase is a method/getset descriptor or a builtin slot wrapper from Rust.
    python_defined = [name for name, value in vars(_C.TensorBase).items()
                      if isinstance(value, (types.FunctionType, property, staticmethod, classmethod))]
    assert python_defined == []


def test_python_methods_live_on_tensor():
    for name in ("__repr__", "__iter__", "backward", "storage", "addmm", "clamp"):
        assert name in vars(ft.Tensor), name
    assert isinstance(vars(ft.Tensor)["backward"], types.FunctionType)


def test_the_class_is_sealed_after_import():
    with pytest.raises(RuntimeError, match="already built"):
        _tensor_methods.define("brand_new_method", lambda self: None)
    assert not hasattr(ft.Tensor, "brand_new_method")


def test_subclass_and_isinstance_like_pytorch():
    for m in (torch, ft):
        class Mine(m.Tensor):
            pass
        t = m.ones(2).as_subclass(Mine) if hasattr(m.Tensor, "as_subclass") else None
        if t is not None:
            assert type(t) is Mine and isinstance(t, m.Tensor)
        assert isinstance(m.ones(1), m.Tensor) and m.is_tensor(m.ones(1))
        assert not isinstance(m.ones(1), Mine)


def test_pickle_and_deepcopy_keep_the_class():
    x = ft.arange(6.0).reshape(2, 3)
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x)):
        assert type(y) is ft.Tensor
        assert y.tolist() == x.tolist()
    p = ft.nn.Parameter(ft.ones(2))
    assert type(copy.deepcopy(p)) is ft.nn.Parameter


def test_dispatch_mode_restores_the_class_namespace():
    from ferrotorch.utils._python_dispatch import TorchDispatchMode

    before = dict(vars(ft.Tensor))
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        (ft.ones(2) + ft.ones(2)).sin()
    assert "aten.add.Tensor" in seen and "aten.sin.default" in seen
    assert dict(vars(ft.Tensor)) == before
    assert "sin" not in vars(ft.Tensor)  # the native method is reached through the base again


@pytest.mark.parametrize("ns", ["fft", "special", "nn.functional"])
def test_modules_that_re_export_tensor_like_pytorch(ns):
    import functools
    tm = functools.reduce(getattr, ns.split("."), torch)
    fm = functools.reduce(getattr, ns.split("."), ft)
    assert (getattr(tm, "Tensor", None) is torch.Tensor) == (getattr(fm, "Tensor", None) is ft.Tensor)
