// Found by randgraph.py grad, reduced: a batch norm and an add with a
// weight declared channels-last; the add's gradient reached
// native_batch_norm_backward in the other format (L9).
// REQUIRES: memfmt-compile, python-package
// UNSUPPORTED: sanitizer
// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin --python %memfmt_python --workdir %t | FileCheck %s
// CHECK: grad-bn-add-cl-weight.mlir: PASS
func.func @graphs(%x: tensor<2x3x4x4xf32>) -> (tensor<2x5xf32>) {
  %g = memfmt.weight "bn.weight" : tensor<3xf32>
  %b = memfmt.weight "bn.bias" : tensor<3xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<3xf32>
  %v = memfmt.weight "bn.running_var" : tensor<3xf32>
  %n = memfmt.batch_norm %x, %g, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>
  %aw = memfmt.weight "add.weight" : tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  %a = memfmt.add %n, %aw : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>> -> tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  %p = memfmt.adaptive_avg_pool2d %a {output_size = array<i64: 1, 1>} : tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>> -> tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>> -> tensor<2x3xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x3xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
