# The mobile and squeeze-excite CNNs of torchvision through ONNX:
# MobileNetV2 (Clip as ReLU6, depthwise convolutions), MobileNetV3-small
# (HardSwish, HardSigmoid and Mul of squeeze-excite, opset 14), EfficientNet-
# B0 (Sigmoid and Mul: SiLU and squeeze-excite) and RegNetY-400MF, exported
# by Debian's torch with seeded weights whose batch-norm statistics are
# those of a calibration batch (so activations stay O(1): a randomly
# initialised EfficientNet's outputs are ~1e-10 and would prove nothing),
# compiled with memfmt-compile FILE.onnx in both memory formats and compared
# with torch: max|a - b| / max|torch| <= 1e-4. In channels-last the only
# runtime conversion is the input's (the [N, C, 1, 1] squeeze-excite scales
# are both formats at once, L3). torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: mobilenet_v2 2x3x65x67 channels-last: PASS (1 runtime conversions
# CHECK: mobilenet_v2 2x3x65x67 contiguous: PASS (0 runtime conversions
# CHECK: mobilenet_v3_small 1x3x64x64 channels-last: PASS (1 runtime conversions
# CHECK: mobilenet_v3_small 1x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: efficientnet_b0 1x3x67x65 channels-last: PASS (1 runtime conversions
# CHECK: efficientnet_b0 1x3x67x65 contiguous: PASS (0 runtime conversions
# CHECK: regnet_y_400mf 2x3x64x64 channels-last: PASS (1 runtime conversions
# CHECK: regnet_y_400mf 2x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: mobilenet_v2 1x3x64x64 channels-last: PASS (1 runtime conversions
# CHECK: mobilenet_v2 1x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: mobilenet_v3_small 2x3x67x65 channels-last: PASS (1 runtime conversions
# CHECK: mobilenet_v3_small 2x3x67x65 contiguous: PASS (0 runtime conversions
# CHECK: efficientnet_b0 2x3x64x64 channels-last: PASS (1 runtime conversions
# CHECK: efficientnet_b0 2x3x64x64 contiguous: PASS (0 runtime conversions
# CHECK: regnet_y_400mf 1x3x65x67 channels-last: PASS (1 runtime conversions
# CHECK: regnet_y_400mf 1x3x65x67 contiguous: PASS (0 runtime conversions
# CHECK: all 16 comparisons passed
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import check_calibrated_exports  # noqa: E402

TOLERANCE = 1e-4
# (model, opset, batch, height, width)
# Each model at batch 1 and 2, once at an odd size.
MODELS = [("mobilenet_v2", 13, 2, 65, 67), ("mobilenet_v3_small", 14, 1, 64, 64),
          ("efficientnet_b0", 13, 1, 67, 65), ("regnet_y_400mf", 13, 2, 64, 64),
          ("mobilenet_v2", 13, 1, 64, 64), ("mobilenet_v3_small", 14, 2, 67, 65),
          ("efficientnet_b0", 13, 2, 64, 64), ("regnet_y_400mf", 13, 1, 65, 67)]


if __name__ == "__main__":
    sys.exit(check_calibrated_exports(MODELS, seed_base=21, tolerance=TOLERANCE))
