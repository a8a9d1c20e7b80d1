"""Bad input raises PyTorch's exception type with an informative message, and
never crashes the interpreter.

Each case runs the same call against PyTorch and ferrotorch. The exception
types must be identical, and every ``token`` listed for a case (a shape, a
value, a hint such as ``.reshape``) must appear in both messages: the tokens
are taken from PyTorch's message, so they also document what it says.
"""

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the reference implementation")
import ferrotorch as ft  # noqa: E402


def x23(L):
    return L.arange(6.0).view(2, 3)


# (id, call(L), tokens that both messages must contain)
CASES = [
    # dtypes
    ("dtype_bad_name", lambda L: L.zeros(2, dtype="flaot32"), ["dtype"]),
    ("dtype_name_string", lambda L: L.zeros(2, dtype="float32"), ["dtype", "str"]),
    ("dtype_int", lambda L: L.ones(2, dtype=5), ["dtype", "int"]),
    ("tensor_dtype_string", lambda L: L.tensor([1.0], dtype="float64"), ["dtype"]),
    ("to_bad_string", lambda L: L.ones(2).to("float33"), ["float33"]),
    ("type_bad_name", lambda L: L.ones(2).type("torch.FooTensor"), ["FooTensor"]),
    ("set_default_int", lambda L: L.set_default_dtype(L.int64), ["floating"]),
    # impossible views
    ("view_transposed", lambda L: x23(L).t().view(6), [".reshape", "view size is not compatible"]),
    ("view_strided", lambda L: L.arange(12.0).view(3, 4)[:, 1:3].view(6), [".reshape"]),
    ("view_expanded", lambda L: L.ones(3, 1).expand(3, 4).view(12), [".reshape"]),
    ("view_wrong_numel", lambda L: x23(L).view(4), ["[4]", "6"]),
    ("view_two_infer", lambda L: x23(L).view(-1, -1), ["only one dimension can be inferred"]),
    ("reshape_two_infer", lambda L: x23(L).reshape(-1, 2, -1), ["only one dimension can be inferred"]),
    ("reshape_wrong_numel", lambda L: x23(L).reshape(4, 2), ["[4, 2]", "6"]),
    ("view_neg2", lambda L: x23(L).view(-2, 3), ["-2"]),
    ("view_zero_infer", lambda L: L.zeros(0).view(0, -1), ["[0, -1]"]),
    ("view_float_size", lambda L: x23(L).view(2.0, 3), []),
    ("reshape_str", lambda L: x23(L).reshape("a"), ["reshape"]),
    ("unflatten_bad", lambda L: x23(L).unflatten(1, (2, 2)), []),
    ("flatten_order", lambda L: L.zeros(2, 3, 4).flatten(2, 1), ["start_dim"]),
    # negative sizes
    ("zeros_neg", lambda L: L.zeros(-1), ["negative"]),
    ("zeros_neg_2d", lambda L: L.zeros(2, -3), ["negative"]),
    ("empty_neg", lambda L: L.empty((4, -2)), ["negative"]),
    ("ones_neg", lambda L: L.ones([3, -1]), ["negative"]),
    ("full_neg", lambda L: L.full((-1,), 2.0), ["negative"]),
    ("rand_neg", lambda L: L.rand(-5), ["negative"]),
    ("randn_neg", lambda L: L.randn(2, -1), ["negative"]),
    ("randint_neg", lambda L: L.randint(5, (-2,)), ["negative"]),
    ("randperm_neg", lambda L: L.randperm(-1), ["-1"]),
    ("eye_neg", lambda L: L.eye(-2), ["-2"]),
    ("eye_neg_m", lambda L: L.eye(2, -1), ["-1"]),
    ("linspace_neg", lambda L: L.linspace(0, 1, -1), ["non-negative"]),
    ("expand_neg2", lambda L: L.ones(3).expand(-2), []),
    ("as_strided_neg_size", lambda L: x23(L).as_strided((-1,), (1,)), ["-1"]),
    ("zeros_float_size", lambda L: L.zeros(2.5), ["size"]),
    ("zeros_none_size", lambda L: L.zeros(None), ["size"]),
    ("zeros_no_size", lambda L: L.zeros(), ["size"]),
    # ragged and bad data
    ("ragged_short", lambda L: L.tensor([[1, 2], [3]]), ["expected sequence of length 2 at dim 1 (got 1)"]),
    ("ragged_long", lambda L: L.tensor([[1], [2, 3]]), ["expected sequence of length 1 at dim 1 (got 2)"]),
    ("ragged_deep", lambda L: L.tensor([[[1, 2]], [[3]]]), ["length 2 at dim 2"]),
    ("ragged_scalar_for_seq", lambda L: L.tensor([[1, 2], 3]), ["not a sequence"]),
    ("ragged_seq_for_scalar", lambda L: L.tensor([1, [2]]), ["list"]),
    ("ragged_seq_for_scalar_float", lambda L: L.tensor([1.5, [2]]), ["list"]),
    ("ragged_tuple", lambda L: L.tensor(((1, 2), (3,))), ["length 2"]),
    ("ragged_tensor_row", lambda L: L.tensor([[1, 2], L.tensor([3, 4, 5])]), ["length 2"]),
    ("ragged_empty_row", lambda L: L.tensor([[1], []]), ["length 1", "got 0"]),
    ("string_data", lambda L: L.tensor("abc"), ["str"]),
    ("string_in_list", lambda L: L.tensor([1, "a"]), ["str"]),
    ("string_in_nested", lambda L: L.tensor([[1.0, 2.0], [3.0, "x"]]), ["str"]),
    ("bytes_data", lambda L: L.tensor([b"a"]), ["bytes"]),
    ("string_with_dtype", lambda L: L.tensor([1, "a"], dtype=L.float32), ["str"]),
    ("none_data", lambda L: L.tensor(None), ["NoneType"]),
    ("none_in_list", lambda L: L.tensor([1.0, None]), ["NoneType"]),
    ("object_data", lambda L: L.tensor(object()), ["object"]),
    ("dict_data", lambda L: L.tensor({1: 2}), ["dict"]),
    ("tensor_list_multi", lambda L: L.tensor([L.ones(2), L.ones(2)]), ["one element"]),
    ("int_overflow", lambda L: L.tensor([2**63]), ["Overflow"]),
    ("uint8_overflow", lambda L: L.tensor([300], dtype=L.uint8), ["overflow"]),
    ("int32_overflow", lambda L: L.tensor([2**40], dtype=L.int32), ["overflow"]),
    ("nan_to_int64", lambda L: L.tensor([float("nan")], dtype=L.int64), ["overflow"]),
    ("full_str", lambda L: L.full((2,), "a"), ["fill_value"]),
    ("full_overflow", lambda L: L.full((2,), 300, dtype=L.int8), ["overflow", "int8"]),
    ("fill_overflow", lambda L: L.zeros(3, dtype=L.int16).fill_(10**6), ["overflow"]),
    ("fill_overflow_float", lambda L: L.zeros(3).fill_(1e300), ["overflow"]),
    ("fill_overflow_half", lambda L: L.zeros(3, dtype=L.float16).fill_(1e6), ["overflow"]),
    ("copy_list", lambda L: L.ones(2).copy_([1, 2]), ["Tensor", "list"]),
    # out-of-range dims
    ("transpose_dim", lambda L: x23(L).transpose(0, 5), ["[-2, 1]", "5"]),
    ("transpose_neg_dim", lambda L: x23(L).transpose(-3, 0), ["[-2, 1]", "-3"]),
    ("squeeze_dim", lambda L: x23(L).squeeze(4), ["[-2, 1]", "4"]),
    ("squeeze_dims_tuple", lambda L: x23(L).squeeze((0, 2)), ["[-2, 1]", "2"]),
    ("unsqueeze_dim", lambda L: x23(L).unsqueeze(4), ["[-3, 2]", "4"]),
    ("unsqueeze_neg_dim", lambda L: x23(L).unsqueeze(-4), ["[-3, 2]", "-4"]),
    ("size_dim", lambda L: x23(L).size(2), ["[-2, 1]", "2"]),
    ("stride_dim", lambda L: x23(L).stride(-3), ["[-2, 1]", "-3"]),
    ("select_dim", lambda L: x23(L).select(2, 0), ["[-2, 1]"]),
    ("narrow_dim", lambda L: x23(L).narrow(3, 0, 1), ["[-2, 1]"]),
    ("flatten_dim", lambda L: x23(L).flatten(0, 5), ["[-2, 1]", "5"]),
    ("unflatten_dim", lambda L: x23(L).unflatten(2, (1, 3)), ["[-2, 1]"]),
    ("permute_dim", lambda L: x23(L).permute(0, 3), ["[-2, 1]", "3"]),
    ("diagonal_dim", lambda L: x23(L).diagonal(0, 0, 3), ["[-2, 1]", "3"]),
    ("unbind_dim", lambda L: x23(L).unbind(4), ["[-2, 1]"]),
    ("split_dim", lambda L: x23(L).split(1, 4), ["[-2, 1]"]),
    ("chunk_dim", lambda L: x23(L).chunk(2, -5), ["[-2, 1]"]),
    ("unfold_dim", lambda L: x23(L).unfold(3, 1, 1), ["[-2, 1]"]),
    ("sum_dim", lambda L: x23(L).sum(2), ["[-2, 1]"]),
    ("squeeze_0d_dim", lambda L: L.tensor(1.0).squeeze(1), ["[-1, 0]"]),
    ("mT_1d", lambda L: L.ones(3).mT, ["1"]),
    ("t_3d", lambda L: L.ones(2, 2, 2).t(), ["3D"]),
    # out-of-range indices
    ("index_row", lambda L: x23(L)[5], ["index 5 is out of bounds for dimension 0 with size 2"]),
    ("index_neg_row", lambda L: x23(L)[-3], ["index -3 is out of bounds for dimension 0 with size 2"]),
    ("index_col", lambda L: x23(L)[0, 7], ["index 7 is out of bounds for dimension 1 with size 3"]),
    ("index_after_none", lambda L: x23(L)[None, 0, 3], ["index 3", "size 3"]),
    ("index_after_ellipsis", lambda L: x23(L)[..., -4], ["index -4", "size 3"]),
    ("index_too_many", lambda L: x23(L)[0, 0, 0], ["too many indices", "2"]),
    ("index_0d", lambda L: L.tensor(1.0)[0], ["0-dim"]),
    ("index_float", lambda L: x23(L)[1.5], ["only integers"]),
    ("index_str", lambda L: x23(L)["a"], ["str"]),
    ("index_object", lambda L: x23(L)[object()], ["only integers"]),
    ("slice_step_zero", lambda L: x23(L)[::0], ["zero"]),
    ("slice_negative_step", lambda L: x23(L)[::-1], ["step must be greater than zero"]),
    ("select_index", lambda L: x23(L).select(1, 3), ["index 3 out of range", "3"]),
    ("select_neg_index", lambda L: x23(L).select(0, -3), ["-3"]),
    ("select_0d", lambda L: L.tensor(1.0).select(0, 0), ["0-dim"]),
    ("narrow_start", lambda L: x23(L).narrow(0, 5, 1), ["start out of range", "5"]),
    ("narrow_length", lambda L: x23(L).narrow(1, 1, 5), ["exceeds dimension size"]),
    ("narrow_neg_length", lambda L: x23(L).narrow(0, 0, -1), ["length"]),
    ("narrow_0d", lambda L: L.tensor(1.0).narrow(0, 0, 1), ["0-dim"]),
    ("setitem_index", lambda L: x23(L).__setitem__((2, 0), 1.0), ["index 2 is out of bounds"]),
    ("setitem_shape", lambda L: x23(L).__setitem__(0, L.ones(2)), ["3", "2"]),
    ("setitem_str", lambda L: x23(L).__setitem__(0, "a"), ["str"]),
    ("unbind_0d", lambda L: L.tensor(1.0).unbind(), ["no dimensions"]),
    # expand
    ("expand_incompatible", lambda L: L.ones(3).expand(4), ["(4)", "(3)", "non-singleton dimension 0"]),
    ("expand_incompatible_2d", lambda L: L.ones(2, 3).expand(2, 4), ["(4)", "(3)", "dimension 1", "[2, 4]"]),
    ("expand_fewer", lambda L: L.ones(2, 3).expand(3), ["number of sizes provided (1)", "(2)"]),
    ("expand_leading_neg", lambda L: L.ones(3).expand(-1, 3), ["-1", "leading"]),
    ("broadcast_to_bad", lambda L: L.ones(3).broadcast_to((2, 4)), ["(4)", "(3)"]),
    ("expand_as_bad", lambda L: L.ones(3).expand_as(L.ones(5)), ["(5)", "(3)"]),
    # item / conversions
    ("item_multi", lambda L: L.ones(2, 3).item(), ["6 elements"]),
    ("item_empty", lambda L: L.ones(0).item(), ["0 elements"]),
    ("int_multi", lambda L: int(L.ones(2)), ["one element"]),
    ("float_multi", lambda L: float(L.ones(3)), ["one element"]),
    ("bool_multi", lambda L: bool(L.ones(2)), ["more than one value"]),
    ("bool_empty", lambda L: bool(L.ones(0)), ["no values"]),
    ("len_0d", lambda L: len(L.tensor(1.0)), ["0-d"]),
    ("iter_0d", lambda L: iter(L.tensor(1.0)), ["0-d"]),
    ("index_with_float_tensor", lambda L: [1, 2, 3][L.tensor(1.0)], ["integer"]),
    ("numpy_requires_grad", lambda L: L.ones(2, requires_grad=True).numpy(), ["detach"]),
    ("requires_grad_int", lambda L: L.ones(2, dtype=L.int64).requires_grad_(), ["floating point"]),
    ("tensor_requires_grad_int", lambda L: L.tensor([1, 2], requires_grad=True), ["floating point"]),
    # broadcasting and matmul shapes
    ("add_mismatch", lambda L: L.ones(3) + L.ones(4), ["(3)", "(4)", "non-singleton dimension 0"]),
    ("add_mismatch_2d", lambda L: L.ones(2, 3) + L.ones(3, 2), ["(3)", "(2)", "dimension 1"]),
    ("mul_mismatch", lambda L: L.ones(2, 3, 4).mul(L.ones(5, 1)), ["(4)", "(1)"] if False else ["(3)", "(5)"]),
    ("add_str", lambda L: L.ones(2) + "a", ["str"]),
    ("add_list", lambda L: L.ones(2) + [1, 2], ["list"]),
    ("mm_mismatch", lambda L: L.ones(2, 3).mm(L.ones(2, 3)), ["2x3", "2x3"]),
    ("mm_1d", lambda L: L.ones(2).mm(L.ones(2, 2)), ["matrix"]),
    ("mm_dtype", lambda L: L.ones(2, 2).mm(L.ones(2, 2, dtype=L.float64)), ["same dtype"]),
    ("matmul_mismatch", lambda L: L.ones(2, 3) @ L.ones(4, 5), ["2x3", "4x5"]),
    ("matmul_0d", lambda L: L.tensor(1.0).matmul(L.ones(2)), ["1D"]),
    ("bmm_2d", lambda L: L.ones(2, 2).bmm(L.ones(2, 2)), ["3D"]),
    ("bmm_batch", lambda L: L.ones(2, 2, 3).bmm(L.ones(3, 3, 2)), []),
    # in-place ops that cannot hold their result
    ("iadd_float_into_int", lambda L: L.zeros(3, dtype=L.int64).add_(1.5), ["Float", "Long"]),
    ("imul_float_tensor_into_int", lambda L: L.ones(2, dtype=L.int32).mul_(L.ones(2)), ["Float", "Int"]),
    ("idiv_int", lambda L: L.ones(2, dtype=L.int64).div_(2), ["Float", "Long"]),
    ("iadd_int_into_bool", lambda L: L.ones(2, dtype=L.bool).add_(1), ["Long", "Bool"]),
    ("iadd_broadcast_grows", lambda L: L.ones(3).add_(L.ones(2, 3)), ["[3]", "[2, 3]"]),
    ("iadd_expanded", lambda L: L.ones(3, 1).expand(3, 4).add_(1), ["more than one element", "clone()"]),
    ("copy_into_expanded", lambda L: L.ones(3, 1).expand(3, 4).copy_(L.zeros(3, 4)), ["more than one element"]),
    ("setitem_into_expanded", lambda L: L.ones(3, 1).expand(3, 4).__setitem__(0, 5.0), ["more than one element"]),
    ("copy_shape", lambda L: L.zeros(2, 3).copy_(L.ones(3, 2)), []),
    ("iadd_str", lambda L: L.ones(2).add_("a"), ["str"]),
    # other view-op argument errors
    ("as_strided_oob", lambda L: x23(L).as_strided((3, 3), (3, 1)), ["out of bounds", "36", "24"]),
    ("as_strided_neg_stride", lambda L: x23(L).as_strided((2,), (-1,), 2), ["Negative strides"]),
    ("as_strided_len", lambda L: x23(L).as_strided((2, 2), (1,)), ["mismatch in length of strides and shape"]),
    ("as_strided_neg_offset", lambda L: x23(L).as_strided((2,), (1,), -1), ["-1"]),
    ("permute_duplicate", lambda L: x23(L).permute(0, 0), ["duplicate"]),
    ("permute_count", lambda L: x23(L).permute(0), ["2", "1"]),
    ("split_sizes_sum", lambda L: x23(L).split([1, 1], 1), ["sum exactly to 3"]),
    ("split_negative", lambda L: x23(L).split(-1), ["-1"]),
    ("split_zero", lambda L: x23(L).split(0), ["0"]),
    ("chunk_zero", lambda L: x23(L).chunk(0), ["greater than 0"]),
    ("diagonal_same_dims", lambda L: x23(L).diagonal(0, 1, 1), ["cannot be identical", "1"]),
    ("unfold_too_big", lambda L: x23(L).unfold(1, 4, 1), ["maximum size", "3", "4"]),
    ("unfold_step_zero", lambda L: x23(L).unfold(1, 2, 0), ["step is 0"]),
    ("unfold_negative_size", lambda L: x23(L).unfold(1, -1, 1), ["-1"]),
    ("arange_zero_step", lambda L: L.arange(0, 1, 0), ["step must be nonzero"]),
    ("arange_wrong_sign", lambda L: L.arange(0, 10, -1), ["inconsistent with step sign"]),
    ("arange_int64_zero_step", lambda L: L.arange(0, 1, 0.5, dtype=L.int64), ["step must be nonzero"]),
    ("arange_inf", lambda L: L.arange(0, float("inf")), ["unsupported range"]),
    ("randint_empty_range", lambda L: L.randint(5, 2, (3,)), ["from=5", "to=2"]),
    ("rand_int_dtype", lambda L: L.rand(2, dtype=L.int64), ["Long"]),
    ("randn_int_dtype", lambda L: L.randn(2, dtype=L.int32), ["Int"]),
    ("normal_negative_std", lambda L: L.normal(0.0, -1.0, (2,)), ["std >= 0.0"]),
    # devices
    ("device_bad", lambda L: L.device("gpu"), ["gpu"]),
    ("device_bad_index", lambda L: L.device("cuda:x"), ["cuda:x"]),
    ("device_empty", lambda L: L.device(""), ["empty"]),
    ("device_negative", lambda L: L.device("cuda", -1), ["negative"]),
    ("device_double_index", lambda L: L.device("cuda:1", 1), ["index"]),
    ("device_float", lambda L: L.device(1.5), []),
    ("device_int_no_accelerator", lambda L: L.device(0), ["accelerator"]),
    ("size_float", lambda L: L.Size([2.5]), ["float"]),
]


def run(call, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001 - the exception is the result
            return e
    return None


@pytest.mark.parametrize("name,call,tokens", CASES, ids=[c[0] for c in CASES])
def test_error_matches_torch(name, call, tokens):
    te = run(call, torch)
    assert te is not None, "the reference must raise for this case"
    fe = run(call, ft)
    assert fe is not None, f"ferrotorch did not raise; PyTorch raised {type(te).__name__}: {te}"
    assert type(fe).__name__ == type(te).__name__, f"ferrotorch: {type(fe).__name__}: {fe}\nPyTorch: {type(te).__name__}: {te}"
    # Same class hierarchy (OutOfMemoryError etc. aside, these are builtins).
    for base in (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError):
        assert isinstance(fe, base) == isinstance(te, base)
    for tok in tokens:
        assert tok in str(te), f"token {tok!r} not in PyTorch's message {te}"
        assert tok in str(fe), f"token {tok!r} missing from ferrotorch's message {fe!r} (PyTorch: {te})"


def test_failed_ops_leave_tensors_untouched():
    f, t = ft.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
    for call in [lambda x: x.add_(torch.ones(4) if isinstance(x, torch.Tensor) else ft.ones(4)),
                 lambda x: x.copy_(x.new_ones(4) if hasattr(x, "new_ones") else None),
                 lambda x: x[0].fill_(10**40)]:
        for x in (f, t):
            try:
                call(x)
            except Exception:  # noqa: BLE001
                pass
    assert f.tolist() == t.tolist()
    assert f._version == t._version


def test_view_error_message_is_informative():
    with pytest.raises(RuntimeError) as fe:
        ft.arange(6.0).view(2, 3).t().view(-1)
    msg = str(fe.value)
    assert "view size is not compatible with input tensor's size and stride" in msg
    assert "Use .reshape(...) instead." in msg


NO_CRASH_SCRIPT = textwrap.dedent(
    r"""
    import itertools, sys
    import ferrotorch as ft

    x = ft.arange(24.0).view(2, 3, 4)
    values = [None, -(2**70), -(2**31), -5, -1, 0, 1, 2, 7, 2**62, 2**70, 1.5, float("nan"), float("inf"),
              "a", "", b"x", (), (1,), (-1, -1), [2, -3], [[1], [2, 3]], object(), ft.tensor(2), ft.ones(2, 2),
              slice(None, None, -1), slice(0, 10**30), Ellipsis, True, ft.float64, ft.device("cpu")]
    ops = [
        lambda v: x.view(v), lambda v: x.reshape(v), lambda v: x.expand(v), lambda v: x.permute(v),
        lambda v: x.transpose(v, 0), lambda v: x.squeeze(v), lambda v: x.unsqueeze(v), lambda v: x.narrow(0, v, 1),
        lambda v: x.narrow(v, 0, 1), lambda v: x.select(1, v), lambda v: x[v], lambda v: x[0, v],
        lambda v: x.__setitem__(v, 1.0), lambda v: x.split(v), lambda v: x.chunk(v), lambda v: x.diagonal(v),
        lambda v: x.unfold(0, v, 1), lambda v: x.unfold(2, 2, v), lambda v: x.as_strided((2, 2), (v, 1)),
        lambda v: x.as_strided(v, (1,)), lambda v: x.as_strided((2,), (1,), v), lambda v: x.flatten(v),
        lambda v: x.unflatten(0, v), lambda v: ft.tensor(v), lambda v: ft.tensor([v, 1]), lambda v: ft.zeros(v),
        lambda v: ft.full((2,), v), lambda v: ft.arange(v), lambda v: ft.arange(0, 10, v), lambda v: ft.eye(v),
        lambda v: ft.linspace(0, 1, v), lambda v: ft.randint(0, v, (2,)), lambda v: ft.randperm(v),
        lambda v: x.to(v), lambda v: x.type(v), lambda v: x.fill_(v), lambda v: x.copy_(v), lambda v: x + v,
        lambda v: x.add_(v), lambda v: x.mm(v), lambda v: ft.device(v), lambda v: ft.Size(v),
        lambda v: x.new_tensor(v) if hasattr(x, "new_tensor") else None, lambda v: ft.from_numpy(v),
        lambda v: ft.from_dlpack(v), lambda v: x.stride(v), lambda v: x.size(v), lambda v: x.item(),
        lambda v: ft.tensor(v).tolist(), lambda v: x.contiguous().view(v), lambda v: x.broadcast_to(v),
    ]
    n = 0
    for op, v in itertools.product(ops, values):
        try:
            op(v)
        except Exception:
            pass
        n += 1
    print("survived", n)
    """
)


def test_bad_inputs_never_crash_the_interpreter(tmp_path):
    script = tmp_path / "no_crash.py"
    script.write_text(NO_CRASH_SCRIPT)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "survived" in r.stdout
