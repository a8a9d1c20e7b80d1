"""Exception parity with PyTorch for the fuzz classes of issue 15's long
campaign: the order in which checks run (dim ranges before repeats, index
bounds before dtypes, dims before overlap), several ellipses in one index,
size-1 contracted dims in tensordot, early returns on empty tensors, the
kernel that reports an out-of-range index_add index, masked_fill's overflow
check on every path, and backward through in-place ops on expanded views."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import outcome

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _np(t):
    t = t.detach()
    return (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy()


def _same(fn, compare_values=True):
    """Same exception class, or the same shape/dtype/values."""
    ours, theirs = outcome(ft, fn), outcome(torch, fn)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        return
    a, b = ours[1], theirs[1]
    if isinstance(b, (tuple, list)):
        pairs = list(zip(a, b))
    else:
        pairs = [(a, b)]
    for x, y in pairs:
        if not hasattr(y, "shape"):
            assert x == y
            continue
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        if compare_values:
            np.testing.assert_array_equal(_np(x), _np(y))


# sum/mean/amax/amin/logsumexp/any/all/count_nonzero wrap every dim before looking
# for repeats; var/std/norm/flip check in order.
@pytest.mark.parametrize("fn", [
    lambda L: L.amax(L.zeros(2, 1, 2), dim=(0, 0, 3)),
    lambda L: L.amin(L.zeros(2, 1, 2), dim=(1, 1, -5)),
    lambda L: L.sum(L.zeros(2, 1, 2), dim=(-1, 2, 3), keepdim=True),
    lambda L: L.zeros(2, 3).mean(dim=(0, 0, 5)),
    lambda L: L.logsumexp(L.zeros(2, 3), dim=(1, -2, 0, -5)),
    lambda L: L.zeros(2, 3).any(dim=(0, 0, 5)),
    lambda L: L.zeros(2, 3).count_nonzero(dim=(0, 0, 5)),
    lambda L: L.zeros(2, 3).var(dim=(0, 0, 5)),
    lambda L: L.zeros(2, 3).flip((0, 0, 5)),
    lambda L: L.sum(L.zeros(2, 1, 2), dim=(0, 0)),
])
def test_reduction_dims_checked_in_pytorch_order(fn):
    _same(fn)


@pytest.mark.parametrize("index", [
    (Ellipsis, 0, Ellipsis), (Ellipsis, 0, Ellipsis, 0), (Ellipsis, Ellipsis, 0), (0, Ellipsis, Ellipsis),
    (Ellipsis, Ellipsis), (Ellipsis, [0, 1], Ellipsis), (Ellipsis, None, Ellipsis),
    (Ellipsis, Ellipsis, slice(None)), (Ellipsis, Ellipsis, None), (Ellipsis, Ellipsis, [0]),
    (slice(None), Ellipsis, Ellipsis, None), (0, 0, Ellipsis, Ellipsis, None),
])
def test_several_ellipses(index):
    def get(L):
        x = L.arange(24).reshape(2, 3, 4)
        return x[tuple(L.tensor(i) if isinstance(i, list) else i for i in index)]
    _same(get)


def test_several_ellipses_setitem():
    def f(L):
        y = L.arange(24).reshape(2, 3, 4)
        y[..., 0, ...] = -1
        return y
    _same(f)


@pytest.mark.parametrize("fn", [
    # A contracted dim of size 1 broadcasts (summed on the other side, dtype kept).
    lambda L: L.tensordot(L.ones(2, 3, dtype=L.int32), L.arange(4, dtype=L.int32).reshape(1, 4), dims=([1], [0])),
    lambda L: L.tensordot(L.arange(2.).reshape(2, 1, 1, 1), L.arange(5.).reshape(1, 5, 1, 1)),
    lambda L: L.tensordot(L.zeros(1, 2, 2, 1, dtype=L.bool), L.zeros(1, 2, 1, 1, dtype=L.bool)),
    lambda L: L.tensordot(L.zeros(2, 3), L.zeros(2, 4), dims=([-1], [0])),
])
def test_tensordot_size_one_contraction(fn):
    _same(fn)


def test_tensordot_size_one_contraction_gradient():
    a = np.random.default_rng(0).standard_normal((2, 3))
    b = np.random.default_rng(1).standard_normal((1, 4))
    grads = []
    for L in (ft, torch):
        x = L.from_numpy(a).requires_grad_()
        y = L.from_numpy(b).requires_grad_()
        L.tensordot(x, y, dims=([1], [0])).sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


@pytest.mark.parametrize("fn", [
    # dim checked before the overlap and dtype checks; an empty tensor is never scanned
    lambda L: L.zeros(1, dtype=L.int32).expand(2).cumsum_(1),
    lambda L: L.zeros(0, dtype=L.bool).cumprod_(0),
    lambda L: L.zeros(4, 1, dtype=L.bool).t().cumprod_(2),
    lambda L: L.zeros(2, dtype=L.bool).cumsum_(0),
    lambda L: L.zeros(1, dtype=L.int32).expand(2).cumsum_(0),
    # PyTorch returns early on empty tensors, before checking the dim
    lambda L: L.cummax(L.zeros(0, 1, 4), dim=-4),
    lambda L: L.cummin(L.zeros(5, 0, 3, 5, dtype=L.float16), dim=-5),
    lambda L: L.cummin(L.zeros(()), dim=-2),
    lambda L: L.roll(L.zeros(2, 0), -1, 2),
    lambda L: L.roll(L.zeros(2, 1), -1, 2),
    lambda L: L.roll(L.zeros(2, 0), [1, 2], [5]),
])
def test_cumulative_and_roll_check_order(fn):
    _same(fn)


@pytest.mark.parametrize("nd", [1, 2, 3, 4])
@pytest.mark.parametrize("alpha", [1, 2, 1.0])
@pytest.mark.parametrize("transposed", [False, True])
def test_index_add_out_of_range_error_class(nd, alpha, transposed):
    """PyTorch's scatter_add path (unscaled, first/last dim) raises RuntimeError;
    its per-index loop raises IndexError."""
    for d in range(nd):
        for inplace in (True, False):
            def f(L):
                x = L.zeros(*[3] * nd)
                if transposed:
                    x = x.transpose(0, -1)
                src = [3] * nd
                src[d] = 1
                fn = x.index_add_ if inplace else x.index_add
                return fn(d, L.tensor([3]), L.ones(*src), alpha=alpha)
            _same(f, compare_values=False)


@pytest.mark.parametrize("fn", [
    # an index into a size-0 dim fails before the dtypes are compared
    lambda L: L.zeros(0, dtype=L.int32).index_put_((L.tensor([0]),), L.tensor([1.0])),
    lambda L: L.zeros(0, 0, 4, 3, dtype=L.int32).transpose(-1, -2).index_put_(
        (L.tensor([0, 0, 0, 0, 0]),), L.tensor([710.0]), accumulate=True),
    lambda L: L.zeros(0, dtype=L.int32).index_put_((L.tensor([], dtype=L.int64),), L.tensor([1.0])),
    lambda L: L.zeros(3, dtype=L.int32).index_put_((L.tensor([5]),), L.tensor([1.0])),
    # a one-element value through a mask is masked_fill_: converted with its overflow check
    lambda L: L.zeros(4, 5, dtype=L.uint8).index_put_((L.tensor([True, False, True, False]),), L.tensor([9088091.0])),
    lambda L: L.zeros(4, 5, dtype=L.uint8).index_put_((L.tensor([True, False, True, False]),), L.tensor([200.0])),
    lambda L: L.zeros(2, 1, 4, dtype=L.float16)[::2].masked_fill_(L.ones(1, 1, 4, dtype=L.bool), 1e30),
    lambda L: L.zeros(2, 1, 4, dtype=L.float16)[::2].masked_fill_(L.zeros(1, 1, 4, dtype=L.bool), 1e30),
    lambda L: L.zeros(3, dtype=L.int8).masked_fill_(L.ones(3, dtype=L.bool), L.tensor(300)),
])
def test_index_put_and_masked_fill_check_order(fn):
    _same(fn)


def test_setitem_index_bounds_before_dtype():
    def f(L):
        y = L.zeros(0, dtype=L.bool)
        y[L.tensor([[0, 0]])] = L.tensor([5], dtype=L.int16)
    _same(f)


@pytest.mark.parametrize("op", ["fill_(1)", "zero_()", "[1:2].fill_(3)"])
def test_backward_through_inplace_on_expanded_view_fails(op):
    """PyTorch copies the view's gradient back with copy_, which refuses
    overlapping memory: the backward fails, not the forward."""
    def f(L):
        leaf = L.tensor([[-2.96]]).requires_grad_()
        t0 = leaf.clone().expand([4, 2])
        eval("t0" + ("" if op[0] == "[" else ".") + op, {"t0": t0})
        return L.autograd.grad(t0.sum(), leaf)
    _same(f)


def test_trilu_inplace_overlap_rules_match_pytorch():
    """tril_/triu_ on tensors whose elements share memory: PyTorch writes up to
    3-d tensors (and batch-packed ones) directly, and refuses the others, which
    it computes out of place and copies back."""
    rng = np.random.default_rng(0)
    for trial in range(300):
        nd = int(rng.integers(2, 6))
        shape = [int(rng.integers(1, 4)) for _ in range(nd)]
        strides = [int(rng.integers(0, 3)) for _ in range(nd)]
        n = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
        k = int(rng.integers(-2, 3))
        lower = bool(trial % 2)

        def f(L):
            t = L.arange(n, dtype=L.float32).as_strided(shape, strides)
            (t.tril_ if lower else t.triu_)(k)
            return "ok"
        ours, theirs = outcome(ft, f), outcome(torch, f)
        assert ours[0] == theirs[0], (shape, strides, k, lower, ours, theirs)


@pytest.mark.parametrize("fn", [
    # no bool instance of scatter_reduce's mean
    lambda L: L.scatter_reduce(L.tensor([True, False]), 0, L.tensor([0, 0]), L.tensor([True, False]), "mean"),
    lambda L: L.scatter_reduce(L.tensor([True, False]), 0, L.tensor([0, 0]), L.tensor([True, False]), "mean",
                               include_self=False),
    lambda L: L.scatter_reduce(L.tensor([True, False]), 0, L.tensor([0, 0]), L.tensor([True, False]), "amax"),
    lambda L: L.scatter_reduce(L.tensor([True, False])[:0], 0, L.tensor([0, 0])[:0], L.tensor([True])[:0], "mean"),
    # an empty index writes nothing and converts no value
    lambda L: L.scatter(L.zeros(3, dtype=L.uint8), 0, L.tensor([], dtype=L.int64), -1.5),
    lambda L: L.scatter(L.zeros(3, dtype=L.uint8), 0, L.tensor([0]), -1.5),
    lambda L: L.zeros(3, dtype=L.uint8).scatter_(0, L.tensor([], dtype=L.int64), 300),
    lambda L: L.zeros(1, 0, dtype=L.uint8).index_add(1, L.tensor([], dtype=L.int64), L.zeros(1, 0, dtype=L.uint8),
                                                     alpha=-1.166),
    lambda L: L.zeros(1, 2, dtype=L.uint8).index_add(1, L.tensor([], dtype=L.int64), L.zeros(1, 0, dtype=L.uint8),
                                                     alpha=-1.166),
    lambda L: L.zeros(1, 2, dtype=L.uint8).index_add_(1, L.tensor([], dtype=L.int64), L.zeros(1, 0, dtype=L.uint8),
                                                      alpha=300),
    lambda L: L.zeros(2, dtype=L.uint8).index_add(0, L.tensor([], dtype=L.int64), L.zeros(0, dtype=L.uint8),
                                                  alpha=-1.166),
    lambda L: L.zeros(2, dtype=L.uint8).index_add(0, L.tensor([1]), L.zeros(1, dtype=L.uint8), alpha=300),
])
def test_scatter_and_index_add_on_empty_or_bool(fn):
    _same(fn)


_INT_ARGS = [
    lambda L: L.tensor(2), lambda L: L.tensor([2]), lambda L: L.tensor([2, 3]), lambda L: L.tensor([[2]]),
    lambda L: L.tensor(2, dtype=L.uint8), lambda L: L.tensor([2], dtype=L.uint8), lambda L: L.tensor(True),
    lambda L: L.tensor(2.0), lambda L: L.tensor(0), lambda L: L.tensor([0]), lambda L: L.tensor([[0]], dtype=L.int16),
]
_INT_USES = [
    lambda L, x, a: x.clone().resize_(a), lambda L, x, a: x.clone().resize_(a, 2), lambda L, x, a: x.clone().resize_((a, 2)),
    lambda L, x, a: x.size(a), lambda L, x, a: x.stride(a), lambda L, x, a: L.zeros(a), lambda L, x, a: L.zeros(a, 2),
    lambda L, x, a: L.ones((a, 2)), lambda L, x, a: x.broadcast_to(a), lambda L, x, a: x.view(a),
    lambda L, x, a: x.reshape(a, 1), lambda L, x, a: x.sum(a), lambda L, x, a: x.unsqueeze(a), lambda L, x, a: x.expand(a),
]


@pytest.mark.parametrize("arg", range(len(_INT_ARGS)))
@pytest.mark.parametrize("use", range(len(_INT_USES)))
def test_tensors_as_int_arguments(arg, use):
    """PyTorch's parser: an ``int`` parameter takes only a 0-d integral tensor; a
    size list takes one-element integral tensors (a bool one is an internal
    assert, a RuntimeError); a dim list takes them as ints."""
    _same(lambda L: _INT_USES[use](L, L.zeros(2), _INT_ARGS[arg](L)), compare_values=False)  # resize_: uninitialised


@pytest.mark.parametrize("fn", [
    lambda L: L.index_add(L.tensor(5), 0, L.tensor([0, 0]), L.tensor(3)),
    lambda L: L.index_add(L.tensor(5), 0, L.tensor([0]), L.tensor(3)),
    lambda L: L.index_add(L.tensor([5, 1]), 0, L.tensor([0, 0]), L.tensor(3)),
    lambda L: L.index_add(L.tensor([5, 1]), 0, L.tensor([0]), L.tensor(3)),
])
def test_index_add_scalar_source_count(fn):
    _same(fn)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("loss,smoothing", [("cross_entropy", 0.0), ("cross_entropy", 0.5), ("nll_loss", 0.0)])
@pytest.mark.parametrize("target_shape", [(), (1,), (1, 1)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backward", [False, True])
def test_unbatched_losses_with_one_element_targets(reduction, loss, smoothing, target_shape, weighted, backward):
    """PyTorch accepts a 1-d input with a one-element 1-d target in nll_loss's
    forward but not in its backward; with label smoothing cross_entropy fails
    in the forward."""
    def f(L):
        x = L.tensor([0.02, -1.5], requires_grad=backward)
        kw = dict(weight=L.ones(2) if weighted else None, reduction=reduction)
        if smoothing:
            kw["label_smoothing"] = smoothing
        out = getattr(L.nn.functional, loss)(x, L.tensor(1).reshape(target_shape), **kw)
        return L.autograd.grad(out.sum(), x)[0] if backward else out
    ours, theirs = outcome(ft, f), outcome(torch, f)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        np.testing.assert_allclose(ours[1].detach().numpy(), theirs[1].detach().numpy(), rtol=1e-6)
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("self_", range(3))
@pytest.mark.parametrize("idx", range(5))
@pytest.mark.parametrize("src", range(5))
def test_index_copy_check_order(self_, idx, src):
    """index_copy_'s checks in PyTorch's order: index dims, a scalar source's
    index count, dimensionality (skipped when a side is 0-d), index dtype,
    dtypes, slice shapes (a 0-d side's slice is its empty shape), count."""
    def f(L):
        selfs = [L.tensor(0, dtype=L.int16), L.zeros(2, dtype=L.int16), L.zeros(2, 3, dtype=L.int16)]
        idxs = [L.tensor([], dtype=L.int64), L.tensor([0]), L.tensor([0, 1]), L.tensor([0], dtype=L.int32),
                L.tensor([[0]])]
        srcs = [L.tensor(3, dtype=L.int8), L.tensor(3, dtype=L.int16), L.tensor([3], dtype=L.int8),
                L.tensor([[3]], dtype=L.int16), L.ones(2, 3, dtype=L.int16)]
        return L.index_copy(selfs[self_], 0, idxs[idx], srcs[src])
    _same(f)


@pytest.mark.parametrize("shape", [(3,), (3, 4), (3, 4, 5), (3, 4, 5, 6), (3, 1), (1, 3), (3, 1, 5), (0, 3), (3, 0)])
@pytest.mark.parametrize("which", ["size", "negative", "zero"])
def test_index_select_out_of_range_error_class(shape, which):
    """PyTorch's index_select raises RuntimeError ("INDICES element is out of
    DATA bounds") along dim 1 of a multi-dim tensor and IndexError elsewhere."""
    for d in range(len(shape)):
        v = {"size": shape[d], "negative": -1, "zero": 0}[which]
        for dt in ("float32", "bool"):
            _same(lambda L: L.index_select(L.zeros(*shape, dtype=getattr(L, dt)), d, L.tensor([v])))


@pytest.mark.parametrize("case", [
    ([3.0], [2, 1], [0, 1], 0, True), ([-0.05, -0.46], [2, 2], [1, 0], 2, True), ([0.7], [3, 1], [0, 1], 4, False),
    ([88.0, 0.2, -88.0], [5, 1, 2], [0, 0, 2], 0, False), ([1.0, 2.0, 3.0, 4.0], [2, 2], [1, 1], 0, True),
])
def test_trilu_inplace_backward_on_overlapping_views(case):
    """PyTorch's tril_/triu_ always write (recording one in-place node); its
    backward then refuses a view whose elements share memory."""
    vals, shape, strides, k, lower = case

    def f(L):
        leaf = L.tensor(vals, dtype=L.float64).requires_grad_()
        t = leaf.clone().as_strided(shape, strides)
        (t.tril_ if lower else t.triu_)(k)
        return L.autograd.grad((t * L.arange(t.numel(), dtype=L.float64).reshape(shape)).sum(), leaf)[0]
    _same(f)


def test_max_pool_last_nan_of_a_window_wins():
    """PyTorch's max-pooling kernels keep the first maximum but move to every
    NaN: the index (and the gradient) goes to the last NaN of a window."""
    nan = float("nan")

    def f(L):
        F = L.nn.functional
        x = L.tensor([[[[1, nan], [nan, 2]]]], requires_grad=True)
        y = L.tensor([[[1, nan, 3, nan, 0, 5]]], requires_grad=True)
        z = L.tensor([[[[1, nan, nan], [nan, 2, 0], [4, nan, 1]]]], requires_grad=True)
        return [F.max_pool2d(x, 2, return_indices=True)[1], L.autograd.grad(F.max_pool2d(x, 2).sum(), x)[0],
                F.max_pool1d(y, 3, return_indices=True)[1], L.autograd.grad(F.max_pool1d(y, 3, stride=1).sum(), y)[0],
                F.adaptive_max_pool2d(z, 2, return_indices=True)[1]]
    _same(f)


@pytest.mark.parametrize("fn", [
    lambda L: L.pdist(L.ones(2, 3), L.tensor(2.0)), lambda L: L.pdist(L.ones(2, 3), 2),
    lambda L: L.pairwise_distance(L.ones(2), -2), lambda L: L.cosine_similarity(L.ones(2), 1),
    lambda L: L.nn.functional.pairwise_distance(L.ones(2), L.ones(2), p=L.tensor(2.0)),
    lambda L: L.cosine_similarity(L.ones(2), L.ones(2), dim=L.tensor(0)), lambda L: L.pdist(1),
    lambda L: L.pdist(L.ones(2, 2, 5), L.ones(2, 2, 5)),
])
def test_distance_argument_types(fn):
    _same(fn, compare_values=False)


@pytest.mark.parametrize("fn", [
    lambda L: L.lerp(L.ones(3), L.zeros(3), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.lerp(L.ones(3), L.zeros(3), L.tensor([0.5], dtype=L.float64)),
    lambda L: L.lerp(L.tensor(1.0), L.tensor(0.0), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.lerp(L.ones(3, dtype=L.bfloat16), L.zeros(3, dtype=L.bfloat16), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.lerp(L.tensor(0.0, dtype=L.bfloat16), L.tensor(-2.0, dtype=L.bfloat16), L.tensor(0.5, dtype=L.float64)),
    lambda L: L.lerp(L.tensor(0.0, dtype=L.float16), L.tensor(-2.0, dtype=L.float16), L.tensor(0.3)),
    lambda L: L.lerp(L.tensor(0.0), L.tensor(-2.0), L.tensor(0.3, dtype=L.float16)),
    lambda L: L.lerp(L.tensor(0.0), L.tensor(-2.0), L.tensor(1)),
    lambda L: L.lerp(L.ones(2), L.ones(2), L.tensor(1)),
    lambda L: L.tensor(0.0).lerp_(L.tensor(-2.0), L.tensor(0.3, dtype=L.float64)),
])
def test_lerp_zero_dim_weight_of_another_dtype(fn):
    """A 0-d weight may have any dtype (taken like a number); with 0-d start and
    end too, the result is promoted over all three."""
    _same(fn)


@pytest.mark.parametrize("groups", [
    lambda L: L.tensor(2), lambda L: L.tensor([2]), lambda L: L.ones(2, 2), lambda L: True, lambda L: L.tensor(2.0),
])
@pytest.mark.parametrize("name", ["channel_shuffle", "native_channel_shuffle"])
def test_channel_shuffle_groups_argument(groups, name):
    _same(lambda L: getattr(L, name)(L.ones(1, 4, 2), groups(L)), compare_values=False)
