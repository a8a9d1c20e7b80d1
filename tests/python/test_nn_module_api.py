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


# -- hooks -------------------------------------------------------------------------------------------


def _two_layer(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    return m


def _copy(f, t):
    f.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})


def test_full_backward_hooks_match_torch():
    t = _two_layer(torch)
    f = _two_layer(ft)
    _copy(f, t)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    logs = []
    for lib, m in ((ft, f), (torch, t)):
        log = []

        def pre(mod, grad_output, log=log):
            log.append(("pre", type(mod).__name__, [as_np(g).copy() for g in grad_output]))
            return (grad_output[0] * 2,)

        def full(mod, grad_input, grad_output, log=log):
            log.append(("full", type(mod).__name__, [None if g is None else as_np(g).copy() for g in grad_input],
                        [as_np(g).copy() for g in grad_output]))
            return (grad_input[0] + 1,) if grad_input[0] is not None else None

        m[1].register_full_backward_pre_hook(pre)
        m[1].register_full_backward_hook(full)
        m[0].register_full_backward_hook(full)  # inputs do not require grad: grad_input is (None,)
        xin = lib.from_numpy(x.copy())
        m(xin).sum().backward()
        log.append(("grads", [as_np(p.grad).copy() for p in m.parameters()]))
        logs.append(log)
    assert len(logs[0]) == len(logs[1])
    for a, b in zip(*logs):
        assert a[0] == b[0]
        for u, v in zip(a[1:], b[1:]):
            if isinstance(v, list):
                assert len(u) == len(v)
                for p, q in zip(u, v):
                    assert (p is None) == (q is None)
                    if q is not None:
                        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
            else:
                assert u == v


def test_backward_hook_input_grads_and_removal():
    res = []
    for lib in (ft, torch):
        m = lib.nn.Linear(2, 2)
        seen = []
        h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(len(gi)) or (gi[0] * 0,))
        x = lib.ones(3, 2, requires_grad=True)
        m(x).sum().backward()
        g1 = as_np(x.grad).copy()
        h.remove()
        x.grad = None
        m(x).sum().backward()
        res.append((seen, g1.tolist(), as_np(x.grad).any()))
        with pytest.raises(RuntimeError):
            m.register_backward_hook(lambda *a: None) if m.register_full_backward_hook(lambda *a: None) else None
    assert res[0] == res[1]


def test_forward_hooks_kwargs_prepend_always_call():
    res = []
    for lib in (ft, torch):
        class K(lib.nn.Module):
            def forward(self, x, scale=1.0):
                if scale == 0:
                    raise ValueError("zero")
                return x * scale

        m = K()
        order = []
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs.get("scale", 1.0) * 2}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: order.append("a") or None)
        m.register_forward_hook(lambda mod, args, out: order.append("b") or None, prepend=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("kw", kwargs["scale"])) or out + 1,
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: order.append(("always", out is None)), always_call=True)
        out = m(lib.ones(1), scale=3.0)
        val = float(as_np(out)[0])
        with pytest.raises(ValueError):
            m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 0}), with_kwargs=True,
                                        prepend=False)
            m(lib.ones(1))
        res.append((val, order))
        with pytest.raises(RuntimeError):
            m2 = K()
            m2.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
            m2(lib.ones(1))
    assert res[0] == res[1]


def test_state_dict_hooks_and_metadata():
    res = []
    for lib in (ft, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        calls = []
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            calls.append(("post", prefix, meta.get("version")))
            sd[prefix + "marker"] = lib.zeros(1)

        m[1].register_state_dict_post_hook(post)
        sd = m.state_dict()
        keys = list(sd)
        meta = {k: dict(v) for k, v in sd._metadata.items()}

        def load_pre(mod, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            calls.append(("load_pre", prefix, sorted(local_metadata)))
            state_dict.pop(prefix + "marker", None)

        def load_post(mod, keys):
            calls.append(("load_post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()

        m[1].register_load_state_dict_pre_hook(load_pre)
        m.register_load_state_dict_post_hook(load_post)
        del sd["0.bias"]
        r = m.load_state_dict(sd)
        with pytest.raises(RuntimeError) as e:
            m.register_state_dict_post_hook(lambda *a: {})
            m.state_dict()
        res.append((keys, meta, calls, repr(r), str(e.value)))
    assert res[0] == res[1]


def test_load_state_dict_errors_and_assign():
    msgs = []
    for lib in (ft, torch):
        m = lib.nn.Linear(2, 3)
        sd = {k: v.clone() for k, v in m.state_dict().items()}
        sd["weight"] = lib.zeros(3, 3)
        sd["extra.w"] = lib.zeros(1)
        del sd["bias"]
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        msgs.append(str(e.value))
        with pytest.raises(TypeError):
            m.load_state_dict([1, 2])
        r = m.load_state_dict({"weight": lib.ones(3, 2)}, strict=False)
        msgs.append(repr(r))
        new = lib.full((3, 2), 2.0)
        m.load_state_dict({"weight": new, "bias": lib.zeros(3)}, assign=True)
        msgs.append((isinstance(m.weight, lib.nn.Parameter), m.weight.requires_grad, float(as_np(m.weight)[0, 0])))
    assert msgs[:3] == msgs[3:]


def test_extra_state_round_trip():
    res = []
    for lib in (ft, torch):
        class E(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(1, 1)
                self.counter = 5

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

        a, b = E(), E()
        a.counter = 9
        sd = a.state_dict()
        b.load_state_dict(sd)
        with pytest.raises(RuntimeError):
            b.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})
        res.append((list(sd), b.counter))
        with pytest.raises(RuntimeError):
            lib.nn.Linear(1, 1).load_state_dict({**lib.nn.Linear(1, 1).state_dict(), "_extra_state": 1})
    assert res[0] == res[1]


def test_module_init_args_and_misc_api():
    for lib in (ft, torch):
        with pytest.raises(TypeError):
            lib.nn.Module(3)
        with pytest.raises(TypeError):
            lib.nn.Module(foo=1)
        m = lib.nn.Linear(2, 2)
        assert m._get_name() == "Linear"
        assert m.type(lib.float64) is m and m.weight.dtype == lib.float64
        assert m.share_memory() is m
        assert lib.nn.Module._version == 1 and lib.nn.Module.dump_patches is False
        assert m._apply(lambda t: t.float()) is m and m.bias.dtype == lib.float32


def test_batchnorm_version_and_old_checkpoints():
    res = []
    for lib in (ft, torch):
        m = lib.nn.BatchNorm1d(3)
        sd = m.state_dict()
        old = {k: v for k, v in sd.items() if k != "num_batches_tracked"}  # plain dict: no _metadata
        r = m.load_state_dict(old)
        res.append((dict(sd._metadata[""]), repr(r), int(m.num_batches_tracked)))
    assert res[0] == res[1]


def _module_classes():
    out = []
    for name in sorted(dir(ft.nn)):
        c = getattr(ft.nn, name)
        if isinstance(c, type) and issubclass(c, ft.nn.Module) and hasattr(torch.nn, name):
            out.append(name)
    return out


@pytest.mark.parametrize("name", _module_classes())
def test_default_repr_matches_torch(name):
    for args in [(), (3,), (3, 4), (3, 4, 5)]:
        try:
            t = getattr(torch.nn, name)(*args)
        except Exception:  # noqa: BLE001 - try the next arity
            continue
        f = getattr(ft.nn, name)(*args)
        assert repr(f) == repr(t)
        assert [(k, tuple(v.shape)) for k, v in f.state_dict().items() if not ft.nn.parameter.is_lazy(v)] == \
            [(k, tuple(v.shape)) for k, v in t.state_dict().items() if not torch.nn.parameter.is_lazy(v)]
        return


def test_norm_bias_flag_matches_torch():
    for name in ("BatchNorm1d", "InstanceNorm2d"):
        for lib_kw in ({"affine": True, "bias": False}, {"affine": True}):
            t = getattr(torch.nn, name)(3, **lib_kw)
            f = getattr(ft.nn, name)(3, **lib_kw)
            assert repr(f) == repr(t)
            assert list(f.state_dict()) == list(t.state_dict())


# -- lazy modules ------------------------------------------------------------------------------------

LAZY = [
    ("LazyLinear", (5,), {}, (4, 7)),
    ("LazyLinear", (3,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 9)),
    ("LazyConv2d", (4, 3), {"groups": 2, "stride": 2}, (2, 6, 7, 7)),
    ("LazyConv3d", (2, 2), {}, (3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"stride": 2, "output_padding": 1}, (1, 2, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {"affine": True}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": True}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("case", LAZY, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY)])
def test_lazy_module_matches_torch(case):
    name, args, kw, shape = case
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    t = getattr(torch.nn, name)(*args, **kw)
    f = getattr(ft.nn, name)(*args, **kw)
    assert repr(f) == repr(t)
    assert [(n, type(p).__name__) for n, p in f.named_parameters()] == \
        [(n, type(p).__name__) for n, p in t.named_parameters()]
    assert f.has_uninitialized_params() == t.has_uninitialized_params()
    yt = t(torch.from_numpy(x))
    # materialise ours from the input, then copy torch's initialised values in
    f(ft.from_numpy(x))
    assert type(f).__name__ == type(t).__name__
    assert repr(f) == repr(t)
    assert [(k, tuple(v.shape)) for k, v in f.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
    f2 = getattr(ft.nn, name)(*args, **kw)
    f2.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    assert not f2.has_uninitialized_params()
    t.eval()
    f2.eval()
    x2 = np.random.default_rng(1).standard_normal(shape).astype("float32")
    np.testing.assert_allclose(as_np(f2(ft.from_numpy(x2))), as_np(t(torch.from_numpy(x2))), rtol=1e-4, atol=1e-5)
    assert type(f2).__name__ == type(t).__name__


def test_lazy_parameter_api():
    for lib in (ft, torch):
        p = lib.nn.parameter.UninitializedParameter()
        assert lib.nn.parameter.is_lazy(p) and p.requires_grad
        with pytest.raises(RuntimeError):
            p.shape
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3) and not lib.nn.parameter.is_lazy(p)
        b = lib.nn.parameter.UninitializedBuffer()
        b.materialize(4)
        assert tuple(b.shape) == (4,)
        m = lib.nn.LazyLinear(3)
        with pytest.raises(RuntimeError):
            m(lib.ones(0, 0, dtype=lib.float32)) if False else m.weight.shape
        lin = lib.nn.Linear(2, 3)
        lazy_sd = m.state_dict()
        assert all(lib.nn.parameter.is_lazy(v) for v in lazy_sd.values())
        m.load_state_dict(lin.state_dict())
        assert tuple(m.weight.shape) == (3, 2)
        assert repr(lib.nn.parameter.UninitializedParameter()) == "<UninitializedParameter>"


def test_deepcopy_matches_torch():
    import copy

    res = []
    for lib in (ft, torch):
        shared = lib.nn.Linear(2, 2)
        m = lib.nn.Sequential(shared, lib.nn.BatchNorm1d(2), shared, lib.nn.ParameterList([lib.ones(2)]))
        m[0].weight.grad = lib.ones(2, 2)
        m.register_forward_hook(lambda *a: None)
        c = copy.deepcopy(m)
        out = [c[0] is c[2], c[0].weight is m[0].weight, type(c[0].weight).__name__, c[0].weight.requires_grad,
               c[0].weight.grad is not None, names(c.named_parameters()), len(c._forward_hooks),
               bool((c[0].weight == m[0].weight).all())]
        with lib.no_grad():
            c[0].weight.add_(1)
        out.append(bool((c[0].weight == m[0].weight).all()))
        out.append(isinstance(copy.deepcopy(lib.nn.Buffer(lib.ones(1))), lib.nn.Buffer))
        out.append(type(copy.deepcopy(lib.nn.LazyLinear(3)).weight).__name__)
        with pytest.raises(RuntimeError):
            copy.deepcopy(lib.ones(2, requires_grad=True) * 2)
        res.append(out)
    assert res[0] == res[1]


@pytest.mark.parametrize("fn", [
    lambda lib, m: m.register_buffer("a.b", lib.ones(1)),
    lambda lib, m: m.register_buffer(3, lib.ones(1)),
    lambda lib, m: m.register_buffer("weight", lib.ones(1)),
    lambda lib, m: m.register_buffer("", lib.ones(1)),
    lambda lib, m: m.register_buffer("q", 3),
    lambda lib, m: m.register_parameter("a.b", None),
    lambda lib, m: m.register_parameter("", None),
    lambda lib, m: m.register_parameter(3, None),
    lambda lib, m: m.register_parameter("training", None),
    lambda lib, m: m.register_parameter("q", lib.ones(1)),
])
def test_registration_errors_match_torch(fn):
    got = []
    for lib in (ft, torch):
        with pytest.raises(Exception) as e:
            fn(lib, lib.nn.Linear(2, 2))
        got.append((type(e.value).__name__, str(e.value)))
    assert got[0] == got[1]


def test_pickle_round_trip_matches_torch():
    import pickle

    res = []
    for lib in (ft, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.ParameterList([lib.ones(2)]),
                              lib.nn.ModuleDict({"a": lib.nn.ReLU()}), lib.nn.LazyLinear(4))
        m2 = pickle.loads(pickle.dumps(m))
        out = [repr(m2), names(m2.named_parameters()), bool((m2[0].weight == m[0].weight).all()),
               type(m2[0].weight).__name__]
        m2[4](lib.ones(2, 3))  # the lazy module still materialises after the round trip
        out.append((type(m2[4]).__name__, tuple(m2[4].weight.shape)))
        res.append(out)
    assert res[0] == res[1]


def test_setattr_slots_match_torch():
    res = []
    for lib in (ft, torch):
        out = []
        m = lib.nn.Linear(2, 2)
        for fn in (lambda: setattr(m, "weight", lib.ones(2, 2)),
                   lambda: setattr(m, "weight", 3),
                   lambda: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3),
                   lambda: setattr(m, "b2", lib.nn.Buffer(lib.ones(1))) or setattr(m, "b2", "x")):
            try:
                fn()
                out.append("ok")
            except Exception as e:  # noqa: BLE001 - compared across libraries
                out.append((type(e).__name__, str(e)))
        m.bias = None
        try:
            m.weight = lib.nn.ReLU()  # a parameter slot takes Parameters or None only
        except TypeError as e:
            out.append(str(e).split("'")[-2])  # the slot's name (the class paths differ)
        m.sub = lib.nn.ReLU()
        m.sub = lib.nn.Parameter(lib.ones(1))
        out += [names(m.named_parameters()), names(m.named_children()), names(m.named_buffers()), repr(m)]
        res.append(out)
    assert res[0] == res[1]
