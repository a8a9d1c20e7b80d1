"""Regression tests for the view/shape/indexing classes found by the issue-15
differential fuzz campaign, each compared with PyTorch:

* 0-d tensors and dims: ops that need a real dim (split, chunk, unflatten,
  size, stride, roll, ...) raise PyTorch's exception instead of panicking;
  dim lists on 0-d tensors reject repeats (-1 and 0 are the same dim).
* Order statistics (sort, argsort, topk, kthvalue, median, mode) keep the
  shape of inputs with a zero-size dim; 0-d inputs of masked_select,
  index_select, nonzero(as_tuple=True) and where(x) give PyTorch's shapes.
* In-place writes into tensors whose elements share memory (expanded views):
  refused with PyTorch's RuntimeError by every op PyTorch refuses, with or
  without autograd, and written position by position by the five ops PyTorch
  runs on them (fill_, zero_, masked_fill_, index_fill_, index_put_ / setitem).
* ``x **= y`` is in place.
* Value dtypes of setitem / index_put_ / index_add, int32 indices of
  index_fill / index_copy, bool and float ``alpha``.
"""

import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
import ferrotorch as ft  # noqa: E402


def outcome(lib, fn):
    """What `fn(lib)` gives: the exception class, or the structure of its result
    (shapes, dtypes, values) with tensors flattened to plain Python data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001 - the class is what we compare
            return ("raises", type(e).__name__)
    return ("ok", describe(r))


def describe(r):
    if isinstance(r, (tuple, list)):
        return [describe(x) for x in r]
    if hasattr(r, "shape") and hasattr(r, "dtype"):
        return (tuple(r.shape), str(r.dtype).split(".")[-1], r.detach().tolist())
    return r


def check(fn):
    want = outcome(torch, fn)
    got = outcome(ft, fn)
    assert got == want, f"ferrotorch {got} != torch {want}"


def S(lib, v=1.0):
    return lib.tensor(v)


# --- 0-d tensors: dims that need a real dim --------------------------------

ZERO_D = {
    "chunk": lambda t: t.chunk(t.tensor(1), 4),
    "chunk_dim-1": lambda t: S(t).chunk(2, -1),
    "split_int": lambda t: S(t).split(1),
    "split_list": lambda t: S(t).split([1]),
    "split_empty_list": lambda t: S(t).split([]),
    "torch_split": lambda t: t.split(S(t), [1]),
    "unflatten": lambda t: S(t).unflatten(0, (1,)),
    "unflatten_-1": lambda t: S(t).unflatten(-1, (1,)),
    "unflatten_empty_sizes": lambda t: S(t).unflatten(0, ()),
    "unflatten_out_of_range": lambda t: t.zeros(2).unflatten(5, (2,)),
    "size_0": lambda t: S(t).size(0),
    "size_-1": lambda t: S(t).size(-1),
    "stride_0": lambda t: S(t).stride(0),
    "roll_dim0": lambda t: S(t).roll(1, 0),
    "roll_dim-1": lambda t: S(t).roll(1, -1),
    "roll_nodim": lambda t: S(t).roll(1),
    "repeat_interleave_dim": lambda t: S(t).repeat_interleave(t.tensor([2]), 0),
    "repeat_interleave_nodim": lambda t: S(t).repeat_interleave(2),
    "take_along_dim": lambda t: t.take_along_dim(S(t), t.tensor(0), 0),
    "take_along_dim_nodim": lambda t: t.take_along_dim(S(t), t.tensor(0)),
    "flatten_1": lambda t: S(t).flatten(1),
    "flatten_0_-1": lambda t: S(t).flatten(0, -1),
    "narrow": lambda t: S(t).narrow(0, 0, 1),
    "select": lambda t: S(t).select(0, 0),
    "unbind": lambda t: S(t).unbind(0),
    "squeeze_dims_repeat": lambda t: S(t).squeeze((0, -1)),
    "squeeze_dims_repeat_1d": lambda t: t.zeros(1).squeeze((0, 0)),
    "sum_dims_repeat": lambda t: S(t).sum((0, -1)),
    "amax_dims_repeat": lambda t: S(t).amax((0, -1)),
    "mean_dims_repeat": lambda t: S(t).mean((0, -1)),
    "flip_dims_repeat": lambda t: S(t).flip(0, -1),
    "sum_dim0_keepdim": lambda t: S(t).sum(0, keepdim=True),
    "movedim_out_of_range": lambda t: t.zeros(2).movedim(3, 0),
    "movedim_repeat": lambda t: t.zeros(2, 3).movedim((0, 0), (0, 1)),
    "getitem_slice": lambda t: S(t)[0:1],
    "transpose": lambda t: S(t).transpose(0, -1),
    "unfold": lambda t: S(t).unfold(0, 1, 1),
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_zero_d_dims(name):
    check(ZERO_D[name])


# --- order statistics and 0-d / zero-size output shapes ---------------------

def _sort_family(op, shape, dim, keepdim, dtype):
    def f(t):
        x = t.zeros(shape, dtype=getattr(t, dtype))
        if op == "sort":
            return x.sort(dim, descending=True)
        if op == "argsort":
            return x.argsort(dim)
        if op == "topk0":
            return x.topk(0, dim)
        if op == "topk1":
            return x.topk(1, dim)
        if op == "kthvalue":
            return x.kthvalue(1, dim, keepdim=keepdim)
        if op == "median":
            return x.median(dim, keepdim=keepdim)
        return x.mode(dim, keepdim=keepdim)
    return f


@pytest.mark.parametrize("op", ["sort", "argsort", "topk0", "topk1", "kthvalue", "median", "mode"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0,), ()])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sort_family_zero_size_and_0d(op, shape, dim, keepdim):
    dtype = "int32" if op == "sort" else "float32"
    check(_sort_family(op, shape, dim, keepdim, dtype))


def test_kthvalue_0d_bool():
    check(lambda t: t.tensor(True).kthvalue(1, 0))


def test_sort_family_values_on_non_contiguous_input():
    def f(t):
        x = t.tensor([[3.0, 1.0, 2.0], [0.5, 5.0, -1.0]]).t()
        return [x.sort(0), x.topk(2, 1), x.kthvalue(2, 0, keepdim=True), x.median(1), x.mode(0)]
    check(f)


SHAPES_0D = {
    "masked_select_true": lambda t: S(t, 3.0).masked_select(t.tensor(True)),
    "masked_select_false": lambda t: S(t, 3.0).masked_select(t.tensor(False)),
    "masked_select_1d_mask": lambda t: S(t, 3.0).masked_select(t.tensor([True, False])),
    "masked_select_0d_mask_1d_input": lambda t: t.tensor([3.0, 4.0]).masked_select(t.tensor(True)),
    "index_select_list": lambda t: S(t).index_select(0, t.tensor([0])),
    "index_select_0d_index": lambda t: S(t).index_select(0, t.tensor(0)),
    "index_select_two": lambda t: S(t).index_select(0, t.tensor([0, 0])),
    "index_select_1d_0d_index": lambda t: t.tensor([1.0, 2.0]).index_select(0, t.tensor(1)),
    "nonzero_tuple": lambda t: S(t).nonzero(as_tuple=True),
    "nonzero_tuple_zero": lambda t: S(t, 0.0).nonzero(as_tuple=True),
    "nonzero_tuple_empty_2d": lambda t: t.zeros(2, 0).nonzero(as_tuple=True),
    "nonzero_0d": lambda t: S(t).nonzero(),
    "where_single": lambda t: t.where(S(t)),
    "where_single_zero": lambda t: t.where(S(t, 0.0)),
    "where_single_int": lambda t: t.where(t.tensor(3)),
}


@pytest.mark.parametrize("name", sorted(SHAPES_0D))
def test_zero_d_output_shapes(name):
    check(SHAPES_0D[name])


# --- in-place writes into overlapping (expanded) tensors --------------------

def _expanded(t, grad):
    if grad:
        leaf = t.zeros(1, requires_grad=True)
        b = leaf.clone()
    else:
        b = t.zeros(1)
    return b, b.expand(3)


INPLACE = {
    "add_": lambda t, e: e.add_(1),
    "mul_": lambda t, e: e.mul_(2),
    "iadd": lambda t, e: e.__iadd__(1),
    "sin_": lambda t, e: e.sin_(),
    "exp_": lambda t, e: e.exp_(),
    "neg_": lambda t, e: e.neg_(),
    "clamp_": lambda t, e: e.clamp_(0.0, 1.0),
    "addcmul_": lambda t, e: e.addcmul_(t.tensor([0.5]), t.tensor([0.5])),
    "lerp_": lambda t, e: e.lerp_(t.tensor([0.5]), 0.5),
    "pow_": lambda t, e: e.pow_(2),
    "ipow": lambda t, e: e.__ipow__(2),
    "eq_": lambda t, e: e.eq_(0.0),
    "copy_": lambda t, e: e.copy_(t.tensor([1.0, 2.0, 3.0])),
    "scatter_": lambda t, e: e.scatter_(0, t.tensor([1]), 2.0),
    "scatter_add_": lambda t, e: e.scatter_add_(0, t.tensor([1]), t.tensor([1.0])),
    "scatter_reduce_": lambda t, e: e.scatter_reduce_(0, t.tensor([1]), t.tensor([1.0]), "sum"),
    "index_add_": lambda t, e: e.index_add_(0, t.tensor([1]), t.tensor([1.0])),
    "index_copy_": lambda t, e: e.index_copy_(0, t.tensor([1]), t.tensor([1.0])),
    "masked_scatter_": lambda t, e: e.masked_scatter_(t.tensor([True, False, True]), t.tensor([1.0, 2.0, 3.0])),
    "setitem_slice": lambda t, e: e.__setitem__(slice(1, None), 2.0),
    # The five PyTorch runs on overlapping targets, writing only what they name.
    "fill_": lambda t, e: e.fill_(2.0),
    "zero_": lambda t, e: e.zero_(),
    "masked_fill_": lambda t, e: e.masked_fill_(t.tensor([True, False, True]), 2.0),
    "masked_fill_none": lambda t, e: e.masked_fill_(t.tensor([False, False, False]), 2.0),
    "index_fill_": lambda t, e: e.index_fill_(0, t.tensor([1]), 2.0),
    "index_put_": lambda t, e: e.index_put_((t.tensor([0]),), t.tensor(7.0)),
    "index_put_accumulate": lambda t, e: e.index_put_((t.tensor([0, 1]),), t.tensor(7.0), accumulate=True),
    "setitem_list": lambda t, e: e.__setitem__([0], 7.0),
    "setitem_mask": lambda t, e: e.__setitem__(t.tensor([True, False, True]), 2.0),
    "setitem_int": lambda t, e: e.__setitem__(0, 7.0),
}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_expanded_view(name, grad):
    def f(t):
        b, e = _expanded(t, grad)
        INPLACE[name](t, e)
        return b
    check(f)


def test_index_add_through_expanded_getitem_setitem():
    # `e[[0]] += 7` is getitem, add, then setitem (index_put_) into the expanded view.
    def f(t):
        leaf = t.zeros(2, requires_grad=True)
        b = leaf.clone()
        e = b.expand(3, 2)
        e[[0]] += t.tensor([7.0, 8.0])
        return b
    check(f)


def test_backward_through_overlapping_write_raises_like_pytorch():
    def f(t):
        leaf = t.zeros(1, requires_grad=True)
        b = leaf.clone()
        b.expand(3)[[0]] = 7.0
        (b * 3).sum().backward()
        return leaf.grad
    check(f)


# --- x **= y -----------------------------------------------------------------

def test_ipow_is_in_place_with_autograd():
    def f(t):
        leaf = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = leaf * 1
        y = x
        v = x._version
        x **= 3
        x.sum().backward()
        return [y is x, x._version - v, x, leaf.grad]
    check(f)


IPOW = {
    "tensor_exponent": lambda t: t.tensor([1.0, 2.0]).__ipow__(t.tensor([2.0, 3.0])),
    "int_float_exponent": lambda t: t.tensor([1, 2]).__ipow__(2.5),
    "int_negative": lambda t: t.tensor([1, 2]).__ipow__(-1),
    "leaf": lambda t: t.tensor([1.0], requires_grad=True).__ipow__(2),
    "view": lambda t: t.arange(4.0)[1:].__ipow__(2),
    "broadcast_grows": lambda t: t.tensor([2.0]).__ipow__(t.tensor([1.0, 2.0])),
}


@pytest.mark.parametrize("name", sorted(IPOW))
def test_ipow_variants(name):
    check(IPOW[name])


# --- value dtypes of index writes, index dtypes, alpha -----------------------

def _set(t, x, idx, v):
    x[idx] = v
    return x


V3 = lambda t: t.tensor([1.0, 2.0, 3.0])  # noqa: E731

DTYPES = {
    "index_put_f64": lambda t: V3(t).index_put((t.tensor([0]),), t.tensor([5.0], dtype=t.float64)),
    "index_put__f64": lambda t: V3(t).index_put_((t.tensor([0]),), t.tensor([5.0], dtype=t.float64)),
    "index_put_accumulate_f64": lambda t: V3(t).index_put((t.tensor([0]),), t.tensor([5.0], dtype=t.float64), accumulate=True),
    "index_put_mask_one_value": lambda t: V3(t).index_put((t.tensor([True, False, True]),), t.tensor([5.0], dtype=t.float64)),
    "index_put_mask_two_values": lambda t: V3(t).index_put((t.tensor([True, False, True]),), t.tensor([5.0, 6.0], dtype=t.float64)),
    "index_put_mask_accumulate": lambda t: V3(t).index_put((t.tensor([True, False, True]),), t.tensor(5.0, dtype=t.float64), accumulate=True),
    "index_put_int_value": lambda t: V3(t).index_put((t.tensor([0]),), t.tensor(5)),
    # index_put_ broadcasts its value plainly (only setitem drops leading ones);
    # the masked-fill route ignores the one-element value's shape.
    "index_put_leading_ones": lambda t: V3(t).index_put((t.tensor([0, 1]),), t.tensor([[5.0]])),
    "index_put_leading_ones_mask": lambda t: t.zeros(3, 2).index_put((t.tensor([True, False, True]), t.tensor([1])), t.tensor([[5.0]])),
    "index_put_leading_ones_mask_accumulate": lambda t: t.zeros(3, 2).index_put((t.tensor([[True, False], [False, True], [True, True]]),), t.tensor([[5.0]]), accumulate=True),
    "index_put_one_value_mask2d": lambda t: t.zeros(3, 2).index_put_((t.tensor([[True, False], [False, True], [True, True]]),), t.tensor([[5]])),
    "setitem_leading_ones": lambda t: _set(t, V3(t), [0, 1], t.tensor([[[5.0]]])),
    "setitem_tensor_f64": lambda t: _set(t, V3(t), t.tensor([0]), t.tensor([5.0], dtype=t.float64)),
    "setitem_tensor_f64_0d": lambda t: _set(t, V3(t), t.tensor([0]), t.tensor(5.5, dtype=t.float64)),
    "setitem_tensor_int": lambda t: _set(t, V3(t), t.tensor([0]), t.tensor([5])),
    "setitem_int_target_float_tensor": lambda t: _set(t, t.tensor([1, 2, 3]), t.tensor([0]), t.tensor([5.5])),
    "setitem_int_target_float_scalar": lambda t: _set(t, t.tensor([1, 2, 3]), t.tensor([0]), 5.5),
    "setitem_bool_target_int_tensor": lambda t: _set(t, t.tensor([True, False]), t.tensor([0]), t.tensor([5])),
    "setitem_f16": lambda t: _set(t, V3(t), t.tensor([0]), t.tensor([5.0], dtype=t.float16)),
    "setitem_list_f64": lambda t: _set(t, V3(t), [0, 2], t.tensor([5.5, 6.5], dtype=t.float64)),
    "setitem_slice_f64": lambda t: _set(t, V3(t), slice(0, 1), t.tensor([5.5], dtype=t.float64)),
    "setitem_int_f64": lambda t: _set(t, V3(t), 0, t.tensor(5.5, dtype=t.float64)),
    "setitem_ellipsis_f64": lambda t: _set(t, V3(t), ..., t.tensor([5.5, 6.5, 1.0], dtype=t.float64)),
    "setitem_true_f64": lambda t: _set(t, V3(t), True, t.tensor([5.0, 6.0, 7.0], dtype=t.float64)),
    "setitem_false_anything": lambda t: _set(t, V3(t), False, t.ones(5)),
    "setitem_0d_mask_f64": lambda t: _set(t, V3(t), t.tensor(True), t.tensor([5.0, 6.0, 7.0], dtype=t.float64)),
    "setitem_mask_0d_f64": lambda t: _set(t, V3(t), t.tensor([True, False, True]), t.tensor(5.5, dtype=t.float64)),
    "setitem_mask_1d_f64": lambda t: _set(t, V3(t), t.tensor([True, False, True]), t.tensor([5.5, 6.5], dtype=t.float64)),
    "setitem_mask_2d_f64": lambda t: _set(t, t.zeros(2, 2), t.tensor([[True, False], [False, True]]), t.tensor([1.0, 2.0], dtype=t.float64)),
    "setitem_mask_and_int_i64": lambda t: _set(t, t.zeros(2, 3), (t.tensor([True, False]), 1), t.tensor(5)),
    "setitem_mask_and_slice_i64": lambda t: _set(t, t.zeros(2, 3), (t.tensor([True, False]), slice(1, None)), t.tensor(5)),
    "setitem_two_masks_i64": lambda t: _set(t, t.zeros(2, 3), (t.tensor([True, False]), t.tensor([True, False, True])), t.tensor(5)),
    "setitem_ellipsis_mask_i64": lambda t: _set(t, V3(t), (..., t.tensor([True, False, True])), t.tensor([5])),
    "setitem_ellipsis_list_i64": lambda t: _set(t, V3(t), (..., [0]), t.tensor(5)),
    "index_add_f64_source": lambda t: V3(t).index_add(0, t.tensor([0]), t.tensor([2.0], dtype=t.float64)),
    "index_add_int32_index": lambda t: V3(t).index_add(0, t.tensor([0], dtype=t.int32), t.tensor([2.0])),
    "index_add_0d_self_1d_source": lambda t: S(t).index_add(0, t.tensor([0]), t.tensor([2.0])),
    "index_add_0d_self_0d_source": lambda t: S(t).index_add(0, t.tensor(0), t.tensor(2.0)),
    "index_add_1d_self_0d_source": lambda t: V3(t).index_add(0, t.tensor([0]), t.tensor(2.0)),
    "index_add_1d_self_1d_source_0d_index": lambda t: V3(t).index_add(0, t.tensor(0), t.tensor([2.0])),
    "index_add_source_dim_missing": lambda t: t.zeros(2, 3).index_add(1, t.tensor([0]), t.tensor([2.0, 3.0])),
    "index_add_slice_shape": lambda t: t.zeros(2, 3).index_add(0, t.tensor([0]), t.ones(1, 4)),
    "index_add_dim1": lambda t: t.zeros(2, 3).index_add(1, t.tensor([0]), t.tensor([[2.0], [3.0]])),
    "index_add__f64_source": lambda t: V3(t).index_add_(0, t.tensor([0]), t.tensor([2.0], dtype=t.float64)),
    "index_fill_int32": lambda t: V3(t).index_fill(0, t.tensor([0], dtype=t.int32), 2.0),
    "index_fill__int32": lambda t: V3(t).index_fill_(0, t.tensor([0], dtype=t.int32), 2.0),
    "index_fill_2d_index": lambda t: V3(t).index_fill(0, t.tensor([[0]]), 2.0),
    "index_fill_float_index": lambda t: V3(t).index_fill(0, t.tensor([0.0]), 2.0),
    "index_fill_overflow": lambda t: t.tensor([1, 2], dtype=t.int8).index_fill(0, t.tensor([0]), 300),
    "index_fill_int_float_value": lambda t: t.tensor([1, 2, 3]).index_fill(0, t.tensor([0]), 2.7),
    "index_fill_0d": lambda t: S(t).index_fill(0, t.tensor(0), 2.0),
    "index_copy_int32": lambda t: V3(t).index_copy(0, t.tensor([0], dtype=t.int32), t.tensor([2.0])),
    "index_copy_0d": lambda t: S(t).index_copy(0, t.tensor([0]), t.tensor([2.0])),
    "masked_fill_int_float": lambda t: t.tensor([1, 2]).masked_fill(t.tensor([True, False]), 2.7),
    "masked_fill__bool": lambda t: t.tensor([True, False]).masked_fill_(t.tensor([True, False]), 0),
    "masked_fill__f64_value": lambda t: V3(t).masked_fill_(t.tensor([True, False, True]), t.tensor(2.5, dtype=t.float64)),
    "masked_fill__0d": lambda t: S(t).masked_fill_(t.tensor(True), 4.0),
    "masked_fill__broadcast_mask": lambda t: t.zeros(2, 3).masked_fill_(t.tensor([True, False, True]), 4.0),
    "masked_fill__noncontiguous": lambda t: t.zeros(3, 2).t().masked_fill_(t.tensor([[True, False, True], [False, True, False]]), 4.0),
    "add_alpha_true_float": lambda t: t.add(V3(t), V3(t), alpha=True),
    "add_alpha_false_float": lambda t: t.add(V3(t), V3(t), alpha=False),
    "add_alpha_true_int": lambda t: t.add(t.tensor([1, 2]), t.tensor([1, 2]), alpha=True),
    "add_alpha_true_bool": lambda t: t.add(t.tensor([True]), t.tensor([False]), alpha=True),
    "add_alpha_true_bool_scalar": lambda t: t.tensor([True]).add(True, alpha=True),
    "sub_alpha_true": lambda t: t.sub(V3(t), V3(t), alpha=True),
    "add__alpha_true": lambda t: V3(t).add_(V3(t), alpha=True),
    "add_scalar_alpha_true": lambda t: V3(t).add(2.0, alpha=True),
    "add_alpha_float_int": lambda t: t.add(t.tensor([1, 2]), t.tensor([1, 2]), alpha=1.5),
    "add_alpha_float_int_float_other": lambda t: t.add(t.tensor([1, 2]), t.tensor([1.0, 2.0]), alpha=1.5),
    "add_alpha_int_int": lambda t: t.add(t.tensor([1, 2]), t.tensor([1, 2]), alpha=3),
}


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_index_write_dtypes_and_alpha(name):
    check(DTYPES[name])


def test_index_put_masked_fill_route_keeps_value_gradient():
    # The one-element, one-mask write converts the value but is still
    # IndexPutBackward0 for autograd (PyTorch's autograd wraps index_put_).
    def f(t):
        leaf = t.zeros(3, requires_grad=True)
        v = t.tensor([2.0], requires_grad=True)
        x = leaf.clone()
        x.index_put_((t.tensor([True, False, True]),), v)
        (x * t.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [x, leaf.grad, v.grad]
    check(f)
