"""Op-list coverage against PyTorch: for every op of the required list, the
function, the Tensor method, the in-place ``op_`` and ``out=`` forms (where
PyTorch has them) on float32, float64, int64 and bool inputs, contiguous,
transposed (non-contiguous) and broadcast, give the same dtype and values as
PyTorch -- or raise the same exception class where PyTorch raises.

Known gaps that need the Rust core are listed in ``KNOWN_GAPS``; each is an
``xfail(strict=True)`` case so it flips when fixed, and the main cases skip
only those exact (op, form, dtype, layout) combinations.
"""

import math
import zlib

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float64", "int64", "bool")
LAYOUTS = ("C", "T", "B")  # contiguous, transposed, broadcast
FORMS = ("fn", "method", "inplace", "out")


class C:
    """One op: ``slots`` are the tensor arguments (a domain name each), ``extra``
    and ``kw`` the fixed non-tensor arguments. ``shapes`` per layout may be
    given for non-elementwise ops."""

    def __init__(self, name, slots=("any",), extra=(), kw=None, fn=None, method=None, inplace=None, shapes=None,
                 dtypes=DTYPES, layouts=LAYOUTS, tol=None, out=True, fn_name=None, bcast=None, scalar=False):
        self.name = name
        self.fn_name = fn_name or name
        self.slots = slots
        self.extra = tuple(extra)
        self.kw = kw or {}
        self.fn = fn
        self.method = method
        self.inplace = inplace
        self.shapes = shapes
        self.dtypes = dtypes
        self.layouts = layouts
        self.tol = tol
        self.out = out
        self.bcast = bcast
        if scalar:  # also with a Python number as the second argument
            self.layouts = tuple(self.layouts) + ("S",)


def _lookup(L, dotted):
    obj = L
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


# ----- inputs -----------------------------------------------------------------------


def _array(domain, shape, dtype, rng):
    n = int(np.prod(shape)) if shape else 1
    if domain == "bool" or dtype == "bool" and domain not in ("index",):
        if domain == "cond":
            return rng.random(shape) < 0.5
        if dtype == "bool" or domain == "bool":
            return rng.random(shape) < 0.5
    if domain == "cond":
        return rng.random(shape) < 0.5
    if dtype in ("int64",):
        if domain in ("pos", "ge1"):
            a = rng.integers(1, 6, shape)
        elif domain == "unit":
            a = rng.integers(-1, 2, shape)
        elif domain == "prob":
            a = rng.integers(0, 2, shape)
        elif domain == "nz":
            a = rng.integers(1, 6, shape) * rng.choice([-1, 1], shape)
        elif domain == "shift":
            a = rng.integers(0, 4, shape)
        elif domain == "distinct":
            a = rng.permutation(n).reshape(shape) - n // 2
        else:
            a = rng.integers(-5, 6, shape)
        return a.astype(np.int64)
    # floating
    if domain == "pos":
        a = rng.uniform(0.1, 3.0, shape)
    elif domain == "unit":
        a = rng.uniform(-0.9, 0.9, shape)
    elif domain == "prob":
        a = rng.uniform(0.05, 0.95, shape)
    elif domain == "ge1":
        a = rng.uniform(1.1, 4.0, shape)
    elif domain == "nz":
        a = rng.uniform(0.5, 3.0, shape) * rng.choice([-1, 1], shape)
    elif domain == "shift":
        a = rng.integers(0, 4, shape).astype(float)
    elif domain == "distinct":
        a = (rng.permutation(n).reshape(shape) - n // 2) * 0.5 + 0.125
    elif domain == "half":  # exact .5 ties for round
        a = rng.integers(-8, 8, shape) * 0.5 + rng.choice([0.0, 0.25], shape)
    elif domain == "special":
        a = rng.uniform(-3, 3, shape)
        flat = a.reshape(-1)
        flat[: 3] = [np.nan, np.inf, -np.inf][: flat.size]
    else:
        a = rng.uniform(-3.0, 3.0, shape)
    return a.astype("float32" if dtype == "bfloat16" else dtype)


def _to(L, a, transpose):
    if transpose and a.ndim >= 2:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        return L.from_numpy(a.copy()).transpose(-1, -2)
    return L.from_numpy(a.copy())


def _default_shapes(case, layout):
    k = len(case.slots)
    if layout == "S":
        return [(3, 4)] * k
    if layout == "B":
        if case.bcast is not None:
            return case.bcast
        if k == 1:
            return [("expand", (1, 4), (3, 4))]
        return [(3, 1), (4,), (3, 4)][:k]
    return [(3, 4)] * k


def make_inputs(case, dtype, layout, seed):
    """NumPy arrays plus how to turn each into a tensor (the same for both libraries)."""
    rng = np.random.default_rng(seed)
    shapes = case.shapes(layout) if case.shapes else _default_shapes(case, layout)
    specs = []
    for k, (dom, shp) in enumerate(zip(case.slots, shapes)):
        if layout == "S" and k == 1:
            v = {"int64": 2, "bool": True}.get(dtype, 2.5 if dom != "shift" else 2.0)
            if dom == "nz" and dtype == "int64":
                v = -3
            specs.append(("scalar", v, None))
        elif isinstance(shp, tuple) and shp and shp[0] == "expand":
            specs.append(("expand", _array(dom, shp[1], dtype, rng), shp[2]))
        elif dom == "index":
            specs.append(("plain", shp, None))  # an int64 index tensor given literally
        else:
            specs.append(("plain", _array(dom, shp, dtype, rng), None))
    return specs


def build(L, specs, layout, dtype=None):
    out = []
    for kind, a, target in specs:
        if kind == "scalar":
            out.append(a)
            continue
        if kind == "expand":
            t = L.from_numpy(a.copy()).expand(*target)
        elif isinstance(a, np.ndarray):
            t = _to(L, a, layout == "T")
        else:
            t = L.tensor(a, dtype=L.int64)
        if dtype == "bfloat16" and t.dtype == L.float32:
            t = t.to(L.bfloat16)
        out.append(t)
    return out


# ----- comparison -------------------------------------------------------------------


def _dt(d):
    return repr(d).split(".")[-1]


def _np(t):
    t = t.detach()
    if _dt(t.dtype) in ("bfloat16", "float16"):
        t = t.float()
    return np.asarray(t.numpy())


def compare(a, b, tol):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)), f"expected a sequence, got {type(a).__name__}"
        assert len(a) == len(b), f"{len(a)} results vs {len(b)}"
        for x, y in zip(a, b):
            compare(x, y, tol)
        return
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ft.Tensor), f"expected a Tensor, got {type(a).__name__}"
        assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} != {tuple(b.shape)}"
        assert _dt(a.dtype) == _dt(b.dtype), f"dtype {_dt(a.dtype)} != {_dt(b.dtype)}"
        x, y = _np(a), _np(b)
        if x.dtype.kind in "fc":
            rtol, atol = tol or ((1e-4, 1e-5) if x.dtype == np.float32 else (1e-9, 1e-12))
            if _dt(b.dtype) in ("float16", "bfloat16"):
                rtol, atol = 2e-2, 2e-2
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(x, y)
        return
    if isinstance(b, float) and math.isnan(b):
        assert isinstance(a, float) and math.isnan(a)
        return
    assert a == b, f"{a!r} != {b!r}"


def _run(L, form, case, specs, layout, dtype=None):
    ins = build(L, specs, layout, dtype)
    name = case.name
    if form == "fn":
        if case.fn is not None:
            return case.fn(L, *ins)
        return _lookup(L, case.fn_name)(*ins, *case.extra, **case.kw)
    if form == "method":
        if case.method is not None:
            return case.method(L, *ins)
        return getattr(ins[0], name)(*ins[1:], *case.extra, **case.kw)
    if form == "inplace":
        x = ins[0].clone()  # an expanded input would alias itself
        if layout == "T":
            x = ins[0].clone().transpose(-1, -2).contiguous().transpose(-1, -2)  # keep it strided
        if case.inplace is not None:
            r = case.inplace(L, x, *ins[1:])
        else:
            r = getattr(x, name + "_")(*ins[1:], *case.extra, **case.kw)
        assert r is x, f"{name}_ did not return self"
        return x
    if form == "out":
        template = _run(torch, "fn", case, specs, layout, dtype)
        outs = _empty_like_result(L, template)
        if case.fn is not None:
            r = case.fn(L, *ins, out=outs)
        else:
            r = _lookup(L, case.fn_name)(*ins, *case.extra, **case.kw, out=outs)
        return outs if not isinstance(outs, tuple) else tuple(outs)
    raise AssertionError(form)


def _empty_like_result(L, res):
    if isinstance(res, tuple):
        return tuple(_empty_like_result(L, r) for r in res)
    return L.empty(tuple(res.shape), dtype=getattr(L, _dt(res.dtype)))


def _torch_has(case, form):
    if form == "fn":
        try:
            _lookup(torch, case.fn_name)
            return True
        except AttributeError:
            return False
    if form == "method":
        return case.method is not None or (case.fn_name == case.name and hasattr(torch.Tensor, case.name))
    if form == "inplace":
        return case.inplace is not None or (case.fn_name == case.name and hasattr(torch.Tensor, case.name + "_"))
    if form == "out":
        return case.out
    return False


def check(case, form, dtype, layout):
    """None when ferrotorch matches torch (or torch has no such form), else a message."""
    seed = zlib.crc32(f"{case.name}/{dtype}/{layout}".encode())
    specs = make_inputs(case, dtype, layout, seed)
    try:
        expected = _run(torch, form, case, specs, layout, dtype)
        terr = None
    except TypeError as e:
        if form == "out" and "out" in str(e):
            return None  # torch has no out= here
        terr = e
    except Exception as e:  # noqa: BLE001
        terr = e
    try:
        got = _run(ft, form, case, specs, layout, dtype)
        ferr = None
    except Exception as e:  # noqa: BLE001
        ferr = e
    if terr is not None:
        if ferr is None:
            return f"torch raises {type(terr).__name__}({str(terr).splitlines()[0][:100]}) but ferrotorch returns"
        if type(ferr) is not type(terr):
            return f"ferrotorch raises {type(ferr).__name__}({str(ferr)[:120]}); torch {type(terr).__name__}"
        return None
    if ferr is not None:
        return f"ferrotorch raises {type(ferr).__name__}: {str(ferr).splitlines()[0][:200] if str(ferr) else ''}"
    try:
        compare(got, expected, case.tol)
    except AssertionError as e:
        return "mismatch: " + str(e).strip().splitlines()[0][:200] + (" ..." if "\n" in str(e).strip() else "")
    return None


# ----- the op list ------------------------------------------------------------------

F = ("float32", "float64")
NUM = ("float32", "float64", "int64")

CASES = []


def add(*a, **k):
    CASES.append(C(*a, **k))


for n in ("add", "sub", "mul", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
          "logical_xor"):
    add(n, ("any", "any"), scalar=True)
add("div", ("any", "nz"), scalar=True)
add("div_floor", ("any", "nz"), kw={"rounding_mode": "floor"}, fn_name="div",
    method=lambda L, x, y: x.div(y, rounding_mode="floor"), inplace=lambda L, x, y: x.div_(y, rounding_mode="floor"))
add("div_trunc", ("any", "nz"), kw={"rounding_mode": "trunc"}, fn_name="div",
    method=lambda L, x, y: x.div(y, rounding_mode="trunc"), inplace=lambda L, x, y: x.div_(y, rounding_mode="trunc"))
add("true_divide", ("any", "nz"), scalar=True)
add("floor_divide", ("any", "nz"), scalar=True)
add("remainder", ("any", "nz"), scalar=True)
add("fmod", ("any", "nz"), scalar=True)
add("pow", ("pos", "shift"), scalar=True)
for n in ("atan2", "fmax", "fmin", "hypot", "logaddexp", "copysign"):
    add(n, ("any", "any"), scalar=True)
for n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    add(n, ("any", "any"), scalar=True)
for n in ("bitwise_left_shift", "bitwise_right_shift"):
    add(n, ("any", "shift"), scalar=True)
add("where", ("cond", "any", "any"), fn=lambda L, c, x, y, **kw: L.where(c, x, y, **kw),
    method=lambda L, c, x, y: x.where(c, y))
add("lerp", ("any", "any", "prob"), dtypes=F)
add("addcmul", ("any", "any", "any"), kw={"value": 2})
add("addcdiv", ("any", "any", "nz"), kw={"value": 0.5}, dtypes=F)
add("clamp", ("any",), kw={"min": -1, "max": 2})
add("clip", ("any",), kw={"min": -1, "max": 2})
add("clamp_tensor", ("any", "any", "any"), fn=lambda L, x, lo, hi, **kw: L.clamp(x, lo, lo + 2, **kw),
    method=lambda L, x, lo, hi: x.clamp(lo, lo + 2), inplace=lambda L, x, lo, hi: x.clamp_(lo, lo + 2),
    fn_name="clamp")
add("isclose", ("any", "any"), out=False)
add("allclose", ("any", "any"), out=False)
add("equal", ("any", "any"), out=False)

for n in ("neg", "abs", "sign", "exp", "exp2", "expm1", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh",
          "asinh", "sigmoid", "erf", "erfc", "floor", "ceil", "trunc", "frac", "square", "relu", "logical_not",
          "bitwise_not"):
    add(n)
for n in ("sqrt", "rsqrt", "log", "log2", "log10", "log1p", "reciprocal"):
    add(n, ("pos",))
for n in ("asin", "acos", "atanh", "erfinv"):
    add(n, ("unit",))
add("acosh", ("ge1",))
add("logit", ("prob",))
add("round", ("half",))
add("round_decimals", ("any",), kw={"decimals": 2}, fn_name="round",
    method=lambda L, x: x.round(decimals=2), inplace=lambda L, x: x.round_(decimals=2))
for n in ("isnan", "isinf", "isfinite"):
    add(n, ("special",))
add("nan_to_num", ("special",))

# reductions
add("sum", ("any",), extra=(1,))
add("sum_all", ("any",), fn_name="sum", method=lambda L, x: x.sum(), out=False)
add("mean", ("any",), extra=(1,))
add("prod", ("any",), extra=(1,))
add("max", ("distinct",), extra=(1,))
add("max_all", ("any",), fn_name="max", method=lambda L, x: x.max())
add("min", ("distinct",), extra=(1,))
add("amax", ("any",), extra=(1,))
add("amin", ("any",), extra=(1,))
add("argmax", ("distinct",), extra=(1,))
add("argmin", ("distinct",), extra=(1,))
add("var", ("any",), extra=(1,))
add("std", ("any",), extra=(1,))
add("var_mean", ("any",), extra=(1,))
add("std_mean", ("any",), extra=(1,))
add("norm", ("any",), kw={"dim": 1})
add("linalg.vector_norm", ("any",), kw={"dim": 1}, fn_name="linalg.vector_norm")
add("linalg.norm", ("any",), fn_name="linalg.norm")
add("linalg.matrix_norm", ("any",), fn_name="linalg.matrix_norm")
for _o, _tag in ((1, "1"), (-1, "m1"), (math.inf, "inf"), (-math.inf, "minf")):
    add(f"linalg.matrix_norm_{_tag}", ("any",), extra=(_o,), fn_name="linalg.matrix_norm")
    add(f"linalg.norm_{_tag}", ("any",), extra=(_o,), fn_name="linalg.norm")
add("linalg.vector_norm_ord", ("any",), extra=(3,), kw={"dim": (0, 1), "keepdim": True}, fn_name="linalg.vector_norm")
add("linalg.norm_dim", ("any",), kw={"dim": 0}, fn_name="linalg.norm")
add("norm_p1", ("any",), extra=(1, 0))
add("logsumexp", ("any",), extra=(1,))
add("all", ("any",), extra=(1,))
add("any", ("any",), extra=(1,))
add("count_nonzero", ("any",), extra=(1,), out=False)
add("cumsum", ("any",), extra=(1,))
add("cumprod", ("any",), extra=(1,))
add("cummax", ("distinct",), extra=(1,))
add("cummin", ("distinct",), extra=(1,))
add("sort", ("distinct",), extra=(1,))
add("argsort", ("distinct",), extra=(1,))
add("topk", ("distinct",), extra=(2, 1))
add("kthvalue", ("distinct",), extra=(2, 1))
add("median", ("distinct",), extra=(1,))
add("mode", ("any",), extra=(1,), shapes=lambda lay: [(3, 6)] if lay != "B" else [("expand", (1, 6), (3, 6))],
    method=lambda L, x: x.mode(1).values, fn=lambda L, x, **kw: L.mode(x, 1, **kw) if kw else L.mode(x, 1).values)
add("unique", ("any",), kw={"return_counts": True}, out=False)
add("softmax", ("any",), extra=(1,), dtypes=F)
add("log_softmax", ("any",), extra=(1,), dtypes=F)

# products
MM = {"C": [(3, 4), (4, 5)], "T": [(3, 4), (4, 5)], "B": [(3, 4), (4, 5)]}
add("matmul", ("any", "any"), shapes=lambda lay: [(2, 3, 4), (4, 5)] if lay == "B" else MM[lay], dtypes=NUM)
add("mm", ("any", "any"), shapes=lambda lay: MM[lay], dtypes=NUM)
add("bmm", ("any", "any"), shapes=lambda lay: [(2, 3, 4), (2, 4, 5)], dtypes=NUM)
add("addmm", ("any", "any", "any"), shapes=lambda lay: [(5,) if lay == "B" else (3, 5), (3, 4), (4, 5)], dtypes=NUM,
    kw={"beta": 2, "alpha": 3})
add("addmv", ("any", "any", "any"), shapes=lambda lay: [(1,) if lay == "B" else (3,), (3, 4), (4,)], dtypes=NUM)
add("baddbmm", ("any", "any", "any"),
    shapes=lambda lay: [(3, 5) if lay == "B" else (2, 3, 5), (2, 3, 4), (2, 4, 5)], dtypes=NUM)
add("mv", ("any", "any"), shapes=lambda lay: [(3, 4), (4,)], dtypes=NUM)
add("dot", ("any", "any"), shapes=lambda lay: [(4,), (4,)], dtypes=NUM)
add("vdot", ("any", "any"), shapes=lambda lay: [(4,), (4,)], dtypes=NUM)
add("outer", ("any", "any"), shapes=lambda lay: [(3,), (4,)])
add("einsum", ("any", "any"), shapes=lambda lay: [(3, 4), (4, 5)], dtypes=NUM,
    fn=lambda L, a, b: L.einsum("ij,jk->ik", a, b), out=False)
add("tensordot", ("any", "any"), shapes=lambda lay: [(2, 3, 4), (3, 4, 2)], extra=(2,), dtypes=NUM)
add("matmul_half", ("any", "any"), shapes=lambda lay: MM[lay], dtypes=("float16", "bfloat16"), fn_name="matmul")

# joining / shaping
add("cat", ("any", "any"), fn=lambda L, a, b, **kw: L.cat([a, b], 1, **kw), shapes=lambda lay: [(3, 4), (3, 2)])
add("concat", ("any", "any"), fn=lambda L, a, b, **kw: L.concat([a, b], 0, **kw), shapes=lambda lay: [(3, 4), (2, 4)])
add("stack", ("any", "any"), fn=lambda L, a, b, **kw: L.stack([a, b], 1, **kw))
add("hstack", ("any", "any"), fn=lambda L, a, b, **kw: L.hstack([a, b], **kw))
add("vstack", ("any", "any"), fn=lambda L, a, b, **kw: L.vstack([a, b], **kw))
add("flip", ("any",), extra=([0, 1],), out=False)
add("roll", ("any",), extra=(1, 1), out=False)
add("rot90", ("any",), extra=(1, [0, 1]), out=False)
add("repeat", ("any",), method=lambda L, x: x.repeat(2, 1), out=False)
add("repeat_interleave", ("any",), extra=(2,), kw={"dim": 0}, out=False)
add("tile", ("any",), extra=((2, 1),), out=False)
add("tril", ("any",))
add("triu", ("any",), extra=(1,))
add("meshgrid", ("any", "any"), shapes=lambda lay: [(3,), (4,)], fn=lambda L, a, b: L.meshgrid(a, b, indexing="ij"),
    out=False)

# indexing
IDX = [[0, 2, 1, 0], [1, 1, 2, 0], [2, 0, 0, 1]]
add("gather", ("any", "index"), shapes=lambda lay: [(3, 4), IDX], fn=lambda L, x, i, **kw: L.gather(x, 0, i, **kw),
    method=lambda L, x, i: x.gather(0, i))
add("scatter", ("any", "index", "any"), shapes=lambda lay: [(3, 4), [[0, 2, 1, 0]], (3, 4)],
    fn=lambda L, x, i, s, **kw: L.scatter(x, 0, i, s, **kw), method=lambda L, x, i, s: x.scatter(0, i, s),
    inplace=lambda L, x, i, s: x.scatter_(0, i, s))
add("scatter_add", ("any", "index", "any"), shapes=lambda lay: [(3, 4), IDX, (3, 4)],
    fn=lambda L, x, i, s, **kw: L.scatter_add(x, 0, i, s, **kw), method=lambda L, x, i, s: x.scatter_add(0, i, s),
    inplace=lambda L, x, i, s: x.scatter_add_(0, i, s))
add("scatter_reduce", ("any", "index", "any"), shapes=lambda lay: [(3, 4), IDX, (3, 4)],
    fn=lambda L, x, i, s, **kw: L.scatter_reduce(x, 0, i, s, "amax", **kw),
    method=lambda L, x, i, s: x.scatter_reduce(0, i, s, "amax"),
    inplace=lambda L, x, i, s: x.scatter_reduce_(0, i, s, "amax"))
add("index_select", ("any", "index"), shapes=lambda lay: [(3, 4), [2, 0, 2]],
    fn=lambda L, x, i, **kw: L.index_select(x, 0, i, **kw), method=lambda L, x, i: x.index_select(0, i))
add("index_add", ("any", "index", "any"), shapes=lambda lay: [(3, 4), [2, 0, 2], (3, 3)],
    fn=lambda L, x, i, s, **kw: L.index_add(x, 1, i, s, **kw), method=lambda L, x, i, s: x.index_add(1, i, s),
    inplace=lambda L, x, i, s: x.index_add_(1, i, s))
add("index_copy", ("any", "index", "any"), shapes=lambda lay: [(3, 4), [3, 0, 2], (3, 3)],
    fn=lambda L, x, i, s, **kw: L.index_copy(x, 1, i, s, **kw), method=lambda L, x, i, s: x.index_copy(1, i, s),
    inplace=lambda L, x, i, s: x.index_copy_(1, i, s))
add("index_fill", ("any", "index"), shapes=lambda lay: [(3, 4), [3, 0]],
    fn=lambda L, x, i, **kw: L.index_fill(x, 1, i, 1, **kw), method=lambda L, x, i: x.index_fill(1, i, 1),
    inplace=lambda L, x, i: x.index_fill_(1, i, 1))
add("masked_fill", ("any", "cond"), extra=(1,))
add("masked_select", ("any", "cond"))
add("masked_scatter", ("any", "cond", "any"))
add("take", ("any", "index"), shapes=lambda lay: [(3, 4), [[0, 11], [5, 3]]])
add("take_along_dim", ("any", "index"), shapes=lambda lay: [(3, 4), IDX], extra=(0,))
add("nonzero", ("any",))
assert len({c.name for c in CASES}) == len(CASES)
BY_NAME = {c.name: c for c in CASES}

# (op, form, dtype, layout) combinations that need the Rust core, with the reason;
# the main cases skip exactly these and test_known_gap expects them to fail.
KNOWN_GAPS = {}


def _combos(case, form):
    for dtype in case.dtypes:
        for layout in case.layouts:
            yield dtype, layout


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_op_matches_torch(name, form):
    case = BY_NAME[name]
    if not _torch_has(case, form):
        pytest.skip(f"torch has no {form} form of {name}")
    failures = []
    for dtype, layout in _combos(case, form):
        if (name, form, dtype, layout) in KNOWN_GAPS:
            continue
        msg = check(case, form, dtype, layout)
        if msg:
            failures.append(f"{dtype}/{layout}: {msg}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=r))
                                 for k, r in sorted(KNOWN_GAPS.items())] or
                         [pytest.param(None, marks=pytest.mark.skip(reason="no known gaps"))])
def test_known_gap(key):
    name, form, dtype, layout = key
    msg = check(BY_NAME[name], form, dtype, layout)
    assert msg is None, msg


# ----- every form PyTorch has exists -----------------------------------------------

OP_LIST = """add sub mul div true_divide floor_divide remainder fmod pow atan2 maximum minimum fmax fmin hypot logaddexp
copysign bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift logical_and logical_or logical_xor
eq ne lt le gt ge where lerp addcmul addcdiv clamp clip isclose allclose equal neg abs sign sqrt rsqrt exp exp2 expm1
log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid logit erf erfc erfinv floor
ceil round trunc frac reciprocal square relu logical_not bitwise_not isnan isinf isfinite nan_to_num sum mean prod max
min amax amin argmax argmin var std var_mean std_mean norm logsumexp all any count_nonzero cumsum cumprod cummax cummin
sort argsort topk kthvalue median mode unique softmax log_softmax matmul mm bmm addmm addmv baddbmm mv dot vdot outer
einsum tensordot cat concat stack hstack vstack flip roll rot90 repeat repeat_interleave tile tril triu meshgrid gather
scatter scatter_add scatter_reduce index_select index_add index_copy index_fill masked_fill masked_select
masked_scatter take take_along_dim nonzero""".split()


@pytest.mark.parametrize("name", OP_LIST)
def test_forms_exist(name):
    missing = []
    for owner_t, owner_f, attr in ((torch, ft, name), (torch.Tensor, ft.Tensor, name),
                                   (torch.Tensor, ft.Tensor, name + "_"), (torch, ft, name + "_")):
        if hasattr(owner_t, attr) and not hasattr(owner_f, attr):
            missing.append(f"{'Tensor.' if owner_t is torch.Tensor else 'ferrotorch.'}{attr}")
    assert not missing, missing


@pytest.mark.parametrize("name", ["vector_norm", "norm", "matrix_norm"])
def test_linalg_exists(name):
    assert callable(getattr(ft.linalg, name))
