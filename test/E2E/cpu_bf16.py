# --precision bf16 on the CPU (oneDNN, f32 accumulation) against f32.
#
# Compiles ResNet-18 (batch 2, 64x64, synthetic weights) in f32 and in bf16
# in both memory formats, runs all of them on one input with memfmt-run and
# compares each bf16 output with the f32 one: max |bf16 - f32| / max |f32|
# must stay within TOLERANCE. bf16 keeps 8 significant bits (a relative
# rounding error of 2^-9 per value); over ResNet's depth the outputs move by
# 0.5-1% of their range (ResNet-18 and ResNet-50 measured here), so the
# stated tolerance is 3e-2. memfmt-run --check also compares each bf16
# build with the widened reference kernels (the oracle; 4e-2).
#
# Where the CPU has bf16 instructions (AVX-512 BF16 or AMX), every
# convolution, linear layer and cast must run on oneDNN, and no call on the
# widened reference (which is exact but slow): pooling and copies run
# memfmt's own bf16 loops, or oneDNN's where those decline.
#
# REQUIRES: memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: bf16 channels-last vs f32: PASS
# CHECK: bf16 contiguous vs f32: PASS
# CHECK: bf16 channels-last --check: PASS
# CHECK: bf16 contiguous --check: PASS
# CHECK: bf16 kernels: {{oneDNN and memfmt's own loops|no bf16 instructions on this CPU}}
import argparse
import os
import re
import subprocess
import sys

import numpy as np

TOLERANCE = 3e-2


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(command), result.stdout,
                                       result.stderr))
    return result.stdout


def cpu_has_bf16():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return re.search(r"\b(avx512_bf16|amx_bf16)\b", flags) is not None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    compile_tool = os.path.join(args.bin, "memfmt-compile")
    run_tool = os.path.join(args.bin, "memfmt-run")
    shape = ["--model", "resnet18", "--batch", "2", "--height", "64",
             "--width", "64"]

    outputs = {}
    builds = [("f32", "channels-last"), ("bf16", "channels-last"),
              ("bf16", "contiguous")]
    for precision, fmt in builds:
        directory = os.path.join(args.work, "%s-%s" % (precision, fmt))
        run([compile_tool] + shape + ["--precision", precision,
                                      "--memory-format", fmt,
                                      "-o", directory])
        output = directory + ".npy"
        run([run_tool, directory, "--input", "random:3", "--output", output])
        outputs[precision, fmt] = np.load(output)

    reference = outputs["f32", "channels-last"]
    scale = float(np.abs(reference).max())
    for fmt in ("channels-last", "contiguous"):
        error = float(np.abs(outputs["bf16", fmt] - reference).max()) / scale
        verdict = "PASS" if error <= TOLERANCE else "FAIL"
        print("bf16 %s vs f32: %s (max|diff| / max|f32| = %.3g, limit %g)"
              % (fmt, verdict, error, TOLERANCE))

    impls = set()  # (kernel, implementation)
    for fmt in ("channels-last", "contiguous"):
        directory = os.path.join(args.work, "bf16-%s" % fmt)
        checked = run([run_tool, directory, "--check"])
        print("bf16 %s --check: %s" % (
            fmt, "PASS" if "check      PASS" in checked else "FAIL"))
        profile = run([run_tool, directory, "--profile"])
        impls |= set(re.findall(r"memfmt_(\w+)_bf16\s+(\w+)", profile))

    # onednn, or onednn_preferred_layout (NCHW convolutions in the layout
    # oneDNN prefers).
    on_onednn = ("conv2d", "linear", "cast_f32_to", "cast_to_f32_from")
    wrong = sorted("%s: %s" % (kernel, impl) for kernel, impl in impls
                   if impl == "reference_widened" or
                   (kernel in on_onednn and not impl.startswith("onednn")))
    everything = ", ".join(sorted("%s: %s" % i for i in impls))
    if not cpu_has_bf16():
        print("bf16 kernels: no bf16 instructions on this CPU (%s)"
              % everything)
    elif impls and not wrong:
        print("bf16 kernels: oneDNN and memfmt's own loops (%s)" % everything)
    else:
        print("bf16 kernels: FAIL, some ran elsewhere: %s" % ", ".join(wrong))


if __name__ == "__main__":
    main()
