"""Random inputs built identically in ferrotorch and PyTorch.

A tensor argument is described by a *recipe*: a JSON-friendly dict holding its
shape, dtype, value kind, view construction and seed.  ``build`` turns a recipe
into a tensor of either library by making the same NumPy data and applying the
same view calls (transpose, stepped slice, expand, permute, offset, an
overlapping ``as_strided``), so view construction is exercised too.  ``render``
writes the recipe as PyTorch code for a reproducer.
"""

import numpy as np

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8")
DTYPES = FLOATS + INTS + ("bool",)

# Values with a special meaning for some op: signed zeros, infinities, NaN,
# values at the edges of the float range and of the usual singular points.
SPECIALS = (0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 0.5, -0.5,
            2.0, 1e30, -1e30, 3e38, 1e-30, -1e-40, 88.0, -88.0, 710.0, 20.0, -20.0)

INT_RANGE = {
    "int64": (-2**63, 2**63 - 1), "int32": (-2**31, 2**31 - 1), "int16": (-2**15, 2**15 - 1),
    "int8": (-128, 127), "uint8": (0, 255),
}

VIEWS = ("contig", "contig", "contig", "transpose", "step", "expand", "offset", "permute", "strided")


# ---------------------------------------------------------------- generation

def rand_shape(rng, min_nd=0, max_nd=4, max_size=5, zero=0.08):
    """A shape with 0-d, size-1 and (rarely) size-0 dims."""
    nd = int(rng.integers(min_nd, max_nd + 1))
    out = []
    for _ in range(nd):
        r = rng.random()
        out.append(0 if r < zero else 1 if r < zero + 0.2 else int(rng.integers(2, max_size + 1)))
    return out


def rand_dtype(rng, kinds="all"):
    pool = {"all": DTYPES, "float": FLOATS, "int": INTS, "intbool": INTS + ("bool",),
            "real": FLOATS + INTS, "f32": ("float32", "float64")}[kinds] if isinstance(kinds, str) else kinds
    # float32 is PyTorch's default and the most used: weight it up.
    if "float32" in pool and rng.random() < 0.3:
        return "float32"
    return str(pool[int(rng.integers(len(pool)))])


def recipe(rng, shape, dtype, vals=None, view=None, grad=None):
    """A tensor recipe; value kind and view chosen at random unless given."""
    if vals is None:
        vals = str(rng.choice(["normal", "normal", "int", "special", "unit", "pos", "wide"]))
    if view is None:
        view = str(rng.choice(VIEWS))
    r = {"shape": [int(s) for s in shape], "dtype": dtype, "vals": vals, "view": view,
         "seed": int(rng.integers(2**31))}
    if view == "permute":
        r["perm"] = [int(p) for p in rng.permutation(len(shape))]
    if view in ("step", "expand") and shape:
        r["dim"] = int(rng.integers(len(shape)))
    if view == "strided":
        r["strides"] = [int(rng.integers(0, 3)) for _ in shape]
    if grad is not None:
        r["grad"] = grad
    return r


def index_recipe(rng, shape, high, dtype="int64", view="contig"):
    """An integer tensor with entries in [0, high) (negatives wrapped, if any, by the caller)."""
    r = recipe(rng, shape, dtype, vals="index", view=view)
    r["high"] = int(high)
    return r


def mask_recipe(rng, shape, view=None):
    return recipe(rng, shape, "bool", vals="mask", view=view)


# ---------------------------------------------------------------- building

def _base_shape(r):
    """Shape of the storage-owning tensor the view is taken from."""
    shape, view = list(r["shape"]), r["view"]
    nd = len(shape)
    if view == "transpose" and nd >= 2:
        shape[-1], shape[-2] = shape[-2], shape[-1]
    elif view == "step" and nd >= 1:
        shape[r["dim"]] = shape[r["dim"]] * 2
    elif view == "expand" and nd >= 1:
        shape[r["dim"]] = 1
    elif view == "offset" and nd >= 1:
        shape[0] += 1
    elif view == "permute" and nd >= 2:
        inv = np.argsort(r["perm"])
        shape = [shape[p] for p in inv]
    elif view == "strided" and nd >= 1:
        if 0 in shape:
            shape = [0]
        else:
            shape = [1 + sum((s - 1) * st for s, st in zip(shape, r["strides"]))]
    return shape


def _round_bf16(a32):
    """Round float32 values to the nearest bfloat16 (ties to even), keeping float32."""
    b = a32.astype(np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(a32)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    out = (b & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    out = np.where(nan, np.float32("nan"), out)
    return out


def values(r, shape):
    """The NumPy data of a recipe's base tensor, exactly representable in its dtype."""
    rng = np.random.default_rng(r["seed"])
    dt, kind = r["dtype"], r["vals"]
    n = int(np.prod(shape)) if shape else 1
    if kind == "index":
        a = rng.integers(0, max(r["high"], 1), size=n)
    elif kind == "mask":
        a = rng.random(n) < 0.5
    elif dt == "bool":
        a = rng.random(n) < 0.5
    elif dt in INTS:
        lo, hi = INT_RANGE[dt]
        if kind == "wide":
            a = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)
        elif kind == "special":
            pool = np.array([lo, hi, 0, 1, -1 if lo < 0 else 2, lo + 1, hi - 1], dtype=np.int64)
            a = pool[rng.integers(len(pool), size=n)]
        elif kind == "pos":
            a = rng.integers(1, min(hi, 9) + 1, size=n)
        else:
            a = rng.integers(max(lo, -6), min(hi, 6) + 1, size=n)
    else:
        if kind == "normal":
            a = rng.standard_normal(n) * 2
        elif kind == "int":
            a = rng.integers(-4, 5, size=n).astype(np.float64)
        elif kind == "special":
            a = np.where(rng.random(n) < 0.5, np.array(SPECIALS)[rng.integers(len(SPECIALS), size=n)],
                         rng.standard_normal(n))
        elif kind == "unit":
            a = rng.uniform(-0.99, 0.99, size=n)
        elif kind == "pos":
            a = rng.uniform(0.05, 4.0, size=n)
        elif kind == "prob":
            a = rng.uniform(0.0, 1.0, size=n)
        else:  # wide: magnitudes across the exponent range
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, size=n)
    a = np.asarray(a).reshape(shape)
    if dt == "float16":
        return a.astype(np.float16)
    if dt == "bfloat16":
        return _round_bf16(a.astype(np.float32))
    if dt == "bool":
        return a.astype(np.bool_)
    return a.astype(dt)


def build(lib, r, leaves=None):
    """The tensor of `lib` described by recipe `r`.

    A recipe with ``grad`` makes a leaf requiring grad (appended to `leaves`),
    cloned before the view is taken so in-place ops on the view are legal."""
    shape = _base_shape(r)
    a = values(r, shape)
    # np.ascontiguousarray would turn a 0-d array into shape (1,).
    base = lib.from_numpy(np.array(a, order="C", copy=True))
    if r["dtype"] == "bfloat16":
        base = base.to(lib.bfloat16)
    else:
        base = base.clone()
    if r.get("grad"):
        base.requires_grad_(True)
        if leaves is not None:
            leaves.append(base)
        base = base.clone()
    return apply_view(base, r), base


def apply_view(t, r):
    view, nd = r["view"], len(r["shape"])
    if view == "transpose" and nd >= 2:
        return t.transpose(-1, -2)
    if view == "step" and nd >= 1:
        idx = (slice(None),) * r["dim"] + (slice(None, None, 2),)
        return t[idx]
    if view == "expand" and nd >= 1:
        return t.expand(*r["shape"])
    if view == "offset" and nd >= 1:
        return t[1:]
    if view == "permute" and nd >= 2:
        return t.permute(*r["perm"])
    if view == "strided" and nd >= 1:
        strides = r["strides"] if 0 not in r["shape"] else [1] * nd
        return t.as_strided(r["shape"], strides)
    return t


# ---------------------------------------------------------------- reproducers

def render(name, r):
    """PyTorch code that builds the recipe's tensor as `name` (values written out)."""
    shape = _base_shape(r)
    a = values(r, shape)
    dt = r["dtype"]
    if a.size <= 64:
        data = np.asarray(a, dtype=np.float64 if dt in FLOATS else None).tolist()
        data = repr(data).replace("nan", "float('nan')").replace("inf", "float('inf')")
        make = f"torch.tensor({data}, dtype=torch.{dt}).reshape({list(shape)})"
    else:
        make = f"<{a.size} values from recipe seed {r['seed']}>"
    lines = []
    if r.get("grad"):
        lines.append(f"{name}_leaf = {make}.requires_grad_()")
        make = f"{name}_leaf.clone()"
    view = r["view"]
    nd = len(r["shape"])
    suffix = ""
    if view == "transpose" and nd >= 2:
        suffix = ".transpose(-1, -2)"
    elif view == "step" and nd >= 1:
        suffix = "[" + ":, " * r["dim"] + "::2]"
    elif view == "expand" and nd >= 1:
        suffix = f".expand({r['shape']})"
    elif view == "offset" and nd >= 1:
        suffix = "[1:]"
    elif view == "permute" and nd >= 2:
        suffix = f".permute({r['perm']})"
    elif view == "strided" and nd >= 1:
        strides = r["strides"] if 0 not in r["shape"] else [1] * nd
        suffix = f".as_strided({r['shape']}, {strides})"
    lines.append(f"{name} = {make}{suffix}")
    return "\n".join(lines)
