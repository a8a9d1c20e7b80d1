"""Op-list coverage against PyTorch: for every op of the required list, the
function, the Tensor method, the in-place ``op_`` and ``out=`` forms (where
PyTorch has them) on float32, float64, int64 and bool inputs, contiguous,
transposed (non-contiguous) and broadcast, give the same dtype and values as
PyTorch -- or raise the same exception class where PyTorch raises.
"""

import math
import zlib

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

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

def _combos(case, form):
    for dtype in case.dtypes:
        for layout in case.layouts:
            yield dtype, layout


# Only the forms PyTorch itself has are compared (test_forms_exist checks
# that we have each of them).
APPLICABLE = [(c.name, form) for c in CASES for form in FORMS if _torch_has(c, form)]


@pytest.mark.parametrize("name,form", APPLICABLE)
def test_op_matches_torch(name, form):
    case = BY_NAME[name]
    failures = []
    for dtype, layout in _combos(case, form):
        msg = check(case, form, dtype, layout)
        if msg:
            failures.append(f"{dtype}/{layout}: {msg}")
    assert not failures, "\n".join(failures)


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


# ----- argument variants beyond the grid --------------------------------------------

_R = np.random.default_rng(1)
_A = _R.standard_normal((3, 4)).astype(np.float32)
_I = _R.integers(-5, 5, (3, 4))
_B = _R.random((3, 4)) < 0.5
_A4 = _R.standard_normal((2, 1, 3, 4)).astype(np.float32)
_B3 = _R.standard_normal((3, 4, 5)).astype(np.float32)


def _t(L, a):
    return L.from_numpy(a.copy())


EXTRA = {
    "unique_inverse": lambda L: L.unique(_t(L, _I), return_inverse=True),
    "norm_fro_dims": lambda L: L.norm(_t(L, _A), p="fro", dim=(0, 1)),
    "einsum_sublist": lambda L: L.einsum(_t(L, _A), [0, 1], _t(L, _A), [0, 1], [1]),
    "einsum_sublist_implicit": lambda L: L.einsum(_t(L, _A), [0, 1], _t(L, _A).t(), [1, 2]),
    "einsum_trace": lambda L: L.einsum("ii", _t(L, _A)[:, :3]),
    "einsum_ellipsis": lambda L: L.einsum("...ij->...ji", _t(L, _A)),
    "repeat_interleave_tensor": lambda L: L.repeat_interleave(_t(L, _A), L.tensor([1, 2, 0]), dim=0),
    "repeat_interleave_counts": lambda L: L.repeat_interleave(L.tensor([1, 2, 3])),
    "scatter_reduce_mean": lambda L: L.scatter_reduce(_t(L, _A), 0, L.tensor([[0, 1, 2, 0]]), _t(L, _A)[:1], "mean",
                                                      include_self=False),
    "var_dim_list": lambda L: L.var(_t(L, _A), dim=[0, 1]),
    "std_correction0": lambda L: L.std(_t(L, _A), dim=1, correction=0),
    "mean_int_errors": lambda L: L.mean(_t(L, _I)),
    "mean_dtype": lambda L: L.mean(_t(L, _I), dtype=L.float64),
    "prod_dtype": lambda L: L.prod(_t(L, _I), 1, dtype=L.float32),
    "max_nan": lambda L: L.max(L.tensor([1.0, float("nan"), 2.0])),
    "sort_nan_desc": lambda L: L.sort(L.tensor([1.0, float("nan"), 2.0, -1.0]), descending=True),
    "logsumexp_int": lambda L: L.logsumexp(_t(L, _I), 1),
    "logsumexp_dims": lambda L: L.logsumexp(_t(L, _A), (0, 1)),
    "softmax_dtype": lambda L: L.softmax(_t(L, _A), 1, dtype=L.float64),
    "round_negative_decimals": lambda L: L.round(_t(L, _A) * 100, decimals=-1),
    "clamp_min_gt_max": lambda L: L.clamp(_t(L, _A), 1, -1),
    "clamp_bool_int_bounds": lambda L: L.clamp(_t(L, _B), min=-1, max=2),
    "where_scalars": lambda L: L.where(_t(L, _B), 1.0, 0),
    "lerp_tensor_weight": lambda L: L.lerp(_t(L, _A), _t(L, _A) * 2, _t(L, _A)),
    "pow_scalar_base": lambda L: L.pow(2, _t(L, _I).abs()),
    "pow_int_negative_scalar": lambda L: L.pow(_t(L, _I), -1),
    "pow_bool_bool": lambda L: L.pow(_t(L, _B), _t(L, _B)),
    "remainder_negative": lambda L: L.remainder(_t(L, _I), -3),
    "fmod_zero": lambda L: L.fmod(_t(L, _A), 0.0),
    "floor_divide_int_zero": lambda L: L.floor_divide(_t(L, _I), 0),
    "div_int_int": lambda L: L.div(_t(L, _I), 2),
    "allclose_broadcast": lambda L: L.allclose(_t(L, _A), _t(L, _A)[0]),
    "equal_dtypes": lambda L: L.equal(_t(L, _I), _t(L, _I).float()),
    "matmul_1d_1d": lambda L: L.matmul(_t(L, _A)[0], _t(L, _A)[0]),
    "matmul_1d_2d": lambda L: L.matmul(_t(L, _A)[:, 0], _t(L, _A)),
    "matmul_batch_broadcast": lambda L: L.matmul(_t(L, _A4), _t(L, _B3)),
    "matmul_mixed_dtype": lambda L: L.matmul(_t(L, _A), _t(L, _A).double().t()),
    "matmul_bool": lambda L: L.matmul(_t(L, _B), _t(L, _B).t()),
    "mm_f16": lambda L: L.mm(_t(L, _A).half(), _t(L, _A).half().t()),
    "bmm_bf16": lambda L: L.bmm(_t(L, _A).bfloat16()[None], _t(L, _A).bfloat16().t()[None]),
    "matmul_f16_vec": lambda L: L.matmul(_t(L, _A).half(), _t(L, _A).half()[0]),
    "matmul_bf16_batch": lambda L: L.matmul(_t(L, _A4).bfloat16(), _t(L, _B3).bfloat16()),
    "addmm_f16": lambda L: L.addmm(_t(L, _A).half()[:, :3], _t(L, _A).half(), _t(L, _A).half().t()),
    "addmm_beta0_nan": lambda L: L.addmm(L.full((3, 3), float("nan")), _t(L, _A), _t(L, _A).t(), beta=0, alpha=2),
    "addmm_int_float_beta": lambda L: L.addmm(_t(L, _I)[:, :3], _t(L, _I), _t(L, _I).t(), beta=0.5),
    "baddbmm_beta0": lambda L: L.baddbmm(L.full((1, 3, 3), float("nan")), _t(L, _A)[None], _t(L, _A).t()[None],
                                         beta=0),
    "addmv_alpha_beta": lambda L: L.addmv(_t(L, _A)[:, 0], _t(L, _A), _t(L, _A)[0], alpha=2, beta=0.5),
    "mv_shape_error": lambda L: L.mv(_t(L, _A)[0], _t(L, _A)[0]),
    "dot_dtype_error": lambda L: L.dot(_t(L, _A)[0], _t(L, _I)[0]),
    "dot_size_error": lambda L: L.dot(_t(L, _A)[0], _t(L, _A)[0, :2]),
    "tensordot_lists": lambda L: L.tensordot(_t(L, _A), _t(L, _A), dims=([0, 1], [0, 1])),
    "cat_mixed_dtypes": lambda L: L.cat([_t(L, _A), _t(L, _I)]),
    "roll_flat": lambda L: L.roll(_t(L, _A), 3),
    "roll_multi": lambda L: L.roll(_t(L, _A), (1, -1), (0, 1)),
    "rot90_k3": lambda L: L.rot90(_t(L, _A), 3),
    "rot90_neg": lambda L: L.rot90(_t(L, _A), -1, (1, 0)),
    "tile_short": lambda L: L.tile(_t(L, _A), (2,)),
    "meshgrid_xy": lambda L: L.meshgrid(L.tensor([1, 2]), L.tensor([3, 4, 5]), indexing="xy"),
    "gather_neg_dim": lambda L: L.gather(_t(L, _A), -1, L.tensor([[0], [1], [2]])),
    "index_fill_tensor_value": lambda L: L.index_fill(_t(L, _A), 0, L.tensor([1]), L.tensor(5.0)),
    "index_add_alpha": lambda L: L.index_add(_t(L, _A), 0, L.tensor([0, 0]), _t(L, _A)[:2], alpha=2),
    "masked_fill_broadcast_mask": lambda L: L.masked_fill(_t(L, _A), _t(L, _B)[0], 0.0),
    "take_negative_index": lambda L: L.take(_t(L, _A), L.tensor([-1, 0])),
    "take_along_dim_flat": lambda L: L.take_along_dim(_t(L, _A), L.tensor([0, 5])),
    "nonzero_as_tuple": lambda L: L.nonzero(_t(L, _I), as_tuple=True),
    "count_nonzero_dims": lambda L: L.count_nonzero(_t(L, _I), dim=(0, 1)),
    "var_mean_correction": lambda L: L.var_mean(_t(L, _A), 1, correction=0),
    "cumprod_dtype": lambda L: L.cumprod(_t(L, _I), 0, dtype=L.float64),
    "nan_to_num_values": lambda L: L.nan_to_num(L.tensor([float("nan"), float("inf"), -float("inf")]), 1.0, 2.0, -2.0),
    "sum_f16": lambda L: L.sum(_t(L, _A).half(), 1),
    "softmax_f16": lambda L: L.softmax(_t(L, _A).half(), 1),
    "linalg_norm_3d_ord_error": lambda L: L.linalg.norm(_t(L, _A4), 1),
    "matrix_norm_1d_error": lambda L: L.linalg.matrix_norm(_t(L, _A)[0]),
    "vector_norm_int_error": lambda L: L.linalg.vector_norm(_t(L, _I)),
    "unique_dim": lambda L: L.unique(L.tensor([[1, 2], [1, 2], [0, 1]]), dim=0),
    "unique_dim1_inverse_counts": lambda L: L.unique(L.tensor([[1, 2, 1], [3, 0, 3]]), dim=1, return_inverse=True,
                                                     return_counts=True),
    "unique_dim_out_of_range": lambda L: L.unique(_t(L, _A), dim=2),
    "matrix_norm_2": lambda L: L.linalg.matrix_norm(_t(L, _A), 2),
    "matrix_norm_neg2": lambda L: L.linalg.matrix_norm(_t(L, _A), -2),
    "matrix_norm_nuc": lambda L: L.linalg.matrix_norm(_t(L, _A), "nuc"),
    "matrix_norm_nuc_int_error": lambda L: L.linalg.matrix_norm(_t(L, _I), "nuc"),
    "norm_nuc": lambda L: L.norm(_t(L, _A), p="nuc"),
    "svdvals": lambda L: L.linalg.svdvals(_t(L, _A)),
}

def _check_extra(name):
    f = EXTRA[name]
    try:
        expected, terr = f(torch), None
    except Exception as e:  # noqa: BLE001
        expected, terr = None, e
    try:
        got, ferr = f(ft), None
    except Exception as e:  # noqa: BLE001
        got, ferr = None, e
    if terr is not None:
        assert ferr is not None, f"torch raises {type(terr).__name__}({terr}) but ferrotorch returns"
        assert type(ferr) is type(terr), f"{ferr!r} vs {terr!r}"
        return
    assert ferr is None, f"ferrotorch raises {type(ferr).__name__}: {ferr}"
    compare(got, expected, None)


@pytest.mark.parametrize("name", list(EXTRA))
def test_variant_matches_torch(name):
    _check_extra(name)
