"""Exception parity with PyTorch for fuzz classes of issue 15: which inputs are
errors, with which class and message — autograd on integer results, empty
norms, overlap before dtype checks, interpolate/group_norm/nll_loss argument
checks, resize_ argument parsing."""

import pytest

import ferrotorch as ft
from _parity import outcome

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


_outcome = outcome


def _same(fn, values=True):
    ours, theirs = _outcome(ft, fn), _outcome(torch, fn)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        a, b = ours[1], theirs[1]
        if hasattr(b, "shape"):
            assert tuple(a.shape) == tuple(b.shape)
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
            if values:
                assert a.reshape(-1).tolist() == b.reshape(-1).tolist()
        else:
            assert a == b
    else:
        assert ours[1] == theirs[1], (ours, theirs)


def _rg(lib, *shape):
    return lib.ones(*shape, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda L: _rg(L, 3).sum(dtype=L.int8),
    lambda L: _rg(L, 2, 3).sum(1, dtype=L.bool),
    lambda L: _rg(L, 3).cumsum(0, dtype=L.int64),
    lambda L: _rg(L, 3).cumprod(0, dtype=L.uint8),
    lambda L: _rg(L, 3).prod(dtype=L.int64),
    lambda L: _rg(L, 2, 3).prod(1, dtype=L.int32),
], ids=["sum", "sum_dim_bool", "cumsum", "cumprod", "prod", "prod_dim"])
def test_integer_result_of_a_differentiable_input(fn):
    _same(fn)


def test_integer_result_without_history_is_fine():
    _same(lambda L: L.ones(3).sum(dtype=L.int8))
    with ft.no_grad():
        ours = _rg(ft, 3).cumsum(0, dtype=ft.int64)
    with torch.no_grad():
        theirs = _rg(torch, 3).cumsum(0, dtype=torch.int64)
    assert ours.tolist() == theirs.tolist() and ours.requires_grad == theirs.requires_grad


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(0, 3).norm(p=float("inf"), dim=0),
    lambda L: L.zeros(3, 0, 3).norm(p=float("inf"), dim=-2, keepdim=True),
    lambda L: L.zeros(0, 3).norm(p=float("inf")),
    lambda L: L.linalg.vector_norm(L.zeros(0, 3), ord=float("-inf"), dim=(0, 1)),
    lambda L: L.linalg.vector_norm(L.zeros(0, 3), ord=-1.0, dim=1),
    lambda L: L.linalg.vector_norm(L.zeros(0, 3), ord=-1.0, dim=0),
], ids=["inf_dim", "inf_negative_dim", "inf_all", "neg_inf_dims", "neg_one_nonempty_dim", "neg_one_empty_dim"])
def test_norm_without_identity_on_empty(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor([True]).expand(5).abs_(),
    lambda L: L.tensor([[1, 2]], dtype=L.int16).expand(3, 2).frac_(),
    lambda L: L.tensor([[0.5, 1.5]]).expand(4, 2).bitwise_not_(),
], ids=["abs_bool", "frac_int", "bitwise_not_float"])
def test_overlap_refused_before_dtype(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 1), scale_factor=0.5, mode="linear"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 1), scale_factor=0.5, mode="nearest"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 3, 1), scale_factor=0.5, mode="bilinear"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 3, 1, 2), size=(0, 2, 2), mode="nearest"),
    lambda L: L.nn.functional.interpolate(L.ones(1, 1, 0, 1), size=(2, 2), mode="nearest"),
], ids=["linear", "nearest", "bilinear", "nearest3d", "empty_input"])
def test_interpolate_empty_sizes(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.nn.functional.group_norm(L.ones(1, 6, 1), 6),
    lambda L: L.nn.functional.group_norm(L.ones(1, 6, 1), 4),
    lambda L: L.nn.functional.group_norm(L.ones(1, 6, 1), 0),
    lambda L: L.nn.functional.group_norm(L.ones(2, 6, 1), 6),
], ids=["one_per_group", "indivisible_one_value", "zero_groups", "fine"])
def test_group_norm_values_per_channel(fn):
    _same(fn)


def _nll_weight(L, dims, ce=False, smoothing=0.0):
    x = L.ones(*dims) * 0.25
    t = L.zeros(dims[0], *dims[2:], dtype=L.int64)
    w = L.ones(dims[1], requires_grad=True)
    if ce:
        return L.nn.functional.cross_entropy(x, t, weight=w, label_smoothing=smoothing)
    return L.nn.functional.nll_loss(x, t, weight=w)


@pytest.mark.parametrize("fn", [
    lambda L: _nll_weight(L, (2, 3)),
    lambda L: _nll_weight(L, (2, 3, 4, 4)),
    lambda L: _nll_weight(L, (2, 3), ce=True),
    lambda L: _nll_weight(L, (2, 3), ce=True, smoothing=0.2),
], ids=["nll", "nll2d", "cross_entropy", "cross_entropy_smoothing"])
def test_nll_weight_requiring_grad(fn):
    _same(fn)
    with ft.no_grad():
        ours = fn(ft)
    with torch.no_grad():
        theirs = fn(torch)
    assert ours.item() == pytest.approx(theirs.item())


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(3).resize_(),
    lambda L: L.zeros(3).resize_(L.tensor([2])),
    lambda L: L.zeros(3).resize_(L.tensor([True, True, False])),
    lambda L: L.zeros(3).resize_(2.0),
    lambda L: L.zeros(3).resize_as_(3),
    lambda L: L.zeros(3).resize_(2, 3),
    lambda L: L.zeros(3).resize_((4,)),
    lambda L: L.zeros(3).resize_as_(L.zeros(2, 2)),
], ids=["none", "int_tensor", "bool_tensor", "float", "template_int", "ints", "tuple", "template"])
def test_resize_arguments(fn):
    _same(fn, values=False)  # grown storage is uninitialised in both


@pytest.mark.parametrize("fn", [
    lambda L: L.clamp(L.tensor([[2, 200]], dtype=L.uint8), min=-5, max=3.223),
    lambda L: L.clamp(L.tensor([2, 200], dtype=L.uint8), min=-5),
    lambda L: L.tensor([1.0, 5.0]).clamp(min=L.tensor([2.0], dtype=L.float64)),
    lambda L: L.tensor([1, 5], dtype=L.int32).clamp(max=2.5),
], ids=["uint8_float_max", "uint8_negative_min", "float64_bound", "int_float_max"])
def test_clamp_common_dtype_of_input_and_bounds(fn):
    ours, theirs = fn(ft), fn(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.reshape(-1).tolist() == pytest.approx(theirs.reshape(-1).tolist())


@pytest.mark.parametrize("fn", [
    lambda L: L.addmm(L.zeros(1, 1, dtype=L.bfloat16), L.zeros(1, 0, dtype=L.bool), L.zeros(0, 1, dtype=L.bool)),
    lambda L: L.addmm(L.zeros(1, 1), L.zeros(1, 2), L.zeros(2, 1, dtype=L.float64)),
    lambda L: L.addmm(L.zeros(1, 1), L.zeros(1, 2, dtype=L.float64), L.zeros(2, 1)),
    lambda L: L.addmm(L.zeros(1, 1, dtype=L.float64), L.zeros(1, 2), L.zeros(2, 1), beta=0.5),
    lambda L: L.zeros(1, 1, dtype=L.float64).addmm_(L.zeros(1, 2), L.zeros(2, 1)),
    lambda L: L.baddbmm(L.zeros(1, 1, 1, dtype=L.float16), L.zeros(1, 1, 2), L.zeros(1, 2, 1)),
    lambda L: L.baddbmm(L.zeros(1, 1, 1), L.zeros(1, 1, 2), L.zeros(1, 2, 1, dtype=L.float64)),
    lambda L: L.addbmm(L.zeros(1, 1, dtype=L.float16), L.zeros(1, 1, 2), L.zeros(1, 2, 1)),
    lambda L: L.addmv(L.zeros(1, dtype=L.float16), L.zeros(1, 2), L.zeros(2)),
    lambda L: L.zeros(1, 1, 1, dtype=L.float16).baddbmm_(L.zeros(1, 1, 2), L.zeros(1, 2, 1)),
], ids=["addmm_bool", "addmm_self_mat2", "addmm_mat1_mat2", "addmm_scaled", "addmm_", "baddbmm_input",
        "baddbmm_batch2", "addbmm", "addmv", "baddbmm_"])
def test_matrix_product_family_dtypes(fn):
    _same(fn)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "float32"])
def test_max_pool_padding_on_integers(dtype):
    def fn(L):
        t = L.tensor([[[-5, 3], [2, -3], [-4, 1], [5, 5], [1, 2], [6, 2]]]).abs().to(getattr(L, dtype))
        t = t.reshape(1, 6, 2).transpose(-1, -2)
        v, i = L.nn.functional.max_pool2d(t, 2, stride=1, padding=1, return_indices=True)
        return v.tolist(), i.tolist()
    assert fn(ft) == fn(torch)


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor([209], dtype=L.uint8).expand(5).nan_to_num_().tolist(),
    lambda L: L.nan_to_num_(L.tensor([2], dtype=L.int64).as_strided([3], [0])).tolist(),
    lambda L: L.tensor([0], dtype=L.uint8).expand(4).nan_to_num_(3).tolist(),
    lambda L: L.tensor([1.0]).expand(4).nan_to_num_(),
], ids=["uint8", "int64_function", "uint8_nan_arg", "float_still_refused"])
def test_nan_to_num_inplace_on_integer_views(fn):
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(0, 3).index_select(1, L.tensor([5])),
    lambda L: L.zeros(0, 3).index_select(1, L.tensor([1])),
    lambda L: L.zeros(0, 3).index_select(0, L.tensor([1])),
    lambda L: L.zeros(0).index_select(0, L.tensor([1])),
    lambda L: L.zeros(3, 0).index_select(0, L.tensor([7])),
    lambda L: L.zeros(0, 2).index_add(0, L.tensor([5]), L.ones(1, 2)),
    lambda L: L.zeros(0).index_add(0, L.tensor([5]), L.ones(1)),
    lambda L: L.zeros(0, 2, dtype=L.int8).index_add(0, L.tensor([5]), L.ones(1, 2, dtype=L.int8), alpha=2),
    lambda L: L.zeros(0, 2).index_add_(0, L.tensor([5]), L.ones(1, 2)),
    lambda L: L.zeros(0, 2, requires_grad=True).index_add(0, L.tensor([5]), L.ones(1, 2)).requires_grad,
], ids=["select_out_of_data", "select_ok", "select_empty_axis", "select_1d", "select_empty_other",
        "add_empty", "add_1d", "add_alpha", "add_inplace", "add_requires_grad"])
def test_index_select_add_on_empty_self(fn):
    _same(fn)


@pytest.mark.parametrize("shape,pad,mode", [
    ((0, 4, 5, 1), (1, 1, 0, 2, 1, 1), "replicate"), ((2, 0, 5, 1), (1, 1, 0, 2, 1, 1), "replicate"),
    ((0, 4, 5, 1), (1, 1, 0, 2), "replicate"), ((0, 4, 5), (1, 1, 0, 2), "replicate"),
    ((4, 0, 5), (1, 1, 0, 2), "reflect"), ((0, 4, 5), (1, 1), "reflect"), ((3, 0, 5), (1, 1), "circular"),
])
def test_pad_empty_dims(shape, pad, mode):
    _same(lambda L: L.nn.functional.pad(L.zeros(shape), pad, mode=mode))
