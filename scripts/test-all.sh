#!/usr/bin/env bash
# Runs every test: the Rust crates (no Python), the Python suite, and the seed
# acceptance files that the landed issues cover (when ../shared/acceptance exists).
# Expects ferrotorch to be installed in the current Python (see README).
set -euo pipefail
cd "$(dirname "$0")/.."

# Most Python tests compare against PyTorch and skip without it; a run where
# they all skipped must not pass as green.
if ! python -c "import torch" >/dev/null 2>&1; then
  if [ "${FERROTORCH_TESTS_WITHOUT_TORCH:-0}" = "1" ]; then
    echo "warning: PyTorch is not installed: running only the torch-free tests;" \
         "the parity tests are reported as skipped below" >&2
  else
    echo "error: the reference PyTorch is not installed in this Python, so the parity tests cannot run." >&2
    echo "  install it:  python -m pip install ../shared/wheels/torch-*.whl" >&2
    echo "           or: python -m pip install torch --index-url https://download.pytorch.org/whl/cpu" >&2
    echo "  or run only the torch-free subset:  FERROTORCH_TESTS_WITHOUT_TORCH=1 bash scripts/test-all.sh" >&2
    exit 1
  fi
fi

cargo test --workspace --exclude ferrotorch-py
# Public Rust items stay documented, with no broken doc links.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --quiet

run_pytest() {
  # pytest exit code 5 means "no tests collected": a broken setup, not a pass.
  set +e
  python -m pytest -q "$@"
  rc=$?
  set -e
  if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests from: $*" >&2
    exit 1
  fi
  return "$rc"
}

# tests/python includes the differential fuzzer's quick profile against PyTorch
# (tests/python/test_fuzz_quick.py: 3000 cases, seed 0; see tests/fuzz/README.md).
run_pytest tests/python

ACCEPT=../shared/acceptance
if [ -d "$ACCEPT" ]; then
  # Every seed file the landed issues cover (dispatch modes and the profiler
  # included).
  run_pytest "$ACCEPT/test_seed_tensor_basics.py" "$ACCEPT/test_seed_storage_views.py" "$ACCEPT/test_seed_memory.py" \
    "$ACCEPT/test_seed_autograd.py" "$ACCEPT/test_seed_no_grad_detach.py" "$ACCEPT/test_seed_custom_function.py" \
    "$ACCEPT/test_seed_indexing_einsum.py" "$ACCEPT/test_seed_nn_optim.py" "$ACCEPT/test_seed_mixed_precision.py" \
    "$ACCEPT/test_seed_checkpoint.py" "$ACCEPT/test_seed_dispatch_mode.py" "$ACCEPT/test_seed_profiler.py"
else
  echo "note: $ACCEPT not found; seed acceptance files skipped" >&2
fi
