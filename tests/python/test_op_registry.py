"""The op registry (`UnaryOp::REGISTRY` in ferrotorch-core): every parameterless unary op is
declared once there with its aten name, its backward node and its Python entry points, and the
Python layer binds exactly those. Checked against PyTorch: the entry points it has, the node
names it records, and what dispatch modes see."""

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

REGISTRY = ft._C._unary_registry()
BOUND = [e for e in REGISTRY if any(e[1:])]


def test_registry_is_not_empty_and_names_are_unique():
    names = [e[0] for e in REGISTRY]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert {"sin", "exp", "isnan", "round"} <= set(names)


@pytest.mark.parametrize("entry", BOUND, ids=[e[0] for e in BOUND])
def test_entry_points_are_pytorchs(entry):
    name, function, method, inplace_method, inplace_function = entry
    # The registry says what PyTorch has ...
    assert hasattr(torch, name) == function
    assert hasattr(torch.Tensor, name) == method
    assert hasattr(torch.Tensor, name + "_") == inplace_method
    assert hasattr(torch, name + "_") == inplace_function
    # ... and ferrotorch binds exactly that.
    assert hasattr(ft, name) == function
    assert hasattr(ft.Tensor, name) == method
    assert hasattr(ft.Tensor, name + "_") == inplace_method
    assert hasattr(ft, name + "_") == inplace_function


DIFFERENTIABLE = [e for e in BOUND if e[0] not in
                  ("bitwise_not", "logical_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit")]


@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[e[0] for e in DIFFERENTIABLE])
def test_node_names_and_values_match_pytorch(entry):
    name = entry[0]

    def run(lib):
        x = lib.tensor([0.25, 0.5, 0.75], dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(x)
        (g,) = lib.autograd.grad(y.sum(), x)
        return y, g

    y, g = run(ft)
    ty, tg = run(torch)
    if tg._is_zerotensor():  # PyTorch's storage-less zeros (sgn's gradient)
        tg = torch.zeros(tg.shape, dtype=tg.dtype)
    assert y.grad_fn.name() == ty.grad_fn.name()
    assert y.detach().tolist() == pytest.approx(ty.detach().tolist(), rel=1e-12, abs=1e-12, nan_ok=True)
    assert g.tolist() == pytest.approx(tg.tolist(), rel=1e-12, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("name", ["asin", "frac", "isnan", "exp2_", "sin", "erfinv_", "logical_not"])
def test_dispatch_modes_see_registered_ops(name):
    seen = {}
    for lib in (ft, torch):
        mode_base = __import__(lib.__name__ + ".utils._python_dispatch", fromlist=["x"]).TorchDispatchMode

        class Log(mode_base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                calls.append(str(func))
                return func(*args, **(kwargs or {}))

        calls = []
        x = lib.tensor([0.25, 0.5])
        with Log():
            getattr(x, name)()
        seen[lib.__name__] = calls
    assert seen["ferrotorch"] == seen["torch"]


BINARY = ft._C._binary_registry()
BINARY_BOUND = [e for e in BINARY if any(e[1:4])]


def test_binary_registry_names_are_unique():
    names = [e[0] for e in BINARY]
    assert len(names) >= 30 and len(set(names)) == len(names)


@pytest.mark.parametrize("entry", BINARY_BOUND, ids=[e[0] for e in BINARY_BOUND])
def test_binary_entry_points_are_pytorchs(entry):
    name, function, method, inplace_method, tensor_only, inplace_function = entry
    for lib in (torch, ft):
        assert hasattr(lib, name) == function
        assert hasattr(lib.Tensor, name) == method
        assert hasattr(lib.Tensor, name + "_") == inplace_method
        assert hasattr(lib, name + "_") == inplace_function
    # `other` as a Python number: refused with TypeError exactly where PyTorch refuses it.
    integer = name.startswith("bitwise")
    for lib in (torch, ft):
        x = lib.tensor([1, 2]) if integer else lib.tensor([1.0, 2.0])
        if tensor_only:
            with pytest.raises(TypeError):
                getattr(lib, name)(x, 2)
        else:
            getattr(lib, name)(x, 2)


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_binary_kernel_names_in_messages(name):
    # The registry's kernel name is PyTorch's (`lshift`, not the function's name).
    msgs = []
    for lib in (torch, ft):
        with pytest.raises(NotImplementedError) as e:
            getattr(lib, name)(lib.tensor([1.0]), lib.tensor([2.0]))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
