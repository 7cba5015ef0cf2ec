// Found by randgraph.py grad, reduced: a max pool whose 1x1 input is in
// both formats (L3) but whose padded output is not. Propagation made the
// output channels-last, and max_pool2d_with_indices_backward's verifier
// demanded grad_output in the (contiguous) format it read off self; a
// self in both formats now accepts a gradient in either.
// REQUIRES: memfmt-compile, python-package
// UNSUPPORTED: sanitizer
// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin --python %memfmt_python --workdir %t | FileCheck %s
// CHECK: grad-maxpool-l3-input.mlir: PASS
func.func @graphs(%x: tensor<2x8x1x1xf32>) -> (tensor<2x3xf32>) {
  %w = memfmt.weight "conv.weight" : tensor<8x8x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x1x1xf32>
  %m = memfmt.max_pool2d %c {ceil_mode = true, stride = array<i64: 1, 1>, padding = array<i64: 1, 0>, kernel_size = array<i64: 2, 1>} : tensor<2x8x1x1xf32> -> tensor<2x8x2x1xf32>
  %p = memfmt.adaptive_avg_pool2d %m {output_size = array<i64: 1, 1>} : tensor<2x8x2x1xf32> -> tensor<2x8x1x1xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  %fw = memfmt.weight "fc.weight" : tensor<3x8xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
