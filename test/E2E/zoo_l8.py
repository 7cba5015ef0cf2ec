# L8 on every zoo model: the channels-last build, the NCHW build and the
# reference kernels agree on the same synthetic weights and input.
#
# For each torchvision ResNet-family model at batch 2, 64x64: compile with
# --memory-format channels-last and contiguous, run both with the fast
# kernels and check each against the reference kernels (memfmt-run --check),
# then compare the two builds' outputs. Relative error is
# max |a - b| / max |b|; the limit is 1e-5 (f32).
#
# REQUIRES: memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK-COUNT-7: PASS
# CHECK: all 7 models agree
import argparse
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import run  # noqa: E402

MODELS = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
          "resnext50_32x4d", "wide_resnet50_2"]
LIMIT = 1e-5


def load_npy_f32(path):
    """Reads a little-endian f32 .npy file (no numpy needed)."""
    with open(path, "rb") as f:
        data = f.read()
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode()
    assert "'<f4'" in header, header
    body = data[10 + header_len:]
    return struct.unpack(f"<{len(body) // 4}f", body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for name in args.models:
        outputs, checks = {}, {}
        for fmt in ("channels-last", "contiguous"):
            out_dir = os.path.join(args.work, f"{name}.{fmt}")
            run([os.path.join(args.bin, "memfmt-compile"), "--model", name,
                 "--memory-format", fmt, "--batch", "2", "--height", "64",
                 "--width", "64", "--weights", "synthetic:3", "-o", out_dir])
            out_path = os.path.join(args.work, f"{name}.{fmt}.npy")
            report = json.loads(run([
                os.path.join(args.bin, "memfmt-run"), out_dir, "--input",
                "random:5", "--output", out_path, "--check", "--json"]))
            checks[fmt] = report["check"]["max_rel_error"]
            outputs[fmt] = load_npy_f32(out_path)
        a, b = outputs["channels-last"], outputs["contiguous"]
        scale = max(abs(v) for v in b)
        between = max(abs(x - y) for x, y in zip(a, b)) / scale
        worst = max(between, *checks.values())
        ok = len(a) == len(b) and worst <= LIMIT
        failures += not ok
        print(f"{name}: {'PASS' if ok else 'FAIL'} (channels-last vs NCHW "
              f"{between:.1e}; vs reference: channels-last "
              f"{checks['channels-last']:.1e}, NCHW {checks['contiguous']:.1e};"
              f" limit {LIMIT:.0e})")
    if failures:
        print(f"{failures} of {len(args.models)} models disagree")
        return 1
    print(f"all {len(args.models)} models agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
