"""The child process that runs cases: one JSON request a line on stdin, one
JSON answer a line on stdout.

Before each case it writes ``{"start": id}`` and flushes, and before each
library runs it writes ``{"side": "torch"|"ours"}``, so that when a case
aborts or hangs the process the driver knows which case, and which library,
did it.  A request is
either ``{"id": n, "seed": s}`` (the case is drawn from the seed) or
``{"id": n, "case": {...}}`` (an explicit case, used while shrinking).
"""

import json
import math
import os
import resource
import sys
import warnings
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compare import execute, judge  # noqa: E402
from gen import render  # noqa: E402
import ops  # noqa: E402
from ops import CATALOGUE, _Raw, unavailable  # noqa: E402

BY_NAME = {}


def draw(seed, idx, only=None, skip=()):
    """The case numbered `idx` of the campaign with `seed` (deterministic)."""
    rng = np.random.default_rng([seed, idx])
    pool = [o for o in CATALOGUE if (only is None or o.name in only or o.family in only) and o.name not in skip]
    # The generic tier (hundreds of entries, mostly argument-pattern probes) gets a quarter of the cases.
    curated = [o for o in pool if o.family != "generic"]
    generic = [o for o in pool if o.family == "generic"]
    pick = generic if generic and (not curated or rng.random() < 0.25) else curated
    spec = pick[int(rng.integers(len(pick)))]
    recipes, params = spec.gen(rng)
    if spec.grad and rng.random() < 0.5:
        for r in recipes:
            if r["dtype"] in ("float32", "float64") and r["vals"] not in ("index", "mask"):
                r["grad"] = True
    return {"op": spec.name, "recipes": recipes, "params": params}


def encode(params):
    return {k: {"__raw__": str(v)} if isinstance(v, _Raw) else v for k, v in params.items()}


def decode(params):
    return {k: _Raw(v["__raw__"]) if isinstance(v, dict) and "__raw__" in v else
            tuple(v) if isinstance(v, list) and k in ("dims", "p", "d", "r", "pad", "sizes") else v
            for k, v in params.items()}


def reproducer(case):
    spec = BY_NAME[case["op"]]
    lines = ["import torch", "from math import inf, nan"]
    lines += [render(f"t{i}", r) for i, r in enumerate(case["recipes"])]
    if "ts" in spec.code:
        lines.append("ts = [" + ", ".join(f"t{i}" for i in range(len(case["recipes"]))) + "]")
    code = spec.code.format(**{k: repr(v) for k, v in case["params"].items()})
    lines.append(code.replace("lib.", "torch."))
    return "\n".join(lines)


def run_case(case, torch, ft, side=lambda name: None):
    """Runs `case` on PyTorch, then on ours; `side` is told which one is about to run."""
    spec = BY_NAME[case["op"]]
    params = case["params"]
    gseed = zlib.crc32(json.dumps(case["recipes"], sort_keys=True).encode())
    side("torch")
    ref = execute(torch, spec, case["recipes"], params, gseed)
    side("ours")
    ours = execute(ft, spec, case["recipes"], params, gseed)
    return judge(spec, params, ours, ref, case["recipes"])


def limit_memory():
    """Caps this worker's address space (FUZZ_MEM_GB, default 8 GiB).

    A case such as ``ones(2**31 - 1, 2)`` asks for 17 GB: on a machine with
    little more than that, the second library's copy swaps until the hang
    limit (or the kernel kills a worker), which says nothing about either
    library. Under the cap both raise their out-of-memory RuntimeError and
    are compared like any other error."""
    gb = float(os.environ.get("FUZZ_MEM_GB", 8))
    if gb > 0:
        cap = int(gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def main():
    warnings.simplefilter("ignore")
    import ferrotorch as ft
    import torch
    # Both libraries on one thread: where PyTorch's result depends on its
    # thread count (the blocks a channels-last batch_norm sums in float32),
    # ours follows its own count, so the two must be equal.
    torch.set_num_threads(1)
    ft.set_num_threads(1)
    limit_memory()
    builtins = __builtins__ if isinstance(__builtins__, dict) else __builtins__.__dict__
    builtins["nan"], builtins["inf"] = math.nan, math.inf  # so reprs of special floats evaluate
    only = set(os.environ["FUZZ_ONLY"].split(",")) if os.environ.get("FUZZ_ONLY") else None
    ops.add_generic_tier(torch, ft)
    BY_NAME.update({o.name: o for o in CATALOGUE})
    skip = set(unavailable(ft))
    out = sys.stdout

    def side(name):
        # A crash or hang is blamed on the library that was running (PyTorch
        # itself segfaults on some inputs); the driver reads this marker.
        out.write(json.dumps({"side": name}) + "\n")
        out.flush()

    for line in sys.stdin:
        req = json.loads(line)
        if "case" in req:
            case = dict(req["case"], params=decode(req["case"]["params"]))
        else:
            case = draw(req["seed"], req["id"], only, skip)
        out.write(json.dumps({"start": req["id"], "op": case["op"], "case": dict(case, params=encode(case["params"])),
                              "repro": reproducer(case)}, default=str) + "\n")
        out.flush()
        try:
            verdict, detail = run_case(case, torch, ft, side)
            # Memory our caching allocator keeps would count against the
            # next case's cap (PyTorch's CPU allocator keeps none).
            ft.empty_cache()
        except Exception as e:  # a bug of the fuzzer itself, reported as such
            verdict, detail = "fuzzer_error", f"{type(e).__name__}: {e}"
        ans = {"id": req["id"], "op": case["op"], "verdict": verdict}
        if verdict != "ok":
            ans["detail"] = detail[:500]
            ans["case"] = dict(case, params=encode(case["params"]))
            ans["repro"] = reproducer(case)
        out.write(json.dumps(ans, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
