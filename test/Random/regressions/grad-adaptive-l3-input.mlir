// Found by randgraph.py grad, reduced: as grad-maxpool-l3-input.mlir, for
// adaptive_avg_pool2d_backward (an upsampling adaptive pool).
// REQUIRES: memfmt-compile, python-package
// UNSUPPORTED: sanitizer
// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin --python %memfmt_python --workdir %t | FileCheck %s
// CHECK: grad-adaptive-l3-input.mlir: PASS
func.func @graphs(%x: tensor<2x8x1x1xf32>) -> (tensor<2x3xf32>) {
  %w = memfmt.weight "conv.weight" : tensor<8x8x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x1x1xf32>
  %m = memfmt.adaptive_avg_pool2d %c {output_size = array<i64: 2, 1>} : tensor<2x8x1x1xf32> -> tensor<2x8x2x1xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<4x8x1x1xf32>
  %c2 = memfmt.conv2d %m, %w2 : (tensor<2x8x2x1xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x2x1xf32>
  %p = memfmt.adaptive_avg_pool2d %c2 {output_size = array<i64: 1, 1>} : tensor<2x4x2x1xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<3x4xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
