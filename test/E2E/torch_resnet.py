# memfmt against PyTorch on torchvision ResNets, with the same weights.
#
# For each model: build the torchvision model with seeded weights and
# non-trivial batch-norm running statistics, write its state_dict to a
# .safetensors file (by hand: Debian has no safetensors package), run torch
# in NCHW and in channels-last, compile the model with memfmt-compile in
# both memory formats with those weights, run memfmt-run on the same input,
# and compare (max |a - b| / max |torch|, limit 1e-4).
#
# REQUIRES: torch, memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t resnet18 resnet50 | FileCheck %s
# What a passing run wrote (full-size weights and checkpoints) goes.
# RUN: rm -rf %t
# CHECK: resnet18 channels-last vs torch NCHW: PASS
# CHECK: resnet18 channels-last vs torch channels-last: PASS
# CHECK: resnet18 contiguous vs torch NCHW: PASS
# CHECK: resnet50 channels-last vs torch NCHW: PASS
# CHECK: resnet50 channels-last vs torch channels-last: PASS
# CHECK: resnet50 contiguous vs torch NCHW: PASS
# CHECK: all 6 comparisons passed
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch
import torchvision
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import rel_error, run, seeded_model, write_safetensors  # noqa: E402

TOLERANCE = 1e-4


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for index, name in enumerate(args.models):
        model = seeded_model(name, seed=index + 1)
        weights = os.path.join(args.work, f"{name}.safetensors")
        write_safetensors(weights, model.state_dict())
        rng = np.random.default_rng(index + 7)
        x = rng.standard_normal((args.batch, 3, args.size, args.size),
                                dtype=np.float32)
        input_path = os.path.join(args.work, f"{name}.input.npy")
        np.save(input_path, x)
        with torch.no_grad():
            ref_nchw = model(torch.from_numpy(x)).numpy()
            cl_model = model.to(memory_format=torch.channels_last)
            ref_cl = cl_model(torch.from_numpy(x).to(
                memory_format=torch.channels_last)).numpy()
        outputs = {}
        for fmt in ("channels-last", "contiguous"):
            out_dir = os.path.join(args.work, f"{name}.{fmt}")
            run([os.path.join(args.bin, "memfmt-compile"), "--model", name,
                 "--memory-format", fmt, "--batch", str(args.batch),
                 "--height", str(args.size), "--width", str(args.size),
                 "--weights", weights, "-o", out_dir])
            out_path = os.path.join(args.work, f"{name}.{fmt}.out.npy")
            run([os.path.join(args.bin, "memfmt-run"), out_dir, "--input",
                 input_path, "--output", out_path])
            outputs[fmt] = np.load(out_path)
        checks = [("channels-last", "torch NCHW", outputs["channels-last"], ref_nchw),
                  ("channels-last", "torch channels-last", outputs["channels-last"], ref_cl),
                  ("contiguous", "torch NCHW", outputs["contiguous"], ref_nchw)]
        for fmt, peer, ours, theirs in checks:
            err = rel_error(ours, theirs)
            ok = ours.shape == theirs.shape and err <= TOLERANCE
            passed += ok
            failed += not ok
            print(f"{name} {fmt} vs {peer}: {'PASS' if ok else 'FAIL'} "
                  f"(rel err {err:.2e}, limit {TOLERANCE:.0e})")
    if failed:
        print(f"{failed} of {passed + failed} comparisons failed")
        return 1
    print(f"all {passed} comparisons passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
