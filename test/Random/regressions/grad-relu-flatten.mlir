// Found by randgraph.py grad, reduced: as grad-conv-flatten.mlir, the
// contiguous gradient of a flatten reaching threshold_backward, whose
// self is channels-last (L9).
// REQUIRES: memfmt-compile, python-package
// UNSUPPORTED: sanitizer
// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin --python %memfmt_python --workdir %t | FileCheck %s
// CHECK: grad-relu-flatten.mlir: PASS
func.func @graphs(%x: tensor<2x3x4x4xf32>) -> (tensor<2x5xf32>) {
  %w = memfmt.weight "conv.weight" : tensor<3x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %r = memfmt.relu %c : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %f = memfmt.flatten %r {start_dim = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<2x48xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x48xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x48xf32>, tensor<5x48xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
