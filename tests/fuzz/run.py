"""Differential fuzz campaign: ferrotorch against PyTorch, in child processes.

    python tests/fuzz/run.py --cases 3000             # the quick profile
    FUZZ_MINUTES=30 python tests/fuzz/run.py          # the long profile
    python tests/fuzz/run.py --only sort,topk --cases 500   # ops or families

Cases are numbered; case ``i`` of seed ``s`` is always the same call, so any
finding is replayed by its (seed, id).  Each distinct (op, verdict) class is
shrunk to a small reproducer.  The summary goes to ``--out`` (JSON) and a
Markdown twin next to it.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time
from collections import Counter

from known import reason as known_reason

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_TIMEOUT = 30.0
FAILURE_KINDS = ("panic", "crash", "hang", "wrong:", "fuzzer_error")
# PyTorch itself crashing or hanging (it segfaults on some strided conv1d
# inputs, and SIGFPEs on INT64_MIN // -1): counted and listed, not ours to fix.
REFERENCE_KINDS = ("torch_crash", "torch_hang")


class Worker:
    """One child process running cases; restarted after a crash or hang."""

    def __init__(self, env):
        self.env = env
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
                                     env=self.env)
        self.buf = b""
        self.current = None
        self.started_at = None

    def read_lines(self):
        """The complete lines available now; None once the child has exited.

        Reads the pipe with os.read rather than readline: a buffered reader
        could hold a second line that select() would then never report."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        return [json.loads(line) for line in lines if line]

    def send(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        self.current = req
        self.started_at = time.monotonic()

    def kill(self):
        try:
            self.proc.kill()
            self.proc.wait(5)
        except Exception:
            pass


def is_failure(verdict):
    return verdict.startswith(FAILURE_KINDS)


def _in_flight(w):
    """What is known of the case a dead or stuck worker was running."""
    s = w.current.get("started", {})
    return {"id": w.current["id"], "op": s.get("op", "?"), "case": s.get("case"), "repro": s.get("repro", "")}


def _blame(w, kind):
    """`kind` ("crash" or "hang") for ours, "torch_<kind>" when PyTorch was running."""
    return f"torch_{kind}" if w.current.get("side") == "torch" else kind


class Pool:
    """Worker children kept alive across batches (starting one imports both libraries)."""

    def __init__(self, workers=2, env=None):
        env = dict(os.environ if env is None else env)
        env.setdefault("RUST_BACKTRACE", "0")
        self.workers = [Worker(env) for _ in range(workers)]

    def close(self):
        for w in self.workers:
            w.kill()

    def run(self, requests, on_result=None, deadline=None):
        """Runs requests; returns the answers in completion order."""
        pending = list(reversed(requests))
        answers = []
        busy = {}

        def finish(ans):
            answers.append(ans)
            if on_result:
                on_result(ans)

        while pending or busy:
            for w in self.workers:
                if w not in busy.values() and pending and (deadline is None or time.monotonic() <= deadline):
                    w.send(pending.pop())
                    busy[w.proc.stdout.fileno()] = w
            if not busy:
                break
            ready, _, _ = select.select(list(busy), [], [], 1.0)
            now = time.monotonic()
            for fd in list(busy):
                w = busy[fd]
                if fd in ready:
                    msgs = w.read_lines()
                    if msgs is None:  # the child died: the case in flight crashed it
                        ans = dict(_in_flight(w), verdict=_blame(w, "crash"), detail=f"worker exited with {w.proc.wait()}")
                        del busy[fd]
                        w.kill()
                        w.start()
                        finish(ans)
                        continue
                    for msg in msgs:
                        if "start" in msg:
                            w.started_at = time.monotonic()
                            w.current = dict(w.current, started=msg, side=None)
                        elif "side" in msg:
                            w.current["side"] = msg["side"]
                        else:
                            del busy[fd]
                            finish(msg)
                elif now - w.started_at > CASE_TIMEOUT:
                    ans = dict(_in_flight(w), verdict=_blame(w, "hang"), detail=f"no answer in {CASE_TIMEOUT:.0f} s")
                    del busy[fd]
                    w.kill()
                    w.start()
                    finish(ans)
        return answers


# ---------------------------------------------------------------- shrinking

def _smaller(case):
    """Candidate simplifications of a case, simplest first."""
    import copy
    for i, r in enumerate(case["recipes"]):
        for key, val in (("view", "contig"), ("grad", None), ("vals", "int")):
            if r.get(key) != val and not (key == "vals" and r["vals"] in ("index", "mask")):
                c = copy.deepcopy(case)
                if val is None:
                    c["recipes"][i].pop(key, None)
                else:
                    c["recipes"][i][key] = val
                yield c
        for d, size in enumerate(r["shape"]):
            if size > 1:
                c = copy.deepcopy(case)
                c["recipes"][i]["shape"][d] = 1
                if "strides" in r:
                    c["recipes"][i]["strides"][d] = 0
                yield c


def shrink(pool, ans, budget=40):
    """Simplifies a failing case while the same verdict persists."""
    case = ans.get("case")
    if case is None:
        return ans
    best = ans
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        cands = list(_smaller(best["case"]))[: budget - tries]
        if not cands:
            break
        tries += len(cands)
        res = pool.run([{"id": i, "case": c} for i, c in enumerate(cands)])
        for r in sorted(res, key=lambda r: r["id"]):
            if r["verdict"] == ans["verdict"] and "case" in r:
                best = r
                improved = True
                break
    return best


# ---------------------------------------------------------------- campaign

def campaign(cases=None, minutes=None, seed=0, workers=2, only=None, shrink_classes=True, log=None):
    """Runs a campaign; returns its summary dict."""
    env = dict(os.environ)
    if only:
        env["FUZZ_ONLY"] = ",".join(only)
    t0 = time.monotonic()
    deadline = t0 + 60 * minutes if minutes else None
    n = cases if cases else 10**9
    counts = Counter()
    classes = {}
    done = [0]

    def on_result(a):
        done[0] += 1
        v = a["verdict"]
        counts[v] += 1
        if v != "ok":
            key = f"{a['op']} | {v}"
            if key not in classes:
                classes[key] = {"count": 0, "first": a}
            classes[key]["count"] += 1
        if log and done[0] % 2000 == 0:
            log(f"{done[0]} cases, {time.monotonic() - t0:.0f} s, not ok: {sum(c['count'] for c in classes.values())}")

    pool = Pool(workers, env)
    try:
        # Requests are made in chunks so a timed campaign does not build a huge list.
        chunk = 5000
        i = 0
        while i < n and (deadline is None or time.monotonic() < deadline):
            m = min(chunk, n - i)
            pool.run([{"id": k, "seed": seed} for k in range(i, i + m)], on_result, deadline)
            i += m
        summary = _summarise(seed, workers, counts, classes, time.monotonic() - t0, pool if shrink_classes else None)
    finally:
        pool.close()
    return summary


def _summarise(seed, workers, counts, classes, elapsed, pool):
    total = sum(counts.values())
    summary = {
        "seed": seed, "cases": total, "seconds": round(elapsed, 1), "workers": workers,
        "counts": dict(sorted(counts.items())),
        "failures": sum(c for v, c in counts.items() if is_failure(v)),
        "known_failures": sum(c["count"] for k, c in classes.items()
                              if is_failure(c["first"]["verdict"]) and known_reason(*k.split(" | ")) is not None),
        "error_disagreements": sum(c for v, c in counts.items() if v.startswith("error:")),
        "reference_failures": sum(c for v, c in counts.items() if v in REFERENCE_KINDS),
        "classes": {},
    }
    summary["new_failures"] = summary["failures"] - summary["known_failures"]
    summary["error_disagreement_rate"] = summary["error_disagreements"] / max(total, 1)
    for key, c in sorted(classes.items(), key=lambda kv: (not is_failure(kv[1]["first"]["verdict"]), kv[0])):
        first = c["first"]
        if pool is not None and (is_failure(first["verdict"]) or first["verdict"] in REFERENCE_KINDS) and "case" in first:
            first = shrink(pool, first)
        summary["classes"][key] = {"count": c["count"], "verdict": first["verdict"], "id": first["id"],
                                   "known": known_reason(*key.split(" | ")),
                                   "detail": first.get("detail", ""), "repro": first.get("repro", "")}
    return summary


def markdown(s):
    lines = [f"# Fuzz campaign: seed {s['seed']}, {s['cases']} cases in {s['seconds']} s ({s['workers']} workers)", "",
             f"- failures (panics, crashes, hangs, wrong values/gradients/shapes/dtypes): **{s['failures']}**"
             f" ({s['known_failures']} in classes listed as known in known.py, {s['new_failures']} new)",
             f"- exception-class disagreements: {s['error_disagreements']} "
             f"({100 * s['error_disagreement_rate']:.3f}% of cases)",
             f"- PyTorch itself crashed or hung: {s['reference_failures']} (not counted as failures)", "", "| verdict | cases |", "|---|---|"]
    lines += [f"| {v} | {c} |" for v, c in s["counts"].items()]
    lines += ["", "## Classes (op | verdict), with a reproducer", ""]
    for key, c in s["classes"].items():
        known = f" — known: {c['known']}" if c.get("known") else ""
        lines += [f"### {key} ({c['count']} cases, first id {c['id']}){known}", "", c["detail"], "", "```python",
                  c["repro"], "```", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=None)
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("FUZZ_MINUTES", 0)) or None)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", default=None, help="comma-separated op names or families")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "last_run.json"))
    a = ap.parse_args()
    if a.cases is None and a.minutes is None:
        a.cases = 3000
    s = campaign(a.cases, a.minutes, a.seed, a.workers, a.only.split(",") if a.only else None,
                 not a.no_shrink, log=lambda m: print(m, flush=True))
    with open(a.out, "w") as f:
        json.dump(s, f, indent=1, default=str)
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write(markdown(s))
    print(f"{s['cases']} cases, {s['failures']} failures ({s['new_failures']} new), {s['error_disagreements']} exception disagreements "
          f"({100 * s['error_disagreement_rate']:.3f}%), {len(s['classes'])} classes; summary in {a.out}")
    return 1 if s["new_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
