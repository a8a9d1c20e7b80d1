"""Running one case on one library, and judging ferrotorch's run against PyTorch's.

``execute`` returns a plain summary of what a library did (exception class, or
the output structure with shapes, dtypes, strides, values as NumPy arrays, the
inputs after the call, and gradients); ``judge`` compares two summaries and
names the first disagreement.
"""

import re
import numpy as np

from gen import build

# Tolerances per dtype: (rtol, atol) before scaling by the magnitude involved.
TOL = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5), "float16": (4e-3, 2e-3), "bfloat16": (2e-2, 1.6e-2)}
# Families whose outputs sum many inputs: their absolute tolerance scales with the inputs.
LOSS_NAME = re.compile(r"loss|entropy|kl_div|nll|margin")
SUMMING = {"reduce", "scan", "linalg", "loss", "norm", "conv", "pool", "nn", "ternary"}
# Ops returning (values, indices) where PyTorch leaves the index of tied values unspecified.
TIE_INDICES = {"topk", "kthvalue", "median_dim", "mode_dim", "cummax", "cummin"}
BUILTIN_ERRORS = (IndexError, TypeError, ValueError, NotImplementedError, KeyError, ZeroDivisionError,
                  OverflowError, AttributeError, RuntimeError)

_CODE = {}


def compiled(code):
    c = _CODE.get(code)
    if c is None:
        try:
            c = (compile(code, "<case>", "eval"), True)
        except SyntaxError:
            c = (compile(code, "<case>", "exec"), False)
        _CODE[code] = c
    return c


def error_class(e):
    """The builtin exception class a user would catch (PyTorch subclasses RuntimeError etc.)."""
    if type(e).__name__ == "PanicException":
        return "PanicException"
    for cls in type(e).__mro__:
        if cls in BUILTIN_ERRORS:
            return cls.__name__
    return type(e).__name__


def to_np(t):
    t = t.detach()
    if t.numel() == 0:
        # numpy refuses a shape whose nonzero dims overflow its size limit
        # ((0, 2**60) is a valid empty tensor); the shape is compared apart.
        t = t.reshape(0)
    name = str(t.dtype).split(".")[-1]
    if name == "bfloat16":
        t = t.float()
    return np.array(t.numpy(), copy=True)


# Outputs with more elements than this (a broadcast_to or resize_ to 2**31
# elements, say) are compared by shape, dtype and strides only: reading their
# values would take minutes or more memory than the machine has.
MAX_COMPARED = 1 << 22


def describe(x, is_view=False):
    """A library-independent summary of one output."""
    if hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "detach"):
        d = {"k": "T", "shape": tuple(int(s) for s in x.shape), "dtype": str(x.dtype).split(".")[-1],
             "rg": bool(x.requires_grad), "v": to_np(x) if x.numel() <= MAX_COMPARED else None}
        return d
    if isinstance(x, (tuple, list)):
        return {"k": "seq", "type": type(x).__name__ if hasattr(x, "_fields") or type(x).__module__ != "builtins" else type(x).__name__,
                "items": [describe(i) for i in x]}
    if isinstance(x, (bool, int, float, complex, str, type(None))):
        return {"k": "py", "v": x}
    return {"k": "other", "type": type(x).__name__}


def flat_tensors(x):
    if hasattr(x, "detach") and hasattr(x, "shape"):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for i in x for t in flat_tensors(i)]
    return []


def overlapping(t):
    """True when two elements of `t` share a memory location.

    PyTorch refuses in-place writes only where its cheap check proves such
    overlap (a stride of 0 over a dim longer than 1); for the rest its
    result depends on the order its kernel visits the elements, which it
    documents as undefined.
    """
    if t.numel() < 2:
        return False
    idx = np.indices(tuple(t.shape)).reshape(t.dim(), -1)
    offsets = (idx * np.array(t.stride()).reshape(-1, 1)).sum(0)
    return len(np.unique(offsets)) < offsets.size


# Ops whose new elements are uninitialised memory (as `empty`): shapes and
# dtypes are compared, values are not.
UNINITIALISED = {"resize_", "resize_as_"}


def undefined_values(spec, ref):
    """True when PyTorch leaves the values of this case undefined."""
    base = spec.name.split("/")[0].removeprefix("T.")
    return base in UNINITIALISED or bool(ref.get("overlap"))


def execute(lib, spec, recipes, params, grad_seed):
    """Runs the case on `lib`; returns its summary."""
    leaves = []
    try:
        built = [build(lib, r, leaves) for r in recipes]
    except Exception as e:  # a failure to build inputs is a finding of its own
        return {"stage": "build", "err": error_class(e), "msg": str(e)[:300]}
    ts = [b[0] for b in built]
    env = {"lib": lib, "ts": ts}
    for i, t in enumerate(ts):
        env[f"t{i}"] = t
    code, is_expr = compiled(spec.code.format(**{k: repr(v) for k, v in params.items()}))
    overlap = bool(spec.inplace and ts and hasattr(ts[0], "stride") and overlapping(ts[0]))
    try:
        if is_expr:
            out = eval(code, env)
        else:
            exec(code, env)
            out = env["t0"]
    except Exception as e:
        return {"stage": "call", "err": error_class(e), "msg": str(e)[:300]}
    res = {"stage": "ok", "out": describe(out), "overlap": overlap}
    if spec.inplace:
        res["same_object"] = env["t0"] is ts[0]
    # Inputs and their storage owners after the call: in-place writes must land.
    res["after"] = [describe(t) for t in ts] + [describe(b[1]) for b in built]
    if ts and hasattr(out, "shape") and out.numel():
        # Which input (if any) the output shares storage with: views must stay views.
        ptr = out.untyped_storage().data_ptr()
        res["view_of"] = next((i for i, t in enumerate(ts) if t.numel() and t.untyped_storage().data_ptr() == ptr), None)
        res["strides"] = tuple(out.stride())
    outs = [o for o in flat_tensors(out) if o.requires_grad and str(o.dtype).split(".")[-1] in TOL
            and o.numel() <= MAX_COMPARED]
    if leaves and outs:
        rng = np.random.default_rng(grad_seed)
        try:
            loss = None
            for o in outs:
                w = lib.from_numpy(rng.standard_normal(tuple(o.shape)))
                term = (o.double() * w).sum()
                loss = term if loss is None else loss + term
            grads = lib.autograd.grad(loss, leaves, allow_unused=True)
            res["grads"] = [None if g is None else describe(g) for g in grads]
        except Exception as e:
            res["grads_err"] = error_class(e)
            res["grads_msg"] = str(e)[:300]
    return res


def input_scale(recipes, ref):
    m = 1.0
    for d in ref.get("after", []):
        if d.get("k") == "T" and d["v"] is not None and d["v"].dtype.kind == "f" and d["v"].size:
            v = np.abs(d["v"][np.isfinite(d["v"])])
            if v.size:
                m = max(m, float(v.max()))
    return m


def _values(a, b, dtype, scale):
    """Why arrays `a` (ours) and `b` (torch's) differ, or None."""
    if a.dtype.kind in "biu" or a.dtype == np.bool_ or dtype not in TOL:
        if a.dtype != b.dtype and a.dtype.kind == b.dtype.kind == "f":
            pass
        elif not np.array_equal(a, b):
            return "values differ"
        return None
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    rtol, atol = TOL[dtype]
    fin = np.isfinite(b64)
    s = max(1.0, float(np.abs(b64[fin]).max()) if fin.any() else 1.0, scale)
    ok = np.isclose(a64, b64, rtol=rtol, atol=atol * s, equal_nan=True)
    if not ok.all():
        i = np.argwhere(~ok)[0]
        return f"values differ at {tuple(int(x) for x in i)}: ours {a64[tuple(i)]!r} torch {b64[tuple(i)]!r}"
    return None


PRECISION = ("bfloat16", "float16", "float32", "float64")


def loosest(recipes, ref):
    """The least precise float dtype among the inputs and outputs: gradients flow through it."""
    names = [r["dtype"] for r in recipes] + [d["dtype"] for d in _tensors(ref.get("out"))]
    present = [p for p in PRECISION if p in names]
    return present[0] if present else None


def _tensors(d):
    if not d:
        return []
    if d["k"] == "T":
        return [d]
    if d["k"] == "seq":
        return [t for i in d["items"] for t in _tensors(i)]
    return []


def same(a, b, scale, path="out", tol_dtype=None):
    """First difference between two `describe` summaries (ours `a`, torch's `b`) as (kind, detail)."""
    if a["k"] != b["k"]:
        return "structure", f"{path}: ours {a['k']} torch {b['k']}"
    if b["k"] == "seq":
        if len(a["items"]) != len(b["items"]):
            return "structure", f"{path}: {len(a['items'])} items, torch {len(b['items'])}"
        for i, (x, y) in enumerate(zip(a["items"], b["items"])):
            r = same(x, y, scale, f"{path}[{i}]")
            if r:
                return r
        return None
    if b["k"] == "py":
        va, vb = a["v"], b["v"]
        if type(va) is not type(vb):
            return "structure", f"{path}: ours {type(va).__name__} torch {type(vb).__name__}"
        if isinstance(vb, float) and (va == vb or (va != va and vb != vb) or abs(va - vb) <= 1e-6 * max(1, abs(vb))):
            return None
        if va != vb:
            return "value", f"{path}: ours {va!r} torch {vb!r}"
        return None
    if b["k"] == "other":
        return None
    if a["shape"] != b["shape"]:
        return "shape", f"{path}: ours {a['shape']} torch {b['shape']}"
    if a["dtype"] != b["dtype"]:
        return "dtype", f"{path}: ours {a['dtype']} torch {b['dtype']}"
    if a["v"] is None or b["v"] is None:
        return None
    dt = b["dtype"]
    if tol_dtype and dt in TOL and PRECISION.index(tol_dtype) < PRECISION.index(dt):
        dt = tol_dtype
    why = _values(a["v"], b["v"], dt, scale)
    if why:
        return "value", f"{path}: {why}"
    return None


def _tie_ok(spec, params, ours, ref):
    """For ops with unspecified tie indices: our indices select our (matching) values."""
    try:
        x = ref["after"][0]["v"]
        vals, idx = ours["out"]["items"][0]["v"], ours["out"]["items"][1]["v"]
        if x.ndim == 0:
            return bool(np.all(idx == 0))
        dim = params.get("dim", -1) % x.ndim
        if spec.name in ("cummax", "cummin"):
            got = np.take_along_axis(x, idx, dim)
        else:
            ix = idx if idx.ndim == x.ndim else np.expand_dims(idx, dim)
            got = np.take_along_axis(x, ix, dim)
            got = got if idx.ndim == x.ndim else np.squeeze(got, dim)
        return _values(got.astype(vals.dtype), vals, ref["out"]["items"][0]["dtype"], 1.0) is None
    except Exception:
        return False


def judge(spec, params, ours, ref, recipes):
    """(verdict, detail): 'ok', or the kind of the first disagreement."""
    if ours.get("err") == "PanicException":
        return "panic", ours["msg"]
    if ref["stage"] != "ok" or ours["stage"] != "ok":
        if ref["stage"] == "ok":
            return "error:ft_raises", f"ours {ours['err']}: {ours['msg']}"
        if ours["stage"] == "ok":
            return "error:torch_raises", f"torch {ref['err']}: {ref['msg']}"
        if ours["err"] != ref["err"]:
            return "error:class", f"ours {ours['err']} ({ours['msg'][:120]}) torch {ref['err']} ({ref['msg'][:120]})"
        return "ok", ""
    scale = input_scale(recipes, ref) if spec.family in SUMMING else 1.0
    undefined = undefined_values(spec, ref)
    # PyTorch's losses compute their terms in the input's dtype and promote
    # afterwards (binary_cross_entropy_with_logits takes log_sigmoid of a
    # float32 input before meeting a float64 target), so a float64 loss of a
    # float32 input carries float32 rounding: judge it at the input's precision.
    # The generic tier reaches the same losses under their ATen names
    # (torch.binary_cross_entropy_with_logits), judged the same way.
    loss = spec.family == "loss" or (spec.family == "generic" and LOSS_NAME.search(spec.name))
    diff = same(ours["out"], ref["out"], scale, "out", loosest(recipes, ref) if loss else None)
    if diff and undefined and diff[0] == "value":
        diff = None
    if diff and spec.name in TIE_INDICES and diff[0] == "value" and diff[1].startswith("out[1]") and _tie_ok(spec, params, ours, ref):
        diff = None
    if diff:
        return "wrong:" + diff[0], diff[1]
    if ours["out"]["k"] == "T" and ours["out"]["rg"] != ref["out"]["rg"]:
        return "wrong:requires_grad", f"ours {ours['out']['rg']} torch {ref['out']['rg']}"
    if ref.get("view_of") is not None and not spec.inplace:
        if ours.get("view_of") != ref["view_of"]:
            return "wrong:view", f"torch returns a view of input {ref['view_of']}, ours does not"
        if ours.get("strides") != ref["strides"]:
            return "wrong:strides", f"ours {ours.get('strides')} torch {ref['strides']}"
    if spec.inplace and ours.get("same_object") != ref.get("same_object"):
        return "wrong:inplace", "in-place operator did not return the same object"
    for i, (x, y) in enumerate(zip(ours["after"], ref["after"])):
        d = same(x, y, scale, f"input{i}-after")
        if d and not (undefined and d[0] == "value"):
            return "wrong:mutation", d[1]
    if "grads_err" in ref and "grads_err" not in ours:
        # PyTorch has no derivative for some in-place or integer-valued ops; having one is no bug.
        if "not implemented" in ref["grads_msg"]:
            return "ok", ""
        return "error:grad", f"torch {ref['grads_err']} ({ref['grads_msg'][:150]})"
    if "grads_err" in ref or "grads_err" in ours:
        if ref.get("grads_err") != ours.get("grads_err"):
            return "wrong:grad_error", f"ours {ours.get('grads_err')} ({ours.get('grads_msg', '')[:150]}) torch {ref.get('grads_err')} ({ref.get('grads_msg', '')[:150]})"
        return "ok", ""
    if undefined:
        return "ok", ""
    if "grads" in ref or "grads" in ours:
        ga, gb = ours.get("grads"), ref.get("grads")
        if (ga is None) != (gb is None):
            return "wrong:grad", "one library produced no gradient"
        for i, (x, y) in enumerate(zip(ga, gb)):
            if (x is None) != (y is None):
                return "wrong:grad", f"grad {i}: ours {'None' if x is None else 'tensor'} torch {'None' if y is None else 'tensor'}"
            if x is not None:
                d = same(x, y, max(scale, 1.0), f"grad{i}", loosest(recipes, ref))
                if d:
                    return "wrong:grad", d[1]
    return "ok", ""
