// Found by memfmt-fuzz-ir from a seed of the pass tests: a parameter
// declared channels-last feeds a conv whose result is declared contiguous.
// The channels-last build propagated it (L5) but the NCHW build
// (--memory-format contiguous) ran no propagation, so memfmt-verify-layouts
// failed and memfmt-compile exited with an internal error (2). The NCHW
// build now propagates what the model declares (inputs=keep weights=keep),
// and both builds agree.
// RUN: %python %S/../randgraph.py check %s --bin %memfmt_bin --workdir %t | FileCheck %s
// CHECK: nchw-build-declared-channels-last-weight.mlir: PASS
func.func @conv_cl_weight_nchw_input(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %w = memfmt.weight "w" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %0 = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<1x4x6x6xf32>
  %1 = memfmt.batch_norm %0, %p, %p, %p, %p : tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}
