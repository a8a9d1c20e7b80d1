"""The quick profile of the differential fuzzer (tests/fuzz): a few thousand
random calls compared with PyTorch, each in a child process.  It fails on any
panic, crash, hang or wrong value/gradient/shape/dtype, and when exception
classes disagree on 0.5% of cases or more."""

import os
import sys

import pytest

pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
pytest.importorskip("numpy", reason="the fuzzer builds inputs with NumPy")

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz")
sys.path.insert(0, FUZZ)

import run  # noqa: E402

QUICK_CASES = int(os.environ.get("FUZZ_QUICK_CASES", 3000))


def test_quick_profile():
    s = run.campaign(cases=QUICK_CASES, seed=int(os.environ.get("FUZZ_SEED", 0)), workers=2)
    report = run.markdown(s)
    with open(os.path.join(FUZZ, "quick_run.md"), "w") as f:
        f.write(report)
    assert s["cases"] == QUICK_CASES
    assert s["new_failures"] == 0, report
    assert s["error_disagreement_rate"] < 0.005, report
