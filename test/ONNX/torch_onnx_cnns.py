# Other torchvision CNNs through ONNX: SqueezeNet (ceil-mode max pooling,
# concatenation along channels), GoogLeNet (inception blocks, max pooling
# with ceil_mode, batch norm folded), DenseNet (concatenation, average
# pooling behind torch's zero Pad) and MNASNet (depthwise convolutions, a
# spatial ReduceMean), each with seeded weights and batch-norm statistics,
# exported by Debian's torch at an odd batch and input size, compiled with
# memfmt-compile FILE.onnx in both memory formats and compared with torch:
# max|a - b| / max|torch| <= 1e-4. torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run, memfmt-import
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: squeezenet1_1 3x3x67x75 channels-last: PASS
# CHECK: squeezenet1_1 3x3x67x75 contiguous: PASS
# CHECK: googlenet 2x3x67x75 channels-last: PASS
# CHECK: googlenet 2x3x67x75 contiguous: PASS
# CHECK: densenet121 1x3x57x61 channels-last: PASS
# CHECK: densenet121 1x3x57x61 contiguous: PASS
# CHECK: mnasnet0_5 2x3x65x67 channels-last: PASS
# CHECK: mnasnet0_5 2x3x65x67 contiguous: PASS
# CHECK: all 8 comparisons passed
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import Tally, check_onnx_export, seeded_model  # noqa: E402

TOLERANCE = 1e-4
MODELS = [("squeezenet1_1", 3, 67, 75), ("googlenet", 2, 67, 75),
          ("densenet121", 1, 57, 61), ("mnasnet0_5", 2, 65, 67)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    tally = Tally()
    for index, (name, batch, height, width) in enumerate(MODELS):
        kwargs = {"aux_logits": False, "init_weights": True} \
            if name == "googlenet" else {}
        model = seeded_model(name, seed=index + 11, **kwargs)
        x = torch.from_numpy(np.random.default_rng(index).standard_normal(
            (batch, 3, height, width), dtype=np.float32))
        check_onnx_export(tally, args.bin, args.work, name, model, x, 13,
                          TOLERANCE)
    return tally.finish()

if __name__ == "__main__":
    sys.exit(main())
