"""Parity of every view op with PyTorch: values, shape, strides, storage
offset, contiguity, memory sharing, ``_base``, ``_version`` and ``contiguous()``.

Each case builds the same ``arange`` tensor in ferrotorch and in PyTorch,
applies the same op to both, and compares everything PyTorch exposes about the
result.  PyTorch is the reference; without it the file is skipped.
"""

import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the reference implementation")
import ferrotorch as ft  # noqa: E402


def make(shape, dtype="float32"):
    """The same row-major ``arange`` tensor in both libraries."""
    n = math.prod(shape)
    f = ft.arange(n, dtype=getattr(ft, dtype)).reshape(shape).clone()
    t = torch.arange(n, dtype=getattr(torch, dtype)).reshape(shape).clone()
    assert f._base is None and t._base is None
    return f, t


def shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def check_meta(fv, tv):
    """Values and metadata of one result."""
    assert fv.tolist() == tv.tolist()
    assert tuple(fv.shape) == tuple(tv.shape)
    assert isinstance(fv.shape, ft.Size)
    assert fv.dim() == tv.dim()
    assert fv.numel() == tv.numel()
    assert fv.stride() == tv.stride(), (fv.stride(), tv.stride())
    assert fv.storage_offset() == tv.storage_offset()
    assert fv.is_contiguous() == tv.is_contiguous()
    assert str(fv.dtype) == str(tv.dtype)


def check_relation(fv, tv, fbase, tbase):
    """How a result relates to the tensor it was made from: shared memory,
    relative data pointer, identity and ``_base``."""
    assert shares(fv, fbase) == shares(tv, tbase)
    if tv.numel() == 0:
        # PyTorch reports a null data pointer for tensors without elements.
        assert fv.data_ptr() == tv.data_ptr() == 0
    elif shares(tv, tbase):
        assert fv.data_ptr() - fbase.data_ptr() == tv.data_ptr() - tbase.data_ptr()
        assert fv.untyped_storage().nbytes() == fbase.untyped_storage().nbytes()
    assert (fv is fbase) == (tv is tbase)
    if tv._base is None:
        assert fv._base is None
    else:
        # Views of views point at the root, which is the tensor we started from.
        assert tv._base is tbase
        assert fv._base is fbase


def as_tuple(r):
    return r if isinstance(r, (tuple, list)) else (r,)


# (id, shape, op) -- ``op(x, lib)`` must behave the same for both libraries.
CASES = [
    # view
    ("view_2d", (2, 3, 4), lambda x, L: x.view(6, 4)),
    ("view_tuple", (2, 3, 4), lambda x, L: x.view((4, 6))),
    ("view_infer", (2, 3, 4), lambda x, L: x.view(4, -1, 2)),
    ("view_flat", (2, 3, 4), lambda x, L: x.view(-1)),
    ("view_size", (2, 3, 4), lambda x, L: x.view(L.Size([3, 8]))),
    ("view_same", (2, 3), lambda x, L: x.view(2, 3)),
    ("view_unit_dims", (2, 3), lambda x, L: x.view(1, 2, 1, 3, 1)),
    ("view_0d_to_1", (), lambda x, L: x.view(1)),
    ("view_0d_to_0d", (), lambda x, L: x.view(())),
    ("view_1_to_0d", (1,), lambda x, L: x.view([])),
    ("view_empty", (0, 3), lambda x, L: x.view(3, 0)),
    ("view_empty_infer", (0, 3), lambda x, L: x.view(-1, 3, 2)),
    ("view_transposed_split", (3, 4), lambda x, L: x.t().view(2, 2, 3)),
    ("view_strided_split", (4, 6), lambda x, L: x[:, ::2].view(2, 2, 3)),
    ("view_transposed_unit", (3, 4), lambda x, L: x.t().view(4, 1, 3)),
    ("view_as", (2, 6), lambda x, L: x.view_as(L.zeros(3, 4))),
    # reshape: view when possible, copy otherwise
    ("reshape_view", (2, 3, 4), lambda x, L: x.reshape(4, 6)),
    ("reshape_tuple", (2, 3, 4), lambda x, L: x.reshape((-1,))),
    ("reshape_copy_t", (3, 4), lambda x, L: x.t().reshape(-1)),
    ("reshape_copy_step", (4, 6), lambda x, L: x[:, ::2].reshape(12)),
    ("reshape_copy_expand", (3, 1), lambda x, L: x.expand(3, 4).reshape(12)),
    ("reshape_view_expand", (3, 1), lambda x, L: x.expand(3, 4).reshape(3, 2, 2)),
    ("reshape_noncontig_view", (3, 4), lambda x, L: x.t().reshape(2, 2, 3)),
    ("reshape_0d", (), lambda x, L: x.reshape(1, 1)),
    ("reshape_slice_offset", (4, 5), lambda x, L: x[1:3].reshape(-1)),
    ("reshape_as", (2, 6), lambda x, L: x.t().reshape_as(L.zeros(3, 4))),
    ("fn_reshape", (2, 6), lambda x, L: L.reshape(x, (3, 4))),
    # flatten / unflatten
    ("flatten", (2, 3, 4), lambda x, L: x.flatten()),
    ("flatten_1", (2, 3, 4), lambda x, L: x.flatten(1)),
    ("flatten_0_1", (2, 3, 4), lambda x, L: x.flatten(0, 1)),
    ("flatten_neg", (2, 3, 4), lambda x, L: x.flatten(-2, -1)),
    ("flatten_same_dim", (2, 3, 4), lambda x, L: x.flatten(1, 1)),
    ("flatten_1d", (5,), lambda x, L: x.flatten()),
    ("flatten_0d", (), lambda x, L: x.flatten()),
    ("flatten_transposed", (3, 4), lambda x, L: x.t().flatten()),
    ("flatten_permuted_partial", (2, 3, 4), lambda x, L: x.permute(0, 2, 1).flatten(0, 1)),
    ("fn_flatten", (2, 3, 4), lambda x, L: L.flatten(x, 1)),
    ("unflatten", (2, 12), lambda x, L: x.unflatten(1, (3, 4))),
    ("unflatten_infer", (2, 12), lambda x, L: x.unflatten(1, (-1, 4))),
    ("unflatten_neg", (2, 12), lambda x, L: x.unflatten(-1, (2, 2, 3))),
    ("unflatten_list", (12,), lambda x, L: x.unflatten(0, [3, 4])),
    ("unflatten_transposed", (4, 6), lambda x, L: x.t().unflatten(0, (2, 3))),
    ("fn_unflatten", (2, 12), lambda x, L: L.unflatten(x, 1, (3, 4))),
    # transpose / t / T / mT
    ("transpose", (2, 3, 4), lambda x, L: x.transpose(0, 1)),
    ("transpose_neg", (2, 3, 4), lambda x, L: x.transpose(-1, -3)),
    ("transpose_same", (2, 3, 4), lambda x, L: x.transpose(1, 1)),
    ("transpose_0d", (), lambda x, L: x.transpose(0, -1)),
    ("transpose_unit", (1, 5), lambda x, L: x.transpose(0, 1)),
    ("swapaxes", (2, 3, 4), lambda x, L: x.swapaxes(0, 2)),
    ("swapdims", (2, 3, 4), lambda x, L: x.swapdims(1, 2)),
    ("fn_transpose", (2, 3), lambda x, L: L.transpose(x, 0, 1)),
    ("t_2d", (3, 4), lambda x, L: x.t()),
    ("t_1d", (4,), lambda x, L: x.t()),
    ("t_0d", (), lambda x, L: x.t()),
    ("t_twice", (3, 4), lambda x, L: x.t().t()),
    ("fn_t", (3, 4), lambda x, L: L.t(x)),
    ("T_2d", (3, 4), lambda x, L: x.T),
    ("T_3d", (2, 3, 4), lambda x, L: x.T),
    ("T_1d", (4,), lambda x, L: x.T),
    ("mT_2d", (3, 4), lambda x, L: x.mT),
    ("mT_3d", (2, 3, 4), lambda x, L: x.mT),
    # permute
    ("permute", (2, 3, 4), lambda x, L: x.permute(2, 0, 1)),
    ("permute_tuple", (2, 3, 4), lambda x, L: x.permute((1, 0, 2))),
    ("permute_list", (2, 3, 4), lambda x, L: x.permute([1, 2, 0])),
    ("permute_neg", (2, 3, 4), lambda x, L: x.permute(-1, 0, -2)),
    ("permute_identity", (2, 3), lambda x, L: x.permute(0, 1)),
    ("permute_0d", (), lambda x, L: x.permute(())),
    ("fn_permute", (2, 3, 4), lambda x, L: L.permute(x, (2, 1, 0))),
    # expand / expand_as / broadcast_to
    ("expand", (3, 1), lambda x, L: x.expand(3, 4)),
    ("expand_new_dims", (3, 1), lambda x, L: x.expand(2, 3, 4)),
    ("expand_keep", (3, 1), lambda x, L: x.expand(-1, 5)),
    ("expand_tuple", (1, 3), lambda x, L: x.expand((4, 3))),
    ("expand_same", (2, 3), lambda x, L: x.expand(2, 3)),
    ("expand_0d", (), lambda x, L: x.expand(2, 3)),
    ("expand_to_zero", (3, 1), lambda x, L: x.expand(3, 0)),
    ("expand_size", (3, 1), lambda x, L: x.expand(L.Size([2, 3, 2]))),
    ("expand_transposed", (1, 3), lambda x, L: x.t().expand(3, 4)),
    ("expand_as", (3, 1), lambda x, L: x.expand_as(L.zeros(2, 3, 5))),
    ("broadcast_to", (3, 1), lambda x, L: x.broadcast_to((3, 6))),
    ("broadcast_to_new", (4,), lambda x, L: x.broadcast_to((2, 3, 4))),
    ("fn_broadcast_to", (4,), lambda x, L: L.broadcast_to(x, (3, 4))),
    # squeeze / unsqueeze
    ("squeeze_all", (1, 3, 1, 2), lambda x, L: x.squeeze()),
    ("squeeze_0", (1, 3, 1, 2), lambda x, L: x.squeeze(0)),
    ("squeeze_noop", (1, 3, 1, 2), lambda x, L: x.squeeze(1)),
    ("squeeze_neg", (1, 3, 1, 2), lambda x, L: x.squeeze(-2)),
    ("squeeze_tuple", (1, 3, 1, 2), lambda x, L: x.squeeze((0, 2))),
    ("squeeze_tuple_mixed", (1, 3, 1, 2), lambda x, L: x.squeeze((1, 2, -1))),
    ("squeeze_0d", (), lambda x, L: x.squeeze()),
    ("squeeze_0d_dim", (), lambda x, L: x.squeeze(0)),
    ("squeeze_all_ones", (1, 1), lambda x, L: x.squeeze()),
    ("squeeze_dim_kw", (1, 3, 1), lambda x, L: x.squeeze(dim=2)),
    ("squeeze_transposed", (3, 1, 4), lambda x, L: x.transpose(0, 2).squeeze(1)),
    ("fn_squeeze", (1, 3, 1), lambda x, L: L.squeeze(x, 0)),
    ("unsqueeze_0", (2, 3), lambda x, L: x.unsqueeze(0)),
    ("unsqueeze_mid", (2, 3), lambda x, L: x.unsqueeze(1)),
    ("unsqueeze_end", (2, 3), lambda x, L: x.unsqueeze(2)),
    ("unsqueeze_neg", (2, 3), lambda x, L: x.unsqueeze(-1)),
    ("unsqueeze_neg_first", (2, 3), lambda x, L: x.unsqueeze(-3)),
    ("unsqueeze_0d", (), lambda x, L: x.unsqueeze(0)),
    ("unsqueeze_transposed", (3, 4), lambda x, L: x.t().unsqueeze(1)),
    ("unsqueeze_strided", (4, 6), lambda x, L: x[:, ::2].unsqueeze(2)),
    ("unsqueeze_expanded", (3, 1), lambda x, L: x.expand(3, 4).unsqueeze(1)),
    ("fn_unsqueeze", (2, 3), lambda x, L: L.unsqueeze(x, 1)),
    # narrow / select
    ("narrow", (4, 5), lambda x, L: x.narrow(0, 1, 2)),
    ("narrow_dim1", (4, 5), lambda x, L: x.narrow(1, 2, 3)),
    ("narrow_neg_start", (4, 5), lambda x, L: x.narrow(1, -2, 2)),
    ("narrow_neg_dim", (4, 5), lambda x, L: x.narrow(-1, 0, 5)),
    ("narrow_empty", (4, 5), lambda x, L: x.narrow(0, 4, 0)),
    ("narrow_tensor_start", (4, 5), lambda x, L: x.narrow(0, L.tensor(1), 2)),
    ("fn_narrow", (4, 5), lambda x, L: L.narrow(x, 1, 1, 2)),
    ("select", (3, 4), lambda x, L: x.select(0, 1)),
    ("select_dim1", (3, 4), lambda x, L: x.select(1, 2)),
    ("select_neg", (3, 4), lambda x, L: x.select(-1, -1)),
    ("select_1d", (4,), lambda x, L: x.select(0, 3)),
    ("select_transposed", (3, 4), lambda x, L: x.t().select(0, 1)),
    ("fn_select", (3, 4), lambda x, L: L.select(x, 1, 0)),
    # basic indexing
    ("idx_int", (3, 4), lambda x, L: x[1]),
    ("idx_neg_int", (3, 4), lambda x, L: x[-1]),
    ("idx_two_ints", (3, 4), lambda x, L: x[1, 2]),
    ("idx_two_ints_neg", (3, 4), lambda x, L: x[-3, -4]),
    ("idx_col", (3, 4), lambda x, L: x[:, 1]),
    ("idx_step", (10,), lambda x, L: x[::2]),
    ("idx_start_step", (10,), lambda x, L: x[1::3]),
    ("idx_start_stop_step", (10,), lambda x, L: x[2:9:3]),
    ("idx_neg_start", (10,), lambda x, L: x[-4:]),
    ("idx_neg_stop", (10,), lambda x, L: x[:-3]),
    ("idx_neg_both", (10,), lambda x, L: x[-7:-2:2]),
    ("idx_out_of_range_stop", (10,), lambda x, L: x[3:100]),
    ("idx_out_of_range_start", (10,), lambda x, L: x[-100:2]),
    ("idx_start_past_end", (10,), lambda x, L: x[20:30]),
    ("idx_empty_reversed", (10,), lambda x, L: x[7:2]),
    ("idx_big_step", (10,), lambda x, L: x[::20]),
    ("idx_2d_steps", (6, 8), lambda x, L: x[1::2, ::3]),
    ("idx_2d_stop_range", (6, 8), lambda x, L: x[:, 2:100:2]),
    ("idx_none", (3, 4), lambda x, L: x[None]),
    ("idx_none_mid", (3, 4), lambda x, L: x[:, None]),
    ("idx_none_end", (3, 4), lambda x, L: x[..., None]),
    ("idx_none_twice", (3, 4), lambda x, L: x[None, 1, None]),
    ("idx_ellipsis", (2, 3, 4), lambda x, L: x[...]),
    ("idx_ellipsis_int", (2, 3, 4), lambda x, L: x[..., 1]),
    ("idx_int_ellipsis_int", (2, 3, 4), lambda x, L: x[1, ..., 2]),
    ("idx_ellipsis_slice", (2, 3, 4), lambda x, L: x[..., 1:3, ::2]),
    ("idx_ellipsis_none", (2, 3, 4), lambda x, L: x[None, ..., None, 0]),
    ("idx_0d_ellipsis", (), lambda x, L: x[...]),
    ("idx_0d_none", (), lambda x, L: x[None]),
    ("idx_true", (3,), lambda x, L: x[True]),
    ("idx_false", (3,), lambda x, L: x[False]),
    ("idx_0d_tensor", (5,), lambda x, L: x[L.tensor(2)]),
    ("idx_transposed", (3, 4), lambda x, L: x.t()[1:, ::2]),
    ("idx_chain", (6, 8), lambda x, L: x[1:][::2][:, 3:]),
    ("idx_empty_dim", (0, 4), lambda x, L: x[:, 1:3]),
    # unbind / split / chunk
    ("unbind", (3, 4), lambda x, L: x.unbind()),
    ("unbind_1", (3, 4), lambda x, L: x.unbind(1)),
    ("unbind_neg", (2, 3, 4), lambda x, L: x.unbind(-1)),
    ("fn_unbind", (3, 2), lambda x, L: L.unbind(x, 1)),
    ("split_even", (6, 2), lambda x, L: x.split(2)),
    ("split_uneven", (7, 2), lambda x, L: x.split(3)),
    ("split_dim1", (2, 7), lambda x, L: x.split(3, dim=1)),
    ("split_big", (4, 2), lambda x, L: x.split(10)),
    ("split_sizes", (6, 2), lambda x, L: x.split([1, 2, 3])),
    ("split_sizes_zero", (6, 2), lambda x, L: x.split([0, 6, 0])),
    ("split_sizes_dim", (2, 6), lambda x, L: x.split((4, 2), -1)),
    ("split_empty_dim", (0, 3), lambda x, L: x.split(2)),
    ("fn_split", (6,), lambda x, L: L.split(x, 4)),
    ("fn_split_sizes", (6,), lambda x, L: L.split(x, [2, 4])),
    ("chunk_even", (6, 2), lambda x, L: x.chunk(3)),
    ("chunk_uneven", (7, 2), lambda x, L: x.chunk(3)),
    ("chunk_fewer", (6,), lambda x, L: x.chunk(4)),
    ("chunk_more_than_size", (3,), lambda x, L: x.chunk(5)),
    ("chunk_5_of_6", (6,), lambda x, L: x.chunk(5)),
    ("chunk_dim", (2, 5), lambda x, L: x.chunk(2, dim=1)),
    ("chunk_empty", (0,), lambda x, L: x.chunk(3)),
    ("fn_chunk", (2, 5), lambda x, L: L.chunk(x, 2, 1)),
    # diagonal
    ("diagonal", (3, 4), lambda x, L: x.diagonal()),
    ("diagonal_pos", (3, 4), lambda x, L: x.diagonal(1)),
    ("diagonal_neg", (3, 4), lambda x, L: x.diagonal(-1)),
    ("diagonal_neg_far", (3, 4), lambda x, L: x.diagonal(-2)),
    ("diagonal_too_far", (3, 4), lambda x, L: x.diagonal(5)),
    ("diagonal_too_far_neg", (3, 4), lambda x, L: x.diagonal(-3)),
    ("diagonal_3d", (2, 3, 4), lambda x, L: x.diagonal(0, 1, 2)),
    ("diagonal_3d_swapped", (2, 3, 4), lambda x, L: x.diagonal(1, 2, 0)),
    ("diagonal_3d_neg_dims", (2, 3, 4), lambda x, L: x.diagonal(offset=-1, dim1=-1, dim2=0)),
    ("diagonal_kw", (3, 3), lambda x, L: x.diagonal(dim1=1, dim2=0)),
    ("diagonal_transposed", (3, 4), lambda x, L: x.t().diagonal(1)),
    ("fn_diagonal", (3, 4), lambda x, L: L.diagonal(x, 1)),
    # unfold
    ("unfold", (7,), lambda x, L: x.unfold(0, 2, 1)),
    ("unfold_step", (7,), lambda x, L: x.unfold(0, 3, 2)),
    ("unfold_step_gt_size", (10,), lambda x, L: x.unfold(0, 2, 4)),
    ("unfold_full", (5,), lambda x, L: x.unfold(0, 5, 1)),
    ("unfold_zero_size", (5,), lambda x, L: x.unfold(0, 0, 2)),
    ("unfold_2d", (3, 8), lambda x, L: x.unfold(1, 3, 2)),
    ("unfold_neg_dim", (4, 3), lambda x, L: x.unfold(-2, 2, 1)),
    ("unfold_0d", (), lambda x, L: x.unfold(0, 1, 1)),
    ("unfold_transposed", (3, 8), lambda x, L: x.t().unfold(0, 4, 4)),
    # as_strided
    ("as_strided", (3, 4), lambda x, L: x.as_strided((2, 2), (1, 2))),
    ("as_strided_offset", (3, 4), lambda x, L: x.as_strided((2, 3), (4, 1), 5)),
    ("as_strided_overlap", (10,), lambda x, L: x.as_strided((4, 3), (1, 1))),
    ("as_strided_zero_stride", (4,), lambda x, L: x.as_strided((3, 2), (0, 1), 1)),
    ("as_strided_list", (12,), lambda x, L: x.as_strided([3, 2], [4, 2])),
    ("as_strided_0d", (5,), lambda x, L: x.as_strided((), (), 3)),
    ("as_strided_of_view", (3, 4), lambda x, L: x[1:].as_strided((2,), (1,))),
    ("as_strided_of_view_off", (3, 4), lambda x, L: x[1:].as_strided((2,), (1,), 0)),
    ("fn_as_strided", (3, 4), lambda x, L: L.as_strided(x, (2, 2), (4, 1), 1)),
    # chains of views
    ("chain_t_select", (3, 4), lambda x, L: x.t()[2]),
    ("chain_permute_narrow_view", (2, 3, 4), lambda x, L: x.permute(1, 0, 2).narrow(2, 0, 2).unsqueeze(0)),
    ("chain_expand_select", (3, 1), lambda x, L: x.expand(3, 4).select(1, 2)),
    ("chain_diag_of_expand", (3, 1), lambda x, L: x.expand(3, 3).diagonal()),
    ("chain_unfold_t", (8,), lambda x, L: x.unfold(0, 4, 2).t()),
]


def run(op, f, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(f, ft), op(t, torch)


@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_view_matches_torch(name, shape, op):
    f, t = make(shape)
    fr, tr = run(op, f, t)
    assert isinstance(fr, (tuple, list)) == isinstance(tr, (tuple, list))
    fr, tr = as_tuple(fr), as_tuple(tr)
    assert len(fr) == len(tr)
    for fv, tv in zip(fr, tr):
        check_meta(fv, tv)
        check_relation(fv, tv, f, t)


@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_writes_through_and_versions(name, shape, op):
    f, t = make(shape)
    fr, tr = run(op, f, t)
    fr, tr = as_tuple(fr), as_tuple(tr)
    # A write to the base is seen by every view of it (and not by copies).
    f.add_(100)
    t.add_(100)
    for fv, tv in zip(fr, tr):
        assert fv.tolist() == tv.tolist()
        assert fv._version == tv._version
    assert f._version == t._version
    # A write through each view is seen by the base, unless PyTorch refuses the
    # write (internal overlap), in which case ferrotorch must refuse it too.
    for fv, tv in zip(fr, tr):
        terr = ferr = None
        try:
            tv.mul_(-1)
        except RuntimeError as e:
            terr = e
        try:
            fv.mul_(-1)
        except RuntimeError as e:
            ferr = e
        assert (terr is None) == (ferr is None), (terr, ferr)
        assert f.tolist() == t.tolist()
        assert fv.tolist() == tv.tolist()
        assert fv._version == tv._version
        assert f._version == t._version


@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_contiguous_copies_only_when_needed(name, shape, op):
    f, t = make(shape)
    fr, tr = run(op, f, t)
    for fv, tv in zip(as_tuple(fr), as_tuple(tr)):
        fc, tc = fv.contiguous(), tv.contiguous()
        assert (fc is fv) == (tc is tv)
        assert shares(fc, fv) == shares(tc, tv)
        check_meta(fc, tc)
        assert fc.is_contiguous()
        if tc is not tv:
            assert fc._base is None
            # A copy owns its memory: writing to it leaves the source alone.
            before = fv.tolist()
            fc.fill_(-7)
            assert fv.tolist() == before


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_views_for_every_dtype(dtype):
    f, t = make((2, 3, 4), "int64")
    f, t = f.to(getattr(ft, dtype)), t.to(getattr(torch, dtype))
    for op in (
        lambda x: x.transpose(0, 2)[1:, ::2],
        lambda x: x.permute(1, 2, 0).unfold(1, 2, 1),
        lambda x: x.view(6, 4).diagonal(1),
        lambda x: x[:, None, 1].expand(2, 3, 4),
    ):
        fv, tv = op(f), op(t)
        check_meta(fv, tv)
        check_relation(fv, tv, f, t)
        assert fv.element_size() == tv.element_size()
        assert fv.itemsize == tv.itemsize
        assert fv.nbytes == tv.nbytes
        assert fv.data_ptr() - f.data_ptr() == tv.data_ptr() - t.data_ptr()


def test_base_is_root_through_chains():
    f, t = make((4, 6))
    fv = f.t()[1:].unsqueeze(0).view(1, 5, 4).select(0, 0)[::2]
    tv = t.t()[1:].unsqueeze(0).view(1, 5, 4).select(0, 0)[::2]
    assert tv._base is t
    assert fv._base is f
    assert f._base is None
    check_meta(fv, tv)


def test_base_of_view_of_copy():
    f, t = make((3, 4))
    fc, tc = f.t().reshape(-1), t.t().reshape(-1)
    assert tc._base is None and fc._base is None
    fv, tv = fc[2:], tc[2:]
    assert tv._base is tc
    assert fv._base is fc


def test_detach_shares_memory_and_version():
    f, t = make((3, 4))
    fd, td = f.detach(), t.detach()
    assert shares(fd, f) and shares(td, t)
    assert (fd._base is None) == (td._base is None)
    fd.add_(1)
    td.add_(1)
    assert f._version == t._version
    assert fd._version == td._version
    assert f.tolist() == t.tolist()


def test_version_bumps_for_inplace_ops_on_views():
    f, t = make((4, 5))
    fviews = [f[1], f[:, 2], f.t(), f.view(20)]
    tviews = [t[1], t[:, 2], t.t(), t.view(20)]
    steps = [
        lambda v, L: v.add_(1),
        lambda v, L: v.mul_(2),
        lambda v, L: v.sub_(1),
        lambda v, L: v.div_(2),
        lambda v, L: v.fill_(3),
        lambda v, L: v.zero_(),
        lambda v, L: v.copy_(L.ones(v.shape)),
    ]
    for i, step in enumerate(steps):
        fv, tv = fviews[i % 4], tviews[i % 4]
        step(fv, ft)
        step(tv, torch)
        assert f._version == t._version
        for a, b in zip(fviews, tviews):
            assert a._version == b._version
        assert f.tolist() == t.tolist()


def test_version_bumps_for_setitem():
    f, t = make((4, 5))
    for idx, val in [(0, 1.0), ((slice(None), 1), 2.0), ((1, 2), 5), (Ellipsis, 0.5)]:
        f[idx] = val
        t[idx] = val
        assert f._version == t._version
        assert f.tolist() == t.tolist()
    f[1:3] = ft.ones(2, 5)
    t[1:3] = torch.ones(2, 5)
    assert f._version == t._version
    f[:, 0] = ft.arange(4.0)
    t[:, 0] = torch.arange(4.0)
    assert f._version == t._version
    assert f.tolist() == t.tolist()


def test_out_of_place_ops_do_not_bump_version():
    f, t = make((3, 4))
    v_f, v_t = f[1], t[1]
    _ = f + 1, f.t().contiguous(), f.clone(), f.reshape(-1)
    _ = t + 1, t.t().contiguous(), t.clone(), t.reshape(-1)
    assert f._version == t._version == 0
    assert v_f._version == v_t._version == 0


def test_versions_are_shared_by_views_of_views():
    f, t = make((3, 4))
    fa, ta = f[1:], t[1:]
    fb, tb = fa.t(), ta.t()
    fb.add_(1)
    tb.add_(1)
    assert (f._version, fa._version, fb._version) == (t._version, ta._version, tb._version)


def test_unbind_split_results_share_storage():
    f, t = make((6, 4))
    for fparts, tparts in [
        (f.unbind(0), t.unbind(0)),
        (f.split(4), t.split(4)),
        (f.split([1, 5], 0), t.split([1, 5], 0)),
        (f.chunk(4, 1), t.chunk(4, 1)),
    ]:
        assert isinstance(fparts, tuple)
        for fp, tp in zip(fparts, tparts):
            check_meta(fp, tp)
            check_relation(fp, tp, f, t)


def test_untyped_storage():
    f, t = make((3, 4))
    for fv, tv in [(f, t), (f[1:], t[1:]), (f.t(), t.t()), (f[:, ::2], t[:, ::2])]:
        fs, ts = fv.untyped_storage(), tv.untyped_storage()
        assert fs.nbytes() == ts.nbytes() == 48
        assert fs.size() == ts.size()
        assert len(fs) == len(ts)
        assert fs.data_ptr() == f.data_ptr()
        assert fs.data_ptr() + fv.storage_offset() * fv.element_size() == fv.data_ptr()
        assert tv.data_ptr() - ts.data_ptr() == fv.data_ptr() - fs.data_ptr()
    # A copy has its own storage of exactly its size.
    fc, tc = f.t().contiguous(), t.t().contiguous()
    assert fc.untyped_storage().nbytes() == tc.untyped_storage().nbytes()
    assert fc.untyped_storage().data_ptr() != f.untyped_storage().data_ptr()
    # Bytes of the storage.
    fb, tb = ft.tensor([1, 256], dtype=ft.int16), torch.tensor([1, 256], dtype=torch.int16)
    assert [fb.untyped_storage()[i] for i in range(4)] == [tb.untyped_storage()[i] for i in range(4)]
    for dtype in ["float64", "int8", "bool", "float16"]:
        fe = ft.empty(5, dtype=getattr(ft, dtype))
        te = torch.empty(5, dtype=getattr(torch, dtype))
        assert fe.untyped_storage().nbytes() == te.untyped_storage().nbytes()
    # Empty tensors have empty storage.
    assert ft.empty(0).untyped_storage().nbytes() == torch.empty(0).untyped_storage().nbytes() == 0


def test_typed_storage():
    f, t = make((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = t[1:].storage()
    fs = f[1:].storage()
    assert fs.size() == ts.size()
    assert list(fs) == list(ts)
    assert fs.data_ptr() == f.data_ptr()


def test_data_ptr_relations():
    f, t = make((4, 5), "float64")
    for op in [lambda x: x[2], lambda x: x[:, 3], lambda x: x[1:, 2:], lambda x: x.diagonal(-1),
               lambda x: x.narrow(1, 4, 1), lambda x: x.as_strided((2,), (3,), 7)]:
        fv, tv = op(f), op(t)
        assert fv.data_ptr() - f.data_ptr() == tv.data_ptr() - t.data_ptr()
        assert fv.data_ptr() == f.data_ptr() + fv.storage_offset() * 8


def test_reshape_copy_rules_match():
    """reshape returns a view exactly when PyTorch does."""
    f, t = make((4, 6))
    sources = [
        lambda x: x,
        lambda x: x.t(),
        lambda x: x[:, ::2],
        lambda x: x[::2],
        lambda x: x[1:3, 1:5],
        lambda x: x.unsqueeze(1).expand(4, 3, 6),
        lambda x: x.view(2, 2, 6).transpose(0, 1),
    ]
    for src in sources:
        fs, ts = src(f), src(t)
        n = ts.numel()
        for shape in [(-1,), (n,), (1, n), tuple(ts.shape)[::-1], (2, -1), (-1, 2, 1)]:
            try:
                tr = ts.reshape(shape)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    fs.reshape(shape)
                continue
            fr = fs.reshape(shape)
            check_meta(fr, tr)
            check_relation(fr, tr, f, t)
            assert (fr._base is None) == (tr._base is None)


def test_view_of_expanded_and_zero_strides():
    f, t = make((3, 1))
    fe, te = f.expand(3, 4), t.expand(3, 4)
    fv, tv = fe.view(3, 2, 2), te.view(3, 2, 2)
    check_meta(fv, tv)
    with pytest.raises(RuntimeError, match="reshape"):
        fe.view(12)
    with pytest.raises(RuntimeError):
        te.view(12)


def test_size_methods():
    f, t = make((2, 3, 4))
    for d in range(-3, 3):
        assert f.size(d) == t.size(d)
        assert f.stride(d) == t.stride(d)
    assert f.size() == t.size()
    assert f.ndim == t.ndim and f.ndimension() == t.ndimension()
    assert f.nelement() == t.nelement()
    assert len(f) == len(t)
