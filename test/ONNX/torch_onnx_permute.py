# The torchvision CNNs that permute: ShuffleNetV2 (channel shuffle as
# Reshape, Transpose, Reshape; chunk as Slice) and ConvNeXt (permutes to
# NHWC around LayerNorm and the Linear layers, exact GELU), exported by
# Debian's torch at opset 13 (layer norm and GELU written as chains of
# primitive nodes) and 17 (LayerNormalization), with seeded weights whose
# batch-norm statistics are a calibration batch's and whose layer scales are
# O(1) (at initialisation they are 1e-6 and would hide every block),
# compiled with memfmt-compile FILE.onnx in both memory formats and compared
# with torch: max|a - b| / max|torch| <= 1e-4, at batch 1 and 2 and odd
# sizes. In channels-last the only runtime conversion is the input's: the
# channel shuffle keeps channels-last and every ConvNeXt permute is a view.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: shufflenet_v2_x1_0 2x3x67x65 channels-last: PASS (1 runtime conversions;
# CHECK: shufflenet_v2_x1_0 2x3x67x65 contiguous: PASS (0 runtime conversions
# CHECK: shufflenet_v2_x0_5 1x3x64x64 channels-last: PASS (1 runtime conversions;
# CHECK: shufflenet_v2_x0_5 1x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: shufflenet_v2_x1_0 1x3x64x64 channels-last: PASS (1 runtime conversions;
# CHECK: shufflenet_v2_x1_0 1x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: convnext_tiny 1x3x64x64 channels-last: PASS (1 runtime conversions, 0 permute copies
# CHECK: convnext_tiny 1x3x64x64 contiguous: PASS (0 runtime conversions, 1 permute copies
# CHECK: convnext_tiny 2x3x67x65 channels-last: PASS (1 runtime conversions, 0 permute copies
# CHECK: convnext_tiny 2x3x67x65 contiguous: PASS (0 runtime conversions, 1 permute copies
# CHECK: all 10 comparisons passed
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import check_calibrated_exports  # noqa: E402

TOLERANCE = 1e-4
# (model, opset, batch, height, width)
MODELS = [("shufflenet_v2_x1_0", 13, 2, 67, 65),
          ("shufflenet_v2_x0_5", 17, 1, 64, 64),
          ("shufflenet_v2_x1_0", 17, 1, 64, 64),
          ("convnext_tiny", 13, 1, 64, 64), ("convnext_tiny", 17, 2, 67, 65)]


if __name__ == "__main__":
    sys.exit(check_calibrated_exports(MODELS, seed_base=31, tolerance=TOLERANCE))
