# Vision transformers (torchvision's VisionTransformer, the vit_b_16 family)
# at small widths: the patch convolution, the class token (Expand of a
# parameter, with the Equal/Where shape logic around it, folded at import),
# multi-head attention (MatMul of two activations, Softmax, Transposes and
# Slices of run-time data), LayerNorm, exact GELU and the class token's
# Gather on run-time data. Exported by Debian's torch at opsets 13 (layer
# norm and GELU as chains of primitive nodes), 14 and 17, compiled with
# memfmt-compile FILE.onnx in both memory formats and compared with torch
# (max|a - b| / max|torch| <= 1e-4) at batch 1 and 2 and an odd image size
# (35 with 7x7 patches: 26 tokens). In channels-last the patch embedding's
# `flatten(2).transpose(1, 2)` is a view (permute first, then a reshape of
# contiguous bytes), so the input's is the only runtime conversion; the
# attention's head permutes are copies in both formats.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: vit_l2_h64 1x3x32x32 channels-last: PASS (1 runtime conversions, 8 permute copies;
# CHECK: vit_l2_h64 1x3x32x32 contiguous: PASS (0 runtime conversions, 9 permute copies;
# CHECK: vit_l2_h64 2x3x32x32 channels-last: PASS (1 runtime conversions, 12 permute copies;
# CHECK: vit_l2_h64 2x3x32x32 contiguous: PASS (0 runtime conversions, 13 permute copies;
# CHECK: vit_l3_h48_odd 2x3x35x35 channels-last: PASS (1 runtime conversions, 18 permute copies;
# CHECK: vit_l3_h48_odd 2x3x35x35 contiguous: PASS (0 runtime conversions, 19 permute copies;
# CHECK: all 6 comparisons passed
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import check_calibrated_exports  # noqa: E402

TOLERANCE = 1e-4
SMALL = dict(image_size=32, patch_size=8, num_layers=2, num_heads=4,
             hidden_dim=64, mlp_dim=128, num_classes=10, label="vit_l2_h64")
ODD = dict(image_size=35, patch_size=7, num_layers=3, num_heads=3,
           hidden_dim=48, mlp_dim=96, num_classes=7, label="vit_l3_h48_odd")
# (model, opset, batch, height, width, arguments)
MODELS = [("VisionTransformer", 13, 1, 32, 32, SMALL),
          ("VisionTransformer", 17, 2, 32, 32, SMALL),
          ("VisionTransformer", 14, 2, 35, 35, ODD)]


if __name__ == "__main__":
    sys.exit(check_calibrated_exports(MODELS, seed_base=47, tolerance=TOLERANCE))
