"""``ferrotorch.testing`` against ``torch.testing``: ``assert_close``/``assert_allclose`` outcomes and exact
messages for the same inputs, ``make_tensor``'s ranges, layouts and errors, and ``FileCheck``'s verdicts
and messages on the same strings."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def outcomes(fn):
    """``fn(lib)`` for ferrotorch then torch: ``"ok"`` or ``(exception class name, message)``, with
    ferrotorch's module name read as torch's (class names appear in some messages)."""
    out = []
    for lib in (ft, torch):
        try:
            fn(lib)
            out.append("ok")
        except Exception as e:  # noqa: BLE001 - the class is compared
            out.append((type(e).__name__, str(e).replace("ferrotorch", "torch")))
    return out


def same_outcome(fn):
    ours, theirs = outcomes(fn)
    assert ours == theirs, f"\nferrotorch: {ours}\ntorch:      {theirs}"
    return ours


# --- assert_close ---------------------------------------------------------------------------------

CLOSE_CASES = {
    "equal": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0])),
    "within_default_tol": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0 + 1e-6])),
    "one_mismatch": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 3.0])),
    "2d_float64": lambda L: L.testing.assert_close(L.tensor([[1.0, 2.0, 3.0], [4, 5, 6]], dtype=L.float64),
                                                   L.tensor([[1.0, 2.5, 3.0], [4, 5, 7]], dtype=L.float64)),
    "float16": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0], dtype=L.float16),
                                                L.tensor([1.0, 2.01], dtype=L.float16)),
    "bfloat16_within": lambda L: L.testing.assert_close(L.tensor([100.0], dtype=L.bfloat16),
                                                        L.tensor([101.0], dtype=L.bfloat16)),
    "scalar_tensor": lambda L: L.testing.assert_close(L.tensor(1.0), L.tensor(1.5)),
    "ints_exact": lambda L: L.testing.assert_close(L.tensor([1, 2, 7]), L.tensor([1, 3, 7])),
    "bools": lambda L: L.testing.assert_close(L.tensor([True, False]), L.tensor([True, True])),
    "custom_tol_pass": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1]), rtol=0.1,
                                                        atol=0.0),
    "custom_tol_fail": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.5]), rtol=0.1,
                                                        atol=0.01),
    "zero_tol": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 4.0, 5.0]), rtol=0,
                                                 atol=0),
    "only_rtol": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0]), rtol=0.1),
    "only_atol": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0]), atol=0.1),
    "nan": lambda L: L.testing.assert_close(L.tensor(float("nan")), L.tensor(float("nan"))),
    "nan_equal": lambda L: L.testing.assert_close(L.tensor([float("nan"), 1.0]), L.tensor([float("nan"), 1.0]),
                                                  equal_nan=True),
    "inf": lambda L: L.testing.assert_close(L.tensor([float("inf"), 1.0]), L.tensor([-float("inf"), 1.0])),
    "expected_zero": lambda L: L.testing.assert_close(L.tensor([0.5, 1.0]), L.tensor([0.0, 1.0])),
    "dtype": lambda L: L.testing.assert_close(L.tensor([1, 2]), L.tensor([1.0, 2.0])),
    "dtype_unchecked": lambda L: L.testing.assert_close(L.tensor([1, 2]), L.tensor([1.0, 2.0]), check_dtype=False),
    "dtype_unchecked_promoted_mismatch": lambda L: L.testing.assert_close(
        L.ones(2, 3), L.ones(2, 3, dtype=L.float64) * 1.001, check_dtype=False),
    "shape": lambda L: L.testing.assert_close(L.tensor([1, 2]), L.tensor([1, 2, 3])),
    "stride": lambda L: L.testing.assert_close(L.ones(2, 3).t(), L.ones(3, 2), check_stride=True),
    "stride_unchecked": lambda L: L.testing.assert_close(L.ones(2, 3).t(), L.ones(3, 2)),
    "sequence": lambda L: L.testing.assert_close([L.tensor([1.0]), 2.0], (L.tensor([1.0]), 2.5)),
    "sequence_len": lambda L: L.testing.assert_close([1, 2], [1, 2, 3]),
    "nested_item": lambda L: L.testing.assert_close({"a": [L.tensor([1.0]), L.tensor([2.0, 3.0])]},
                                                    {"a": [L.tensor([1.0]), L.tensor([2.0, 3.5])]}),
    "mapping_keys": lambda L: L.testing.assert_close({"a": 1, "c": 2}, {"b": 1, "c": 2}),
    "numbers": lambda L: L.testing.assert_close(1.0, 1.1),
    "number_types": lambda L: L.testing.assert_close(1.0, 1),
    "number_types_unchecked": lambda L: L.testing.assert_close(1.0, 1, check_dtype=False),
    "ints_differ": lambda L: L.testing.assert_close(3, 4),
    "bool_scalars": lambda L: L.testing.assert_close(True, False),
    "none": lambda L: L.testing.assert_close(None, 3),
    "none_none": lambda L: L.testing.assert_close(None, None),
    "unrelated_types": lambda L: L.testing.assert_close(L.tensor([1.0]), 1.0),
    "msg_str": lambda L: L.testing.assert_close(L.tensor([1.0]), L.tensor([2.0]), msg="Argh"),
    "msg_callable": lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 4.0, 5.0]),
                                                     msg=lambda m: f"Header\n\n{m}\n\nFooter"),
    "msg_not_used_for_structure": lambda L: L.testing.assert_close([1], [1, 2], msg="custom"),
    "parameter_vs_tensor": lambda L: L.testing.assert_close(L.nn.Parameter(L.ones(2)), L.ones(2)),
    "parameter_no_subclasses": lambda L: L.testing.assert_close(L.nn.Parameter(L.ones(2)), L.ones(2),
                                                                allow_subclasses=False),
    "requires_grad": lambda L: L.testing.assert_close(L.ones(3, requires_grad=True) * 2, L.ones(3) * 2.5),
    "many_elements": lambda L: L.testing.assert_close(L.arange(24.0).reshape(2, 3, 4),
                                                      L.arange(24.0).reshape(2, 3, 4) * 1.01),
    "numpy_arrays": lambda L: L.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "numpy_scalars": lambda L: L.testing.assert_close(np.float64(1.0), np.float64(1.5)),
    "numpy_vs_tensor": lambda L: L.testing.assert_close(np.array([1.0]), L.tensor([1.0])),
}


@pytest.mark.parametrize("case", sorted(CLOSE_CASES))
def test_assert_close_matches_torch(case):
    same_outcome(CLOSE_CASES[case])


def test_assert_close_default_message_format():
    ours, _ = outcomes(CLOSE_CASES["one_mismatch"])
    assert ours == ("AssertionError",
                    "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                    "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                    "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")


@pytest.mark.parametrize("seed", range(5))
def test_assert_close_random_mismatches_match_torch(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 5))
    b = a + rng.standard_normal((3, 5)) * (rng.random((3, 5)) < 0.3) * 1e-3
    for dtype in ("float32", "float64"):
        same_outcome(lambda L: L.testing.assert_close(L.tensor(a.tolist(), dtype=getattr(L, dtype)),
                                                      L.tensor(b.tolist(), dtype=getattr(L, dtype))))


ALLCLOSE_CASES = {
    "pass": lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.00001])),
    "fail": lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1])),
    "lists": lambda L: L.testing.assert_allclose([1.0, 2.0], [1.0, 2.5]),
    "nan_is_equal": lambda L: L.testing.assert_allclose(L.tensor([float("nan")]), L.tensor([float("nan")])),
    "dtype_not_checked": lambda L: L.testing.assert_allclose(L.tensor([1, 2]), [1.0, 2.0]),
    "msg": lambda L: L.testing.assert_allclose(L.tensor([1.0]), L.tensor([3.0]), msg="nope"),
}


@pytest.mark.parametrize("case", sorted(ALLCLOSE_CASES))
def test_assert_allclose_matches_torch_and_warns(case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same_outcome(ALLCLOSE_CASES[case])
    ours = [w for w in caught if "assert_allclose" in str(w.message)]
    assert len(ours) == 2 and all(issubclass(w.category, FutureWarning) for w in ours)
    assert str(ours[0].message) == str(ours[1].message)


# --- make_tensor ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,low,high,interval", [
    ("float32", None, None, (-9, 9)), ("float64", -1, 1, (-1, 1)), ("float16", 0, 5, (0, 5)),
    ("bfloat16", None, None, (-9, 9)), ("float32", -1e39, 1e39, (-3.4028234663852886e38, 3.4028234663852886e38)),
    ("int64", None, None, (-9, 10)), ("int8", -200, 300, (-128, 128)), ("uint8", None, None, (0, 10)),
    ("int32", -3.5, 2.5, (-3, 3)), ("bool", None, None, (0, 2)),
])
def test_make_tensor_draws_from_torch_interval(dtype, low, high, interval):
    lo, hi = interval
    for lib in (ft, torch):
        t = lib.testing.make_tensor((40, 30), dtype=getattr(lib, dtype), device="cpu", low=low, high=high)
        assert tuple(t.shape) == (40, 30) and repr(t.dtype).endswith(dtype)
        v = np.array(t.to(lib.float64).tolist())
        # 16-bit floats may round a draw just below ``high`` up to it.
        assert v.min() >= lo and (v.max() < hi or dtype in ("float16", "bfloat16") and v.max() <= hi)
        if dtype in ("float32", "float64", "float16", "bfloat16"):
            assert abs(v.mean() - (lo + hi) / 2) < (hi - lo) * 0.05
        elif hi - lo <= 20:
            assert set(np.unique(v)) == set(range(lo, hi))


def test_make_tensor_shapes_and_layouts_like_torch():
    for lib in (ft, torch):
        assert tuple(lib.testing.make_tensor(2, 3, dtype=lib.float32, device="cpu").shape) == (2, 3)
        assert tuple(lib.testing.make_tensor([4], dtype=lib.float32, device="cpu").shape) == (4,)
        assert tuple(lib.testing.make_tensor((), dtype=lib.float32, device="cpu").shape) == ()
    pairs = [(lib.testing.make_tensor((3, 4), dtype=lib.float64, device="cpu", noncontiguous=True,
                                      requires_grad=True),
              lib.testing.make_tensor((2, 3, 4, 5), dtype=lib.float32, device="cpu",
                                      memory_format=lib.channels_last),
              lib.testing.make_tensor((1,), dtype=lib.float32, device="cpu", noncontiguous=True))
             for lib in (ft, torch)]
    for a, b in zip(*pairs):
        assert a.shape == b.shape and a.stride() == b.stride() and a.is_contiguous() == b.is_contiguous()
        assert a.requires_grad == b.requires_grad and a.is_leaf == b.is_leaf


def test_make_tensor_exclude_zero():
    for dtype in ("bool", "int8", "float32"):
        t = ft.testing.make_tensor((200,), dtype=getattr(ft, dtype), device="cpu", low=0, high=2, exclude_zero=True)
        assert not (t == 0).any()
    t = ft.testing.make_tensor((300,), dtype=ft.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert not (t == 0).any()


@pytest.mark.parametrize("kwargs", [
    {"dtype": "int32", "requires_grad": True},
    {"dtype": "float32", "low": 3, "high": 1},
    {"dtype": "float32", "low": float("nan")},
    {"dtype": "uint8", "low": 300, "high": 400},
    {"dtype": "int8", "low": -300, "high": -200},
    {"dtype": "float32", "noncontiguous": True, "memory_format": "contiguous_format"},
])
def test_make_tensor_errors_match_torch(kwargs):
    def call(L):
        kw = dict(kwargs, dtype=getattr(L, kwargs["dtype"]))
        if "memory_format" in kw:
            kw["memory_format"] = getattr(L, kw["memory_format"])
        L.testing.make_tensor((2,), device="cpu", **kw)
    assert same_outcome(call) != "ok"


def test_make_tensor_low_equals_high_warns_like_torch():
    for lib in (ft, torch):
        with pytest.warns(FutureWarning, match="low==high"):
            t = lib.testing.make_tensor((3,), dtype=lib.float32, device="cpu", low=2, high=2)
        assert t.tolist() == [2.0, 2.0, 2.0]


# --- FileCheck ----------------------------------------------------------------------------------

TEXT = "graph(%x):\n  %1 = aten::mul(%x, %x)\n  %2 = aten::add(%1, %x)\n  return (%2)\nend\n"

FILECHECK_CASES = [
    lambda F: F().check("aten::mul").check("aten::add").run(TEXT),
    lambda F: F().check("aten::add").check("aten::mul").run(TEXT),
    lambda F: F().check("foo").run("abc bar"),
    lambda F: F().check("foo").run("line1\nline2\nline3\nline4\nline5 x\nline6"),
    lambda F: F().check("l").check("foo").run("line1\nline2\nline3\nline4\nline5 x\nline6\nline7\nline8\nl9"),
    lambda F: F().check_not("bar").run("abc bar"),
    lambda F: F().check("mul").check_not("sub").check("return").run(TEXT),
    lambda F: F().check("mul").check_not("add").check("return").run(TEXT),
    lambda F: F().check("return").check_not("aten").run(TEXT),
    lambda F: F().check("mul").check_next("add").run(TEXT),
    lambda F: F().check("graph").check_next("add").run(TEXT),
    lambda F: F().check_next("x").run("a\nb\nx"),
    lambda F: F().check("mul").check_same("%x, %x").run(TEXT),
    lambda F: F().check("mul").check_same("return").run(TEXT),
    lambda F: F().check_count("%x", 4).run(TEXT),
    lambda F: F().check_count("%x", 5).run(TEXT),
    lambda F: F().check_count("%x", 3, exactly=True).run(TEXT),
    lambda F: F().check("add").check_count("%x", 0, exactly=True).run(TEXT),
    lambda F: F().check_count("a", 3, exactly=True).run("a a a a"),
    lambda F: F().check_dag("add").check_dag("mul").check("return").run(TEXT),
    lambda F: F().check_dag("return").check_dag("mul").check("add").run(TEXT),
    lambda F: F().check_dag("a").check_dag("q").run("b a"),
    lambda F: F().check_regex(r"aten::[a-z]+\(%1").check("end").run(TEXT),
    lambda F: F().check_regex("a[0-9]+").run("xx ab z"),
    lambda F: F().check_source_highlighted("foo").run("x = foo(y)\n    ~~~ <--- HERE\n"),
    lambda F: F().check_source_highlighted("foo").run("x = foo(y)\n    ~~ <--- HERE\n"),
    lambda F: F().check("a\"\t\\").run("b"),
    lambda F: F().check("foo\nbar").run("a\nfoo\nbaz\nq"),
    lambda F: F().check_not("foo\nb").run("a\nfoo\nbaz\nq"),
    lambda F: F().run("text without checks"),
    lambda F: F().run("# CHECK: mul\n# CHECK-NEXT: add\n#CHECK-NOT: sub\n# CHECK: return", TEXT),
    lambda F: F().run("# CHECK: foo\n# CHECK-NEXT: bar", "foo\nbaz\nbar"),
    lambda F: F().run("# CHECK-COUNT-2: a\n# CHECK-NOT: b\n# CHECK-COUNT-EXACTLY-1: c", "a a c"),
    lambda F: F().run("# CHECK-COUNT-2: a\n# CHECK-NOT: b\n# CHECK-COUNT-EXACTLY-1: c", "a a b c"),
    lambda F: F().run("# CHECK-DAG: add\n# CHECK-DAG: mul\n# CHECK-SAME: %x", TEXT),
    lambda F: F().run("# CHECK-FOO: a", "a"),
]


@pytest.mark.parametrize("i", range(len(FILECHECK_CASES)))
def test_filecheck_matches_torch(i, capsys):
    same_outcome(lambda L: FILECHECK_CASES[i](L.testing.FileCheck))
    capsys.readouterr()


def test_filecheck_unrun_instance_reports_its_checks(capfd):
    import ctypes
    import gc
    import sys
    outs = []
    for lib in (ft, torch):
        lib.testing.FileCheck().check("a").check_count("b", 2, exactly=True).check_not("c")
        gc.collect()
        # PyTorch prints from C++ (std::cout, synced with C stdio): flush both layers.
        sys.stdout.flush()
        ctypes.CDLL(None).fflush(None)
        outs.append(capfd.readouterr().out)
    assert outs[0] == outs[1]
    assert outs[0].startswith("You have not run this instance of FileCheck!\nFileCheck checks:\n\tCHECK: a\n")
