"""Hypothesis: random shapes and random chains of view ops, applied the same
way to a ferrotorch tensor, a NumPy array (values) and a PyTorch tensor
(strides, storage offset, contiguity, view-or-copy).

``as_strided`` is checked against ``np.lib.stride_tricks.as_strided`` on the
flat storage (strides in bytes there, in elements here).
"""

import math

import pytest

np = pytest.importorskip("numpy", reason="NumPy is the value reference")
torch = pytest.importorskip("torch", reason="PyTorch is the metadata reference")
hypothesis = pytest.importorskip("hypothesis", reason="property-based tests need hypothesis")
from hypothesis import given, settings, strategies as st, HealthCheck  # noqa: E402

import ferrotorch as ft  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


def build(shape):
    n = math.prod(shape)
    a = np.arange(n, dtype=np.float64).reshape(shape)
    f = ft.arange(n, dtype=ft.float64).reshape(shape).clone()
    t = torch.arange(n, dtype=torch.float64).reshape(shape).clone()
    return f, t, a


def factorizations(n, max_len=4):
    """Shapes whose product is n (n > 0)."""
    out = [(n,)]
    for d in range(2, n + 1):
        if n % d == 0:
            for rest in factorizations(n // d, max_len - 1) if max_len > 1 else []:
                out.append((d,) + rest)
    return out


@st.composite
def view_op(draw, shape):
    """One view op valid for ``shape``, as (name, args)."""
    nd = len(shape)
    choices = ["unsqueeze", "reshape", "expand_new"]
    if nd >= 1:
        choices += ["slice", "slice", "select", "transpose", "permute", "narrow", "unfold", "flip_t", "squeeze", "expand"]
    if nd >= 2:
        choices += ["diagonal", "mT"]
    name = draw(st.sampled_from(choices))
    if name == "slice":
        d = draw(st.integers(0, nd - 1))
        size = shape[d]
        start = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
        stop = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
        step = draw(st.integers(1, 4))
        return ("slice", (d, start, stop, step))
    if name == "select":
        cands = [d for d in range(nd) if shape[d] > 0]
        if not cands:
            return ("unsqueeze", (0,))
        d = draw(st.sampled_from(cands))
        return ("select", (d, draw(st.integers(-shape[d], shape[d] - 1))))
    if name == "transpose":
        return ("transpose", (draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))))
    if name == "permute":
        return ("permute", tuple(draw(st.permutations(range(nd)))))
    if name == "narrow":
        d = draw(st.integers(0, nd - 1))
        start = draw(st.integers(0, shape[d]))
        length = draw(st.integers(0, shape[d] - start))
        return ("narrow", (d, start, length))
    if name == "unfold":
        d = draw(st.integers(0, nd - 1))
        size = draw(st.integers(0, shape[d]))
        step = draw(st.integers(1, 3))
        return ("unfold", (d, size, step))
    if name == "flip_t":
        return ("t_like", ())
    if name == "squeeze":
        return ("squeeze", (draw(st.integers(-nd, nd - 1)),))
    if name == "unsqueeze":
        return ("unsqueeze", (draw(st.integers(-nd - 1, nd)),))
    if name == "expand":
        target = tuple(draw(st.integers(0, 3)) if s == 1 else s for s in shape)
        return ("expand", target)
    if name == "expand_new":
        lead = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
        return ("expand", lead + tuple(shape))
    if name == "diagonal":
        d1, d2 = draw(st.permutations(range(nd)))[:2]
        off = draw(st.integers(-3, 3))
        return ("diagonal", (off, d1, d2))
    if name == "mT":
        return ("mT", ())
    if name == "reshape":
        n = math.prod(shape)
        if n == 0:
            return ("reshape", tuple(shape[::-1]))
        target = draw(st.sampled_from(factorizations(n)))
        target = tuple(draw(st.permutations(target)))
        if draw(st.booleans()):
            i = draw(st.integers(0, len(target) - 1))
            target = target[:i] + (-1,) + target[i + 1:]
        return ("reshape", target)
    raise AssertionError(name)


def apply_lib(op, x):
    """The op on a ferrotorch or PyTorch tensor."""
    name, args = op
    if name == "slice":
        d, start, stop, step = args
        return x[(slice(None),) * d + (slice(start, stop, step),)]
    if name == "select":
        return x.select(*args)
    if name == "transpose":
        return x.transpose(*args)
    if name == "permute":
        return x.permute(*args)
    if name == "narrow":
        return x.narrow(*args)
    if name == "unfold":
        return x.unfold(*args)
    if name == "t_like":
        return x.t() if x.dim() <= 2 else x.transpose(0, -1)
    if name == "squeeze":
        return x.squeeze(*args)
    if name == "unsqueeze":
        return x.unsqueeze(*args)
    if name == "expand":
        return x.expand(*args)
    if name == "diagonal":
        return x.diagonal(*args)
    if name == "mT":
        return x.mT
    if name == "reshape":
        return x.reshape(*args)
    raise AssertionError(name)


def apply_np(op, a):
    """The same op in NumPy."""
    name, args = op
    if name == "slice":
        d, start, stop, step = args
        return a[(slice(None),) * d + (slice(start, stop, step),)]
    if name == "select":
        d, i = args
        return a[(slice(None),) * d + (i,)]
    if name == "transpose":
        return np.swapaxes(a, *args)
    if name == "permute":
        return np.transpose(a, args)
    if name == "narrow":
        d, start, length = args
        return a[(slice(None),) * d + (slice(start, start + length),)]
    if name == "unfold":
        d, size, step = args
        n = (a.shape[d] - size) // step + 1
        windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d) if size > 0 else None
        if size == 0:
            shape = list(a.shape)
            shape[d] = n
            return np.zeros(shape + [0])
        return np.take(windows, range(0, n * step, step), axis=d)
    if name == "t_like":
        return a.T if a.ndim <= 2 else np.swapaxes(a, 0, -1)
    if name == "squeeze":
        d = args[0] % a.ndim
        return np.squeeze(a, d) if a.shape[d] == 1 else a
    if name == "unsqueeze":
        return np.expand_dims(a, args[0] if args[0] >= 0 else args[0] + a.ndim + 1)
    if name == "expand":
        return np.broadcast_to(a, args)
    if name == "diagonal":
        off, d1, d2 = args
        return np.diagonal(a, off, d1, d2)
    if name == "mT":
        return np.swapaxes(a, -1, -2)
    if name == "reshape":
        return np.reshape(a, args)
    raise AssertionError(name)


def check_same(f, t, a, fbase, tbase):
    assert tuple(f.shape) == tuple(t.shape) == a.shape
    assert f.tolist() == a.tolist()
    assert f.stride() == t.stride()
    assert f.storage_offset() == t.storage_offset()
    assert f.is_contiguous() == t.is_contiguous()
    same_t = t.untyped_storage().data_ptr() == tbase.untyped_storage().data_ptr()
    same_f = f.untyped_storage().data_ptr() == fbase.untyped_storage().data_ptr()
    assert same_f == same_t


@SETTINGS
@given(shape=shapes, data=st.data())
def test_random_view_chains(shape, data):
    f, t, a = build(shape)
    fbase, tbase = f, t
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(view_op(tuple(t.shape)))
        f, t, a = apply_lib(op, f), apply_lib(op, t), apply_np(op, a)
        check_same(f, t, a, fbase, tbase)
    # Writing through the final view reaches the base exactly as in PyTorch
    # (or is refused the same way, for expanded views).
    try:
        t.add_(1000)
        terr = None
    except RuntimeError as e:
        terr = e
    try:
        f.add_(1000)
        ferr = None
    except RuntimeError as e:
        ferr = e
    assert (terr is None) == (ferr is None)
    assert fbase.tolist() == tbase.tolist()
    assert fbase._version == tbase._version


@st.composite
def strided_case(draw):
    n = draw(st.integers(1, 40))
    nd = draw(st.integers(0, 4))
    sizes = [draw(st.integers(0, 5)) for _ in range(nd)]
    strides = [draw(st.integers(0, 8)) for _ in range(nd)]
    # Largest element index must stay inside the storage.
    extent = sum((s - 1) * st_ for s, st_ in zip(sizes, strides) if s > 0)
    if any(s == 0 for s in sizes):
        extent = 0
    if extent >= n:
        n = extent + 1
    offset = draw(st.integers(0, n - 1 - extent))
    return n, tuple(sizes), tuple(strides), offset


@SETTINGS
@given(case=strided_case())
def test_as_strided_matches_numpy(case):
    n, sizes, strides, offset = case
    flat = np.arange(n, dtype=np.float64)
    f = ft.arange(n, dtype=ft.float64).clone()
    t = torch.arange(n, dtype=torch.float64).clone()
    fv = f.as_strided(sizes, strides, offset)
    tv = t.as_strided(sizes, strides, offset)
    av = np.lib.stride_tricks.as_strided(flat[offset:], sizes, [s * flat.itemsize for s in strides])
    assert tuple(fv.shape) == av.shape
    assert fv.tolist() == av.tolist()
    assert fv.stride() == tv.stride() and fv.storage_offset() == tv.storage_offset() == offset
    assert fv.is_contiguous() == tv.is_contiguous()
    if fv.numel():
        assert fv.data_ptr() == f.data_ptr() + offset * 8
    # A second as_strided on the view addresses the same storage.
    gv = fv.as_strided((1,), (1,), 0)
    assert gv.tolist() == [0.0]
    # Views of views of as_strided still match NumPy.
    if len(sizes) >= 2:
        fw, aw = fv.transpose(0, -1)[::2], np.swapaxes(av, 0, -1)[::2]
        assert fw.tolist() == aw.tolist()


@st.composite
def index_expr(draw, shape):
    """A basic index: ints, slices with steps, None and at most one Ellipsis."""
    items = []
    dims_left = len(shape)
    used_ellipsis = False
    d = 0
    for _ in range(draw(st.integers(0, len(shape) + 2))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            # The ellipsis covers whatever is left; stop consuming here.
            break
        if kind == "none":
            items.append(None)
            continue
        if dims_left == 0:
            continue
        size = shape[d]
        if kind == "int" and size > 0:
            items.append(draw(st.integers(-size, size - 1)))
        else:
            items.append(slice(draw(st.one_of(st.none(), st.integers(-7, 7))),
                               draw(st.one_of(st.none(), st.integers(-7, 7))),
                               draw(st.one_of(st.none(), st.integers(1, 3)))))
        d += 1
        dims_left -= 1
    if used_ellipsis:
        # Index the trailing dims after the ellipsis too.
        k = draw(st.integers(0, dims_left))
        for size in shape[len(shape) - k:]:
            items.append(slice(None, None, draw(st.integers(1, 2))) if size == 0 or draw(st.booleans())
                         else draw(st.integers(-size, size - 1)))
    return tuple(items)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_random_basic_indexing(shape, data):
    f, t, a = build(shape)
    # A random non-contiguous start half of the time.
    if len(shape) >= 2 and data.draw(st.booleans()):
        f, t, a = f.transpose(0, -1), t.transpose(0, -1), np.swapaxes(a, 0, -1)
    idx = data.draw(index_expr(tuple(t.shape)))
    fv, tv, av = f[idx], t[idx], a[idx]
    assert tuple(fv.shape) == tuple(tv.shape) == av.shape
    assert fv.tolist() == np.asarray(av).tolist()
    assert fv.stride() == tv.stride()
    assert fv.storage_offset() == tv.storage_offset()
    # Assignment through the same index writes the same elements.
    f[idx] = -1.0
    t[idx] = -1.0
    assert f.tolist() == t.tolist()


@SETTINGS
@given(shape=nonempty_shapes, data=st.data())
def test_reshape_of_non_contiguous(shape, data):
    f, t, a = build(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    f, t, a = f.permute(*perm), t.permute(*perm), np.transpose(a, perm)
    if data.draw(st.booleans()):
        d = data.draw(st.integers(0, len(shape) - 1))
        step = data.draw(st.integers(1, 3))
        sl = (slice(None),) * d + (slice(None, None, step),)
        f, t, a = f[sl], t[sl], a[sl]
    n = a.size
    target = data.draw(st.sampled_from(factorizations(n))) if n else (0,)
    target = tuple(data.draw(st.permutations(target)))
    fr, tr, ar = f.reshape(target), t.reshape(target), np.reshape(a, target)
    assert fr.tolist() == ar.tolist()
    assert tuple(fr.shape) == tuple(tr.shape)
    assert fr.stride() == tr.stride()
    # View exactly when PyTorch gives a view.
    assert (fr._base is None) == (tr._base is None)
    try:
        tv = t.view(target)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="reshape"):
            f.view(target)
    else:
        fv = f.view(target)
        assert fv.stride() == tv.stride() and fv.tolist() == ar.tolist()
    # flatten agrees too.
    assert f.flatten().tolist() == a.ravel().tolist()
    assert f.contiguous().tolist() == np.ascontiguousarray(a).tolist()
    assert f.contiguous().stride() == t.contiguous().stride()


@SETTINGS
@given(shape=shapes, data=st.data())
def test_split_chunk_unbind(shape, data):
    if not shape:
        return
    f, t, a = build(shape)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[d]
    k = data.draw(st.integers(1, 6))
    for fp, tp in [(f.split(k, d), t.split(k, d)), (f.chunk(k, d), t.chunk(k, d)), (f.unbind(d), t.unbind(d))]:
        assert len(fp) == len(tp)
        for x, y in zip(fp, tp):
            assert x.tolist() == y.tolist()
            assert x.stride() == y.stride() and x.storage_offset() == y.storage_offset()
    if size:
        cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=3)))
        sizes = [b - a_ for a_, b in zip([0] + cuts, cuts + [size])]
        fp, tp = f.split(sizes, d), t.split(sizes, d)
        assert [x.tolist() for x in fp] == [y.tolist() for y in tp]
        assert [x.storage_offset() for x in fp] == [y.storage_offset() for y in tp]
