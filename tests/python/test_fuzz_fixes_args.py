"""Python-argument parsing parity with PyTorch (fuzz classes of issue 15):
Number/float/int parameters given tensors, Tensor parameters given numbers,
argument-less methods, in-place comparisons under autograd, detach_ on views."""

import pytest

import ferrotorch as ft
from _parity import outcome

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


_outcome = outcome


def _same(fn, message=True):
    ours, theirs = _outcome(ft, fn), _outcome(torch, fn)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        a, b = ours[1], theirs[1]
        if hasattr(b, "detach"):
            assert a.dtype.__repr__().split(".")[-1] == str(b.dtype).split(".")[-1]
            assert a.shape == b.shape
            assert a.detach().reshape(-1).tolist() == pytest.approx(b.detach().reshape(-1).tolist(), nan_ok=True)
        else:
            assert a == b
    elif message and ours[0] == "TypeError":
        assert ours[1] == theirs[1]


X = [[0.25, -1.5, 2.0], [0.5, 0.75, -0.125], [3.0, -2.0, 0.0625]]


def _x(lib):
    return lib.tensor(X)


# Scalar ("Number") and float parameters: 0-d tensors not requiring grad are
# accepted, anything else tensor-shaped is a TypeError.
SCALAR_CALLS = {
    "celu": lambda lib, v: lib.celu(_x(lib), v),
    "celu_": lambda lib, v: lib.celu_(_x(lib), v),
    "F.celu": lambda lib, v: lib.nn.functional.celu(_x(lib), v),
    "F.elu": lambda lib, v: lib.nn.functional.elu(_x(lib), v),
    "F.leaky_relu": lambda lib, v: lib.nn.functional.leaky_relu(_x(lib), v),
    "F.softplus": lambda lib, v: lib.nn.functional.softplus(_x(lib), v),
    "F.hardtanh": lambda lib, v: lib.nn.functional.hardtanh(_x(lib), v),
    "F.threshold": lambda lib, v: lib.nn.functional.threshold(_x(lib), v, 0.5),
    "F.threshold value": lambda lib, v: lib.nn.functional.threshold(_x(lib), 0.5, v),
    "F.softshrink": lambda lib, v: lib.nn.functional.softshrink(_x(lib), v),
    "F.hardshrink": lambda lib, v: lib.nn.functional.hardshrink(_x(lib), v),
    "logit": lambda lib, v: _x(lib).sigmoid().logit(v),
    "logit_": lambda lib, v: _x(lib).sigmoid().logit_(v),
    "torch.logit_": lambda lib, v: lib.logit_(_x(lib).sigmoid(), v),
    "nan_to_num": lambda lib, v: _x(lib).log().nan_to_num(v),
    "nan_to_num_": lambda lib, v: _x(lib).log().nan_to_num_(v),
    "torch.nan_to_num_": lambda lib, v: lib.nan_to_num_(_x(lib).log(), v),
    "nan_to_num_posinf": lambda lib, v: _x(lib).nan_to_num(posinf=v),
    "full_like": lambda lib, v: lib.full_like(_x(lib), v),
    "full": lambda lib, v: lib.full((2,), v),
}
SCALAR_VALUES = {
    "0d float": lambda lib: lib.tensor(0.25),
    "0d int": lambda lib: lib.tensor(1),
    "0d bool": lambda lib: lib.tensor(True),
    "1-element": lambda lib: lib.tensor([0.25]),
    "2-element": lambda lib: lib.tensor([0.25, 0.5]),
    "0d requires grad": lambda lib: lib.tensor(0.25, requires_grad=True),
    "int": lambda lib: 1,
    "bool": lambda lib: True,
}


@pytest.mark.parametrize("value", list(SCALAR_VALUES))
@pytest.mark.parametrize("call", list(SCALAR_CALLS))
def test_scalar_parameter_given_tensor(call, value):
    c, v = SCALAR_CALLS[call], SCALAR_VALUES[value]
    # The torch.xxx_ forms name the parameter's position differently in our
    # message for some calls; the class must agree everywhere.
    _same(lambda lib: c(lib, v(lib)), message=not call.startswith("torch.") and call != "nan_to_num_posinf")


# int parameters: 0-d integral non-bool tensors are ints; floats, bools and
# one-element tensors are not (SymInt ones, like tril's diagonal, take those).
INT_CALLS = {
    "tril": lambda lib, v: _x(lib).tril(v),
    "tril_": lambda lib, v: _x(lib).tril_(v),
    "triu_": lambda lib, v: _x(lib).triu_(v),
    "torch.triu": lambda lib, v: lib.triu(_x(lib), v),
    "cumsum_": lambda lib, v: _x(lib).cumsum_(v),
    "cumprod_": lambda lib, v: _x(lib).cumprod_(v),
}
INT_VALUES = {
    "0d int": lambda lib: lib.tensor(1),
    "0d uint8": lambda lib: lib.tensor(1, dtype=lib.uint8),
    "0d float": lambda lib: lib.tensor(1.0),
    "1-element int": lambda lib: lib.tensor([1]),
    "2-element int": lambda lib: lib.tensor([1, 1]),
    "float": lambda lib: 1.0,
    "bool": lambda lib: True,
}


@pytest.mark.parametrize("value", list(INT_VALUES))
@pytest.mark.parametrize("call", list(INT_CALLS))
def test_int_parameter_given_tensor(call, value):
    c, v = INT_CALLS[call], INT_VALUES[value]
    _same(lambda lib: c(lib, v(lib)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.allclose(_x(lib), 3),
    lambda lib: lib.isclose(_x(lib), 3),
    lambda lib: _x(lib).allclose(3),
    lambda lib: _x(lib).isclose(3.5),
    lambda lib: _x(lib).isclose(_x(lib)),
])
def test_tensor_parameter_given_number(call):
    _same(call)


@pytest.mark.parametrize("value", [3, 2.75, True, -1])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_copy_from_number(value, dtype):
    _same(lambda lib: lib.zeros(2, 3, dtype=getattr(lib, dtype)).copy_(value))


@pytest.mark.parametrize("call", [
    lambda lib: _x(lib).is_contiguous(1),
    lambda lib: _x(lib).is_contiguous(_x(lib)),
    lambda lib: _x(lib).is_contiguous(),
    lambda lib: lib.broadcast_to(_x(lib)[0], 3),
    lambda lib: lib.broadcast_to(_x(lib)[0], lib.tensor(3)),
    lambda lib: lib.broadcast_to(_x(lib)[0], (2, 3)),
    lambda lib: _x(lib)[0].broadcast_to(3),
    lambda lib: lib.broadcast_shapes(_x(lib)),
    lambda lib: lib.broadcast_shapes(lib.tensor([1])),
    lambda lib: lib.broadcast_shapes(_x(lib), 2),
    lambda lib: lib.broadcast_shapes((2, 1), 3, [1, 3]),
    lambda lib: lib.broadcast_shapes((2, True)),
    lambda lib: lib.is_autocast_enabled(_x(lib)),
])
def test_argument_kinds(call):
    _same(call, message=False)


@pytest.mark.parametrize("op", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
                                "less_equal_", "not_equal_"])
@pytest.mark.parametrize("other", ["scalar", "tensor", "tensor_rg"])
@pytest.mark.parametrize("view", [False, True])
def test_inplace_comparison_under_autograd(op, other, view):
    """The result keeps requires_grad with a zero gradient (PyTorch's derivative is zeros_like)."""
    def run(lib):
        leaf = lib.tensor([[0.5, -1.0, 2.0], [0.0, 3.0, -0.25]], requires_grad=True)
        oleaf = lib.tensor([0.5, 1.0, -2.0], requires_grad=other == "tensor_rg")
        o = 0.5 if other == "scalar" else oleaf * 1
        x = leaf.clone()
        target = x.t() if view else x
        if view:
            o = o if other == "scalar" else o.unsqueeze(1)
        r = getattr(target, op)(o)
        rg = r.requires_grad
        (x * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        g = leaf.grad.tolist()
        og = oleaf.grad.tolist() if oleaf.grad is not None else None
        return rg, r.dtype.__repr__().split(".")[-1], x.tolist(), g, og

    assert run(ft) == run(torch)


def test_inplace_comparison_other_requires_grad_only():
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0])
        b = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        a.le_(b * 1)
        a.sum().backward()
        return a.requires_grad, a.tolist(), b.grad.tolist()

    assert run(ft) == run(torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]])[0],
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t(),
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)[0],
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).clone().view(4),
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).clone(),
])
def test_detach_inplace_on_views(make):
    def run(lib):
        v = make(lib)
        v.detach_()
        return v.requires_grad

    _same(run, message=False)


@pytest.mark.parametrize("op", ["logical_and_", "logical_or_", "logical_xor_"])
def test_inplace_logical_keeps_history(op):
    """PyTorch records nothing for the in-place logical ops: the old history (identity) stays."""
    def run(lib):
        leaf = lib.tensor([0.5, -1.0, 0.0], requires_grad=True)
        x = leaf.clone()
        r = getattr(x, op)(lib.tensor([1.0, 0.0, 2.0]))
        (x * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return r.requires_grad, x.tolist(), leaf.grad.tolist()

    assert run(ft) == run(torch)
