# Swin Transformer (torchvision's swin_t) through ONNX: patch merging,
# shifted-window attention (torch.roll as Slice and Concat, the window
# partition's 6-D reshapes and permutes, the relative position bias
# gathered from its table, the attention mask built by slice assignments
# to a constant: ScatterND, Mod, Pow, Not and Cast folded at import),
# padding to whole windows (Pad of H and W in [N, H, W, C]), layer norms
# and GELU. Seeded weights, exported by Debian's torch at two sizes (one
# that pads every stage's windows, and batch 2 at a non-square size),
# compiled with memfmt-compile FILE.onnx in both memory formats and compared
# with torch: max|a - b| / max|torch| <= 1e-4. torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run, memfmt-import
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: swin_t 1x3x64x64 channels-last: PASS
# CHECK: swin_t 1x3x64x64 contiguous: PASS
# CHECK: swin_t 2x3x96x80 channels-last: PASS
# CHECK: swin_t 2x3x96x80 contiguous: PASS
# CHECK: all 4 comparisons passed
import argparse
import os
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import Tally, check_onnx_export, seeded_model  # noqa: E402

TOLERANCE = 1e-4
SIZES = [(1, 64, 64), (2, 96, 80)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    tally = Tally()
    model = seeded_model("swin_t", seed=31)
    for index, (batch, height, width) in enumerate(SIZES):
        x = torch.from_numpy(np.random.default_rng(index).standard_normal(
            (batch, 3, height, width), dtype=np.float32))
        check_onnx_export(tally, args.bin, args.work, "swin_t", model, x, 13,
                          TOLERANCE)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
