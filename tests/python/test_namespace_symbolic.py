"""The ``sym_*`` utilities and ``SymInt``/``SymFloat``/``SymBool`` against PyTorch's
eager behaviour: results and their Python types, promotion, and errors."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402


def _run(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001
        # The libraries' tensor classes differ only in their module.
        return ("raise", type(e).__name__, str(e).replace("ferrotorch._C.Tensor", "torch.Tensor")
                .replace("ferrotorch.Tensor", "torch.Tensor"))
    if isinstance(r, (lib.Tensor,)):
        return ("tensor", r.tolist())
    return ("value", type(r).__name__, r if not (isinstance(r, float) and math.isnan(r)) else "nan")


CASES = {
    "max_int": lambda L: L.sym_max(2, 3),
    "max_promotes": lambda L: L.sym_max(3, 2.5),
    "max_float_first": lambda L: L.sym_max(2.5, 3),
    "max_bool": lambda L: L.sym_max(True, 2),
    "max_nan": lambda L: L.sym_max(float("nan"), 1),
    "max_numpy": lambda L: L.sym_max(np.int64(3), np.float32(2)),
    "max_tensor": lambda L: L.sym_max(L.tensor(2), L.tensor(5)),
    "max_str": lambda L: L.sym_max("a", 1),
    "min_int_float": lambda L: L.sym_min(2, 3.0),
    "min_tensor": lambda L: L.sym_min(L.tensor(2.), 3),
    "not_true": lambda L: L.sym_not(True),
    "not_zero": lambda L: L.sym_not(0),
    "not_tensor": lambda L: L.sym_not(L.tensor(True)),
    "not_tensor2": lambda L: L.sym_not(L.tensor([True, False])),
    "float_int": lambda L: L.sym_float(3),
    "float_bool": lambda L: L.sym_float(True),
    "float_tensor": lambda L: L.sym_float(L.tensor(3)),
    "float_str": lambda L: L.sym_float("1.5"),
    "float_bad_tensor": lambda L: L.sym_float(L.tensor([1, 2])),
    "int_trunc": lambda L: L.sym_int(3.7),
    "int_neg_trunc": lambda L: L.sym_int(-3.7),
    "int_tensor": lambda L: L.sym_int(L.tensor(3.7)),
    "int_str": lambda L: L.sym_int("4"),
    "sqrt_int": lambda L: L.sym_sqrt(4),
    "sqrt_float": lambda L: L.sym_sqrt(2.0),
    "sqrt_bool": lambda L: L.sym_sqrt(True),
    "sqrt_neg": lambda L: L.sym_sqrt(-1),
    "sqrt_tensor": lambda L: L.sym_sqrt(L.tensor(4.)),
    "sum_list": lambda L: L.sym_sum([1, 2, 3]),
    "sum_mixed": lambda L: L.sym_sum([1, 2.5]),
    "sum_empty": lambda L: L.sym_sum([]),
    "sum_varargs": lambda L: L.sym_sum(1, 2),
    "sum_tensor": lambda L: L.sym_sum((L.tensor(1), 2)),
    "ite_true": lambda L: L.sym_ite(True, 1, 2),
    "ite_false": lambda L: L.sym_ite(False, "a", "b"),
    "ite_int_cond": lambda L: L.sym_ite(1, 1, 2),
    "ite_tensor_cond": lambda L: L.sym_ite(L.tensor(True), 1, 2),
    "ite_type_mismatch": lambda L: L.sym_ite(True, 1, 2.0),
    "fresh_int": lambda L: L.sym_fresh_size(5),
    "fresh_float": lambda L: L.sym_fresh_size(2.5),
    "fresh_list": lambda L: L.sym_fresh_size([1]),
    "fresh_tensor": lambda L: L.sym_fresh_size(L.tensor(5)),
    "range_ok": lambda L: L.sym_constrain_range(5, min=0, max=10),
    "range_low": lambda L: L.sym_constrain_range(5, min=6, max=10),
    "range_high": lambda L: L.sym_constrain_range(5, max=3),
    "range_float_value": lambda L: L.sym_constrain_range(5.7, max=3),
    "range_tensor_value": lambda L: L.sym_constrain_range(L.tensor(5), max=3),
    "range_str": lambda L: L.sym_constrain_range("a", max=3),
    "range_float_bound": lambda L: L.sym_constrain_range(5, min=3.5),
    "range_positional": lambda L: L.sym_constrain_range(5, 0, 3),
    "range_unbounded": lambda L: L.sym_constrain_range(5),
    "size_ok": lambda L: L.sym_constrain_range_for_size(5, min=0, max=10),
    "size_negative": lambda L: L.sym_constrain_range_for_size(-1),
    "size_high": lambda L: L.sym_constrain_range_for_size(5, max=3),
    "size_min": lambda L: L.sym_constrain_range_for_size(5, min=6),
    "isinstance_int": lambda L: (isinstance(3, L.SymInt), isinstance(3.0, L.SymFloat), isinstance(True, L.SymBool)),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    assert _run(ft, CASES[name]) == _run(torch, CASES[name])


class _Node:
    """A minimal SymNode: a concrete value (what a tracer's node would guard to)."""

    def __init__(self, v):
        self.v = v

    def guard_int(self, file, line):
        return int(self.v)

    def guard_float(self, file, line):
        return float(self.v)

    def guard_bool(self, file, line):
        return bool(self.v)

    def str(self):
        return f"s{self.v}"

    def is_bool(self):
        return isinstance(self.v, bool)

    def is_float(self):
        return isinstance(self.v, float)

    def wrap_int(self, x):
        return _Node(x)

    wrap_float = wrap_bool = wrap_int

    def sym_max(self, other):
        return _Node(max(self.v, other.v))

    def sym_min(self, other):
        return _Node(min(self.v, other.v))

    def sym_not(self):
        return _Node(not self.v)

    def sym_ite(self, t, f):
        return t if self.v else f

    def sym_sum(self, nodes):
        return _Node(sum(n.v for n in nodes))

    def sym_float(self):
        return _Node(float(self.v))

    def sym_int(self):
        return _Node(int(self.v))


def test_sym_types_delegate_to_their_node():
    s = ft.SymInt(_Node(4))
    assert isinstance(s, ft.SymInt) and not isinstance(s, ft.SymFloat)
    assert int(s) == 4 and [10, 20, 30, 40, 50][s] == 50 and str(s) == "s4"
    m = ft.sym_max(s, 7)
    assert isinstance(m, ft.SymInt) and int(m) == 7
    assert int(ft.sym_min(2, s)) == 2
    assert int(ft.sym_sum([1, s, 2])) == 7
    assert ft.sym_int(s) is s
    f = ft.sym_float(s)
    assert isinstance(f, ft.SymFloat) and float(f) == 4.0
    assert isinstance(ft.sym_int(ft.SymFloat(_Node(2.7))), ft.SymInt)
    b = ft.SymBool(_Node(True))
    assert bool(b) and not bool(ft.sym_not(b))
    assert int(ft.sym_ite(b, 1, 2)) == 1
    with pytest.raises(RuntimeError, match=r"Invalid value range for 4 between \[5, 9\]"):
        ft.sym_constrain_range(s, min=5, max=9)
