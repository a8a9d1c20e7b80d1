"""The op catalogue: every op family the fuzzer calls, one entry per call form.

An entry is a code template (``lib`` is the library, ``t0``, ``t1``... the
tensor arguments, ``{name}`` a parameter written with ``repr``) and a generator
that draws the tensor recipes and parameters.  The same template runs on both
libraries and, with ``lib`` read as ``torch``, is the reproducer.
"""

import numpy as np

from gen import index_recipe, mask_recipe, rand_dtype, rand_shape, recipe

CATALOGUE = []


class _Raw(str):
    """A parameter written into the code as it is (not with repr)."""

    def __repr__(self):
        return str(self)


class Op:
    __slots__ = ("name", "family", "code", "gen", "grad", "inplace")

    def __init__(self, name, family, code, gen, grad=True, inplace=False):
        self.name, self.family, self.code, self.gen = name, family, code, gen
        self.grad, self.inplace = grad, inplace


def op(name, family, code, gen, grad=True, inplace=False):
    CATALOGUE.append(Op(name, family, code, gen, grad, inplace))


def choice(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def rand_dim(rng, nd, bad=0.05):
    """A dim for an `nd`-d tensor, negative half the time, occasionally out of range."""
    if rng.random() < bad:
        return int(choice(rng, [nd, -nd - 1, 2]))
    n = max(nd, 1)
    d = int(rng.integers(n))
    return d - n if rng.random() < 0.5 else d


def bshape(rng, shape):
    """A shape broadcastable with `shape` (dims dropped or set to 1), rarely incompatible."""
    out = list(shape)
    drop = int(rng.integers(0, len(out) + 1)) if rng.random() < 0.3 else 0
    out = out[drop:]
    out = [1 if rng.random() < 0.25 else s for s in out]
    if rng.random() < 0.03 and out:
        out[0] += 1
    return out


def scalar(rng, kinds=("int", "float", "bool", "special")):
    k = choice(rng, kinds)
    if k == "int":
        return int(rng.integers(-5, 6))
    if k == "bool":
        return bool(rng.random() < 0.5)
    if k == "special":
        return float(choice(rng, [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e30, 0.5]))
    return float(np.round(rng.standard_normal() * 3, 3))


# ---------------------------------------------------------------- generators

def g_unary(dtypes="all", vals=None):
    def gen(rng):
        return [recipe(rng, rand_shape(rng), rand_dtype(rng, dtypes), vals=vals)], {}
    return gen


def g_binary(dtypes="all", dtypes2=None):
    def gen(rng):
        s = rand_shape(rng)
        a = recipe(rng, s, rand_dtype(rng, dtypes))
        b = recipe(rng, bshape(rng, s), rand_dtype(rng, dtypes2 or dtypes))
        if rng.random() < 0.5:
            a, b = b, a
        return [a, b], {}
    return gen


def g_tensor_scalar(dtypes="all", kinds=("int", "float", "bool", "special")):
    def gen(rng):
        return [recipe(rng, rand_shape(rng), rand_dtype(rng, dtypes))], {"s": scalar(rng, kinds)}
    return gen


def g_reduce(dtypes="all", dim_required=False, keepdim=True, min_nd=0):
    def gen(rng):
        s = rand_shape(rng, min_nd=min_nd)
        p = {}
        if dim_required or rng.random() < 0.7:
            p["dim"] = rand_dim(rng, len(s))
        if keepdim:
            p["keepdim"] = bool(rng.random() < 0.5)
        return [recipe(rng, s, rand_dtype(rng, dtypes))], p
    return gen


def g_dims(dtypes="all", nd_min=0):
    """One tensor and a tuple of dims (possibly repeated or out of range)."""
    def gen(rng):
        s = rand_shape(rng, min_nd=nd_min)
        k = int(rng.integers(0, len(s) + 1))
        dims = [rand_dim(rng, len(s), bad=0.02) for _ in range(k)]
        return [recipe(rng, s, rand_dtype(rng, dtypes))], {"dims": tuple(dims), "keepdim": bool(rng.random() < 0.5)}
    return gen


# ---------------------------------------------------------------- elementwise

UNARY_FLOAT = """exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh
asinh acosh atanh sigmoid erf erfc erfinv reciprocal logit""".split()
UNARY_ANY = "abs neg sign floor ceil round trunc frac square relu".split()
UNARY_BOOL = "isnan isinf isfinite isposinf isneginf logical_not".split()
INPLACE = """exp_ expm1_ log_ log2_ log10_ log1p_ sqrt_ rsqrt_ sin_ cos_ tan_ asin_ acos_ atan_ sinh_ cosh_
tanh_ asinh_ acosh_ atanh_ sigmoid_ erf_ erfc_ reciprocal_ abs_ neg_ floor_ ceil_ round_ trunc_ frac_
square_ relu_""".split()

for n in UNARY_FLOAT + UNARY_ANY:
    op(n, "unary", f"lib.{n}(t0)", g_unary())
for n in UNARY_BOOL:
    op(n, "unary", f"lib.{n}(t0)", g_unary(), grad=False)
for n in INPLACE:
    op(n, "unary_inplace", f"t0.{n}()", g_unary(), inplace=True)
op("bitwise_not", "unary", "lib.bitwise_not(t0)", g_unary("intbool"), grad=False)
op("nan_to_num", "unary", "lib.nan_to_num(t0, nan={nan}, posinf={pinf}, neginf={ninf})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "all"), vals="special")],
                {"nan": scalar(rng, ("int", "float")), "pinf": choice(rng, [None, 1e4, 7]),
                 "ninf": choice(rng, [None, -1e4, -3])}))
op("round_decimals", "unary", "lib.round(t0, decimals={d})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "float"))], {"d": int(rng.integers(-2, 4))}))
op("clamp", "unary", "lib.clamp(t0, min={lo}, max={hi})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "real"))],
                {"lo": choice(rng, [None, scalar(rng, ("int", "float"))]),
                 "hi": choice(rng, [None, scalar(rng, ("int", "float"))])}))
op("clamp_t", "ternary", "lib.clamp(t0, min=t1, max=t2)", lambda rng: _three(rng, "real"))
op("pow_scalar", "binary", "lib.pow(t0, {s})",
   g_tensor_scalar("all", ("int", "float", "special")))
op("rpow", "binary", "{s} ** t0", g_tensor_scalar("all", ("int", "float")))
op("to_dtype", "convert", "t0.to(lib.{dt})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng))], {"dt": _Raw(rand_dtype(rng))}))

BINARY = """add sub mul div true_divide floor_divide remainder fmod pow maximum minimum fmax fmin atan2
hypot copysign logaddexp""".split()
COMPARE = "eq ne lt le gt ge logical_and logical_or logical_xor".split()
BITWISE = "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift".split()
OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod", "**": "pow",
             "==": "eq", "<": "lt", ">=": "ge", "&": "and", "|": "or", "^": "xor"}

for n in BINARY:
    op(n, "binary", f"lib.{n}(t0, t1)", g_binary())
    op(n + "_scalar", "binary", f"lib.{n}(t0, {{s}})", g_tensor_scalar())
for n in COMPARE:
    op(n, "binary", f"lib.{n}(t0, t1)", g_binary(), grad=False)
for n in BITWISE:
    op(n, "binary", f"lib.{n}(t0, t1)", g_binary("intbool"), grad=False)
for sym, n in OPERATORS.items():
    op("op" + n, "binary", f"t0 {sym} t1", g_binary(), grad=sym not in "==<>=&|^")
    op("rop" + n, "binary", f"{{s}} {sym} t0", g_tensor_scalar(), grad=sym not in "==<>=&|^")
    if sym not in ("==", "<", ">="):
        op("iop" + n, "binary_inplace", f"t0 {sym}= t1", g_binary(), inplace=True)
for n in ("add_", "sub_", "mul_", "div_", "pow_", "clamp_min_", "clamp_max_", "remainder_", "copysign_"):
    op(n, "binary_inplace", f"t0.{n}(t1)", g_binary(), inplace=True)
op("add_alpha", "binary", "lib.add(t0, t1, alpha={a})",
   lambda rng: (g_binary()(rng)[0], {"a": scalar(rng, ("int", "float", "bool"))}))
op("sub_alpha", "binary", "lib.sub(t0, t1, alpha={a})",
   lambda rng: (g_binary()(rng)[0], {"a": scalar(rng, ("int", "float"))}))
op("div_mode", "binary", "lib.div(t0, t1, rounding_mode={m})",
   lambda rng: (g_binary()(rng)[0], {"m": choice(rng, ["trunc", "floor", None])}))


def _three(rng, dtypes="all"):
    s = rand_shape(rng)
    return [recipe(rng, s, rand_dtype(rng, dtypes)), recipe(rng, bshape(rng, s), rand_dtype(rng, dtypes)),
            recipe(rng, bshape(rng, s), rand_dtype(rng, dtypes))], {}


op("addcmul", "ternary", "lib.addcmul(t0, t1, t2, value={v})",
   lambda rng: (_three(rng)[0], {"v": scalar(rng, ("int", "float"))}))
op("addcdiv", "ternary", "lib.addcdiv(t0, t1, t2, value={v})",
   lambda rng: (_three(rng)[0], {"v": scalar(rng, ("int", "float"))}))
op("lerp", "ternary", "lib.lerp(t0, t1, {w})",
   lambda rng: (g_binary("float")(rng)[0], {"w": scalar(rng, ("float",))}))
op("lerp_t", "ternary", "lib.lerp(t0, t1, t2)", lambda rng: _three(rng, "float"))
op("where", "ternary", "lib.where(t2, t0, t1)",
   lambda rng: (lambda ts: ([ts[0], ts[1], mask_recipe(rng, bshape(rng, ts[0]["shape"]))], {}))(g_binary()(rng)[0]))
op("where_scalar", "ternary", "lib.where(t1, t0, {s})",
   lambda rng: (lambda s: ([recipe(rng, s, rand_dtype(rng)), mask_recipe(rng, bshape(rng, s))],
                           {"s": scalar(rng)}))(rand_shape(rng)))

# ---------------------------------------------------------------- reductions

for n in ("sum", "mean", "prod", "logsumexp", "amax", "amin", "argmax", "argmin", "all", "any",
          "count_nonzero"):
    needs = n == "logsumexp"
    kd = n not in ("count_nonzero",)
    op(n, "reduce", f"lib.{n}(t0, **{{p}})",
       (lambda needs, kd: lambda rng: (lambda ts, p: (ts, {"p": p}))(*g_reduce(dim_required=needs, keepdim=kd)(rng)))(needs, kd),
       grad=n not in ("argmax", "argmin", "all", "any", "count_nonzero"))
for n in ("sum", "mean", "amax", "amin", "logsumexp"):
    op(n + "_dims", "reduce", f"lib.{n}(t0, dim={{dims}}, keepdim={{keepdim}})", g_dims())
for n in ("var", "std"):
    op(n, "reduce", f"lib.{n}(t0, dim={{dim}}, correction={{c}}, keepdim={{keepdim}})",
       lambda rng: (lambda ts, p: (ts, dict(p, dim=p.get("dim"), c=int(rng.integers(0, 3)))))(*g_reduce("float")(rng)))
    op(n + "_mean", "reduce", f"lib.{n}_mean(t0, dim={{dim}}, keepdim={{keepdim}})",
       lambda rng: (lambda ts, p: (ts, dict(p, dim=p.get("dim"))))(*g_reduce("float")(rng)))
for n in ("max", "min", "median", "mode", "cummax", "cummin"):
    kd = n not in ("cummax", "cummin")
    code = f"lib.{n}(t0, dim={{dim}}, keepdim={{keepdim}})" if kd else f"lib.{n}(t0, dim={{dim}})"
    op(n + "_dim", "reduce", code, g_reduce(dim_required=True, keepdim=kd))
for n in ("max", "min", "median"):
    op(n + "_all", "reduce", f"lib.{n}(t0)", g_unary())
for n in ("cumsum", "cumprod"):
    op(n, "scan", f"lib.{n}(t0, dim={{dim}})", g_reduce(dim_required=True, keepdim=False))
    op(n + "_dtype", "scan", f"lib.{n}(t0, dim={{dim}}, dtype=lib.{{dt}})",
       lambda rng: (lambda ts, p: (ts, dict(p, dt=_Raw(rand_dtype(rng, "real")))))(*g_reduce(dim_required=True, keepdim=False)(rng)))
op("sum_dtype", "reduce", "lib.sum(t0, dtype=lib.{dt})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng))], {"dt": _Raw(rand_dtype(rng, "real"))}))
op("norm", "reduce", "lib.norm(t0, p={p}, dim={dim}, keepdim={keepdim})",
   lambda rng: (lambda ts, p: (ts, dict(p, dim=p.get("dim"), p=choice(rng, [1, 2, 3, 0.5, float("inf"), 0, "fro"]))))(*g_reduce("float")(rng)))
for n in ("softmax", "log_softmax"):
    op(n, "reduce", f"lib.{n}(t0, dim={{dim}})", g_reduce("float", dim_required=True, keepdim=False))
    op(n + "_dtype", "reduce", f"lib.{n}(t0, {{dim}}, dtype=lib.{{dt}})",
       lambda rng: (lambda ts, p: (ts, dict(p, dt=_Raw(choice(rng, ["float32", "float64"])))))(*g_reduce("real", dim_required=True, keepdim=False)(rng)))

# ---------------------------------------------------------------- sorting


def g_sort(rng):
    ts, p = g_reduce("real", dim_required=True, keepdim=False)(rng)
    p["desc"] = bool(rng.random() < 0.5)
    return ts, p


op("sort", "sort", "lib.sort(t0, dim={dim}, descending={desc}, stable=True)", g_sort)
op("argsort", "sort", "lib.argsort(t0, dim={dim}, descending={desc}, stable=True)", g_sort, grad=False)


def g_topk(rng):
    ts, p = g_reduce("real", dim_required=True, keepdim=False)(rng)
    s = ts[0]["shape"]
    n = s[p["dim"]] if s and -len(s) <= p["dim"] < len(s) else 1
    p["k"] = int(rng.integers(0, n + 1)) if rng.random() < 0.95 else n + 1
    p["largest"] = bool(rng.random() < 0.5)
    return ts, p


op("topk", "sort", "lib.topk(t0, {k}, dim={dim}, largest={largest}, sorted=True)", g_topk)


def g_kth(rng):
    ts, p = g_topk(rng)
    p["k"] = max(p["k"], 1) if rng.random() < 0.95 else 0
    p["keepdim"] = bool(rng.random() < 0.5)
    return ts, p


op("kthvalue", "sort", "lib.kthvalue(t0, {k}, dim={dim}, keepdim={keepdim})", g_kth)
op("unique", "sort", "lib.unique(t0, sorted=True, return_inverse={inv}, return_counts={cnt})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "real"), vals="int")],
                {"inv": bool(rng.random() < 0.5), "cnt": bool(rng.random() < 0.5)}), grad=False)

# ---------------------------------------------------------------- shapes and views


def g_shape(extra):
    def gen(rng):
        s = rand_shape(rng)
        return [recipe(rng, s, rand_dtype(rng))], extra(rng, s)
    return gen


def _reshape_target(rng, s):
    n = int(np.prod(s)) if s else 1
    if rng.random() < 0.1:
        return [n + 1]
    dims = []
    rest = n
    for f in (2, 3, 5):
        while rest % f == 0 and rng.random() < 0.5:
            dims.append(f)
            rest //= f
    dims.append(rest)
    if rng.random() < 0.3 and dims:
        dims[int(rng.integers(len(dims)))] = -1
    if rng.random() < 0.2:
        dims.insert(0, 1)
    return [int(d) for d in dims]


op("reshape", "shape", "t0.reshape({s})", g_shape(lambda rng, s: {"s": _reshape_target(rng, s)}))
op("view", "shape", "t0.view({s})", g_shape(lambda rng, s: {"s": _reshape_target(rng, s)}))
op("flatten", "shape", "lib.flatten(t0, {a}, {b})",
   g_shape(lambda rng, s: {"a": rand_dim(rng, len(s)), "b": rand_dim(rng, len(s))}))
op("unflatten", "shape", "t0.unflatten({d}, {sizes})",
   g_shape(lambda rng, s: (lambda d: {"d": d, "sizes": tuple(_reshape_target(rng, [s[d]] if s and -len(s) <= d < len(s) else []))})(rand_dim(rng, len(s)))))
op("squeeze", "shape", "lib.squeeze(t0, {d})", g_shape(lambda rng, s: {"d": rand_dim(rng, len(s))}))
op("squeeze_all", "shape", "lib.squeeze(t0)", g_shape(lambda rng, s: {}))
op("unsqueeze", "shape", "lib.unsqueeze(t0, {d})", g_shape(lambda rng, s: {"d": rand_dim(rng, len(s) + 1)}))
op("transpose", "shape", "lib.transpose(t0, {a}, {b})",
   g_shape(lambda rng, s: {"a": rand_dim(rng, len(s)), "b": rand_dim(rng, len(s))}))
op("permute", "shape", "t0.permute({p})",
   g_shape(lambda rng, s: {"p": tuple(int(x) - (len(s) if rng.random() < 0.3 else 0) for x in rng.permutation(len(s)))}))
op("t", "shape", "t0.t()", g_shape(lambda rng, s: {}))
op("flip", "shape", "lib.flip(t0, {d})", g_shape(lambda rng, s: {"d": tuple({rand_dim(rng, len(s)) for _ in range(int(rng.integers(0, 3)))})}))
op("roll", "shape", "lib.roll(t0, {k}, {d})", g_shape(lambda rng, s: {"k": int(rng.integers(-7, 8)), "d": rand_dim(rng, len(s))}))
op("roll_flat", "shape", "lib.roll(t0, {k})", g_shape(lambda rng, s: {"k": int(rng.integers(-7, 8))}))
op("repeat", "shape", "t0.repeat({r})", g_shape(lambda rng, s: {"r": tuple(int(rng.integers(0, 3)) for _ in range(len(s) + int(rng.integers(0, 2))))}))
op("tile", "shape", "lib.tile(t0, {r})", g_shape(lambda rng, s: {"r": tuple(int(rng.integers(0, 3)) for _ in range(int(rng.integers(0, len(s) + 2))))}))
op("chunk", "shape", "lib.chunk(t0, {n}, {d})", g_shape(lambda rng, s: {"n": int(rng.integers(1, 5)), "d": rand_dim(rng, len(s))}))
op("split", "shape", "lib.split(t0, {n}, {d})", g_shape(lambda rng, s: {"n": int(rng.integers(1, 4)), "d": rand_dim(rng, len(s))}))
op("split_sizes", "shape", "t0.split({n}, {d})",
   g_shape(lambda rng, s: (lambda d: {"d": d, "n": _split_sizes(rng, s, d)})(rand_dim(rng, len(s)))))
op("unbind", "shape", "lib.unbind(t0, {d})", g_shape(lambda rng, s: {"d": rand_dim(rng, len(s))}))
op("narrow", "shape", "lib.narrow(t0, {d}, {st}, {ln})",
   g_shape(lambda rng, s: {"d": rand_dim(rng, len(s)), "st": int(rng.integers(-2, 4)), "ln": int(rng.integers(0, 3))}))
op("select", "shape", "lib.select(t0, {d}, {i})", g_shape(lambda rng, s: {"d": rand_dim(rng, len(s)), "i": int(rng.integers(-3, 4))}))
op("expand", "shape", "t0.expand({s})",
   g_shape(lambda rng, s: {"s": tuple([int(rng.integers(1, 3))] * int(rng.integers(0, 2)) + [choice(rng, [-1, x, 3]) if x == 1 else choice(rng, [-1, x]) for x in s])}))
op("diagonal", "shape", "lib.diagonal(t0, {o}, {a}, {b})",
   g_shape(lambda rng, s: {"o": int(rng.integers(-2, 3)), "a": rand_dim(rng, len(s)), "b": rand_dim(rng, len(s))}))
op("tril", "shape", "lib.tril(t0, {k})", g_shape(lambda rng, s: {"k": int(rng.integers(-2, 3))}))
op("triu", "shape", "lib.triu(t0, {k})", g_shape(lambda rng, s: {"k": int(rng.integers(-2, 3))}))
op("movedim", "shape", "lib.movedim(t0, {a}, {b})", g_shape(lambda rng, s: {"a": rand_dim(rng, len(s)), "b": rand_dim(rng, len(s))}))
op("rot90", "shape", "lib.rot90(t0, {k}, {d})", g_shape(lambda rng, s: {"k": int(rng.integers(-2, 5)), "d": (rand_dim(rng, len(s)), rand_dim(rng, len(s)))}))
op("repeat_interleave", "shape", "lib.repeat_interleave(t0, {r}, dim={d})",
   g_shape(lambda rng, s: {"r": int(rng.integers(0, 3)), "d": choice(rng, [None, rand_dim(rng, len(s))])}))
op("contiguous", "shape", "t0.contiguous()", g_shape(lambda rng, s: {}))
op("clone", "shape", "t0.clone()", g_shape(lambda rng, s: {}))


def _split_sizes(rng, s, d):
    n = s[d] if s and -len(s) <= d < len(s) else 1
    out = []
    while n > 0:
        k = int(rng.integers(0, n + 1))
        out.append(k)
        n -= k
    if rng.random() < 0.1:
        out.append(1)
    return out


def g_cat(rng):
    s = rand_shape(rng, min_nd=1)
    d = rand_dim(rng, len(s))
    ts = []
    for _ in range(int(rng.integers(1, 4))):
        s2 = list(s)
        if s and -len(s) <= d < len(s):
            s2[d] = int(rng.integers(0, 4))
        ts.append(recipe(rng, s2 if rng.random() < 0.95 else [0], rand_dtype(rng)))
    return ts, {"d": d}


def g_stack(rng):
    s = rand_shape(rng)
    return [recipe(rng, s, rand_dtype(rng)) for _ in range(int(rng.integers(1, 4)))], {"d": rand_dim(rng, len(s) + 1)}


op("cat", "shape", "lib.cat(list(ts), {d})", g_cat)
op("stack", "shape", "lib.stack(list(ts), {d})", g_stack)

# ---------------------------------------------------------------- indexing


def g_index_dim(rng, dtypes="all", idx_shape=None):
    s = rand_shape(rng, min_nd=0)
    d = rand_dim(rng, len(s))
    n = s[d] if s and -len(s) <= d < len(s) else 1
    ish = idx_shape(rng, s, d) if idx_shape else [int(rng.integers(0, 4))]
    idx = index_recipe(rng, ish, n + (1 if rng.random() < 0.03 else 0))
    return s, d, idx


def g_index_select(rng):
    s, d, idx = g_index_dim(rng, idx_shape=lambda rng, s, d: choice(rng, [[int(rng.integers(0, 4))], []]))
    return [recipe(rng, s, rand_dtype(rng)), idx], {"d": d}


op("index_select", "index", "lib.index_select(t0, {d}, t1)", g_index_select)


def g_gather(rng):
    s = rand_shape(rng, min_nd=0)
    d = rand_dim(rng, len(s))
    n = s[d] if s and -len(s) <= d < len(s) else 1
    ish = [min(x, int(rng.integers(0, x + 2))) if i != (d % max(len(s), 1)) else int(rng.integers(0, 4)) for i, x in enumerate(s)]
    return [recipe(rng, s, rand_dtype(rng)), index_recipe(rng, ish, n)], {"d": d}


op("gather", "index", "lib.gather(t0, {d}, t1)", g_gather)
op("take_along_dim", "index", "lib.take_along_dim(t0, t1, dim={d})", g_gather)


def g_scatter(rng):
    ts, p = g_gather(rng)
    src = recipe(rng, ts[1]["shape"], ts[0]["dtype"] if rng.random() < 0.9 else rand_dtype(rng))
    return ts + [src], p


op("scatter", "index", "lib.scatter(t0, {d}, t1, t2)", g_scatter, grad=False)
op("scatter_add", "index", "lib.scatter_add(t0, {d}, t1, t2)", g_scatter)
op("scatter_reduce", "index", "lib.scatter_reduce(t0, {d}, t1, t2, {r}, include_self={inc})",
   lambda rng: (lambda ts, p: (ts, dict(p, r=choice(rng, ["sum", "prod", "mean", "amax", "amin"]), inc=bool(rng.random() < 0.5))))(*g_scatter(rng)),
   grad=False)
op("scatter_value", "index", "lib.scatter(t0, {d}, t1, {v})",
   lambda rng: (lambda ts, p: (ts, dict(p, v=scalar(rng, ("int", "float")))))(*g_gather(rng)), grad=False)


def g_index_add(rng):
    s, d, idx = g_index_dim(rng)
    n_idx = idx["shape"][0] if idx["shape"] else 1
    src_shape = list(s)
    if s and -len(s) <= d < len(s):
        src_shape[d] = n_idx
    dt = rand_dtype(rng)
    return [recipe(rng, s, dt), idx, recipe(rng, src_shape, dt if rng.random() < 0.9 else rand_dtype(rng))], {"d": d}


op("index_add", "index", "lib.index_add(t0, {d}, t1, t2, alpha={a})",
   lambda rng: (lambda ts, p: (ts, dict(p, a=scalar(rng, ("int", "float")))))(*g_index_add(rng)))
op("index_copy", "index", "lib.index_copy(t0, {d}, t1, t2)", g_index_add, grad=False)
op("index_fill", "index", "lib.index_fill(t0, {d}, t1, {v})",
   lambda rng: (lambda ts, p: (ts[:2], dict(p, v=scalar(rng, ("int", "float", "bool")))))(*g_index_add(rng)))


def g_masked(rng):
    s = rand_shape(rng)
    return [recipe(rng, s, rand_dtype(rng)), mask_recipe(rng, bshape(rng, s))], {"v": scalar(rng)}


op("masked_fill", "index", "lib.masked_fill(t0, t1, {v})", g_masked)
op("masked_fill_", "index_inplace", "t0.masked_fill_(t1, {v})", g_masked, inplace=True)
op("masked_select", "index", "lib.masked_select(t0, t1)", g_masked)
op("nonzero", "index", "lib.nonzero(t0)", g_unary(), grad=False)
op("nonzero_tuple", "index", "lib.nonzero(t0, as_tuple=True)", g_unary(), grad=False)
op("argwhere", "index", "lib.argwhere(t0)", g_unary(), grad=False)
op("where1", "index", "lib.where(t0)", g_unary(), grad=False)
op("take", "index", "lib.take(t0, t1)",
   lambda rng: (lambda s: ([recipe(rng, s, rand_dtype(rng)),
                            index_recipe(rng, rand_shape(rng, max_nd=2), max(int(np.prod(s)), 1))], {}))(rand_shape(rng)))


def g_getitem(rng):
    s = rand_shape(rng, min_nd=0)
    parts = []
    for x in s:
        r = rng.random()
        if r < 0.3:
            parts.append(f"{int(rng.integers(-x, x)) if x else 0}")
        elif r < 0.6:
            a, b, st = int(rng.integers(-3, 4)), int(rng.integers(-3, 5)), int(rng.integers(1, 3))
            parts.append(f"{a}:{b}:{st}")
        elif r < 0.7:
            parts.append("None")
        elif r < 0.75:
            parts.append("...")
        else:
            parts.append(":")
        if rng.random() < 0.3:
            break
    if rng.random() < 0.1:
        parts.append("None")
    return [recipe(rng, s, rand_dtype(rng))], {"ix": ", ".join(parts) if parts else "..."}


op("getitem", "index", "t0[{ix}]", lambda rng: (lambda ts, p: (ts, {"ix": _Raw(p["ix"])}))(*g_getitem(rng)))


def g_adv(rng):
    s = rand_shape(rng, min_nd=1)
    r = rng.random()
    if r < 0.4:
        idx = index_recipe(rng, rand_shape(rng, max_nd=2), s[0] if s[0] else 1)
        return [recipe(rng, s, rand_dtype(rng)), idx], {}
    m = mask_recipe(rng, s[: int(rng.integers(1, len(s) + 1))], view="contig")
    return [recipe(rng, s, rand_dtype(rng)), m], {}


op("getitem_adv", "index", "t0[t1]", g_adv)


def g_setitem(rng):
    ts, p = g_adv(rng)
    kind = choice(rng, ["scalar", "tensor0", "tensor"])
    if kind == "scalar":
        return ts, {"v": scalar(rng)}
    dt = ts[0]["dtype"] if rng.random() < 0.7 else rand_dtype(rng)
    return ts + [recipe(rng, [] if kind == "tensor0" else [1], dt)], {"v": _Raw("t2")}


op("setitem_adv", "index_inplace", "t0[t1] = {v}", g_setitem, inplace=True)
op("setitem_slice", "index_inplace", "t0[{ix}] = {v}",
   lambda rng: (lambda ts, p: (ts, {"ix": _Raw(p["ix"]), "v": scalar(rng)}))(*g_getitem(rng)), inplace=True)
op("index_put_", "index_inplace", "t0.index_put_((t1,), t2, accumulate={acc})",
   lambda rng: (lambda ts, p: (ts[:2] + [recipe(rng, [1], ts[0]["dtype"] if rng.random() < 0.8 else rand_dtype(rng))],
                               {"acc": bool(rng.random() < 0.5)}))(*g_adv(rng)), inplace=True)

# ---------------------------------------------------------------- linear algebra


def g_mm(rng, batch=False, vec=None):
    n, k, m = (int(rng.integers(0, 5)) for _ in range(3))
    b = [int(rng.integers(0, 4))] if batch else []
    k2 = k if rng.random() < 0.95 else k + 1
    dt = rand_dtype(rng, "float" if rng.random() < 0.8 else "all")
    dt2 = dt if rng.random() < 0.9 else rand_dtype(rng)
    return [recipe(rng, b + [n, k], dt), recipe(rng, b + [k2, m], dt2)], {}


def g_matmul(rng):
    s1 = rand_shape(rng, 1, 4)
    s2 = rand_shape(rng, 1, 4)
    if len(s1) and len(s2) and rng.random() < 0.9:
        if len(s2) >= 2:
            s2[-2] = s1[-1]
        else:
            s2[-1] = s1[-1]
    dt = rand_dtype(rng, "float")
    return [recipe(rng, s1, dt), recipe(rng, s2, dt)], {}


op("matmul", "linalg", "lib.matmul(t0, t1)", g_matmul)
op("mm", "linalg", "lib.mm(t0, t1)", g_mm)
op("bmm", "linalg", "lib.bmm(t0, t1)", lambda rng: g_mm(rng, batch=True))
op("mv", "linalg", "lib.mv(t0, t1)",
   lambda rng: (lambda ts: ([ts[0], recipe(rng, [ts[1]["shape"][0]], ts[1]["dtype"])], {}))(g_mm(rng)[0]))
op("dot", "linalg", "lib.dot(t0, t1)",
   lambda rng: (lambda n, dt: ([recipe(rng, [n], dt), recipe(rng, [n], dt)], {}))(int(rng.integers(0, 6)), rand_dtype(rng)))
op("outer", "linalg", "lib.outer(t0, t1)",
   lambda rng: ([recipe(rng, rand_shape(rng, 1, 1), "float32"), recipe(rng, rand_shape(rng, 1, 1), rand_dtype(rng, "float"))], {}))


def g_addmm(rng):
    ts, _ = g_mm(rng)
    n, m = ts[0]["shape"][0], ts[1]["shape"][1]
    inp = recipe(rng, bshape(rng, [n, m]), ts[0]["dtype"])
    return [inp] + ts, {"b": choice(rng, [0, 1, 0.5, 2]), "a": choice(rng, [1, 0.5, -1, 0])}


op("addmm", "linalg", "lib.addmm(t0, t1, t2, beta={b}, alpha={a})", g_addmm)
op("baddbmm", "linalg", "lib.baddbmm(t0, t1, t2, beta={b}, alpha={a})",
   lambda rng: (lambda ts: ([recipe(rng, [ts[0]["shape"][0], ts[0]["shape"][1], ts[1]["shape"][2]], ts[0]["dtype"])] + ts,
                            {"b": choice(rng, [0, 1, 0.5]), "a": choice(rng, [1, -2])}))(g_mm(rng, batch=True)[0]))
op("trace", "linalg", "lib.trace(t0)", lambda rng: ([recipe(rng, rand_shape(rng, 2, 2), rand_dtype(rng))], {}))
EINSUMS = ["ij,jk->ik", "ii", "ii->i", "ij->", "ij->ji", "bij,bjk->bik", "i,i->", "i,j->ij", "ij,ij->ij", "...j,j->...", "ijk->kji"]


def g_einsum(rng):
    eq = choice(rng, EINSUMS)
    sizes = {c: int(rng.integers(0, 4)) for c in "ijkb"}
    ins = eq.split("->")[0].split(",")
    dt = rand_dtype(rng)
    ts = []
    for term in ins:
        if term.startswith("..."):
            shape = rand_shape(rng, 0, 2) + [sizes[c] for c in term[3:]]
        else:
            shape = [sizes[c] for c in term]
        ts.append(recipe(rng, shape, dt))
    return ts, {"eq": eq}


op("einsum", "linalg", "lib.einsum({eq}, *ts)", g_einsum)

# ---------------------------------------------------------------- nn.functional

F = "lib.nn.functional."
ACTS = "relu relu6 elu selu celu gelu silu mish softplus hardtanh hardsigmoid hardswish logsigmoid softsign tanhshrink sigmoid tanh".split()
for n in ACTS:
    op("F." + n, "activation", f"{F}{n}(t0)", g_unary("float", vals=None))
op("F.leaky_relu", "activation", F + "leaky_relu(t0, {s})", g_tensor_scalar("float", ("float",)))
op("F.elu_alpha", "activation", F + "elu(t0, alpha={s})", g_tensor_scalar("float", ("float",)))
op("F.celu_alpha", "activation", F + "celu(t0, alpha={a})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "float"))], {"a": choice(rng, [0.5, 1.0, 2.0, 0.0])}))
op("F.softplus_bt", "activation", F + "softplus(t0, beta={b}, threshold={th})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "float"))], {"b": choice(rng, [1, 2, 0.5, -1]), "th": choice(rng, [20, 1, 0])}))
op("F.gelu_tanh", "activation", F + "gelu(t0, approximate='tanh')", g_unary("float"))
op("F.softshrink", "activation", F + "softshrink(t0, {l})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "float"))], {"l": choice(rng, [0.5, 0.0, 1.5])}))
op("F.hardshrink", "activation", F + "hardshrink(t0, {l})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "float"))], {"l": choice(rng, [0.5, 0.0, 1.5])}))
op("F.threshold", "activation", F + "threshold(t0, {th}, {v})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "real"))], {"th": scalar(rng, ("int", "float")), "v": scalar(rng, ("int", "float"))}))
op("F.hardtanh_mm", "activation", F + "hardtanh(t0, {lo}, {hi})",
   lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng, "real"))], {"lo": choice(rng, [-1, -2.5, 0]), "hi": choice(rng, [1, 0.5, 3])}))
op("F.softmax", "activation", F + "softmax(t0, dim={dim})", g_reduce("float", dim_required=True, keepdim=False))
op("F.softmin", "activation", F + "softmin(t0, dim={dim})", g_reduce("float", dim_required=True, keepdim=False))
op("F.normalize", "activation", F + "normalize(t0, p={p}, dim={dim})",
   lambda rng: (lambda ts, p: (ts, dict(p, p=choice(rng, [1, 2, 3.0]))))(*g_reduce("float", dim_required=True, keepdim=False)(rng)))
op("F.glu", "activation", F + "glu(t0, {dim})", g_reduce("float", dim_required=True, keepdim=False))


def g_pair(dtypes="float", vals2=None):
    def gen(rng):
        s = rand_shape(rng)
        dt = rand_dtype(rng, dtypes)
        s2 = s if rng.random() < 0.9 else bshape(rng, s)
        return [recipe(rng, s, dt), recipe(rng, s2, dt if rng.random() < 0.95 else rand_dtype(rng), vals=vals2)], \
            {"red": choice(rng, ["mean", "sum", "none"])}
    return gen


op("F.mse_loss", "loss", F + "mse_loss(t0, t1, reduction={red})", g_pair())
op("F.l1_loss", "loss", F + "l1_loss(t0, t1, reduction={red})", g_pair())
op("F.binary_cross_entropy", "loss", F + "binary_cross_entropy(t0, t1, reduction={red})",
   lambda rng: (lambda ts, p: ([dict(ts[0], vals="prob" if rng.random() < 0.9 else ts[0]["vals"]), dict(ts[1], vals="prob")], p))(*g_pair()(rng)))
op("F.binary_cross_entropy_with_logits", "loss",
   F + "binary_cross_entropy_with_logits(t0, t1, reduction={red})",
   lambda rng: (lambda ts, p: ([ts[0], dict(ts[1], vals="prob")], p))(*g_pair()(rng)))


def g_nll(rng, logits=True):
    n, c = int(rng.integers(0, 4)), int(rng.integers(1, 5))
    batched = rng.random() < 0.85
    extra = [int(rng.integers(1, 3))] if rng.random() < 0.2 else []
    dt = rand_dtype(rng, "float")
    x = recipe(rng, ([n, c] if batched else [c]) + (extra if batched else []), dt)
    tgt = index_recipe(rng, ([n] + extra) if batched else [], c + (1 if rng.random() < 0.02 else 0))
    p = {"red": choice(rng, ["mean", "sum", "none"]), "ii": choice(rng, [-100, 0, 1])}
    ts = [x, tgt]
    if rng.random() < 0.3:
        ts.append(recipe(rng, [c], dt, vals="pos"))
        p["w"] = _Raw("t2")
    else:
        p["w"] = None
    return ts, p


op("F.nll_loss", "loss", F + "nll_loss(t0, t1, weight={w}, ignore_index={ii}, reduction={red})", g_nll)
op("F.cross_entropy", "loss", F + "cross_entropy(t0, t1, weight={w}, ignore_index={ii}, reduction={red}, label_smoothing={ls})",
   lambda rng: (lambda ts, p: (ts, dict(p, ls=choice(rng, [0.0, 0.0, 0.1, 0.5]))))(*g_nll(rng)))


def g_ce_prob(rng):
    n, c = int(rng.integers(0, 4)), int(rng.integers(1, 5))
    dt = rand_dtype(rng, "float")
    return [recipe(rng, [n, c], dt), recipe(rng, [n, c], dt, vals="prob")], \
        {"red": choice(rng, ["mean", "sum", "none"]), "ls": choice(rng, [0.0, 0.1, 0.5])}


op("F.cross_entropy_prob", "loss", F + "cross_entropy(t0, t1, reduction={red}, label_smoothing={ls})", g_ce_prob)


def g_embedding(rng):
    v, d = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    return [index_recipe(rng, rand_shape(rng, 0, 2), v), recipe(rng, [v, d], rand_dtype(rng, "float"))], \
        {"pi": choice(rng, [None, 0, -1, 1])}


op("F.embedding", "nn", F + "embedding(t0, t1, padding_idx={pi})", g_embedding)
op("F.one_hot", "nn", F + "one_hot(t0, {c})",
   lambda rng: ([index_recipe(rng, rand_shape(rng, 0, 2), 4)], {"c": choice(rng, [-1, 4, 5])}), grad=False)
op("F.linear", "nn", F + "linear(t0, t1)",
   lambda rng: (lambda i, o, dt: ([recipe(rng, rand_shape(rng, 0, 2) + [i], dt), recipe(rng, [o, i], dt)], {}))(
       int(rng.integers(0, 4)), int(rng.integers(0, 4)), rand_dtype(rng, "float")))


def g_pool(nd):
    def gen(rng):
        k = int(rng.integers(1, 4))
        s = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] + [int(rng.integers(k, k + 5)) for _ in range(nd)]
        if rng.random() < 0.2:
            s = s[1:]
        return [recipe(rng, s, rand_dtype(rng, "float" if rng.random() < 0.8 else "real"))], \
            {"k": k, "s": choice(rng, [None, 1, 2]), "p": int(rng.integers(0, k // 2 + 1)), "ceil": bool(rng.random() < 0.3)}
    return gen


for nd in (1, 2):
    op(f"F.max_pool{nd}d", "pool", F + f"max_pool{nd}d(t0, {{k}}, stride={{s}}, padding={{p}}, ceil_mode={{ceil}})", g_pool(nd))
    op(f"F.avg_pool{nd}d", "pool", F + f"avg_pool{nd}d(t0, {{k}}, stride={{s}}, padding={{p}}, ceil_mode={{ceil}})", g_pool(nd))
    op(f"F.adaptive_avg_pool{nd}d", "pool", F + f"adaptive_avg_pool{nd}d(t0, {{k}})", g_pool(nd))
    op(f"F.adaptive_max_pool{nd}d", "pool", F + f"adaptive_max_pool{nd}d(t0, {{k}})", g_pool(nd))


def g_conv(nd):
    def gen(rng):
        cin, cout, k = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        g = choice(rng, [1, 1, cin]) if cin % 1 == 0 else 1
        if cout % g:
            g = 1
        n = int(rng.integers(1, 3))
        dt = rand_dtype(rng, "float")
        x = recipe(rng, [n, cin] + [int(rng.integers(k, k + 4)) for _ in range(nd)], dt)
        w = recipe(rng, [cout, cin // g] + [k] * nd, dt)
        ts = [x, w]
        if rng.random() < 0.5:
            ts.append(recipe(rng, [cout], dt))
        return ts, {"s": int(rng.integers(1, 3)), "p": int(rng.integers(0, 2)), "d": int(rng.integers(1, 3)), "g": g,
                    "b": _Raw("t2") if len(ts) == 3 else None}
    return gen


def g_conv_transpose(nd):
    def gen(rng):
        cin, cout, k = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        g = choice(rng, [1, 1, cin])
        if cout % g:
            g = 1
        n = int(rng.integers(1, 3))
        dt = rand_dtype(rng, "float")
        x = recipe(rng, [n, cin] + [int(rng.integers(1, 4)) for _ in range(nd)], dt)
        w = recipe(rng, [cin, cout // g] + [k] * nd, dt)
        ts = [x, w]
        if rng.random() < 0.5:
            ts.append(recipe(rng, [cout], dt))
        s, d = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        return ts, {"s": s, "p": int(rng.integers(0, 2)), "d": d, "g": g, "op": int(rng.integers(0, max(s, d))),
                    "b": _Raw("t2") if len(ts) == 3 else None}
    return gen


for nd in (1, 2, 3):
    op(f"F.conv{nd}d", "conv", F + f"conv{nd}d(t0, t1, {{b}}, stride={{s}}, padding={{p}}, dilation={{d}}, groups={{g}})", g_conv(nd))
    op(f"F.conv_transpose{nd}d", "conv", F + f"conv_transpose{nd}d(t0, t1, {{b}}, stride={{s}}, padding={{p}}, "
       "output_padding={op}, groups={g}, dilation={d})", g_conv_transpose(nd))


def g_norm(rng):
    s = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(2, 4)))]
    dt = rand_dtype(rng, "float")
    k = int(rng.integers(1, len(s) + 1))
    ns = s[-k:]
    ts = [recipe(rng, s, dt)]
    p = {"ns": ns, "w": None, "b": None, "eps": choice(rng, [1e-5, 1e-3])}
    if rng.random() < 0.5:
        ts.append(recipe(rng, ns, dt))
        p["w"] = _Raw("t1")
        if rng.random() < 0.5:
            ts.append(recipe(rng, ns, dt))
            p["b"] = _Raw("t2")
    return ts, p


op("F.layer_norm", "norm", F + "layer_norm(t0, {ns}, {w}, {b}, eps={eps})", g_norm)
op("F.rms_norm", "norm", F + "rms_norm(t0, {ns}, {w}, eps={eps})", lambda rng: (lambda ts, p: (ts[:2], p))(*g_norm(rng)))


def g_group_norm(rng):
    c = choice(rng, [2, 4, 6])
    g = choice(rng, [1, 2, c])
    dt = rand_dtype(rng, "float")
    return [recipe(rng, [int(rng.integers(1, 3)), c, int(rng.integers(1, 4))], dt)], {"g": g}


op("F.group_norm", "norm", F + "group_norm(t0, {g})", g_group_norm)


def g_batch_norm(rng):
    c = int(rng.integers(1, 4))
    dt = rand_dtype(rng, "float")
    s = [int(rng.integers(1, 4)), c] + [int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 2)))]
    return [recipe(rng, s, dt), recipe(rng, [c], dt), recipe(rng, [c], dt, vals="pos")], {"tr": bool(rng.random() < 0.5)}


op("F.batch_norm", "norm", F + "batch_norm(t0, t1.detach().clone(), t2.detach().clone(), training={tr})", g_batch_norm)


def g_pad(rng):
    s = rand_shape(rng, 1, 4)
    n = int(rng.integers(1, len(s) + 1))
    mode = choice(rng, ["constant", "constant", "reflect", "replicate", "circular"])
    pads = tuple(int(rng.integers(-1 if mode == "constant" else 0, 3)) for _ in range(2 * n))
    return [recipe(rng, s, rand_dtype(rng, "float"))], {"pad": pads, "mode": mode}


op("F.pad", "nn", F + "pad(t0, {pad}, mode={mode})", g_pad)
op("F.interpolate", "nn", F + "interpolate(t0, scale_factor={sf}, mode={mode})",
   lambda rng: ([recipe(rng, [1, int(rng.integers(1, 3))] + [int(rng.integers(1, 5))], rand_dtype(rng, "f32"))],
                {"sf": choice(rng, [2, 0.5, 1.5, 3]), "mode": choice(rng, ["nearest", "linear"])}))

# ---------------------------------------------------------------- creation

op("arange", "creation", "lib.arange({a}, {b}, {st})",
   lambda rng: ([], {"a": scalar(rng, ("int", "float")), "b": scalar(rng, ("int", "float")),
                     "st": choice(rng, [1, -1, 0.5, 2, -0.3, 0])}), grad=False)
op("linspace", "creation", "lib.linspace({a}, {b}, {n})",
   lambda rng: ([], {"a": scalar(rng, ("int", "float")), "b": scalar(rng, ("int", "float")), "n": int(rng.integers(0, 6))}), grad=False)
op("full", "creation", "lib.full({s}, {v})",
   lambda rng: ([], {"s": tuple(rand_shape(rng, 0, 3)), "v": scalar(rng)}), grad=False)
op("eye", "creation", "lib.eye({n}, {m})", lambda rng: ([], {"n": int(rng.integers(0, 4)), "m": int(rng.integers(0, 4))}), grad=False)
op("tensor", "creation", "lib.tensor({v})",
   lambda rng: ([], {"v": [scalar(rng) for _ in range(int(rng.integers(0, 4)))] if rng.random() < 0.8 else scalar(rng)}), grad=False)


def unavailable(lib):
    """Catalogue entries naming a function or method `lib` lacks (listed, not run)."""
    import re
    out = []
    for spec in CATALOGUE:
        for path in re.findall(r"lib\.([\w.]+)\(", spec.code):
            obj = lib
            for part in path.split("."):
                obj = getattr(obj, part, None)
            if obj is None:
                out.append(spec.name)
        for meth in re.findall(r"t0\.(\w+)\(", spec.code):
            if not hasattr(lib.Tensor, meth):
                out.append(spec.name)
    return sorted(set(out))


# ---------------------------------------------------------------- the generic tier
# Every other public function and Tensor method PyTorch also has, called with a
# few generic argument patterns (a tensor, two broadcastable tensors, a tensor
# and a small int).  Most patterns are wrong for most functions: then both
# libraries must raise the same exception class.

# Random, uninitialised, global-state, file-touching (save, load) or identity-revealing entry points: their
# outputs are not comparable between libraries by design.
NOT_COMPARABLE = set("""bernoulli bernoulli_ multinomial normal normal_ poisson rand rand_like randint randn randn_like
randperm randint_like cauchy_ exponential_ geometric_ log_normal_ random_ uniform_ empty empty_like empty_strided
empty_permuted manual_seed seed initial_seed
set_default_dtype set_printoptions set_rng_state get_rng_state data_ptr storage untyped_storage cuda backward save load
register_hook register_post_accumulate_grad_hook retain_grad from_dlpack from_numpy is_shared get_device svd numpy
as_strided
set_default_device set_default_tensor_type set_num_interop_threads set_warn_always set_flush_denormal
use_deterministic_algorithms set_deterministic_debug_mode set_float32_matmul_precision set_anomaly_enabled
set_autocast_enabled set_autocast_dtype set_autocast_cpu_enabled set_autocast_cpu_dtype set_autocast_gpu_dtype
set_autocast_cache_enabled from_file frombuffer const_data_ptr apply_ map_ map2_ pin_memory new_empty new""".split())


def _generic_patterns(name, method):
    head = f"t0.{name}(" if method else f"lib.{name}(t0"
    sep = "" if method else ", "
    return [
        (name + "/t", head + ")", lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng))], {})),
        (name + "/tt", head + sep + "t1)", g_binary()),
        (name + "/ti", head + sep + "{i})",
         lambda rng: ([recipe(rng, rand_shape(rng), rand_dtype(rng))], {"i": int(rng.integers(-2, 4))})),
    ]


def add_generic_tier(torch, ft):
    """Adds the generic tier for names both libraries have and the catalogue does not call."""
    import re
    called = set()
    for spec in CATALOGUE:
        called |= set(re.findall(r"lib\.(\w+)\(", spec.code)) | set(re.findall(r"t0\.(\w+)\(", spec.code))
    for method, lib_t, lib_f in ((False, torch, ft), (True, torch.Tensor, ft.Tensor)):
        for name in sorted(dir(lib_f)):
            if name.startswith("_") or name in called or name in NOT_COMPARABLE or not hasattr(lib_t, name):
                continue
            obj = getattr(lib_f, name, None)
            if not callable(obj) or isinstance(obj, type):
                continue
            for tag, code, gen in _generic_patterns(name, method):
                op(("T." if method else "") + tag, "generic", code, gen, inplace=name.endswith("_"))
