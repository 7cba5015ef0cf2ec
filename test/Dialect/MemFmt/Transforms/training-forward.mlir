// RUN: memfmt-opt %s -split-input-file --memfmt-training-forward | FileCheck %s

// memfmt-training-forward: an inference forward becomes a training forward
// returning its mean cross-entropy loss.

// Batch norm becomes native_batch_norm (same eps and momentum) whose running
// statistics are assigned back; max_pool2d keeps its attributes and gains
// indices; a target argument is appended and the loss is returned.
// CHECK-LABEL: func.func @net(
// CHECK-SAME: %[[X:.+]]: tensor<2x3x8x8xf32>, %[[T:.+]]: tensor<2xi64>) -> tensor<f32>
// CHECK: %[[M:.+]] = memfmt.weight "bn.running_mean" : tensor<8xf32>
// CHECK: %[[V:.+]] = memfmt.weight "bn.running_var" : tensor<8xf32>
// CHECK: %[[N:.+]], %{{.+}}, %{{.+}}, %[[RM:.+]], %[[RV:.+]] = memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %[[M]], %[[V]] {eps = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64} : (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: memfmt.assign_weight "bn.running_mean", %[[RM]] : tensor<8xf32>
// CHECK: memfmt.assign_weight "bn.running_var", %[[RV]] : tensor<8xf32>
// CHECK: %[[R:.+]] = memfmt.relu %[[N]]
// CHECK: %[[P:.+]], %{{.+}} = memfmt.max_pool2d_with_indices %[[R]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>, tensor<2x8x4x4xi64>
// CHECK-NOT: memfmt.batch_norm
// CHECK-NOT: memfmt.max_pool2d %
// CHECK: %[[Y:.+]] = memfmt.linear
// CHECK: %[[L:.+]] = memfmt.cross_entropy_loss %[[Y]], %[[T]] : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
// CHECK: return %[[L]] : tensor<f32>
func.func @net(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %w = memfmt.weight "conv.weight" : tensor<8x3x3x3xf32>
  %c = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x8x8xf32>
  %g = memfmt.weight "bn.weight" : tensor<8xf32>
  %b = memfmt.weight "bn.bias" : tensor<8xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<8xf32>
  %v = memfmt.weight "bn.running_var" : tensor<8xf32>
  %n = memfmt.batch_norm %c, %g, %b, %m, %v {eps = 1.0e-3 : f64, momentum = 0.2 : f64}
      : tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32> -> tensor<2x8x8x8xf32>
  %r = memfmt.relu %n : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %p = memfmt.max_pool2d %r {kernel_size = array<i64: 3, 3>,
      stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
      : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>
  %a = memfmt.adaptive_avg_pool2d %p {output_size = array<i64: 1, 1>}
      : tensor<2x8x4x4xf32> -> tensor<2x8x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64}
      : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  %fw = memfmt.weight "fc.weight" : tensor<10x8xf32>
  %y = memfmt.linear %f, %fw
      : (tensor<2x8xf32>, tensor<10x8xf32>) -> tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// A channels-last max pool's indices are channels-last like its output (L5);
// private functions are left alone.
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: -> tensor<4x5xf32>
// CHECK-LABEL: func.func @cl(
// CHECK-SAME: %{{.+}}: tensor<4x5xf32>, %{{.+}}: tensor<1x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>>, %{{.+}}: tensor<4xi64>) -> tensor<f32>
// CHECK: memfmt.max_pool2d_with_indices {{.*}} -> tensor<1x4x2x2xf32, #memfmt.strides<[16, 1, 8, 4]>>, tensor<1x4x2x2xi64, #memfmt.strides<[16, 1, 8, 4]>>
func.func private @helper(%y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  return %y : tensor<4x5xf32>
}
func.func @cl(%y: tensor<4x5xf32>, %x: tensor<1x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>>) -> tensor<4x5xf32> {
  %p = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>}
      : tensor<1x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>> -> tensor<1x4x2x2xf32, #memfmt.strides<[16, 1, 8, 4]>>
  return %y : tensor<4x5xf32>
}
