// RUN: memfmt-opt %s --split-input-file --memfmt-differentiate --memfmt-channels-last --memfmt-verify-layouts | FileCheck %s

// L9 where the forward converts: the channels-last convolution's output is
// made contiguous before the flatten (L7), so the flatten's gradient (a
// reshape of the linear's) arrives contiguous; propagation converts it back
// to channels-last, the inverse conversion, before convolution_backward
// needs it in its primal's format.

// CHECK-LABEL: func.func @conv_flatten(
// CHECK: %[[OUT:.+]] = memfmt.conv2d
// CHECK: memfmt.contiguous %[[OUT]] {memfmt.reason = "L7
// CHECK: %[[G:.+]] = memfmt.reshape
// CHECK: %[[GCL:.+]] = memfmt.contiguous %[[G]] {memfmt.reason = "L9: the gradient takes its primal's format (the inverse of a conversion of the forward)", memory_format = #memfmt.memory_format<channels_last>}
// CHECK: memfmt.convolution_backward %[[GCL]],
func.func @conv_flatten(%x: tensor<2x3x4x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<3x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %f = memfmt.flatten %c {start_dim = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<2x48xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x48xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x48xf32>, tensor<5x48xf32>) -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A pool whose input has a 1x1 plane (both formats, L3) and whose output
// does not: propagation makes the output channels-last, and the backward's
// incoming gradient may be in either format, as its self is in both; no
// conversion.

// CHECK-LABEL: func.func @l3_pool(
// CHECK-NOT: L9
// CHECK: memfmt.max_pool2d_with_indices_backward
func.func @l3_pool(%x: tensor<2x8x1x1xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<8x8x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x1x1xf32>
  %m, %i = memfmt.max_pool2d_with_indices %c {ceil_mode = true, stride = array<i64: 1, 1>, padding = array<i64: 1, 0>, kernel_size = array<i64: 2, 1>} : tensor<2x8x1x1xf32> -> tensor<2x8x2x1xf32>, tensor<2x8x2x1xi64>
  %f = memfmt.flatten %m {start_dim = 1 : i64} : tensor<2x8x2x1xf32> -> tensor<2x16xf32>
  %fw = memfmt.weight "fc.weight" : tensor<3x16xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x16xf32>, tensor<3x16xf32>) -> tensor<2x3xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
