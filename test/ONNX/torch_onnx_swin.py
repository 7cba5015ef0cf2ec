# Swin Transformer (torchvision's swin_t) through ONNX: patch merging,
# shifted-window attention (torch.roll as Slice and Concat, the window
# partition's 6-D reshapes and permutes, the relative position bias
# gathered from its table, the attention mask built by slice assignments
# to a constant: ScatterND, Mod, Pow, Not and Cast folded at import),
# padding to whole windows (Pad of H and W in [N, H, W, C]), layer norms
# and GELU. Seeded weights, exported by Debian's torch at two sizes (one
# that pads every stage's windows, and batch 2 at a non-square size),
# compiled with memfmt-compile FILE.onnx in both memory formats and compared
# with torch: max|a - b| / max|torch| <= 1e-4 (scripts/torchref.py's
# check_calibrated_exports). torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run, memfmt-import
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: swin_t 1x3x64x64 channels-last: PASS
# CHECK: swin_t 1x3x64x64 contiguous: PASS
# CHECK: swin_t 2x3x96x80 channels-last: PASS
# CHECK: swin_t 2x3x96x80 contiguous: PASS
# CHECK: all 4 comparisons passed
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import check_calibrated_exports  # noqa: E402

# (model, opset, batch, height, width)
MODELS = [("swin_t", 13, 1, 64, 64), ("swin_t", 13, 2, 96, 80)]

if __name__ == "__main__":
    sys.exit(check_calibrated_exports(MODELS, seed_base=31, tolerance=1e-4))
