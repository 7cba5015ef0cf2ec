#!/usr/bin/env bash
# bench/gpu/run.sh - the GPU server's half of the GPU check and benchmark.
#
# Runs, in one go and within about 8 minutes, on a machine with an NVIDIA
# GPU, PyTorch 2.x (+ torchvision, safetensors) and the artifacts that
# bench/gpu/prepare.sh built (bench/gpu/artifacts/; no LLVM, no network):
#
#   1. the GPU kernel tests (artifacts/bin/RuntimeCudaTests: every CUDA
#      kernel against the CPU reference, both formats, f32/f16/bf16, edge
#      shapes; the loader, graphs and device memory);
#   2. ResNet-50 against torch with the same weights (a seeded torchvision
#      model exported to safetensors here), for both memory formats and f32
#      and bf16, plus memfmt-run --check against the CPU reference;
#   3. the benchmark table: memfmt NCHW / channels-last x f32 / bf16 x batch
#      1 / 32 / 256 (one CUDA graph per run) against PyTorch eager NCHW,
#      channels-last, channels-last + AMP (bf16) and torch.compile, medians
#      of many iterations timed with CUDA events; images/s and ratios.
#
# The table and the run's details are appended to bench/RESULTS.md (date,
# GPU, driver, commit); logs and results are also copied to $OUT when it is
# set (the device tool's output folder). Exit status: 0 when every test and
# check passed, 1 otherwise (the benchmark still runs).
#
# Usage (from the repository root): bench/gpu/run.sh
# Environment: PYTHON (default python3), MEMFMT_GPU_DEADLINE_S (default 470).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
BUDGET=${MEMFMT_GPU_DEADLINE_S:-470}
DEADLINE=$((START + BUDGET))
A=bench/gpu/artifacts
PY=${PYTHON:-python3}
LOGS=$(mktemp -d /tmp/memfmt-gpu.XXXXXX)
status=0

say() { echo "== run: $*" >&2; }

if [[ ! -x $A/bin/memfmt-run ]]; then
  echo "run.sh: $A is missing; run bench/gpu/prepare.sh on the build machine" \
       "and carry bench/gpu/artifacts" >&2
  exit 1
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run.sh: no NVIDIA GPU here (nvidia-smi fails)" >&2
  exit 1
fi

# The CUDA libraries the runtime links: the system's, the toolkit's, or the
# ones PyTorch's wheels bring (nvidia-cudnn-cu13, nvidia-cublas).
find_lib() {
  local name=$1 path
  path=$(ldconfig -p 2>/dev/null |
         awk -v n="$name" '$1 == n && !p {p = $NF} END {print p}')
  if [[ -n $path ]]; then dirname "$path"; return; fi
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib \
           /usr/local/cuda/targets/x86_64-linux/lib; do
    if [[ -e $d/$name ]]; then echo "$d"; return; fi
  done
  "$PY" - "$name" <<'PY'
import glob, os, site, sys
name = sys.argv[1]
roots = set(site.getsitepackages())
try:
    import torch
    roots.add(os.path.dirname(os.path.dirname(torch.__file__)))
except Exception:
    pass
for root in sorted(roots):
    hits = glob.glob(os.path.join(root, "nvidia", "**", name), recursive=True)
    hits += glob.glob(os.path.join(root, "torch", "lib", name))
    if hits:
        print(os.path.dirname(hits[0]))
        break
PY
}
libdirs="$PWD/$A/lib"
for lib in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13; do
  dir=$(find_lib "$lib")
  if [[ -z $dir ]]; then
    echo "run.sh: $lib not found (system, /usr/local/cuda or PyTorch's wheels)" >&2
    exit 1
  fi
  say "$lib from $dir"
  libdirs="$libdirs:$dir"
done
# NCCL is loaded by the runtime only for all_reduce (data-parallel training);
# without it that one kernel test fails with the runtime's reason.
if dir=$(find_lib libnccl.so.2) && [[ -n $dir ]]; then
  say "libnccl.so.2 from $dir"
  libdirs="$libdirs:$dir"
else
  say "libnccl.so.2 not found: the NCCL all_reduce test will fail"
fi
export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$A/lib/libmemfmt_runtime.so" | grep -q "libgomp.*not found"; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/$A/lib/fallback"
fi
if ldd "$A/bin/memfmt-run" | grep "not found"; then
  echo "run.sh: memfmt-run has unresolved libraries (above)" >&2
  exit 1
fi
export MEMFMT_FAKE_MODEL="$PWD/$A/lib/fake_model.so"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | tee "$LOGS/gpu.txt" >&2
# The runtime is built with CUDA 13, which needs an R580 or newer driver
# (without one every test reports cudaErrorInsufficientDriver).
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
if [[ ${driver%%.*} =~ ^[0-9]+$ ]] && (( ${driver%%.*} < 580 )); then
  echo "run.sh: warning: driver $driver is older than CUDA 13's minimum" \
       "(580); expect the tests to find no usable device" >&2
fi

# 1. Kernel tests.
say "1/3 GPU kernel tests"
if timeout 150 "$A/bin/RuntimeCudaTests" --gtest_brief=1 \
     > "$LOGS/tests.log" 2>&1; then
  tests="PASS"
else
  tests="FAIL"
  status=1
fi
grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran|FAILED TEST" "$LOGS/tests.log" \
  | tail -12 >&2
grep -q "skipped: no CUDA device" "$LOGS/tests.log" && {
  echo "run.sh: the tests found no CUDA device" >&2; tests="FAIL"; status=1; }
say "kernel tests: $tests ($(( $(date +%s) - START )) s so far)"

# 2 and 3. Checks against torch and the CPU reference, then the benchmark.
say "2/3 ResNet-50 against torch, 3/3 benchmark"
"$PY" bench/gpu/memfmt_gpu.py --artifacts "$A" --work "$LOGS" \
  --deadline "$DEADLINE" --tests "$tests" --results bench/RESULTS.md
rc=$?
(( rc != 0 )) && status=1

if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then
  cp bench/RESULTS.md "$OUT/RESULTS.md" 2>/dev/null
  cp "$LOGS/tests.log" "$LOGS/summary.json" "$OUT/" 2>/dev/null
  cp "$LOGS/table.md" "$OUT/" 2>/dev/null
  tail -c 4000000 "$LOGS/memfmt.log" > "$OUT/memfmt.log" 2>/dev/null
fi
say "done in $(( $(date +%s) - START )) s, exit $status"
exit $status
