# L8 for memfmt-tile-batch: a model whose first layers run one sub-batch at
# a time computes what the same model computes on the whole batch.
#
# Each case compiles a zoo model twice with the same weights, without tiling
# (--tile-batch-bytes 0) and with it (--sub-batch N, or a small
# --tile-batch-bytes that lets the pass choose), checks that the tiled
# model.mlir has sub-batches at all (memfmt.slice / memfmt.cat), runs both
# against the reference kernels (memfmt-run --check) and compares their
# outputs: max |tiled - whole| / max |whole| <= 1e-5. The cases cover both
# memory formats, a channels-last input, odd sizes, H = W = 1 (the last
# stage at 32x32), a batch that only 1 divides, sub-batches of more than
# one sample, and grouped convolutions (ResNeXt).
#
# REQUIRES: memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK-COUNT-6: PASS
# CHECK: all 6 cases agree
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import run  # noqa: E402

LIMIT = 1e-5

# (model, memory format, input format, batch, height, width, tiling flags)
CASES = [
    ("resnet18", "channels-last", "contiguous", 3, 37, 45, ["--sub-batch", "1"]),
    ("resnet18", "contiguous", "contiguous", 3, 37, 45, ["--sub-batch", "1"]),
    ("resnet18", "channels-last", "channels-last", 2, 32, 32,
     ["--sub-batch", "1"]),
    ("resnet34", "channels-last", "contiguous", 6, 35, 35, ["--sub-batch", "3"]),
    ("resnext50_32x4d", "channels-last", "contiguous", 4, 64, 64,
     ["--sub-batch", "2"]),
    ("resnet50", "contiguous", "contiguous", 4, 64, 64,
     ["--tile-batch-bytes", "262144"]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for i, (name, fmt, input_fmt, batch, h, w, flags) in enumerate(CASES):
        label = (f"{name} {fmt} (input {input_fmt}) batch {batch} {h}x{w} "
                 f"{' '.join(flags)}")
        outputs, checks = {}, {}
        for build, extra in (("whole", ["--tile-batch-bytes", "0"]),
                             ("tiled", flags)):
            out_dir = os.path.join(args.work, f"{i}.{build}")
            run([os.path.join(args.bin, "memfmt-compile"), "--model", name,
                 "--memory-format", fmt, "--input-format", input_fmt,
                 "--batch", str(batch), "--height", str(h), "--width", str(w),
                 "--num-classes", "10", "--weights", "synthetic:3", *extra,
                 "-o", out_dir])
            out_path = os.path.join(args.work, f"{i}.{build}.npy")
            report = json.loads(run([
                os.path.join(args.bin, "memfmt-run"), out_dir, "--input",
                "random:5", "--output", out_path, "--check", "--json"]))
            checks[build] = report["check"]["max_rel_error"]
            outputs[build] = np.load(out_path)
            with open(os.path.join(out_dir, "model.mlir")) as f:
                text = f.read()
            if build == "tiled" and ("memfmt.slice" not in text or
                                     "memfmt.cat" not in text):
                print(f"{label}: FAIL (no sub-batches in the tiled model)")
                failures += 1
                break
        else:
            a, b = outputs["tiled"], outputs["whole"]
            between = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
            worst = max(between, *checks.values())
            ok = a.shape == b.shape and worst <= LIMIT
            failures += not ok
            print(f"{label}: {'PASS' if ok else 'FAIL'} (tiled vs whole "
                  f"{between:.1e}; vs reference: tiled {checks['tiled']:.1e}, "
                  f"whole {checks['whole']:.1e}; limit {LIMIT:.0e})")
    if failures:
        print(f"{failures} of {len(CASES)} cases disagree")
        return 1
    print(f"all {len(CASES)} cases agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
