// RUN: memfmt-opt %s --memfmt-training-pipeline="memory-format=contiguous" | FileCheck %s
// RUN: memfmt-opt %s --memfmt-training-pipeline | FileCheck %s --check-prefix=CL
// RUN: memfmt-opt %s --memfmt-training-pipeline="memory-format=contiguous fusion=false" | FileCheck %s --check-prefix=NOFUSE
// RUN: memfmt-opt %s --memfmt-training-pipeline="memory-format=contiguous target=cuda" | FileCheck %s --check-prefix=NOFUSE

// memfmt-fuse-training inside the training pipeline, on a ResNet block as
// torchvision writes it: a stem (conv, bn, relu), a main branch (1x1 conv,
// bn) and a downsample branch computed after it (1x1 conv, bn), their sum
// and a relu, then the head.
//  * The stem's bn takes its relu, and its backward relu's gradient (the
//    stem output's gradient, the sum of both branches', is used once).
//  * The main branch's bn takes the residual add and the relu; the fused op
//    is built at the add, after the downsample, and the main bn's running
//    statistics are assigned after it.
//  * The block's relu gradient is also the downsample's: the
//    threshold_backward stays, and both backwards read it.
// Off with fusion=false and for the CUDA target.

// CHECK-LABEL: func.func @block(
// CHECK: %[[STEM:.+]], %[[SM0:[^,]+]], %[[SI0:[^,]+]], %{{.+}}, %{{.+}} = memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {relu = true}
// CHECK: memfmt.assign_weight "bn0.running_mean"
// CHECK: %[[C2:.+]] = memfmt.conv2d %[[STEM]], %{{.+}} :
// CHECK: %[[C3:.+]] = memfmt.conv2d %[[STEM]], %{{.+}} :
// CHECK: %[[DOWN:.+]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = memfmt.native_batch_norm %[[C3]], {{[^{]*}} : (
// CHECK: memfmt.assign_weight "down.1.running_mean"
// CHECK: %[[OUT:.+]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = memfmt.native_batch_norm %[[C2]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} residual %[[DOWN]] {relu = true}
// CHECK-NEXT: memfmt.assign_weight "bn2.running_mean"
// CHECK-NEXT: memfmt.assign_weight "bn2.running_var"
// CHECK: %[[POOLED:.+]] = memfmt.adaptive_avg_pool2d %[[OUT]]
// CHECK: %[[G:.+]] = memfmt.adaptive_avg_pool2d_backward
// CHECK: %[[MASKED:.+]] = memfmt.threshold_backward %[[G]], %[[OUT]]
// CHECK: memfmt.native_batch_norm_backward %[[MASKED]], %[[C3]], {{[^{]*}} {output_mask
// CHECK: memfmt.native_batch_norm_backward %[[MASKED]], %[[C2]], {{[^{]*}} {output_mask
// CHECK: %[[SUM:.+]] = memfmt.add
// CHECK: memfmt.native_batch_norm_backward %[[SUM]], %{{.+}}, %{{.+}}, %[[SM0]], %[[SI0]] output %[[STEM]] {output_mask = array<i1: true, true, true>, relu = true}
// CHECK-NOT: memfmt.relu
// CHECK-NOT: memfmt.threshold_backward
// CHECK: return

// Channels-last: the same fusion, with channels-last operands.
// CL-LABEL: func.func @block(
// CL: memfmt.native_batch_norm {{.*}} {relu = true} : (tensor<2x4x5x5xf32, #memfmt.strides<[100, 1, 20, 4]>>
// CL: memfmt.native_batch_norm {{.*}} residual {{.*}} {relu = true} : (tensor<2x4x5x5xf32, #memfmt.strides<[100, 1, 20, 4]>>
// CL: memfmt.native_batch_norm_backward {{.*}} output {{.*}} {output_mask = array<i1: true, true, true>, relu = true} : (tensor<2x4x5x5xf32, #memfmt.strides<[100, 1, 20, 4]>>

// NOFUSE-LABEL: func.func @block(
// NOFUSE-NOT: relu = true
// NOFUSE-NOT: residual
// NOFUSE: memfmt.relu
// NOFUSE: memfmt.add
// NOFUSE: memfmt.relu
// NOFUSE: memfmt.threshold_backward
// NOFUSE: memfmt.threshold_backward
// NOFUSE-NOT: relu = true
func.func @block(%x: tensor<2x3x5x5xf32>) -> tensor<2x3xf32> {
  %w0 = memfmt.weight "conv0.weight" : tensor<4x3x3x3xf32>
  %g0 = memfmt.weight "bn0.weight" : tensor<4xf32>
  %b0 = memfmt.weight "bn0.bias" : tensor<4xf32>
  %m0 = memfmt.weight "bn0.running_mean" : tensor<4xf32>
  %v0 = memfmt.weight "bn0.running_var" : tensor<4xf32>
  %c0 = memfmt.conv2d %x, %w0 {padding = array<i64: 1, 1>}
      : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32>
  %n0 = memfmt.batch_norm %c0, %g0, %b0, %m0, %v0
      : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x5x5xf32>
  %r0 = memfmt.relu %n0 : tensor<2x4x5x5xf32> -> tensor<2x4x5x5xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<4x4x1x1xf32>
  %g2 = memfmt.weight "bn2.weight" : tensor<4xf32>
  %b2 = memfmt.weight "bn2.bias" : tensor<4xf32>
  %m2 = memfmt.weight "bn2.running_mean" : tensor<4xf32>
  %v2 = memfmt.weight "bn2.running_var" : tensor<4xf32>
  %c2 = memfmt.conv2d %r0, %w2
      : (tensor<2x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x5x5xf32>
  %n2 = memfmt.batch_norm %c2, %g2, %b2, %m2, %v2
      : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x5x5xf32>
  %w3 = memfmt.weight "down.0.weight" : tensor<4x4x1x1xf32>
  %g3 = memfmt.weight "down.1.weight" : tensor<4xf32>
  %b3 = memfmt.weight "down.1.bias" : tensor<4xf32>
  %m3 = memfmt.weight "down.1.running_mean" : tensor<4xf32>
  %v3 = memfmt.weight "down.1.running_var" : tensor<4xf32>
  %c3 = memfmt.conv2d %r0, %w3
      : (tensor<2x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x5x5xf32>
  %n3 = memfmt.batch_norm %c3, %g3, %b3, %m3, %v3
      : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x5x5xf32>
  %s = memfmt.add %n2, %n3 : tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32> -> tensor<2x4x5x5xf32>
  %r2 = memfmt.relu %s : tensor<2x4x5x5xf32> -> tensor<2x4x5x5xf32>
  %a = memfmt.adaptive_avg_pool2d %r2 {output_size = array<i64: 1, 1>}
      : tensor<2x4x5x5xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64}
      : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<3x4xf32>
  %y = memfmt.linear %f, %fw : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
