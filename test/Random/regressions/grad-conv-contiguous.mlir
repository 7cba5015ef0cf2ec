// Found by randgraph.py grad, reduced: an explicit memfmt.contiguous of a
// channels-last convolution output; its gradient (contiguous) must be
// converted back before convolution_backward (L9).
// REQUIRES: memfmt-compile, python-package
// UNSUPPORTED: sanitizer
// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin --python %memfmt_python --workdir %t | FileCheck %s
// CHECK: grad-conv-contiguous.mlir: PASS
func.func @graphs(%x: tensor<2x3x4x4xf32>) -> (tensor<2x5xf32>) {
  %w = memfmt.weight "conv.weight" : tensor<3x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %k = memfmt.contiguous %c : tensor<2x3x4x4xf32>
  %p = memfmt.adaptive_avg_pool2d %k {output_size = array<i64: 1, 1>} : tensor<2x3x4x4xf32> -> tensor<2x3x1x1xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x3x1x1xf32> -> tensor<2x3xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x3xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
