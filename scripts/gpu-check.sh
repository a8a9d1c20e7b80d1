#!/usr/bin/env bash
# The CUDA checks that need a GPU, in one run, for a machine lent with one
# (Python 3.12, PyTorch with CUDA and its NVIDIA libraries; no Rust, no
# network). Everything else about CUDA is checked on every CI run without a
# GPU (the NVRTC compile test, the allocator against a fake raw allocator,
# the no-driver behaviour).
#
# Prepare on a machine with Rust (the wheel is abi3, so one built with any
# Python >= 3.11 installs on 3.12):
#     CARGO_TARGET_DIR=/tmp/target pip wheel --no-deps -w dist .
# Run on the GPU machine, from the repository root:
#     bash scripts/gpu-check.sh [path/to/ferrotorch-*.whl]
# With no argument the newest dist/ferrotorch-*.whl is used;
# GPU_CHECK_PYTHONPATH=<dir> uses an installed tree instead of a wheel.
#
# Writes into the repository, under benches/results/cuda-<UTC date>/ (or
# $GPU_CHECK_DIR): the machine (nvidia-smi, torch and driver versions), the
# log of each step, and summary.json with each step's exit status and
# pytest counts; also copied to $OUT when that is set (the device tool
# brings $OUT back). The run goes on after a failing step, so one broken
# kernel does not hide the rest; the exit status is the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/.."

STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
DIR=${GPU_CHECK_DIR:-benches/results/cuda-$STAMP}
mkdir -p "$DIR"
LOG="$DIR/gpu-check.log"
: > "$LOG"
say() { echo "== $*" | tee -a "$LOG"; }

PY=${PYTHON:-python3}
SITE="${TMPDIR:-/tmp}/ferrotorch-gpu-check-site"
if [ -n "${GPU_CHECK_PYTHONPATH:-}" ]; then
  SITE=$GPU_CHECK_PYTHONPATH
else
  WHEEL=${1:-$(ls -t dist/ferrotorch-*.whl 2>/dev/null | head -1)}
  if [ -z "$WHEEL" ] || [ ! -f "$WHEEL" ]; then
    echo "no ferrotorch wheel: build one with 'pip wheel --no-deps -w dist .' and pass its path" | tee -a "$LOG" >&2
    exit 2
  fi
  say "installing $WHEEL into $SITE"
  # A private target keeps the machine's site-packages untouched; numpy and
  # torch come from the machine.
  "$PY" -m pip install --no-deps --no-index --target "$SITE" "$WHEEL" >> "$LOG" 2>&1 || { echo "wheel install failed" | tee -a "$LOG"; exit 2; }
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
# A fresh kernel cache, so this run compiles every module it uses for this
# GPU with NVRTC; the list of what was built goes into the results.
export FERROTORCH_KERNEL_CACHE="${TMPDIR:-/tmp}/ferrotorch-gpu-check-kernels-$STAMP"

say "machine"
{
  nvidia-smi 2>&1 || echo "nvidia-smi not available"
  "$PY" - <<'EOF'
import platform, torch
print("python", platform.python_version())
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0), "capability", torch.cuda.get_device_capability(0))
import ferrotorch as ft, os
print("ferrotorch", ft.__file__)
print("ferrotorch.cuda available", ft.cuda.is_available(), "devices", ft.cuda.device_count())
print("FERROTORCH_NVRTC_DIR", os.environ.get("FERROTORCH_NVRTC_DIR"))
print("FERROTORCH_CUBLAS_DIR", os.environ.get("FERROTORCH_CUBLAS_DIR"))
EOF
} > "$DIR/machine.txt" 2>&1
cat "$DIR/machine.txt" >> "$LOG"

declare -A RC
step() {
  local name=$1; shift
  say "$name: $*"
  "$@" > "$DIR/$name.log" 2>&1
  RC[$name]=$?
  tail -n 3 "$DIR/$name.log" | tee -a "$LOG"
}

# 1. The CUDA API and kernel tests against this machine's PyTorch CUDA.
step test_cuda_api "$PY" -m pytest -q -rs -p no:cacheprovider tests/python/test_cuda_api.py
# 2. The seed acceptance files' [cuda] cases, with ferrotorch as the subject.
if [ -d ../shared/acceptance ]; then
  step acceptance_cuda env TORCH_SUBJECT=ferrotorch "$PY" -m pytest -q -rs -p no:cacheprovider ../shared/acceptance -k cuda
fi
# 3. The whole Python suite on this machine (CPU parity; GPU-only cases run).
step python_suite "$PY" -m pytest -q -x -p no:cacheprovider tests/python

ls -l "$FERROTORCH_KERNEL_CACHE" > "$DIR/kernels-compiled.txt" 2>&1

FAILED=0
{
  echo "{"
  echo "  \"stamp\": \"$STAMP\","
  echo "  \"gpu\": \"$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)\","
  echo "  \"steps\": {"
  first=1
  for name in "${!RC[@]}"; do
    counts=$(grep -Eo '[0-9]+ (passed|failed|skipped|error|errors)' "$DIR/$name.log" | tr '\n' ' ' | sed 's/ $//')
    [ $first -eq 1 ] || echo ","
    first=0
    printf '    "%s": {"rc": %d, "counts": "%s"}' "$name" "${RC[$name]}" "$counts"
    [ "${RC[$name]}" -eq 0 ] || FAILED=$((FAILED + 1))
  done
  echo ""
  echo "  }"
  echo "}"
} > "$DIR/summary.json"
cat "$DIR/summary.json" | tee -a "$LOG"

if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp -r "$DIR" "$OUT/" 2>/dev/null || true
fi
say "results in $DIR ($FAILED failed steps)"
exit "$FAILED"
