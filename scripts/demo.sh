#!/usr/bin/env bash
# The main job: installs what is missing, builds, then compiles ResNet-50
# (batch 8, 224x224, synthetic seeded weights) ahead of time twice -- NCHW as
# saved, and channels-last -- runs both on the CPU on the same input, and
# prints for each: runtime layout conversions, arena size, ms per batch, and
# the largest difference between the two outputs (rule L8: values never
# change).
# Environment: BATCH (8), RUNS (timed runs per build, 5), MODEL (resnet50).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh memfmt-opt memfmt-compile memfmt-run
BIN=${BUILD_DIR:-build}/bin
OUT=${BUILD_DIR:-build}/demo
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-8}
RUNS=${RUNS:-5}
mkdir -p "$OUT"

for fmt in contiguous channels-last; do
  echo "== memfmt-compile --model $MODEL --batch $BATCH --memory-format $fmt"
  "$BIN/memfmt-compile" --model "$MODEL" --batch "$BATCH" \
    --memory-format "$fmt" --weights synthetic:0 -o "$OUT/$MODEL-$fmt"
  echo "== memfmt-run ($fmt): $RUNS timed runs"
  "$BIN/memfmt-run" "$OUT/$MODEL-$fmt" --input random:0 \
    --output "$OUT/$MODEL-$fmt.out.npy" --bench "$RUNS" --json \
    > "$OUT/$MODEL-$fmt.run.json"
done

echo
echo "== The channels-last build's layout report"
cat "$OUT/$MODEL-channels-last/report.txt"
echo
/usr/bin/python3 - "$OUT" "$MODEL" <<'PY'
import json, os, sys
import numpy as np
out, model = sys.argv[1], sys.argv[2]
rows, outputs = [], {}
for fmt in ("contiguous", "channels-last"):
    report = json.load(open(os.path.join(out, f"{model}-{fmt}", "report.json")))
    run = json.load(open(os.path.join(out, f"{model}-{fmt}.run.json")))
    outputs[fmt] = np.load(os.path.join(out, f"{model}-{fmt}.out.npy"))
    rows.append((fmt, report["runtime_conversions"],
                 report["bytes_moved_per_run"] / 2**20,
                 report["arena_bytes"] / 2**20, run["bench"]["median_ms"],
                 run["bench"]["images_per_second"]))
print(f"{model}, batch {run['inputs'][0]['shape'][0]}, "
      f"{run['threads']} thread(s), CPU")
print(f"{'build':<14}{'conversions':>12}{'MiB moved':>11}{'arena MiB':>11}"
      f"{'ms/batch':>10}{'images/s':>10}")
for fmt, conv, moved, arena, ms, ips in rows:
    print(f"{fmt:<14}{conv:>12}{moved:>11.1f}{arena:>11.1f}{ms:>10.1f}{ips:>10.1f}")
a, b = outputs["contiguous"], outputs["channels-last"]
diff = float(np.max(np.abs(a - b)))
rel = diff / float(np.max(np.abs(a)))
print(f"channels-last vs NCHW: max |diff| = {diff:.3e} "
      f"(relative to max |output|: {rel:.2e}); speed-up "
      f"{rows[0][4] / rows[1][4]:.2f}x")
PY
