"""``nn.Module`` API and containers against PyTorch: traversal order and de-duplication,
dotted-path lookups, registration errors, gradient/dtype helpers, printed trees,
``ModuleDict``/``ParameterList``/``ParameterDict`` and ``nn.Buffer``."""

from collections import OrderedDict

import numpy as np
import pytest

import ferrotorch as ft
from _parity import as_np

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def build(lib):
    nn = lib.nn
    shared = nn.Linear(3, 3)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = shared
            self.act = nn.ReLU()
            self.register_buffer("steps", lib.zeros(2))
            self.register_buffer("tmp", lib.ones(1), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x))

        def extra_repr(self):
            return "custom=1"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.b = Block()
            self.seq = nn.Sequential(shared, nn.Tanh())
            self.heads = nn.ModuleDict({"x": nn.Linear(3, 2), "y": nn.Identity()})
            self.plist = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3, 1)])
            self.pdict = nn.ParameterDict({"w": nn.Parameter(lib.ones(1, 2)), "v": lib.zeros(4)})
            self.scale = nn.Parameter(lib.ones(()))

        def forward(self, x):
            return self.heads["x"](self.seq(self.b(self.a(x)))) * self.scale

    return Net()


def names(it):
    return [n for n, _ in it]


def test_named_modules_and_members_match_torch():
    f, t = build(ft), build(torch)
    assert names(f.named_modules()) == names(t.named_modules())
    assert names(f.named_modules(remove_duplicate=False)) == names(t.named_modules(remove_duplicate=False))
    assert names(f.named_modules(prefix="root")) == names(t.named_modules(prefix="root"))
    memo_f, memo_t = {f.a.fc}, {t.a.fc}
    assert names(f.named_modules(memo=memo_f)) == names(t.named_modules(memo=memo_t))
    assert len(list(f.modules())) == len(list(t.modules()))
    assert names(f.named_parameters()) == names(t.named_parameters())
    assert names(f.named_parameters(remove_duplicate=False)) == names(t.named_parameters(remove_duplicate=False))
    assert names(f.named_parameters(prefix="p", recurse=False)) == names(t.named_parameters(prefix="p", recurse=False))
    assert names(f.named_buffers()) == names(t.named_buffers())
    assert names(f.named_buffers(remove_duplicate=False)) == names(t.named_buffers(remove_duplicate=False))
    assert names(f.named_children()) == names(t.named_children())
    assert list(f.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in f.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]


def test_repr_matches_torch():
    f, t = build(ft), build(torch)
    assert repr(f) == repr(t)
    for lib in (ft, torch):
        assert lib.nn.ParameterList().__repr__() == "ParameterList()"
    assert repr(ft.nn.ModuleDict()) == repr(torch.nn.ModuleDict())


def test_forward_and_grads_with_copied_weights():
    f, t = build(ft), build(torch)
    f.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    outs = []
    for lib, m in ((ft, f), (torch, t)):
        out = m(lib.from_numpy(x.copy()))
        out.sum().backward()
        outs.append((out, {n: p.grad for n, p in m.named_parameters()}))
    np.testing.assert_allclose(as_np(outs[0][0]), as_np(outs[1][0]), rtol=1e-5, atol=1e-6)
    for n, g in outs[1][1].items():
        gf = outs[0][1][n]
        if g is None:
            assert gf is None
        else:
            np.testing.assert_allclose(as_np(gf), as_np(g), rtol=1e-5, atol=1e-6)


def test_get_submodule_parameter_buffer():
    for lib in (ft, torch):
        m = build(lib)
        assert m.get_submodule("") is m
        assert m.get_submodule("a.fc") is m.a.fc
        assert m.get_submodule("heads.x") is m.heads["x"]
        assert m.get_parameter("a.fc.weight") is m.a.fc.weight
        assert m.get_parameter("scale") is m.scale
        assert m.get_parameter("plist.1") is m.plist[1]
        assert m.get_buffer("b.steps") is m.b.steps
    errors = [
        lambda m: m.get_submodule("a.nope"),
        lambda m: m.get_submodule("scale"),
        lambda m: m.get_parameter("a.nope"),
        lambda m: m.get_parameter("a.steps"),
        lambda m: m.get_buffer("a.fc.weight"),
        lambda m: m.get_buffer("a.zzz"),
    ]
    for fn in errors:
        got = []
        for lib in (ft, torch):
            with pytest.raises(AttributeError) as e:
                fn(build(lib))
            got.append(str(e.value))
        assert got[0] == got[1]


def test_set_submodule_and_register_module():
    for lib in (ft, torch):
        m = build(lib)
        new = lib.nn.Linear(3, 3)
        m.set_submodule("a.fc", new)
        assert m.a.fc is new
        m.register_module("extra", lib.nn.Tanh())
        assert "extra" in dict(m.named_children())
        m.set_submodule("added", lib.nn.ReLU())
        assert isinstance(m.added, lib.nn.ReLU)
    cases = [
        (lambda lib, m: m.register_module("x.y", lib.nn.ReLU()), KeyError),
        (lambda lib, m: m.register_module("", lib.nn.ReLU()), KeyError),
        (lambda lib, m: m.register_module("forward", lib.nn.ReLU()), KeyError),
        (lambda lib, m: m.add_module(3, lib.nn.ReLU()), TypeError),
        (lambda lib, m: m.add_module("q", 3), TypeError),
        (lambda lib, m: m.set_submodule("", lib.nn.ReLU()), ValueError),
        (lambda lib, m: m.set_submodule("a.fc", 3), ValueError),
        (lambda lib, m: m.set_submodule("a.nope", lib.nn.ReLU(), strict=True), AttributeError),
        (lambda lib, m: m.set_submodule("scale", lib.nn.ReLU()), AttributeError),
    ]
    for fn, exc in cases:
        got = []
        for lib in (ft, torch):
            with pytest.raises(exc) as e:
                fn(lib, build(lib))
            got.append(str(e.value))
        assert got[0] == got[1]


def test_zero_grad_and_requires_grad():
    for lib in (ft, torch):
        m = lib.nn.Linear(3, 2)
        m(lib.ones(1, 3)).sum().backward()
        m.zero_grad(set_to_none=False)
        assert m.weight.grad is not None and not as_np(m.weight.grad).any()
        m.zero_grad()
        assert m.weight.grad is None
        assert m.requires_grad_(False) is m
        assert not any(p.requires_grad for p in m.parameters())
        m.requires_grad_()
        assert all(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("cast", ["half", "bfloat16", "double", "float"])
def test_dtype_casts_match_torch(cast):
    res = []
    for lib in (ft, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        out = getattr(m, cast)()
        assert out is m
        res.append([(n, str(v.dtype)) for n, v in m.state_dict().items()])
    assert res[0] == res[1]


def test_to_empty_and_apply():
    for lib in (ft, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
        assert m.to_empty(device="cpu") is m
        assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == shapes
        assert isinstance(m[0].weight, lib.nn.Parameter)
        m.to_empty(device="cpu", recurse=False)


def test_buffer_assignment():
    for lib in (ft, torch):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(3), persistent=False)
        assert isinstance(m.a, lib.Tensor) and isinstance(m.a, lib.nn.Buffer)
        assert not isinstance(lib.ones(1), lib.nn.Buffer)
        assert names(m.named_buffers()) == ["a", "b"]
        assert list(m.state_dict()) == ["a"]
        m.a = lib.zeros(2)  # a plain tensor into an existing buffer slot stays a buffer
        assert list(m.state_dict()) == ["a"] and not as_np(m.a).any()
        with pytest.raises(TypeError):
            m.a = 3
        # Buffer keeps the tensor's requires_grad but cuts its history.
        src = lib.ones(1, requires_grad=True) * 2
        b = lib.nn.Buffer(src)
        assert b.requires_grad and b.grad_fn is None


def test_module_dict_matches_torch():
    res = []
    for lib in (ft, torch):
        nn = lib.nn
        d = nn.ModuleDict([("b", nn.ReLU()), ("a", nn.Tanh())])
        d["c"] = nn.Linear(2, 2)
        d.update(OrderedDict([("z", nn.Identity())]))
        d.update({"y": nn.Identity()})
        popped = d.pop("a")
        out = [list(d.keys()), [type(v).__name__ for v in d.values()], [k for k, _ in d.items()], len(d),
               "b" in d, "a" in d, list(iter(d)), type(popped).__name__, names(d.named_parameters()), repr(d)]
        del d["b"]
        out.append(list(d))
        d.clear()
        out.append(len(d))
        res.append(out)
        with pytest.raises(TypeError):
            nn.ModuleDict(3)
        with pytest.raises(ValueError):
            nn.ModuleDict([("a", nn.ReLU(), 1)])
    assert res[0] == res[1]


def test_parameter_list_matches_torch():
    res = []
    for lib in (ft, torch):
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3))])
        pl.append(lib.ones(4, 2))
        pl.extend([nn.Parameter(lib.ones(1))])
        pl += [lib.zeros(5)]
        pl[0] = lib.full((2,), 3.0)
        sl = pl[1:3]
        out = [len(pl), [tuple(p.shape) for p in pl], [type(p).__name__ for p in pl], names(pl.named_parameters()),
               repr(pl), type(sl).__name__, len(sl), float(as_np(pl[0])[0]), float(as_np(pl[-1]).sum()),
               all(p.requires_grad for p in pl)]
        res.append(out)
        with pytest.raises(IndexError):
            pl[10]
    assert res[0] == res[1]


def test_parameter_dict_matches_torch():
    res = []
    for lib in (ft, torch):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(3))})
        pd["c"] = lib.ones(1)
        pd.update([("d", lib.zeros(2, 2))])
        v = pd.pop("b")
        out = [list(pd.keys()), [tuple(p.shape) for p in pd.values()], names(pd.named_parameters()), repr(pd),
               "a" in pd, "b" in pd, len(pd), tuple(v.shape), type(pd["a"]).__name__, pd.get("zz") is None,
               list(pd.copy().keys()), list((pd | {"e": lib.ones(1)}).keys())]
        k, p = pd.popitem()
        out.append(k)
        res.append(out)
        with pytest.raises(TypeError):
            pd.update(3)
    assert res[0] == res[1]
