"""torch.memory_format objects and the memory_format= argument, compared with PyTorch."""

import copy
import itertools
import pickle

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _layouts():
    shapes = [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 5), (2, 3, 1, 5), (3, 1, 1, 1), (0, 3, 4, 5), (2, 0, 4, 5),
              (2, 3, 2, 2, 3), (2, 1, 4, 1, 3), (4, 5), (3,), ()]
    out = []
    for shape in shapes:
        perms = list(itertools.permutations(range(len(shape))))
        if len(shape) == 5:
            perms = perms[::13]
        for perm in perms:
            for gap in range(len(shape) + 1):
                out.append((shape, perm, gap))
    return out


def _make(mod, shape, perm, gap):
    # Strides of ``perm``'s dimension order, with a hole after dimension ``gap`` (none when gap == ndim).
    strides, acc = [0] * len(shape), 1
    for p in reversed(perm):
        if p == gap:
            acc *= 2
        strides[p] = acc
        acc *= max(shape[p], 1)
    return mod.arange(acc * 2, dtype=mod.float32).as_strided(shape, strides)


OPS = [
    "x.contiguous(memory_format=torch.MF)",
    "x.is_contiguous(memory_format=torch.MF)",
    "x.clone(memory_format=torch.MF)",
    "torch.clone(x, memory_format=torch.MF)",
    "x.to(memory_format=torch.MF)",
    "x.to(torch.float64, memory_format=torch.MF)",
    "x.to(torch.float32, copy=True, memory_format=torch.MF)",
    "x.double(memory_format=torch.MF)",
    "x.float(memory_format=torch.MF)",
    "torch.empty_like(x, memory_format=torch.MF)",
    "torch.zeros_like(x, memory_format=torch.MF)",
    "torch.ones_like(x, dtype=torch.int64, memory_format=torch.MF)",
    "torch.full_like(x, 3, memory_format=torch.MF)",
    "torch.rand_like(x, memory_format=torch.MF)",
]


def _run(expr, x, mod):
    try:
        return eval(expr, {"x": x, "torch": mod}), None
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return None, (type(e).__name__, str(e))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op", OPS)
def test_layouts_match_torch(op, fmt):
    expr = op.replace("MF", fmt)
    for shape, perm, gap in _layouts():
        a, b = _make(torch, shape, perm, gap), _make(ft, shape, perm, gap)
        assert a.stride() == b.stride()
        ra, ea = _run(expr, a, torch)
        rb, eb = _run(expr, b, ft)
        where = (expr, shape, a.stride())
        assert ea == eb, where
        if ea:
            continue
        if isinstance(ra, bool):
            assert ra == rb, where
            continue
        assert tuple(rb.shape) == tuple(ra.shape), where
        assert rb.stride() == ra.stride(), where
        assert (rb is b) == (ra is a), where
        assert str(rb.dtype) == str(ra.dtype), where
        if "empty" not in expr and "rand" not in expr:
            assert rb.tolist() == ra.tolist(), where


def test_objects():
    for name in FORMATS:
        f = getattr(ft, name)
        assert repr(f) == repr(getattr(torch, name)) == f"torch.{name}"
        assert str(f) == str(getattr(torch, name))
        assert type(f) is ft.memory_format
        assert pickle.loads(pickle.dumps(f)) is f
        assert copy.deepcopy(f) is f and copy.copy(f) is f
    assert ft.channels_last == ft.channels_last and ft.channels_last != ft.contiguous_format
    assert ft.memory_format.__name__ == "memory_format"
    with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
        ft.memory_format()


def test_bad_memory_format_type():
    x = ft.randn(2, 3)
    for call in (lambda: x.contiguous(memory_format=1), lambda: ft.empty_like(x, memory_format="channels_last"),
                 lambda: x.clone(memory_format=3)):
        with pytest.raises(TypeError, match="argument 'memory_format' must be torch.memory_format"):
            call()


def test_channels_last_strides_and_values():
    t = torch.randn(2, 3, 4, 5)
    x = ft.tensor(t.numpy())
    for fmt in ("channels_last",):
        a = t.contiguous(memory_format=getattr(torch, fmt))
        b = x.contiguous(memory_format=getattr(ft, fmt))
        assert b.stride() == a.stride() == (60, 1, 15, 3)
        assert b.is_contiguous(memory_format=ft.channels_last) and not b.is_contiguous()
        assert b.tolist() == a.tolist()
    t5 = torch.randn(2, 3, 4, 5, 6)
    x5 = ft.tensor(t5.numpy())
    assert x5.contiguous(memory_format=ft.channels_last_3d).stride() == \
        t5.contiguous(memory_format=torch.channels_last_3d).stride()


def test_empty_and_empty_strided():
    assert ft.empty(2, 3, 4, 5, memory_format=ft.channels_last).stride() == \
        torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    assert ft.empty((2, 3, 4, 5, 6), memory_format=ft.channels_last_3d).stride() == \
        torch.empty((2, 3, 4, 5, 6), memory_format=torch.channels_last_3d).stride()
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        ft.empty(2, 3, memory_format=ft.preserve_format)
    with pytest.raises(RuntimeError, match="required rank 4 tensor"):
        ft.empty(2, 3, memory_format=ft.channels_last)
    for size, stride in (((2, 3), (1, 2)), ((2, 3, 4), (1, 8, 2)), ((0, 3), (3, 1)), ((), ())):
        a = torch.empty_strided(size, stride)
        b = ft.empty_strided(size, stride, dtype=ft.float64, requires_grad=True)
        assert b.stride() == a.stride() and tuple(b.shape) == tuple(a.shape)
        assert b.dtype == ft.float64 and b.requires_grad and b.is_leaf
        assert b.untyped_storage().nbytes() == a.untyped_storage().nbytes() * 2


def test_grad_through_format_copies():
    t = torch.randn(2, 3, 4, 5, requires_grad=True)
    w = torch.randn(2, 3, 4, 5)
    x = ft.tensor(t.detach().numpy(), requires_grad=True)
    wf = ft.tensor(w.numpy())
    for fa, fb in ((lambda v: v.contiguous(memory_format=torch.channels_last),
                    lambda v: v.contiguous(memory_format=ft.channels_last)),
                   (lambda v: v.clone(memory_format=torch.channels_last),
                    lambda v: v.clone(memory_format=ft.channels_last)),
                   (lambda v: v.to(torch.float64, memory_format=torch.channels_last),
                    lambda v: v.to(ft.float64, memory_format=ft.channels_last))):
        (fa(t) * w).sum().backward()
        (fb(x) * wf).sum().backward()
        assert ft.tensor(t.grad.numpy()).allclose(x.grad)
        t.grad = None
        x.grad = None


def test_module_to_memory_format():
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(4, 2))
    fm = ft.nn.Sequential(ft.nn.Conv2d(3, 4, 3), ft.nn.Linear(4, 2))
    tm.to(memory_format=torch.channels_last)
    assert fm.to(memory_format=ft.channels_last) is fm
    for (n, p), (_, q) in zip(tm.named_parameters(), fm.named_parameters()):
        assert q.stride() == p.stride(), n
        assert isinstance(q, ft.nn.Parameter)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ft.nn.Conv3d(2, 2, 1).to(memory_format=ft.channels_last)
    c3 = ft.nn.Conv3d(2, 2, 1).to(memory_format=ft.channels_last_3d)
    assert c3.weight.stride() == torch.nn.Conv3d(2, 2, 1).to(memory_format=torch.channels_last_3d).weight.stride()


def test_channels_last_conv_values():
    tconv = torch.nn.Conv2d(3, 4, 3)
    fconv = ft.nn.Conv2d(3, 4, 3)
    with ft.no_grad():
        fconv.weight.copy_(ft.tensor(tconv.weight.detach().numpy()))
        fconv.bias.copy_(ft.tensor(tconv.bias.detach().numpy()))
    tconv.to(memory_format=torch.channels_last)
    fconv.to(memory_format=ft.channels_last)
    t = torch.randn(2, 3, 6, 6)
    ref = tconv(t.contiguous(memory_format=torch.channels_last))
    out = fconv(ft.tensor(t.numpy()).contiguous(memory_format=ft.channels_last))
    assert out.allclose(ft.tensor(ref.detach().numpy()), atol=1e-5)


def test_empty_permuted_and_new_empty_strided():
    for size, layout in (((2, 3, 5, 7), (0, 2, 3, 1)), ((2, 0, 5, 1), (0, 2, 3, 1)), ((4, 5), (1, 0)), ((3,), (0,))):
        a = torch.empty_permuted(size, layout)
        b = ft.empty_permuted(size, layout)
        assert tuple(b.shape) == tuple(a.shape) and b.stride() == a.stride()
    assert ft.empty_permuted((2, 3), (1, 0), dtype=ft.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        ft.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="Number of dimensions in size does not match"):
        ft.empty_permuted((2, 3), (0,))
    x = ft.randn(2, 3, dtype=ft.float64)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.dtype == ft.float64 and y.stride() == (1, 2)
    assert x.new_empty_strided((2, 3), (3, 1), dtype=ft.int32).dtype == ft.int32


def test_pickle_keeps_dense_layouts():
    cases = [lambda m, x: x.contiguous(memory_format=m.channels_last), lambda m, x: x.permute(0, 2, 3, 1),
             lambda m, x: x.transpose(1, 2), lambda m, x: x]
    t = torch.randn(2, 3, 4, 5)
    for make in cases:
        a = make(torch, t)
        b = make(ft, ft.tensor(t.numpy()))
        ra, rb = pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(b))
        assert rb.stride() == ra.stride()
        assert rb.tolist() == ra.tolist()
    t5 = torch.randn(2, 3, 2, 2, 3).contiguous(memory_format=torch.channels_last_3d)
    b5 = ft.tensor(t5.contiguous().numpy()).contiguous(memory_format=ft.channels_last_3d)
    assert pickle.loads(pickle.dumps(b5)).stride() == pickle.loads(pickle.dumps(t5)).stride()
    g = ft.randn(2, 3, 4, 5).contiguous(memory_format=ft.channels_last).requires_grad_()
    assert pickle.loads(pickle.dumps(g)).requires_grad


def test_randint_like():
    t = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    x = ft.tensor(t.contiguous().numpy()).contiguous(memory_format=ft.channels_last)
    for args, kw in (((5,), {}), ((3, 5), {}), ((7,), {"dtype": "int64"}), ((2, 9), {"memory_format": "contiguous_format"})):
        ka = {k: getattr(torch, v) for k, v in kw.items()}
        kb = {k: getattr(ft, v) for k, v in kw.items()}
        a = torch.randint_like(t, *args, **ka)
        b = ft.randint_like(x, *args, **kb)
        assert str(b.dtype) == str(a.dtype) and b.stride() == a.stride()
        lo, hi = (0, args[0]) if len(args) == 1 else args
        assert float(b.min()) >= lo and float(b.max()) < hi and (b == b.round()).all()
    g = ft.Generator().manual_seed(4)
    r1 = ft.randint_like(x, 100, generator=g)
    g.manual_seed(4)
    assert ft.equal(r1, ft.randint_like(x, 100, generator=g))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        ft.randint_like(x, 5, 3)
    assert ft.randint_like(ft.randn(3), 4, requires_grad=True).requires_grad
